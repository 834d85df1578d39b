// Host <-> device bandwidth over the bus (PCIe or NVLink-C2C), with pinned and
// with pageable host memory.
//
// Pinned copies are timed with events on the stream (the DMA alone). Pageable
// copies are timed on the host around a synchronous cudaMemcpy: the driver
// stages them through its own pinned buffers, and that staging is what a
// program with pageable memory pays.
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "roofline/core/strings.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/pattern.hpp"
#include "src/ceilings/gpu/session.hpp"

namespace roofline::ceilings::gpu {

namespace {

struct Direction {
  const char* name;   // figure name
  const char* label;
  cudaMemcpyKind kind;
  bool pinned;
};

}  // namespace

void measure_transfers(Session& s) {
  const Direction dirs[] = {
      {"pcie.h2d.pinned", "Host to device, pinned memory", cudaMemcpyHostToDevice, true},
      {"pcie.d2h.pinned", "Device to host, pinned memory", cudaMemcpyDeviceToHost, true},
      {"pcie.h2d.pageable", "Host to device, pageable memory", cudaMemcpyHostToDevice, false},
      {"pcie.d2h.pageable", "Device to host, pageable memory", cudaMemcpyDeviceToHost, false},
  };
  bool any = false;
  for (const auto& d : dirs) any |= s.wants(d.name);
  if (!any) return;

  const size_t bytes = (s.quick() ? 64ull : 256ull) << 20;
  cuda::DeviceBuffer<char> dev;
  cuda::PinnedBuffer<char> pinned;
  std::vector<char> pageable;
  s.attempt("pcie", "host and device buffers", [&] {
    dev = cuda::DeviceBuffer<char>(bytes, "transfer buffer");
    pinned = cuda::PinnedBuffer<char>(bytes);
    pageable.resize(bytes);
    // Touch every page with data (never zeros) so that no copy meets unmapped pages.
    for (size_t i = 0; i < bytes / 4; ++i) {
      const uint32_t w = random_word(0x5eed0005u, i);
      std::memcpy(pinned.get() + 4 * i, &w, 4);
      std::memcpy(pageable.data() + 4 * i, &w, 4);
    }
  });
  if (!dev) return;

  for (const auto& d : dirs) {
    if (!s.wants(d.name)) continue;
    s.attempt(d.name, d.label, [&] {
      void* host = d.pinned ? static_cast<void*>(pinned.get()) : static_cast<void*>(pageable.data());
      void* dst = d.kind == cudaMemcpyHostToDevice ? static_cast<void*>(dev.get()) : host;
      const void* src = d.kind == cudaMemcpyHostToDevice ? static_cast<const void*>(host) : dev.get();
      measure::Measurement m;
      measure::Figure f;
      if (d.pinned) {
        m = s.timer().measure(
            [&](cudaStream_t st) { CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, d.kind, st)); },
            s.measure_options());
        f.method = fmt::format("cudaMemcpyAsync of {} from pinned memory, timed with events", format_bytes(double(bytes)));
      } else {
        m = measure::measure_cpu([&] { CUDA_CHECK(cudaMemcpy(dst, src, bytes, d.kind)); }, s.measure_options());
        m.clock_median_mhz = 0;  // the CPU's clock, not the GPU's: not shown with a GPU figure
        m.clock_source.clear();
        f.method = fmt::format("cudaMemcpy of {} from pageable memory, host wall time (includes the driver's staging)",
                               format_bytes(double(bytes)));
      }
      f.name = d.name;
      f.label = d.label;
      f.unit = "B/s";
      f.level = "pcie";
      f.value = static_cast<double>(bytes) / m.time.median;
      f.measurement = std::move(m);
      f.params["bytes"] = bytes;
      f.params["pinned"] = d.pinned;
      s.add(std::move(f));
    });
  }
}

}  // namespace roofline::ceilings::gpu
