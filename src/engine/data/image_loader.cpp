// ImageFolderLoader: decoding threads filling prefetch + 1 batch buffers ahead
// of the caller. A task is one sample (one stream position into one slot of a
// batch); a batch whose samples are all done is handed out in order. Bad files
// leave their slots for rounds of replacements from the stream after the batch,
// assigned slot by slot in order, so the result depends only on the seed.
//
// The engine's ThreadPool (src/engine/cpu/thread_pool.hpp) runs the CPU ops'
// parallel regions, joined by the calling thread; these threads instead work
// on their own beside the caller's step, so they are plain std::threads.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <new>

#include "roofline/core/error.hpp"
#include "roofline/engine/image_folder.hpp"

namespace roofline::engine {

namespace {
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
constexpr size_t kBadExamples = 8;
constexpr size_t kCachedOrders = 3;
}  // namespace

struct ImageFolderLoader::Slot {
  void* mem = nullptr;
  float* x = nullptr;         // (batch, sample_floats)
  std::int32_t* y = nullptr;  // (batch)
  enum class State { Free, Filling, Ready, Held } state = State::Free;
  std::int64_t batch = -1;
  std::int64_t issued = 0;                                  // slots 0..issued-1 handed out as first tries
  std::int64_t pending = 0;                                 // tasks handed out, not finished
  std::vector<std::int64_t> bad;                            // slots that proved bad this round
  std::deque<std::pair<std::int64_t, std::int64_t>> fixes;  // (slot, stream position) not yet handed out
  std::int64_t fix_cursor = 0;                              // the next stream position for a replacement
};

struct ImageFolderLoader::Task {
  Slot* slot = nullptr;
  std::int64_t index = 0;     // slot in the batch
  std::int64_t position = 0;  // in the stream
  std::int32_t sample = 0;    // index into the folder
  bool known_bad = false;
};

ImageFolderLoader::ImageFolderLoader(ImageFolder folder, LoaderConfig config)
    : folder_(std::move(folder)), config_(std::move(config)) {
  config_.transform.validate();
  if (config_.batch < 1) throw Error(ErrorKind::Usage, fmt::format("batch {}: must be at least 1", config_.batch));
  if (config_.prefetch < 1)
    throw Error(ErrorKind::Usage, fmt::format("prefetch {}: must be at least 1 batch", config_.prefetch));
  if (config_.threads < 0) throw Error(ErrorKind::Usage, fmt::format("threads {}: must be 0 or more", config_.threads));
  if (folder_.size() < 1 || folder_.labels.size() != folder_.paths.size())
    throw_input(fmt::format("image folder {} has no images to load", folder_.root));
  if (folder_.size() > INT32_MAX)
    throw_input(fmt::format("image folder {}: {} images, more than 2^31 - 1", folder_.root, folder_.size()));
  if (config_.threads == 0) config_.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!config_.alloc || !config_.free) {
    config_.alloc = [](size_t bytes) { return ::operator new(bytes, std::align_val_t(64)); };
    config_.free = [](void* p) { ::operator delete(p, std::align_val_t(64)); };
  }
  const size_t x_bytes = static_cast<size_t>(config_.batch * config_.transform.sample_floats()) * sizeof(float);
  const size_t bytes = x_bytes + static_cast<size_t>(config_.batch) * sizeof(std::int32_t);
  try {
    for (int i = 0; i < config_.prefetch + 1; ++i) {
      slots_.push_back(std::make_unique<Slot>());
      Slot& s = *slots_.back();
      s.mem = config_.alloc(bytes);
      if (!s.mem)
        throw_device(fmt::format("out of memory: {} batch buffers of {} images ({} bytes each)", config_.prefetch + 1,
                                 config_.batch, bytes),
                     "use a smaller batch or prefetch");
      s.x = static_cast<float*>(s.mem);                                            // (batch, sample_floats)
      s.y = reinterpret_cast<std::int32_t*>(static_cast<char*>(s.mem) + x_bytes);  // (batch)
    }
    known_bad_.assign(static_cast<size_t>(folder_.size()), 0);
    stats_.threads = config_.threads;
    start_s_ = now_s();
    for (int i = 0; i < config_.threads; ++i) workers_.emplace_back([this] { worker_main(); });
  } catch (...) {
    shut_down();
    throw;
  }
}

void ImageFolderLoader::shut_down() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
  for (auto& s : slots_)
    if (s->mem) config_.free(s->mem);
  slots_.clear();
}

ImageFolderLoader::~ImageFolderLoader() { shut_down(); }

std::int32_t ImageFolderLoader::sample_at(std::int64_t position) {
  const std::int64_t n = folder_.size();
  const std::int64_t epoch = position / n;
  if (!config_.shuffle) return static_cast<std::int32_t>(position % n);
  auto it = std::find_if(orders_.begin(), orders_.end(), [&](const auto& e) { return e.first == epoch; });
  if (it == orders_.end()) {
    if (orders_.size() >= kCachedOrders)  // drop the oldest epoch (made again if a replacement needs it)
      orders_.erase(std::min_element(orders_.begin(), orders_.end(),
                                     [](const auto& a, const auto& b) { return a.first < b.first; }));
    orders_.emplace_back(epoch,
                         std::make_shared<const std::vector<std::int32_t>>(epoch_order(n, config_.seed, epoch, true)));
    it = orders_.end() - 1;
  }
  return (*it->second)[static_cast<size_t>(position - epoch * n)];
}

bool ImageFolderLoader::pick_task(Task& task) {
  const std::int64_t depth = static_cast<std::int64_t>(slots_.size());
  auto hand_out = [&](Slot& s, std::int64_t index, std::int64_t position) {
    ++s.pending;
    task.slot = &s;
    task.index = index;
    task.position = position;
    task.sample = sample_at(position);
    task.known_bad = known_bad_[static_cast<size_t>(task.sample)] != 0;
    return true;
  };
  // The oldest batch first: its replacements, then its first tries.
  for (std::int64_t k = std::max<std::int64_t>(0, next_batch_ - depth); k < next_batch_; ++k) {
    Slot& s = *slots_[static_cast<size_t>(k % depth)];
    if (s.batch != k || s.state != Slot::State::Filling) continue;
    if (!s.fixes.empty()) {
      auto [index, position] = s.fixes.front();
      s.fixes.pop_front();
      return hand_out(s, index, position);
    }
    if (s.issued < config_.batch) {
      std::int64_t index = s.issued++;
      return hand_out(s, index, k * config_.batch + index);
    }
  }
  // A new batch, when its buffer is free (the caller gave back the batch depth before it).
  Slot& s = *slots_[static_cast<size_t>(next_batch_ % depth)];
  if (s.state != Slot::State::Free) return false;
  s.state = Slot::State::Filling;
  s.batch = next_batch_++;
  s.issued = 1;
  s.pending = 0;
  s.bad.clear();
  s.fixes.clear();
  s.fix_cursor = (s.batch + 1) * config_.batch;
  return hand_out(s, 0, s.batch * config_.batch);
}

void ImageFolderLoader::finish_task(const Task& task, bool ok, const std::string& reason, double seconds) {
  Slot& s = *task.slot;
  --s.pending;
  stats_.busy_s += seconds;
  if (ok) {
    ++stats_.decoded;
  } else {
    ++stats_.skipped;
    auto& bad = known_bad_[static_cast<size_t>(task.sample)];
    if (!bad) {
      bad = 1;
      ++stats_.bad_files;
      if (stats_.bad_examples.size() < kBadExamples)
        stats_.bad_examples.push_back(folder_.paths[static_cast<size_t>(task.sample)] + ": " + reason);
      if (stats_.bad_files == folder_.size() && !error_) {
        error_ = std::make_exception_ptr(
            Error(ErrorKind::Input,
                  fmt::format("none of the {} JPEG files of {} can be decoded (the first: {})", folder_.size(),
                              folder_.root, stats_.bad_examples.front()),
                  "check that the files are JPEG images (file(1) tells), readable by this user and complete"));
        stop_ = true;
        work_cv_.notify_all();
        ready_cv_.notify_all();
        return;
      }
    }
    s.bad.push_back(task.index);
  }
  if (s.pending > 0 || s.issued < config_.batch || !s.fixes.empty()) return;
  if (s.bad.empty()) {
    s.state = Slot::State::Ready;
    ready_cv_.notify_all();
    return;
  }
  // A round of replacements: the bad slots in order take the next positions.
  std::sort(s.bad.begin(), s.bad.end());
  for (std::int64_t index : s.bad) s.fixes.emplace_back(index, s.fix_cursor++);
  s.bad.clear();
  work_cv_.notify_all();
}

void ImageFolderLoader::worker_main() {
  const ImageTransform& t = config_.transform;
  const std::int64_t n = folder_.size();
  // Any exception (out of memory, a bug) stops the loader; next() rethrows it.
  try {
    JpegDecoder decoder;
    RgbImage image;
    std::string why;
    for (;;) {
      Task task;
      {
        std::unique_lock<std::mutex> lk(mu_);
        work_cv_.wait(lk, [&] { return stop_ || pick_task(task); });
        if (stop_) return;
      }
      const double t0 = now_s();
      bool ok = false;
      std::string reason = "already found bad";
      if (!task.known_bad) {
        const std::string& path = folder_.paths[static_cast<size_t>(task.sample)];
        DecodeStatus st = decoder.decode_file(path, image, &why);
        if (st == DecodeStatus::Ok) {
          Rng rng = augment_rng(config_.seed, task.position / n, task.sample);
          transform_image(image, t, rng, task.slot->x + task.index * t.sample_floats());
          task.slot->y[task.index] = folder_.labels[static_cast<size_t>(task.sample)];
          ok = true;
        } else {
          reason = fmt::format("{} ({})", to_string(st), why);
        }
      }
      std::lock_guard<std::mutex> lk(mu_);
      finish_task(task, ok, reason, now_s() - t0);
    }
  } catch (...) {
    std::lock_guard<std::mutex> lk(mu_);
    if (!error_) error_ = std::current_exception();
    stop_ = true;
    work_cv_.notify_all();
    ready_cv_.notify_all();
  }
}

ImageFolderLoader::Batch ImageFolderLoader::next_view() {
  std::unique_lock<std::mutex> lk(mu_);
  const std::int64_t depth = static_cast<std::int64_t>(slots_.size());
  if (held_ >= 0) {  // the caller is done with the batch it held: its buffer takes the next batch
    Slot& h = *slots_[static_cast<size_t>(held_ % depth)];
    h.state = Slot::State::Free;
    h.batch = -1;
    held_ = -1;
    work_cv_.notify_all();
  }
  Slot& s = *slots_[static_cast<size_t>(consumed_ % depth)];
  const double t0 = now_s();
  ready_cv_.wait(lk, [&] { return error_ || (s.batch == consumed_ && s.state == Slot::State::Ready); });
  stats_.wait_s += now_s() - t0;
  if (error_) std::rethrow_exception(error_);
  s.state = Slot::State::Held;
  held_ = consumed_++;
  ++stats_.batches;
  return Batch{s.x, s.y, held_};
}

void ImageFolderLoader::next(float* x, std::int32_t* y) {
  Batch b = next_view();
  std::memcpy(x, b.x, static_cast<size_t>(config_.batch * config_.transform.sample_floats()) * sizeof(float));
  std::memcpy(y, b.y, static_cast<size_t>(config_.batch) * sizeof(std::int32_t));
}

LoaderStats ImageFolderLoader::stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  LoaderStats s = stats_;
  s.elapsed_s = now_s() - start_s_;
  return s;
}

}  // namespace roofline::engine
