// Every `roofline` subcommand is a Command registered from its own file in
// src/cli/commands/. main() parses the command line, opens the results store,
// records the run, calls run(), and renders the Report as text, JSON or CSV.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "roofline/core/report.hpp"
#include "roofline/store/db.hpp"

namespace roofline::cli {

struct GlobalOptions {
  std::string db;  // --db
  bool json = false, csv = false;
  bool quiet = false;
  int width = -1;  // --width: text tables' most columns (0: no limit); unset: the terminal's, at most 120
  std::vector<std::string> argv;
  Format format() const { return json ? Format::Json : (csv ? Format::Csv : Format::Text); }
  size_t text_width() const { return width >= 0 ? static_cast<size_t>(width) : terminal_text_width(); }
};

class Invocation {
 public:
  Invocation(GlobalOptions& opts, std::string command, bool stores);
  ~Invocation();

  const GlobalOptions& options() const { return opts_; }
  // The results store, opened on first use (commands that store open it before
  // they start working, so an unusable database fails fast).
  store::Db& db();
  bool stores() const { return stores_; }
  // The id of this invocation's row in `runs`, created on first use.
  std::int64_t run_id();
  bool has_run() const { return run_id_ > 0; }
  // The store's row for this run's CPU / GPU `ordinal`, recorded (with the
  // device sheet as JSON) on first use.
  std::int64_t cpu_device_id();
  std::int64_t gpu_device_id(int ordinal);
  // Progress messages on stderr (not with --quiet, --json or --csv).
  void status(const std::string& line) const;
  bool interactive() const;

 private:
  GlobalOptions& opts_;
  std::string command_;
  bool stores_;
  std::unique_ptr<store::Db> db_;
  std::int64_t run_id_ = 0;
  std::optional<std::int64_t> cpu_id_;
  std::vector<std::pair<int, std::int64_t>> gpu_ids_;
};

class Command {
 public:
  virtual ~Command() = default;
  virtual const char* name() const = 0;
  virtual const char* summary() const = 0;
  // Adds this command's options to its CLI11 subcommand.
  virtual void configure(CLI::App& sub) = 0;
  virtual Report run(Invocation& ctx) = 0;
  // Whether the command writes to the results store (which it then opens for
  // writing; readers open it read-only).
  virtual bool stores_results() const { return true; }
  // Whether a storing command is itself recorded as a run (`import` writes
  // other runs and records none of its own, so a refused import leaves the
  // store as it was).
  virtual bool records_run() const { return true; }
  // The process's exit code after a successful run() (`profile` passes on the
  // profiled program's).
  virtual int exit_code() const { return 0; }
};

using CommandFactory = std::unique_ptr<Command> (*)();
struct Registry {
  static bool add(CommandFactory f);
  static std::vector<std::unique_ptr<Command>> create_all();
  // A fresh instance of the command called `name`, or nullptr.
  static std::unique_ptr<Command> create(const std::string& name);
};

// The whole command line as main() parses it: the global options and one
// subcommand per registered command. The fuzz target of the option parsing
// (fuzz/cli_fuzzer.cpp) parses with the same object.
struct CommandLine {
  CLI::App app;
  std::vector<std::unique_ptr<Command>> commands;
  std::vector<std::pair<CLI::App*, Command*>> subs;
  // The first word that is not an option (or --db's value) must name a
  // command: Error(Usage) naming the commands otherwise (plainer than CLI11's).
  void check_command_word(const std::vector<std::string>& args) const;
  // After parsing: the command the line chose, or nullptr.
  Command* chosen() const;
};
std::unique_ptr<CommandLine> make_command_line(GlobalOptions& opts);

// Runs another command inside this invocation (same run in the store, same
// device rows), as if `roofline NAME ARGS...` had been typed: `analyze` is
// such a composition. Throws a usage Error when ARGS do not parse.
Report run_subcommand(Invocation& ctx, const std::string& name, const std::vector<std::string>& args);

#define ROOFLINE_COMMAND(Class)                                                 \
  namespace {                                                                   \
  const bool registered_##Class = ::roofline::cli::Registry::add(              \
      []() -> std::unique_ptr<::roofline::cli::Command> { return std::make_unique<Class>(); }); \
  }

// Validators for numeric options, with plain messages (CLI11's own range
// checks print the double's whole range, 309 digits). whole_number refuses
// what is not an integer from `min` up to `max`, a sign included: "-1" given to
// an unsigned option would otherwise wrap to 18446744073709551615.
CLI::Validator whole_number(std::int64_t min, std::int64_t max = std::numeric_limits<std::int64_t>::max());

// Writes a command's output file (a chart, a report page) whole; throws
// Error(Input) naming the path, with the hint to pass --out a writable folder.
void write_output_file(const std::string& path, const std::string& text);
// A finite number greater than zero.
CLI::Validator positive_number();
// A finite number of zero or more.
CLI::Validator non_negative_number();

// Devices named by --device: "cpu", "gpu" (every GPU), "gpu:N", "all", or a
// comma-separated list of those. Throws a usage Error for anything else.
struct DeviceChoice {
  bool cpu = false;
  std::vector<int> gpus;  // ordinals
  bool all_gpus = false;  // "gpu" or "all": every GPU present (possibly none)
};
DeviceChoice parse_devices(const std::string& spec);
// The GPU ordinals the choice names, given how many GPUs are present. GPUs
// named explicitly but absent throw Error(Device); "gpu"/"all" with none
// present return an empty list (the caller reports GPU parts as unavailable).
std::vector<int> resolve_gpus(const DeviceChoice& choice);

}  // namespace roofline::cli
