// The network bench's ImageFolder data (--data): the folders, the CPU half of
// the InputStager (its GPU half: input_stager_gpu.cpp), the data-fed timing
// loop, a cell's data params and the report's verdicts. net_data.hpp.
#include "src/engine/bench/net_data.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>

#include "roofline/core/error.hpp"
#include "roofline/core/stats.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::engine {

namespace {

// A cell whose wait for images is more than this share of its step is data-bound.
constexpr double kDataBoundShare = 0.05;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// 2100.4 -> "2,100"
std::string thousands(double v) {
  std::string digits = fmt::format("{:.0f}", std::max(0.0, v)), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

NetData open_net_data(const NetBenchConfig& cfg, std::int64_t max_classes) {
  NetData d;
  d.dir = cfg.data;
  if (!is_dir(cfg.data))
    throw_input(fmt::format("--data {}: no such folder", cfg.data),
                "give an ImageFolder: DIR/<class>/*.jpg, or DIR/train/<class>/*.jpg and DIR/val/<class>/*.jpg");
  const std::string train_dir = cfg.data + "/train", val_dir = cfg.data + "/val";
  const bool has_train = is_dir(train_dir), has_val = is_dir(val_dir);
  // train/ and val/: each mode its own; one of them alone: both modes read it; neither: DIR is the ImageFolder.
  const bool want_train = cfg.train || (has_val && !has_train);
  const bool want_val = cfg.infer && has_val;
  if (!has_train && !has_val) {
    d.train = scan_image_folder(cfg.data);
  } else {
    if (want_train || !has_val) d.train = scan_image_folder(has_train ? train_dir : val_dir);
    if (want_val || !d.train) d.val = scan_image_folder(val_dir);
    if (has_train && d.train && d.val) check_same_classes(*d.train, *d.val);
  }
  for (const auto* f : {&d.train, &d.val})
    if (*f && static_cast<std::int64_t>((*f)->classes.size()) > max_classes)
      throw_input(fmt::format("--data {}: {} classes, more than the networks' {} outputs", (*f)->root,
                              (*f)->classes.size(), max_classes),
                  fmt::format("use a folder of at most {} class subfolders (ImageNet's), e.g. a subset of them",
                              max_classes));
  return d;
}

// ---------------------------------------------------------------------------
// InputStager: the CPU half
// ---------------------------------------------------------------------------
InputStager::InputStager(GraphNetwork& net, const ImageFolder& folder, bool training, int threads,
                         std::uint64_t seed)
    : net_(net) {
  const Shape& s = net.graph().input_shape();
  ROOFLINE_ASSERT(s.size() == 3 && s[0] == 3 && s[1] == s[2], "ImageFolder data feeds (3, n, n) inputs");
  batch_ = net.max_batch();
  x_floats_ = batch_ * numel(s);
  LoaderConfig c;
  c.batch = batch_;
  c.transform.train = training;
  c.transform.crop = s[1];
  c.transform.resize = std::max<std::int64_t>(s[1], s[1] * 256 / 224);  // 256 for 224, torchvision's ratio
  c.transform.format = net.format();  // the layout input() has: no transpose after the loader
  c.threads = threads;
  c.seed = seed;
  c.shuffle = training;  // inference reads the folder in order, as an evaluation loop does
  if (net.context().is_cuda()) {
    gpu_ = make_gpu(net, x_floats_);
    c.alloc = &InputStager::pinned_alloc;
    c.free = &InputStager::pinned_free;
  }
  loader_ = std::make_unique<ImageFolderLoader>(folder, std::move(c));
}

InputStager::~InputStager() {
  if (gpu_) {
    try {
      gpu_drain();
    } catch (...) {  // a failed CUDA call was reported where it happened; freeing must go on
    }
  }
  loader_.reset();  // frees the pinned buffers, no copy reading them any more
}

void InputStager::prefetch() {
  if (gpu_) gpu_prefetch();
}

void InputStager::load() {
  if (gpu_) return gpu_load();
  held_ = loader_->next_view();
  std::memcpy(net_.input(), held_.x, static_cast<size_t>(x_floats_) * sizeof(float));
  std::memcpy(net_.labels(), held_.y, static_cast<size_t>(batch_) * sizeof(std::int32_t));
  ++loaded_;
}

void InputStager::step_begin() {
  if (gpu_) return gpu_step(true);
  cpu_begin_s_ = now_s();
}

void InputStager::step_end() {
  if (gpu_) return gpu_step(false);
  cpu_end_s_ = now_s();
}

double InputStager::step_seconds() { return gpu_ ? gpu_step_seconds() : cpu_end_s_ - cpu_begin_s_; }

size_t InputStager::staging_bytes() const {
  return gpu_ ? 2 * static_cast<size_t>(x_floats_ * 4 + batch_ * 4) : 0;
}

// ---------------------------------------------------------------------------
// The timing loop and what it records
// ---------------------------------------------------------------------------
DataTiming run_data_steps(InputStager& s, const std::function<void()>& step, int warmup, int steps) {
  DataTiming t;
  s.prefetch();                // batch 1 (batch 0 is in input() already)
  std::vector<double> starts;  // of the timed steps, then the end of the last
  for (int k = 0; k < warmup + steps; ++k) {
    if (k == warmup) t.before = s.stats();
    if (k >= warmup) starts.push_back(now_s());
    s.load();
    s.step_begin();
    step();
    s.step_end();
    s.prefetch();  // the next batch: the wait for it and its copy, while this step runs on the GPU
    const double device = s.step_seconds();
    if (k >= warmup) t.device.push_back(device);
  }
  starts.push_back(now_s());
  for (size_t i = 0; i + 1 < starts.size(); ++i) t.intervals.push_back(starts[i + 1] - starts[i]);
  t.after = s.stats();
  t.wall_s = starts.back() - starts.front();
  return t;
}

double data_stall_share(double wait_s, double step_s, double device_s) {
  // A wait while the GPU still ran the previous step costs nothing: what held
  // the step back is at most the time it took beyond the device's own.
  const double stall = std::min(wait_s, std::max(0.0, step_s - device_s));
  return step_s > 0 ? stall / step_s : 0.0;
}

bool data_bound(double stall_share) { return stall_share > kDataBoundShare; }

void describe_data(NetRecord& r, const NetData& data, const ImageFolder& folder, const InputStager& s,
                   const DataTiming& t) {
  const double steps = static_cast<double>(std::max<size_t>(1, t.intervals.size()));
  const double wait = (t.after.wait_s - t.before.wait_s) / steps;
  const double decoded = static_cast<double>(t.after.decoded - t.before.decoded);
  const double busy = t.after.busy_s - t.before.busy_s;
  const double share = data_stall_share(wait, mean(t.intervals), mean(t.device));
  nlohmann::json bad = nlohmann::json::array();
  for (const auto& b : t.after.bad_examples) bad.push_back(b);
  r.params["data"] = data.dir;
  r.params["data_folder"] = folder.root;
  r.params["data_images"] = folder.size();
  r.params["data_classes"] = folder.classes.size();
  r.params["data_threads"] = t.after.threads;
  r.params["data_wait_ms"] = wait * 1e3;
  r.params["data_stall_share"] = share;
  r.params["data_bound"] = data_bound(share);
  r.params["device_step_ms"] = summarize(t.device).median * 1e3;
  r.params["loader_images_per_s"] = t.wall_s > 0 ? decoded / t.wall_s : 0.0;
  r.params["loader_capacity_images_per_s"] = busy > 0 ? decoded * t.after.threads / busy : 0.0;
  r.params["bad_files"] = t.after.bad_files;
  r.params["skipped"] = t.after.skipped;
  r.params["bad_examples"] = bad;
  r.params["other_images"] = folder.other_images;
  if (s.staging_bytes() > 0) r.params["data_staging_bytes"] = s.staging_bytes();
}

std::string net_data_note(const NetBenchConfig& cfg) {
  if (cfg.data.empty()) return {};
  return fmt::format("data: the JPEGs of {} (ImageFolder; training cells train/, inference cells val/ when it has "
                     "both), decoded and augmented by --data-threads while the steps run; each step timed from its "
                     "start to the next, waiting for images included. The peer (PyTorch) runs synthetic data.",
                     cfg.data);
}

void add_net_data_warnings(Report& report, const std::vector<NetRecord>& records) {
  std::vector<std::string> folders_told;
  for (const auto& r : records) {
    if (r.source != "roofline" || !r.params.contains("data_wait_ms")) continue;
    const auto& p = r.params;
    const std::string cell = fmt::format("{} {} {} b{} {}", r.model, r.device, r.precision, r.batch, r.mode);
    if (p.value("data_bound", false)) {
      const double device_s = p.value("device_step_ms", 0.0) * 1e-3;
      report.warn(fmt::format(
          "{}: the data pipeline sets the pace: {:.0f}% of each step waiting for images (loader {} images/s with {} "
          "thread{}; the {} alone {} images/s) — more --data-threads, or a faster disk/CPU",
          cell, 100 * p.value("data_stall_share", 0.0), thousands(p.value("loader_images_per_s", 0.0)),
          p.value("data_threads", 0), p.value("data_threads", 0) == 1 ? "" : "s", r.device == "gpu" ? "GPU" : "CPU",
          thousands(device_s > 0 ? static_cast<double>(r.batch) / device_s : 0.0)));
    }
    const std::string folder = p.value("data_folder", std::string());
    const std::int64_t bad = p.value("bad_files", std::int64_t{0});
    if (bad > 0 && std::find(folders_told.begin(), folders_told.end(), folder) == folders_told.end()) {
      folders_told.push_back(folder);
      std::string first;
      if (p.contains("bad_examples") && !p["bad_examples"].empty()) first = p["bad_examples"][0].get<std::string>();
      report.warn(fmt::format("{}: {} file{} could not be decoded and {} skipped ({} time{} in {}){}", printable(folder),
                              bad, bad == 1 ? "" : "s", bad == 1 ? "was" : "were", p.value("skipped", std::int64_t{0}),
                              p.value("skipped", std::int64_t{0}) == 1 ? "" : "s", cell,
                              first.empty() ? std::string() : "; the first: " + printable(first)));
    }
  }
}

}  // namespace roofline::engine
