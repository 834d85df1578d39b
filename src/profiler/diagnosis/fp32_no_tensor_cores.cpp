// fp32-no-tensor-cores: GEMMs and convolutions in FP32 on CUDA cores, when
// TF32 or bf16 would run them on tensor cores (TensorBoard plugin: "tensor
// core eligible ops not using tensor cores"). Decided from the kernel names;
// hardware counters confirm it when present (FP32 FLOPs > 0, tensor FLOPs 0).
#include <algorithm>

#include "src/profiler/diagnosis/facts.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::prof::diag {

std::optional<Diagnosis> fp32_no_tensor_cores(const Facts& c, const Rule& rule) {
  if (c.kernel_total_ns <= 0) return std::nullopt;
  std::vector<const KernelAgg*> hits;
  double time = 0;
  int min_sm = 1000;
  std::uint64_t confirmed = 0, contradicted = 0;
  for (const auto& k : c.kernels) {
    if (!k.info.fp32_on_cuda_cores()) continue;
    // Counters outrank the name: a kernel that did issue tensor-core work is not one of these.
    bool tensor = false, fp32 = false;
    for (const auto& kc : c.p.counters) {
      if (kc.kernel != k.name && kc.kernel != k.info.demangled) continue;
      double tf = 0;
      for (const auto& [prec, v] : kc.tensor_flops) tf += v;
      tensor |= tf > 0;
      auto it = kc.flops.find("fp32");
      fp32 |= it != kc.flops.end() && it->second > 0;
    }
    if (tensor) {
      ++contradicted;
      continue;
    }
    if (fp32) ++confirmed;
    hits.push_back(&k);
    time += k.total_ns;
    if (k.info.sm > 0) min_sm = std::min(min_sm, k.info.sm);
  }
  double share = time / c.kernel_total_ns;
  if (hits.empty() || share < c.o.fp32_matmul_share) return std::nullopt;

  std::vector<std::string> top;
  for (size_t i = 0; i < std::min<size_t>(3, hits.size()); ++i)
    top.push_back(hits[i]->shown + " (" + t(hits[i]->total_ns) + ", " + count(hits[i]->count) + "x)");
  std::string ev = count(hits.size()) + " FP32 GEMM/convolution kernels run on CUDA cores: " + t(time) + ", " +
                   pct(share) + " of kernel time; largest: " + join(top, "; ") +
                   ". Read from the names (e.g. \"sgemm\"/\"scudnn\"/\"simt\" and no tensor-core MMA shape)";
  if (confirmed) ev += "; counters confirm it for " + count(confirmed) + " of them (FP32 FLOPs > 0, tensor FLOPs 0)";
  if (contradicted)
    ev += "; " + count(contradicted) + " kernel(s) left out because their counters show tensor-core FLOPs";
  std::string s;
  if (min_sm < 80)  // Volta/Turing: no TF32
    s = "this GPU generation has no TF32: use mixed precision, torch.autocast('cuda', dtype=torch.float16) with a "
        "GradScaler, so GEMMs and convolutions run on tensor cores";
  else
    s = "allow TF32 (torch.backends.cuda.matmul.allow_tf32 = True and torch.backends.cudnn.allow_tf32 = True, or "
        "torch.set_float32_matmul_precision('high')), or train in bf16 with torch.autocast('cuda', "
        "dtype=torch.bfloat16); tensor cores want dimensions that are multiples of 8, and very small GEMMs gain little";
  return c.make(rule, ev, s, time);
}

}  // namespace roofline::prof::diag
