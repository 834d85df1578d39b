// fusion-candidates: recurring chains of elementwise kernels. Each reads and
// writes its whole tensor, so a chain of n makes n passes over memory and n
// launches where one fused kernel would make one (HTA's frequent kernel
// sequences).
#include <algorithm>
#include <set>

#include "src/profiler/diagnosis/facts.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::prof::diag {

std::optional<Diagnosis> fusion_candidates(const Facts& c, const Rule& rule) {
  if (c.p.sequences.empty() || c.kernel_total_ns <= 0) return std::nullopt;
  struct Chain {
    const KernelSequence* seq;
    std::vector<std::string> shown;
  };
  std::vector<Chain> chains;
  for (const auto& s : c.p.sequences) {
    if (s.kernels.size() < 2 || s.count < c.o.min_sequence_count) continue;
    if (s.total_ns < c.o.fusion_share * c.kernel_total_ns) continue;
    Chain ch{&s, {}};
    bool all = true;
    for (const auto& n : s.kernels) {
      const KernelAgg* k = c.kernel(n);
      KernelInfo info = k ? k->info : explain_kernel(n);
      if (!info.is_elementwise_like()) {
        all = false;
        break;
      }
      ch.shown.push_back(k ? k->shown : shorten_kernel_name(n, 60));
    }
    if (all) chains.push_back(std::move(ch));
  }
  if (chains.empty()) return std::nullopt;
  std::sort(chains.begin(), chains.end(),
            [](const Chain& a, const Chain& b) { return a.seq->total_ns > b.seq->total_ns; });
  // Keep chains that add kernels not already in a kept one (sub-chains repeat the same time).
  std::vector<const Chain*> kept;
  std::set<std::string> covered;
  double saving = 0;
  for (const auto& ch : chains) {
    bool news = false;
    for (const auto& n : ch.seq->kernels) news |= !covered.count(n);
    if (!news) continue;
    for (const auto& n : ch.seq->kernels) covered.insert(n);
    kept.push_back(&ch);
    double n = static_cast<double>(ch.seq->kernels.size());
    saving += ch.seq->total_ns * (n - 1) / n;  // one fused pass instead of n
    if (kept.size() == 3) break;
  }
  std::vector<std::string> parts;
  for (const Chain* ch : kept)
    parts.push_back(join(ch->shown, " → ") + ": " + count(ch->seq->count) + " times, " + t(ch->seq->total_ns) + " (" +
                    pct(ch->seq->total_ns / c.kernel_total_ns) + " of kernel time)");
  return c.make(rule, join(parts, "; ") + "; fusing each chain into one kernel would save about " + t(saving),
                "fuse the chain: torch.compile (Inductor generates one Triton kernel per chain), or fused ops "
                "(e.g. F.gelu with bias in one Linear epilogue, fused optimizers with fused=True)",
                saving);
}

}  // namespace roofline::prof::diag
