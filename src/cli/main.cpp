// roofline: how fast a neural network runs, why, and how far that is from
// what the hardware allows. See README.md.
#include <CLI/CLI.hpp>

#include <iostream>

#include "src/cli/command.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/json_text.hpp"
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

  auto line = cli::make_command_line(opts);
  CLI::App& app = line->app;
  try {
    line->check_command_word(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const Error& e) {
    print_error(e);
    return e.exit_code();
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

  cli::Command* chosen = line->chosen();
  if (!chosen) return 2;

  cli::Invocation ctx(opts, chosen->name(), chosen->stores_results());
  try {
    if (ctx.stores() && chosen->records_run()) ctx.run_id();  // open the store and record the run before working
    Report report = chosen->run(ctx);
    if (ctx.has_run()) {
      store::finish_run(ctx.db(), ctx.run_id(), 0);
      report.set_run_id(ctx.run_id());
      store::save_run_report(ctx.db(), ctx.run_id(), json_text(to_json(report)));  // roofline report RUN_ID
    }
    render(report, opts.format(), std::cout, opts.text_width());
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
