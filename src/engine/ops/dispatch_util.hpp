// What the dispatchers (dispatch.cpp, dispatch_cnn.cpp) share beside their
// backend switch: the CPU backends' dtype rule.
#pragma once
#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/engine/context.hpp"

namespace roofline::engine::ops {

// The CPU backends (CpuRef, Cpu) run fp32 activations only; bf16 and fp16 are
// the GPU's mixed precision. Throws Error(Unsupported) naming the op.
inline void require_cpu_fp32(const Context& ctx, DType dtype, const char* op) {
  if (ctx.backend() == Backend::Cuda || dtype == DType::F32) return;
  throw_unsupported(fmt::format("{} activations run on the GPU only ({} on the {} backend)", to_string(dtype), op,
                                to_string(ctx.backend())),
                    "use --precision fp32 on the CPU, or --device gpu");
}

}  // namespace roofline::engine::ops
