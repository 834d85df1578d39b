// The PyTorch peer: peers/pytorch_bench.py runs the same models, data,
// batches, optimiser and initialisation scheme in PyTorch eager and prints
// JSON on stdout; its progress goes to stderr, which we pass through.
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <limits>

#include "roofline/core/env.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/engine/bench.hpp"

namespace roofline::engine {

namespace {
bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string exe_dir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<size_t>(n));
  return p.substr(0, p.find_last_of('/'));
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

template <class T>
std::string list(const std::vector<T>& v) {
  std::vector<std::string> s;
  for (const auto& x : v) s.push_back(fmt::format("{}", x));
  return join(s, ",");
}
}  // namespace

std::string find_peer_script(const std::string& hint, const std::string& rel) {
  if (!hint.empty()) {
    if (!exists(hint)) throw_usage(fmt::format("peer script {} does not exist", hint), "check --peer-script");
    return hint;
  }
  // $ROOFLINE_PEER_SCRIPT names the small models' script; the others sit beside it.
  if (auto path = env::get(env::Var::PeerScript); path && exists(*path)) {
    const std::string name = rel.substr(rel.find_last_of('/') + 1);
    const size_t slash = path->find_last_of('/');
    const std::string sibling = (slash == std::string::npos ? std::string() : path->substr(0, slash + 1)) + name;
    if (exists(sibling)) return sibling;
  }
  for (const std::string& dir : {std::string("."), exe_dir() + "/../..", exe_dir() + "/.."})
    if (exists(dir + "/" + rel)) return dir + "/" + rel;
  throw_unsupported("cannot find the PyTorch peer script " + rel,
                    "run from the repository root, or pass --peer-script PATH");
}

std::vector<BenchRecord> parse_peer_json(const nlohmann::json& j, const std::string& peer) {
  std::vector<BenchRecord> out;
  if (!j.contains("results") || !j["results"].is_array())
    throw Error(ErrorKind::Input, "the peer's output has no \"results\" list",
                "run the peer script by hand to see why");
  for (const auto& x : j["results"]) {
    BenchRecord r;
    r.source = peer;
    r.device = x.at("device").get<std::string>();
    r.model = x.at("model").get<std::string>();
    r.batch = x.at("batch").get<std::int64_t>();
    r.trained = x.value("trained", true);
    r.epochs = x.value("epochs", 0);
    r.steps = x.value("steps", std::int64_t{0});
    r.train_seconds = x.value("train_seconds", 0.0);
    r.epoch_seconds = x.value("epoch_seconds", std::vector<double>{});
    r.test_loss = x.value("test_loss", 0.0);
    r.test_accuracy = x.value("test_accuracy", 0.0);
    r.infer_median_s = x.value("infer_median_s", 0.0);
    r.infer_iqr_s = x.value("infer_iqr_s", 0.0);
    if (x.contains("first_losses") && x["first_losses"].is_array())
      for (const auto& v : x["first_losses"])  // null: a non-finite loss (JSON has no NaN)
        r.first_losses.push_back(v.is_number() ? v.get<float>() : std::numeric_limits<float>::quiet_NaN());
    r.diverged = x.value("diverged", std::string());
    r.test_predictions = x.value("test_predictions", std::vector<std::int64_t>{});
    r.busy_note = "not measured for the peer";
    r.params = x.value("params", nlohmann::json::object());
    if (j.contains("torch")) r.params["torch"] = j["torch"];
    if (j.contains("device_name")) r.params["device_name"] = j["device_name"];
    out.push_back(r);
  }
  return out;
}

nlohmann::json run_peer_command(const std::string& cmd) {
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw_unsupported("cannot start python3 for the PyTorch peer", "install python3 with PyTorch");
  std::string text;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  int status = ::pclose(p);
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  if (rc == 127)
    throw_unsupported("python3 is not installed, so the PyTorch peer cannot run",
                      "install python3 and PyTorch, or leave out --peer");
  if (rc == 3)
    throw_unsupported("PyTorch is not installed for python3, so the PyTorch peer cannot run (the peer said so above)",
                      "pip install torch, or leave out --peer");
  if (rc != 0)
    throw Error(ErrorKind::Internal,
                fmt::format("the PyTorch peer failed (exit status {}); its messages are above", rc),
                "run the command by hand: " + cmd);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Input, fmt::format("the PyTorch peer printed something that is not JSON: {}", e.what()),
                "run the command by hand: " + cmd);
  }
  return j;
}

std::vector<BenchRecord> run_peer(const BenchConfig& cfg, const std::string& data_dir) {
  if (cfg.peer != "pytorch")
    throw_usage(fmt::format("unknown peer '{}'", cfg.peer), "the only peer is pytorch (--peer pytorch)");
  const std::string script = find_peer_script(cfg.peer_script);
  std::vector<std::string> devices, modes;
  if (cfg.cpu) devices.push_back("cpu");
  if (cfg.gpu) devices.push_back("gpu");
  if (cfg.train) modes.push_back("train");
  if (cfg.infer) modes.push_back("infer");
  const TrainOptions& o = cfg.train_options;
  std::string cmd = fmt::format(
      "python3 {} --models {} --devices {} --modes {} --batches {} --epochs {} --max-steps {} --data {} --lr {} "
      "--momentum {} --weight-decay {} --seed {} --infer-reps {}{}",
      quote(script), quote(join(cfg.models, ",")), join(devices, ","), join(modes, ","), list(cfg.batches), o.epochs,
      o.max_steps, quote(data_dir), o.sgd.lr, o.sgd.momentum, o.sgd.weight_decay, o.seed, o.infer_reps,
      cfg.keep_going ? " --keep-going" : "");
  return parse_peer_json(run_peer_command(cmd), "pytorch");
}

}  // namespace roofline::engine
