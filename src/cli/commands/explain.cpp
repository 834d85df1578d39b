// roofline explain NAME...: what a GPU kernel's name says (library,
// operation, architecture, data types, tensor cores, tiles, layouts, split-K),
// each field with the token it was read from. Stores nothing.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "src/cli/command.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/profiler/explain.hpp"
#include "roofline/profiler/profile_data.hpp"

namespace roofline::cli {

namespace {

std::vector<std::string> read_names(const std::string& path) {
  std::vector<std::string> names;
  auto take = [&](std::istream& in) {
    std::string line;
    while (std::getline(in, line)) {
      std::string t = trim(line);
      if (!t.empty() && t[0] != '#') names.push_back(t);
    }
  };
  if (path == "-") {
    take(std::cin);
  } else {
    std::ifstream in(path);
    if (!in)
      throw_input("cannot read '" + path + "'", "give a text file with one kernel name per line, or - for stdin");
    take(in);
  }
  return names;
}

std::vector<std::string> names_from_profile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_input("cannot read '" + path + "'", "give the JSON file a profile was written to");
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw_input("'" + path + "' is not JSON: " + e.what(), "give the JSON file a profile was written to");
  }
  prof::ProfileData p;
  try {
    p = prof::ProfileData::from_json(j);
  } catch (const nlohmann::json::exception& e) {
    throw_input("'" + path + "' is not a roofline profile: " + e.what(), "give the JSON file a profile was written to");
  }
  // Longest total time first, each name once.
  std::map<std::string, double> total;
  for (const auto& [key, k] : p.kernels) total[k.demangled.empty() ? k.name : k.demangled] += k.duration.total();
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [n, t] : total) order.emplace_back(-t, n);
  std::sort(order.begin(), order.end());
  std::vector<std::string> names;
  for (const auto& [t, n] : order) names.push_back(n);
  return names;
}

}  // namespace

class ExplainCommand : public Command {
 public:
  const char* name() const override { return "explain"; }
  const char* summary() const override {
    return "decode GPU kernel names (cuBLAS, cuDNN, CUTLASS, PyTorch, NCCL, Triton, ...): what each part means";
  }
  bool stores_results() const override { return false; }
  void configure(CLI::App& sub) override {
    sub.add_option("names", names_, "kernel names, mangled or demangled (quote them)");
    sub.add_flag("--full", full_, "show full names (demangled and as given) instead of short ones");
    sub.add_option("--from-file", file_, "read kernel names from a file, one per line ('-' for stdin)");
    sub.add_option("--from-json", profile_, "explain every kernel of a profile JSON file (ProfileData)");
    sub.add_flag("--summary", summary_only_, "one line per kernel, no per-kernel tables");
  }

  Report run(Invocation& ctx) override {
    std::vector<std::string> names = names_;
    if (!file_.empty())
      for (auto& n : read_names(file_)) names.push_back(n);
    if (!profile_.empty())
      for (auto& n : names_from_profile(profile_)) names.push_back(n);
    if (names.empty() && file_.empty() && profile_.empty())
      throw_usage("no kernel name given",
                  "roofline explain 'ampere_sgemm_32x32_sliced1x4_tn' (or --from-file, --from-json)");
    for (const auto& n : names)
      if (trim(n).empty()) throw_usage("a kernel name is empty", "pass the kernel name as a quoted argument");

    const bool text = ctx.options().format() == Format::Text;
    Report r("explain");
    std::vector<prof::KernelInfo> infos;
    for (const auto& n : names) infos.push_back(prof::explain_kernel(n));

    if (infos.size() > 1 || summary_only_) {
      Table& t = r.add(Table("kernels", "Kernels"));
      t.col("name", "Kernel", "", -1, full_ ? 0 : 64)
          .col("library", "Library")
          .col("operation", "Operation", "", -1, 40)
          .col("arch", "Arch")
          .col("types", "Types", "", -1, 36)
          .col("tensor_cores", "Tensor cores");
      for (const auto& k : infos) {
        const auto* ty = k.field("types");
        t.row({full_ ? k.demangled : prof::shorten_kernel_name(k.name, 64),
               k.recognised ? (k.library.empty() ? std::string("-") : k.library) : std::string("not recognised"),
               k.field("operation") ? k.field("operation")->value : std::string("-"),
               k.arch.empty() ? std::string("-") : k.arch, ty ? ty->value : std::string("-"),
               k.tensor_cores == prof::TensorCores::Unknown && !k.is_matmul_like() && k.op != prof::KernelOp::Attention
                   ? std::string("-")
                   : std::string(prof::to_string(k.tensor_cores))});
      }
    }
    if (summary_only_) return r;

    for (size_t i = 0; i < infos.size(); ++i) {
      const auto& k = infos[i];
      std::string title = full_ ? k.demangled : prof::shorten_kernel_name(k.name, 100);
      Table t("kernel_" + std::to_string(i + 1), title, Table::Layout::Properties);
      t.col("key", "Key").col("property", "Property").col("value", "Value").col("evidence", "From");
      t.row({std::string("name"), std::string("Name"), k.name, std::string()});
      if (full_ && k.demangled != k.name)
        t.row({std::string("demangled"), std::string("Demangled"), k.demangled, std::string()});
      t.row({std::string("summary"), std::string("What it is"), k.sentence, std::string()});
      t.row({std::string("recognised"), std::string("Recognised"), k.recognised, std::string()});
      for (const auto& f : k.fields) {
        std::string ev = f.evidence;
        if (text && !ev.empty()) ev = "(from \"" + ev + "\")";
        t.row({f.key, f.label, f.value, ev});
      }
      for (const auto& n : k.notes) t.note(n);
      r.add(std::move(t));
    }
    return r;
  }

 private:
  std::vector<std::string> names_;
  std::string file_, profile_;
  bool full_ = false, summary_only_ = false;
};

ROOFLINE_COMMAND(ExplainCommand)

}  // namespace roofline::cli
