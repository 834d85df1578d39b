// Runs the roofline binary in a child process for CLI tests.
#pragma once
#include <string>
#include <vector>

namespace roofline::test {

struct CliResult {
  int exit_code = -1;   // the child's exit status, or 128+signal
  std::string out, err;
};

// Runs ROOFLINE_BINARY with `args`, extra environment entries ("K=V"), and an
// optional working directory. Never throws on a nonzero exit. A command still
// running after `timeout_s` is killed (exit 137), with every thread's stack
// (gdb) added to `err`.
CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                  const std::string& cwd = {}, int timeout_s = 300);

// A fresh temporary directory removed when the object is destroyed.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& content);

}  // namespace roofline::test
