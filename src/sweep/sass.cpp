#include "roofline/sweep/sass.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "roofline/core/strings.hpp"

#if ROOFLINE_HAVE_CUDA
// Generated at build time by cmake/SassEmbed.cmake (see cmake/SassCheck.cmake).
namespace roofline::sweep::detail {
extern const bool kBuildSassDone;
extern const char* const kBuildSassStatus;
extern const char* const kBuildSassText;
}  // namespace roofline::sweep::detail
#endif

namespace roofline::sweep {

int SassKernel::count(const std::string& op) const {
  auto it = ops.find(op);
  return it == ops.end() ? 0 : it->second;
}

const SassKernel* SassCheck::find(const std::string& kernel, const std::string& arch) const {
  for (const auto& k : kernels)
    if (k.name == kernel && k.arch == arch) return &k;
  return nullptr;
}

std::string sm_arch(int cc_major, int cc_minor) { return fmt::format("sm_{}{}", cc_major, cc_minor); }

namespace {

bool counted_family(const std::string& base) {
  static const char* fams[] = {"FADD", "FMUL", "FFMA", "DADD", "DMUL", "DFMA", "HADD2", "HMUL2", "HFMA2"};
  for (const char* f : fams)
    if (base == f) return true;
  return false;
}

// "        /*0090*/   @!P0 FFMA.FTZ R5, R4, R3, R5 ;   /* 0x... */" -> opcode and operands.
bool split_instruction(const std::string& line, std::string& opcode, std::vector<std::string>& operands) {
  auto c = line.find("*/");
  if (line.find("/*") == std::string::npos || c == std::string::npos) return false;
  std::string rest = trim(line.substr(c + 2));
  auto semi = rest.find(';');
  if (semi == std::string::npos) return false;
  rest = trim(rest.substr(0, semi));
  if (rest.empty()) return false;
  if (rest[0] == '@') {  // predicate
    auto sp = rest.find_first_of(" \t");
    if (sp == std::string::npos) return false;
    rest = trim(rest.substr(sp));
  }
  auto sp = rest.find_first_of(" \t");
  opcode = rest.substr(0, sp);
  operands.clear();
  if (sp != std::string::npos)
    for (const auto& o : split(rest.substr(sp), ',')) operands.push_back(trim(o));
  return true;
}

}  // namespace

std::vector<SassKernel> parse_sass(const std::string& text) {
  std::vector<SassKernel> out;
  std::string arch;
  SassKernel* cur = nullptr;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::string t = trim(line);
    if (starts_with(t, "code for sm_")) {
      arch = t.substr(9);
      cur = nullptr;
      continue;
    }
    if (starts_with(t, "arch = sm_")) {
      arch = trim(t.substr(7));
      cur = nullptr;
      continue;
    }
    if (starts_with(t, "Function :")) {
      out.push_back(SassKernel{trim(t.substr(10)), arch, {}});
      cur = &out.back();
      continue;
    }
    if (!cur) continue;
    std::string opcode;
    std::vector<std::string> operands;
    if (!split_instruction(line, opcode, operands)) continue;
    auto parts = split(opcode, '.');
    if (parts.empty() || !counted_family(parts[0])) continue;
    bool bf16 = false, mma = false;
    for (size_t i = 1; i < parts.size(); ++i) {
      bf16 |= starts_with(parts[i], "BF16");
      mma |= parts[i] == "MMA";
    }
    if (parts[0] == "HFMA2" && operands.size() >= 3) {
      auto zero = [](const std::string& o) { return o == "RZ" || o == "-RZ"; };
      if (zero(operands[1]) && zero(operands[2])) continue;  // a constant load, not arithmetic
    }
    cur->ops[parts[0] + (bf16 ? ".BF16" : "")]++;
    // HFMA2.MMA runs on the second (MMA) pipe: counted within HFMA2, and apart.
    if (parts[0] == "HFMA2" && mma) cur->ops[std::string("HFMA2.MMA") + (bf16 ? ".BF16" : "")]++;
  }
  return out;
}

namespace {

std::string find_cuobjdump() {
  std::vector<std::string> dirs;
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(env)) dirs.push_back(std::string(v) + "/bin");
  if (const char* path = std::getenv("PATH"))
    for (const auto& d : split(path, ':')) dirs.push_back(d);
  dirs.push_back("/usr/local/cuda/bin");
  for (const auto& d : dirs) {
    std::string p = d + "/cuobjdump";
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

std::string function_list() {
  std::vector<std::string> names;
  for (const auto& v : variants()) {
    names.push_back(v.kernel);
    names.push_back(v.overlap_kernel);
    names.push_back(v.ws_kernel);
  }
  return join(names, ",");
}

}  // namespace

SassCheck sass_of_binary(const std::string& path) {
  SassCheck c;
  std::string tool = find_cuobjdump();
  if (tool.empty()) {
    c.why_not = "cuobjdump was not found (looked in $CUDA_HOME/bin, $CUDA_PATH/bin, PATH and /usr/local/cuda/bin)";
    return c;
  }
  // Paths come from readlink or the caller; quote them for the shell.
  std::string cmd = fmt::format("'{}' -sass -fun {} '{}' 2>&1", tool, function_list(), path);
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    c.why_not = "could not start " + tool;
    return c;
  }
  std::string text;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, got);
  int status = pclose(p);
  if (status != 0) {
    c.why_not = fmt::format("{} failed on {}: {}", tool, path, shorten(trim(text), 300));
    return c;
  }
  c.kernels = parse_sass(text);
  c.done = !c.kernels.empty();
  c.source = fmt::format("{} -sass, run now on {}", tool, path);
  if (!c.done) c.why_not = fmt::format("{} found no sweep kernels in {}", tool, path);
  return c;
}

const SassCheck& sweep_sass() {
  static const SassCheck check = [] {
    SassCheck c;
#if ROOFLINE_HAVE_CUDA
    if (detail::kBuildSassDone) {
      c.kernels = parse_sass(detail::kBuildSassText);
      c.done = !c.kernels.empty();
      c.source = std::string("at build time: ") + detail::kBuildSassStatus;
      if (c.done) return c;
    }
    std::string build_reason = detail::kBuildSassDone ? "the build's SASS listing had no sweep kernels"
                                                      : std::string(detail::kBuildSassStatus);
    std::error_code ec;
    std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (ec) {
      c.why_not = build_reason + "; and /proc/self/exe could not be read for a run-time check";
      return c;
    }
    SassCheck now = sass_of_binary(self);
    if (now.done) {
      now.source += " (the build had not checked: " + build_reason + ")";
      return now;
    }
    c.why_not = build_reason + "; at run time: " + now.why_not;
#else
    c.why_not = "this roofline was built without CUDA";
#endif
    return c;
  }();
  return check;
}

MixVerdict mix_verdict(Variant v, const SassCheck& sass, const std::string& arch) {
  return mix_verdict(v, Kernel::Seed, sass, arch);
}

MixVerdict mix_verdict(Variant v, Kernel kernel, const SassCheck& sass, const std::string& arch) {
  const VariantInfo& vi = info(v);
  const char* kname = vi.gpu_kernel(kernel);
  MixVerdict m;
  m.fraction_of_fma_peak = vi.fused ? 1.0 : 0.5;
  const std::string fma_name = v == Variant::Fp64 ? "DFMA" : v == Variant::Fp16 ? "HFMA2"
                                                        : v == Variant::Bf16 ? "HFMA2.BF16" : "FFMA";
  const SassKernel* k = sass.done ? sass.find(kname, arch) : nullptr;
  if (!k) {
    std::string why = !sass.done ? sass.why_not : fmt::format("no {} code for {} in the listing", kname, arch);
    m.text = fmt::format("SASS not checked ({}): taking the source's mix, {} per term -> {}", why, vi.mix,
                         vi.fused ? "2 FLOPs per instruction: the full FMA peak"
                                  : "1 FLOP per instruction: half the " + fma_name + " peak");
    return m;
  }
  m.from_sass = true;
  std::string suffix = v == Variant::Bf16 ? ".BF16" : "";
  std::string add = (v == Variant::Fp64 ? "DADD" : v == Variant::Fp32 || v == Variant::Fma ? "FADD" : "HADD2") + suffix;
  std::string mul = (v == Variant::Fp64 ? "DMUL" : v == Variant::Fp32 || v == Variant::Fma ? "FMUL" : "HMUL2") + suffix;
  std::string fma = fma_name;
  int na = k->count(add), nm = k->count(mul), nf = k->count(fma);
  std::string counts = fmt::format("{} {}, {} {}, {} {}", add, na, mul, nm, fma, nf);
  if (v == Variant::Fp16 || v == Variant::Bf16) {
    const int nmma = k->count(std::string("HFMA2.MMA") + suffix);
    counts += fmt::format(", of which {} HFMA2.MMA{} on the second pipe", nmma, suffix);
  }
  if (na + nm + nf == 0) {
    m.from_sass = false;
    m.text = fmt::format("SASS ({}): {} shows no {}/{}/{} at all ({}); taking the source's mix, {}", arch, kname,
                         add, mul, fma, counts, vi.mix);
    return m;
  }
  if (vi.fused) {
    if (na == 0 && nm == 0) {
      m.fraction_of_fma_peak = 1.0;
      m.text = fmt::format("SASS ({}): {} loop has one {} per term, no {} or {} -> 2 FLOPs per instruction: the full "
                           "{} peak ({})",
                           arch, kname, fma, add, mul, fma, counts);
    } else {
      // Some terms were split: weight by what the instructions do.
      m.fraction_of_fma_peak = (2.0 * nf + na + nm) / (2.0 * (nf + na + nm));
      m.text = fmt::format("SASS ({}): {} mixes {} with separate adds/multiplies ({}) -> about {:.0f}% of the {} peak",
                           arch, kname, fma, counts, 100 * m.fraction_of_fma_peak, fma);
    }
    return m;
  }
  // The seed's loop: every term needs a multiply (the next power) and an
  // accumulate, two dependent chains; whatever forms the compiler picks, that
  // is two instructions for two FLOPs.
  m.fraction_of_fma_peak = 0.5;
  if (nf == 0)
    m.text = fmt::format("SASS ({}): {} loop has {} + {} per term, no {} -> 2 FLOPs per term as 2 instructions: at "
                         "most half the {} peak; the measured add+multiply ceiling says what the mix reaches ({})",
                         arch, kname, add, mul, fma, fma, counts);
  else
    m.text = fmt::format("SASS ({}): {} uses {} as well ({}): the compiler issued some adds or multiplies as FMAs, but "
                         "each term still takes 2 instructions (a multiply for the power and an accumulate) for 2 "
                         "FLOPs -> at most half the {} peak; the measured add+multiply ceiling says what the mix reaches",
                         arch, kname, fma, counts, fma);
  return m;
}

}  // namespace roofline::sweep
