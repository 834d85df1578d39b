#include <fmt/format.h>
#include <sys/stat.h>

#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/engine/data.hpp"

namespace roofline::engine {

namespace {
const char* kInstallHint =
    "install Fashion-MNIST with `apt-get install dataset-fashion-mnist` (it goes to "
    "/usr/share/datasets/fashion-mnist), "
    "or pass --data DIR naming a folder with train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, "
    "t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz (MNIST files work too)";

bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// "train-images-idx3-ubyte" → the first of .gz, raw, and the "train-images.idx3-ubyte" spelling that exists.
std::string find_file(const std::string& dir, const std::string& stem) {
  std::string dotted = stem;
  auto dash = dotted.find("-idx");
  if (dash != std::string::npos) dotted[dash] = '.';
  for (const std::string& name : {stem + ".gz", stem, dotted + ".gz", dotted}) {
    std::string p = dir + "/" + name;
    if (is_file(p)) return p;
  }
  throw_input(fmt::format("{} has no {}(.gz)", dir, stem), kInstallHint);
}
}  // namespace

std::string default_data_dir() { return "/usr/share/datasets/fashion-mnist"; }

ImageSet make_image_set(const IdxArray& images, const IdxArray& labels, const std::string& what) {
  if (images.dims.size() != 3)
    throw_input(fmt::format("{} images: expected 3 dimensions (count, rows, columns), the file has {}", what,
                            images.dims.size()),
                kInstallHint);
  if (labels.dims.size() != 1)
    throw_input(fmt::format("{} labels: expected 1 dimension, the file has {}", what, labels.dims.size()),
                kInstallHint);
  if (images.dims[0] != labels.dims[0])
    throw_input(fmt::format("{} set: {} images but {} labels", what, images.dims[0], labels.dims[0]),
                "the image and label files must come from the same data set; " + std::string(kInstallHint));
  ImageSet s;
  s.n = images.dims[0];
  s.h = images.dims[1];
  s.w = images.dims[2];
  s.images = images.data;
  s.labels = labels.data;
  for (size_t i = 0; i < s.labels.size(); ++i)
    if (s.labels[i] >= s.classes)
      throw_input(fmt::format("{} labels: label {} at index {} is not a class of 0..{}", what, int(s.labels[i]), i,
                              s.classes - 1),
                  kInstallHint);
  return s;
}

Normalization compute_normalization(const ImageSet& set) {
  double sum = 0, sq = 0;
  for (std::uint8_t v : set.images) {
    const double x = v / 255.0;
    sum += x;
    sq += x * x;
  }
  const double n = static_cast<double>(set.images.size());
  const double mean = sum / n;
  const double var = sq / n - mean * mean;
  Normalization norm;
  norm.mean = static_cast<float>(mean);
  norm.std = static_cast<float>(std::sqrt(var > 0 ? var : 1.0));
  norm.source = "training set";
  return norm;
}

DataSplit load_mnist_dir(const std::string& dir) {
  if (!is_dir(dir)) throw_input(fmt::format("data directory {} does not exist", dir), kInstallHint);
  DataSplit d;
  d.dir = dir;
  d.train = make_image_set(read_idx_file(find_file(dir, "train-images-idx3-ubyte")),
                           read_idx_file(find_file(dir, "train-labels-idx1-ubyte")), "training");
  d.test = make_image_set(read_idx_file(find_file(dir, "t10k-images-idx3-ubyte")),
                          read_idx_file(find_file(dir, "t10k-labels-idx1-ubyte")), "test");
  if (d.train.h != d.test.h || d.train.w != d.test.w)
    throw_input(
        fmt::format("training images are {}x{} but test images are {}x{}", d.train.h, d.train.w, d.test.h, d.test.w),
        kInstallHint);
  d.norm = compute_normalization(d.train);
  return d;
}

}  // namespace roofline::engine
