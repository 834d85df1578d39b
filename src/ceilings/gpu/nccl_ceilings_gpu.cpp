// NCCL collectives across every GPU of the machine, from one process
// (ncclCommInitAll, one communicator per GPU): all-reduce, all-gather,
// reduce-scatter and broadcast of float data over message sizes from 8 B to
// 1 GiB, with nccl-tests' definitions: algbw = S / t, busbw = algbw × 2(n−1)/n
// for all-reduce, × (n−1)/n for all-gather and reduce-scatter (S: the whole
// gathered or scattered buffer), × 1 for broadcast. Measured once per machine,
// in GPU 0's session: the figure of each collective is its busbw at the
// largest size (nccl.<collective>.busbw, level "nccl"), with the whole sweep
// in its params. NCCL is loaded at run time (libnccl.so.2, in PyTorch's
// environment on the GPU machine), so a machine without it loses these
// figures only, with a note. NVLink SHARP (NVLS) stays off unless the user
// sets NCCL_NVLS_ENABLE: the ring and tree algorithms are what is published.
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "roofline/core/strings.hpp"
#include "roofline/cuda/check.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/hardware/topology.hpp"
#include "src/ceilings/gpu/session.hpp"
#include "src/cuda/nccl_lib.hpp"

namespace roofline::ceilings::gpu {

namespace {

enum class Coll { AllReduce, AllGather, ReduceScatter, Broadcast };
struct CollInfo {
  Coll c;
  const char* id;
  const char* label;
};
const CollInfo kColls[] = {{Coll::AllReduce, "allreduce", "NCCL all-reduce (sum, float)"},
                           {Coll::AllGather, "allgather", "NCCL all-gather (float)"},
                           {Coll::ReduceScatter, "reducescatter", "NCCL reduce-scatter (sum, float)"},
                           {Coll::Broadcast, "broadcast", "NCCL broadcast from GPU 0 (float)"}};

double bus_factor(Coll c, int n) {
  switch (c) {
    case Coll::AllReduce:
      return 2.0 * (n - 1) / n;
    case Coll::AllGather:
    case Coll::ReduceScatter:
      return double(n - 1) / n;
    case Coll::Broadcast:
      return 1.0;
  }
  return 1.0;
}

}  // namespace

void measure_collectives(Session& s) {
  int n = 0;
  CUDA_CHECK(cudaGetDeviceCount(&n));
  if (n < 2 || s.device() != 0) return;
  bool any = false;
  for (const auto& c : kColls) any |= s.wants(fmt::format("nccl.{}.busbw", c.id));
  if (!any) return;
  const cuda::NcclLib& nccl = cuda::nccl_lib();
  if (!nccl.why.empty()) {
    s.note("NCCL collectives not measured: " + nccl.why +
           " (on the GPU machine NCCL is in PyTorch's environment: tools/checks/device_env.sh)");
    return;
  }
  int version = 0;
  nccl.check(nccl.get_version(&version), "ncclGetVersion");
  std::optional<hw::LinkFigure> slowest;  // over every pair: what bounds a ring
  bool every_pair = true;
  for (int a = 0; a < cuda::gpu_count(); ++a)
    for (int b = a + 1; b < cuda::gpu_count(); ++b) {
      const auto l = hw::datasheet_link(a, b);
      if (!l) every_pair = false;
      else if (!slowest || l->bytes_per_s < slowest->bytes_per_s) slowest = l;
    }
  if (!every_pair) slowest.reset();
  const size_t max_bytes = s.quick() ? (256ull << 20) : (1ull << 30);
  std::vector<size_t> sizes;
  for (size_t b = 8; b <= max_bytes; b *= s.quick() ? 16 : 4) sizes.push_back(b);
  if (sizes.back() != max_bytes) sizes.push_back(max_bytes);

  s.attempt("nccl", fmt::format("NCCL collectives over {} GPUs", n), [&] {
    std::vector<int> devs(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) devs[static_cast<size_t>(i)] = i;
    std::vector<ncclComm_t> comms(static_cast<size_t>(n));
    nccl.check(nccl.comm_init_all(comms.data(), n, devs.data()), "ncclCommInitAll");
    // Per GPU, made with that GPU current (cuda::Stream and cuda::Event belong to the current device).
    struct PerGpu {
      cuda::DeviceBuffer<float> send, recv;
      cuda::Stream stream;
      cuda::Event start, stop;
    };
    std::vector<PerGpu> g;
    g.reserve(static_cast<size_t>(n));
    const size_t max_floats = max_bytes / sizeof(float);
    for (int i = 0; i < n; ++i) {
      CUDA_CHECK(cudaSetDevice(i));
      g.push_back({cuda::DeviceBuffer<float>(max_floats, "NCCL send buffer"),
                   cuda::DeviceBuffer<float>(max_floats, "NCCL receive buffer"), cuda::Stream(), cuda::Event(),
                   cuda::Event()});
      CUDA_CHECK(cudaMemset(g.back().send.get(), 0x3c, max_bytes));  // 0x3c3c3c3c: 0.0115 as a float, never zero
    }
    const auto cleanup = [&] {
      for (int i = 0; i < n; ++i) (void)nccl.comm_destroy(comms[static_cast<size_t>(i)]);
      (void)cudaSetDevice(s.device());
    };
    try {
      for (const auto& c : kColls) {
        const std::string name = fmt::format("nccl.{}.busbw", c.id);
        if (!s.wants(name)) continue;
        nlohmann::json sweep = nlohmann::json::array();
        double last_bus = 0, last_alg = 0, last_t = 0;
        for (size_t bytes : sizes) {
          // S in nccl-tests' sense; counts per rank.
          const size_t floats = std::max<size_t>(bytes / sizeof(float), static_cast<size_t>(n));
          const size_t per_rank = floats / static_cast<size_t>(n);
          const auto launch = [&] {
            nccl.check(nccl.group_start(), "ncclGroupStart");
            for (int i = 0; i < n; ++i) {
              PerGpu& p = g[static_cast<size_t>(i)];
              ncclComm_t comm = comms[static_cast<size_t>(i)];
              switch (c.c) {
                case Coll::AllReduce:
                  nccl.check(nccl.all_reduce(p.send.get(), p.recv.get(), floats, ncclFloat, ncclSum, comm, p.stream),
                             "ncclAllReduce");
                  break;
                case Coll::AllGather:
                  nccl.check(nccl.all_gather(p.send.get(), p.recv.get(), per_rank, ncclFloat, comm, p.stream),
                             "ncclAllGather");
                  break;
                case Coll::ReduceScatter:
                  nccl.check(nccl.reduce_scatter(p.send.get(), p.recv.get(), per_rank, ncclFloat, ncclSum, comm,
                                                 p.stream),
                             "ncclReduceScatter");
                  break;
                case Coll::Broadcast:
                  nccl.check(nccl.broadcast(p.send.get(), p.recv.get(), floats, ncclFloat, 0, comm, p.stream),
                             "ncclBroadcast");
                  break;
              }
            }
            nccl.check(nccl.group_end(), "ncclGroupEnd");
          };
          const int iters = bytes >= (64u << 20) ? 10 : 50;
          for (int w = 0; w < 3; ++w) launch();
          for (int i = 0; i < n; ++i) {
            CUDA_CHECK(cudaSetDevice(i));
            g[static_cast<size_t>(i)].start.record(g[static_cast<size_t>(i)].stream);
          }
          for (int it = 0; it < iters; ++it) launch();
          double t = 0;
          for (int i = 0; i < n; ++i) {
            PerGpu& p = g[static_cast<size_t>(i)];
            CUDA_CHECK(cudaSetDevice(i));
            p.stop.record(p.stream);
            p.stop.sync();
            t = std::max(t, p.stop.since(p.start) * 1e-3 / iters);  // the slowest GPU's time per collective
          }
          const double s_bytes = double(c.c == Coll::AllGather || c.c == Coll::ReduceScatter ? per_rank * n : floats) *
                                 sizeof(float);
          const double alg = s_bytes / t, bus = alg * bus_factor(c.c, n);
          sweep.push_back({{"bytes", s_bytes}, {"time_s", t}, {"algbw", alg}, {"busbw", bus}});
          last_bus = bus, last_alg = alg, last_t = t;
        }
        measure::Figure f;
        f.name = name;
        f.label = fmt::format("{}, {} GPUs, bus bandwidth at {}", c.label, n, format_bytes(double(sizes.back())));
        f.unit = "B/s";
        f.level = "nccl";
        f.value = last_bus;
        f.measurement.time.median = last_t;
        f.method = fmt::format("NCCL {}.{}.{} from one process (ncclCommInitAll), {} GPUs; busbw = algbw × {:.2f} "
                               "(nccl-tests' definitions); the slowest GPU's event time per collective",
                               version / 10000, version / 100 % 100, version % 100, n, bus_factor(c.c, n));
        f.params["gpus"] = n;
        f.params["algbw"] = last_alg;
        f.params["sweep"] = sweep;
        f.params["nvls"] = std::getenv("NCCL_NVLS_ENABLE") ? std::getenv("NCCL_NVLS_ENABLE") : "";
        // Bus bandwidth approaches the slowest link's bandwidth each way (nccl-tests' reading of busbw).
        if (slowest) {
          f.reference = slowest->bytes_per_s;
          f.reference_label = slowest->label + " (the slowest pair's link, each way)";
        }
        if (c.c == Coll::AllReduce)
          f.notes.push_back("nccl-tests publish about 370 GB/s all-reduce busbw on NVLink 4 (H100 SXM, ring)");
        s.add(std::move(f));
      }
    } catch (...) {
      cleanup();
      throw;
    }
    cleanup();
  });
}

}  // namespace roofline::ceilings::gpu
