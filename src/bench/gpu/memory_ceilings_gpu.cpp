// DRAM read/write/copy (several kernels each, the best kept), cudaMemcpy
// device-to-device, L2 re-reads and shared-memory reads.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "roofline/core/strings.hpp"
#include "roofline/cuda/check.hpp"
#include "src/bench/gpu/session.hpp"

namespace roofline::bench::gpu {

namespace {

constexpr size_t kMiB = 1ull << 20;

const char* kind_name(StreamKind k) {
  return k == StreamKind::Read ? "read" : k == StreamKind::Write ? "write" : "copy";
}

struct Dram {
  size_t bytes = 0;  // per buffer
  cuda::DeviceBuffer<char> a, b;
  cuda::DeviceBuffer<uint32_t> sums;
  cuda::DeviceBuffer<int> error;
};

// Two buffers, each far beyond the L2 (2 GiB, 1 GiB with --quick), bounded by
// the free memory and kept a whole number of MiB (the bulk variants move 16 KiB).
Dram make_dram(Session& s) {
  Dram d;
  const size_t l2 = static_cast<size_t>(s.prop().l2CacheSize);
  size_t want = s.quick() ? (1ull << 30) : (2ull << 30);
  d.bytes = std::min(want, s.free_memory() * 2 / 5) / kMiB * kMiB;
  if (d.bytes < 64 * kMiB)
    throw_device(fmt::format("only {} of GPU memory is free: the DRAM figures need two buffers of at least 64 MiB",
                             format_bytes(double(s.free_memory()))),
                 "free GPU memory held by other programs");
  if (d.bytes < 16 * l2)
    s.note(fmt::format("DRAM buffers are {} each, less than 16x the {} L2 (free memory is short): the figures may "
                       "include some L2 hits",
                       format_bytes(double(d.bytes)), format_bytes(double(l2))));
  d.a = cuda::DeviceBuffer<char>(d.bytes, "DRAM benchmark buffer");
  d.b = cuda::DeviceBuffer<char>(d.bytes, "DRAM benchmark buffer");
  d.sums = cuda::DeviceBuffer<uint32_t>(1 << 16, "block sums");
  d.error = cuda::DeviceBuffer<int>(1, "error flag");
  fill_random(d.a.get(), d.bytes, 0x5eed0001u, s.stream());
  fill_random(d.b.get(), d.bytes, 0x5eed0002u, s.stream());
  CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  return d;
}

// Measures every variant of `kind` and adds the best as `name`; each variant's
// figure goes into params["variants"].
void best_variant(Session& s, Dram& d, StreamKind kind, const std::string& name, const std::string& label) {
  const double bytes_per_run = (kind == StreamKind::Copy ? 2.0 : 1.0) * static_cast<double>(d.bytes);
  nlohmann::json variants = nlohmann::json::array();
  Figure best;
  std::vector<std::string> failed;
  for (const StreamVariant& v : stream_variants(kind)) {
    if (v.bulk && s.prop().major < 9) {
      variants.push_back({{"id", v.id}, {"method", v.method}, {"skipped", "needs compute capability 9.0"}});
      continue;
    }
    try {
      const int grid = stream_grid(kind, v, s.device());
      if (grid > static_cast<int>(d.sums.size())) throw_device("grid larger than the block-sum buffer");
      CUDA_CHECK(cudaMemsetAsync(d.error.get(), 0, sizeof(int), s.stream()));
      auto run = [&](cudaStream_t st) {
        if (kind == StreamKind::Read) launch_read(v, grid, d.a.get(), d.bytes, d.sums.get(), d.error.get(), st);
        else if (kind == StreamKind::Write) launch_write(v, grid, d.b.get(), d.bytes, 0x900dcafeu, d.error.get(), st);
        else launch_copy(v, grid, d.a.get(), d.b.get(), d.bytes, d.error.get(), st);
      };
      Measurement m = s.timer().measure(run, s.measure_options());
      int err = 0;
      CUDA_CHECK(cudaMemcpy(&err, d.error.get(), sizeof err, cudaMemcpyDeviceToHost));
      if (err != 0)
        throw_device(fmt::format("the {} kernel reported {}", v.id,
                                 err == 1 ? "a bulk-copy wait that timed out" : "that it is not built for this GPU"));
      const double value = bytes_per_run / m.time.median;
      variants.push_back({{"id", v.id},
                          {"method", v.method},
                          {"value", value},
                          {"median_s", m.time.median},
                          {"rel_iqr", m.time.rel_iqr()},
                          {"grid", grid},
                          {"threads", v.threads}});
      if (value > best.value) {
        best.value = value;
        best.method = v.method;
        best.measurement = std::move(m);
        best.params["variant"] = v.id;
        best.params["grid"] = grid;
        best.params["threads"] = v.threads;
      }
    } catch (const Error& e) {
      variants.push_back({{"id", v.id}, {"method", v.method}, {"error", e.what()}});
      failed.push_back(v.id + ": " + e.what());
    }
  }
  for (const auto& f : failed) s.warn(fmt::format("{} variant {}", name, f));
  if (best.value <= 0) throw_device(fmt::format("every {} kernel failed", kind_name(kind)));
  best.name = name;
  best.label = label;
  best.unit = "B/s";
  best.level = "dram";
  best.params["bytes_per_run"] = bytes_per_run;
  best.params["buffer_bytes"] = d.bytes;
  best.params["variants"] = variants;
  std::string others;
  for (const auto& v : variants)
    if (v.contains("value") && v["id"] != best.params["variant"])
      others += fmt::format("{}{} {}", others.empty() ? "" : ", ", v["id"].get<std::string>(),
                            format_si(v["value"].get<double>(), "B/s"));
  s.note(fmt::format("{}: best of {} kernels is {} ({}); the others: {}", name, variants.size(),
                     best.params["variant"].get<std::string>(), format_si(best.value, "B/s"),
                     others.empty() ? "none" : others));
  s.add(std::move(best));
}

void measure_memcpy(Session& s, Dram& d) {
  Measurement m = s.timer().measure(
      [&](cudaStream_t st) {
        CUDA_CHECK(cudaMemcpyAsync(d.b.get(), d.a.get(), d.bytes, cudaMemcpyDeviceToDevice, st));
      },
      s.measure_options());
  Figure f;
  f.name = "dram.memcpy";
  f.label = "DRAM copy, cudaMemcpy device-to-device";
  f.unit = "B/s";
  f.level = "dram";
  f.method = "cudaMemcpyAsync device-to-device (bytes read + written)";
  f.value = 2.0 * static_cast<double>(d.bytes) / m.time.median;
  f.measurement = std::move(m);
  f.params["bytes_per_run"] = 2.0 * static_cast<double>(d.bytes);
  f.params["buffer_bytes"] = d.bytes;
  s.add(std::move(f));
}

// A set a fraction of L2 (at most 16 MiB: H100's 50 MB L2 is two partitions,
// and data in the far one is reached through the crossbar), re-read by every
// SM with L1 bypassed.
void measure_l2(Session& s) {
  const size_t l2 = static_cast<size_t>(s.prop().l2CacheSize);
  const size_t bytes = std::max<size_t>(std::min<size_t>(l2 * 2 / 5, 16 * kMiB) / kMiB * kMiB, kMiB);
  cuda::DeviceBuffer<char> buf(bytes, "L2 benchmark buffer");
  fill_random(buf.get(), bytes, 0x5eed0003u, s.stream());
  const int grid = l2_grid(s.device());
  cuda::DeviceBuffer<uint32_t> sums(static_cast<size_t>(grid), "block sums");
  auto run = [&](int passes) {
    return [&, passes](cudaStream_t st) { launch_l2_read(grid, buf.get(), bytes, passes, sums.get(), st); };
  };
  s.time_once(run(16));  // brings the set into L2
  const double t0 = s.time_once(run(16));
  const int passes = static_cast<int>(scaled_count(16, t0, s.quick() ? 1e-3 : 2e-3, 1 << 20));
  Measurement m = s.timer().measure(run(passes), s.measure_options());
  Figure f;
  f.name = "l2.read";
  f.label = "L2 read (set resident in L2, all SMs)";
  f.unit = "B/s";
  f.level = "l2";
  f.method = fmt::format("ld.global.cg.v4 (L1 bypassed), {} loads per step, {} set re-read {} times", kL2Unroll,
                         format_bytes(double(bytes)), passes);
  f.value = static_cast<double>(bytes) * passes / m.time.median;
  f.measurement = std::move(m);
  f.params["set_bytes"] = bytes;
  f.params["passes"] = passes;
  f.params["grid"] = grid;
  f.params["threads"] = kL2Threads;
  s.add(std::move(f));
}

void measure_smem(Session& s) {
  const int grid = smem_grid(s.device());
  cuda::DeviceBuffer<uint32_t> sums(static_cast<size_t>(grid), "block sums");
  const uint32_t step = 32 * 5;
  auto run = [&](int iters, ClockProbe* probe) {
    return [&, iters, probe](cudaStream_t st) {
      launch_smem_read(grid, iters, step, 0x5eed0004u, sums.get(), probe, st);
    };
  };
  s.time_once(run(256, nullptr));
  const double t0 = s.time_once(run(2048, nullptr));
  const int iters = static_cast<int>(scaled_count(2048, t0, s.quick() ? 2e-3 : 5e-3, 1 << 26));
  Measurement m = s.timer().measure(run(iters, s.probe()), s.measure_options(), 1, s.probe_clock());
  const double bytes = static_cast<double>(grid) * kSmemThreads * iters * kSmemUnroll * 16.0;
  Figure f;
  f.name = "smem.read";
  f.label = "Shared memory read (all SMs)";
  f.unit = "B/s";
  f.level = "smem";
  f.method = fmt::format("ld.shared.v4, a warp's 32 vectors contiguous (no bank conflicts), {} per step, {} blocks of {}",
                         kSmemUnroll, grid, kSmemThreads);
  f.value = bytes / m.time.median;
  f.measurement = std::move(m);
  f.params["bytes_per_run"] = bytes;
  f.params["iters"] = iters;
  f.params["grid"] = grid;
  s.add(std::move(f));
}

}  // namespace

void measure_memory(Session& s) {
  const bool any_dram = s.wants("dram.read") || s.wants("dram.write") || s.wants("dram.copy") || s.wants("dram.memcpy");
  if (any_dram) {
    std::unique_ptr<Dram> d;
    s.attempt("dram", "DRAM buffers", [&] { d = std::make_unique<Dram>(make_dram(s)); });
    if (d) {
      if (s.wants("dram.read"))
        s.attempt("dram.read", "DRAM read", [&] { best_variant(s, *d, StreamKind::Read, "dram.read", "DRAM read"); });
      if (s.wants("dram.write"))
        s.attempt("dram.write", "DRAM write",
                  [&] { best_variant(s, *d, StreamKind::Write, "dram.write", "DRAM write"); });
      if (s.wants("dram.copy"))
        s.attempt("dram.copy", "DRAM copy (read + write bytes)",
                  [&] { best_variant(s, *d, StreamKind::Copy, "dram.copy", "DRAM copy (read + write bytes)"); });
      if (s.wants("dram.memcpy"))
        s.attempt("dram.memcpy", "DRAM copy, cudaMemcpy", [&] { measure_memcpy(s, *d); });
    }
  }
  if (s.wants("l2.read")) s.attempt("l2.read", "L2 read", [&] { measure_l2(s); });
  if (s.wants("smem.read")) s.attempt("smem.read", "Shared memory read", [&] { measure_smem(s); });
}

}  // namespace roofline::bench::gpu
