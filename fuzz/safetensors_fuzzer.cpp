// libFuzzer target of the safetensors reader (SafetensorsFile::parse, the same
// code open() runs on a file's bytes): any bytes must either parse into tensors
// that tile the data buffer exactly and read back, or be refused with
// roofline::Error — never crash, hang, read out of bounds or allocate without
// limit. What parsed is written again with write_safetensors (to a file in
// /dev/shm, or /tmp) and must read back the same. Build and run: see
// docs/testing.md "Sanitizers and fuzzing".
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/engine/safetensors.hpp"

namespace {

using namespace roofline;
using namespace roofline::engine;

const std::string& scratch_path() {
  static const std::string p = std::string(::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") +
                               "/roofline-safetensors-fuzz-" + std::to_string(::getpid()) + ".safetensors";
  return p;
}

void check(bool ok) {
  if (!ok) std::abort();
}

// Every tensor of a parsed file: consistent with the header and readable.
std::vector<std::vector<std::uint8_t>> check_tensors(const SafetensorsFile& f, std::uint64_t data_size) {
  std::vector<std::vector<std::uint8_t>> bytes;
  std::uint64_t at = 0;
  for (const auto& t : f.tensors()) {
    const std::size_t elem = safetensors_dtype_size(t.dtype);
    check(elem > 0 && t.begin == at && t.end - t.begin == static_cast<std::uint64_t>(t.numel()) * elem);
    check(&f.info(t.name) == &t);
    at = t.end;
    bytes.push_back(f.read_bytes(t.name));
    check(bytes.back().size() == t.end - t.begin);
    if (t.dtype == "F32" || t.dtype == "BF16" || t.dtype == "F16" || t.dtype == "F64")
      check(f.read_f32(t.name).size() == static_cast<std::size_t>(t.numel()));
  }
  check(at == data_size);
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  std::optional<SafetensorsFile> f;
  try {
    f.emplace(SafetensorsFile::parse(std::vector<std::uint8_t>(data, data + size), "fuzz input"));
  } catch (const Error&) {
    return 0;  // refused with a message: what bad input should get
  }
  std::uint64_t header = 0;
  for (int i = 7; i >= 0; --i) header = header << 8 | data[i];
  const auto bytes = check_tensors(*f, size - 8 - header);
  for (const auto& t : f->tensors()) {
    try {
      f->read_i64(t.name);
    } catch (const Error& e) {
      check(e.kind() == ErrorKind::Unsupported || t.dtype == "U64");  // not an integer type, or past int64
    }
  }

  // Written again, the file reads back the same tensors and metadata.
  std::vector<SafetensorsTensor> out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto& t = f->tensors()[i];
    out.push_back({t.name, t.dtype, t.shape, bytes[i].data()});
  }
  try {
    write_safetensors(scratch_path(), out, f->metadata());
  } catch (const Error& e) {
    // Names the writer refuses but the format allows: the empty name.
    check(e.kind() == ErrorKind::Usage);
    return 0;
  }
  const SafetensorsFile g = SafetensorsFile::open(scratch_path());
  ::unlink(scratch_path().c_str());
  check(g.metadata() == f->metadata() && g.tensors().size() == f->tensors().size());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto& t = f->tensors()[i];
    check(g.info(t.name).dtype == t.dtype && g.info(t.name).shape == t.shape && g.read_bytes(t.name) == bytes[i]);
  }
  return 0;
}
