#include "src/cli/command.hpp"

#include <fstream>

#include <unistd.h>

#include <iostream>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

#include "roofline/build_info.hpp"
#include "roofline/core/env.hpp"
#include "roofline/core/json_text.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/hardware/cpu_info.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/store/results.hpp"

namespace roofline::cli {

namespace {
std::vector<CommandFactory>& factories() {
  static std::vector<CommandFactory> f;
  return f;
}
}  // namespace

bool Registry::add(CommandFactory f) {
  factories().push_back(f);
  return true;
}

std::vector<std::unique_ptr<Command>> Registry::create_all() {
  std::vector<std::unique_ptr<Command>> out;
  for (auto f : factories()) out.push_back(f());
  return out;
}

std::unique_ptr<Command> Registry::create(const std::string& name) {
  for (auto f : factories()) {
    auto c = f();
    if (name == c->name()) return c;
  }
  return nullptr;
}

std::unique_ptr<CommandLine> make_command_line(GlobalOptions& opts) {
  auto line = std::make_unique<CommandLine>();
  CLI::App& app = line->app;
  app.description(
      "roofline: how fast your neural network runs on this GPU or CPU, why, and how far that is from what the "
      "hardware allows");
  app.set_version_flag("--version", std::string(build::kVersion) + " (" + build::kGitSha + ", CUDA " +
                                        (build::kHaveCuda ? "enabled" : "disabled") + ")");
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("--db", opts.db, "results database (default: $ROOFLINE_DB or ./roofline.db)");
  auto* json = app.add_flag("--json", opts.json, "print results as JSON");
  app.add_flag("--csv", opts.csv, "print results as CSV")->excludes(json);
  app.add_flag("-q,--quiet", opts.quiet, "no progress messages");
  app.add_option("--width", opts.width,
                 "text tables' most columns: wider ones shorten their text columns, then split (0: no limit; "
                 "default: the terminal's width, at most 120, and no limit when the output is not a terminal)")
      ->check(CLI::Range(0, 100000));
  line->commands = Registry::create_all();
  for (auto& c : line->commands) {
    CLI::App* sub = app.add_subcommand(c->name(), c->summary());
    c->configure(*sub);
    line->subs.emplace_back(sub, c.get());
  }
  // The ROOFLINE_* variables a user or developer may set, under `roofline --help`
  // only (set after the commands, which would otherwise inherit it).
  app.footer(env::help_text());
  return line;
}

void CommandLine::check_command_word(const std::vector<std::string>& args) const {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") return;
    if (a == "--db" || a == "--width") {  // global options with a value
      ++i;
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    std::string names;
    for (const auto& [sub, cmd] : subs) {
      if (a == cmd->name()) return;
      names += names.empty() ? cmd->name() : std::string(", ") + cmd->name();
    }
    throw Error(ErrorKind::Usage, "unknown command '" + a + "'",
                "the commands are: " + names + " (roofline --help describes them)");
  }
}

Command* CommandLine::chosen() const {
  for (const auto& [sub, cmd] : subs)
    if (sub->parsed()) return cmd;
  return nullptr;
}

void write_output_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) throw Error(ErrorKind::Input, "could not write " + path, "use --out with a writable folder");
}

CLI::Validator whole_number(std::int64_t min, std::int64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        std::int64_t v = 0;
        const char* end = text.data() + text.size();
        auto [p, ec] = std::from_chars(text.data(), end, v);
        if (ec == std::errc::result_out_of_range || (ec == std::errc() && p == end && (v < min || v > max)))
          return max == std::numeric_limits<std::int64_t>::max()
                     ? fmt::format("{} is not allowed: give a whole number of {} or more", text, min)
                     : fmt::format("{} is not allowed: give a whole number from {} to {}", text, min, max);
        if (ec != std::errc() || p != end || text.empty())
          return fmt::format("'{}' is not a whole number", text);
        return {};
      },
      max == std::numeric_limits<std::int64_t>::max() ? fmt::format("INT>={}", min)
                                                       : fmt::format("INT in [{}, {}]", min, max));
}

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size()) return fmt::format("'{}' is not a number", text);
        if (!(v > 0) || !std::isfinite(v)) return fmt::format("{} is not allowed: give a number greater than 0", text);
        return {};
      },
      "NUMBER>0");
}

CLI::Validator non_negative_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size()) return fmt::format("'{}' is not a number", text);
        if (!(v >= 0) || !std::isfinite(v)) return fmt::format("{} is not allowed: give a number of 0 or more", text);
        return {};
      },
      "NUMBER>=0");
}

Report run_subcommand(Invocation& ctx, const std::string& name, const std::vector<std::string>& args) {
  auto cmd = Registry::create(name);
  ROOFLINE_ASSERT(cmd != nullptr, "no command named " + name);
  CLI::App app{cmd->summary(), name};
  cmd->configure(app);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw_usage(fmt::format("roofline {} {}: {}", name, join(args, " "), e.what()));
  }
  return cmd->run(ctx);
}

Invocation::Invocation(GlobalOptions& opts, std::string command, bool stores)
    : opts_(opts), command_(std::move(command)), stores_(stores) {}

Invocation::~Invocation() = default;

store::Db& Invocation::db() {
  // Commands that store open it for writing (creating and migrating it);
  // readers open it read-only, so listing or charting a store never changes
  // it, and a mistyped path is said rather than created.
  if (!db_)
    db_ = std::make_unique<store::Db>(store::Db::resolve_path(opts_.db),
                                      stores_ ? store::Db::Mode::ReadWrite : store::Db::Mode::ReadOnly);
  return *db_;
}

std::int64_t Invocation::run_id() {
  if (run_id_ == 0) run_id_ = store::begin_run(db(), {command_, opts_.argv});
  return run_id_;
}

std::int64_t Invocation::cpu_device_id() {
  if (!cpu_id_) {
    hw::CpuInfo c = hw::query_cpu();
    cpu_id_ = store::record_device(db(), run_id(), {"cpu", 0, c.model_name, "", json_text(c.to_json())});
  }
  return *cpu_id_;
}

std::int64_t Invocation::gpu_device_id(int ordinal) {
  for (auto& [o, id] : gpu_ids_)
    if (o == ordinal) return id;
  hw::GpuInfo g = hw::query_gpu(ordinal);
  std::int64_t id = store::record_device(db(), run_id(), {"gpu", ordinal, g.name, g.uuid, json_text(g.to_json())});
  gpu_ids_.emplace_back(ordinal, id);
  return id;
}

bool Invocation::interactive() const { return !opts_.quiet && !opts_.json && !opts_.csv; }

void Invocation::status(const std::string& line) const {
  if (!interactive()) return;
  std::cerr << printable(line, true) << std::endl;
}

DeviceChoice parse_devices(const std::string& spec) {
  DeviceChoice c;
  for (const auto& raw : split(spec, ',')) {
    std::string p = to_lower(trim(raw));
    if (p == "cpu") c.cpu = true;
    else if (p == "gpu" || p == "cuda") c.all_gpus = true;
    else if (p == "all") {
      c.cpu = true;
      c.all_gpus = true;
    } else if (starts_with(p, "gpu:") || starts_with(p, "cuda:")) {
      std::string n = p.substr(p.find(':') + 1);
      std::int64_t idx = -1;
      try {
        idx = parse_int(n, "GPU number");
      } catch (const Error&) {
        idx = -1;
      }
      if (idx < 0)
        throw_usage(fmt::format("unknown device '{}': the GPU number must be 0 or more", raw),
                    "use --device cpu, gpu, gpu:N or all");
      c.gpus.push_back(static_cast<int>(idx));
    } else {
      throw_usage(fmt::format("unknown device '{}'", raw), "use --device cpu, gpu, gpu:N or all (comma-separated)");
    }
  }
  if (!c.cpu && !c.all_gpus && c.gpus.empty()) throw_usage("--device is empty", "use --device cpu, gpu, gpu:N or all");
  return c;
}

std::vector<int> resolve_gpus(const DeviceChoice& choice) {
  int n = cuda::gpu_count();
  std::vector<int> out;
  if (choice.all_gpus)
    for (int i = 0; i < n; ++i) out.push_back(i);
  for (int g : choice.gpus) {
    cuda::require_gpu(g);
    bool seen = false;
    for (int o : out) seen |= o == g;
    if (!seen) out.push_back(g);
  }
  return out;
}

}  // namespace roofline::cli
