// ImageFolder data: a user's JPEG folders read as torchvision's
// datasets.ImageFolder reads them, decoded with libjpeg-turbo (TurboJPEG API)
// and augmented as torchvision's ImageNet recipe, on the loader's own threads,
// a few batches ahead of the caller. And synthetic ImageNet-shaped batches
// (PyTorch's --dummy), the bench's default. docs/engine.md "Data: ImageFolder".
#pragma once
#include <array>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "roofline/engine/rng.hpp"
#include "roofline/engine/tensor.hpp"

namespace roofline::engine {

// ---------------------------------------------------------------------------
// Scanning: ROOT/<class>/**/*.jpg|*.jpeg (any case)
// ---------------------------------------------------------------------------
struct ImageFolder {
  std::string root;
  // Every subfolder of root (symbolic links followed, hidden ones included, as
  // torchvision), sorted by name (bytewise); a label is an index into this.
  std::vector<std::string> classes;
  // Every JPEG under each class folder, subfolders included: class by class,
  // then folder by folder in the order of their paths, then by file name.
  std::vector<std::string> paths;
  std::vector<std::int32_t> labels;  // (paths.size())
  // Files with another of torchvision's image extensions (.png, .bmp, .ppm,
  // .pgm, .tif, .tiff, .webp): torchvision would read them; they are left out.
  std::int64_t other_images = 0;
  std::int64_t size() const { return static_cast<std::int64_t>(paths.size()); }
};
// Throws Error(Input) naming root when it is missing or not a folder, has no
// class folders, or has a class folder without a JPEG (torchvision refuses
// those too), naming the classes.
ImageFolder scan_image_folder(const std::string& root);
// Throws Error(Input) naming the classes found in only one of the two (a model
// trained on one class list cannot be validated on another).
void check_same_classes(const ImageFolder& train, const ImageFolder& val);

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------
struct RgbImage {
  std::int64_t h = 0, w = 0;
  std::vector<std::uint8_t> pixels;  // (h, w, 3)
};

enum class DecodeStatus : std::uint8_t {
  Ok,
  Unreadable,  // the file cannot be opened or read
  NotJpeg,     // no JPEG start-of-image marker
  Corrupt,     // libjpeg-turbo refused it
  Truncated,   // the data ends before the image does
  TooLarge,    // more than kMaxJpegPixels pixels, or a file over kMaxJpegFileBytes
};
const char* to_string(DecodeStatus s);

inline constexpr std::int64_t kMaxJpegPixels = std::int64_t{1} << 26;       // 64 Mpixel (8192 x 8192)
inline constexpr std::int64_t kMaxJpegFileBytes = std::int64_t{256} << 20;  // 256 MiB

// One per thread: owns a TurboJPEG handle and its buffers. Grayscale JPEGs come
// out with the gray copied into R, G and B; CMYK and YCCK ones converted as
// PIL's convert("RGB") (R = (255-C)(255-K)/255 on un-inverted inks, Adobe
// files' inverted inks recognised by their APP14 marker). libjpeg-turbo's
// warnings: extraneous bytes between segments keep the image (it is intact);
// the data ending early is Truncated; any other (a bad Huffman code, a segment
// cut short) is Corrupt. PIL keeps all three with their damaged blocks.
class JpegDecoder {
 public:
  JpegDecoder();
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;
  // On anything but Ok, `out` is unspecified and `detail` (when given) says why.
  DecodeStatus decode(const std::uint8_t* data, size_t size, RgbImage& out, std::string* detail = nullptr);
  DecodeStatus decode_file(const std::string& path, RgbImage& out, std::string* detail = nullptr);

 private:
  void* handle_ = nullptr;          // tjhandle
  std::vector<std::uint8_t> file_;  // the file's bytes
  std::vector<std::uint8_t> cmyk_;  // (h, w, 4) for CMYK and YCCK images
};

// ---------------------------------------------------------------------------
// Augmentation (torchvision's ImageNet recipe)
// ---------------------------------------------------------------------------
// train: RandomResizedCrop(crop, scale, ratio) + RandomHorizontalFlip(flip_p)
// eval:  Resize(resize, the shorter side) + CenterCrop(crop)
// then ToTensor + Normalize(mean, std). Resampling is bilinear with
// antialiasing when shrinking (PIL's and torchvision's antialias=True: a
// triangle filter widened by the shrink factor, clipped at the image's edges),
// horizontal pass then vertical, each rounded to uint8 as PIL does on 8-bit
// images; so a solid colour comes out exactly as that colour normalised.
struct ImageTransform {
  bool train = true;
  std::int64_t crop = 224;                              // output (crop, crop)
  std::int64_t resize = 256;                            // eval: the shorter side before the centre crop (≥ crop)
  double scale_min = 0.08, scale_max = 1.0;             // train: crop area / image area
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;  // train: crop width / height
  float flip_p = 0.5f;                                  // train: probability of a horizontal flip
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f};
  std::array<float, 3> std{0.229f, 0.224f, 0.225f};
  MemoryFormat format = MemoryFormat::NCHW;  // one sample: (3, crop, crop) or (crop, crop, 3)
  std::int64_t sample_floats() const { return 3 * crop * crop; }
  // Throws Error(Usage) naming the bad field.
  void validate() const;
};

// A region of the source image (rows top..top+h, columns left..left+w).
struct CropBox {
  std::int64_t top = 0, left = 0, h = 0, w = 0;
};
// torchvision's RandomResizedCrop.get_params: 10 tries of a random area and
// log-uniform aspect ratio, then the fallback (the whole image, or its centre
// clamped to the ratio range). Draws from rng.
CropBox random_resized_crop_box(std::int64_t h, std::int64_t w, const ImageTransform& t, Rng& rng);
// The generator of a sample's augmentation: one per (seed, epoch, sample
// index), so a sample's crop and flip do not depend on which thread ran it.
Rng augment_rng(std::uint64_t seed, std::int64_t epoch, std::int64_t index);
// An epoch's order of n samples: a permutation from (seed, epoch), or 0..n-1.
std::vector<std::int32_t> epoch_order(std::int64_t n, std::uint64_t seed, std::int64_t epoch, bool shuffle);

// Writes one sample (t.sample_floats() floats, t.format) to out. Train draws
// the crop then the flip from rng; eval draws nothing.
void transform_image(const RgbImage& img, const ImageTransform& t, Rng& rng, float* out);
// The train transform with its draws given: `box` of img resized to (crop,
// crop), mirrored when `flip` (golden tests replaying another program's crops).
void transform_image_box(const RgbImage& img, const CropBox& box, bool flip, const ImageTransform& t, float* out);

// ---------------------------------------------------------------------------
// The loader
// ---------------------------------------------------------------------------
struct LoaderConfig {
  std::int64_t batch = 128;
  ImageTransform transform;
  int threads = 0;   // decoding threads; 0 = std::thread::hardware_concurrency()
  int prefetch = 2;  // batches decoded while the caller holds one (≥ 1)
  std::uint64_t seed = 0;
  bool shuffle = true;  // a new permutation each epoch; false: folder order
  // Memory for the prefetch + 1 batches the loader fills (each batch ×
  // sample_floats() floats, then batch int32 labels), e.g. pinned host memory,
  // so that next_view()'s batch can be copied to the GPU as it is. Default:
  // 64-byte aligned operator new.
  std::function<void*(size_t bytes)> alloc;
  std::function<void(void*)> free;
};

struct LoaderStats {
  std::int64_t batches = 0;               // handed to the caller
  std::int64_t decoded = 0;               // files decoded and transformed (prefetched ones included)
  std::int64_t skipped = 0;               // times a file could not be used (a bad file counts each time it comes up)
  std::int64_t bad_files = 0;             // distinct files among them
  std::vector<std::string> bad_examples;  // the first few, "path: reason"
  double wait_s = 0;                      // time the caller spent in next() waiting for a batch
  double busy_s = 0;                      // decoding threads' time spent reading, decoding and transforming, summed
  double elapsed_s = 0;                   // since the loader started
  int threads = 0;
  // Files decoded per second of the loader's life (held back when the caller is slower).
  double images_per_s() const { return elapsed_s > 0 ? static_cast<double>(decoded) / elapsed_s : 0.0; }
  // What the threads would sustain if never held back: decoded / busy time × threads.
  double capacity_images_per_s() const { return busy_s > 0 ? static_cast<double>(decoded) * threads / busy_s : 0.0; }
};

// Batches of `batch` samples from an endless stream of epochs (a sample's
// epoch is its stream position / folder size, so a batch may span two).
// Batch k takes stream positions [k·batch, (k+1)·batch); a file that cannot be
// decoded is skipped and counted, and its slot is filled by the next good
// files of the stream after the batch, in rounds (which then appear twice in
// that epoch), so every batch is full and the same seed gives the same batches
// whatever the thread count. Known bad files are not read again. Throws
// Error(Input) from next() once every file of the folder has proved bad.
class ImageFolderLoader {
 public:
  ImageFolderLoader(ImageFolder folder, LoaderConfig config);
  ~ImageFolderLoader();
  ImageFolderLoader(const ImageFolderLoader&) = delete;
  ImageFolderLoader& operator=(const ImageFolderLoader&) = delete;

  struct Batch {
    const float* x = nullptr;         // (batch, 3, crop, crop) or (batch, crop, crop, 3)
    const std::int32_t* y = nullptr;  // (batch)
    std::int64_t index = 0;           // batch number in the stream
  };
  // The next batch, in the loader's memory (config.alloc): valid, and not
  // written, until the next call of next_view() or next(). While the caller
  // uses it, the next `prefetch` batches are being decoded.
  Batch next_view();
  // The next batch copied to x (batch × sample_floats() floats) and y (batch).
  void next(float* x, std::int32_t* y);

  LoaderStats stats() const;
  std::int64_t batch() const { return config_.batch; }
  const ImageFolder& folder() const { return folder_; }

 private:
  struct Slot;
  struct Task;
  void worker_main();
  void shut_down();            // stops and joins the threads, frees the buffers
  bool pick_task(Task& task);  // under mu_
  void finish_task(const Task& task, bool ok, const std::string& reason, double seconds);  // under mu_
  std::int32_t sample_at(std::int64_t position);                                           // under mu_

  ImageFolder folder_;
  LoaderConfig config_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_, ready_cv_;
  std::vector<std::unique_ptr<Slot>> slots_;  // prefetch + 1 batch buffers; batch k in slot k % size
  std::int64_t next_batch_ = 0;               // the next batch to start filling
  std::int64_t consumed_ = 0;                 // batches handed out
  std::int64_t held_ = -1;                    // the batch the caller holds
  std::vector<std::uint8_t> known_bad_;       // (folder size) 1 = proved bad
  std::vector<std::pair<std::int64_t, std::shared_ptr<const std::vector<std::int32_t>>>> orders_;  // by epoch
  LoaderStats stats_;
  std::exception_ptr error_;
  bool stop_ = false;
  double start_s_ = 0;
  std::vector<std::thread> workers_;
};

// ---------------------------------------------------------------------------
// Synthetic data (PyTorch's --dummy)
// ---------------------------------------------------------------------------
struct SyntheticSpec {
  std::int64_t batch = 128, channels = 3, height = 224, width = 224;
  std::int32_t classes = 1000;
};
// x (batch·channels·height·width, any layout: the values are independent)
// gets mean-0, variance-1 values (the sum of four 16-bit uniforms, rescaled:
// bell-shaped within ±3.47), y (batch) labels uniform in [0, classes); the
// same seed gives the same batch.
void fill_synthetic_batch(const SyntheticSpec& spec, std::uint64_t seed, float* x, std::int32_t* y);

}  // namespace roofline::engine
