// The table of ROOFLINE_* environment variables (roofline/core/env.hpp): its
// rows are well formed, get() reads them, and `roofline --help` lists the ones
// a user or developer sets. That no other file reads the environment for a
// ROOFLINE_* name is checked with the layout rules (test_layout.cpp).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <set>
#include <string>

#include "roofline/core/env.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;

namespace {

bool listed_by_help(const env::Declaration& d) {
  return d.audience == env::Audience::User || d.audience == env::Audience::Developer;
}

// Sets a variable for one test and restores it after (an empty one comes
// back unset, which get() reads the same).
class ScopedEnv {
 public:
  ScopedEnv(env::Var v, const char* value) : name_(env::declaration(v).name), old_(env::get(v)) {
    ::setenv(name_.c_str(), value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST(Env, EveryRowIsNamedOnceWithItsValuesAndMeaning) {
  std::set<std::string> names;
  std::set<int> vars;
  for (const auto& d : env::declarations()) {
    const std::string name(d.name);
    EXPECT_EQ(name.rfind("ROOFLINE_", 0), 0u) << name;
    EXPECT_TRUE(names.insert(name).second) << name << " is declared twice";
    EXPECT_TRUE(vars.insert(static_cast<int>(d.var)).second) << name << "'s Var has another row too";
    EXPECT_FALSE(d.values.empty()) << name;
    EXPECT_FALSE(d.meaning.empty()) << name;
    EXPECT_EQ(&env::declaration(d.var), &d) << name;
  }
}

TEST(Env, GetReadsTheVariableAndTreatsEmptyAsUnset) {
  {
    ScopedEnv set(env::Var::Data, "/some/dir");
    const auto value = env::get(env::Var::Data);
    ASSERT_TRUE(value.has_value());
    EXPECT_EQ(*value, "/some/dir");
  }
  {
    ScopedEnv empty(env::Var::Data, "");
    EXPECT_FALSE(env::get(env::Var::Data).has_value());
  }
}

TEST(Env, HelpTextListsTheUserAndDeveloperRowsOnly) {
  const std::string help = env::help_text();
  for (const auto& d : env::declarations()) {
    const bool listed = help.find(std::string(d.name) + "=") != std::string::npos;
    EXPECT_EQ(listed, listed_by_help(d)) << d.name;
  }
}

TEST(Env, RooflineHelpListsEveryUserAndDeveloperVariable) {
  auto h = test::run_cli({"--help"});
  ASSERT_EQ(h.exit_code, 0) << h.err;
  EXPECT_NE(h.out.find("Environment:"), std::string::npos) << h.out;
  for (const auto& d : env::declarations())
    if (listed_by_help(d)) EXPECT_NE(h.out.find(std::string(d.name)), std::string::npos) << d.name << "\n" << h.out;
  // A command's own help stays about the command.
  auto b = test::run_cli({"runs", "--help"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(b.out.find("Environment:"), std::string::npos) << b.out;
}
