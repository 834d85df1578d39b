// IDX files (yann.lecun.com/exdb/mnist format): magic 0x00 0x00 <type>
// <ndims>, then ndims big-endian uint32 sizes, then the data. Everything is
// validated before it is trusted: this parser is also the fuzz target.
#include <fmt/format.h>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/engine/data.hpp"

namespace roofline::engine {

namespace {
constexpr size_t kMaxBytes = size_t(1) << 31;  // 2 GiB: far above any MNIST-style set

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | std::uint32_t(p[3]);
}

const char* kHint =
    "re-download the file (apt-get install --reinstall dataset-fashion-mnist) or pass --data DIR "
    "with good IDX files";
}  // namespace

IdxArray parse_idx(const std::uint8_t* bytes, size_t size, const std::string& source) {
  if (size < 4)
    throw_input(fmt::format("{}: not an IDX file ({} bytes, shorter than the 4-byte magic)", source, size), kHint);
  if (bytes[0] != 0 || bytes[1] != 0)
    throw_input(fmt::format("{}: bad IDX magic {:02x} {:02x} {:02x} {:02x} (expected 00 00 08 01 or 00 00 08 03)",
                            source, bytes[0], bytes[1], bytes[2], bytes[3]),
                kHint);
  if (bytes[2] != 0x08)
    throw_input(fmt::format("{}: IDX data type 0x{:02x} is not supported (MNIST files hold unsigned bytes, 0x08)",
                            source, bytes[2]),
                kHint);
  const int ndims = bytes[3];
  if (ndims < 1 || ndims > 4)
    throw_input(fmt::format("{}: IDX header says {} dimensions (MNIST files have 1 or 3)", source, ndims), kHint);
  const size_t header = 4 + 4 * static_cast<size_t>(ndims);
  if (size < header)
    throw_input(
        fmt::format("{}: truncated IDX header ({} bytes, {} needed for {} dimensions)", source, size, header, ndims),
        kHint);
  IdxArray a;
  size_t count = 1;
  for (int i = 0; i < ndims; ++i) {
    const std::uint32_t d = be32(bytes + 4 + 4 * i);
    if (d == 0) throw_input(fmt::format("{}: IDX dimension {} is 0 (an empty array)", source, i), kHint);
    if (count > kMaxBytes / d)
      throw_input(
          fmt::format("{}: IDX dimensions describe more than {} bytes", source, format_bytes(double(kMaxBytes))),
          kHint);
    count *= d;
    a.dims.push_back(d);
  }
  const size_t have = size - header;
  if (have < count)
    throw_input(fmt::format("{}: truncated IDX file: the header announces {} bytes of data, the file holds {}", source,
                            count, have),
                kHint);
  if (have > count)
    throw_input(fmt::format("{}: {} unexpected bytes after the IDX data (corrupt file?)", source, have - count), kHint);
  a.data.assign(bytes + header, bytes + header + count);
  return a;
}

std::vector<std::uint8_t> gunzip(const std::uint8_t* bytes, size_t size, const std::string& source, size_t max_bytes) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw Error(ErrorKind::Internal, "zlib inflateInit2 failed");
  std::vector<std::uint8_t> out;
  zs.next_in = const_cast<Bytef*>(bytes);
  zs.avail_in = static_cast<uInt>(size);
  std::uint8_t buf[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = buf;
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      std::string msg = zs.msg ? zs.msg : "";
      inflateEnd(&zs);
      if (rc == Z_BUF_ERROR) throw_input(fmt::format("{}: truncated gzip data (the stream ends early)", source), kHint);
      throw_input(fmt::format("{}: corrupt gzip data ({})", source, msg.empty() ? std::to_string(rc) : msg), kHint);
    }
    out.insert(out.end(), buf, buf + (sizeof buf - zs.avail_out));
    if (out.size() > max_bytes) {
      inflateEnd(&zs);
      throw_input(fmt::format("{}: gzip data expands past {}", source, format_bytes(double(max_bytes))), kHint);
    }
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      throw_input(fmt::format("{}: truncated gzip data (the stream ends early)", source), kHint);
    }
  }
  inflateEnd(&zs);
  return out;
}

std::vector<std::uint8_t> read_maybe_gzip(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_input(fmt::format("cannot open {}", path), "check the path and its permissions");
  std::vector<std::uint8_t> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw_input(fmt::format("cannot read {}", path), "check the file and its permissions");
  if (raw.size() >= 2 && raw[0] == 0x1f && raw[1] == 0x8b) return gunzip(raw.data(), raw.size(), path);
  return raw;
}

IdxArray read_idx_file(const std::string& path) {
  std::vector<std::uint8_t> bytes = read_maybe_gzip(path);
  return parse_idx(bytes.data(), bytes.size(), path);
}

}  // namespace roofline::engine
