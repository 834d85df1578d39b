// The harness runner: buffers with guard regions on the context's device,
// poisoned outputs, the float64 reference, and the comparisons.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstring>

#include "roofline/core/error.hpp"
#include "roofline/core/stats.hpp"
#include "roofline/engine/half.hpp"
#include "roofline/engine/op_harness.hpp"
#include "src/engine/cuda/cuda_api.hpp"
#include "src/engine/op_harness/op_case.hpp"

namespace roofline::engine::harness {

namespace {

constexpr std::int64_t kGuard = 64;               // elements each side; keeps 256-byte alignment
constexpr std::uint32_t kPoison32 = 0x7fa5a5a5u;  // a NaN as float, a large int as i32
constexpr std::uint64_t kPoison64 = 0x7ff4a5a5a5a5a5a5ull;
constexpr std::uint8_t kPoison8 = 0xa5;

bool is_half(DType t) { return t == DType::BF16 || t == DType::F16; }
bool is_float(DType t) { return t == DType::F32 || t == DType::F64 || is_half(t); }

// A value rounded to `t` (round to nearest even, as the GPU converts).
double round_to(DType t, double v) {
  const float f = static_cast<float>(v);
  switch (t) {
    case DType::F32:
      return f;
    case DType::BF16:
      return float_from_bf16(bf16_from_float(f));
    case DType::F16:
      return float_from_f16(f16_from_float(f));
    default:
      return v;
  }
}

// Bytes of one buffer's values (count elements) in its dtype.
std::vector<std::uint8_t> to_bytes(const BufSpec& b, const HostBuf& h) {
  const size_t n = static_cast<size_t>(b.count);
  std::vector<std::uint8_t> out(n * dtype_size(b.dtype));
  std::uint8_t* o = out.data();
  switch (b.dtype) {
    case DType::F32:
      for (size_t i = 0; i < n; ++i) {
        const float v = static_cast<float>(h.f.at(i));
        std::memcpy(o + 4 * i, &v, 4);
      }
      break;
    case DType::BF16:
    case DType::F16:
      for (size_t i = 0; i < n; ++i) {
        const float v = static_cast<float>(h.f.at(i));
        const std::uint16_t u = b.dtype == DType::BF16 ? bf16_from_float(v) : f16_from_float(v);
        std::memcpy(o + 2 * i, &u, 2);
      }
      break;
    case DType::F64:
      ROOFLINE_ASSERT(h.f.size() >= n, "harness buffer values");
      if (n > 0) std::memcpy(o, h.f.data(), 8 * n);
      break;
    case DType::I32:
      ROOFLINE_ASSERT(h.i.size() >= n, "harness buffer values");
      if (n > 0) std::memcpy(o, h.i.data(), 4 * n);
      break;
    case DType::U8:
      ROOFLINE_ASSERT(h.u.size() >= n, "harness buffer values");
      if (n > 0) std::memcpy(o, h.u.data(), n);
      break;
  }
  return out;
}

HostBuf from_bytes(const BufSpec& b, const std::uint8_t* p) {
  HostBuf h;
  const size_t n = static_cast<size_t>(b.count);
  switch (b.dtype) {
    case DType::F32:
      h.f.resize(n);
      for (size_t i = 0; i < n; ++i) {
        float v;
        std::memcpy(&v, p + 4 * i, 4);
        h.f[i] = v;
      }
      break;
    case DType::BF16:
    case DType::F16:
      h.f.resize(n);
      for (size_t i = 0; i < n; ++i) {
        std::uint16_t u;
        std::memcpy(&u, p + 2 * i, 2);
        h.f[i] = b.dtype == DType::BF16 ? float_from_bf16(u) : float_from_f16(u);
      }
      break;
    case DType::F64:
      h.f.resize(n);
      if (n > 0) std::memcpy(h.f.data(), p, 8 * n);
      break;
    case DType::I32:
      h.i.resize(n);
      if (n > 0) std::memcpy(h.i.data(), p, 4 * n);
      break;
    case DType::U8:
      h.u.assign(p, p + n);
      break;
  }
  return h;
}

constexpr std::uint16_t kPoison16 = 0x7fa5;  // a NaN as bf16 and as fp16

void poison(std::uint8_t* p, size_t elems, DType t) {
  for (size_t i = 0; i < elems; ++i) {
    if (t == DType::F64)
      std::memcpy(p + 8 * i, &kPoison64, 8);
    else if (t == DType::U8)
      p[i] = kPoison8;
    else if (is_half(t))
      std::memcpy(p + 2 * i, &kPoison16, 2);
    else
      std::memcpy(p + 4 * i, &kPoison32, 4);
  }
}

bool is_poison(const std::uint8_t* p, size_t elems, DType t) {
  std::vector<std::uint8_t> ref(elems * dtype_size(t));
  poison(ref.data(), elems, t);
  return std::memcmp(p, ref.data(), ref.size()) == 0;
}

// Device buffers of a case: guard | values | guard, all on ctx's device.
struct Buffers {
  std::vector<Tensor> storage;
  DevPtrs ptrs;
};

// Sizes every buffer and rounds floating values to their buffer's dtype, so
// the float64 reference sees exactly the values the backend is given.
void fill_defaults(const OpCase& c, HostBufs& h) {
  for (size_t b = 0; b < c.bufs.size(); ++b) {
    const auto n = static_cast<size_t>(c.bufs[b].count);
    const DType t = c.bufs[b].dtype;
    if (is_float(t)) {
      h[b].f.resize(n, 0.0);
      if (t != DType::F64)
        for (auto& v : h[b].f) v = round_to(t, v);
    } else if (c.bufs[b].dtype == DType::I32) {
      h[b].i.resize(n, 0);
    } else {
      h[b].u.resize(n, 0);
    }
  }
}

Buffers upload(Context& ctx, const OpCase& c, const HostBufs& h, const std::vector<int>& poisoned, bool guards) {
  Buffers d;
  const std::int64_t g = guards ? kGuard : 0;
  for (size_t b = 0; b < c.bufs.size(); ++b) {
    const BufSpec& spec = c.bufs[b];
    const size_t es = dtype_size(spec.dtype);
    Tensor t = ctx.empty({spec.count + 2 * g}, spec.dtype == DType::F64 ? DType::F64 : spec.dtype, "harness buffer");
    std::vector<std::uint8_t> bytes(static_cast<size_t>(spec.count + 2 * g) * es);
    poison(bytes.data(), static_cast<size_t>(g), spec.dtype);
    poison(bytes.data() + static_cast<size_t>(g + spec.count) * es, static_cast<size_t>(g), spec.dtype);
    bool is_poisoned = false;
    for (int p : poisoned) is_poisoned |= p == static_cast<int>(b);
    if (is_poisoned) {
      poison(bytes.data() + static_cast<size_t>(g) * es, static_cast<size_t>(spec.count), spec.dtype);
    } else {
      std::vector<std::uint8_t> v = to_bytes(spec, h[b]);
      if (!v.empty()) std::memcpy(bytes.data() + static_cast<size_t>(g) * es, v.data(), v.size());
    }
    copy_bytes(t.raw(), t.device(), bytes.data(), Device::cpu(), bytes.size());
    d.ptrs.push_back(static_cast<char*>(t.raw()) + static_cast<size_t>(g) * es);
    d.storage.push_back(std::move(t));
  }
  return d;
}

double rel_l2(const std::vector<double>& out, const std::vector<double>& ref, bool* finite) {
  double num = 0, den = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) *finite = false;
    num += (out[i] - ref[i]) * (out[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

double seconds_per_call(Context& ctx, const std::function<void()>& fn, int reps) {
  if (ctx.is_cuda()) return detail::cuda_time(ctx.cuda(), fn, reps);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}

}  // namespace

std::vector<std::string> op_names() {
  std::vector<std::string> names = {"linear",        "linear+relu",  "conv2d",        "conv2d+relu",
                                    "conv2d_nets",   "conv2d_nhwc",  "conv2d_groups", "maxpool2d",
                                    "relu",          "relu+bias_grad", "softmax",     "log_softmax",
                                    "nll_loss",      "cross_entropy", "sgd",          "linear_weight_sgd",
                                    "gather_batch",  "sgd_nesterov", "sgd_scaled",    "adamw",
                                    "adamw_scaled",  "cast",         "grads_check_finite", "scale_loss_grad",
                                    "loss_scale_update"};
  for (const auto& n : cnn_op_names()) names.push_back(n);  // op_cases_cnn.cpp
  for (const auto& n : transformer_op_names()) names.push_back(n);  // op_cases_transformer.cpp
  return names;
}

std::string skip_reason(const std::string& op, Backend backend, bool perf) {
  if (backend != Backend::Cpu) return "";
  if (op == "conv2d_nets" && perf)
    return "AlexNet's and ResNet-18's convolutions at a training batch take minutes on the CPU here; time the CPU "
           "side with roofline bench";
  return "";
}

// fp32: the backends sum in other orders than the float64 reference (~1e-6
// seen). bf16 and fp16: an output is computed in fp32 from inputs already
// rounded to the dtype (the reference sees the same rounded inputs) and
// rounded once when stored, a relative error of at most the unit roundoff u per
// element (bf16: 8 significant bits, u = 2^-8 ≈ 3.9e-3; fp16: 11 bits, u =
// 2^-11 ≈ 4.9e-4); the bound is 2u, room for a second rounding of an
// intermediate stored in the dtype (a pass that reads what the last one wrote).
double error_bound(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return 1e-5;  // fp32 with a different summation order: ~1e-6 seen
    case DType::F64:
      return 1e-5;  // statistics accumulated from fp32 values
    case DType::BF16:
      return 0x1p-7;  // 2u, u = 2^-8
    case DType::F16:
      return 0x1p-10;  // 2u, u = 2^-11
    default:
      return 0;  // integers: exact
  }
}

std::int64_t count_skipped(const std::vector<CheckResult>& results, std::string* reason) {
  std::int64_t n = 0;
  for (const auto& r : results)
    if (r.skipped) {
      if (n == 0 && reason) *reason = r.skip_reason;
      ++n;
    }
  return n;
}

std::string CheckResult::describe() const {
  if (skipped) return fmt::format("{} {} [{}] on {}: skipped: {}", op, pass, shape, backend, skip_reason);
  return fmt::format(
      "{} {} [{}] on {}: output {}: rel. error {:.3g} (bound {:.3g}){}{}{}{}{}", op, pass, shape, backend, output,
      rel_error, bound, finite ? "" : ", NaN/Inf or unwritten elements", guards_ok ? "" : ", wrote outside its buffer",
      inputs_ok ? "" : ", modified an input",
      zero_mismatches == 0 ? "" : fmt::format(", {} zeros not where the reference has them", zero_mismatches),
      accepted_unsupported ? ", ran a bf16/fp16 case instead of refusing it (CPU backends are fp32 only)" : "");
}

std::string GradCheckResult::describe() const {
  return fmt::format("{} [{}] d/d{}: analytic vs finite differences rel. error {:.3g} (bound {:.3g})", op, shape, wrt,
                     rel_error, bound);
}

namespace {

// Every output of every pass of one case against its float64 reference.
void check_case(OpCase& c, Context& ctx, Rng& rng, std::vector<CheckResult>& results) {
  {
    HostBufs h(c.bufs.size());
    c.fill(rng, h);
    fill_defaults(c, h);
    for (const PassSpec& pass : c.passes) {
      std::vector<int> poisoned;
      for (int o : pass.outputs)
        if (c.bufs[static_cast<size_t>(o)].role == Role::Output) poisoned.push_back(o);
      Buffers d = upload(ctx, c, h, poisoned, true);
      // A backend without the case's dtype refuses it (Error(Unsupported)):
      // reported as skipped. The CPU backends must refuse bf16 and fp16.
      try {
        pass.run(ctx, d.ptrs);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::Unsupported || !c.low_precision()) throw;
        for (int o : pass.outputs) {
          CheckResult r;
          r.op = c.op;
          r.pass = pass.name;
          r.shape = c.shape;
          r.backend = to_string(ctx.backend());
          r.output = c.bufs[static_cast<size_t>(o)].name;
          r.bound = error_bound(c.bufs[static_cast<size_t>(o)].dtype);
          r.skipped = true;
          r.skip_reason = e.what();
          results.push_back(r);
        }
        continue;
      }
      ctx.synchronize();
      const bool accepted_unsupported = !ctx.is_cuda() && c.low_precision();
      HostBufs ref = h;
      pass.ref(ref);

      bool inputs_ok = true, guards_ok = true;
      std::vector<HostBuf> got(c.bufs.size());
      for (size_t b = 0; b < c.bufs.size(); ++b) {
        const BufSpec& spec = c.bufs[b];
        const size_t es = dtype_size(spec.dtype);
        std::vector<std::uint8_t> bytes(static_cast<size_t>(spec.count + 2 * kGuard) * es);
        copy_bytes(bytes.data(), Device::cpu(), d.storage[b].raw(), d.storage[b].device(), bytes.size());
        guards_ok = guards_ok && is_poison(bytes.data(), kGuard, spec.dtype) &&
                    is_poison(bytes.data() + static_cast<size_t>(kGuard + spec.count) * es, kGuard, spec.dtype);
        got[b] = from_bytes(spec, bytes.data() + static_cast<size_t>(kGuard) * es);
        bool written = false;
        for (int o : pass.outputs) written |= o == static_cast<int>(b);
        if (!written) inputs_ok = inputs_ok && to_bytes(spec, got[b]) == to_bytes(spec, h[b]);
      }
      for (int o : pass.outputs) {
        const BufSpec& spec = c.bufs[static_cast<size_t>(o)];
        CheckResult r;
        r.op = c.op;
        r.pass = pass.name;
        r.shape = c.shape;
        r.backend = to_string(ctx.backend());
        r.output = spec.name;
        r.bound = error_bound(spec.dtype);
        r.guards_ok = guards_ok;
        r.inputs_ok = inputs_ok;
        r.accepted_unsupported = accepted_unsupported;
        if (is_float(spec.dtype)) {
          const auto& a = got[static_cast<size_t>(o)].f;
          const auto& e = ref[static_cast<size_t>(o)].f;
          r.rel_error = rel_l2(a, e, &r.finite);
          if (spec.exact_zeros)
            for (size_t i = 0; i < a.size(); ++i) r.zero_mismatches += (a[i] == 0.0) != (e[i] == 0.0);
        } else {
          const auto& a = got[static_cast<size_t>(o)].i;
          const auto& e = ref[static_cast<size_t>(o)].i;
          size_t wrong = 0;
          for (size_t i = 0; i < a.size(); ++i) wrong += a[i] != e[i];
          r.rel_error = a.empty() ? 0 : static_cast<double>(wrong) / static_cast<double>(a.size());
        }
        if (!std::isfinite(r.rel_error)) r.finite = false;
        results.push_back(r);
      }
    }
  }
}

}  // namespace

std::vector<CheckResult> check_op(const std::string& op, Context& ctx, Rng& rng, int cases) {
  std::vector<CheckResult> results;
  for (int k = 0; k < cases; ++k) {
    OpCase c = make_case(op, rng);
    check_case(c, ctx, rng, results);
  }
  return results;
}

std::vector<CheckResult> check_model_shapes(const std::string& op, Context& ctx, Rng& rng, std::int64_t batch) {
  std::vector<CheckResult> results;
  for (OpCase& c : model_check_cases(op, batch)) check_case(c, ctx, rng, results);
  return results;
}

std::vector<CheckResult> check_conv(const ops::Conv2dShape& s, Context& ctx, Rng& rng) {
  if (!s.valid()) throw_usage("check_conv: invalid convolution shape", "sizes must be positive and the kernel fit");
  std::vector<CheckResult> results;
  OpCase c = conv_case(s);
  check_case(c, ctx, rng, results);
  return results;
}

std::vector<CheckResult> check_linear(const ops::LinearShape& s, Context& ctx, Rng& rng) {
  if (s.n < 1 || s.in < 1 || s.out < 1)
    throw_usage("check_linear: invalid linear shape", "rows, inputs and outputs must be positive");
  std::vector<CheckResult> results;
  OpCase c = linear_case(s);
  check_case(c, ctx, rng, results);
  return results;
}

std::vector<GradCheckResult> gradient_check(const std::string& op, Rng& rng, int cases) {
  std::vector<GradCheckResult> out;
  constexpr int kSamples = 24;
  for (int k = 0; k < cases; ++k) {
    OpCase c = make_case(op, rng);
    HostBufs h(c.bufs.size());
    c.fill(rng, h);
    fill_defaults(c, h);
    for (const GradSpec& g : c.grads) {
      const std::vector<double> analytic = g.grad(h);
      const auto& x = h[static_cast<size_t>(g.buffer)].f;
      double num = 0, den = 0;
      std::vector<size_t> idxs;
      if (x.size() <= static_cast<size_t>(kSamples))
        for (size_t i = 0; i < x.size(); ++i) idxs.push_back(i);
      else
        for (int s = 0; s < kSamples; ++s) idxs.push_back(static_cast<size_t>(rng.below(x.size())));
      for (size_t idx : idxs) {
        HostBufs hp = h, hm = h;
        hp[static_cast<size_t>(g.buffer)].f[idx] += g.eps;
        hm[static_cast<size_t>(g.buffer)].f[idx] -= g.eps;
        const double fd = (g.loss(hp) - g.loss(hm)) / (2 * g.eps);
        num += (fd - analytic[idx]) * (fd - analytic[idx]);
        den += analytic[idx] * analytic[idx];
      }
      GradCheckResult r;
      r.op = c.op;
      r.shape = c.shape;
      r.wrt = g.wrt;
      r.rel_error = std::sqrt(num) / std::max(std::sqrt(den), 1.0);
      r.bound = 1e-6;
      out.push_back(r);
    }
  }
  return out;
}

std::vector<PerfResult> perf_op(const std::string& op, Context& ctx, std::int64_t batch, double min_seconds) {
  std::vector<PerfResult> out;
  Rng rng(1234);
  for (OpCase& c : perf_cases(op, batch)) {
    HostBufs h(c.bufs.size());
    c.fill(rng, h);
    fill_defaults(c, h);
    Buffers d = upload(ctx, c, h, {}, false);
    for (const PassSpec& pass : c.passes) {
      auto call = [&] { pass.run(ctx, d.ptrs); };
      try {
        call();  // warm-up (plans, caches)
      } catch (const Error& e) {
        // A dtype the backend refuses (bf16 on the CPU): nothing to time.
        if (e.kind() != ErrorKind::Unsupported || !c.low_precision()) throw;
        break;
      }
      ctx.synchronize();
      double one = seconds_per_call(ctx, call, 1);
      const int reps = static_cast<int>(std::clamp(2e-3 / std::max(one, 1e-9), 1.0, 10000.0));
      std::vector<double> samples;
      double spent = 0;
      while ((spent < min_seconds || samples.size() < 5) && samples.size() < 200) {
        const double t = seconds_per_call(ctx, call, reps);
        samples.push_back(t);
        spent += t * reps;
      }
      Summary s = summarize(samples);
      PerfResult r;
      r.op = c.op;
      r.pass = pass.name;
      r.shape = c.shape;
      r.backend = to_string(ctx.backend());
      r.seconds = s.median;
      r.rel_iqr = s.rel_iqr();
      r.cost = pass.cost;
      out.push_back(r);
    }
  }
  return out;
}

}  // namespace roofline::engine::harness
