// IDX files (yann.lecun.com/exdb/mnist format): magic 0x00 0x00 <type>
// <ndims>, then ndims big-endian uint32 sizes, then the data. Everything is
// validated before it is trusted, and read as a stream: the header first,
// then the data the header announces, growing the array only as bytes arrive
// (a header that promises 2 GiB in a 20-byte file costs nothing), then a check
// that nothing follows. This reader is also the fuzz target.
#include <fmt/format.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <memory>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/engine/data.hpp"

namespace roofline::engine {

namespace {
constexpr size_t kMaxBytes = size_t(1) << 31;  // 2 GiB: far above any MNIST-style set
constexpr size_t kChunk = size_t(1) << 16;     // bytes read or inflated at a time

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | std::uint32_t(p[3]);
}

const char* kHint =
    "re-download the file (apt-get install --reinstall dataset-fashion-mnist) or pass --data DIR "
    "with good IDX files";

// Bytes in order; read() returns fewer than asked only at the end.
class Source {
 public:
  virtual ~Source() = default;
  virtual size_t read(std::uint8_t* dst, size_t n) = 0;
  // The bytes from the start to the end, when known without reading (a
  // regular file, memory); -1 otherwise.
  virtual long long size() const { return -1; }
};

class MemorySource : public Source {
 public:
  MemorySource(const std::uint8_t* p, size_t n) : p_(p), n_(n) {}
  size_t read(std::uint8_t* dst, size_t n) override {
    const size_t k = std::min(n, n_ - at_);
    if (k) std::memcpy(dst, p_ + at_, k);
    at_ += k;
    return k;
  }
  long long size() const override { return static_cast<long long>(n_); }

 private:
  const std::uint8_t* p_;
  size_t n_, at_ = 0;
};

class FileSource : public Source {
 public:
  explicit FileSource(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "rb")) {
    if (!f_) throw_input(fmt::format("cannot open {}", path), "check the path and its permissions");
    struct stat st {};
    if (::fstat(::fileno(f_), &st) == 0 && S_ISREG(st.st_mode)) size_ = static_cast<long long>(st.st_size);
  }
  ~FileSource() override { std::fclose(f_); }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  size_t read(std::uint8_t* dst, size_t n) override {
    size_t got = 0;
    while (got < n) {
      const size_t k = std::fread(dst + got, 1, n - got, f_);
      if (k == 0) break;
      got += k;
    }
    if (std::ferror(f_)) throw_input(fmt::format("cannot read {}", path_), "check the file and its permissions");
    return got;
  }
  long long size() const override { return size_; }

 private:
  std::string path_;
  std::FILE* f_;
  long long size_ = -1;
};

// The inflated bytes of a gzip stream read from `in`; the stream must end
// where `in` ends (no trailing bytes).
class GzipSource : public Source {
 public:
  GzipSource(Source& in, std::string source, const std::uint8_t* first, size_t first_n)
      : in_(in), source_(std::move(source)), buf_(std::make_unique<std::uint8_t[]>(kChunk)) {
    if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) throw Error(ErrorKind::Internal, "zlib inflateInit2 failed");
    std::memcpy(buf_.get(), first, first_n);  // the bytes already read to tell gzip from raw
    zs_.next_in = buf_.get();
    zs_.avail_in = static_cast<uInt>(first_n);
  }
  ~GzipSource() override { inflateEnd(&zs_); }
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  size_t read(std::uint8_t* dst, size_t n) override {
    size_t got = 0;
    while (got < n && !ended_) {
      if (zs_.avail_in == 0 && !in_ended_) {
        const size_t k = in_.read(buf_.get(), kChunk);
        if (k < kChunk) in_ended_ = true;
        zs_.next_in = buf_.get();
        zs_.avail_in = static_cast<uInt>(k);
      }
      const size_t want = std::min(n - got, kChunk);
      zs_.next_out = dst + got;
      zs_.avail_out = static_cast<uInt>(want);
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      got += want - zs_.avail_out;
      if (rc == Z_STREAM_END) {
        ended_ = true;
        std::uint8_t extra = 0;
        if (zs_.avail_in > 0 || (!in_ended_ && in_.read(&extra, 1) > 0))
          throw_input(fmt::format("{}: bytes after the end of the gzip data (corrupt or concatenated file?)", source_),
                      kHint);
      } else if (rc == Z_BUF_ERROR || (rc == Z_OK && zs_.avail_in == 0 && in_ended_ && zs_.avail_out != 0)) {
        throw_input(fmt::format("{}: truncated gzip data (the stream ends early)", source_), kHint);
      } else if (rc != Z_OK) {
        const std::string msg = zs_.msg ? zs_.msg : std::to_string(rc);
        throw_input(fmt::format("{}: corrupt gzip data ({})", source_, msg), kHint);
      }
    }
    return got;
  }

 private:
  Source& in_;
  std::string source_;
  std::unique_ptr<std::uint8_t[]> buf_;
  z_stream zs_{};
  bool in_ended_ = false, ended_ = false;
};

IdxArray read_idx(Source& raw, const std::string& source) {
  std::uint8_t head[4 + 4 * 4];
  const size_t got = raw.read(head, 2);
  std::unique_ptr<GzipSource> gz;
  Source* s = &raw;
  size_t have = got;
  if (got == 2 && head[0] == 0x1f && head[1] == 0x8b) {
    gz = std::make_unique<GzipSource>(raw, source, head, 2);
    s = gz.get();
    have = 0;
  }
  have += s->read(head + have, 4 - have);
  if (have < 4)
    throw_input(fmt::format("{}: not an IDX file ({} bytes, shorter than the 4-byte magic)", source, have), kHint);
  if (head[0] != 0 || head[1] != 0)
    throw_input(fmt::format("{}: bad IDX magic {:02x} {:02x} {:02x} {:02x} (expected 00 00 08 01 or 00 00 08 03)",
                            source, head[0], head[1], head[2], head[3]),
                kHint);
  if (head[2] != 0x08)
    throw_input(fmt::format("{}: IDX data type 0x{:02x} is not supported (MNIST files hold unsigned bytes, 0x08)",
                            source, head[2]),
                kHint);
  const int ndims = head[3];
  if (ndims < 1 || ndims > 4)
    throw_input(fmt::format("{}: IDX header says {} dimensions (MNIST files have 1 or 3)", source, ndims), kHint);
  const size_t header = 4 + 4 * static_cast<size_t>(ndims);
  have += s->read(head + 4, header - 4);
  if (have < header)
    throw_input(
        fmt::format("{}: truncated IDX header ({} bytes, {} needed for {} dimensions)", source, have, header, ndims),
        kHint);
  IdxArray a;
  size_t count = 1;
  for (int i = 0; i < ndims; ++i) {
    const std::uint32_t d = be32(head + 4 + 4 * i);
    if (d == 0) throw_input(fmt::format("{}: IDX dimension {} is 0 (an empty array)", source, i), kHint);
    if (count > kMaxBytes / d)
      throw_input(
          fmt::format("{}: IDX dimensions describe more than {} bytes", source, format_bytes(double(kMaxBytes))),
          kHint);
    count *= d;
    a.dims.push_back(d);
  }
  // A raw source of known size is checked against the header before any data
  // is read; otherwise the array grows with what arrives (doubling from 64
  // KiB), never to what the header claims before the bytes are there.
  if (!gz && raw.size() >= 0) {
    const auto total = static_cast<size_t>(raw.size());
    if (total < header + count)
      throw_input(fmt::format("{}: truncated IDX file: the header announces {} bytes of data, the file holds {}",
                              source, count, total - header),
                  kHint);
    if (total > header + count)
      throw_input(
          fmt::format("{}: {} unexpected bytes after the IDX data (corrupt file?)", source, total - header - count),
          kHint);
    a.data.reserve(count);
  }
  while (a.data.size() < count) {
    const size_t at = a.data.size();
    const size_t want = std::min(count - at, std::max(kChunk, at));  // doubling, from 64 KiB
    a.data.resize(at + want);
    const size_t k = s->read(a.data.data() + at, want);
    if (k < want) {
      a.data.resize(at + k);
      throw_input(fmt::format("{}: truncated IDX file: the header announces {} bytes of data, the file holds {}",
                              source, count, a.data.size()),
                  kHint);
    }
  }
  std::array<std::uint8_t, 4096> rest{};
  size_t extra = s->read(rest.data(), rest.size());
  if (extra > 0) {
    // Count what follows up to 64 KiB more; past that, say "at least".
    for (size_t k = extra; k == rest.size() && extra < 16 * rest.size();) extra += (k = s->read(rest.data(), rest.size()));
    const bool more = extra >= 16 * rest.size();
    throw_input(fmt::format("{}: {}{} unexpected bytes after the IDX data (corrupt file?)", source,
                            more ? "at least " : "", extra),
                kHint);
  }
  return a;
}

}  // namespace

IdxArray parse_idx(const std::uint8_t* bytes, size_t size, const std::string& source) {
  MemorySource s(bytes, size);
  return read_idx(s, source);
}

IdxArray read_idx_file(const std::string& path) {
  FileSource f(path);
  return read_idx(f, path);
}

}  // namespace roofline::engine
