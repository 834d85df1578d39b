// GPU presence, usable from any build: in a CPU-only build (or on a machine
// with no driver or no GPU) gpu_count() is 0 and gpu_unavailable_reason() says why.
#pragma once
#include <string>

namespace roofline::cuda {

int gpu_count();
std::string gpu_unavailable_reason();  // empty when at least one GPU is usable
// Throws Error(Device) with the reason and a hint when `index` is not a usable GPU.
void require_gpu(int index = 0);

}  // namespace roofline::cuda
