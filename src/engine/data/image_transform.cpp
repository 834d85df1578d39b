// torchvision's ImageNet augmentation on an RGB image: RandomResizedCrop +
// RandomHorizontalFlip for training, Resize + CenterCrop for evaluation, then
// ToTensor + Normalize, written as one fp32 sample in NCHW or NHWC.
//
// Resampling follows PIL's bilinear resize of 8-bit images (torchvision's
// transforms on PIL images, the ImageNet example's path): separable, the
// horizontal pass first, each output a triangle-weighted mean of the input
// pixels within `support` of its centre, the triangle widened by the shrink
// factor when shrinking (antialiasing), clipped at the image's edges and
// renormalised. The weights are computed in double, then summed in fixed point
// (22 fraction bits, rounded to nearest) and each pass rounded to uint8, which
// is PIL's arithmetic for 8-bit images.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/engine/image_folder.hpp"

namespace roofline::engine {

namespace {

// The taps of the outputs [o0, o0 + n) of one axis when `in` pixels are
// resampled to `out`: output k reads inputs [start[k], start[k] + count[k])
// with fixed-point weights w[k·max_taps ...] (kBits fraction bits).
constexpr int kBits = 22;  // 8-bit pixels times 22-bit weights, summed, stay within an int32
struct Taps {
  std::vector<std::int64_t> start, count;
  std::vector<std::int32_t> w;  // (n, max_taps)
  std::int64_t max_taps = 0;
};

void compute_taps(std::int64_t in, std::int64_t out, std::int64_t o0, std::int64_t n, Taps& t) {
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  const double filterscale = std::max(scale, 1.0);
  const double support = filterscale;  // the triangle's half-width (1) times the shrink factor
  t.max_taps = static_cast<std::int64_t>(std::ceil(support)) * 2 + 1;
  t.start.assign(static_cast<size_t>(n), 0);
  t.count.assign(static_cast<size_t>(n), 0);
  t.w.assign(static_cast<size_t>(n * t.max_taps), 0);
  std::vector<double> k(static_cast<size_t>(t.max_taps));
  for (std::int64_t i = 0; i < n; ++i) {
    const double center = (static_cast<double>(o0 + i) + 0.5) * scale;
    std::int64_t lo = std::max<std::int64_t>(0, static_cast<std::int64_t>(center - support + 0.5));
    std::int64_t hi = std::min<std::int64_t>(in, static_cast<std::int64_t>(center + support + 0.5));
    hi = std::min(hi, lo + t.max_taps);
    double sum = 0;
    for (std::int64_t x = lo; x < hi; ++x) {
      double d = std::abs((static_cast<double>(x) - center + 0.5) / filterscale);
      k[static_cast<size_t>(x - lo)] = d < 1.0 ? 1.0 - d : 0.0;
      sum += k[static_cast<size_t>(x - lo)];
    }
    if (!(sum > 0)) {  // cannot happen for in, out ≥ 1; the nearest pixel keeps it defined
      lo = std::clamp<std::int64_t>(static_cast<std::int64_t>(center), 0, in - 1);
      hi = lo + 1;
      k[0] = sum = 1.0;
    }
    t.start[static_cast<size_t>(i)] = lo;
    t.count[static_cast<size_t>(i)] = hi - lo;
    for (std::int64_t x = 0; x < hi - lo; ++x)  // the weights are ≥ 0: round half up
      t.w[static_cast<size_t>(i * t.max_taps + x)] =
          static_cast<std::int32_t>(k[static_cast<size_t>(x)] / sum * (1 << kBits) + 0.5);
  }
}

// A fixed-point sum (started at one half) to uint8: PIL's 8-bit rounding.
inline std::uint8_t to_u8(std::int32_t acc) {
  const std::int32_t v = acc >> kBits;
  return static_cast<std::uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}
constexpr std::int32_t kHalf = 1 << (kBits - 1);

struct Scratch {
  Taps xt, yt;
  std::vector<std::uint8_t> rows;  // (needed rows, cw, 3) after the horizontal pass
  std::vector<std::uint8_t> crop;  // (ch, cw, 3) after the vertical pass
  std::vector<std::int32_t> acc;   // (cw · 3)
};

// Resamples the region (top, left, rh, rw) of img as an image of oh x ow and
// keeps its outputs [oy, oy + ch) x [ox, ox + cw) in s.crop (ch, cw, 3).
void resample(const RgbImage& img, const CropBox& region, std::int64_t oh, std::int64_t ow, std::int64_t oy,
              std::int64_t ox, std::int64_t ch, std::int64_t cw, Scratch& s) {
  compute_taps(region.w, ow, ox, cw, s.xt);
  compute_taps(region.h, oh, oy, ch, s.yt);
  const std::int64_t r0 = s.yt.start.front();
  const std::int64_t r1 = s.yt.start.back() + s.yt.count.back();
  s.rows.resize(static_cast<size_t>((r1 - r0) * cw * 3));
  for (std::int64_t r = r0; r < r1; ++r) {
    const std::uint8_t* src = img.pixels.data() + ((region.top + r) * img.w + region.left) * 3;  // (rw, 3)
    std::uint8_t* dst = s.rows.data() + (r - r0) * cw * 3;                                       // (cw, 3)
    for (std::int64_t c = 0; c < cw; ++c) {
      const std::int32_t* w = s.xt.w.data() + c * s.xt.max_taps;
      const std::uint8_t* p = src + s.xt.start[static_cast<size_t>(c)] * 3;
      std::int32_t a0 = kHalf, a1 = kHalf, a2 = kHalf;
      for (std::int64_t t = 0; t < s.xt.count[static_cast<size_t>(c)]; ++t, p += 3) {
        a0 += w[t] * p[0];
        a1 += w[t] * p[1];
        a2 += w[t] * p[2];
      }
      dst[c * 3 + 0] = to_u8(a0);
      dst[c * 3 + 1] = to_u8(a1);
      dst[c * 3 + 2] = to_u8(a2);
    }
  }
  const std::int64_t row = cw * 3;
  s.crop.resize(static_cast<size_t>(ch * row));
  s.acc.resize(static_cast<size_t>(row));
  for (std::int64_t k = 0; k < ch; ++k) {
    std::fill(s.acc.begin(), s.acc.end(), kHalf);
    const std::int32_t* w = s.yt.w.data() + k * s.yt.max_taps;
    for (std::int64_t t = 0; t < s.yt.count[static_cast<size_t>(k)]; ++t) {
      const std::uint8_t* src = s.rows.data() + (s.yt.start[static_cast<size_t>(k)] + t - r0) * row;
      const std::int32_t wt = w[t];
      for (std::int64_t j = 0; j < row; ++j) s.acc[static_cast<size_t>(j)] += wt * src[j];
    }
    std::uint8_t* dst = s.crop.data() + k * row;
    for (std::int64_t j = 0; j < row; ++j) dst[j] = to_u8(s.acc[static_cast<size_t>(j)]);
  }
}

}  // namespace

void ImageTransform::validate() const {
  auto bad = [](const std::string& what) {
    throw Error(ErrorKind::Usage, "image transform: " + what,
                "torchvision's ImageNet recipe: crop 224, resize 256, scale (0.08, 1), ratio (3/4, 4/3), flip 0.5");
  };
  if (crop < 1 || crop > 8192) bad(fmt::format("crop {} is not within 1..8192", crop));
  if (!train && resize < crop) bad(fmt::format("resize {} is smaller than crop {}", resize, crop));
  if (!(scale_min > 0) || !(scale_min <= scale_max) || !std::isfinite(scale_max))
    bad(fmt::format("scale ({}, {}) is not a range of positive numbers", scale_min, scale_max));
  if (!(ratio_min > 0) || !(ratio_min <= ratio_max) || !std::isfinite(ratio_max))
    bad(fmt::format("ratio ({}, {}) is not a range of positive numbers", ratio_min, ratio_max));
  if (!(flip_p >= 0 && flip_p <= 1)) bad(fmt::format("flip probability {} is not within 0..1", flip_p));
  for (int c = 0; c < 3; ++c)
    if (!std::isfinite(mean[c]) || !(std[c] > 0) || !std::isfinite(std[c]))
      bad(fmt::format("channel {}: mean {} and std {} (std must be positive)", c, mean[c], std[c]));
}

CropBox random_resized_crop_box(std::int64_t h, std::int64_t w, const ImageTransform& t, Rng& rng) {
  const double area = static_cast<double>(h) * static_cast<double>(w);
  const double log_r0 = std::log(t.ratio_min), log_r1 = std::log(t.ratio_max);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * (t.scale_min + (t.scale_max - t.scale_min) * rng.uniform_double());
    const double aspect = std::exp(log_r0 + (log_r1 - log_r0) * rng.uniform_double());
    // Python's round(): halves to even, as nearbyint in the default rounding mode.
    const double cw = std::nearbyint(std::sqrt(target * aspect));
    const double chh = std::nearbyint(std::sqrt(target / aspect));
    if (cw > 0 && cw <= static_cast<double>(w) && chh > 0 && chh <= static_cast<double>(h)) {
      CropBox b;
      b.w = static_cast<std::int64_t>(cw);
      b.h = static_cast<std::int64_t>(chh);
      b.top = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(h - b.h + 1)));
      b.left = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(w - b.w + 1)));
      return b;
    }
  }
  // Fallback: the central crop whose aspect ratio is clamped into the range.
  CropBox b;
  const double in_ratio = static_cast<double>(w) / static_cast<double>(h);
  if (in_ratio < t.ratio_min) {
    b.w = w;
    b.h = static_cast<std::int64_t>(std::nearbyint(static_cast<double>(w) / t.ratio_min));
  } else if (in_ratio > t.ratio_max) {
    b.h = h;
    b.w = static_cast<std::int64_t>(std::nearbyint(static_cast<double>(h) * t.ratio_max));
  } else {
    b.w = w;
    b.h = h;
  }
  // torchvision can round to 0 here for ratio ranges far from the image's; one pixel keeps the crop defined.
  b.h = std::clamp<std::int64_t>(b.h, 1, h);
  b.w = std::clamp<std::int64_t>(b.w, 1, w);
  b.top = (h - b.h) / 2;
  b.left = (w - b.w) / 2;
  return b;
}

namespace {

void check_image(const RgbImage& img) {
  if (img.h < 1 || img.w < 1 || img.pixels.size() != static_cast<size_t>(img.h * img.w * 3))
    throw Error(ErrorKind::Internal,
                fmt::format("image transform: an image of {} x {} with {} bytes", img.h, img.w, img.pixels.size()));
}

// ToTensor then Normalize of s.crop (cs, cs, 3), in float32 and in
// torchvision's order of operations: (v / 255 − mean) / std, one rounding each.
void write_sample(const Scratch& s, const ImageTransform& t, bool flip, float* out) {
  float lut[3][256];
  for (int c = 0; c < 3; ++c)
    for (int v = 0; v < 256; ++v) {
      const float x = static_cast<float>(v) / 255.0f;
      lut[c][v] = (x - t.mean[c]) / t.std[c];
    }
  const std::int64_t cs = t.crop;
  const std::uint8_t* p = s.crop.data();  // (cs, cs, 3)
  const std::int64_t plane = cs * cs;
  for (std::int64_t y = 0; y < cs; ++y)
    for (std::int64_t x = 0; x < cs; ++x) {
      const std::uint8_t* px = p + (y * cs + (flip ? cs - 1 - x : x)) * 3;
      if (t.format == MemoryFormat::NCHW) {
        for (int c = 0; c < 3; ++c) out[c * plane + y * cs + x] = lut[c][px[c]];
      } else {
        float* o = out + (y * cs + x) * 3;
        for (int c = 0; c < 3; ++c) o[c] = lut[c][px[c]];
      }
    }
}

thread_local Scratch scratch;

}  // namespace

void transform_image_box(const RgbImage& img, const CropBox& box, bool flip, const ImageTransform& t, float* out) {
  check_image(img);
  if (box.h < 1 || box.w < 1 || box.top < 0 || box.left < 0 || box.top + box.h > img.h || box.left + box.w > img.w)
    throw Error(ErrorKind::Internal, fmt::format("image transform: crop box ({}, {}, {}, {}) outside a {} x {} image",
                                                 box.top, box.left, box.h, box.w, img.h, img.w));
  resample(img, box, t.crop, t.crop, 0, 0, t.crop, t.crop, scratch);
  write_sample(scratch, t, flip, out);
}

void transform_image(const RgbImage& img, const ImageTransform& t, Rng& rng, float* out) {
  check_image(img);
  if (t.train) {
    CropBox box = random_resized_crop_box(img.h, img.w, t, rng);
    const bool flip = rng.uniform() < t.flip_p;
    transform_image_box(img, box, flip, t, out);
    return;
  }
  // Resize(resize): the shorter side becomes `resize`, the longer
  // int(resize · long / short) (torchvision's arithmetic); then the centre
  // crop at int(round((size − crop) / 2)).
  const std::int64_t cs = t.crop;
  std::int64_t nh, nw;
  if (img.w <= img.h) {
    nw = t.resize;
    nh = static_cast<std::int64_t>(static_cast<double>(t.resize * img.h) / static_cast<double>(img.w));
  } else {
    nh = t.resize;
    nw = static_cast<std::int64_t>(static_cast<double>(t.resize * img.w) / static_cast<double>(img.h));
  }
  const auto top = static_cast<std::int64_t>(std::nearbyint(static_cast<double>(nh - cs) / 2.0));
  const auto left = static_cast<std::int64_t>(std::nearbyint(static_cast<double>(nw - cs) / 2.0));
  resample(img, CropBox{0, 0, img.h, img.w}, nh, nw, top, left, cs, cs, scratch);
  write_sample(scratch, t, false, out);
}

}  // namespace roofline::engine
