// The IDX reader and data set loading: good files (raw and gzip), and every
// way a file can be wrong, each with a clear Input error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>

#include "tests/cpu/test_engine_fixtures.hpp"
#include "roofline/core/error.hpp"
#include "roofline/engine/data.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;
using namespace roofline::engine;
using roofline::test::idx_bytes;
using roofline::test::TempDir;

namespace {

IdxArray parse(const std::string& s) {
  return parse_idx(reinterpret_cast<const std::uint8_t*>(s.data()), s.size(), "test.idx");
}

// The Input error message of parsing `s`, or "" if it parsed.
std::string parse_error(const std::string& s) {
  try {
    parse(s);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_FALSE(e.hint().empty());
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Idx, ParsesImagesAndLabels) {
  std::vector<std::uint8_t> px(2 * 3 * 4);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<std::uint8_t>(i * 7);
  IdxArray a = parse(idx_bytes({2, 3, 4}, px));
  EXPECT_EQ(a.dims, (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(a.data, px);
  IdxArray l = parse(idx_bytes({5}, {0, 1, 2, 3, 9}));
  EXPECT_EQ(l.dims, (std::vector<std::int64_t>{5}));
  EXPECT_EQ(l.data[4], 9);
  // Dimensions are big-endian: 256 = 00 00 01 00.
  IdxArray big = parse(idx_bytes({256}, std::vector<std::uint8_t>(256, 1)));
  EXPECT_EQ(big.dims[0], 256);
}

TEST(Idx, RejectsBadMagicTypeAndDimensions) {
  std::string good = idx_bytes({2, 2}, {1, 2, 3, 4});
  std::string bad = good;
  bad[0] = 1;
  EXPECT_NE(parse_error(bad).find("bad IDX magic"), std::string::npos);
  EXPECT_NE(parse_error(idx_bytes({2, 2}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0x0d)).find("data type"),
            std::string::npos);  // floats
  EXPECT_NE(parse_error(std::string("\0\0\x08", 3)).find("shorter than the 4-byte magic"), std::string::npos);
  std::string nodims = good;
  nodims[3] = 0;
  EXPECT_NE(parse_error(nodims).find("dimensions"), std::string::npos);
  EXPECT_NE(parse_error(idx_bytes({2, 0}, {})).find("is 0"), std::string::npos);
  EXPECT_NE(parse_error(idx_bytes({0xffffffffu, 0xffffffffu}, {})).find("more than"), std::string::npos);
  EXPECT_NE(parse_error(good.substr(0, 9)).find("truncated IDX header"), std::string::npos);
}

TEST(Idx, RejectsTruncatedAndTrailingData) {
  std::string good = idx_bytes({3, 4}, std::vector<std::uint8_t>(12, 5));
  EXPECT_EQ(parse_error(good), "");
  EXPECT_NE(parse_error(good.substr(0, good.size() - 1)).find("truncated IDX file"), std::string::npos);
  EXPECT_NE(parse_error(good + "x").find("unexpected bytes"), std::string::npos);
}

TEST(Idx, ReadsGzipAndRawFilesAndRejectsBrokenGzip) {
  TempDir dir;
  std::string bytes = idx_bytes({4}, {1, 2, 3, 4});
  roofline::test::write_gz(dir.file("a.gz"), bytes);
  roofline::test::write_file(dir.file("a.raw"), bytes);
  EXPECT_EQ(read_idx_file(dir.file("a.gz")).data, (std::vector<std::uint8_t>{1, 2, 3, 4}));
  EXPECT_EQ(read_idx_file(dir.file("a.raw")).data, (std::vector<std::uint8_t>{1, 2, 3, 4}));

  std::string gz = roofline::test::read_file(dir.file("a.gz"));
  roofline::test::write_file(dir.file("cut.gz"), gz.substr(0, gz.size() / 2));
  try {
    read_idx_file(dir.file("cut.gz"));
    FAIL() << "a truncated gzip file must not load";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("gzip"), std::string::npos) << e.what();
  }
  std::string corrupt = gz;
  for (size_t i = 10; i < corrupt.size() - 8; ++i) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
  roofline::test::write_file(dir.file("bad.gz"), corrupt);
  EXPECT_THROW(read_idx_file(dir.file("bad.gz")), Error);
  EXPECT_THROW(read_idx_file(dir.file("missing.gz")), Error);
}

TEST(Idx, ImageSetsCheckCountsAndLabels) {
  IdxArray img = parse(idx_bytes({3, 2, 2}, std::vector<std::uint8_t>(12, 1)));
  IdxArray lab = parse(idx_bytes({3}, {0, 1, 9}));
  ImageSet s = make_image_set(img, lab, "training");
  EXPECT_EQ(s.n, 3);
  EXPECT_EQ(s.h, 2);
  IdxArray two = parse(idx_bytes({2}, {0, 1}));
  try {
    make_image_set(img, two, "training");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("3 images but 2 labels"), std::string::npos) << e.what();
  }
  IdxArray badlab = parse(idx_bytes({3}, {0, 1, 10}));
  EXPECT_THROW(make_image_set(img, badlab, "training"), Error);
  EXPECT_THROW(make_image_set(lab, lab, "training"), Error);  // labels are not images
}

TEST(Idx, MissingDirectoryNamesThePackageAndTheOption) {
  try {
    load_mnist_dir("/nonexistent/fashion");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/fashion"), std::string::npos);
    EXPECT_NE(e.hint().find("apt-get install dataset-fashion-mnist"), std::string::npos);
    EXPECT_NE(e.hint().find("--data"), std::string::npos);
  }
  TempDir empty;
  EXPECT_THROW(load_mnist_dir(empty.path()), Error);
}

TEST(Idx, LoadsASyntheticSetAndNormalisesFromTheTrainingSet) {
  TempDir dir;
  roofline::test::write_synthetic_mnist(dir.path(), 50, 20);
  DataSplit d = load_mnist_dir(dir.path());
  EXPECT_EQ(d.train.n, 50);
  EXPECT_EQ(d.test.n, 20);
  double sum = 0, sq = 0;
  for (auto v : d.train.images) {
    sum += v / 255.0;
    sq += (v / 255.0) * (v / 255.0);
  }
  const double mean = sum / d.train.images.size();
  EXPECT_NEAR(d.norm.mean, mean, 1e-6);
  EXPECT_NEAR(d.norm.std, std::sqrt(sq / d.train.images.size() - mean * mean), 1e-6);
  EXPECT_EQ(d.norm.source, "training set");
}

TEST(Idx, RealFashionMnistWhenInstalled) {
  const std::string dir = default_data_dir();
  if (::access(dir.c_str(), R_OK) != 0)
    GTEST_SKIP() << dir << " is not installed (apt-get install dataset-fashion-mnist)";
  DataSplit d = load_mnist_dir(dir);
  EXPECT_EQ(d.train.n, 60000);
  EXPECT_EQ(d.test.n, 10000);
  EXPECT_EQ(d.train.h, 28);
  EXPECT_NEAR(d.norm.mean, 0.2860, 1e-3);  // the published Fashion-MNIST statistics
  EXPECT_NEAR(d.norm.std, 0.3530, 1e-3);
}
