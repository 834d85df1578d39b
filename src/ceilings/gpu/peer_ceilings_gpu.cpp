// GPU to GPU over the interconnect (NVLink or PCIe): for every other GPU of
// the machine that this one reaches as a peer, the bandwidth of a copy from
// this GPU's memory into the peer's (cudaMemcpyPeerAsync with peer access
// enabled both ways: the copy engines move it directly, no host staging), and
// of two copies at once, one each way. Timed with events on this GPU's
// stream; the reverse copy runs on a second stream joined to it by events, so
// the timed span covers both. Figures: p2p.gpu<J>.write (bytes over time) and
// p2p.gpu<J>.bidir (the bytes of both copies over time), level "p2p". A pair
// without peer access gets a note, not a figure.
#include <fmt/format.h>

#include "roofline/core/strings.hpp"
#include "roofline/cuda/check.hpp"
#include "roofline/hardware/topology.hpp"
#include "src/ceilings/gpu/session.hpp"

namespace roofline::ceilings::gpu {

namespace {

// `bytes` of device memory on `device`, filled with a non-zero pattern; `back` is made current after.
cuda::DeviceBuffer<char> buffer_on(int device, size_t bytes, int back, const char* what) {
  CUDA_CHECK(cudaSetDevice(device));
  cuda::DeviceBuffer<char> b(bytes, what);
  CUDA_CHECK(cudaMemset(b.get(), 0x5a, bytes));
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaSetDevice(back));
  return b;
}

}  // namespace

void enable_peer_access(int from, int to) {
  CUDA_CHECK(cudaSetDevice(from));
  const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();  // clear it
    return;
  }
  CUDA_CHECK(e);
}

void measure_peers(Session& s) {
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  const int self = s.device();
  const size_t bytes = (s.quick() ? 64ull : 256ull) << 20;
  for (int j = 0; j < count; ++j) {
    if (j == self) continue;
    const std::string write = fmt::format("p2p.gpu{}.write", j), bidir = fmt::format("p2p.gpu{}.bidir", j);
    if (!s.wants(write) && !s.wants(bidir)) continue;
    int can = 0, back = 0;
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can, self, j));
    CUDA_CHECK(cudaDeviceCanAccessPeer(&back, j, self));
    if (!can || !back) {
      s.note(fmt::format("GPU {} and GPU {} cannot reach each other as peers (cudaDeviceCanAccessPeer): no p2p figures "
                         "for the pair",
                         self, j));
      continue;
    }
    s.attempt(write, fmt::format("Copy to GPU {} (peer to peer)", j), [&] {
      enable_peer_access(j, self);
      enable_peer_access(self, j);
      const std::optional<hw::LinkFigure> link = hw::datasheet_link(self, j);
      cuda::DeviceBuffer<char> here = buffer_on(self, bytes, self, "peer copy source");
      cuda::DeviceBuffer<char> here_in = buffer_on(self, bytes, self, "peer copy destination");
      cuda::DeviceBuffer<char> there = buffer_on(j, bytes, self, "peer copy destination on the peer");
      cuda::DeviceBuffer<char> there_out = buffer_on(j, bytes, self, "peer copy source on the peer");
      const auto add = [&](const std::string& name, const std::string& label, double moved, measure::Measurement m,
                           const std::string& method) {
        measure::Figure f;
        f.name = name;
        f.label = label;
        f.unit = "B/s";
        f.level = "p2p";
        f.value = moved / m.time.median;
        f.measurement = std::move(m);
        f.method = method;
        f.params["bytes"] = bytes;
        f.params["from"] = self;
        f.params["to"] = j;
        if (link) {  // the datasheet's NVLink figure: each way for one copy, both ways for two
          f.reference = link->bytes_per_s * (name == bidir ? 2 : 1);
          f.reference_label = name == bidir ? link->label + "; twice that, both ways at once" : link->label;
        }
        s.add(std::move(f));
      };
      if (s.wants(write)) {
        measure::Measurement m = s.timer().measure(
            [&](cudaStream_t st) { CUDA_CHECK(cudaMemcpyPeerAsync(there.get(), j, here.get(), self, bytes, st)); },
            s.measure_options());
        add(write, fmt::format("Copy to GPU {} (peer to peer)", j), double(bytes), std::move(m),
            fmt::format("cudaMemcpyPeerAsync of {} from GPU {} into GPU {}, peer access on, timed with events",
                        format_bytes(double(bytes)), self, j));
      }
      if (s.wants(bidir)) {
        cuda::Stream other;
        cuda::Event start(cudaEventDisableTiming), done(cudaEventDisableTiming);
        measure::Measurement m = s.timer().measure(
            [&](cudaStream_t st) {
              CUDA_CHECK(cudaEventRecord(start.get(), st));
              CUDA_CHECK(cudaStreamWaitEvent(other.get(), start.get(), 0));
              CUDA_CHECK(cudaMemcpyPeerAsync(there.get(), j, here.get(), self, bytes, st));
              CUDA_CHECK(cudaMemcpyPeerAsync(here_in.get(), self, there_out.get(), j, bytes, other.get()));
              CUDA_CHECK(cudaEventRecord(done.get(), other.get()));
              CUDA_CHECK(cudaStreamWaitEvent(st, done.get(), 0));
            },
            s.measure_options());
        add(bidir, fmt::format("Copies to and from GPU {} at once", j), 2.0 * double(bytes), std::move(m),
            fmt::format("two cudaMemcpyPeerAsync of {} each, GPU {} to {} and back, on two streams at once; "
                        "bytes of both over the time of both",
                        format_bytes(double(bytes)), self, j));
      }
    });
    CUDA_CHECK(cudaSetDevice(self));
  }
}

}  // namespace roofline::ceilings::gpu
