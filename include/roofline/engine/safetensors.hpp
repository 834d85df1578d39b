// safetensors files (Hugging Face's format, what torchvision's and PyTorch's
// weights travel in): an 8-byte little-endian header length N, N bytes of JSON
// {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ..., optional
// "__metadata__": {string: string}}, then the data buffer, every tensor
// row-major and little-endian at its offsets. The reader validates the whole
// header before any data is trusted (docs/engine.md "Weights: safetensors"):
// each problem is an Error(Input) naming the file and the tensor.
#pragma once
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace roofline::engine {

// Bytes per element of a safetensors dtype ("F32" -> 4, "BF16" -> 2, "BOOL" ->
// 1, ...); 0 for a name this reader does not know (sub-byte F4/F6 included).
std::size_t safetensors_dtype_size(std::string_view dtype);

// One tensor's header entry.
struct SafetensorsInfo {
  std::string name;
  std::string dtype;                 // as spelled in the file: "F32", "BF16", "I64", ...
  std::vector<std::int64_t> shape;   // [] is a scalar; a 0 dimension is an empty tensor
  std::uint64_t begin = 0, end = 0;  // byte range in the data buffer
  std::int64_t numel() const;
};

// A validated safetensors file. open() reads only the header; tensors are read
// on demand (a 250 MB checkpoint is never held twice).
class SafetensorsFile {
 public:
  // Throws Error(Input) when the file cannot be read or is not a valid
  // safetensors file; the message names the file and the tensor at fault.
  static SafetensorsFile open(const std::string& path);
  // The same reader over bytes in memory; `label` names them in messages.
  static SafetensorsFile parse(std::vector<std::uint8_t> bytes, const std::string& label);

  const std::string& source() const { return source_; }
  // Tensor names in data-buffer order.
  std::vector<std::string> names() const;
  bool contains(const std::string& name) const { return index_.count(name) != 0; }
  // Throws Error(Input) naming the tensor and the file when it is absent.
  const SafetensorsInfo& info(const std::string& name) const;
  const std::vector<SafetensorsInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // The tensor's bytes as stored (little-endian, row-major).
  std::vector<std::uint8_t> read_bytes(const std::string& name) const;
  // As fp32: F32 as is, BF16/F16 exactly, F64 rounded to nearest. Other dtypes
  // throw Error(Unsupported) naming the tensor and its dtype.
  std::vector<float> read_f32(const std::string& name) const;
  // Into the caller's buffer of `count` floats; count must equal numel().
  void read_f32(const std::string& name, float* out, std::int64_t count) const;
  // Integer and BOOL dtypes as int64 (e.g. BatchNorm's num_batches_tracked).
  std::vector<std::int64_t> read_i64(const std::string& name) const;

 private:
  SafetensorsFile() = default;
  void parse_header(const std::uint8_t* header, std::uint64_t n, std::uint64_t data_size);
  void read_range(const SafetensorsInfo& t, std::uint8_t* dst) const;

  std::string source_;
  std::vector<std::uint8_t> memory_;  // parse(): the whole input
  std::shared_ptr<std::FILE> file_;   // open(): kept open for the reads
  std::uint64_t data_start_ = 0, data_size_ = 0;
  std::vector<SafetensorsInfo> tensors_;      // in data-buffer order
  std::map<std::string, std::size_t> index_;  // name -> position in tensors_
  std::map<std::string, std::string> metadata_;
};

// One tensor to write: `data` holds numel(shape) · safetensors_dtype_size(dtype)
// bytes, row-major, little-endian (e.g. fp32 floats for "F32", bf16 bits for
// "BF16").
struct SafetensorsTensor {
  std::string name;
  std::string dtype = "F32";
  std::vector<std::int64_t> shape;
  const void* data = nullptr;
};

// Writes a safetensors file as the reference implementation does: the header
// compact JSON ("__metadata__" first) padded with spaces to a multiple of 8
// bytes, tensors ordered by element size (largest first, otherwise as given)
// so each is aligned to its size. Written to a temporary file in the same
// folder and renamed into place: a failure leaves no half-written file.
// Throws Error(Usage) for bad arguments (duplicate or reserved names, unknown
// dtype, negative dimension) and Error(Input) when the file cannot be written.
void write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// Matching a checkpoint against the tensors a model expects.
struct ExpectedTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  bool optional = false;  // absence is not a problem (its shape is still checked when present)
};

struct CheckpointMismatch {
  struct Misshapen {
    std::string name;
    std::vector<std::int64_t> expected, found;
  };
  std::vector<std::string> missing;     // expected, not in the file (in the expected order)
  std::vector<std::string> unexpected;  // in the file, not expected (in file order)
  std::vector<Misshapen> misshapen;
  bool ok() const { return missing.empty() && unexpected.empty() && misshapen.empty(); }
  // "3 missing (a, b, c); 1 unexpected (d); 1 misshapen (e: expected [64, 3], found [3, 64])":
  // at most `limit` names in all, then "and N more".
  std::string summary(std::size_t limit = 10) const;
};

// Every problem at once.
CheckpointMismatch match_checkpoint(const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected);
// Throws one Error(Input) listing the problems (first 10 and the count) when
// the file does not hold exactly the expected tensors; `model` names what the
// checkpoint was meant for ("resnet18").
void check_checkpoint(const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected,
                      const std::string& model);

}  // namespace roofline::engine
