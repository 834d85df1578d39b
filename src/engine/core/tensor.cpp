#include "roofline/engine/tensor.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "roofline/core/error.hpp"
#include "src/engine/cuda/device_memory.hpp"

namespace roofline::engine {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32:
      return 4;
    case DType::BF16:
      return 2;
    case DType::F16:
      return 2;
    case DType::I32:
      return 4;
    case DType::U8:
      return 1;
    case DType::F64:
      return 8;
  }
  return 0;
}

const char* to_string(DType t) {
  switch (t) {
    case DType::F32:
      return "f32";
    case DType::BF16:
      return "bf16";
    case DType::F16:
      return "f16";
    case DType::I32:
      return "i32";
    case DType::U8:
      return "u8";
    case DType::F64:
      return "f64";
  }
  return "?";
}

const char* to_string(MemoryFormat f) { return f == MemoryFormat::NHWC ? "nhwc" : "nchw"; }

std::string Device::str() const { return kind == DeviceKind::Cpu ? "cpu" : fmt::format("cuda:{}", index); }

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::string to_string(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + ")";
}

std::shared_ptr<Storage> Storage::allocate(Device device, size_t bytes, const char* what) {
  // Round up so that vector loops may read whole 64-byte lines; never 0 bytes.
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  void* p = nullptr;
  if (device.is_cuda()) {
    p = detail::cuda_malloc(device.index, rounded, what);
  } else {
    p = std::aligned_alloc(64, rounded);
    if (!p)
      throw Error(ErrorKind::Internal, fmt::format("out of host memory allocating {} bytes for {}", rounded, what),
                  "use a smaller batch or model");
  }
  return std::shared_ptr<Storage>(new Storage(device, p, bytes));
}

Storage::~Storage() {
  if (!data_) return;
  if (device_.is_cuda())
    detail::cuda_free(device_.index, data_);
  else
    std::free(data_);
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device, const char* what) {
  for (auto d : shape)
    if (d < 0) throw Error(ErrorKind::Internal, "negative tensor dimension in " + to_string(shape));
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.storage_ = Storage::allocate(device, static_cast<size_t>(engine::numel(shape)) * dtype_size(dtype), what);
  return t;
}

Tensor Tensor::from_vector(const std::vector<float>& values, const Shape& shape) {
  ROOFLINE_ASSERT(engine::numel(shape) == static_cast<std::int64_t>(values.size()), "shape does not match values");
  Tensor t = empty(shape, DType::F32);
  if (!values.empty()) std::memcpy(t.raw(), values.data(), values.size() * sizeof(float));
  return t;
}

Tensor Tensor::from_vector(const std::vector<std::int32_t>& values, const Shape& shape) {
  ROOFLINE_ASSERT(engine::numel(shape) == static_cast<std::int64_t>(values.size()), "shape does not match values");
  Tensor t = empty(shape, DType::I32);
  if (!values.empty()) std::memcpy(t.raw(), values.data(), values.size() * sizeof(std::int32_t));
  return t;
}

std::int64_t Tensor::size(std::int64_t d) const {
  if (d < 0) d += dim();
  ROOFLINE_ASSERT(d >= 0 && d < dim(), "dimension out of range");
  return shape_[static_cast<size_t>(d)];
}

float* Tensor::f32() const {
  ROOFLINE_ASSERT(dtype_ == DType::F32, std::string("tensor is ") + to_string(dtype_) + ", not f32");
  return static_cast<float*>(raw());
}
std::int32_t* Tensor::i32() const {
  ROOFLINE_ASSERT(dtype_ == DType::I32, std::string("tensor is ") + to_string(dtype_) + ", not i32");
  return static_cast<std::int32_t*>(raw());
}
std::uint8_t* Tensor::u8() const {
  ROOFLINE_ASSERT(dtype_ == DType::U8, std::string("tensor is ") + to_string(dtype_) + ", not u8");
  return static_cast<std::uint8_t*>(raw());
}

Tensor Tensor::reshape(const Shape& shape) const {
  ROOFLINE_ASSERT(engine::numel(shape) == numel(), "reshape " + to_string(shape_) + " to " + to_string(shape));
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::narrow0(std::int64_t begin, std::int64_t count) const {
  ROOFLINE_ASSERT(dim() >= 1 && begin >= 0 && count >= 0 && begin + count <= shape_[0], "narrow0 out of range");
  Tensor t = *this;
  std::int64_t row = numel() / (shape_[0] ? shape_[0] : 1);
  t.offset_ += static_cast<size_t>(begin * row) * dtype_size(dtype_);
  t.shape_[0] = count;
  return t;
}

Tensor Tensor::to(Device device) const {
  Tensor t = empty(shape_, dtype_, device, "tensor copy");
  t.copy_from(*this);
  return t;
}

void Tensor::copy_from(const Tensor& src) {
  ROOFLINE_ASSERT(src.shape_ == shape_ && src.dtype_ == dtype_, "copy between tensors of different shape or dtype");
  copy_bytes(raw(), device(), src.raw(), src.device(), nbytes());
}

std::vector<float> Tensor::to_floats() const {
  std::vector<float> v(static_cast<size_t>(numel()));
  ROOFLINE_ASSERT(dtype_ == DType::F32, "to_floats of a non-f32 tensor");
  copy_bytes(v.data(), Device::cpu(), raw(), device(), nbytes());
  return v;
}

std::vector<std::int32_t> Tensor::to_ints() const {
  std::vector<std::int32_t> v(static_cast<size_t>(numel()));
  ROOFLINE_ASSERT(dtype_ == DType::I32, "to_ints of a non-i32 tensor");
  copy_bytes(v.data(), Device::cpu(), raw(), device(), nbytes());
  return v;
}

void Tensor::fill(float value) {
  std::vector<float> v(static_cast<size_t>(numel()), value);
  copy_bytes(raw(), device(), v.data(), Device::cpu(), nbytes());
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) {
  if (bytes == 0) return;
  if (!dst_device.is_cuda() && !src_device.is_cuda()) {
    std::memmove(dst, src, bytes);
    return;
  }
  detail::cuda_copy_sync(dst, dst_device.is_cuda(), src, src_device.is_cuda(), bytes);
}

}  // namespace roofline::engine
