// libFuzzer target of the ImageFolder reader's per-file path: any bytes as
// one JPEG file, decoded (JpegDecoder::decode, what decode_file runs on the
// file's bytes) and, when they decode, put through the train and eval
// transforms. Must end in a DecodeStatus — never crash, hang, read out of
// bounds or allocate without limit — and a decoded image must make finite
// samples. The first byte picks the crop size and layout (the rest is the
// file); with its bit 3 set, the next four bytes give a height and width up to
// 1024 (at most 2^14 pixels) and the rest, repeated, the RGB pixels, so the
// transforms also meet shapes no small JPEG mutation reaches (libturbojpeg.a
// is not instrumented, so the fuzzer sees little of the decoder's paths).
// Build and run: docs/testing.md "Sanitizers and fuzzing".
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "roofline/engine/image_folder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  using namespace roofline::engine;
  if (size < 1) return 0;
  static JpegDecoder decoder;
  static RgbImage image;
  static std::vector<float> out;
  const std::uint8_t knob = data[0];
  ++data;
  --size;
  if (knob & 8) {
    if (size < 5) return 0;
    image.h = 1 + ((data[0] | (data[1] << 8)) % 1024);
    image.w = 1 + ((data[2] | (data[3] << 8)) % 1024);
    if (image.h * image.w > (1 << 14)) return 0;
    image.pixels.resize(static_cast<size_t>(image.h * image.w * 3));
    for (size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = data[4 + i % (size - 4)];
  } else if (decoder.decode(data, size, image) != DecodeStatus::Ok) {
    return 0;
  }
  if (image.h < 1 || image.w < 1 || image.h * image.w > kMaxJpegPixels ||
      image.pixels.size() != static_cast<size_t>(image.h * image.w * 3))
    std::abort();
  // Small crops: the instrumented resampler costs ~1 ms per 224 x 224 sample, and
  // the geometry does not depend on the size.
  static const std::int64_t crops[4] = {1, 7, 32, 97};
  ImageTransform t;
  t.crop = crops[knob & 3];
  t.resize = t.crop + (knob >> 4);
  t.format = (knob & 4) ? MemoryFormat::NHWC : MemoryFormat::NCHW;
  out.resize(static_cast<size_t>(t.sample_floats()));
  for (bool train : {true, false}) {
    t.train = train;
    Rng rng(knob);
    transform_image(image, t, rng, out.data());
    for (float v : out)
      if (!std::isfinite(v) || std::abs(v) > 3.0f) std::abort();  // (0 − 0.485)/0.229 … (1 − 0.406)/0.225
  }
  return 0;
}
