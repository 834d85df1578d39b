// DRAM read/write/copy (several kernels each, the best kept), cudaMemcpy
// device-to-device, L2 re-reads and shared-memory reads.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "roofline/core/strings.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/session.hpp"

namespace roofline::ceilings::gpu {

namespace {

constexpr size_t kMiB = 1ull << 20;

const char* kind_name(StreamKind k) {
  return k == StreamKind::Read ? "read" : k == StreamKind::Write ? "write" : "copy";
}

struct DramFigure {
  StreamKind kind;
  const char* name;
  const char* label;
};
const DramFigure kDram[] = {
    {StreamKind::Read, "dram.read", "DRAM read"},
    {StreamKind::Write, "dram.write", "DRAM write"},
    {StreamKind::Copy, "dram.copy", "DRAM copy (read + write bytes)"},
};

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

// One variant of `kind` timed; its entry for params["variants"] and, when it
// ran, the figure it would be.
struct Tried {
  nlohmann::json entry;
  std::optional<measure::Figure> figure;
};

Tried try_variant(Session& s, Dram& d, StreamKind kind, const StreamVariant& v) {
  const double bytes_per_run = (kind == StreamKind::Copy ? 2.0 : 1.0) * static_cast<double>(d.bytes);
  Tried t;
  t.entry = {{"id", v.id}, {"method", v.method}};
  if (v.bulk && s.prop().major < 9) {
    t.entry["skipped"] = "needs compute capability 9.0";
    return t;
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
    auto check_flag = [&] {
      int err = 0;
      CUDA_CHECK(cudaMemcpy(&err, d.error.get(), sizeof err, cudaMemcpyDeviceToHost));
      if (err != 0)
        throw_device(fmt::format("the {} kernel reported {}", v.id,
                                 err == 1 ? "a bulk-copy wait that timed out" : "that it is not built for this GPU"));
    };
    s.time_once(run);  // one run first: a kernel that reports an error is not timed at length
    check_flag();
    measure::Measurement m = s.timer().measure(run, s.measure_options());
    check_flag();
    measure::Figure f;
    f.value = bytes_per_run / m.time.median;
    f.method = v.method;
    f.measurement = std::move(m);
    f.params["variant"] = v.id;
    f.params["grid"] = grid;
    f.params["threads"] = v.threads;
    f.params["bytes_per_run"] = bytes_per_run;
    f.params["buffer_bytes"] = d.bytes;
    t.entry["value"] = f.value;
    t.entry["median_s"] = f.measurement.time.median;
    t.entry["rel_iqr"] = f.measurement.time.rel_iqr();
    t.entry["grid"] = grid;
    t.entry["threads"] = v.threads;
    t.figure = std::move(f);
  } catch (const Error& e) {
    t.entry["error"] = e.what();
    s.warn(fmt::format("{} kernel {} failed: {}", kind_name(kind), v.id, e.what()));
  }
  return t;
}

std::string others_text(const nlohmann::json& variants, const std::string& best) {
  std::string out;
  for (const auto& v : variants)
    if (v.contains("value") && v["id"] != best)
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", v["id"].get<std::string>(),
                         format_si(v["value"].get<double>(), "B/s"));
  return out.empty() ? "none" : out;
}

// Measures the variants of `kind` (bulk or not) and adds the best as `name`, or,
// when `name` was measured already, replaces it if one of these is faster; all
// variants tried so far go into params["variants"].
void best_variant(Session& s, Dram& d, StreamKind kind, bool bulk, const std::string& name,
                  const std::string& label) {
  const measure::Figure* before = s.find(name);
  nlohmann::json variants = before ? before->params.value("variants", nlohmann::json::array())
                                   : nlohmann::json::array();
  std::optional<measure::Figure> best;
  for (const StreamVariant& v : stream_variants(kind)) {
    if (v.bulk != bulk) continue;
    Tried t = try_variant(s, d, kind, v);
    variants.push_back(t.entry);
    if (t.figure && (!best || t.figure->value > best->value)) best = std::move(t.figure);
  }
  if (!best) {
    if (!before) throw_device(fmt::format("every {} kernel failed", kind_name(kind)));
    s.note(fmt::format("{}: the {} kernels did not run; {} stays", name, bulk ? "bulk-copy" : "load/store",
                       before->params.value("variant", "")));
    return;
  }
  if (before && before->value >= best->value) {
    measure::Figure kept = *before;  // stored again with every variant in its params
    kept.params["variants"] = variants;
    const std::string id = kept.params.value("variant", "");
    s.note(fmt::format("{}: {} ({}) stays the best; the others: {}", name, id, format_si(kept.value, "B/s"),
                       others_text(variants, id)));
    s.replace(std::move(kept));
    return;
  }
  best->name = name;
  best->label = label;
  best->unit = "B/s";
  best->level = "dram";
  best->params["variants"] = variants;
  const std::string id = best->params["variant"].get<std::string>();
  s.note(fmt::format("{}: best of {} kernels is {} ({}); the others: {}", name, variants.size(), id,
                     format_si(best->value, "B/s"), others_text(variants, id)));
  if (before) s.replace(std::move(*best));
  else s.add(std::move(*best));
}

void measure_memcpy(Session& s, Dram& d) {
  measure::Measurement m = s.timer().measure(
      [&](cudaStream_t st) {
        CUDA_CHECK(cudaMemcpyAsync(d.b.get(), d.a.get(), d.bytes, cudaMemcpyDeviceToDevice, st));
      },
      s.measure_options());
  measure::Figure f;
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
  measure::Measurement m = s.timer().measure(run(passes), s.measure_options());
  measure::Figure f;
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
  measure::Measurement m = s.timer().measure(run(iters, s.probe()), s.measure_options(), 1, s.probe_clock());
  const double bytes = static_cast<double>(grid) * kSmemThreads * iters * kSmemUnroll * 16.0;
  measure::Figure f;
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
      for (auto [kind, name, label] : kDram)
        if (s.wants(name)) s.attempt(name, label, [&] { best_variant(s, *d, kind, false, name, label); });
      if (s.wants("dram.memcpy"))
        s.attempt("dram.memcpy", "DRAM copy, cudaMemcpy", [&] { measure_memcpy(s, *d); });
    }
  }
  if (s.wants("l2.read")) s.attempt("l2.read", "L2 read", [&] { measure_l2(s); });
  if (s.wants("smem.read")) s.attempt("smem.read", "Shared memory read", [&] { measure_smem(s); });
}

void measure_memory_bulk(Session& s) {
  if (s.prop().major < 9) return;  // cp.async.bulk is sm_90
  bool any = false;
  for (auto [kind, name, label] : kDram) any |= s.wants(name);
  if (!any) return;
  std::unique_ptr<Dram> d;
  s.attempt("dram", "DRAM buffers", [&] { d = std::make_unique<Dram>(make_dram(s)); });
  if (!d) return;
  for (auto [kind, name, label] : kDram)
    if (s.wants(name)) s.attempt(name, label, [&] { best_variant(s, *d, kind, true, name, label); });
}

}  // namespace roofline::ceilings::gpu
