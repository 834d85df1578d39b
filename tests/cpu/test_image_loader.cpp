// The ImageFolder loader: the same batches whatever the thread count, bad
// files skipped, counted and replaced, the caller's memory, the per-sample
// generators; synthetic batches; and (disabled) the decode throughput. The
// tests make their own JPEG folders (image_folder_fixtures.hpp).
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
// The loader
// ---------------------------------------------------------------------------
namespace {
LoaderConfig small_config(bool train, int threads, int prefetch) {
  LoaderConfig c;
  c.batch = 5;
  c.transform.train = train;
  c.transform.crop = 24;
  c.transform.resize = 28;
  c.threads = threads;
  c.prefetch = prefetch;
  c.seed = 1234;
  return c;
}
struct Drawn {
  std::vector<float> x;
  std::vector<std::int32_t> y;
  LoaderStats stats;
};
Drawn draw(const ImageFolder& f, const LoaderConfig& c, int batches) {
  ImageFolderLoader loader(f, c);
  Drawn d;
  const size_t sx = static_cast<size_t>(c.batch * c.transform.sample_floats());
  d.x.resize(sx * static_cast<size_t>(batches));
  d.y.resize(static_cast<size_t>(c.batch * batches));
  for (int b = 0; b < batches; ++b) loader.next(d.x.data() + b * sx, d.y.data() + b * c.batch);
  d.stats = loader.stats();
  return d;
}
}  // namespace

TEST(ImageFolderLoader, SameSeedSameBatchesWhateverTheThreads) {
  TestFolder tf;
  ImageFolder f = scan_image_folder(tf.root);
  ASSERT_EQ(f.size(), 25);  // 21 + gray + 3 bad
  for (bool train : {true, false}) {
    // 12 batches of 5: 60 samples, over two epochs of 25 and into a third.
    Drawn one = draw(f, small_config(train, 1, 1), 12);
    for (auto [threads, prefetch] : {std::pair{3, 3}, std::pair{2, 1}, std::pair{4, 2}}) {
      Drawn many = draw(f, small_config(train, threads, prefetch), 12);
      EXPECT_EQ(one.y, many.y) << threads;
      ASSERT_EQ(one.x.size(), many.x.size());
      EXPECT_TRUE(std::equal(one.x.begin(), one.x.end(), many.x.begin())) << threads << " threads, train " << train;
    }
    for (float v : one.x) ASSERT_TRUE(std::isfinite(v));
    for (auto y : one.y) ASSERT_TRUE(y >= 0 && y < 3);
    EXPECT_EQ(one.stats.bad_files, 3);
    EXPECT_GE(one.stats.skipped, 3);
    EXPECT_EQ(one.stats.bad_examples.size(), 3u);
    EXPECT_EQ(one.stats.batches, 12);
    EXPECT_GE(one.stats.decoded, 60);
    EXPECT_GT(one.stats.busy_s, 0);
    EXPECT_GT(one.stats.capacity_images_per_s(), 0);
  }
  // A different seed, a different order.
  LoaderConfig c = small_config(true, 2, 2);
  Drawn a = draw(f, c, 4);
  c.seed = 99;
  Drawn b = draw(f, c, 4);
  EXPECT_NE(a.y, b.y);
}

TEST(ImageFolderLoader, FillsABadFilesSlotWithTheNextGoodFile) {
  TempDir dir;
  std::string r = dir.path();
  // Folder order: a/0 a/1 b/0(bad) b/1(bad) b/2 b/3(bad) c/0 c/1.
  for (const char* c : {"a", "b", "c"}) mkdirs(r + "/" + c);
  for (const char* p : {"a/0.jpg", "a/1.jpg", "b/2.jpg", "c/0.jpg", "c/1.jpg"})
    write_file(r + "/" + p, rgb_jpeg(30, 40, p[0]));
  for (const char* p : {"b/0.jpg", "b/1.jpg", "b/3.jpg"}) write_file(r + "/" + p, "not a jpeg");
  ImageFolder f = scan_image_folder(r);
  LoaderConfig c = small_config(false, 2, 2);
  c.batch = 4;
  c.shuffle = false;
  ImageFolderLoader loader(f, c);
  // Batch 0 = positions 0-3: slots 2 and 3 bad; round 1 gives them positions 4 (b/2, good) and
  // 5 (b/3, bad); round 2 gives slot 3 position 6 (c/0).
  ImageFolderLoader::Batch b0 = loader.next_view();
  EXPECT_EQ(std::vector<std::int32_t>(b0.y, b0.y + 4), (std::vector<std::int32_t>{0, 0, 1, 2}));
  // Every slot holds the transform of the file it names.
  JpegDecoder d;
  RgbImage img;
  auto expect_sample = [&](const float* got, const std::string& path) {
    ASSERT_EQ(d.decode_file(path, img), DecodeStatus::Ok);
    Rng unused(0);
    std::vector<float> want(static_cast<size_t>(c.transform.sample_floats()));
    transform_image(img, c.transform, unused, want.data());
    EXPECT_TRUE(std::equal(want.begin(), want.end(), got)) << path;
  };
  const std::int64_t sf = c.transform.sample_floats();
  expect_sample(b0.x + 0 * sf, r + "/a/0.jpg");
  expect_sample(b0.x + 2 * sf, r + "/b/2.jpg");
  expect_sample(b0.x + 3 * sf, r + "/c/0.jpg");
  // Batch 1 = positions 4-7: slot 1 (b/3) bad, filled from position 8 = the next epoch's a/0.
  ImageFolderLoader::Batch b1 = loader.next_view();
  EXPECT_EQ(std::vector<std::int32_t>(b1.y, b1.y + 4), (std::vector<std::int32_t>{1, 0, 2, 2}));
  expect_sample(b1.x + 1 * sf, r + "/a/0.jpg");
  EXPECT_EQ(b1.index, 1);
  LoaderStats s = loader.stats();
  EXPECT_EQ(s.bad_files, 3);
  EXPECT_GE(s.skipped, 4);  // b/3 came up twice
  ASSERT_FALSE(s.bad_examples.empty());
  EXPECT_NE(s.bad_examples[0].find("not a JPEG"), std::string::npos) << s.bad_examples[0];
}

TEST(ImageFolderLoader, AFolderOfOnlyBadFilesIsAnError) {
  TempDir dir;
  mkdirs(dir.path() + "/a");
  mkdirs(dir.path() + "/b");
  write_file(dir.path() + "/a/x.jpg", "");
  write_file(dir.path() + "/b/y.jpg", std::string(1, '\xFF') + "\xD8garbage");
  ImageFolder f = scan_image_folder(dir.path());
  ImageFolderLoader loader(f, small_config(true, 2, 1));
  std::vector<float> x(static_cast<size_t>(5 * 3 * 24 * 24));
  std::vector<std::int32_t> y(5);
  std::string m = input_error([&] { loader.next(x.data(), y.data()); });
  EXPECT_NE(m.find("none of the 2 JPEG files"), std::string::npos) << m;
  // And again, not a hang.
  EXPECT_FALSE(input_error([&] { loader.next(x.data(), y.data()); }).empty());
}

TEST(ImageFolderLoader, UsesTheCallersMemoryAndRefusesBadSettings) {
  TestFolder tf;
  ImageFolder f = scan_image_folder(tf.root);
  int allocs = 0, frees = 0;
  {
    LoaderConfig c = small_config(true, 2, 3);
    c.alloc = [&](size_t n) {
      ++allocs;
      return ::operator new(n);
    };
    c.free = [&](void* p) {
      ++frees;
      ::operator delete(p);
    };
    ImageFolderLoader loader(f, c);
    ImageFolderLoader::Batch b = loader.next_view();
    EXPECT_EQ(b.index, 0);
    // Destroyed while batches are in flight.
  }
  EXPECT_EQ(allocs, 4);  // prefetch + 1
  EXPECT_EQ(frees, 4);
  // The caller's allocator failing on the second buffer: a Device error, the first buffer freed.
  allocs = frees = 0;
  {
    LoaderConfig c = small_config(true, 2, 3);
    c.alloc = [&](size_t n) { return ++allocs == 2 ? nullptr : ::operator new(n); };
    c.free = [&](void* p) {
      ++frees;
      ::operator delete(p);
    };
    try {
      ImageFolderLoader loader(f, c);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Device);
      EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(allocs, 2);
  EXPECT_EQ(frees, 1);
  auto usage = [&](LoaderConfig c) {
    try {
      ImageFolderLoader l(f, c);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage);
      return true;
    }
    return false;
  };
  LoaderConfig c = small_config(true, 1, 1);
  c.batch = 0;
  EXPECT_TRUE(usage(c));
  c = small_config(true, 1, 1);
  c.prefetch = 0;
  EXPECT_TRUE(usage(c));
  c = small_config(false, 1, 1);
  c.transform.resize = 10;
  EXPECT_TRUE(usage(c));
}

TEST(ImageFolderLoader, EpochsAndSamplesGetTheirOwnGenerators) {
  // A sample's augmentation depends on (seed, epoch, index) only.
  EXPECT_EQ(augment_rng(1, 0, 5).next(), augment_rng(1, 0, 5).next());
  EXPECT_NE(augment_rng(1, 0, 5).next(), augment_rng(1, 1, 5).next());
  EXPECT_NE(augment_rng(1, 0, 5).next(), augment_rng(1, 0, 6).next());
  EXPECT_NE(augment_rng(1, 0, 5).next(), augment_rng(2, 0, 5).next());
  std::vector<std::int32_t> p0 = epoch_order(100, 3, 0, true), p1 = epoch_order(100, 3, 1, true);
  EXPECT_NE(p0, p1);
  std::sort(p0.begin(), p0.end());
  EXPECT_EQ(p0, epoch_order(100, 3, 0, false));
}

// ---------------------------------------------------------------------------
// Synthetic batches
// ---------------------------------------------------------------------------
TEST(SyntheticBatch, SeededNormalValuesAndUniformLabels) {
  SyntheticSpec s;
  s.batch = 16;
  s.height = s.width = 64;
  std::vector<float> x(static_cast<size_t>(16 * 3 * 64 * 64)), x2(x.size()), x3(x.size());
  std::vector<std::int32_t> y(16), y2(16), y3(16);
  fill_synthetic_batch(s, 42, x.data(), y.data());
  fill_synthetic_batch(s, 42, x2.data(), y2.data());
  fill_synthetic_batch(s, 43, x3.data(), y3.data());
  EXPECT_EQ(x, x2);
  EXPECT_EQ(y, y2);
  EXPECT_NE(x, x3);
  double sum = 0, sq = 0;
  for (float v : x) {
    sum += v;
    sq += static_cast<double>(v) * v;
    ASSERT_LT(std::abs(v), 3.5f);
  }
  double mean = sum / static_cast<double>(x.size());
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(sq / static_cast<double>(x.size()) - mean * mean, 1.0, 0.02);
  for (auto v : y) EXPECT_TRUE(v >= 0 && v < 1000);
  std::vector<std::int32_t> many(4096);
  std::vector<float> xs(4096);
  SyntheticSpec labels{4096, 1, 1, 1, 1000};
  fill_synthetic_batch(labels, 1, xs.data(), many.data());
  EXPECT_GT(*std::max_element(many.begin(), many.end()), 900);
  EXPECT_LT(*std::min_element(many.begin(), many.end()), 100);
}

// ---------------------------------------------------------------------------
// Throughput (disabled: a measurement, not a check). 64 photo-sized JPEGs
// (500 x 375, 4:2:0, quality 90, ~ImageNet's typical file) through the 224
// train transform: decode and transform alone on one thread, then the loader
// on 1 thread and on every core.
//   ./build/bin/roofline_tests --gtest_also_run_disabled_tests --gtest_filter='*DecodeThroughput*'
// ---------------------------------------------------------------------------
TEST(ImageFolderLoader, DISABLED_DecodeThroughput) {
  TempDir dir;
  const std::string root = dir.path() + "/train";
  size_t bytes = 0;
  for (int c = 0; c < 4; ++c) {
    mkdirs(root + "/c" + std::to_string(c));
    for (int i = 0; i < 16; ++i) {
      Rng rng(static_cast<std::uint64_t>(c * 16 + i));
      // Smooth shapes plus grain: compresses like a photograph (tens of KB at quality 90).
      const double fx = 0.01 + 0.05 * rng.uniform(), fy = 0.01 + 0.05 * rng.uniform();
      RgbImage img = make_image(375, 500, [&](std::int64_t y, std::int64_t x, int ch) {
        double v = 128 + 60 * std::sin(fx * x * (ch + 1) + fy * y) + 40 * std::cos(0.003 * x * y / (ch + 1.0));
        return static_cast<int>(v + 24 * (rng.uniform() - 0.5));
      });
      tjhandle h = tjInitCompress();
      unsigned char* buf = nullptr;
      unsigned long size = 0;
      ASSERT_EQ(tjCompress2(h, img.pixels.data(), 500, 0, 375, TJPF_RGB, &buf, &size, TJSAMP_420, 90, 0), 0);
      write_file(root + "/c" + std::to_string(c) + "/" + std::to_string(i) + ".jpg",
                 std::string(reinterpret_cast<const char*>(buf), size));
      bytes += size;
      tjFree(buf);
      tjDestroy(h);
    }
  }
  ImageFolder f = scan_image_folder(root);
  auto secs = [](auto&& fn) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // The calling thread's CPU time: the one-thread figures do not count time descheduled on a busy host.
  auto cpu_secs = [](auto&& fn) {
    timespec a{}, b{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    fn();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    return static_cast<double>(b.tv_sec - a.tv_sec) + 1e-9 * static_cast<double>(b.tv_nsec - a.tv_nsec);
  };
  JpegDecoder d;
  std::vector<RgbImage> imgs(static_cast<size_t>(f.size()));
  double dec = cpu_secs([&] {
    for (int rep = 0; rep < 4; ++rep)
      for (size_t i = 0; i < imgs.size(); ++i) ASSERT_EQ(d.decode_file(f.paths[i], imgs[i]), DecodeStatus::Ok);
  });
  ImageTransform t;
  std::vector<float> out(static_cast<size_t>(t.sample_floats()));
  double tr = cpu_secs([&] {
    for (int rep = 0; rep < 4; ++rep)
      for (size_t i = 0; i < imgs.size(); ++i) {
        Rng rng(i + 100 * rep);
        transform_image(imgs[i], t, rng, out.data());
      }
  });
  const double n = 4.0 * static_cast<double>(imgs.size());
  std::printf("%lld files, %.0f KB each; one thread (CPU time): decode %.2f ms, train transform %.2f ms per image\n",
              static_cast<long long>(f.size()), bytes / 1024.0 / static_cast<double>(f.size()), 1e3 * dec / n,
              1e3 * tr / n);
  for (int threads : {1, static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))}) {
    LoaderConfig c;
    c.batch = 64;
    c.threads = threads;
    ImageFolderLoader loader(f, c);
    std::vector<float> x(static_cast<size_t>(c.batch * t.sample_floats()));
    std::vector<std::int32_t> y(static_cast<size_t>(c.batch));
    loader.next(x.data(), y.data());  // warm-up
    LoaderStats s0 = loader.stats();
    double wall = secs([&] {
      for (int b = 0; b < 8; ++b) loader.next(x.data(), y.data());
    });
    LoaderStats s = loader.stats();
    std::printf(
        "loader, %d thread%s: %.0f images/s delivered (8 batches of 64, the caller idle), capacity %.0f images/s\n",
        threads, threads == 1 ? "" : "s", 8.0 * 64 / wall,
        static_cast<double>(s.decoded - s0.decoded) * threads / (s.busy_s - s0.busy_s));
  }
}
