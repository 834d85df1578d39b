// Data: IDX files (the MNIST / Fashion-MNIST format, gzip-compressed or raw)
// and the image sets the trainer draws batches from. Images stay uint8 in
// memory (and on the GPU); gather_batch (ops.hpp) normalises, resizes and
// gathers a batch by a shuffled order on the device, so no host work or host
// synchronisation happens per step.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace roofline::engine {

// An IDX array of unsigned bytes (type 0x08), the only type MNIST uses.
struct IdxArray {
  std::vector<std::int64_t> dims;
  std::vector<std::uint8_t> data;  // product(dims) bytes, row-major
};
// IDX data in memory or in a file, gzip-compressed or raw (told by the gzip
// magic), read as a stream: the header is checked first, and no more is read
// or held than the data it announces (at most 2 GiB), so a huge or sparse file
// and a gzip bomb are refused without reading them whole. Throws Error(Input)
// naming `source` (or the path) when the magic, the type, the dimensions or the
// size is wrong (truncated or trailing bytes), or the gzip data is corrupt,
// truncated or followed by other bytes. One reader serves both (the fuzz target
// calls parse_idx).
IdxArray parse_idx(const std::uint8_t* bytes, size_t size, const std::string& source);
IdxArray read_idx_file(const std::string& path);

struct ImageSet {
  std::int64_t n = 0, h = 0, w = 0;
  std::vector<std::uint8_t> images;  // (n, h, w)
  std::vector<std::uint8_t> labels;  // (n), class indices
  std::int64_t classes = 10;
};

struct Normalization {
  float mean = 0, std = 1;  // of pixel/255
  std::string source;       // "training set" or "given"
};
// Mean and standard deviation of pixel/255 over every training image (double sums).
Normalization compute_normalization(const ImageSet& set);

struct DataSplit {
  std::string dir;
  ImageSet train, test;
  Normalization norm;  // computed from `train`
};

// /usr/share/datasets/fashion-mnist: where Debian's dataset-fashion-mnist puts it.
std::string default_data_dir();
// Loads train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz],
// t10k-images-idx3-ubyte[.gz] and t10k-labels-idx1-ubyte[.gz] from `dir`
// (MNIST files in the same format work too). Throws Error(Input) with a hint
// (apt-get install dataset-fashion-mnist, --data DIR) when files are missing,
// and when counts, sizes or labels do not agree.
DataSplit load_mnist_dir(const std::string& dir);
ImageSet make_image_set(const IdxArray& images, const IdxArray& labels, const std::string& what);

}  // namespace roofline::engine
