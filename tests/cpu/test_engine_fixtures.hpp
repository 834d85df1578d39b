// Test fixtures for the engine: IDX files built in memory, a small
// synthetic MNIST-style data set in a temporary folder (and loaded), the
// OpenMP team size.
#pragma once
#include <gtest/gtest.h>
#include <omp.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "roofline/engine/data.hpp"
#include "roofline/engine/rng.hpp"
#include "tests/support/cli.hpp"

namespace roofline::test {

// Sets the OpenMP thread count for the fast path (what OMP_NUM_THREADS sets at
// start-up) and restores it.
class Threads {
 public:
  explicit Threads(int n) : old_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~Threads() { omp_set_num_threads(old_); }
  Threads(const Threads&) = delete;
  Threads& operator=(const Threads&) = delete;

 private:
  int old_;
};

inline std::string idx_bytes(const std::vector<std::uint32_t>& dims, const std::vector<std::uint8_t>& data,
                             std::uint8_t type = 0x08) {
  std::string s;
  s.push_back(0);
  s.push_back(0);
  s.push_back(static_cast<char>(type));
  s.push_back(static_cast<char>(dims.size()));
  for (auto d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) s.push_back(static_cast<char>((d >> shift) & 0xff));
  s.append(data.begin(), data.end());
  return s;
}

inline void write_gz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(f);
}

// Images whose mean brightness encodes the label, so a model can learn them.
struct SyntheticSet {
  std::vector<std::uint8_t> images, labels;
};
inline SyntheticSet synthetic_set(std::uint32_t n, std::uint32_t h, std::uint32_t w, std::uint64_t seed) {
  engine::Rng r(seed);
  SyntheticSet s;
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto label = static_cast<std::uint8_t>(r.below(10));
    s.labels.push_back(label);
    for (std::uint32_t p = 0; p < h * w; ++p)
      s.images.push_back(static_cast<std::uint8_t>(std::min<std::uint64_t>(255, label * 20 + r.below(60))));
  }
  return s;
}

// Writes train-/t10k- images and labels (.gz) into `dir`.
inline void write_synthetic_mnist(const std::string& dir, std::uint32_t n_train, std::uint32_t n_test,
                                  std::uint32_t h = 28, std::uint32_t w = 28) {
  SyntheticSet tr = synthetic_set(n_train, h, w, 1), te = synthetic_set(n_test, h, w, 2);
  write_gz(dir + "/train-images-idx3-ubyte.gz", idx_bytes({n_train, h, w}, tr.images));
  write_gz(dir + "/train-labels-idx1-ubyte.gz", idx_bytes({n_train}, tr.labels));
  write_gz(dir + "/t10k-images-idx3-ubyte.gz", idx_bytes({n_test, h, w}, te.images));
  write_gz(dir + "/t10k-labels-idx1-ubyte.gz", idx_bytes({n_test}, te.labels));
}

// A synthetic data set of n_train training and n_test test images, written
// to a temporary folder and loaded from it.
inline engine::DataSplit synthetic_split(std::uint32_t n_train = 256, std::uint32_t n_test = 64) {
  TempDir dir;
  write_synthetic_mnist(dir.path(), n_train, n_test);
  return engine::load_mnist_dir(dir.path());
}

}  // namespace roofline::test
