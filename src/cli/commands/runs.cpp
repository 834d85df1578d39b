// roofline runs: what the results store holds.
#include "src/cli/command.hpp"
#include "roofline/store/results.hpp"

namespace roofline::cli {

class RunsCommand : public Command {
 public:
  const char* name() const override { return "runs"; }
  const char* summary() const override { return "list the runs kept in the results database"; }
  bool stores_results() const override { return false; }
  void configure(CLI::App& sub) override {
    sub.add_option("-n,--limit", limit_, "how many runs to list, newest first")->check(whole_number(1));
    sub.add_option("--command", command_, "only runs of this command (e.g. ceilings)");
  }
  Report run(Invocation& ctx) override {
    Report r("runs");
    Table& t = r.add(Table("runs", "Runs in " + ctx.db().path()));
    t.col("id", "Run")
        .col("started_at", "Started (UTC)")
        .col("command", "Command")
        .col("status", "Status")
        .col("measurements", "Results")
        .col("devices", "Devices", "", -1, 48)
        .col("version", "Version")
        .col("argv", "Command line", "", -1, 60);
    for (const auto& row : store::list_runs(ctx.db(), limit_, command_))
      t.row({row.id, row.started_at, row.command, row.status, row.measurements, row.devices, row.version, row.argv});
    return r;
  }

 private:
  int limit_ = 20;
  std::string command_;
};

ROOFLINE_COMMAND(RunsCommand)

}  // namespace roofline::cli
