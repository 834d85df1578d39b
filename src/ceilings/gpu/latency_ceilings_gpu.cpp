// Launch overhead and latency, DRAM and L2 latency by pointer chasing, and
// Little's law: the bytes that must be in flight to reach the measured bandwidth.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include "roofline/core/strings.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/session.hpp"

namespace roofline::ceilings::gpu {

namespace {

// (Copied from std::strings: assigning one-character literals trips a false
// -Wrestrict warning in GCC 12.)
const std::string kSeconds = "s", kBytes = "B";

// Divides a measurement's times by `n` (a sample timed n operations).
void per_operation(measure::Measurement& m, double n) {
  for (double& x : m.samples) x /= n;
  Summary& t = m.time;
  for (double* x : {&t.mean, &t.median, &t.min, &t.max, &t.q1, &t.q3, &t.stdev}) *x /= n;
}

// Host wall time per `launch` + cudaStreamSynchronize, 100 round trips per
// sample: the figure's value and measurement (name, label, method to fill in).
measure::Figure round_trip(Session& s, const std::function<void()>& launch) {
  const int trips = 100;
  measure::Measurement m = measure::measure_cpu(
      [&] {
        for (int i = 0; i < trips; ++i) {
          launch();
          CUDA_CHECK(cudaStreamSynchronize(s.stream()));
        }
      },
      s.measure_options());
  per_operation(m, trips);
  measure::Figure f;
  f.unit = kSeconds;
  f.value = m.time.median;
  m.clock_median_mhz = 0;  // a host timing: the CPU's clock says nothing about the GPU
  f.measurement = std::move(m);
  return f;
}

void measure_launch(Session& s) {
  const int batch = s.quick() ? 200 : 1000;
  cudaStream_t st = s.stream();
  launch_empty(st);
  CUDA_CHECK(cudaStreamSynchronize(st));

  if (s.wants("launch.overhead")) {
    s.attempt("launch.overhead", "Kernel launch, back to back", [&] {
      measure::Measurement m = measure::measure_cpu(
          [&] {
            for (int i = 0; i < batch; ++i) launch_empty(st);
            CUDA_CHECK(cudaStreamSynchronize(st));
          },
          s.measure_options());
      per_operation(m, batch);
      measure::Figure f;
      f.name = "launch.overhead";
      f.label = "Kernel launch, back to back (time per launch)";
      f.unit = kSeconds;
      f.method = fmt::format("{} empty kernels launched back to back on one stream, then one synchronize; host wall "
                             "time / {}",
                             batch, batch);
      f.value = m.time.median;
      m.clock_median_mhz = 0;  // a host timing: the CPU's clock says nothing about the GPU
      f.measurement = std::move(m);
      f.params["batch"] = batch;
      s.add(std::move(f));
    });
  }
  if (s.wants("launch.latency")) {
    s.attempt("launch.latency", "Kernel launch + synchronize", [&] {
      measure::Figure f = round_trip(s, [&] { launch_empty(st); });
      f.name = "launch.latency";
      f.label = "Kernel launch + synchronize (round trip)";
      f.method = "one empty kernel, then cudaStreamSynchronize; host wall time per round trip (100 per sample)";
      s.add(std::move(f));
    });
  }
  // The fused engine kernels' shape: every SM one block of 256 threads with
  // most of its shared memory, launched cooperatively.
  const int blocks = s.prop().multiProcessorCount;
  if (s.wants("launch.cooperative")) {
    s.attempt("launch.cooperative", "Cooperative launch + synchronize", [&] {
      const int smem = cooperative_smem_limit(s.device());
      launch_grid_syncs(blocks, smem, 1, st);
      CUDA_CHECK(cudaStreamSynchronize(st));
      measure::Figure f = round_trip(s, [&] { launch_grid_syncs(blocks, smem, 1, st); });
      f.name = "launch.cooperative";
      f.label = "Cooperative launch + synchronize (round trip, a block per SM)";
      f.method = fmt::format(
          "one cooperative kernel of {} blocks x 256 threads with {} of dynamic shared memory each, crossing one "
          "grid barrier, then cudaStreamSynchronize; host wall time per round trip (100 per sample). The floor of a "
          "fused persistent kernel's latency; compare launch.latency",
          blocks, format_bytes(smem));
      f.params["blocks"] = blocks;
      f.params["smem_bytes"] = smem;
      s.add(std::move(f));
    });
  }
  if (s.wants("sync.grid")) {
    s.attempt("sync.grid", "Grid barrier", [&] {
      const int syncs = 1000;
      measure::Measurement m = s.timer().measure([&](cudaStream_t t) { launch_grid_syncs(blocks, 0, syncs, t); },
                                        s.measure_options());
      per_operation(m, syncs);
      measure::Figure f;
      f.name = "sync.grid";
      f.label = "Grid barrier (cooperative groups, a block per SM)";
      f.unit = kSeconds;
      f.method = fmt::format(
          "one cooperative kernel of {} blocks x 256 threads crossing {} grid barriers (grid_group::sync) and doing "
          "nothing else; GPU time (events) / {}, the launch included",
          blocks, syncs, syncs);
      f.value = m.time.median;
      f.measurement = std::move(m);
      f.params["blocks"] = blocks;
      f.params["syncs"] = syncs;
      s.add(std::move(f));
    });
  }
  if (s.wants("launch.graph")) {
    s.attempt("launch.graph", "Kernel in a CUDA graph", [&] {
      const int kernels = 100;
      cuda::Graph g;
      g.begin_capture(st);
      for (int i = 0; i < kernels; ++i) launch_empty(st);
      g.end_capture(st);
      measure::Measurement m = s.timer().measure([&](cudaStream_t t) { g.launch(t); }, s.measure_options());
      per_operation(m, kernels);
      measure::Figure f;
      f.name = "launch.graph";
      f.label = "Kernel in a CUDA graph (time per kernel)";
      f.unit = kSeconds;
      f.method = fmt::format("a captured graph of {} empty kernels, replayed; GPU time (events) / {}", kernels, kernels);
      f.value = m.time.median;
      f.measurement = std::move(m);
      s.add(std::move(f));
    });
  }
}

// A random cyclic permutation (Sattolo's algorithm): following succ from any
// node visits every node once before coming back.
std::vector<uint32_t> single_cycle(size_t nodes, uint32_t seed) {
  std::vector<uint32_t> order(nodes);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(seed);
  for (size_t i = nodes - 1; i > 0; --i) {
    std::uniform_int_distribution<size_t> pick(0, i - 1);
    std::swap(order[i], order[pick(rng)]);
  }
  std::vector<uint32_t> succ(nodes);
  for (size_t i = 0; i < nodes; ++i) succ[order[i]] = order[(i + 1) % nodes];
  return succ;
}

struct Chase {
  size_t bytes, stride, nodes;
  long long hops;
  bool warm_lap;  // one full lap before timing (brings an L2-sized set into L2)
  int memory_device = -1;  // the chain in another GPU's memory (peer access on): loads cross the link
};

// Adds `name` (seconds per hop) from a chase over `c`; the in-kernel probe
// gives the SM clock and the cycles per hop.
void chase(Session& s, const Chase& c, const std::string& name, const std::string& label, const std::string& what) {
  if (c.memory_device >= 0) CUDA_CHECK(cudaSetDevice(c.memory_device));
  cuda::DeviceBuffer<uint32_t> next(c.bytes / 4, "pointer-chase buffer");
  CUDA_CHECK(cudaSetDevice(s.device()));
  {
    const std::vector<uint32_t> succ = single_cycle(c.nodes, 0x5eed4000u + static_cast<uint32_t>(c.nodes));
    cuda::DeviceBuffer<uint32_t> dsucc(c.nodes, "pointer-chase successors");
    dsucc.upload(succ.data(), succ.size(), s.stream());
    build_chase(next.get(), dsucc.get(), c.nodes, static_cast<uint32_t>(c.stride / 4), s.stream());
    CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  }
  cuda::DeviceBuffer<uint32_t> end(1, "pointer-chase end");
  if (c.warm_lap) {
    launch_chase(next.get(), 0, static_cast<long long>(c.nodes), nullptr, end.get(), nullptr, s.stream());
    CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  }
  // Every sample follows the same hops from node 0: for the DRAM chase those
  // lines would sit in L2 from the sample before, so L2 is flushed first.
  measure::MeasureOptions mo = s.measure_options();
  mo.flush_l2 = !c.warm_lap;
  measure::Measurement m = s.timer().measure(
      [&](cudaStream_t st) { launch_chase(next.get(), 0, c.hops, nullptr, end.get(), s.probe(), st); }, mo, 1,
      s.probe_clock());
  ClockProbe p{};
  CUDA_CHECK(cudaMemcpy(&p, s.probe(), sizeof p, cudaMemcpyDeviceToHost));
  const double cycles = static_cast<double>(p.clock1 - p.clock0) / static_cast<double>(c.hops);
  measure::Figure f;
  f.name = name;
  f.label = label;
  f.unit = kSeconds;
  f.value = m.time.median / static_cast<double>(c.hops);
  f.method = fmt::format("one thread, {} dependent ld.global.cg over a random single cycle of {} nodes {} B apart in "
                         "{} ({}{}); event time per hop",
                         c.hops, c.nodes, c.stride, format_bytes(double(c.bytes)), what,
                         c.warm_lap ? "" : ", L2 flushed before each sample");
  f.measurement = std::move(m);
  f.params["bytes"] = c.bytes;
  f.params["stride"] = c.stride;
  f.params["nodes"] = c.nodes;
  f.params["hops"] = c.hops;
  f.params["cycles_per_hop"] = cycles;
  s.add(std::move(f));
}

void littles_law(Session& s, const std::string& level, const std::string& name) {
  const measure::Figure* lat = s.find(level + ".latency");
  const measure::Figure* bw = nullptr;
  for (const auto& f : s.result().figures)
    if (f.unit == "B/s" && f.level == level && (!bw || f.value > bw->value)) bw = &f;
  if (!lat || !bw) {
    s.note(fmt::format("{}: not computed: needs {} bandwidth and {}.latency from this run", name, level, level));
    return;
  }
  const int sms = s.prop().multiProcessorCount;
  const double total = bw->value * lat->value;
  const double per_sm = total / sms;
  const double warp_loads = per_sm / 512.0;  // 32 lanes x 16 bytes
  const int warps_per_sm = s.prop().maxThreadsPerMultiProcessor / 32;
  measure::Figure f;
  f.name = name;
  f.label = fmt::format("{} bytes in flight to saturate (Little's law)", level == "dram" ? "DRAM" : "L2");
  f.unit = kBytes;
  f.value = total;
  f.method = fmt::format("Little's law: {} {} x {} {}", bw->name, format_si(bw->value, "B/s"), lat->name,
                         format_seconds(lat->value));
  f.params["per_sm"] = per_sm;
  f.params["loads_16B_per_sm"] = per_sm / 16.0;
  f.params["warp_loads_per_sm"] = warp_loads;
  f.params["bandwidth"] = bw->value;
  f.params["bandwidth_figure"] = bw->name;
  f.params["latency"] = lat->value;
  f.notes.push_back(fmt::format(
      "{}: to reach {} each SM needs about {} in flight = {:.0f} warp-wide 16-byte loads (512 B each): e.g. {} warps "
      "with {:.0f} load{} each, or {} warps unrolled {:.0f}-deep; fewer bytes in flight leave bandwidth unused",
      level == "dram" ? "DRAM" : "L2", format_si(bw->value, "B/s"), format_bytes(per_sm), warp_loads, warps_per_sm,
      std::max(1.0, std::ceil(warp_loads / warps_per_sm)), warp_loads / warps_per_sm > 1 ? "s" : "", warps_per_sm / 4,
      std::ceil(warp_loads / (warps_per_sm / 4))));
  s.note(f.notes.back());
  s.add(std::move(f));
}

}  // namespace

void measure_latency(Session& s) {
  if (s.wants("launch.overhead") || s.wants("launch.latency") || s.wants("launch.graph") ||
      s.wants("launch.cooperative") || s.wants("sync.grid"))
    measure_launch(s);

  if (s.wants("dram.latency")) {
    s.attempt("dram.latency", "DRAM latency", [&] {
      Chase c;
      c.bytes = std::min<size_t>(s.quick() ? (512ull << 20) : (1ull << 30), s.free_memory() / 4) >> 20 << 20;
      c.stride = 256;
      c.nodes = c.bytes / c.stride;
      c.hops = s.quick() ? 16384 : 65536;
      c.warm_lap = false;  // far larger than L2, flushed before every sample; the warm-up runs warm the TLBs
      const double l2 = static_cast<double>(s.prop().l2CacheSize);
      chase(s, c, "dram.latency", "DRAM latency (pointer chase)",
            fmt::format("at most {:.0f}% of hops can hit the {} L2", 100.0 * l2 / c.bytes, format_bytes(l2)));
    });
  }
  if (s.wants("l2.latency")) {
    s.attempt("l2.latency", "L2 latency", [&] {
      Chase c;
      const size_t l2 = static_cast<size_t>(s.prop().l2CacheSize);
      c.bytes = std::max<size_t>(std::min<size_t>(l2 / 4, 8ull << 20) >> 20 << 20, 1ull << 20);
      c.stride = 128;
      c.nodes = c.bytes / c.stride;
      c.hops = s.quick() ? 16384 : 65536;
      c.warm_lap = true;
      chase(s, c, "l2.latency", "L2 latency (pointer chase, set in L2)",
            "set resident in L2 after a first lap; near and far L2 partitions mixed");
    });
  }
  // A peer's memory over the link (NVLink or PCIe): the same chase through 256 MiB of GPU J's memory.
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  for (int j = 0; j < count; ++j) {
    const std::string name = fmt::format("p2p.gpu{}.latency", j);
    if (j == s.device() || !s.wants(name)) continue;
    int can = 0;
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can, s.device(), j));
    if (!can) continue;  // measure_peers notes the pair
    s.attempt(name, fmt::format("Latency of GPU {}'s memory", j), [&] {
      enable_peer_access(s.device(), j);
      Chase c;
      c.bytes = 256ull << 20;
      c.stride = 256;
      c.nodes = c.bytes / c.stride;
      c.hops = s.quick() ? 4096 : 16384;
      c.warm_lap = false;
      c.memory_device = j;
      chase(s, c, name, fmt::format("Latency of GPU {}'s memory (pointer chase over the link)", j),
            fmt::format("GPU {}'s memory, read by GPU {} over the link with peer access (the peer's DRAM latency "
                        "included)",
                        j, s.device()));
    });
  }
}

void measure_littles_law(Session& s) {
  if (s.wants("dram.bytes_in_flight")) littles_law(s, "dram", "dram.bytes_in_flight");
  if (s.wants("l2.bytes_in_flight")) littles_law(s, "l2", "l2.bytes_in_flight");
}

}  // namespace roofline::ceilings::gpu
