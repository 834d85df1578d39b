// The tree's layout rules (docs/architecture.md, "Conventions"), checked on the
// source tree itself so that they stay true:
// - every public header has its code in the source file or folder of the same
//   name in src/<area>/ (suffixes _gpu, _nocuda, _sm90a and .cu allowed), or is
//   header-only and listed below with its reason;
// - includes are written from one root: "roofline/..." for public headers, the
//   path from the repository root for everything else; no relative includes;
// - no source file is longer than about 800 lines;
// - the environment is read for a ROOFLINE_* name only through the table in
//   src/core/env.cpp (roofline/core/env.hpp), and every ROOFLINE_* name a
//   string in the tree starts with is one of its rows.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "roofline/core/env.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = ROOFLINE_SOURCE_DIR;

// Public headers whose code is all in the header (inline functions, types,
// templates), each with the reason it needs no source file.
const std::set<std::string> kHeaderOnly = {
    "roofline/sweep/input.hpp",  // the sweep's input hash, included from .cu files too
    "roofline/core/json_text.hpp",  // one inline function: JSON text with bad UTF-8 replaced
    "roofline/engine/half.hpp",     // inline fp32 <-> bf16/fp16 conversions, used in hot host loops
};

bool is_source(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".cuh" || ext == ".inc" || ext == ".h";
}

std::vector<fs::path> files_under(const std::vector<std::string>& dirs) {
  std::vector<fs::path> out;
  for (const auto& d : dirs) {
    if (!fs::exists(kRoot / d)) continue;
    for (const auto& e : fs::recursive_directory_iterator(kRoot / d))
      if (e.is_regular_file() && is_source(e.path()) && e.path().string().find("/tests/data/") == std::string::npos)
        out.push_back(e.path());
  }
  return out;
}

std::string from_root(const fs::path& p) { return fs::relative(p, kRoot).generic_string(); }

// The one file that reads the environment for ROOFLINE_* names.
const std::string kEnvTable = "src/core/env.cpp";

bool env_rules_skip(const std::string& rel) { return rel == kEnvTable; }

}  // namespace

TEST(Layout, EveryPublicHeaderHasASourceOfTheSameName) {
  std::vector<std::string> missing;
  for (const auto& h : files_under({"include/roofline"})) {
    const std::string rel = fs::relative(h, kRoot / "include").generic_string();  // roofline/<area>/x.hpp
    if (kHeaderOnly.count(rel)) continue;
    const fs::path area = kRoot / "src" / h.parent_path().filename();
    const std::string stem = h.stem().string();
    bool found = false;
    if (fs::exists(area))
      for (const auto& e : fs::recursive_directory_iterator(area)) {
        const std::string name = e.path().filename().string();
        if (e.is_directory() && name == stem) found = true;
        for (const char* suffix : {".cpp", "_gpu.cpp", "_nocuda.cpp", ".cu", "_sm90a.cu"})
          if (name == stem + suffix) found = true;
        if (found) break;
      }
    if (!found) missing.push_back(rel);
  }
  EXPECT_TRUE(missing.empty()) << "public headers without a source file or folder of the same name in src/<area>/ "
                                  "(move their code there, or list them in kHeaderOnly with the reason): "
                               << ::testing::PrintToString(missing);
}

TEST(Layout, IncludesAreWrittenFromOneRoot) {
  const std::regex include(R"re(^\s*#\s*include\s+"([^"]+)")re");
  std::vector<std::string> bad;
  for (const auto& f : files_under({"src", "include", "tests", "kernels", "fuzz"})) {
    std::ifstream in(f);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const std::string path = m[1];
      const bool rooted = path.rfind("roofline/", 0) == 0 || path.rfind("src/", 0) == 0 ||
                          path.rfind("kernels/", 0) == 0 || path.rfind("tests/", 0) == 0;
      if (!rooted) bad.push_back(from_root(f) + ":" + std::to_string(n) + " \"" + path + "\"");
    }
  }
  EXPECT_TRUE(bad.empty()) << "includes not written from the root (use roofline/... for public headers, the path "
                              "from the repository root for the rest): "
                           << ::testing::PrintToString(bad);
}

TEST(Layout, NoSourceFileIsLongerThanAbout800Lines) {
  std::vector<std::string> long_files;
  for (const auto& f : files_under({"src", "include", "tests", "kernels", "fuzz"})) {
    std::ifstream in(f);
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    if (lines > 800) long_files.push_back(from_root(f) + " (" + std::to_string(lines) + " lines)");
  }
  EXPECT_TRUE(long_files.empty()) << "split these by concept: " << ::testing::PrintToString(long_files);
}

// A getenv call whose argument is a ROOFLINE_* string literal, and, in a file
// that names a ROOFLINE_* variable in a string, a getenv call whose argument is
// not a string literal (a helper that is given the name): both read the
// environment around the table (use env::get and add a row if needed).
TEST(Layout, OnlyTheEnvTableReadsRooflineVariables) {
  const std::regex direct(R"re(getenv\s*\(\s*"ROOFLINE_)re");
  const std::regex indirect(R"re(getenv\s*\(\s*[A-Za-z_:])re");
  const std::regex named(R"re("ROOFLINE_[A-Z0-9_]+[="])re");
  std::vector<std::string> bad;
  for (const auto& f : files_under({"src", "include", "tests", "kernels", "fuzz"})) {
    const std::string rel = from_root(f);
    if (env_rules_skip(rel)) continue;
    std::ifstream in(f);
    std::string line;
    std::vector<std::string> calls;
    bool names_one = false;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (std::regex_search(line, direct)) bad.push_back(rel + ":" + std::to_string(n));
      if (std::regex_search(line, indirect)) calls.push_back(rel + ":" + std::to_string(n));
      names_one |= std::regex_search(line, named);
    }
    if (names_one) bad.insert(bad.end(), calls.begin(), calls.end());
  }
  EXPECT_TRUE(bad.empty()) << "ROOFLINE_* variables read around the table: read them with env::get "
                              "(roofline/core/env.hpp) and declare them in "
                           << kEnvTable << ": " << ::testing::PrintToString(bad);
}

// Every string that starts with a ROOFLINE_* name (the name alone, or NAME=...
// as an error message or a child's environment writes it) names a row of the
// table, so a misspelt or undeclared variable fails here.
TEST(Layout, EveryRooflineVariableNamedInTheTreeIsDeclared) {
  std::set<std::string> declared;
  for (const auto& d : roofline::env::declarations()) declared.emplace(d.name);
  const std::regex named(R"re("(ROOFLINE_[A-Z0-9_]+)[="])re");
  std::vector<std::string> undeclared;
  for (const auto& f : files_under({"src", "include", "tests", "kernels", "fuzz"})) {
    const std::string rel = from_root(f);
    if (env_rules_skip(rel)) continue;
    std::ifstream in(f);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
      ++n;
      for (std::sregex_iterator it(line.begin(), line.end(), named), end; it != end; ++it)
        if (!declared.count((*it)[1].str())) undeclared.push_back(rel + ":" + std::to_string(n) + " " + (*it)[1].str());
    }
  }
  EXPECT_TRUE(undeclared.empty()) << "ROOFLINE_* names with no row in " << kEnvTable
                                  << " (fix the name, or declare the variable there): "
                                  << ::testing::PrintToString(undeclared);
}
