#include "src/engine/cuda/conv_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>

#include "roofline/core/env.hpp"
#include "roofline/core/error.hpp"

namespace roofline::engine::cuda_ops {

namespace {
constexpr int kPixels = kRegTilePixels;
constexpr int kMaxThreads = kRegTileMaxThreads;

int parse_int(std::string_view s, std::string_view whole) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    throw_usage(fmt::format("ROOFLINE_CONV_KERNEL={}: '{}' is not a whole number", whole, s),
                "use auto, tiled, cudnn or regtile:KB:R[:THREADS], e.g. regtile:8:1");
  return v;
}
}  // namespace

bool regtile_compiled(int kb, int rows) {
  return (kb == 4 || kb == 8 || kb == 16) && (rows == 1 || rows == 2 || rows == 4) && kb * rows <= 16;
}
bool regtile_width_compiled(int s) { return s == 3 || s == 5 || s == 7; }

ConvKernelChoice parse_conv_kernel(std::string_view text) {
  ConvKernelChoice c;
  if (text.empty() || text == "auto") return c;
  if (text == "tiled") {
    c.kind = ConvKernelChoice::Kind::Tiled;
    return c;
  }
  if (text == "cudnn") {
    c.kind = ConvKernelChoice::Kind::Cudnn;
    return c;
  }
  const std::string_view prefix = "regtile:";
  if (text.substr(0, prefix.size()) != prefix)
    throw_usage(fmt::format("ROOFLINE_CONV_KERNEL={} names no convolution kernel", text),
                "use auto, tiled, cudnn or regtile:KB:R[:THREADS], e.g. regtile:8:1, or unset it");
  std::string_view rest = text.substr(prefix.size());
  int field[3] = {0, 0, 0};
  int count = 0;
  for (;;) {  // fields between colons; an empty one is not a number
    if (count == 3)
      throw_usage(fmt::format("ROOFLINE_CONV_KERNEL={} has too many fields", text),
                  "use regtile:KB:R or regtile:KB:R:THREADS");
    const auto colon = rest.find(':');
    field[count++] = parse_int(rest.substr(0, colon), text);
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
  }
  if (count < 2)
    throw_usage(fmt::format("ROOFLINE_CONV_KERNEL={} lacks the rows per thread", text), "use regtile:KB:R, e.g. regtile:8:1");
  c.kind = ConvKernelChoice::Kind::RegTile;
  c.kb = field[0];
  c.rows = field[1];
  c.threads = field[2];
  if (!regtile_compiled(c.kb, c.rows))
    throw_usage(fmt::format("ROOFLINE_CONV_KERNEL={}: the register-tiled kernel has no {} channels × {} rows tile",
                            text, c.kb, c.rows),
                "KB is 4, 8 or 16, R is 1, 2 or 4, and KB · R is at most 16");
  if (count == 3 && (c.threads < 32 || c.threads > kMaxThreads))
    throw_usage(fmt::format("ROOFLINE_CONV_KERNEL={}: {} threads per block", text, c.threads),
                fmt::format("give THREADS between 32 and {}", kMaxThreads));
  return c;
}

const ConvKernelChoice& conv_kernel_override() {
  static const ConvKernelChoice choice = [] {
    const std::optional<std::string> chosen = env::get(env::Var::ConvKernel);
    return parse_conv_kernel(chosen ? std::string_view(*chosen) : std::string_view());
  }();
  return choice;
}

bool own_conv_applies(const ConvKernelChoice& o, DType dtype, MemoryFormat format, std::int64_t groups,
                      std::int64_t c, std::int64_t k) {
  if (o.kind == ConvKernelChoice::Kind::Cudnn) return false;
  if (dtype != DType::F32 || format != MemoryFormat::NCHW || groups != 1) return false;
  if (o.kind == ConvKernelChoice::Kind::Tiled || o.kind == ConvKernelChoice::Kind::RegTile) return true;
  return c <= kOwnConvChannels && k <= kOwnConvChannels;
}

bool plan_regtile(const ConvGeometry& g, int sm_count, int kb, int rows, int threads, RegTilePlan& plan, int pool) {
  if (!regtile_compiled(kb, rows) || !regtile_width_compiled(int(g.s)) || g.n < 1 || g.oh < 1 || g.ow < 1) return false;
  if (pool != 1 && (rows != 1 || (pool != 2 && pool != 4) || g.oh % pool != 0 || g.ow % pool != 0)) return false;
  const std::int64_t cols = (g.ow + kPixels - 1) / kPixels;  // pixel groups per row
  if (cols > kMaxThreads || g.n > 65535) return false;
  const std::int64_t kgroups = (g.co + kb - 1) / kb;
  if (kgroups > 65535) return false;
  const std::int64_t groups = (g.oh + rows - 1) / rows;  // row groups per image
  auto blocks_for = [&](std::int64_t target, std::int64_t& band, std::int64_t& bands) {
    const std::int64_t most = std::max<std::int64_t>(1, target / cols);
    bands = (groups + most - 1) / most;
    band = (groups + bands - 1) / bands;  // the same rows in every band, give or take one group
    band = (band + pool - 1) / pool * pool;  // whole pooling windows per band
    bands = (groups + band - 1) / band;
    return bands * kgroups * g.n;
  };
  std::int64_t band = 0, bands = 0;
  if (threads > 0) {
    blocks_for(threads, band, bands);
  } else {
    std::int64_t target = 128;
    while (blocks_for(target, band, bands) < 2LL * sm_count && target > 32) target /= 2;
  }
  const std::int64_t nthreads = (band * cols + 31) / 32 * 32;
  if (nthreads > kMaxThreads || bands > 0x7fffffff) return false;
  const std::int64_t ncols = (cols - 1) * kPixels + (kPixels + g.s - 1 + 3) / 4 * 4;
  plan.kb = kb;
  plan.rows = rows;
  plan.band = int(band);
  plan.threads = int(nthreads);
  plan.bands = int(bands);
  plan.smem_floats = g.ci * (band * rows + g.r - 1) * ncols + g.ci * g.r * g.s * kb;
  if (pool > 1) plan.smem_floats = std::max<std::int64_t>(plan.smem_floats, band * cols * (kPixels / pool) * kb);
  return true;
}

bool choose_regtile(const ConvGeometry& g, int sm_count, RegTilePlan& plan, int pool) {
  const int kb = g.co <= 4 ? 4 : 8;
  RegTilePlan p;
  if (!plan_regtile(g, sm_count, kb, 1, 0, p, pool)) return false;
  // Fewer blocks than SMs: the tiled kernel's 256-slot blocks of one pixel
  // per thread spread the work wider (ece408 at batch 1, H100, 2026-11-25:
  // conv2 forward 11.3 µs tiled vs 18.5 register-tiled, its input gradient
  // 38.6 vs 64.5; the training step 105 vs 138 µs).
  // Pooled (inference), the tiled alternative is that kernel plus a max-pool
  // kernel: short tap chains keep the pooled register tile even on a small
  // grid (ece408 at batch 1, H100, 2026-11-25: conv1 + pool 4.3 µs pooled
  // against 4.4 + 2.3 µs; conv2's 196 taps 15.8 µs pooled against 4.5 + 2.3
  // with the tiled kernel's channel groups).
  const bool short_pooled = pool > 1 && g.ci * g.r * g.s <= 64;
  if (std::int64_t(p.bands) * ((g.co + kb - 1) / kb) * g.n < sm_count && !short_pooled) return false;
  plan = p;
  return true;
}

}  // namespace roofline::engine::cuda_ops
