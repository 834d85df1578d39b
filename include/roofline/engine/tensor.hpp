// Tensors of the engine: a shape, a dtype, and a byte range of a Storage that
// owns memory on one device (CPU: 64-byte aligned; CUDA: cudaMalloc through
// roofline/cuda/memory.hpp). Tensors are always contiguous, row-major (NCHW
// for images); views share the storage (reshape, a range of the first dim).
// bf16/fp16 activations run on the GPU (mixed precision); parameters and their
// gradients stay fp32.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace roofline::engine {

enum class DType : std::uint8_t { F32, BF16, F16, I32, U8, F64 };
size_t dtype_size(DType t);
const char* to_string(DType t);

// How an image batch's elements are ordered in memory (PyTorch's
// memory_format): NCHW (contiguous) or NHWC (channels_last, the layout the
// tensor cores' convolutions prefer). A convolution's weights follow it:
// (k, c, r, s) for NCHW, (k, r, s, c) for NHWC.
enum class MemoryFormat : std::uint8_t { NCHW, NHWC };
const char* to_string(MemoryFormat f);  // "nchw", "nhwc"

enum class DeviceKind : std::uint8_t { Cpu, Cuda };
struct Device {
  DeviceKind kind = DeviceKind::Cpu;
  int index = 0;  // GPU ordinal for Cuda
  static Device cpu() { return {}; }
  static Device cuda(int i = 0) { return {DeviceKind::Cuda, i}; }
  bool is_cuda() const { return kind == DeviceKind::Cuda; }
  std::string str() const;  // "cpu", "cuda:0"
  bool operator==(const Device& o) const { return kind == o.kind && (kind == DeviceKind::Cpu || index == o.index); }
};

using Shape = std::vector<std::int64_t>;
std::int64_t numel(const Shape& s);
std::string to_string(const Shape& s);  // "(64, 1, 28, 28)"

// Owns `bytes` of memory on `device`; freed in the destructor.
class Storage {
 public:
  static std::shared_ptr<Storage> allocate(Device device, size_t bytes, const char* what);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

 private:
  Storage(Device d, void* p, size_t b) : device_(d), data_(p), bytes_(b) {}
  Device device_;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

class Tensor {
 public:
  Tensor() = default;
  // Uninitialised memory. `what` names the buffer in out-of-memory messages.
  static Tensor empty(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu(),
                      const char* what = "tensor");
  // Host tensor holding a copy of `values`.
  static Tensor from_vector(const std::vector<float>& values, const Shape& shape);
  static Tensor from_vector(const std::vector<std::int32_t>& values, const Shape& shape);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  std::int64_t dim() const { return static_cast<std::int64_t>(shape_.size()); }
  std::int64_t size(std::int64_t d) const;  // negative d counts from the end
  std::int64_t numel() const { return engine::numel(shape_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device() : Device::cpu(); }

  void* raw() const { return static_cast<char*>(storage_->data()) + offset_; }
  // Typed access; throws Error(Internal) when the dtype does not match.
  float* f32() const;
  std::int32_t* i32() const;
  std::uint8_t* u8() const;

  // Views sharing this tensor's storage.
  Tensor reshape(const Shape& shape) const;                      // same numel
  Tensor narrow0(std::int64_t begin, std::int64_t count) const;  // rows [begin, begin+count) of dim 0

  // Copies (synchronous; for set-up and tests, not for hot loops).
  Tensor to(Device device) const;
  void copy_from(const Tensor& src);  // same shape and dtype, any devices
  std::vector<float> to_floats() const;
  std::vector<std::int32_t> to_ints() const;
  // Sets every element (host or device) to `value` (F32 tensors).
  void fill(float value);

 private:
  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;  // bytes into the storage
  Shape shape_;
  DType dtype_ = DType::F32;
};

// Byte copies between any two devices (cudaMemcpy when one side is a GPU).
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes);

}  // namespace roofline::engine
