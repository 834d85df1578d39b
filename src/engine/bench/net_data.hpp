// The network bench's ImageFolder data (`roofline bench alexnet,resnet18
// --data DIR`): which folder each cell reads, the InputStager that puts one
// loader batch into a GraphNetwork's input before each step, the data-fed
// timing loop, and what a cell records about its data. docs/networks.md
// "Real data: --data".
//
// The GPU path, per step k (the step itself, a CUDA-graph replay, unchanged:
// input() has a fixed address):
//   load():     the net's stream waits for batch k's copy (event copied[k%2]),
//               casts the fp32 staging buffer k%2 to input() in the net's dtype
//               (ops::cast), copies the labels, records consumed[k%2];
//   the step;
//   prefetch(): the host waits for batch k's copy to have finished (so the
//               loader may reuse its pinned buffer), takes batch k+1 from the
//               loader (the data wait), and the copy stream, once consumed[(k+1)%2]
//               says step k-1's cast has read that staging buffer, copies it
//               there (cudaMemcpyAsync from the loader's pinned memory), then
//               records copied[(k+1)%2]. So batch k+1 crosses PCIe while step k runs.
// On the CPU load() takes the loader's batch and copies it into input().
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/image_folder.hpp"
#include "roofline/engine/net_bench.hpp"

namespace roofline::engine {

// The folders of --data DIR: DIR/train and DIR/val when DIR has both (classes
// checked equal); one of them alone serves both modes; else DIR itself.
struct NetData {
  std::string dir;
  std::optional<ImageFolder> train, val;  // scanned only for the modes asked for
  const ImageFolder& folder(bool training) const { return training ? (train ? *train : *val) : (val ? *val : *train); }
};
// Scans what cfg's modes read. Throws Error(Input) for a missing folder, one
// without images (scan_image_folder's messages), train/ and val/ with other
// classes, or more classes than `max_classes` (the models' 1000 outputs).
NetData open_net_data(const NetBenchConfig& cfg, std::int64_t max_classes);

class InputStager {
 public:
  // A loader over `folder` with the train (shuffled) or eval transform in
  // net.format(), `threads` decoding threads (0: the hardware's), batches of
  // net.max_batch(); on the GPU its buffers are pinned and two fp32 staging
  // buffers and a copy stream are made. Nothing is loaded yet.
  InputStager(GraphNetwork& net, const ImageFolder& folder, bool training, int threads, std::uint64_t seed = 0);
  ~InputStager();
  InputStager(const InputStager&) = delete;
  InputStager& operator=(const InputStager&) = delete;

  // GPU: the next batch taken from the loader and its copy to a staging
  // buffer started (the host waits here when the loader has none ready); at
  // most one batch ahead of load(). CPU: nothing.
  void prefetch();
  // The next batch into net.input() and net.labels(): enqueued on the net's
  // stream behind its copy (GPU; after prefetch()), or taken from the loader
  // and copied (CPU).
  void load();
  // Around one step: events on the net's stream (GPU) or the wall clock (CPU).
  void step_begin();
  void step_end();
  // Seconds between step_begin and step_end (GPU: waits for step_end's event).
  double step_seconds();

  // The loader's batch held now: the one prefetched last (GPU) or loaded last
  // (CPU); for tests comparing it with what reached input().
  const ImageFolderLoader::Batch& held() const { return held_; }
  LoaderStats stats() const { return loader_->stats(); }
  // Bytes of the device staging buffers (0 on the CPU).
  size_t staging_bytes() const;

 private:
  struct Gpu;  // input_stager_gpu.cpp
  static std::unique_ptr<Gpu, void (*)(Gpu*)> make_gpu(GraphNetwork& net, std::int64_t x_floats);
  static void* pinned_alloc(size_t bytes);  // null when it fails (the loader then throws Error(Device))
  static void pinned_free(void* p);
  void gpu_prefetch();
  void gpu_load();
  void gpu_step(bool begin);
  double gpu_step_seconds();
  void gpu_drain();  // waits for every copy and cast, before the loader frees its buffers

  GraphNetwork& net_;
  std::int64_t batch_ = 0, x_floats_ = 0;  // per batch
  std::unique_ptr<Gpu, void (*)(Gpu*)> gpu_{nullptr, nullptr};
  std::unique_ptr<ImageFolderLoader> loader_;
  ImageFolderLoader::Batch held_;
  std::int64_t prefetched_ = 0, loaded_ = 0;
  double cpu_begin_s_ = 0, cpu_end_s_ = 0;
};

// A data-fed cell's timing: after `warmup` steps, `steps` steps each timed
// from its start to the next one's (so waiting for data counts), the device's
// own time of each step, and the loader's counters over the timed steps.
struct DataTiming {
  std::vector<double> intervals, device;  // seconds per timed step
  LoaderStats before, after;              // the loader's stats at the first timed step and after the last
  double wall_s = 0;                      // the timed steps' wall time
};
// Expects load() to have put batch 0 in (the capture's eager step used it).
DataTiming run_data_steps(InputStager& s, const std::function<void()>& step, int warmup, int steps);

// The share of a step spent waiting for images that the step could not hide:
// min(wait, step − device step) / step (per step, seconds). data_bound: over 5%.
double data_stall_share(double wait_s, double step_s, double device_s);
bool data_bound(double stall_share);

// Fills r's params from the data, the loader and the timing ("data",
// "data_folder", "data_wait_ms", "loader_images_per_s",
// "loader_capacity_images_per_s", "bad_files", "skipped", ..., "data_bound").
void describe_data(NetRecord& r, const NetData& data, const ImageFolder& folder, const InputStager& s,
                   const DataTiming& t);

}  // namespace roofline::engine
