// Frequent kernel sequences (fusion candidates): counts of every run of 2 to
// 4 consecutive kernels on one stream, in bounded memory.
//
// Kernels on a stream execute in order, so consecutive records of a stream,
// sorted by start time, are the launch order. When the table grows past its
// capacity the rarest sequences are dropped (lossy counting): counts of
// sequences seen often are exact, except for occurrences before a prune that
// dropped them (at most `prune_floor()` each).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace roofline::prof {

class SequenceCounter {
 public:
  static constexpr int kMaxLength = 4;
  struct Sequence {
    std::vector<std::uint32_t> kernels;  // kernel ids, launch order
    std::uint64_t count = 0;
    double total_ns = 0;  // GPU time of all kernels of all occurrences
  };

  explicit SequenceCounter(size_t capacity = 20000);

  // A kernel (by id) that ran on `stream` from `start_ns` for `duration_ns`.
  void add(std::uint64_t stream, std::uint32_t kernel, std::uint64_t start_ns, double duration_ns);

  // The `k` most frequent sequences, longest first among equal counts, leaving
  // out a sequence contained in an already chosen longer one that occurs about
  // as often (it is the same pattern, shown once).
  std::vector<Sequence> top(size_t k) const;

  std::uint64_t prune_floor() const { return prune_floor_; }
  std::uint64_t out_of_order() const { return out_of_order_; }
  size_t size() const { return table_.size(); }

 private:
  struct Key {
    std::array<std::uint32_t, kMaxLength> ids{};
    std::uint8_t n = 0;
    bool operator==(const Key& o) const { return n == o.n && ids == o.ids; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct Entry {
    std::uint64_t count = 0;
    double total_ns = 0;
  };
  struct History {
    std::array<std::uint32_t, kMaxLength - 1> ids{};
    std::array<double, kMaxLength - 1> dur{};
    int n = 0;
    std::uint64_t last_start = 0;
  };
  void prune();

  size_t capacity_;
  std::unordered_map<Key, Entry, KeyHash> table_;
  std::unordered_map<std::uint64_t, History> streams_;
  std::uint64_t prune_floor_ = 0, out_of_order_ = 0;
};

}  // namespace roofline::prof
