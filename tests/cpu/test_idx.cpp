// The IDX reader and data set loading: good files (raw and gzip), and every
// way a file can be wrong, each with a clear Input error.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <functional>

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

namespace {

// Runs the roofline binary on `args` in a fresh process and returns its peak
// resident memory in MiB (ru_maxrss), or -1 when it did not exit normally.
long cli_peak_mib(const std::vector<std::string>& args, int* exit_code, std::string* err) {
  TempDir out;
  const std::string err_path = out.file("err.txt");
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    ::dup2(fd, 1);
    std::vector<char*> argv{const_cast<char*>(ROOFLINE_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(ROOFLINE_BINARY, argv.data());
    _exit(127);
  }
  int status = 0;
  struct rusage ru {};
  if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status)) return -1;
  *exit_code = WEXITSTATUS(status);
  *err = roofline::test::read_file(err_path);
  return ru.ru_maxrss / 1024;
}

// A data folder whose training images are `images` (written as is), the rest good.
std::string data_dir_with_images(const TempDir& dir, const std::function<void(const std::string&)>& write_images) {
  roofline::test::write_synthetic_mnist(dir.path(), 10, 10);
  ::unlink((dir.path() + "/train-images-idx3-ubyte.gz").c_str());
  write_images(dir.path() + "/train-images-idx3-ubyte");
  return dir.path();
}

int input_error_of(const std::string& path, const std::string& expect) {
  try {
    read_idx_file(path);
  } catch (const Error& e) {
    return e.kind() == ErrorKind::Input && std::string(e.what()).find(expect) != std::string::npos ? 0 : 2;
  } catch (...) {
    return 3;
  }
  return 1;  // accepted
}

}  // namespace

TEST(Idx, AHugeSparseFileIsRefusedFromItsSizeWithoutReadingIt) {
  TempDir dir, db;
  // A valid Fashion-MNIST header (60000 images of 28x28) in a 3 GiB sparse file.
  const std::string data = data_dir_with_images(dir, [](const std::string& path) {
    roofline::test::write_file(path, idx_bytes({60000, 28, 28}, {}));
    ASSERT_EQ(::truncate(path.c_str(), off_t(3) << 30), 0);
  });
  int code = -1;
  std::string err;
  const long mib = cli_peak_mib({"--db", db.file("r.db"), "bench", "simple-mlp", "--device", "cpu", "--data", data},
                                &code, &err);
  EXPECT_EQ(code, 3) << err;
  EXPECT_NE(err.find("unexpected bytes after the IDX data"), std::string::npos) << err;
  int base_code = -1;
  const long base = cli_peak_mib({"--version"}, &base_code, &err);  // the binary's own footprint (CUDA libraries)
  ASSERT_GE(mib, 0);
  EXPECT_LT(mib - base, 64) << "peak memory while refusing it, above the binary's own " << base << " MiB";
}

TEST(Idx, AGzipBombStopsAtWhatTheHeaderAnnounces) {
  TempDir dir, db;
  // The header announces 16 MiB; the stream inflates to 16 MiB + 256 MiB of zeros.
  const std::string data = data_dir_with_images(dir, [](const std::string& path) {
    std::string bytes = idx_bytes({16, 1024, 1024}, std::vector<std::uint8_t>(16u << 20, 7));
    bytes.append(std::size_t(256) << 20, '\0');
    roofline::test::write_gz(path + ".gz", bytes);
  });
  int code = -1;
  std::string err;
  const long mib = cli_peak_mib({"--db", db.file("r.db"), "bench", "simple-mlp", "--device", "cpu", "--data", data},
                                &code, &err);
  EXPECT_EQ(code, 3) << err;
  EXPECT_NE(err.find("unexpected bytes after the IDX data"), std::string::npos) << err;
  int base_code = -1;
  const long base = cli_peak_mib({"--version"}, &base_code, &err);  // the binary's own footprint (CUDA libraries)
  ASSERT_GE(mib, 0);
  EXPECT_LT(mib - base, 64) << "peak memory while refusing it (16 MiB announced), above the binary's own " << base
                            << " MiB";
}
TEST(Idx, GzipDataFollowedByOtherBytesIsRefused) {
  TempDir dir;
  roofline::test::write_gz(dir.file("a.gz"), idx_bytes({4}, {1, 2, 3, 4}));
  roofline::test::write_file(dir.file("junk.gz"), roofline::test::read_file(dir.file("a.gz")) + "trailing garbage");
  EXPECT_EQ(input_error_of(dir.file("junk.gz"), "bytes after the end of the gzip data"), 0);
  EXPECT_EQ(read_idx_file(dir.file("a.gz")).data, (std::vector<std::uint8_t>{1, 2, 3, 4}));
}

TEST(Idx, ARawFileOfWrongSizeSaysByHowMuch) {
  TempDir dir;
  const std::string good = idx_bytes({3, 4}, std::vector<std::uint8_t>(12, 5));
  roofline::test::write_file(dir.file("long"), good + "xyz");
  roofline::test::write_file(dir.file("short"), good.substr(0, good.size() - 2));
  EXPECT_EQ(input_error_of(dir.file("long"), "3 unexpected bytes"), 0);
  EXPECT_EQ(input_error_of(dir.file("short"), "announces 12 bytes of data, the file holds 10"), 0);
}
