// Every kernel name in tests/data/kernels/*.json decodes as the file says
// (format: tests/data/kernels/README.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "roofline/core/strings.hpp"
#include "roofline/profiler/explain.hpp"

using namespace roofline::prof;
namespace fs = std::filesystem;

namespace {

nlohmann::json load(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

std::string member(const KernelInfo& k, const std::string& key) {
  if (key == "library") return k.library;
  if (key == "op") return to_string(k.op);
  if (key == "op_detail") return k.op_detail;
  if (key == "arch") return k.arch;
  if (key == "input_type") return k.input_type;
  if (key == "math_type") return k.math_type;
  if (key == "accum_type") return k.accum_type;
  if (key == "output_type") return k.output_type;
  if (key == "tensor_cores") return to_string(k.tensor_cores);
  ADD_FAILURE() << "unknown expect key " << key;
  return {};
}

void check(const nlohmann::json& e) {
  const std::string name = e.at("name");
  SCOPED_TRACE(name);
  KernelInfo k = explain_kernel(name);
  const nlohmann::json expect = e.value("expect", nlohmann::json::object());
  const nlohmann::json fields = e.value("fields", nlohmann::json::object());
  const nlohmann::json sentence = e.value("sentence", nlohmann::json::array());
  for (const auto& [key, want] : expect.items()) {
    if (key == "recognised")
      EXPECT_EQ(k.recognised, want.get<bool>()) << k.sentence;
    else if (key == "truncated")
      EXPECT_EQ(k.truncated, want.get<bool>());
    else if (key == "sm")
      EXPECT_EQ(k.sm, want.get<int>());
    else
      EXPECT_EQ(member(k, key), want.get<std::string>()) << "member " << key << "; sentence: " << k.sentence;
  }
  for (const auto& [key, want] : fields.items()) {
    const KernelField* f = k.field(key);
    if (!f) {
      ADD_FAILURE() << "no field '" << key << "'; sentence: " << k.sentence;
      continue;
    }
    EXPECT_NE(f->value.find(want[0].get<std::string>()), std::string::npos)
        << "field " << key << " = '" << f->value << "', wanted it to contain '" << want[0].get<std::string>() << "'";
    if (!want[1].is_null()) EXPECT_EQ(f->evidence, want[1].get<std::string>()) << "evidence of field " << key;
  }
  for (const auto& part : sentence)
    EXPECT_NE(k.sentence.find(part.get<std::string>()), std::string::npos)
        << "sentence '" << k.sentence << "' lacks '" << part.get<std::string>() << "'";
  if (e.contains("short")) EXPECT_EQ(shorten_kernel_name(name, 72), e["short"].get<std::string>());
  // Whatever the name, the short form fits and the sentence is a sentence.
  EXPECT_LE(roofline::display_width(shorten_kernel_name(name, 40)), 40u);
  EXPECT_FALSE(k.sentence.empty());
  EXPECT_EQ(k.sentence.back(), '.');
  // Every field says where it came from, unless it is inferred.
  for (const auto& f : k.fields) EXPECT_FALSE(f.value.empty()) << "empty value for " << f.key;
}

}  // namespace

TEST(ExplainCorpus, EveryNameDecodesAsRecorded) {
  fs::path dir = fs::path(ROOFLINE_TEST_DATA) / "kernels";
  size_t files = 0, names = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    nlohmann::json j = load(entry.path());
    SCOPED_TRACE(entry.path().filename().string());
    for (const auto& e : j.at("kernels")) {
      try {
        check(e);
      } catch (const std::exception& ex) {
        ADD_FAILURE() << "corpus entry " << e.dump() << ": " << ex.what();
      }
      ++names;
    }
  }
  EXPECT_GE(files, 5u);
  EXPECT_GE(names, 80u);
}
