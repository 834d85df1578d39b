// roofline: how fast a neural network runs, why, and how far that is from
// what the hardware allows. See README.md.
#include <CLI/CLI.hpp>

#include <iostream>

#include "src/cli/command.hpp"
#include "roofline/build_info.hpp"
#include "roofline/core/env.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/store/results.hpp"

using namespace roofline;

namespace {

void print_error(const Error& e) {
  std::cerr << "roofline: error: " << printable(e.what(), true) << '\n';
  if (!e.hint().empty()) std::cerr << "  what to do: " << printable(e.hint(), true) << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  cli::GlobalOptions opts;
  for (int i = 0; i < argc; ++i) opts.argv.emplace_back(argv[i]);

  CLI::App app{"roofline: how fast your neural network runs on this GPU or CPU, why, and how far that is from what "
               "the hardware allows"};
  app.set_version_flag("--version", std::string(build::kVersion) + " (" + build::kGitSha + ", CUDA " +
                                        (build::kHaveCuda ? "enabled" : "disabled") + ")");
  app.require_subcommand(1);
  app.fallthrough();
  app.add_option("--db", opts.db, "results database (default: $ROOFLINE_DB or ./roofline.db)");
  auto* json = app.add_flag("--json", opts.json, "print results as JSON");
  app.add_flag("--csv", opts.csv, "print results as CSV")->excludes(json);
  app.add_flag("-q,--quiet", opts.quiet, "no progress messages");

  auto commands = cli::Registry::create_all();
  std::vector<std::pair<CLI::App*, cli::Command*>> subs;
  for (auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c->name(), c->summary());
    c->configure(*sub);
    subs.emplace_back(sub, c.get());
  }
  // The ROOFLINE_* variables a user or developer may set, under `roofline --help`
  // only (set after the commands, which would otherwise inherit it).
  app.footer(env::help_text());

  // The first word that is not an option (or --db's value) names the command:
  // say plainly when it is not one, instead of CLI11's generic message.
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") break;
    if (a == "--db") {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    bool known = false;
    std::string names;
    for (auto& [sub, cmd] : subs) {
      known |= a == cmd->name();
      names += names.empty() ? cmd->name() : std::string(", ") + cmd->name();
    }
    if (!known) {
      print_error(Error(ErrorKind::Usage, "unknown command '" + a + "'",
                        "the commands are: " + names + " (roofline --help describes them)"));
      return 2;
    }
    break;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const Error& e) {
    print_error(e);
    return e.exit_code();
  }

  cli::Command* chosen = nullptr;
  for (auto& [sub, cmd] : subs)
    if (sub->parsed()) chosen = cmd;
  if (!chosen) return 2;

  cli::Invocation ctx(opts, chosen->name(), chosen->stores_results());
  try {
    if (ctx.stores()) ctx.run_id();  // open the store and record the run before working
    Report report = chosen->run(ctx);
    if (ctx.has_run()) {
      store::finish_run(ctx.db(), ctx.run_id(), 0);
      report.set_run_id(ctx.run_id());
    }
    render(report, opts.format(), std::cout);
    return chosen->exit_code();
  } catch (const Error& e) {
    print_error(e);
    if (ctx.has_run() && e.kind() != ErrorKind::Store) {
      try {
        store::finish_run(ctx.db(), ctx.run_id(), e.exit_code(), e.what());
      } catch (const Error&) {
      }
    }
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "roofline: internal error: " << printable(e.what(), true) << '\n';
    if (ctx.has_run()) {
      try {
        store::finish_run(ctx.db(), ctx.run_id(), 1, e.what());
      } catch (const Error&) {
      }
    }
    return 1;
  }
}
