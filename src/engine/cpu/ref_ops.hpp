// The reference ops: plain loops, written to be obviously correct rather than
// fast, templated on the element type. float is the CpuRef backend; double is
// the harness's reference and the subject of the finite-difference checks.
// Shapes and conventions are those of roofline/engine/ops.hpp.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "roofline/engine/ops.hpp"

namespace roofline::engine::ref {

using std::int64_t;

template <class T>
T apply_act(ops::Activation a, T v) {
  // v <= 0 ? 0 : v keeps NaN (as torch.relu does), so a diverging run shows.
  return a == ops::Activation::ReLU ? (v <= T(0) ? T(0) : v) : v;
}

// out (n, out), in (n, in), w (out, in), b (out) or null
template <class T>
void linear_forward(const ops::LinearShape& s, T* out, const T* in, const T* w, const T* b) {
  for (int64_t i = 0; i < s.n; ++i)
    for (int64_t o = 0; o < s.out; ++o) {
      T acc = b ? b[o] : T(0);
      for (int64_t k = 0; k < s.in; ++k) acc += in[i * s.in + k] * w[o * s.in + k];
      out[i * s.out + o] = apply_act(s.act, acc);
    }
}

// out (n, out), in (n, in), wt (in, out) = wᵀ, b (out) or null
template <class T>
void linear_forward_wt(const ops::LinearShape& s, T* out, const T* in, const T* wt, const T* b) {
  for (int64_t i = 0; i < s.n; ++i)
    for (int64_t o = 0; o < s.out; ++o) {
      T acc = b ? b[o] : T(0);
      for (int64_t k = 0; k < s.in; ++k) acc += in[i * s.in + k] * wt[k * s.out + o];
      out[i * s.out + o] = apply_act(s.act, acc);
    }
}

// din (n, in) = dpre (n, out) · w (out, in)
template <class T>
void linear_backward_input(const ops::LinearShape& s, T* din, const T* dpre, const T* w) {
  for (int64_t i = 0; i < s.n; ++i)
    for (int64_t k = 0; k < s.in; ++k) {
      T acc = 0;
      for (int64_t o = 0; o < s.out; ++o) acc += dpre[i * s.out + o] * w[o * s.in + k];
      din[i * s.in + k] = acc;
    }
}

// dw (out, in) = dpreᵀ · in; db (out) = Σ_i dpre
template <class T>
void linear_backward_weight(const ops::LinearShape& s, T* dw, T* db, const T* dpre, const T* in) {
  for (int64_t o = 0; o < s.out; ++o) {
    for (int64_t k = 0; k < s.in; ++k) {
      T acc = 0;
      for (int64_t i = 0; i < s.n; ++i) acc += dpre[i * s.out + o] * in[i * s.in + k];
      dw[o * s.in + k] = acc;
    }
    if (db) {
      T acc = 0;
      for (int64_t i = 0; i < s.n; ++i) acc += dpre[i * s.out + o];
      db[o] = acc;
    }
  }
}

// Element offsets of a convolution's tensors in its format (ops.hpp):
// activations (n, c, h, w) as NCHW or NHWC, weights (k, c/groups, r, s) as
// KCRS or KRSC.
struct ConvIndex {
  int64_t C, H, W, K, OH, OW, CG, R, S;
  bool nhwc;
  explicit ConvIndex(const ops::Conv2dShape& s)
      : C(s.c), H(s.h), W(s.w), K(s.k), OH(s.oh()), OW(s.ow()), CG(s.cg()), R(s.r), S(s.s),
        nhwc(s.format == MemoryFormat::NHWC) {}
  int64_t in(int64_t n, int64_t c, int64_t y, int64_t x) const {
    return nhwc ? ((n * H + y) * W + x) * C + c : ((n * C + c) * H + y) * W + x;
  }
  int64_t out(int64_t n, int64_t k, int64_t y, int64_t x) const {
    return nhwc ? ((n * OH + y) * OW + x) * K + k : ((n * K + k) * OH + y) * OW + x;
  }
  int64_t w(int64_t k, int64_t cg, int64_t r, int64_t q) const {
    return nhwc ? ((k * R + r) * S + q) * CG + cg : ((k * CG + cg) * R + r) * S + q;
  }
  // The first input channel of output channel k's group.
  int64_t c0(int64_t k, int64_t groups) const { return (k / (K / groups)) * CG; }
};

// out (n, k, oh, ow), in (n, c, h, w), w (k, c/groups, r, s), b (k) or null,
// in the shape's format
template <class T>
void conv2d_forward(const ops::Conv2dShape& s, T* out, const T* in, const T* w, const T* b) {
  const ConvIndex ix(s);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t k = 0; k < s.k; ++k) {
      const int64_t c0 = ix.c0(k, s.groups);
      for (int64_t y = 0; y < ix.OH; ++y)
        for (int64_t x = 0; x < ix.OW; ++x) {
          T acc = b ? b[k] : T(0);
          for (int64_t cg = 0; cg < ix.CG; ++cg)
            for (int64_t r = 0; r < s.r; ++r)
              for (int64_t q = 0; q < s.s; ++q) {
                int64_t iy = y * s.stride - s.pad + r, jx = x * s.stride - s.pad + q;
                if (iy < 0 || iy >= s.h || jx < 0 || jx >= s.w) continue;
                acc += in[ix.in(n, c0 + cg, iy, jx)] * w[ix.w(k, cg, r, q)];
              }
          out[ix.out(n, k, y, x)] = apply_act(s.act, acc);
        }
    }
}

// din (n, c, h, w) from dpre (n, k, oh, ow), w (k, c/groups, r, s): each
// output's gradient spread back over the inputs that produced it.
template <class T>
void conv2d_backward_input(const ops::Conv2dShape& s, T* din, const T* dpre, const T* w) {
  const ConvIndex ix(s);
  for (int64_t i = 0; i < s.n * s.c * s.h * s.w; ++i) din[i] = 0;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t k = 0; k < s.k; ++k) {
      const int64_t c0 = ix.c0(k, s.groups);
      for (int64_t y = 0; y < ix.OH; ++y)
        for (int64_t x = 0; x < ix.OW; ++x) {
          T g = dpre[ix.out(n, k, y, x)];
          for (int64_t cg = 0; cg < ix.CG; ++cg)
            for (int64_t r = 0; r < s.r; ++r)
              for (int64_t q = 0; q < s.s; ++q) {
                int64_t iy = y * s.stride - s.pad + r, jx = x * s.stride - s.pad + q;
                if (iy < 0 || iy >= s.h || jx < 0 || jx >= s.w) continue;
                din[ix.in(n, c0 + cg, iy, jx)] += g * w[ix.w(k, cg, r, q)];
              }
        }
    }
}

// dw (k, c/groups, r, s), db (k) or null, from dpre (n, k, oh, ow) and in (n, c, h, w)
template <class T>
void conv2d_backward_weight(const ops::Conv2dShape& s, T* dw, T* db, const T* dpre, const T* in) {
  const ConvIndex ix(s);
  for (int64_t k = 0; k < s.k; ++k) {
    const int64_t c0 = ix.c0(k, s.groups);
    for (int64_t cg = 0; cg < ix.CG; ++cg)
      for (int64_t r = 0; r < s.r; ++r)
        for (int64_t q = 0; q < s.s; ++q) {
          T acc = 0;
          for (int64_t n = 0; n < s.n; ++n)
            for (int64_t y = 0; y < ix.OH; ++y)
              for (int64_t x = 0; x < ix.OW; ++x) {
                int64_t iy = y * s.stride - s.pad + r, jx = x * s.stride - s.pad + q;
                if (iy < 0 || iy >= s.h || jx < 0 || jx >= s.w) continue;
                acc += dpre[ix.out(n, k, y, x)] * in[ix.in(n, c0 + cg, iy, jx)];
              }
          dw[ix.w(k, cg, r, q)] = acc;
        }
    if (db) {
      T acc = 0;
      for (int64_t n = 0; n < s.n; ++n)
        for (int64_t y = 0; y < ix.OH; ++y)
          for (int64_t x = 0; x < ix.OW; ++x) acc += dpre[ix.out(n, k, y, x)];
      db[k] = acc;
    }
  }
}

// Element (n, c, y, x) of an (·, C, H, W) image batch in format f.
inline int64_t image_at(MemoryFormat f, int64_t C, int64_t H, int64_t W, int64_t n, int64_t c, int64_t y, int64_t x) {
  return f == MemoryFormat::NCHW ? ((n * C + c) * H + y) * W + x : ((n * H + y) * W + x) * C + c;
}

// out, argmax (n, c, oh, ow) in s.format; the first maximum in row-major window
// order wins (NaN wins); padded positions are never candidates
template <class T>
void maxpool2d_forward(const ops::Pool2dShape& s, T* out, std::int32_t* argmax, const T* in) {
  const int64_t OH = s.oh(), OW = s.ow();
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t y = 0; y < OH; ++y)
        for (int64_t x = 0; x < OW; ++x) {
          int64_t best = -1;
          T m = T(0);
          for (int64_t r = 0; r < s.kernel; ++r)
            for (int64_t q = 0; q < s.kernel; ++q) {
              const int64_t iy = y * s.stride - s.pad + r, ix = x * s.stride - s.pad + q;
              if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
              const T v = in[image_at(s.format, s.c, s.h, s.w, n, c, iy, ix)];
              if (best < 0 || v > m || std::isnan(v)) {
                m = v;
                best = iy * s.w + ix;
              }
            }
          const int64_t o = image_at(s.format, s.c, OH, OW, n, c, y, x);
          out[o] = m;
          if (argmax) argmax[o] = static_cast<std::int32_t>(best);
        }
}

template <class T>
void maxpool2d_backward(const ops::Pool2dShape& s, T* din, const T* dout, const std::int32_t* argmax) {
  const int64_t OH = s.oh(), OW = s.ow();
  for (int64_t i = 0; i < s.n * s.c * s.h * s.w; ++i) din[i] = 0;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t y = 0; y < OH; ++y)
        for (int64_t x = 0; x < OW; ++x) {
          const int64_t o = image_at(s.format, s.c, OH, OW, n, c, y, x);
          const int64_t a = argmax[o];
          din[image_at(s.format, s.c, s.h, s.w, n, c, a / s.w, a % s.w)] += dout[o];
        }
}

// s.dtype is the backend's; the reference computes in T.
template <class T>
void activation_forward(const ops::EltwiseShape& s, T* out, const T* in) {
  for (int64_t i = 0; i < s.n; ++i) out[i] = apply_act(s.act, in[i]);
}

template <class T>
void activation_backward(const ops::EltwiseShape& s, T* din, const T* dout, const T* out) {
  for (int64_t i = 0; i < s.n; ++i)
    din[i] = s.act == ops::Activation::ReLU ? (out[i] > T(0) ? dout[i] : T(0)) : dout[i];
}

template <class T>
void activation_bias_backward(const ops::BiasGradShape& s, T* dpre, T* db, const T* dout, const T* out) {
  for (int64_t j = 0; j < s.cols; ++j) db[j] = 0;
  for (int64_t i = 0; i < s.rows; ++i)
    for (int64_t j = 0; j < s.cols; ++j) {
      const int64_t k = i * s.cols + j;
      const T g = s.act == ops::Activation::ReLU ? (out[k] > T(0) ? dout[k] : T(0)) : dout[k];
      dpre[k] = g;
      db[j] += g;
    }
}

template <class T>
void softmax_forward(const ops::RowsShape& s, T* out, const T* in) {
  for (int64_t i = 0; i < s.rows; ++i) {
    const T* x = in + i * s.cols;
    T m = x[0];
    for (int64_t j = 1; j < s.cols; ++j) m = x[j] > m ? x[j] : m;
    T* o = out + i * s.cols;
    T sum = 0;
    for (int64_t j = 0; j < s.cols; ++j) {
      o[j] = std::exp(x[j] - m);  // each exp once, kept for the division
      sum += o[j];
    }
    for (int64_t j = 0; j < s.cols; ++j) o[j] = o[j] / sum;
  }
}

template <class T>
void softmax_backward(const ops::RowsShape& s, T* din, const T* dout, const T* out) {
  for (int64_t i = 0; i < s.rows; ++i) {
    T dot = 0;
    for (int64_t j = 0; j < s.cols; ++j) dot += dout[i * s.cols + j] * out[i * s.cols + j];
    for (int64_t j = 0; j < s.cols; ++j) din[i * s.cols + j] = out[i * s.cols + j] * (dout[i * s.cols + j] - dot);
  }
}

template <class T>
void log_softmax_forward(const ops::RowsShape& s, T* out, const T* in) {
  for (int64_t i = 0; i < s.rows; ++i) {
    const T* x = in + i * s.cols;
    T m = x[0];
    for (int64_t j = 1; j < s.cols; ++j) m = x[j] > m ? x[j] : m;
    T sum = 0;
    for (int64_t j = 0; j < s.cols; ++j) sum += std::exp(x[j] - m);
    T lse = m + std::log(sum);
    for (int64_t j = 0; j < s.cols; ++j) out[i * s.cols + j] = x[j] - lse;
  }
}

template <class T>
void log_softmax_backward(const ops::RowsShape& s, T* din, const T* dout, const T* out) {
  for (int64_t i = 0; i < s.rows; ++i) {
    T sum = 0;
    for (int64_t j = 0; j < s.cols; ++j) sum += dout[i * s.cols + j];
    for (int64_t j = 0; j < s.cols; ++j)
      din[i * s.cols + j] = dout[i * s.cols + j] - std::exp(out[i * s.cols + j]) * sum;
  }
}

template <class T>
void nll_loss_forward(const ops::RowsShape& s, T* loss, const T* logp, const std::int32_t* labels) {
  T acc = 0;
  for (int64_t i = 0; i < s.rows; ++i) acc -= logp[i * s.cols + labels[i]];
  loss[0] = acc / static_cast<T>(s.rows);
}

template <class T>
void nll_loss_backward(const ops::RowsShape& s, T* dlogp, const std::int32_t* labels, T dloss) {
  for (int64_t i = 0; i < s.rows * s.cols; ++i) dlogp[i] = 0;
  for (int64_t i = 0; i < s.rows; ++i) dlogp[i * s.cols + labels[i]] = -dloss / static_cast<T>(s.rows);
}

// Per-row loss and gradient of the fused log-softmax + NLL. Returns the sum of
// the rows' losses and counts correct rows (argmax, first maximum wins).
template <class T>
T cross_entropy(const ops::RowsShape& s, T* dlogits, const T* logits, const std::int32_t* labels, T grad_scale,
                std::int64_t* correct) {
  T total = 0;
  for (int64_t i = 0; i < s.rows; ++i) {
    const T* x = logits + i * s.cols;
    int64_t arg = 0;
    T m = x[0];
    for (int64_t j = 1; j < s.cols; ++j)
      if (x[j] > m) {
        m = x[j];
        arg = j;
      }
    T sum = 0;
    for (int64_t j = 0; j < s.cols; ++j) sum += std::exp(x[j] - m);
    T lse = m + std::log(sum);
    total += lse - x[labels[i]];
    if (correct && arg == labels[i]) ++*correct;
    if (dlogits)
      for (int64_t j = 0; j < s.cols; ++j)
        dlogits[i * s.cols + j] = grad_scale * (std::exp(x[j] - lse) - (j == labels[i] ? T(1) : T(0)));
  }
  return total;
}

// torch.optim.SGD with dampening 0 (the single-tensor path of its docs):
//   g' = g·inv_scale + wd·p;  buf = momentum·buf + g';
//   step = nesterov ? g' + momentum·buf : buf;  p = p − lr·step
// (no momentum: step = g'). inv_scale = 1 multiplies exactly.
template <class T>
void sgd_update(const ops::SgdShape& s, T* p, const T* g, T* buf, const ops::SgdConfig& cfg, T inv_scale = T(1)) {
  const T lr = cfg.lr, mom = cfg.momentum, wd = cfg.weight_decay;
  for (int64_t i = 0; i < s.n; ++i) {
    T d = g[i] * inv_scale + wd * p[i];
    if (s.momentum) {
      buf[i] = mom * buf[i] + d;
      d = cfg.nesterov ? d + mom * buf[i] : buf[i];
    }
    p[i] = p[i] - lr * d;
  }
}

// Bilinear sample of a single-channel uint8 image at output pixel (oy, ox),
// half-pixel centres with edge clamping (torch interpolate, align_corners=False).
template <class T>
T resize_sample(const std::uint8_t* img, int64_t ih, int64_t iw, int64_t oh, int64_t ow, int64_t oy, int64_t ox) {
  if (ih == oh && iw == ow) return static_cast<T>(img[oy * iw + ox]);
  const T scale_y = static_cast<T>(ih) / static_cast<T>(oh), scale_x = static_cast<T>(iw) / static_cast<T>(ow);
  T sy = (static_cast<T>(oy) + T(0.5)) * scale_y - T(0.5);
  T sx = (static_cast<T>(ox) + T(0.5)) * scale_x - T(0.5);
  if (sy < 0) sy = 0;
  if (sx < 0) sx = 0;
  int64_t y0 = static_cast<int64_t>(sy), x0 = static_cast<int64_t>(sx);
  int64_t y1 = y0 + 1 < ih ? y0 + 1 : ih - 1, x1 = x0 + 1 < iw ? x0 + 1 : iw - 1;
  T fy = sy - static_cast<T>(y0), fx = sx - static_cast<T>(x0);
  T top = static_cast<T>(img[y0 * iw + x0]) * (1 - fx) + static_cast<T>(img[y0 * iw + x1]) * fx;
  T bot = static_cast<T>(img[y1 * iw + x0]) * (1 - fx) + static_cast<T>(img[y1 * iw + x1]) * fx;
  return top * (1 - fy) + bot * fy;
}

template <class T>
void gather_batch(const ops::BatchShape& s, T* x, std::int32_t* y, const std::uint8_t* images,
                  const std::uint8_t* labels, const std::int32_t* order, int64_t first, std::int32_t step) {
  for (int64_t i = 0; i < s.batch; ++i) {
    const int64_t idx = order[first + static_cast<int64_t>(step) * s.stride + i];
    const std::uint8_t* img = images + idx * s.in_h * s.in_w;
    for (int64_t oy = 0; oy < s.out_h; ++oy)
      for (int64_t ox = 0; ox < s.out_w; ++ox) {
        T v = resize_sample<T>(img, s.in_h, s.in_w, s.out_h, s.out_w, oy, ox);
        x[(i * s.out_h + oy) * s.out_w + ox] =
            (v * static_cast<T>(1.0 / 255.0) - static_cast<T>(s.mean)) * static_cast<T>(s.inv_std);
      }
    y[i] = labels[idx];
  }
}

}  // namespace roofline::engine::ref
