// Host emulation of the sweep kernels' arithmetic, operation by operation in
// the kernel's own precision (half and bfloat16 rounded after every add and
// multiply, as the GPU does), to check a sample of device outputs.
#pragma once
#include <cstdint>
#include <vector>

#include "roofline/sweep/sweep.hpp"

namespace roofline::sweep::ref {

// Round-to-nearest-even into IEEE binary16 / bfloat16, subnormals included
// (inf on overflow); bit patterns as the device stores them.
std::uint16_t to_half_bits(double v);
std::uint16_t to_bf16_bits(double v);
double half_value(std::uint16_t bits);
double bf16_value(std::uint16_t bits);

// Element i's input in the variant's type, as a double (exact).
double input(Variant v, std::uint64_t i, std::uint32_t seed);
// What the kernel computes for input x (given exactly in the variant's type).
double expected(Variant v, double x, std::int64_t k);
// Largest relative difference accepted between device and host: the device
// compiler may contract an add and a multiply into one FMA (one rounding
// instead of two per term), so fp32/fp64 allow a few roundings per term;
// half and bfloat16 kernels use the _rn intrinsics, which are never contracted.
double tolerance(Variant v, std::int64_t k);

// Which outputs to check: the first, the last, and `count` spread over the
// rest (evenly, each nudged by a hash so no stride pattern hides an error).
std::vector<std::int64_t> sample_indices(std::int64_t n, int count, std::uint32_t seed);
// An output element's raw bits (as stored: 2, 4 or 8 bytes) as a value.
double decode(Variant v, std::uint64_t bits);
// Compares device outputs at `idx` with the host emulation (nonfinite is
// left for the caller, who counts it over every output).
Check compare(Variant v, std::int64_t k, std::uint32_t seed, const std::vector<std::int64_t>& idx,
              const std::vector<double>& got);

}  // namespace roofline::sweep::ref
