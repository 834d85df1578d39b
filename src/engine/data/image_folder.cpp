// ImageFolder scanning (torchvision's datasets.ImageFolder order), the class
// check between two folders, the per-sample generators and synthetic batches.
#include "roofline/engine/image_folder.hpp"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>
#include <utility>

#include "roofline/core/error.hpp"

namespace roofline::engine {

namespace {

const char* kLayoutHint =
    "an ImageFolder is DIR/<class>/<image>.jpg, one subfolder per class (as torchvision's "
    "datasets.ImageFolder), e.g. the train folder of ImageNet with its n01440764/ ... subfolders";

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
bool ends_with(const std::string& s, const char* suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}
bool is_jpeg_name(const std::string& name) {
  std::string l = lower(name);
  return ends_with(l, ".jpg") || ends_with(l, ".jpeg");
}
bool is_other_image_name(const std::string& name) {
  std::string l = lower(name);
  for (const char* e : {".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp"})
    if (ends_with(l, e)) return true;
  return false;
}

struct Entry {
  std::string name;
  bool dir = false;  // after following symbolic links
};
// The entries of a folder except . and .. (unsorted). Throws Error(Input) when
// it cannot be read.
std::vector<Entry> list_folder(const std::string& path) {
  DIR* d = ::opendir(path.c_str());
  if (!d) throw_input(fmt::format("cannot read folder {}: {}", path, std::strerror(errno)), kLayoutHint);
  std::vector<Entry> out;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    // stat follows symbolic links (a broken link is a non-folder entry, as os.walk has it).
    bool dir = ::stat((path + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    out.push_back({std::move(name), dir});
  }
  ::closedir(d);
  return out;
}

// Every JPEG under class folder `top`, in torchvision's order: sorted(os.walk(top,
// followlinks=True)) sorts the folders by their path, then each folder's files
// by name. A folder reached twice through links is walked once.
void walk_class(const std::string& top, std::int32_t label, ImageFolder& f) {
  std::vector<std::pair<std::string, std::vector<std::string>>> folders;  // (path, sorted JPEG names)
  std::set<std::pair<dev_t, ino_t>> seen;
  std::vector<std::string> stack{top};
  while (!stack.empty()) {
    std::string dir = std::move(stack.back());
    stack.pop_back();
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !seen.insert({st.st_dev, st.st_ino}).second) continue;
    std::vector<std::string> files;
    for (Entry& e : list_folder(dir)) {
      if (e.dir) {
        stack.push_back(dir + "/" + e.name);
      } else if (is_jpeg_name(e.name)) {
        files.push_back(std::move(e.name));
      } else if (is_other_image_name(e.name)) {
        ++f.other_images;
      }
    }
    std::sort(files.begin(), files.end());
    folders.emplace_back(std::move(dir), std::move(files));
  }
  std::sort(folders.begin(), folders.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [dir, files] : folders)
    for (auto& name : files) {
      f.paths.push_back(dir + "/" + name);
      f.labels.push_back(label);
    }
}

std::string join_names(const std::vector<std::string>& names, size_t limit = 10) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < limit; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > limit) s += fmt::format(" and {} more", names.size() - limit);
  return s;
}

}  // namespace

ImageFolder scan_image_folder(const std::string& root) {
  struct stat st {};
  if (::stat(root.c_str(), &st) != 0) throw_input(fmt::format("image folder {} does not exist", root), kLayoutHint);
  if (!S_ISDIR(st.st_mode)) throw_input(fmt::format("image folder {} is not a folder", root), kLayoutHint);
  ImageFolder f;
  f.root = root;
  std::int64_t loose_jpegs = 0;
  for (Entry& e : list_folder(root)) {
    if (e.dir)
      f.classes.push_back(std::move(e.name));
    else if (is_jpeg_name(e.name))
      ++loose_jpegs;
  }
  if (f.classes.empty())
    throw_input(fmt::format("image folder {} has no class folders{}", root,
                            loose_jpegs ? fmt::format(" (it has {} JPEG files of its own)", loose_jpegs) : ""),
                kLayoutHint);
  std::sort(f.classes.begin(), f.classes.end());
  std::vector<std::string> empty;
  for (size_t c = 0; c < f.classes.size(); ++c) {
    size_t before = f.paths.size();
    walk_class(root + "/" + f.classes[c], static_cast<std::int32_t>(c), f);
    if (f.paths.size() == before) empty.push_back(f.classes[c]);
  }
  if (f.paths.empty())
    throw_input(fmt::format("image folder {} has no JPEG images (.jpg or .jpeg) in its {} class folder{}{}", root,
                            f.classes.size(), f.classes.size() == 1 ? "" : "s",
                            f.other_images ? fmt::format("; it has {} images of other formats, which roofline "
                                                         "does not read",
                                                         f.other_images)
                                           : ""),
                std::string(kLayoutHint) + "; convert other formats to JPEG");
  if (!empty.empty())
    throw_input(fmt::format("image folder {}: {} of its {} class folders have no JPEG images: {}", root, empty.size(),
                            f.classes.size(), join_names(empty)),
                "put .jpg/.jpeg images in every class folder or remove the empty ones (torchvision's "
                "ImageFolder refuses empty classes too); the class folders are every subfolder of the folder given");
  return f;
}

void check_same_classes(const ImageFolder& train, const ImageFolder& val) {
  if (train.classes == val.classes) return;
  std::vector<std::string> only_train, only_val;
  std::set_difference(train.classes.begin(), train.classes.end(), val.classes.begin(), val.classes.end(),
                      std::back_inserter(only_train));
  std::set_difference(val.classes.begin(), val.classes.end(), train.classes.begin(), train.classes.end(),
                      std::back_inserter(only_val));
  std::string what = fmt::format("the class folders of {} ({}) and {} ({}) differ", train.root, train.classes.size(),
                                 val.root, val.classes.size());
  if (!only_train.empty()) what += fmt::format("; only in {}: {}", train.root, join_names(only_train));
  if (!only_val.empty()) what += fmt::format("; only in {}: {}", val.root, join_names(only_val));
  throw_input(what,
              "the training and validation folders need the same class subfolders (a label is a class folder's "
              "place in the sorted list, so the lists must match)");
}

Rng augment_rng(std::uint64_t seed, std::int64_t epoch, std::int64_t index) {
  return Rng(seed).fork(2 * static_cast<std::uint64_t>(epoch) + 1).fork(static_cast<std::uint64_t>(index));
}

std::vector<std::int32_t> epoch_order(std::int64_t n, std::uint64_t seed, std::int64_t epoch, bool shuffle) {
  if (!shuffle) {
    std::vector<std::int32_t> p(static_cast<size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) p[static_cast<size_t>(i)] = static_cast<std::int32_t>(i);
    return p;
  }
  Rng rng = Rng(seed).fork(2 * static_cast<std::uint64_t>(epoch));
  return random_permutation(n, rng);
}

void fill_synthetic_batch(const SyntheticSpec& spec, std::uint64_t seed, float* x, std::int32_t* y) {
  if (spec.batch < 1 || spec.channels < 1 || spec.height < 1 || spec.width < 1 || spec.classes < 1)
    throw Error(ErrorKind::Usage,
                fmt::format("synthetic batch of {} x {} x {} x {} with {} classes: every size must be positive",
                            spec.batch, spec.channels, spec.height, spec.width, spec.classes));
  Rng rng(seed);
  // Four 16-bit uniforms from one draw: their sum has mean 2·65535/2 and
  // variance 4·(65536²−1)/12; rescaled to mean 0, variance 1.
  const double mean = 2.0 * 65535.0;
  const double scale = 1.0 / std::sqrt(4.0 * (65536.0 * 65536.0 - 1.0) / 12.0);
  const std::int64_t n = spec.batch * spec.channels * spec.height * spec.width;
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint64_t r = rng.next();
    double s = static_cast<double>((r & 0xffff) + ((r >> 16) & 0xffff) + ((r >> 32) & 0xffff) + (r >> 48));
    x[i] = static_cast<float>((s - mean) * scale);
  }
  for (std::int64_t i = 0; i < spec.batch; ++i)
    y[i] = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(spec.classes)));
}

}  // namespace roofline::engine
