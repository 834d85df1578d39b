#include "roofline/profiler/metrics.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "roofline/core/strings.hpp"

namespace roofline::prof {

namespace m = metric;

std::vector<std::string> MetricSet::all() const {
  std::vector<std::string> r = required;
  r.insert(r.end(), optional.begin(), optional.end());
  return r;
}

MetricSet default_range_metrics(int cc_major, int cc_minor) {
  MetricSet s;
  // Memory metrics first: should the config builder fill passes in list order, the
  // DRAM counters land in the first replay pass (docs/counters.md, "DRAM writes").
  s.required = {m::kDuration, m::kDramRead, m::kDramWrite, m::kL2ReadSectors, m::kL2WriteSectors, m::kSmClock,
                m::kDadd,     m::kDmul,     m::kDfma,      m::kFadd,          m::kFmul,           m::kFfma,
                m::kHadd,     m::kHmul,     m::kHfma,      m::kOccupancy};
  if (cc_major >= 9) {
    // Hopper: one FP16 path for both destination types (the _dst_fp32 name reads n/a on GH100).
    s.optional = {m::kTensorFp64, m::kTensorTf32, m::kTensorFp16, m::kTensorBf16, m::kTensorFp8, m::kTensorInt8};
  } else if (cc_major == 8) {
    s.optional = {m::kTensorTf32, m::kTensorFp16DstFp16, m::kTensorFp16DstFp32, m::kTensorBf16, m::kTensorInt8};
    if (cc_minor == 0) s.optional.insert(s.optional.begin(), m::kTensorFp64);  // GA100 has DMMA
    if (cc_minor >= 9) s.optional.push_back(m::kTensorFp8);                    // Ada has FP8
  } else {
    s.optional = {m::kTensorFp16DstFp16, m::kTensorFp16DstFp32, m::kTensorInt8};
  }
  s.optional.push_back(m::kThreadsLaunched);
  return s;
}

std::pair<int, int> chip_compute_capability(const std::string& chip) {
  const std::string c = to_lower(chip);
  if (starts_with(c, "gv")) return {7, 0};
  if (starts_with(c, "tu")) return {7, 5};
  if (c == "ga100") return {8, 0};
  if (starts_with(c, "ga")) return {8, 6};
  if (starts_with(c, "ad")) return {8, 9};
  if (starts_with(c, "gh")) return {9, 0};
  if (starts_with(c, "gb1")) return {10, 0};
  if (starts_with(c, "gb2")) return {12, 0};  // consumer Blackwell (GB202, ...)
  if (starts_with(c, "gb")) return {10, 0};
  return {9, 0};
}

std::vector<std::string> verification_metrics(int cc_major) {
  std::vector<std::string> v = {m::kTensorPipeInst, m::kHfma2MmaInst, "lts__t_bytes.sum", "dram__bytes.sum"};
  if (cc_major >= 9) {
    // Whether the plain tensor-path counts equal sparsity_off + sparsity_on (docs/counters.md).
    for (const char* op : {"hgmma_src_bf16_dst_fp32", "hgmma_src_tf32_dst_fp32", "hgmma_src_fp16",
                           "hmma_src_bf16_dst_fp32", "hmma_src_tf32_dst_fp32"})
      for (const char* sp : {"", "_sparsity_off", "_sparsity_on"})
        v.push_back(std::string("sm__ops_path_tensor_op_") + op + sp + ".sum");
    v.push_back("sm__ops_path_tensor_src_fp8_sparsity_off.sum");
    v.push_back("sm__ops_path_tensor_src_fp8_sparsity_on.sum");
  }
  return v;
}

namespace {

// A metric's value, 0 when it was not available (absent or NaN).
double val(const std::map<std::string, double>& raw, const char* name) {
  auto it = raw.find(name);
  if (it == raw.end() || !std::isfinite(it->second)) return 0;
  return it->second;
}
bool has(const std::map<std::string, double>& raw, const char* name) {
  auto it = raw.find(name);
  return it != raw.end() && std::isfinite(it->second);
}

// Sets a map entry only when the value is nonzero or the metric was read, so a
// precision the chip cannot count does not show up as a measured zero.
void put(std::map<std::string, double>& into, const char* key, double v, bool read) {
  if (read) into[key] = v;
}

}  // namespace

KernelCounters derive(const std::map<std::string, double>& raw, const std::string& kernel,
                      const std::string& nvtx_path) {
  KernelCounters c;
  c.kernel = kernel;
  c.nvtx_path = nvtx_path;
  c.instances = 1;
  c.duration_ns = val(raw, m::kDuration);

  // CUDA cores: add + mul + 2 x fma per thread instruction. Half precision counts
  // packed instructions (FP16 and BF16 alike), each working on two lanes.
  put(c.flops, "fp64",
      kFlopsPerAdd * val(raw, m::kDadd) + kFlopsPerMul * val(raw, m::kDmul) + kFlopsPerFma * val(raw, m::kDfma),
      has(raw, m::kDadd) || has(raw, m::kDmul) || has(raw, m::kDfma));
  put(c.flops, "fp32",
      kFlopsPerAdd * val(raw, m::kFadd) + kFlopsPerMul * val(raw, m::kFmul) + kFlopsPerFma * val(raw, m::kFfma),
      has(raw, m::kFadd) || has(raw, m::kFmul) || has(raw, m::kFfma));
  put(c.flops, "fp16",
      kFlopsPerHalfAdd * val(raw, m::kHadd) + kFlopsPerHalfMul * val(raw, m::kHmul) +
          kFlopsPerHalfFma * val(raw, m::kHfma),
      has(raw, m::kHadd) || has(raw, m::kHmul) || has(raw, m::kHfma));

  // Tensor cores: the counts are FLOPs already. Never 512 x tensor-pipe instructions.
  put(c.tensor_flops, "fp64", val(raw, m::kTensorFp64), has(raw, m::kTensorFp64));
  put(c.tensor_flops, "tf32", val(raw, m::kTensorTf32), has(raw, m::kTensorTf32));
  if (has(raw, m::kTensorFp16)) {
    c.tensor_flops["fp16"] = val(raw, m::kTensorFp16);  // already both destinations
  } else {
    put(c.tensor_flops, "fp16", val(raw, m::kTensorFp16DstFp16) + val(raw, m::kTensorFp16DstFp32),
        has(raw, m::kTensorFp16DstFp16) || has(raw, m::kTensorFp16DstFp32));
  }
  put(c.tensor_flops, "bf16", val(raw, m::kTensorBf16), has(raw, m::kTensorBf16));
  put(c.tensor_flops, "fp8", val(raw, m::kTensorFp8), has(raw, m::kTensorFp8));
  put(c.tensor_flops, "int8", val(raw, m::kTensorInt8), has(raw, m::kTensorInt8));

  c.dram_read_bytes = val(raw, m::kDramRead);
  c.dram_write_bytes = val(raw, m::kDramWrite);
  // Sectors requested by the SMs (L1/TEX) from L2; lts__t_bytes would add the
  // L2's own DRAM fill and eviction traffic.
  c.l2_read_bytes = kL2SectorBytes * val(raw, m::kL2ReadSectors);
  c.l2_write_bytes = kL2SectorBytes * val(raw, m::kL2WriteSectors);
  c.achieved_occupancy = val(raw, m::kOccupancy) / 100.0;

  for (const auto& [k, v] : raw)
    if (std::isfinite(v)) c.raw[k] = v;
  return c;
}

std::vector<std::string> missing_metrics(const std::map<std::string, double>& raw, const MetricSet& wanted) {
  std::vector<std::string> r;
  for (const auto& name : wanted.all())
    if (!has(raw, name.c_str())) r.push_back(name);
  return r;
}

void accumulate(KernelCounters& total, const KernelCounters& one) {
  if (total.instances == 0) {
    total = one;
    return;
  }
  const double t0 = total.duration_ns, t1 = one.duration_ns;
  const double tw = t0 + t1;
  // Weights by duration; instances without a duration count equally.
  const double n0 = double(total.instances), n1 = double(one.instances);
  auto weighted = [&](double a, double b) { return tw > 0 ? (a * t0 + b * t1) / tw : (a * n0 + b * n1) / (n0 + n1); };
  total.achieved_occupancy = weighted(total.achieved_occupancy, one.achieved_occupancy);
  for (const auto& [k, v] : one.raw) {
    auto it = total.raw.find(k);
    if (it == total.raw.end()) {
      total.raw[k] = v;
    } else if (ends_with(k, ".sum")) {
      it->second += v;
    } else {
      it->second = weighted(it->second, v);
    }
  }
  total.instances += one.instances;
  total.duration_ns += one.duration_ns;
  for (const auto& [k, v] : one.flops) total.flops[k] += v;
  for (const auto& [k, v] : one.tensor_flops) total.tensor_flops[k] += v;
  total.dram_read_bytes += one.dram_read_bytes;
  total.dram_write_bytes += one.dram_write_bytes;
  total.l2_read_bytes += one.l2_read_bytes;
  total.l2_write_bytes += one.l2_write_bytes;
}

std::vector<KernelCounters> aggregate(const std::vector<KernelCounters>& instances) {
  std::vector<KernelCounters> out;
  std::map<std::string, size_t> index;
  for (const auto& k : instances) {
    const std::string key = k.kernel + '\x1f' + k.nvtx_path;
    auto [it, fresh] = index.emplace(key, out.size());
    if (fresh) out.emplace_back();
    accumulate(out[it->second], k);
  }
  return out;
}

double fp16_register_move_flops(const KernelCounters& c) {
  auto it = c.flops.find("fp16");
  if (it == c.flops.end() || it->second <= 0) return 0;
  const double fp16 = it->second;
  const double threads = val(c.raw, m::kThreadsLaunched);
  if (threads <= 0) return 0;  // not measured: nothing tells moves from work
  if (fp16 > kFlopsPerHalfFma * kMaxRegisterMovesPerThread * threads) return 0;
  // Any other work will do, however small: requiring it to exceed the moves would
  // leave exactly the light FP32 kernels (an elementwise add: one FADD per element)
  // labelled FP16. A kernel with no other FLOPs keeps its FP16 FLOPs: one HFMA2 per
  // thread is also what a real half2 axpy does.
  if (c.total_flops() - fp16 <= 0) return 0;
  return fp16;
}

double work_flops(const KernelCounters& c) { return c.total_flops() - fp16_register_move_flops(c); }

std::vector<std::string> counter_notes(const KernelCounters& c) {
  std::vector<std::string> notes;
  if (const double moves = fp16_register_move_flops(c); moves > 0)
    notes.push_back(fmt::format(
        "FP16 FLOPs ({}, {:.3g} HFMA2 per thread) are compiler register moves (HFMA2.MMA with zero operands), "
        "not FP16 work: left out of the kernel's work FLOPs, intensity and roof",
        format_si(moves, "FLOP"), moves / kFlopsPerHalfFma / val(c.raw, m::kThreadsLaunched)));
  return notes;
}

DominantWork dominant_work(const KernelCounters& c) {
  DominantWork d;
  const bool moves = fp16_register_move_flops(c) > 0;
  for (const auto& [p, v] : c.tensor_flops)
    if (v > d.flops) d = {p, "tensor", v};
  for (const auto& [p, v] : c.flops)
    if (v > d.flops && !(moves && p == "fp16")) d = {p, "cuda", v};
  return d;
}

double arithmetic_intensity(const KernelCounters& c) {
  const double b = c.dram_bytes();
  return b > 0 ? work_flops(c) / b : std::numeric_limits<double>::infinity();
}
double achieved_flops(const KernelCounters& c) {
  return c.duration_ns > 0 ? work_flops(c) / (c.duration_ns * 1e-9) : 0;
}
double dram_bandwidth(const KernelCounters& c) {
  return c.duration_ns > 0 ? c.dram_bytes() / (c.duration_ns * 1e-9) : 0;
}
double l2_bandwidth(const KernelCounters& c) {
  return c.duration_ns > 0 ? (c.l2_read_bytes + c.l2_write_bytes) / (c.duration_ns * 1e-9) : 0;
}

KernelPlacement place_kernel(const KernelCounters& c, const model::Roofline& roof, double latency_low) {
  KernelPlacement k;
  k.work = dominant_work(c);
  if (c.duration_ns <= 0) {
    k.reason = "no duration was measured for this kernel";
    return k;
  }
  // The ceiling the dominant work runs against. CUDA-core FP16 and BF16 share one
  // counter; a roofline may list either.
  const model::Ceiling* compute = nullptr;
  if (k.work.precision.empty()) {
    compute = roof.compute("fp32", "cuda");  // no FLOPs: any roof will do, the kernel sits on the slope
    if (!compute) compute = roof.compute("fp32");
  } else {
    // Only the same unit: CUDA-core work under a tensor roof (or the reverse)
    // would misplace the kernel by an order of magnitude.
    compute = roof.compute(k.work.precision, k.work.unit);
    if (!compute && k.work.unit == "cuda" && k.work.precision == "fp16") compute = roof.compute("bf16", "cuda");
  }
  const model::Ceiling* dram = roof.memory("dram");
  if (!compute || !dram) {
    k.reason = !compute ? "the roofline has no compute ceiling for " +
                              (k.work.precision.empty() ? std::string("fp32") : k.work.precision + " " + k.work.unit)
                        : "the roofline has no DRAM bandwidth ceiling";
    return k;
  }
  const double seconds = c.duration_ns * 1e-9;
  k.compute_ceiling = compute->id;
  k.memory_ceiling = dram->id;
  const double flops = work_flops(c);
  k.dram = model::place(flops, c.dram_bytes(), seconds, *compute, *dram);
  if (const model::Ceiling* l2 = roof.memory("l2"))
    k.l2 = model::place(flops, c.l2_read_bytes + c.l2_write_bytes, seconds, *compute, *l2);
  k.bound = model::classify(k.dram, latency_low);
  k.placed = true;
  return k;
}

}  // namespace roofline::prof
