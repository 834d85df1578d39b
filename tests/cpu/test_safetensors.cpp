// The safetensors reader and writer: a file built by hand byte by byte from
// the format's description, round trips (F32 and BF16 bit for bit), every kind
// of bad file (each an Input error naming the file and the tensor), the
// writer's argument checks and atomic write, and checkpoint matching.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "roofline/core/error.hpp"
#include "roofline/engine/half.hpp"
#include "roofline/engine/rng.hpp"
#include "roofline/engine/safetensors.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;
using namespace roofline::engine;
using roofline::test::TempDir;

namespace {

// A safetensors file: the 8-byte little-endian length of `header`, the header, the data.
std::string st_bytes(const std::string& header, const std::string& data = {}) {
  std::string out(8, '\0');
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

template <typename T>
std::string le(std::initializer_list<T> values) {
  std::string s;
  for (T v : values) s.append(reinterpret_cast<const char*>(&v), sizeof v);
  return s;
}

SafetensorsFile parse(const std::string& bytes) {
  return SafetensorsFile::parse(std::vector<std::uint8_t>(bytes.begin(), bytes.end()), "bad.safetensors");
}

// The message of the Error(kind) parsing `bytes` throws, "" if it parsed.
std::string parse_error(const std::string& bytes, ErrorKind kind = ErrorKind::Input) {
  try {
    parse(bytes);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_FALSE(e.hint().empty()) << e.what();
    EXPECT_NE(std::string(e.what()).find("'bad.safetensors'"), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "parsed";
  return "";
}

// A one-tensor header: "t" with the given entry body.
std::string one(const std::string& entry) { return "{\"t\":{" + entry + "}}"; }

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

}  // namespace

TEST(Safetensors, ReadsAFileWrittenByHand) {
  // Two F32, two BF16, one F16, one F64, one I64 scalar, one empty tensor; metadata.
  const std::string header =
      "{\"__metadata__\":{\"format\":\"pt\"},"
      "\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"b\":{\"dtype\":\"BF16\",\"shape\":[1,2],\"data_offsets\":[8,12]},"
      "\"h\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[12,14]},"
      "\"e\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[14,14]},"
      "\"pad\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[14,16]},"
      "\"d\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[16,24]},"
      "\"n\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[24,32]}}   ";
  std::string data;
  data += le<std::uint8_t>({0x00, 0x00, 0x80, 0x3f});  // 1.0f
  data += le<std::uint8_t>({0x00, 0x00, 0x20, 0xc0});  // -2.5f
  data += le<std::uint8_t>({0x80, 0x3f, 0x20, 0xc0});  // bf16 1.0, -2.5
  data += le<std::uint8_t>({0x00, 0x3c});              // f16 1.0
  data += le<std::uint8_t>({7, 9});
  data += le<double>({0.1});
  data += le<std::int64_t>({-42});
  TempDir dir;
  const std::string path = dir.file("hand.safetensors");
  test::write_file(path, st_bytes(header, data));

  SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_EQ(f.source(), path);
  EXPECT_EQ(f.names(), (std::vector<std::string>{"w", "b", "h", "e", "pad", "d", "n"}));  // data order
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.info("b").dtype, "BF16");
  EXPECT_EQ(f.info("b").shape, (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(f.info("b").begin, 8u);
  EXPECT_EQ(f.info("b").end, 12u);
  EXPECT_EQ(f.info("n").numel(), 1);
  EXPECT_EQ(f.info("e").numel(), 0);
  EXPECT_EQ(f.read_f32("w"), (std::vector<float>{1.0f, -2.5f}));
  EXPECT_EQ(f.read_f32("b"), (std::vector<float>{1.0f, -2.5f}));
  EXPECT_EQ(f.read_f32("h"), (std::vector<float>{1.0f}));
  EXPECT_EQ(f.read_f32("d"), (std::vector<float>{0.1f}));
  EXPECT_TRUE(f.read_f32("e").empty());
  EXPECT_EQ(f.read_i64("n"), (std::vector<std::int64_t>{-42}));
  EXPECT_EQ(f.read_i64("pad"), (std::vector<std::int64_t>{7, 9}));
  EXPECT_EQ(f.read_bytes("pad"), (std::vector<std::uint8_t>{7, 9}));

  // The same bytes from memory read the same.
  SafetensorsFile m = parse(st_bytes(header, data));
  EXPECT_EQ(m.read_f32("b"), f.read_f32("b"));
}

TEST(Safetensors, NamesTheMissingTensorAndTheDtypeItCannotConvert) {
  SafetensorsFile f =
      parse(st_bytes("{\"n\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]},"
                     "\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]},"
                     "\"s\":{\"dtype\":\"I8\",\"shape\":[2],\"data_offsets\":[16,18]},"
                     "\"q\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[18,20]}}",
                     le<std::int64_t>({5}) + le<float>({1, 2}) + le<std::uint8_t>({0xfe, 3, 0, 2})));
  EXPECT_FALSE(f.contains("nope"));
  try {
    f.info("nope");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_HAS(e.what(), "'nope'");
  }
  try {
    f.read_f32("n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_HAS(e.what(), "'n' is I64");
  }
  try {
    f.read_i64("x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_HAS(e.what(), "'x' is F32");
  }
  std::vector<float> three(3);
  EXPECT_THROW(f.read_f32("x", three.data(), 3), Error);
  EXPECT_EQ(f.read_i64("s"), (std::vector<std::int64_t>{-2, 3}));  // sign-extended
  EXPECT_EQ(f.read_i64("q"), (std::vector<std::int64_t>{0, 1}));
}

TEST(Safetensors, RoundTripsF32AndBf16BitForBit) {
  Rng rng(22);
  // F32 (3, 5): random values and the special ones.
  std::vector<float> w(15);
  for (auto& v : w) v = rng.uniform(-3.0f, 3.0f);
  w[0] = -0.0f;
  w[1] = std::numeric_limits<float>::denorm_min();
  w[2] = std::numeric_limits<float>::infinity();
  w[3] = bits_float(0x7fc12345u);  // NaN with a payload
  // BF16 (7): every bit pattern kept as is, NaNs included.
  std::vector<std::uint16_t> b(7);
  for (auto& v : b) v = static_cast<std::uint16_t>(rng.below(65536));
  b[0] = 0x7fc1;
  b[1] = 0x8000;
  std::vector<float> scalar{3.5f};  // () shape
  TempDir dir;
  const std::string path = dir.file("rt.safetensors");
  // BF16 given first: the writer puts the 4-byte elements first for alignment.
  write_safetensors(path,
                    {{"layer.bias", "BF16", {7}, b.data()},
                     {"layer.weight", "F32", {3, 5}, w.data()},
                     {"empty", "F32", {0}, nullptr},
                     {"s", "F32", {}, scalar.data()}},
                    {{"origin", "roofline test"}});
  const std::string raw = test::read_file(path);
  std::uint64_t n = 0;
  std::memcpy(&n, raw.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(raw.substr(8, 15), "{\"__metadata__\"");
  const std::string header = raw.substr(8, n);
  const size_t close = header.find_last_not_of(' ');
  EXPECT_EQ(header[close], '}');
  EXPECT_LT(n - close - 1, 8u);  // padded with fewer than 8 spaces

  SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_EQ(f.metadata().at("origin"), "roofline test");
  EXPECT_EQ(f.names(), (std::vector<std::string>{"layer.weight", "empty", "s", "layer.bias"}));
  EXPECT_EQ(f.info("layer.weight").begin % 4, 0u);
  EXPECT_EQ(f.info("layer.weight").shape, (std::vector<std::int64_t>{3, 5}));
  EXPECT_TRUE(f.info("s").shape.empty());
  const std::vector<float> w2 = f.read_f32("layer.weight");
  ASSERT_EQ(w2.size(), w.size());
  EXPECT_EQ(std::memcmp(w2.data(), w.data(), w.size() * 4), 0);
  const std::vector<std::uint8_t> b2 = f.read_bytes("layer.bias");
  ASSERT_EQ(b2.size(), b.size() * 2);
  EXPECT_EQ(std::memcmp(b2.data(), b.data(), b2.size()), 0);
  const std::vector<float> bf = f.read_f32("layer.bias");
  for (size_t i = 0; i < b.size(); ++i) EXPECT_EQ(float_bits(bf[i]), float_bits(float_from_bf16(b[i]))) << i;
  EXPECT_EQ(f.read_f32("s"), scalar);
  EXPECT_TRUE(f.read_f32("empty").empty());

  // Writing again replaces the file whole and leaves no temporary file.
  write_safetensors(path, {{"only", "F32", {1}, scalar.data()}});
  EXPECT_EQ(SafetensorsFile::open(path).names(), (std::vector<std::string>{"only"}));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 1);
}

TEST(Safetensors, WriterRefusesBadArgumentsAndLeavesNoFile) {
  TempDir dir;
  const std::string path = dir.file("w.safetensors");
  float x[2] = {1, 2};
  auto usage = [&](std::vector<SafetensorsTensor> t, const std::string& part) {
    try {
      write_safetensors(path, t);
      ADD_FAILURE() << "wrote " << part;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage);
      EXPECT_HAS(e.what(), part);
    }
  };
  usage({{"a", "F32", {2}, x}, {"a", "F32", {2}, x}}, "'a' is given twice");
  usage({{"__metadata__", "F32", {2}, x}}, "'__metadata__'");
  usage({{"", "F32", {2}, x}}, "''");
  usage({{"a", "F128", {2}, x}}, "unknown safetensors dtype 'F128'");
  usage({{"a", "F32", {-2}, x}}, "negative dimension");
  usage({{"a", "F32", {2}, nullptr}}, "no data");
  usage({{"a", "F32", {1LL << 40, 1LL << 40}, x}}, "too large");
  EXPECT_FALSE(std::filesystem::exists(path));
  // A folder that does not exist: an Input error, nothing written.
  try {
    write_safetensors(dir.file("no/such/dir.safetensors"), {{"a", "F32", {2}, x}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_HAS(e.what(), "cannot write");
  }
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 0);
}

TEST(Safetensors, RefusesShortFilesAndBadHeaderLengths) {
  EXPECT_HAS(parse_error(""), "0 bytes, shorter than the 8-byte header length");
  EXPECT_HAS(parse_error("\x01\x02\x03"), "3 bytes, shorter than the 8-byte header length");
  std::string past = st_bytes("{}");
  past[0] = 3;  // says 3 bytes of header, the file holds 2
  EXPECT_HAS(parse_error(past), "header length (3 bytes) runs past the end of the file (10 bytes)");
  std::string huge = st_bytes("{}");
  huge[7] = '\x80';
  EXPECT_HAS(parse_error(huge), "runs past the end of the file");
  // Above 100 MB in a (sparse) file that is large enough to hold it.
  TempDir dir;
  const std::string path = dir.file("big.safetensors");
  std::string head(8, '\0');
  const std::uint64_t n = 100'000'001;
  std::memcpy(head.data(), &n, 8);
  test::write_file(path, head + "{");
  std::filesystem::resize_file(path, n + 64);
  try {
    SafetensorsFile::open(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_HAS(e.what(), "above the format's limit of 100 MB");
  }
  try {
    SafetensorsFile::open(dir.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_HAS(e.what(), "is not a regular file");
  }
  try {
    SafetensorsFile::open(dir.file("absent.safetensors"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_HAS(e.what(), "cannot open");
  }
}

TEST(Safetensors, RefusesHeadersThatAreNotJsonObjects) {
  EXPECT_HAS(parse_error(st_bytes("")), "does not start with '{'");
  EXPECT_HAS(parse_error(st_bytes("[1,2]")), "does not start with '{'");
  EXPECT_HAS(parse_error(st_bytes(" {}")), "does not start with '{'");
  EXPECT_HAS(parse_error(st_bytes("{\"t\": }")), "not valid JSON");
  EXPECT_HAS(parse_error(st_bytes("{} x")), "not valid JSON");
  EXPECT_HAS(parse_error(st_bytes("{\"t\":\"\xff\"}")), "not valid JSON");  // not UTF-8
  // Trailing spaces (the writer's padding) are fine; an empty file is fine.
  EXPECT_TRUE(parse(st_bytes("{}      ")).names().empty());
}

TEST(Safetensors, RefusesBadEntriesNamingTheTensor) {
  const std::string f32 = "\"dtype\":\"F32\"", sh2 = "\"shape\":[2]", off8 = "\"data_offsets\":[0,8]";
  const std::string d8(8, '\0');
  auto bad = [&](const std::string& entry, const std::string& part, const std::string& data = std::string(8, '\0')) {
    const std::string msg = parse_error(st_bytes(one(entry), data));
    EXPECT_HAS(msg, "tensor 't'");
    EXPECT_HAS(msg, part);
  };
  EXPECT_HAS(parse_error(st_bytes("{\"t\":3}", d8)), "tensor 't': its entry is not an object");
  bad(sh2 + "," + off8, "no \"dtype\"");
  bad(f32 + "," + off8, "no \"shape\"");
  bad(f32 + "," + sh2, "no \"data_offsets\"");
  bad("\"dtype\":5," + sh2 + "," + off8, "\"dtype\" is not a string");
  bad(f32 + ",\"shape\":\"2\"," + off8, "\"shape\" is not an array");
  bad(f32 + ",\"shape\":[2.0]," + off8, "not a dimension");
  bad(f32 + ",\"shape\":[-2]," + off8, "not a dimension");
  bad(f32 + ",\"shape\":[[2]]," + off8, "not a dimension");
  bad(f32 + ",\"shape\":[18446744073709551615]," + off8, "not a dimension");
  bad(f32 + "," + sh2 + ",\"data_offsets\":[0]", "\"data_offsets\" [0] is not a pair");
  bad(f32 + "," + sh2 + ",\"data_offsets\":[0,\"8\"]", "is not a pair");
  bad(f32 + "," + sh2 + ",\"data_offsets\":[-1,8]", "is not a pair");
  bad(f32 + "," + sh2 + ",\"data_offsets\":{\"a\":1}", "is not a pair");
  bad("\"dtype\":\"F128\"," + sh2 + "," + off8, "unknown dtype 'F128'");
  EXPECT_HAS(parse_error(st_bytes(one("\"dtype\":\"F4\"," + sh2 + "," + off8), d8), ErrorKind::Unsupported),
             "tensor 't': dtype F4");
  bad(f32 + ",\"shape\":[4294967296,4294967296]," + off8, "more elements than any file can");
  bad(f32 + ",\"shape\":[1099511627776,1099511627776,1099511627776]," + off8, "more elements");
  bad(f32 + ",\"shape\":[3]," + off8, "data_offsets [0, 8] hold 8 bytes, but F32 [3] needs 12");
  bad(f32 + ",\"shape\":[0]," + off8, "needs 0");
  bad(f32 + "," + sh2 + ",\"data_offsets\":[8,0]", "end before they begin");
  bad(f32 + "," + sh2 + ",\"data_offsets\":[4,12]", "run past the end of the data buffer (8 bytes)");
  bad(f32 + "," + sh2 + ",\"data_offsets\":[0,8],\"dtype\":\"F32\"", "key 'dtype' appears twice");
  EXPECT_HAS(parse_error(st_bytes("{\"__metadata__\":{\"k\":1}}")), "\"__metadata__\" entry 'k' is not a string");
  EXPECT_HAS(parse_error(st_bytes("{\"__metadata__\":[\"k\"]}")), "\"__metadata__\" is not an object");
  // Unknown keys in an entry are ignored, as the reference implementation does.
  EXPECT_EQ(parse(st_bytes(one(f32 + "," + sh2 + "," + off8 + ",\"extra\":1"), d8)).names().size(), 1u);
}

TEST(Safetensors, RefusesOverlapsHolesTrailingBytesAndRepeatedNames) {
  auto t = [](const std::string& name, int b, int e) {
    return "\"" + name + "\":{\"dtype\":\"U8\",\"shape\":[" + std::to_string(e - b) + "],\"data_offsets\":[" +
           std::to_string(b) + "," + std::to_string(e) + "]}";
  };
  const std::string d8(8, 'x');
  std::string msg = parse_error(st_bytes("{" + t("a", 0, 6) + "," + t("b", 4, 8) + "}", d8));
  EXPECT_HAS(msg, "tensor 'b': bytes [4, 8] overlap tensor 'a' (bytes [0, 6])");
  msg = parse_error(st_bytes("{" + t("a", 0, 8) + "," + t("b", 0, 8) + "}", d8));
  EXPECT_HAS(msg, "overlap tensor");
  msg = parse_error(st_bytes("{" + t("a", 0, 8) + "," + t("e", 3, 3) + "}", d8));  // empty, inside 'a'
  EXPECT_HAS(msg, "tensor 'e'");
  msg = parse_error(st_bytes("{" + t("a", 0, 2) + "," + t("b", 5, 8) + "}", d8));
  EXPECT_HAS(msg, "tensor 'b': 3 bytes before it (from byte 2) belong to no tensor");
  msg = parse_error(st_bytes("{" + t("a", 2, 8) + "}", d8));
  EXPECT_HAS(msg, "tensor 'a': 2 bytes before it (from byte 0)");
  msg = parse_error(st_bytes("{" + t("a", 0, 5) + "}", d8));
  EXPECT_HAS(msg, "3 bytes at the end of the data buffer (from byte 5, after tensor 'a') belong to no tensor");
  msg = parse_error(st_bytes("{}", d8));
  EXPECT_HAS(msg, "8 bytes at the end of the data buffer (from byte 0)");
  msg = parse_error(st_bytes("{" + t("a", 0, 4) + "," + t("a", 4, 8) + "}", d8));
  EXPECT_HAS(msg, "tensor 'a' appears twice");
  // Empty tensors between others, in any order, are fine.
  EXPECT_EQ(parse(st_bytes("{" + t("b", 4, 8) + "," + t("e", 4, 4) + "," + t("a", 0, 4) + "}", d8)).names(),
            (std::vector<std::string>{"a", "e", "b"}));
}

TEST(Safetensors, ReportsAFileThatShrankAfterOpening) {
  TempDir dir;
  const std::string path = dir.file("s.safetensors");
  std::vector<float> v(64, 1.0f);
  write_safetensors(path, {{"v", "F32", {64}, v.data()}});
  SafetensorsFile f = SafetensorsFile::open(path);
  std::filesystem::resize_file(path, 100);
  try {
    f.read_f32("v");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_HAS(e.what(), "cannot read tensor 'v'");
  }
}

TEST(Safetensors, MatchesACheckpointAgainstTheExpectedTensors) {
  TempDir dir;
  const std::string path = dir.file("ck.safetensors");
  std::vector<float> buf(64 * 3 * 3 * 3, 0.5f);
  write_safetensors(path, {{"conv1.weight", "F32", {64, 3, 3, 3}, buf.data()},
                           {"fc.bias", "F32", {10}, buf.data()},
                           {"stray", "F32", {1}, buf.data()}});
  SafetensorsFile f = SafetensorsFile::open(path);
  const std::vector<ExpectedTensor> good = {
      {"conv1.weight", {64, 3, 3, 3}}, {"fc.bias", {10}}, {"stray", {1}}, {"bn1.num_batches_tracked", {}, true}};
  EXPECT_TRUE(match_checkpoint(f, good).ok());
  EXPECT_NO_THROW(check_checkpoint(f, good, "tiny"));

  const std::vector<ExpectedTensor> want = {
      {"conv1.weight", {64, 3, 7, 7}}, {"fc.weight", {10, 512}}, {"fc.bias", {10}}, {"opt", {3}, true}};
  CheckpointMismatch m = match_checkpoint(f, want);
  EXPECT_EQ(m.missing, (std::vector<std::string>{"fc.weight"}));
  EXPECT_EQ(m.unexpected, (std::vector<std::string>{"stray"}));
  ASSERT_EQ(m.misshapen.size(), 1u);
  EXPECT_EQ(m.misshapen[0].name, "conv1.weight");
  EXPECT_EQ(m.misshapen[0].found, (std::vector<std::int64_t>{64, 3, 3, 3}));
  try {
    check_checkpoint(f, want, "resnet18");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_HAS(e.what(),
               "does not hold resnet18's parameters: 1 missing ('fc.weight'); 1 unexpected ('stray'); "
               "1 misshapen ('conv1.weight': expected [64, 3, 7, 7], found [64, 3, 3, 3])");
    EXPECT_HAS(e.hint(), "resnet18");
  }

  // Many problems: the first 10 listed, then how many more.
  std::vector<ExpectedTensor> many;
  for (int i = 0; i < 14; ++i) many.push_back({"layer" + std::to_string(i) + ".weight", {1}});
  m = match_checkpoint(f, many);
  EXPECT_EQ(m.missing.size(), 14u);
  EXPECT_EQ(m.unexpected.size(), 3u);
  const std::string s = m.summary();
  EXPECT_HAS(s, "14 missing ('layer0.weight', ");
  EXPECT_HAS(s, "'layer9.weight')");
  EXPECT_EQ(s.find("layer10"), std::string::npos) << s;
  EXPECT_HAS(s, "; 3 unexpected; and 7 more");
}
