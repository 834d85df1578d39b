// roofline import FILE: another machine's results store into this one
// (store/import.hpp), so compare, chart and report see both machines.
#include <fmt/format.h>

#include "roofline/core/strings.hpp"
#include "roofline/store/import.hpp"
#include "src/cli/command.hpp"

namespace roofline::cli {

class ImportCommand : public Command {
 public:
  const char* name() const override { return "import"; }
  const char* summary() const override {
    return "copy another roofline store's runs (an H100's, a colleague's) into this one, each with its devices";
  }
  bool records_run() const override { return false; }
  void configure(CLI::App& sub) override {
    sub.add_option("file", file_, "the other store (roofline.db of another machine); read, never written")
        ->required();
  }
  Report run(Invocation& ctx) override {
    const store::ImportResult res = store::import_store(ctx.db(), file_);
    Report r("import");
    Table& t = r.add(Table("import", fmt::format("Imported from {} into {}", file_, ctx.db().path())));
    t.col("table", "Table").col("rows", "Rows added");
    for (const auto& [table, n] : res.rows)
      if (n > 0) t.row({table, n});
    if (res.runs_skipped > 0)
      t.note(fmt::format("{} runs were already here (same start, host and command line) and were left out",
                         res.runs_skipped));
    if (!res.devices.empty()) t.note("devices imported: " + join(res.devices, ", "));
    if (res.rows.count("runs") && res.rows.at("runs") == 0) r.info("nothing new: every run of the file is already here");
    return r;
  }

 private:
  std::string file_;
};

ROOFLINE_COMMAND(ImportCommand)

}  // namespace roofline::cli
