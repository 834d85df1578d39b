// Helpers of the ImageFolder tests (test_image_folder.cpp, test_image_loader.cpp):
// JPEGs encoded with TurboJPEG from generated images, images in memory,
// torchvision's normalisation of one value, and a small JPEG folder with every
// kind of bad file.
#pragma once
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/engine/image_folder.hpp"
#include "tests/support/cli.hpp"

namespace roofline::test::image_folder {

using namespace roofline::engine;

// A JPEG of w x h pixels in pixel format pf (TJPF_RGB, TJPF_GRAY or TJPF_CMYK).
inline std::string encode_jpeg(const std::vector<std::uint8_t>& px, int w, int h, int pf, int quality = 95) {
  tjhandle c = tjInitCompress();
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  int samp = pf == TJPF_GRAY ? TJSAMP_GRAY : TJSAMP_444;
  int rc = tjCompress2(c, px.data(), w, 0, h, pf, &buf, &size, samp, quality, 0);
  EXPECT_EQ(rc, 0) << tjGetErrorStr2(c);
  std::string out(reinterpret_cast<const char*>(buf), size);
  tjFree(buf);
  tjDestroy(c);
  return out;
}

// An RGB image whose pixel (y, x) is f(y, x, channel).
inline RgbImage make_image(std::int64_t h, std::int64_t w,
                           const std::function<int(std::int64_t, std::int64_t, int)>& f) {
  RgbImage img;
  img.h = h;
  img.w = w;
  img.pixels.resize(static_cast<size_t>(h * w * 3));
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        img.pixels[static_cast<size_t>((y * w + x) * 3 + c)] =
            static_cast<std::uint8_t>(std::clamp(f(y, x, c), 0, 255));
  return img;
}

inline std::string rgb_jpeg(std::int64_t h, std::int64_t w, int seed, int quality = 95) {
  RgbImage img = make_image(h, w, [&](std::int64_t y, std::int64_t x, int c) {
    return static_cast<int>((x * (3 + c) + y * (5 + seed) + seed * 40 + c * 70) % 256);
  });
  return encode_jpeg(img.pixels, static_cast<int>(w), static_cast<int>(h), TJPF_RGB, quality);
}

// ToTensor + Normalize of one value, as torchvision computes it in float32.
inline float normalised(int v, int c, const ImageTransform& t) {
  float x = static_cast<float>(v) / 255.0f;
  return (x - t.mean[c]) / t.std[c];
}

// The value of channel c at (y, x) of one sample.
inline float at(const std::vector<float>& s, const ImageTransform& t, std::int64_t y, std::int64_t x, int c) {
  std::int64_t cs = t.crop;
  return t.format == MemoryFormat::NCHW ? s[static_cast<size_t>(c * cs * cs + y * cs + x)]
                                        : s[static_cast<size_t>((y * cs + x) * 3 + c)];
}

inline std::vector<float> run_transform(const RgbImage& img, const ImageTransform& t, std::uint64_t seed = 1) {
  std::vector<float> out(static_cast<size_t>(t.sample_floats()), std::nanf(""));
  Rng rng(seed);
  transform_image(img, t, rng, out.data());
  return out;
}

// The Input error's message of f(), or "" when it does not throw.
inline std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input) << e.what();
    EXPECT_FALSE(e.hint().empty()) << e.what();
    return e.what();
  }
  return "";
}

inline void mkdirs(const std::string& p) { std::filesystem::create_directories(p); }

// A folder of 3 classes, 22 good JPEGs of different sizes (one grayscale, one
// CMYK) and 3 bad files: a corrupt one, a truncated one, a PNG named .jpg.
struct TestFolder {
  TempDir dir;
  std::string root = dir.path() + "/train";
  TestFolder() {
    const char* classes[] = {"cat", "dog", "eel"};
    const std::int64_t sizes[][2] = {{40, 30}, {30, 47}, {64, 48}, {33, 70}, {50, 50}, {29, 41}, {80, 36}};
    int seed = 0;
    for (const char* cls : classes) {
      mkdirs(root + "/" + cls);
      for (int i = 0; i < 7; ++i, ++seed) {
        auto [h, w] = sizes[(seed * 3) % 7];
        write_file(fmt(cls, i), rgb_jpeg(h, w, seed));
      }
    }
    std::vector<std::uint8_t> gray(45 * 38);
    for (size_t i = 0; i < gray.size(); ++i) gray[i] = static_cast<std::uint8_t>(i * 13);
    write_file(root + "/dog/gray.jpg", encode_jpeg(gray, 38, 45, TJPF_GRAY));
    std::string good = rgb_jpeg(60, 52, 99);
    std::string corrupt = good;
    for (size_t i = corrupt.size() / 3; i < corrupt.size() - 2; ++i) corrupt[i] = static_cast<char>(0xFF & (i * 37));
    write_file(root + "/cat/corrupt.jpg", corrupt);
    write_file(root + "/dog/truncated.jpg", good.substr(0, good.size() / 2));
    write_file(root + "/eel/png.jpg", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  }
  std::string fmt(const char* cls, int i) const { return root + "/" + cls + "/" + std::to_string(i) + ".jpg"; }
};

}  // namespace roofline::test::image_folder
