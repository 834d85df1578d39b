#include "roofline/profiler/sequence_counter.hpp"

#include <algorithm>

namespace roofline::prof {

SequenceCounter::SequenceCounter(size_t capacity) : capacity_(std::max<size_t>(capacity, 16)) {}

size_t SequenceCounter::KeyHash::operator()(const Key& k) const {
  std::uint64_t h = 0xcbf29ce484222325ull ^ k.n;
  for (int i = 0; i < k.n; ++i) {
    h ^= k.ids[static_cast<size_t>(i)];
    h *= 0x100000001b3ull;
  }
  return static_cast<size_t>(h);
}

void SequenceCounter::add(std::uint64_t stream, std::uint32_t kernel, std::uint64_t start_ns, double duration_ns) {
  History& h = streams_[stream];
  if (h.n > 0 && start_ns < h.last_start) {
    // A record older than the stream's last one: the order is unknown here,
    // so the history restarts rather than inventing a sequence.
    ++out_of_order_;
    h.n = 0;
  }
  h.last_start = start_ns;
  // Sequences ending with this kernel: the last 1..3 kernels of the stream + it.
  for (int len = 2; len <= kMaxLength && len - 1 <= h.n; ++len) {
    Key key;
    key.n = static_cast<std::uint8_t>(len);
    double total = duration_ns;
    for (int i = 0; i < len - 1; ++i) {
      int from = h.n - (len - 1) + i;
      key.ids[static_cast<size_t>(i)] = h.ids[static_cast<size_t>(from)];
      total += h.dur[static_cast<size_t>(from)];
    }
    key.ids[static_cast<size_t>(len - 1)] = kernel;
    Entry& e = table_[key];
    ++e.count;
    e.total_ns += total;
  }
  if (h.n == kMaxLength - 1) {
    for (int i = 0; i + 1 < h.n; ++i) {
      h.ids[static_cast<size_t>(i)] = h.ids[static_cast<size_t>(i + 1)];
      h.dur[static_cast<size_t>(i)] = h.dur[static_cast<size_t>(i + 1)];
    }
    --h.n;
  }
  h.ids[static_cast<size_t>(h.n)] = kernel;
  h.dur[static_cast<size_t>(h.n)] = duration_ns;
  ++h.n;
  if (table_.size() > capacity_) prune();
}

void SequenceCounter::prune() {
  // Raise the floor until a quarter of the room is free again.
  while (table_.size() > capacity_ * 3 / 4) {
    ++prune_floor_;
    for (auto it = table_.begin(); it != table_.end();) {
      if (it->second.count <= prune_floor_)
        it = table_.erase(it);
      else
        ++it;
    }
  }
}

namespace {
bool contains_run(const std::vector<std::uint32_t>& longer, const std::vector<std::uint32_t>& shorter) {
  return std::search(longer.begin(), longer.end(), shorter.begin(), shorter.end()) != longer.end();
}
}  // namespace

std::vector<SequenceCounter::Sequence> SequenceCounter::top(size_t k) const {
  std::vector<Sequence> all;
  all.reserve(table_.size());
  for (const auto& [key, e] : table_) {
    if (e.count < 2) continue;  // a sequence seen once is no pattern
    Sequence s;
    s.kernels.assign(key.ids.begin(), key.ids.begin() + key.n);
    s.count = e.count;
    s.total_ns = e.total_ns;
    all.push_back(std::move(s));
  }
  std::sort(all.begin(), all.end(), [](const Sequence& a, const Sequence& b) {
    if (a.count != b.count) return a.count > b.count;
    if (a.kernels.size() != b.kernels.size()) return a.kernels.size() > b.kernels.size();
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return a.kernels < b.kernels;  // deterministic order
  });
  // Only the most frequent candidates compete (keeps this O(k^2), not O(table^2)).
  if (all.size() > 50 * k) all.resize(50 * k);
  // Longer sequences first, so they can hide their parts.
  std::stable_sort(all.begin(), all.end(),
                   [](const Sequence& a, const Sequence& b) { return a.kernels.size() > b.kernels.size(); });
  std::vector<Sequence> chosen;
  for (auto& s : all) {
    bool hidden = false;
    for (const auto& c : chosen)
      if (c.kernels.size() > s.kernels.size() && contains_run(c.kernels, s.kernels) &&
          static_cast<double>(c.count) >= 0.9 * static_cast<double>(s.count)) {
        hidden = true;
        break;
      }
    if (!hidden) chosen.push_back(std::move(s));
  }
  std::sort(chosen.begin(), chosen.end(), [](const Sequence& a, const Sequence& b) {
    if (a.count != b.count) return a.count > b.count;
    if (a.kernels.size() != b.kernels.size()) return a.kernels.size() > b.kernels.size();
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return a.kernels < b.kernels;  // deterministic order
  });
  if (chosen.size() > k) chosen.resize(k);
  return chosen;
}

}  // namespace roofline::prof
