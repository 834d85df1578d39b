// safetensors reader and writer (format: github.com/huggingface/safetensors,
// "Format"). The reader checks, before any tensor is read: the 8-byte header
// length (within the file and the format's 100 MB limit), a header that starts
// with '{' and is a JSON object without repeated keys, every entry's dtype,
// shape and data_offsets (types, known dtype, no negative or overflowing
// shape, a byte range that holds exactly numel · dtype size bytes inside the
// data buffer), an optional "__metadata__" of strings, and that the tensors
// cover the data buffer exactly, without overlaps or holes, as the format
// requires. Every failure is an Error(Input) naming the file and the tensor.
#include "roofline/engine/safetensors.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/engine/half.hpp"

namespace roofline::engine {

static_assert(std::endian::native == std::endian::little,
              "the safetensors reader and writer copy little-endian data as is");

namespace {

using json = nlohmann::json;

constexpr std::uint64_t kMaxHeader = 100'000'000;  // the reference implementation's limit

const char* kHint =
    "the file is damaged or not a safetensors file: write it again (safetensors.torch.save_file, "
    "or roofline's own writer)";

struct DtypeSize {
  const char* name;
  std::size_t size;
};
// The byte-sized dtypes of the format. F4 and F6_* pack several values in a
// byte; this reader refuses them by name.
constexpr DtypeSize kDtypes[] = {
    {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"F8_E8M0", 1},
    {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},     {"U32", 4},
    {"F32", 4},  {"F64", 8}, {"I64", 8}, {"U64", 8},     {"C64", 8},
};
bool is_sub_byte(std::string_view d) { return d == "F4" || d == "F6_E2M3" || d == "F6_E3M2"; }

// A name as messages show it: quoted, control characters escaped, long names cut.
std::string q(std::string_view name) { return fmt::format("'{}'", shorten(printable(name), 120)); }

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::vector<std::string> p;
  for (auto d : s) p.push_back(std::to_string(d));
  return fmt::format("[{}]", join(p, ", "));
}

// numel and byte count of a shape, false on overflow (or a byte count past
// int64, which no file offset can hold).
bool shape_bytes(const std::vector<std::int64_t>& shape, std::size_t elem, std::uint64_t& numel, std::uint64_t& bytes) {
  numel = 1;
  for (auto d : shape)
    if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(d), &numel)) return false;
  if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(elem), &bytes)) return false;
  return numel <= std::uint64_t(std::numeric_limits<std::int64_t>::max()) &&
         bytes <= std::uint64_t(std::numeric_limits<std::int64_t>::max());
}

// A non-negative JSON integer that fits int64, or false.
bool json_index(const json& v, std::uint64_t& out) {
  if (v.is_number_unsigned()) {
    out = v.get<std::uint64_t>();
  } else if (v.is_number_integer()) {
    auto s = v.get<std::int64_t>();
    if (s < 0) return false;
    out = static_cast<std::uint64_t>(s);
  } else {
    return false;
  }
  return out <= std::uint64_t(std::numeric_limits<std::int64_t>::max());
}

std::uint64_t le64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

std::size_t safetensors_dtype_size(std::string_view dtype) {
  for (const auto& d : kDtypes)
    if (dtype == d.name) return d.size;
  return 0;
}

std::int64_t SafetensorsInfo::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;  // validated by the reader: no overflow
  return n;
}

// ---------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.source_ = path;
  const std::string src = q(path);
  std::FILE* raw = std::fopen(path.c_str(), "rb");
  if (!raw)
    throw_input(fmt::format("cannot open safetensors file {}: {}", src, std::strerror(errno)),
                "check the path and its permissions");
  f.file_.reset(raw, std::fclose);
  struct stat st {};
  if (::fstat(::fileno(raw), &st) != 0 || !S_ISREG(st.st_mode))
    throw_input(fmt::format("{} is not a regular file", src), "pass the path of a .safetensors file");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < 8)
    throw_input(fmt::format("{}: {} bytes, shorter than the 8-byte header length of a safetensors file", src, size),
                kHint);
  std::uint8_t len[8];
  if (::pread(::fileno(raw), len, 8, 0) != 8)
    throw_input(fmt::format("cannot read {}: {}", src, std::strerror(errno)), "check the file and its permissions");
  const std::uint64_t n = le64(len);
  if (n > size - 8)
    throw_input(fmt::format("{}: the header length ({} bytes) runs past the end of the file ({} bytes)", src, n, size),
                kHint);
  if (n > kMaxHeader)
    throw_input(fmt::format("{}: the header length ({} bytes) is above the format's limit of 100 MB", src, n), kHint);
  std::vector<std::uint8_t> header(n);
  std::uint64_t got = 0;
  while (got < n) {
    const ssize_t k = ::pread(::fileno(raw), header.data() + got, n - got, static_cast<off_t>(8 + got));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0)
      throw_input(fmt::format("cannot read the header of {}: {}", src, k < 0 ? std::strerror(errno) : "file ended"),
                  "check the file and its permissions");
    got += static_cast<std::uint64_t>(k);
  }
  f.data_start_ = 8 + n;
  f.parse_header(header.data(), n, size - 8 - n);
  return f;
}

SafetensorsFile SafetensorsFile::parse(std::vector<std::uint8_t> bytes, const std::string& label) {
  SafetensorsFile f;
  f.source_ = label;
  const std::string src = q(label);
  const std::uint64_t size = bytes.size();
  if (size < 8)
    throw_input(fmt::format("{}: {} bytes, shorter than the 8-byte header length of a safetensors file", src, size),
                kHint);
  const std::uint64_t n = le64(bytes.data());
  if (n > size - 8)
    throw_input(fmt::format("{}: the header length ({} bytes) runs past the end of the file ({} bytes)", src, n, size),
                kHint);
  if (n > kMaxHeader)
    throw_input(fmt::format("{}: the header length ({} bytes) is above the format's limit of 100 MB", src, n), kHint);
  f.memory_ = std::move(bytes);
  f.data_start_ = 8 + n;
  f.parse_header(f.memory_.data() + 8, n, size - 8 - n);
  return f;
}

void SafetensorsFile::parse_header(const std::uint8_t* header, std::uint64_t n, std::uint64_t data_size) {
  const std::string src = q(source_);
  data_size_ = data_size;
  auto fail = [&](const std::string& what) { throw_input(fmt::format("{}: {}", src, what), kHint); };
  auto fail_tensor = [&](const std::string& name, const std::string& what) {
    throw_input(fmt::format("{}: tensor {}: {}", src, q(name), what), kHint);
  };
  if (n == 0 || header[0] != '{') fail("the header does not start with '{' (not a safetensors file?)");

  // nlohmann keeps the last of repeated keys; the format forbids them, so the
  // parser's callback records the first repeat at the top level (tensor
  // names) and inside an entry or the metadata.
  std::set<std::string> top, inner;
  std::string owner, repeated, repeated_owner;
  bool repeat_top = false;
  auto watch = [&](int depth, json::parse_event_t ev, json& parsed) {
    if (ev == json::parse_event_t::object_start && depth == 1) inner.clear();
    if (ev == json::parse_event_t::key && depth <= 2 && repeated.empty()) {
      const auto& k = parsed.get_ref<const std::string&>();
      if (depth == 1) {
        owner = k;
        if (!top.insert(k).second) repeated = k, repeat_top = true;
      } else if (!inner.insert(k).second) {
        repeated = k, repeated_owner = owner;
      }
    }
    return true;
  };
  json j;
  try {
    const char* text = reinterpret_cast<const char*>(header);
    j = json::parse(text, text + n, watch);
  } catch (const json::exception& e) {
    // nlohmann's "[json.exception.parse_error.101] " prefix off; the token it
    // quotes can be as long as the header.
    std::string_view why = e.what();
    if (auto k = why.find("] "); k != std::string_view::npos) why.remove_prefix(k + 2);
    fail(fmt::format("the header is not valid JSON ({})", shorten(printable(why), 200)));
  }
  if (!repeated.empty()) {
    if (repeat_top) fail(fmt::format("tensor {} appears twice in the header", q(repeated)));
    fail_tensor(repeated_owner, fmt::format("key {} appears twice in its entry", q(repeated)));
  }
  if (!j.is_object()) fail("the header is not a JSON object");

  for (auto item = j.cbegin(); item != j.cend(); ++item) {
    // Named, not a structured binding: clang 14 cannot capture those in lambdas.
    const std::string& name = item.key();
    const json& v = item.value();
    if (name == "__metadata__") {
      if (!v.is_object()) fail("\"__metadata__\" is not an object of strings");
      for (const auto& [k, s] : v.items()) {
        if (!s.is_string()) fail(fmt::format("\"__metadata__\" entry {} is not a string", q(k)));
        metadata_[k] = s.get<std::string>();
      }
      continue;
    }
    if (!v.is_object()) fail_tensor(name, "its entry is not an object");
    auto field = [&](const char* key) -> const json& {
      auto it = v.find(key);
      if (it == v.end()) fail_tensor(name, fmt::format("its entry has no \"{}\"", key));
      return *it;
    };
    SafetensorsInfo t;
    t.name = name;
    const json& dt = field("dtype");
    const json& sh = field("shape");
    const json& off = field("data_offsets");
    if (!dt.is_string()) fail_tensor(name, "\"dtype\" is not a string");
    t.dtype = dt.get<std::string>();
    const std::size_t elem = safetensors_dtype_size(t.dtype);
    if (elem == 0) {
      if (is_sub_byte(t.dtype))
        throw Error(ErrorKind::Unsupported,
                    fmt::format("{}: tensor {}: dtype {} packs values below a byte, which this reader does not read",
                                src, q(name), t.dtype),
                    "save the tensor as F32, BF16 or F16");
      fail_tensor(name, fmt::format("unknown dtype {} (known: F64, F32, BF16, F16, F8_*, C64, I64, I32, I16, I8, "
                                    "U64, U32, U16, U8, BOOL)",
                                    q(t.dtype)));
    }
    if (!sh.is_array()) fail_tensor(name, "\"shape\" is not an array");
    for (const auto& d : sh) {
      std::uint64_t x = 0;
      if (!json_index(d, x))
        fail_tensor(name, fmt::format("\"shape\" {} holds {}, not a dimension (a non-negative integer)",
                                      shorten(sh.dump(), 80), shorten(d.dump(), 40)));
      t.shape.push_back(static_cast<std::int64_t>(x));
    }
    if (!off.is_array() || off.size() != 2 || !json_index(off[0], t.begin) || !json_index(off[1], t.end))
      fail_tensor(name,
                  fmt::format("\"data_offsets\" {} is not a pair of non-negative integers", shorten(off.dump(), 80)));
    std::uint64_t numel = 0, bytes = 0;
    if (!shape_bytes(t.shape, elem, numel, bytes))
      fail_tensor(name, fmt::format("shape {} holds more elements than any file can", shape_text(t.shape)));
    if (t.end < t.begin) fail_tensor(name, fmt::format("data_offsets [{}, {}] end before they begin", t.begin, t.end));
    if (t.end - t.begin != bytes)
      fail_tensor(name, fmt::format("data_offsets [{}, {}] hold {} bytes, but {} {} needs {}", t.begin, t.end,
                                    t.end - t.begin, t.dtype, shape_text(t.shape), bytes));
    if (t.end > data_size)
      fail_tensor(name, fmt::format("data_offsets [{}, {}] run past the end of the data buffer ({} bytes)", t.begin,
                                    t.end, data_size));
    tensors_.push_back(std::move(t));
  }

  // The tensors must tile the data buffer: sorted by offset, each begins
  // where the previous one ends, and the last ends at the end of the file.
  std::sort(tensors_.begin(), tensors_.end(), [](const SafetensorsInfo& a, const SafetensorsInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t at = 0;
  const SafetensorsInfo* prev = nullptr;
  for (const auto& t : tensors_) {
    if (t.begin < at)
      fail_tensor(t.name, fmt::format("bytes [{}, {}] overlap tensor {} (bytes [{}, {}])", t.begin, t.end,
                                      q(prev->name), prev->begin, prev->end));
    if (t.begin > at)
      fail_tensor(t.name, fmt::format("{} bytes before it (from byte {}) belong to no tensor: the format allows no "
                                      "holes in the data buffer",
                                      t.begin - at, at));
    at = t.end;
    prev = &t;
  }
  if (at != data_size)
    fail(fmt::format("{} bytes at the end of the data buffer (from byte {}{}) belong to no tensor", data_size - at, at,
                     prev ? ", after tensor " + q(prev->name) : std::string()));
  for (std::size_t i = 0; i < tensors_.size(); ++i) index_[tensors_[i].name] = i;
}

std::vector<std::string> SafetensorsFile::names() const {
  std::vector<std::string> out;
  out.reserve(tensors_.size());
  for (const auto& t : tensors_) out.push_back(t.name);
  return out;
}

const SafetensorsInfo& SafetensorsFile::info(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end())
    throw_input(fmt::format("{} holds no tensor {} ({} tensors)", q(source_), q(name), tensors_.size()),
                "check the tensor's name against the file's (python -c \"import safetensors; "
                "print(safetensors.safe_open(PATH, 'np').keys())\")");
  return tensors_[it->second];
}

void SafetensorsFile::read_range(const SafetensorsInfo& t, std::uint8_t* dst) const {
  const std::uint64_t n = t.end - t.begin;
  if (n == 0) return;
  if (!file_) {
    std::memcpy(dst, memory_.data() + data_start_ + t.begin, n);
    return;
  }
  std::uint64_t got = 0;
  const int fd = ::fileno(file_.get());
  while (got < n) {
    const ssize_t k = ::pread(fd, dst + got, n - got, static_cast<off_t>(data_start_ + t.begin + got));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0)
      throw_input(fmt::format("{}: cannot read tensor {}: {}", q(source_), q(t.name),
                              k < 0 ? std::strerror(errno) : "the file is shorter than when it was opened"),
                  "check that no other program writes the file while it is read");
    got += static_cast<std::uint64_t>(k);
  }
}

std::vector<std::uint8_t> SafetensorsFile::read_bytes(const std::string& name) const {
  const auto& t = info(name);
  std::vector<std::uint8_t> out(t.end - t.begin);
  read_range(t, out.data());
  return out;
}

void SafetensorsFile::read_f32(const std::string& name, float* out, std::int64_t count) const {
  const auto& t = info(name);
  if (count != t.numel())
    throw Error(ErrorKind::Input,
                fmt::format("{}: tensor {} has {} elements ({} {}), {} expected", q(source_), q(name), t.numel(),
                            t.dtype, shape_text(t.shape), count),
                "check that the checkpoint was written for this model");
  const std::size_t n = static_cast<std::size_t>(count);
  if (t.dtype == "F32") {
    read_range(t, reinterpret_cast<std::uint8_t*>(out));
    return;
  }
  if (t.dtype != "BF16" && t.dtype != "F16" && t.dtype != "F64")
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: tensor {} is {}; only F32, BF16, F16 and F64 tensors read as fp32", q(source_),
                            q(name), t.dtype),
                "save the tensor as a floating-point type (tensor.float() in PyTorch)");
  std::vector<std::uint8_t> raw(t.end - t.begin);
  read_range(t, raw.data());
  if (t.dtype == "F64") {
    for (std::size_t i = 0; i < n; ++i) {
      double d;
      std::memcpy(&d, raw.data() + 8 * i, 8);
      out[i] = static_cast<float>(d);
    }
    return;
  }
  const bool bf16 = t.dtype == "BF16";
  for (std::size_t i = 0; i < n; ++i) {
    std::uint16_t h;
    std::memcpy(&h, raw.data() + 2 * i, 2);
    out[i] = bf16 ? float_from_bf16(h) : float_from_f16(h);
  }
}

std::vector<float> SafetensorsFile::read_f32(const std::string& name) const {
  const auto& t = info(name);
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  read_f32(name, out.data(), t.numel());
  return out;
}

std::vector<std::int64_t> SafetensorsFile::read_i64(const std::string& name) const {
  const auto& t = info(name);
  const std::string& d = t.dtype;
  const bool is_int = d == "BOOL" || d == "U8" || d == "I8" || d == "I16" || d == "U16" || d == "I32" || d == "U32" ||
                      d == "I64" || d == "U64";
  if (!is_int)
    throw Error(ErrorKind::Unsupported,
                fmt::format("{}: tensor {} is {}; only integer and BOOL tensors read as int64", q(source_), q(name), d),
                "read it with read_f32, or save it as an integer type");
  std::vector<std::uint8_t> raw(t.end - t.begin);
  read_range(t, raw.data());
  const std::size_t n = static_cast<std::size_t>(t.numel());
  const std::size_t w = safetensors_dtype_size(d);
  std::vector<std::int64_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t* p = raw.data() + w * i;
    std::uint64_t u = 0;
    std::memcpy(&u, p, w);  // little-endian: the low bytes
    const bool is_signed = d[0] == 'I';
    if (is_signed && w < 8 && (u >> (8 * w - 1)) & 1u) u |= ~std::uint64_t(0) << (8 * w);  // sign-extend
    if (d == "BOOL") u = u != 0;
    if (d == "U64" && u > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
      throw_input(
          fmt::format("{}: tensor {}: U64 value {} at element {} does not fit int64", q(source_), q(name), u, i),
          "save the tensor as I64");
    out[i] = static_cast<std::int64_t>(u);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------

namespace {

// Writes all of `n` bytes, false on failure (errno set).
bool write_all(int fd, const void* p, std::size_t n) {
  const auto* b = static_cast<const std::uint8_t*>(p);
  while (n > 0) {
    const ssize_t k = ::write(fd, b, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    b += k;
    n -= static_cast<std::size_t>(k);
  }
  return true;
}

}  // namespace

void write_safetensors(const std::string& path, const std::vector<SafetensorsTensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  // Arguments first: nothing is created for a call that cannot succeed.
  std::set<std::string> seen;
  std::vector<std::uint64_t> sizes;
  for (const auto& t : tensors) {
    if (t.name.empty() || t.name == "__metadata__")
      throw_usage(fmt::format("cannot write a tensor named {} to {}", q(t.name), q(path)),
                  "name every tensor, and not \"__metadata__\" (the format reserves it)");
    if (!seen.insert(t.name).second)
      throw_usage(fmt::format("tensor {} is given twice for {}", q(t.name), q(path)), "give each tensor once");
    const std::size_t elem = safetensors_dtype_size(t.dtype);
    if (elem == 0)
      throw_usage(fmt::format("tensor {}: unknown safetensors dtype {}", q(t.name), q(t.dtype)),
                  "use F32, BF16, F16, F64, I64, I32, U8, BOOL or another byte-sized dtype of the format");
    for (auto d : t.shape)
      if (d < 0)
        throw_usage(fmt::format("tensor {}: negative dimension in shape {}", q(t.name), shape_text(t.shape)),
                    "pass the tensor's real shape");
    std::uint64_t numel = 0, bytes = 0;
    if (!shape_bytes(t.shape, elem, numel, bytes))
      throw_usage(fmt::format("tensor {}: shape {} is too large", q(t.name), shape_text(t.shape)),
                  "pass the tensor's real shape");
    if (bytes > 0 && t.data == nullptr)
      throw_usage(fmt::format("tensor {}: no data for {} bytes", q(t.name), bytes), "pass the tensor's data");
    sizes.push_back(bytes);
  }
  // Largest elements first (stable): with the header padded to 8 bytes, every
  // tensor then starts at a multiple of its element size.
  std::vector<std::size_t> order(tensors.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return safetensors_dtype_size(tensors[a].dtype) > safetensors_dtype_size(tensors[b].dtype);
  });

  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t at = 0;
  for (std::size_t i : order) {
    const auto& t = tensors[i];
    nlohmann::ordered_json e;
    e["dtype"] = t.dtype;
    e["shape"] = t.shape;
    e["data_offsets"] = {at, at + sizes[i]};
    header[t.name] = std::move(e);
    at += sizes[i];
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception&) {
    throw_usage(fmt::format("a tensor name or metadata string for {} is not valid UTF-8", q(path)),
                "use UTF-8 names (the format's header is JSON)");
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  const std::uint64_t n = text.size();

  static std::atomic<unsigned> counter{0};
  const std::string tmp = fmt::format("{}.tmp-{}-{}", path, ::getpid(), counter++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    throw_input(fmt::format("cannot write {}: {}", q(path), std::strerror(errno)),
                "check that the folder exists and is writable");
  // errno of the first failure; 0 while all went well.
  int err = 0;
  auto step = [&](bool ok) {
    if (!ok && err == 0) err = errno ? errno : EIO;
  };
  step(write_all(fd, &n, 8) && write_all(fd, text.data(), text.size()));
  for (std::size_t k = 0; err == 0 && k < order.size(); ++k)
    step(write_all(fd, tensors[order[k]].data, sizes[order[k]]));
  if (err == 0) step(::fsync(fd) == 0);
  step(::close(fd) == 0);
  if (err == 0) step(::rename(tmp.c_str(), path.c_str()) == 0);
  if (err != 0) {
    ::unlink(tmp.c_str());
    throw_input(fmt::format("cannot write {}: {}", q(path), std::strerror(err)),
                "check that the folder is writable and has space for the file");
  }
}

// ---------------------------------------------------------------------------
// Checkpoint matching
// ---------------------------------------------------------------------------

std::string CheckpointMismatch::summary(std::size_t limit) const {
  std::size_t shown = 0, hidden = 0;
  std::vector<std::string> parts;
  auto category = [&](std::size_t count, const char* what, auto item) {
    if (count == 0) return;
    std::vector<std::string> items;
    for (std::size_t i = 0; i < count; ++i) {
      if (shown < limit) {
        items.push_back(item(i));
        ++shown;
      } else {
        ++hidden;
      }
    }
    parts.push_back(items.empty() ? fmt::format("{} {}", count, what)
                                  : fmt::format("{} {} ({})", count, what, join(items, ", ")));
  };
  category(missing.size(), "missing", [&](std::size_t i) { return q(missing[i]); });
  category(unexpected.size(), "unexpected", [&](std::size_t i) { return q(unexpected[i]); });
  category(misshapen.size(), "misshapen", [&](std::size_t i) {
    const auto& m = misshapen[i];
    return fmt::format("{}: expected {}, found {}", q(m.name), shape_text(m.expected), shape_text(m.found));
  });
  std::string s = join(parts, "; ");
  if (hidden) s += fmt::format("; and {} more", hidden);
  return s;
}

CheckpointMismatch match_checkpoint(const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected) {
  CheckpointMismatch m;
  std::set<std::string> names;
  for (const auto& e : expected) {
    names.insert(e.name);
    if (!file.contains(e.name)) {
      if (!e.optional) m.missing.push_back(e.name);
      continue;
    }
    const auto& found = file.info(e.name).shape;
    if (found != e.shape) m.misshapen.push_back({e.name, e.shape, found});
  }
  for (const auto& t : file.tensors())
    if (!names.count(t.name)) m.unexpected.push_back(t.name);
  return m;
}

void check_checkpoint(const SafetensorsFile& file, const std::vector<ExpectedTensor>& expected,
                      const std::string& model) {
  const CheckpointMismatch m = match_checkpoint(file, expected);
  if (m.ok()) return;
  throw_input(fmt::format("{} does not hold {}'s parameters: {}", q(file.source()), model, m.summary()),
              fmt::format("use a checkpoint of {} with torchvision's parameter names and shapes "
                          "(safetensors.torch.save_file(model.state_dict(), PATH))",
                          model));
}

}  // namespace roofline::engine
