// The ImageFolder reader: scanning order and the folder errors, the JPEG
// decoder on every kind of file (grayscale, CMYK, corrupt, truncated, not a
// JPEG), and the transforms against values worked out here and PIL's own.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <turbojpeg.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <thread>

#include "roofline/core/error.hpp"
#include "roofline/engine/image_folder.hpp"
#include "tests/cpu/image_folder_fixtures.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;
using namespace roofline::engine;
using namespace roofline::test::image_folder;
using roofline::test::TempDir;
using roofline::test::write_file;

// ---------------------------------------------------------------------------
// Scanning
// ---------------------------------------------------------------------------
TEST(ImageFolder, ScansInTorchvisionOrder) {
  TempDir dir;
  std::string r = dir.path();
  // Classes sorted bytewise: ".hidden" < "C" < "a" < "a b" < "b" (torchvision keeps hidden folders).
  for (const char* c : {"b", "a", "C", "a b", ".hidden", "a/s", "a/s b", "a/s/t"}) mkdirs(r + "/" + c);
  for (const char* f : {"b/x.jpeg", "a/2.jpg", "a/10.jpg", "a/1.JPEG", "a/x.png", "a/notes.txt", "a/s/0.jpg",
                        "a/s b/0.jpg", "a/s/t/0.jpg", "C/z.Jpg", "a b/y.jpg", ".hidden/h.jpg", "loose.jpg"})
    write_file(r + "/" + f, "x");
  ImageFolder f = scan_image_folder(r);
  EXPECT_EQ(f.classes, (std::vector<std::string>{".hidden", "C", "a", "a b", "b"}));
  std::vector<std::string> rel;
  for (auto& p : f.paths) rel.push_back(p.substr(r.size() + 1));
  // Within a class: its own files by name, then its subfolders in the order of their paths
  // ("a/s" < "a/s b" < "a/s/t", since ' ' < '/').
  EXPECT_EQ(rel, (std::vector<std::string>{".hidden/h.jpg", "C/z.Jpg", "a/1.JPEG", "a/10.jpg", "a/2.jpg", "a/s/0.jpg",
                                           "a/s b/0.jpg", "a/s/t/0.jpg", "a b/y.jpg", "b/x.jpeg"}));
  EXPECT_EQ(f.labels, (std::vector<std::int32_t>{0, 1, 2, 2, 2, 2, 2, 2, 3, 4}));
  EXPECT_EQ(f.other_images, 1);  // a/x.png
}

TEST(ImageFolder, RefusesFoldersThatAreNotImageFolders) {
  TempDir dir;
  std::string r = dir.path();
  EXPECT_NE(input_error([&] { scan_image_folder(r + "/missing"); }).find("does not exist"), std::string::npos);
  write_file(r + "/file", "x");
  EXPECT_NE(input_error([&] { scan_image_folder(r + "/file"); }).find("is not a folder"), std::string::npos);
  mkdirs(r + "/empty");
  EXPECT_NE(input_error([&] { scan_image_folder(r + "/empty"); }).find("no class folders"), std::string::npos);
  mkdirs(r + "/loose");
  write_file(r + "/loose/a.jpg", "x");
  EXPECT_NE(input_error([&] { scan_image_folder(r + "/loose"); }).find("1 JPEG files of its own"), std::string::npos);
  mkdirs(r + "/noimg/a");
  mkdirs(r + "/noimg/b");
  write_file(r + "/noimg/a/x.png", "x");
  std::string m = input_error([&] { scan_image_folder(r + "/noimg"); });
  EXPECT_NE(m.find("no JPEG images"), std::string::npos) << m;
  EXPECT_NE(m.find("1 images of other formats"), std::string::npos) << m;
  mkdirs(r + "/some/a");
  mkdirs(r + "/some/b");
  mkdirs(r + "/some/c");
  write_file(r + "/some/b/x.jpg", "x");
  m = input_error([&] { scan_image_folder(r + "/some"); });
  EXPECT_NE(m.find("2 of its 3 class folders have no JPEG images: a, c"), std::string::npos) << m;
}

TEST(ImageFolder, ClassCheckNamesTheDifferingClasses) {
  ImageFolder train, val, same;
  train.root = "train";
  train.classes = {"a", "b", "c"};
  val.root = "val";
  val.classes = {"a", "c", "d", "e"};
  same.classes = train.classes;
  EXPECT_NO_THROW(check_same_classes(train, same));
  std::string m = input_error([&] { check_same_classes(train, val); });
  EXPECT_NE(m.find("only in train: b"), std::string::npos) << m;
  EXPECT_NE(m.find("only in val: d, e"), std::string::npos) << m;
}

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------
TEST(JpegDecode, DecodesRgbGrayAndCmyk) {
  JpegDecoder d;
  RgbImage img;
  std::string rgb = rgb_jpeg(37, 53, 3, 100);
  ASSERT_EQ(d.decode(reinterpret_cast<const std::uint8_t*>(rgb.data()), rgb.size(), img), DecodeStatus::Ok);
  EXPECT_EQ(img.h, 37);
  EXPECT_EQ(img.w, 53);
  // Close to what was encoded (quality 100, 4:4:4).
  RgbImage ref = make_image(37, 53, [](std::int64_t y, std::int64_t x, int c) {
    return static_cast<int>((x * (3 + c) + y * 8 + 3 * 40 + c * 70) % 256);
  });
  int worst = 0;
  for (size_t i = 0; i < ref.pixels.size(); ++i) worst = std::max(worst, std::abs(ref.pixels[i] - img.pixels[i]));
  EXPECT_LE(worst, 40);  // sharp wrap-around edges ring a little even at quality 100

  std::vector<std::uint8_t> gray(20 * 30);
  for (size_t i = 0; i < gray.size(); ++i) gray[i] = static_cast<std::uint8_t>(60 + i % 7);
  std::string g = encode_jpeg(gray, 30, 20, TJPF_GRAY, 100);
  ASSERT_EQ(d.decode(reinterpret_cast<const std::uint8_t*>(g.data()), g.size(), img), DecodeStatus::Ok);
  ASSERT_EQ(img.pixels.size(), 20u * 30u * 3u);
  for (size_t i = 0; i < 20 * 30; ++i) {
    EXPECT_EQ(img.pixels[i * 3], img.pixels[i * 3 + 1]);
    EXPECT_EQ(img.pixels[i * 3], img.pixels[i * 3 + 2]);
    EXPECT_NEAR(img.pixels[i * 3], gray[i], 2);
  }

  // CMYK: TurboJPEG writes YCCK with Adobe's marker, so the stored inks are
  // inverted and R = C·K/255 on the stored values.
  const int cmyk[4] = {200, 100, 50, 220};
  std::vector<std::uint8_t> k(16 * 24 * 4);
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(cmyk[i % 4]);
  std::string kj = encode_jpeg(k, 24, 16, TJPF_CMYK, 100);
  ASSERT_EQ(d.decode(reinterpret_cast<const std::uint8_t*>(kj.data()), kj.size(), img), DecodeStatus::Ok);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(img.pixels[static_cast<size_t>(c)], cmyk[c] * cmyk[3] / 255.0, 3.0) << c;
}

TEST(JpegDecode, ReportsEveryKindOfBadFile) {
  JpegDecoder d;
  RgbImage img;
  std::string why;
  auto decode = [&](const std::string& s) {
    why.clear();
    return d.decode(reinterpret_cast<const std::uint8_t*>(s.data()), s.size(), img, &why);
  };
  std::string good = rgb_jpeg(64, 48, 1);
  EXPECT_EQ(decode(""), DecodeStatus::NotJpeg);
  EXPECT_EQ(decode(std::string("\x89PNG\r\n\x1a\n", 8)), DecodeStatus::NotJpeg);
  EXPECT_EQ(decode(good.substr(0, 20)), DecodeStatus::Corrupt);  // the header is cut
  // A header cut after its tables: TurboJPEG 2.1 fails half-way through it,
  // and the same decoder must still read the next, good file.
  for (size_t cut : {size_t{300}, good.find("\xFF\xDA")}) {
    EXPECT_EQ(decode(good.substr(0, cut)), DecodeStatus::Corrupt) << cut;
    EXPECT_EQ(decode(good), DecodeStatus::Ok) << "after a header cut at " << cut << ": " << why;
    EXPECT_EQ(img.h, 64);
  }
  EXPECT_EQ(decode(good.substr(0, good.size() / 2)), DecodeStatus::Truncated);
  EXPECT_NE(why.find("Premature end"), std::string::npos) << why;
  EXPECT_EQ(decode(good.substr(0, good.size() - 2)), DecodeStatus::Truncated);  // only the EOI marker missing
  std::string garbage = good.substr(0, 2) + std::string(300, '\x42');
  EXPECT_EQ(decode(garbage), DecodeStatus::Corrupt);
  EXPECT_FALSE(why.empty());
  // Extraneous bytes before the end marker: a warning only; the image is kept, as PIL keeps it.
  std::string extra = good.substr(0, good.size() - 2) + "\x01\x02" + good.substr(good.size() - 2);
  EXPECT_EQ(decode(extra), DecodeStatus::Ok) << why;
  // Trailing bytes after the end marker are ignored.
  EXPECT_EQ(decode(good + "trailing"), DecodeStatus::Ok) << why;
  // A frame header claiming 10000 x 10000 pixels: refused before anything is allocated.
  std::string big = good;
  size_t sof = big.find("\xFF\xC0");
  ASSERT_NE(sof, std::string::npos);
  big[sof + 5] = big[sof + 7] = static_cast<char>(10000 >> 8);
  big[sof + 6] = big[sof + 8] = static_cast<char>(10000 & 0xFF);
  EXPECT_EQ(decode(big), DecodeStatus::TooLarge);

  TempDir dir;
  EXPECT_EQ(d.decode_file(dir.file("missing.jpg"), img, &why), DecodeStatus::Unreadable);
  EXPECT_EQ(d.decode_file(dir.path(), img, &why), DecodeStatus::Unreadable);  // a folder
  ASSERT_EQ(::mkfifo(dir.file("fifo.jpg").c_str(), 0600), 0);
  EXPECT_EQ(d.decode_file(dir.file("fifo.jpg"), img, &why), DecodeStatus::Unreadable);  // does not hang
  EXPECT_EQ(why, "not a regular file");
  write_file(dir.file("good.jpg"), good);
  EXPECT_EQ(d.decode_file(dir.file("good.jpg"), img, &why), DecodeStatus::Ok);
}

// ---------------------------------------------------------------------------
// Transforms
// ---------------------------------------------------------------------------
TEST(ImageTransform, SolidColourIsExactlyTheNormalisedColour) {
  const int rgb[3] = {201, 17, 99};
  RgbImage img = make_image(300, 411, [&](std::int64_t, std::int64_t, int c) { return rgb[c]; });
  for (bool train : {true, false})
    for (auto format : {MemoryFormat::NCHW, MemoryFormat::NHWC}) {
      ImageTransform t;
      t.train = train;
      t.format = format;
      for (std::uint64_t seed : {1, 2, 3}) {
        std::vector<float> s = run_transform(img, t, seed);
        for (std::int64_t y = 0; y < t.crop; y += 7)
          for (std::int64_t x = 0; x < t.crop; x += 5)
            for (int c = 0; c < 3; ++c) ASSERT_EQ(at(s, t, y, x, c), normalised(rgb[c], c, t)) << y << " " << x;
      }
    }
  // Through a JPEG: a solid colour decodes to one colour, which comes out exactly.
  std::string j = encode_jpeg(img.pixels, 411, 300, TJPF_RGB, 90);
  JpegDecoder d;
  RgbImage dec;
  ASSERT_EQ(d.decode(reinterpret_cast<const std::uint8_t*>(j.data()), j.size(), dec), DecodeStatus::Ok);
  for (size_t i = 3; i < dec.pixels.size(); ++i) ASSERT_EQ(dec.pixels[i], dec.pixels[i % 3]);
  ImageTransform t;
  std::vector<float> s = run_transform(dec, t);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(at(s, t, 100, 100, c), normalised(dec.pixels[static_cast<size_t>(c)], c, t));
}

TEST(ImageTransform, EvalCropsTheCentreOfTheResizedImage) {
  ImageTransform t;
  t.train = false;
  auto pattern = [](std::int64_t y, std::int64_t x, int c) {
    return static_cast<int>((y * 7 + x * 13 + c * 50) % 251);
  };
  // The shorter side already 256: no resampling, the crop at int(round((size − 224) / 2)), halves to even.
  struct Case {
    std::int64_t h, w, top, left;
  };
  for (Case k : {Case{256, 320, 16, 48}, Case{320, 256, 48, 16}, Case{341, 256, 58, 16}, Case{256, 343, 16, 60}}) {
    RgbImage img = make_image(k.h, k.w, pattern);
    for (auto format : {MemoryFormat::NCHW, MemoryFormat::NHWC}) {
      t.format = format;
      std::vector<float> s = run_transform(img, t);
      for (std::int64_t y = 0; y < 224; ++y)
        for (std::int64_t x = 0; x < 224; ++x)
          for (int c = 0; c < 3; ++c)
            ASSERT_EQ(at(s, t, y, x, c), normalised(pattern(y + k.top, x + k.left, c), c, t))
                << k.h << "x" << k.w << " at " << y << "," << x;
    }
  }
  // Halving: 512 x 512 → 256 x 256, crop at 16. Output k of the resized row is the
  // 1/8, 3/8, 3/8, 1/8 mean of inputs 2k−1 .. 2k+2 (antialiased bilinear), so a
  // ramp R = 2(x − 64) comes out as 2(2k + 0.5 − 64) = 4x − 63 where the taps stay on it.
  RgbImage ramp = make_image(512, 512, [](std::int64_t y, std::int64_t x, int c) {
    return c == 0 ? static_cast<int>(2 * (x - 64)) : c == 1 ? static_cast<int>(2 * (y - 64)) : 77;
  });
  t.format = MemoryFormat::NCHW;
  std::vector<float> s = run_transform(ramp, t);
  for (std::int64_t y = 17; y <= 78; ++y)
    for (std::int64_t x = 17; x <= 78; ++x) {
      ASSERT_EQ(at(s, t, y, x, 0), normalised(static_cast<int>(4 * x - 63), 0, t)) << y << "," << x;
      ASSERT_EQ(at(s, t, y, x, 1), normalised(static_cast<int>(4 * y - 63), 1, t)) << y << "," << x;
      ASSERT_EQ(at(s, t, y, x, 2), normalised(77, 2, t));
    }
}

TEST(ImageTransform, TrainResizesTheCropAndFlips) {
  // scale (1, 1) and the image's own ratio: the crop is the whole image, halved to 224.
  RgbImage ramp = make_image(448, 448, [](std::int64_t y, std::int64_t x, int c) {
    return c == 0 ? static_cast<int>(2 * (x - 64)) : c == 1 ? static_cast<int>(2 * (y - 64)) : 5;
  });
  ImageTransform t;
  t.scale_min = t.scale_max = 1.0;
  t.ratio_min = t.ratio_max = 1.0;
  t.flip_p = 0.0f;
  std::vector<float> s = run_transform(ramp, t);
  for (std::int64_t y = 33; y <= 94; ++y)
    for (std::int64_t x = 33; x <= 94; ++x) {
      ASSERT_EQ(at(s, t, y, x, 0), normalised(static_cast<int>(4 * x - 127), 0, t)) << y << "," << x;
      ASSERT_EQ(at(s, t, y, x, 1), normalised(static_cast<int>(4 * y - 127), 1, t)) << y << "," << x;
    }
  t.flip_p = 1.0f;
  std::vector<float> f = run_transform(ramp, t);
  for (std::int64_t y = 0; y < 224; ++y)
    for (std::int64_t x = 0; x < 224; ++x)
      for (int c = 0; c < 3; ++c) ASSERT_EQ(at(f, t, y, x, c), at(s, t, y, 223 - x, c));

  // flip_p 0.5: the same crop as flip_p 0 (drawn first), mirrored about half the time.
  RgbImage img =
      make_image(40, 56, [](std::int64_t y, std::int64_t x, int c) { return static_cast<int>(y * 5 + x * 3 + c); });
  ImageTransform a, b;
  a.crop = b.crop = 16;
  b.flip_p = 0.0f;
  int flipped = 0;
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    std::vector<float> sa = run_transform(img, a, seed), sb = run_transform(img, b, seed);
    bool same = sa == sb, mirrored = true;
    for (std::int64_t y = 0; y < 16 && mirrored; ++y)
      for (std::int64_t x = 0; x < 16; ++x)
        if (at(sa, a, y, x, 0) != at(sb, b, y, 15 - x, 0)) mirrored = false;
    ASSERT_TRUE(same || mirrored) << seed;
    flipped += same ? 0 : 1;
  }
  EXPECT_GT(flipped, 160);
  EXPECT_LT(flipped, 240);
}

// torchvision on PIL images, replayed: tests/data/image_folder/make_pil_reference.py wrote PIL's
// decode, Resize(40) + CenterCrop(32) and a given crop resized to 32 for three JPEGs (RGB 4:2:0,
// PIL's subsampled CMYK, grayscale). Decode and both transforms agree to the bit.
TEST(ImageTransform, MatchesPilBitForBit) {
  const std::string dir = std::string(ROOFLINE_TEST_DATA) + "/image_folder/";
  struct Case {
    const char* name;
    CropBox box;
  };
  for (Case k : {Case{"photo", {7, 11, 61, 83}}, Case{"cmyk", {3, 20, 40, 29}}, Case{"gray", {30, 2, 33, 45}}}) {
    SCOPED_TRACE(k.name);
    JpegDecoder d;
    RgbImage img;
    ASSERT_EQ(d.decode_file(dir + k.name + ".jpg", img), DecodeStatus::Ok);
    std::string decoded = roofline::test::read_file(dir + k.name + ".decoded.rgb");
    ASSERT_EQ(decoded.size(), img.pixels.size());
    EXPECT_EQ(std::memcmp(decoded.data(), img.pixels.data(), decoded.size()), 0);
    ImageTransform t;
    t.crop = 32;
    t.resize = 40;
    t.format = MemoryFormat::NHWC;
    for (bool train : {false, true}) {
      std::string want = roofline::test::read_file(dir + k.name + (train ? ".box.rgb" : ".eval.rgb"));
      ASSERT_EQ(want.size(), 32u * 32u * 3u);
      std::vector<float> got(static_cast<size_t>(t.sample_floats()));
      t.train = train;
      Rng unused(0);
      if (train)
        transform_image_box(img, k.box, false, t, got.data());
      else
        transform_image(img, t, unused, got.data());
      int mismatches = 0;
      for (size_t i = 0; i < got.size(); ++i)
        mismatches += got[i] != normalised(static_cast<std::uint8_t>(want[i]), static_cast<int>(i % 3), t);
      EXPECT_EQ(mismatches, 0) << (train ? "crop box" : "eval");
    }
  }
}

TEST(ImageTransform, RandomResizedCropBoxAsTorchvision) {
  ImageTransform t;
  Rng rng(7);
  for (int i = 0; i < 2000; ++i) {
    CropBox b = random_resized_crop_box(375, 500, t, rng);
    ASSERT_GE(b.top, 0);
    ASSERT_GE(b.left, 0);
    ASSERT_GE(b.h, 1);
    ASSERT_GE(b.w, 1);
    ASSERT_LE(b.top + b.h, 375);
    ASSERT_LE(b.left + b.w, 500);
    // Rounding the sides to whole pixels moves area and ratio a little.
    double area = static_cast<double>(b.h * b.w) / (375.0 * 500.0), ratio = static_cast<double>(b.w) / b.h;
    ASSERT_GE(area, 0.08 * 0.9);
    ASSERT_LE(area, 1.0);
    ASSERT_GE(ratio, 0.75 * 0.9);
    ASSERT_LE(ratio, 4.0 / 3.0 * 1.1);
  }
  // Images too elongated for any try: the centre clamped to the ratio range
  // (w = round(h · 4/3) on a wide image, h = round(w / (3/4)) on a tall one).
  CropBox wide = random_resized_crop_box(10, 1000, t, rng);
  EXPECT_EQ(wide.h, 10);
  EXPECT_EQ(wide.w, 13);
  EXPECT_EQ(wide.top, 0);
  EXPECT_EQ(wide.left, 493);
  CropBox tall = random_resized_crop_box(1000, 10, t, rng);
  EXPECT_EQ(tall.w, 10);
  EXPECT_EQ(tall.h, 13);
  EXPECT_EQ(tall.top, 493);
  EXPECT_EQ(tall.left, 0);
  // Same generator, same box.
  Rng r1(5), r2(5);
  CropBox b1 = random_resized_crop_box(375, 500, t, r1), b2 = random_resized_crop_box(375, 500, t, r2);
  EXPECT_EQ(b1.top, b2.top);
  EXPECT_EQ(b1.left, b2.left);
  EXPECT_EQ(b1.h, b2.h);
  EXPECT_EQ(b1.w, b2.w);
}

TEST(ImageTransform, NhwcIsNchwTransposed) {
  RgbImage img = make_image(
      97, 131, [](std::int64_t y, std::int64_t x, int c) { return static_cast<int>((y * y + 3 * x + 90 * c) % 256); });
  for (bool train : {true, false}) {
    ImageTransform n, h;
    n.train = h.train = train;
    n.crop = h.crop = 48;
    n.resize = h.resize = 60;
    h.format = MemoryFormat::NHWC;
    std::vector<float> a = run_transform(img, n, 11), b = run_transform(img, h, 11);
    for (std::int64_t y = 0; y < 48; ++y)
      for (std::int64_t x = 0; x < 48; ++x)
        for (int c = 0; c < 3; ++c)
          ASSERT_EQ(a[static_cast<size_t>(c * 48 * 48 + y * 48 + x)], b[static_cast<size_t>((y * 48 + x) * 3 + c)]);
  }
}

TEST(ImageTransform, RefusesBadSettings) {
  auto usage = [](const ImageTransform& t) {
    try {
      t.validate();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage);
      return std::string(e.what());
    }
    return std::string();
  };
  ImageTransform t;
  EXPECT_EQ(usage(t), "");
  t.train = false;
  t.resize = 200;
  EXPECT_NE(usage(t).find("resize 200 is smaller than crop 224"), std::string::npos);
  t = ImageTransform{};
  t.scale_min = 0;
  EXPECT_NE(usage(t).find("scale"), std::string::npos);
  t = ImageTransform{};
  t.ratio_min = 2;
  EXPECT_NE(usage(t).find("ratio"), std::string::npos);
  t = ImageTransform{};
  t.std[1] = 0;
  EXPECT_NE(usage(t).find("channel 1"), std::string::npos);
  t = ImageTransform{};
  t.crop = 0;
  EXPECT_NE(usage(t).find("crop 0"), std::string::npos);
}
