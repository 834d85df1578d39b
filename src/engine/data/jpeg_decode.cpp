// JPEG decoding to RGB with libjpeg-turbo's TurboJPEG API (2.1: tjDecompress2).
// Every failure is a status, never an exception or a crash: the loader skips
// and counts bad files (docs/engine.md "Data: ImageFolder").
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "roofline/core/error.hpp"
#include "roofline/engine/image_folder.hpp"

namespace roofline::engine {

namespace {

// Whether the segments before the first scan include Adobe's APP14 marker:
// Adobe's CMYK and YCCK JPEGs store inverted inks (0 = full ink), which PIL
// (and so torchvision) undoes when it sees the marker.
bool has_adobe_marker(const std::uint8_t* d, size_t n) {
  size_t i = 2;  // after SOI
  while (i + 4 <= n) {
    if (d[i] != 0xFF) return false;  // not at a marker: give up (libjpeg decides what the file is)
    std::uint8_t m = d[i + 1];
    if (m == 0xFF) {  // fill byte
      ++i;
      continue;
    }
    if (m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7)) {  // markers without a length
      i += 2;
      continue;
    }
    if (m == 0xDA || m == 0xD9) return false;  // start of scan, end of image
    size_t len = (static_cast<size_t>(d[i + 2]) << 8) | d[i + 3];
    if (len < 2) return false;
    if (m == 0xEE && len >= 14 && i + 4 + 5 <= n && std::memcmp(d + i + 4, "Adobe", 5) == 0) return true;
    i += 2 + len;
  }
  return false;
}

// Whether an end-of-image marker follows the last start-of-scan marker.
// Entropy-coded data cannot hold 0xFF 0xDA or 0xFF 0xD9 (its 0xFF bytes are
// followed by 0x00 or a restart marker), so a file cut short lacks it, while an
// EXIF thumbnail's own markers come before the main image's scans.
bool ends_after_last_scan(const std::uint8_t* d, size_t n) {
  size_t last_sos = 0;
  for (size_t i = 0; i + 1 < n; ++i)
    if (d[i] == 0xFF && d[i + 1] == 0xDA) last_sos = i;
  if (last_sos == 0) return false;
  for (size_t i = last_sos + 2; i + 1 < n; ++i)
    if (d[i] == 0xFF && d[i + 1] == 0xD9) return true;
  return false;
}

tjhandle tj(void* h) { return static_cast<tjhandle>(h); }

}  // namespace

const char* to_string(DecodeStatus s) {
  switch (s) {
    case DecodeStatus::Ok:
      return "ok";
    case DecodeStatus::Unreadable:
      return "unreadable";
    case DecodeStatus::NotJpeg:
      return "not a JPEG";
    case DecodeStatus::Corrupt:
      return "corrupt";
    case DecodeStatus::Truncated:
      return "truncated";
    case DecodeStatus::TooLarge:
      return "too large";
  }
  return "?";
}

JpegDecoder::JpegDecoder() : handle_(tjInitDecompress()) {
  if (!handle_)
    throw Error(ErrorKind::Internal, fmt::format("cannot start a TurboJPEG decompressor: {}", tjGetErrorStr2(nullptr)));
}

JpegDecoder::~JpegDecoder() {
  if (handle_) tjDestroy(tj(handle_));
}

DecodeStatus JpegDecoder::decode(const std::uint8_t* data, size_t size, RgbImage& out, std::string* detail) {
  auto fail = [&](DecodeStatus s, std::string why) {
    if (detail) *detail = std::move(why);
    // TurboJPEG 2.1 leaves a handle whose header read failed half-way in a
    // state where the next file's header reads as 0 x 0 pixels: a good file
    // after a bad one would be refused. A fresh handle after every failure.
    tjDestroy(tj(handle_));
    handle_ = tjInitDecompress();
    if (!handle_)
      throw Error(ErrorKind::Internal, fmt::format("cannot start a TurboJPEG decompressor: {}", tjGetErrorStr2(nullptr)));
    return s;
  };
  if (size < 4 || data[0] != 0xFF || data[1] != 0xD8)
    return fail(DecodeStatus::NotJpeg, "no JPEG start-of-image marker (FF D8) at the start");
  int w = 0, h = 0, subsamp = -1, colorspace = -1;
  if (tjDecompressHeader3(tj(handle_), data, static_cast<unsigned long>(size), &w, &h, &subsamp, &colorspace) != 0) {
    // TurboJPEG 2.1 refuses sampling factors it has no TJSAMP_* for (PIL's
    // subsampled CMYK files, odd encoders) after it has read the size and the
    // colour space; tjDecompress2 decodes such files, as libjpeg (and PIL) do.
    if (!(subsamp < 0 && w >= 1 && h >= 1 && colorspace >= 0))
      return fail(DecodeStatus::Corrupt, tjGetErrorStr2(tj(handle_)));
  }
  if (w < 1 || h < 1) return fail(DecodeStatus::Corrupt, fmt::format("image of {} x {} pixels", w, h));
  if (static_cast<std::int64_t>(w) * h > kMaxJpegPixels)
    return fail(DecodeStatus::TooLarge,
                fmt::format("{} x {} pixels, more than the {} Mpixel the reader takes", w, h, kMaxJpegPixels >> 20));
  const bool cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  // LIMITSCANS: a progressive file with an unreasonable number of scans is an
  // error (libjpeg-turbo's guard against crafted files that decode very slowly).
  const int flags = TJFLAG_LIMITSCANS;
  try {
    out.h = h;
    out.w = w;
    out.pixels.resize(static_cast<size_t>(h) * static_cast<size_t>(w) * 3);
    if (cmyk) cmyk_.resize(static_cast<size_t>(h) * static_cast<size_t>(w) * 4);
  } catch (const std::bad_alloc&) {
    return fail(DecodeStatus::TooLarge, fmt::format("{} x {} pixels: out of memory", w, h));
  }
  std::uint8_t* dst = cmyk ? cmyk_.data() : out.pixels.data();
  if (tjDecompress2(tj(handle_), data, static_cast<unsigned long>(size), dst, w, 0, h, cmyk ? TJPF_CMYK : TJPF_RGB,
                    flags) != 0) {
    std::string msg = tjGetErrorStr2(tj(handle_));
    if (tjGetErrorCode(tj(handle_)) != TJERR_WARNING) return fail(DecodeStatus::Corrupt, msg);
    // A warning: libjpeg-turbo decoded what it could (PIL would keep the
    // image). Only the first warning's text is kept; "Premature end of JPEG
    // file" is the data running out. Extraneous bytes between segments (a few
    // ImageNet files have them) leave the image intact; any other warning
    // (a bad Huffman code, a segment cut short) means damaged blocks.
    if (msg.find("Premature end") != std::string::npos || !ends_after_last_scan(data, size))
      return fail(DecodeStatus::Truncated, msg);
    if (msg.find("extraneous bytes") == std::string::npos) return fail(DecodeStatus::Corrupt, msg);
  }
  if (cmyk) {
    // PIL's CMYK to RGB: R = (255 − C)·(255 − K)/255 rounded, on inks where
    // 255 is full; Adobe files store 255 − ink, so there R = C·K/255.
    const bool inverted = has_adobe_marker(data, size);
    const size_t n = static_cast<size_t>(h) * static_cast<size_t>(w);
    const std::uint8_t* s = cmyk_.data();
    std::uint8_t* o = out.pixels.data();
    for (size_t i = 0; i < n; ++i, s += 4, o += 3) {
      unsigned k = inverted ? s[3] : 255u - s[3];
      for (int c = 0; c < 3; ++c) {
        unsigned v = inverted ? s[c] : 255u - s[c];
        o[c] = static_cast<std::uint8_t>((v * k + 127) / 255);
      }
    }
  }
  return DecodeStatus::Ok;
}

DecodeStatus JpegDecoder::decode_file(const std::string& path, RgbImage& out, std::string* detail) {
  auto fail = [&](DecodeStatus s, std::string why) {
    if (detail) *detail = std::move(why);
    // TurboJPEG 2.1 leaves a handle whose header read failed half-way in a
    // state where the next file's header reads as 0 x 0 pixels: a good file
    // after a bad one would be refused. A fresh handle after every failure.
    tjDestroy(tj(handle_));
    handle_ = tjInitDecompress();
    if (!handle_)
      throw Error(ErrorKind::Internal, fmt::format("cannot start a TurboJPEG decompressor: {}", tjGetErrorStr2(nullptr)));
    return s;
  };
  // O_NONBLOCK: a FIFO named x.jpg must not hang the reader (regular files ignore it).
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return fail(DecodeStatus::Unreadable, std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(DecodeStatus::Unreadable, std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail(DecodeStatus::Unreadable, "not a regular file");
  if (st.st_size > kMaxJpegFileBytes)
    return fail(DecodeStatus::TooLarge,
                fmt::format("{} bytes, more than the {} MiB the reader takes", st.st_size, kMaxJpegFileBytes >> 20));
  try {
    file_.resize(static_cast<size_t>(st.st_size));
  } catch (const std::bad_alloc&) {
    return fail(DecodeStatus::TooLarge, fmt::format("{} bytes: out of memory", st.st_size));
  }
  size_t got = 0;
  while (got < file_.size()) {
    ssize_t r = ::read(fd, file_.data() + got, file_.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return fail(DecodeStatus::Unreadable, std::strerror(errno));
    if (r == 0) break;  // shrank while being read
    got += static_cast<size_t>(r);
  }
  return decode(file_.data(), got, out, detail);
}

}  // namespace roofline::engine
