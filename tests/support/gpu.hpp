// GPU tests call ROOFLINE_REQUIRE_GPU() first: without a usable GPU the test
// is reported as skipped (with the reason), never as passed.
#pragma once
#include <gtest/gtest.h>

#include "roofline/cuda/runtime.hpp"

#define ROOFLINE_REQUIRE_GPU()                                                                       \
  do {                                                                                               \
    if (::roofline::cuda::gpu_count() == 0) GTEST_SKIP() << ::roofline::cuda::gpu_unavailable_reason(); \
  } while (0)
