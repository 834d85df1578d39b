// libFuzzer target of the command line: the input, split at NUL bytes, is
// parsed as roofline's arguments by the same CommandLine main() uses (every
// command's options, validators and checks), without running the command.
// It must end in a parse error or a roofline::Error (a usage message) or
// parse; anything else (a crash, an unexpected exception, undefined
// behaviour in a conversion) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "roofline/core/error.hpp"
#include "src/cli/command.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  using namespace roofline;
  std::vector<std::string> args;
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  if (!cur.empty()) args.push_back(cur);
  if (args.size() > 64) return 0;
  cli::GlobalOptions opts;
  auto line = cli::make_command_line(opts);
  try {
    line->check_command_word(args);
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
    line->app.parse(reversed);
    (void)line->chosen();
  } catch (const CLI::Error&) {
  } catch (const Error&) {
  }
  return 0;
}
