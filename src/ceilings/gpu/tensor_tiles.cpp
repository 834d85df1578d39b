#include "src/ceilings/gpu/tensor_tiles.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <random>

#include "roofline/core/error.hpp"

namespace roofline::ceilings::gpu {

const char* to_string(TensorType t) {
  switch (t) {
    case TensorType::TF32: return "tf32";
    case TensorType::FP16: return "fp16";
    case TensorType::BF16: return "bf16";
    case TensorType::FP8: return "fp8";
    case TensorType::INT8: return "int8";
  }
  return "?";
}

int element_bytes(TensorType t) {
  switch (t) {
    case TensorType::TF32: return 4;
    case TensorType::FP16:
    case TensorType::BF16: return 2;
    case TensorType::FP8:
    case TensorType::INT8: return 1;
  }
  return 1;
}

namespace {

// Splits v != 0 into sign, unbiased exponent and the fraction bits of a format
// with `mant` explicit bits; throws when v is not exactly representable with
// an exponent in [emin, emax].
struct Parts {
  uint32_t sign, exp_biased, mant;
};
Parts split_exact(double v, int mant, int bias, int emin_biased, int emax_biased, const char* format) {
  Parts p{};
  p.sign = std::signbit(v) ? 1u : 0u;
  int e = 0;
  const double f = std::frexp(std::fabs(v), &e);  // |v| = f * 2^e, f in [0.5, 1)
  const int biased = e - 1 + bias;
  const double m = (2 * f - 1) * std::ldexp(1.0, mant);
  if (v == 0 || biased < emin_biased || biased > emax_biased || m != std::floor(m))
    throw Error(ErrorKind::Internal, fmt::format("{} is not exactly representable in {}", v, format));
  p.exp_biased = static_cast<uint32_t>(biased);
  p.mant = static_cast<uint32_t>(m);
  return p;
}

double join(uint32_t sign, int exp_unbiased, uint32_t mant, int mant_bits) {
  const double v = std::ldexp(1.0 + std::ldexp(static_cast<double>(mant), -mant_bits), exp_unbiased);
  return sign ? -v : v;
}

}  // namespace

uint16_t encode_fp16(double v) {
  Parts p = split_exact(v, 10, 15, 1, 30, "FP16");
  return static_cast<uint16_t>(p.sign << 15 | p.exp_biased << 10 | p.mant);
}
uint16_t encode_bf16(double v) {
  Parts p = split_exact(v, 7, 127, 1, 254, "BF16");
  return static_cast<uint16_t>(p.sign << 15 | p.exp_biased << 7 | p.mant);
}
uint8_t encode_e4m3(double v) {
  Parts p = split_exact(v, 3, 7, 1, 15, "FP8 E4M3");
  if (p.exp_biased == 15 && p.mant == 7) throw Error(ErrorKind::Internal, "E4M3 has no 448+: that encoding is NaN");
  return static_cast<uint8_t>(p.sign << 7 | p.exp_biased << 3 | p.mant);
}
double decode_fp16(uint16_t h) {
  return join(h >> 15, static_cast<int>((h >> 10) & 31) - 15, h & 1023u, 10);
}
double decode_bf16(uint16_t h) { return join(h >> 15, static_cast<int>((h >> 7) & 255) - 127, h & 127u, 7); }
double decode_e4m3(uint8_t q) { return join(q >> 7, static_cast<int>((q >> 3) & 15) - 7, q & 7u, 3); }

TensorTiles make_tiles(TensorType t, uint32_t seed) {
  TensorTiles tiles;
  tiles.type = t;
  const int eb = element_bytes(t);
  tiles.k = TensorTiles::kRowBytes / eb;
  std::mt19937 rng(seed);
  // FP8 keeps to halves (|v| <= 3): its products need fewer bits than FP8
  // accumulation keeps; the others use eighths up to 1.5; INT8 integers.
  const int kmax = t == TensorType::INT8 ? 100 : t == TensorType::FP8 ? 6 : 12;
  const double scale = t == TensorType::INT8 ? 1.0 : t == TensorType::FP8 ? 0.5 : 0.125;
  std::uniform_int_distribution<int> dist(1, kmax);
  std::bernoulli_distribution negative(0.5);
  auto fill = [&](int rows, std::vector<uint8_t>& bytes, std::vector<double>& values) {
    bytes.assign(static_cast<size_t>(rows) * TensorTiles::kRowBytes, 0);
    values.assign(static_cast<size_t>(rows) * tiles.k, 0);
    for (size_t i = 0; i < values.size(); ++i) {
      const int k = dist(rng) * (negative(rng) ? -1 : 1);
      const double v = k * scale;
      values[i] = v;
      uint8_t* dst = bytes.data() + i * eb;
      switch (t) {
        case TensorType::TF32: {
          const float f = static_cast<float>(v);
          std::memcpy(dst, &f, 4);
          break;
        }
        case TensorType::FP16: {
          const uint16_t h = encode_fp16(v);
          std::memcpy(dst, &h, 2);
          break;
        }
        case TensorType::BF16: {
          const uint16_t h = encode_bf16(v);
          std::memcpy(dst, &h, 2);
          break;
        }
        case TensorType::FP8: *dst = encode_e4m3(v); break;
        case TensorType::INT8: *dst = static_cast<uint8_t>(static_cast<int8_t>(k)); break;
      }
    }
  };
  fill(TensorTiles::kM, tiles.a, tiles.a_values);
  fill(TensorTiles::kN, tiles.b, tiles.b_values);
  return tiles;
}

std::vector<double> reference_product(const TensorTiles& tiles, int passes) {
  const int M = TensorTiles::kM, N = TensorTiles::kN, K = tiles.k;
  std::vector<double> d(static_cast<size_t>(M) * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += tiles.a_values[i * K + k] * tiles.b_values[j * K + k];
      d[static_cast<size_t>(i) * N + j] = s * passes;
    }
  return d;
}

TileCheck compare_product(TensorType t, const uint32_t* d_bits, const std::vector<double>& ref) {
  TileCheck c;
  for (size_t i = 0; i < ref.size(); ++i) {
    double got;
    if (t == TensorType::INT8) {
      got = static_cast<double>(static_cast<int32_t>(d_bits[i]));
    } else {
      float f;
      std::memcpy(&f, &d_bits[i], 4);
      got = f;
    }
    const double err = std::fabs(got - ref[i]);
    ++c.checked;
    // Products and sums are exact in FP32; the slack covers a narrower internal
    // accumulator (FP8 on Hopper keeps about 14 bits) and nothing like a wrong
    // element, which is off by whole products. NaN fails.
    const double tol = t == TensorType::INT8 ? 0.0 : std::ldexp(std::fabs(ref[i]) + 1.0, -12);
    if (!(err <= tol)) {
      if (c.mismatches == 0)
        c.first = fmt::format("D[{}][{}] = {}, expected {}", i / TensorTiles::kN, i % TensorTiles::kN, got, ref[i]);
      ++c.mismatches;
    }
    if (err > c.max_abs_error || std::isnan(err)) c.max_abs_error = err;
  }
  return c;
}

}  // namespace roofline::ceilings::gpu
