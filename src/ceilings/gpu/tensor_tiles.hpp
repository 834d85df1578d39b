// Operand tiles for the wgmma kernels and their CPU reference: A (64 x K) and
// B (256 x K), K = 128 bytes of elements, row-major with K contiguous, filled
// with small exact values (k/8, 0 < |k| <= 12; INT8: k) so that every product
// and every sum is exact in FP32 and the GPU result must equal the reference
// bit for bit. Plain C++ (no CUDA): also tested on the CPU.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace roofline::ceilings::gpu {

enum class TensorType { TF32, FP16, BF16, FP8, INT8 };
const char* to_string(TensorType t);  // "tf32", "fp16", "bf16", "fp8", "int8"
int element_bytes(TensorType t);

struct TensorTiles {
  static constexpr int kM = 64, kN = 256, kRowBytes = 128;
  TensorType type = TensorType::BF16;
  int k = 0;                     // elements per row: 128 / element_bytes
  std::vector<uint8_t> a, b;     // kM x 128 bytes, kN x 128 bytes (encoded elements)
  std::vector<double> a_values, b_values;  // the same elements as numbers
};

// Fresh random tiles (different for each seed).
TensorTiles make_tiles(TensorType t, uint32_t seed);
// D = A . B^T (kM x kN, row-major), times `passes` (the kernel accumulates one
// product per pass over K).
std::vector<double> reference_product(const TensorTiles& tiles, int passes = 1);

// Exact encodings of values that the format represents exactly (throws
// Internal for any other value): used to build the tiles.
uint16_t encode_fp16(double v);
uint16_t encode_bf16(double v);
uint8_t encode_e4m3(double v);
double decode_fp16(uint16_t h);
double decode_bf16(uint16_t h);
double decode_e4m3(uint8_t q);

struct TileCheck {
  size_t mismatches = 0;   // elements that differ from the reference
  size_t checked = 0;
  double max_abs_error = 0;
  std::string first;       // "D[3][17] = 2.5, expected 1.25" for the first mismatch
  bool ok() const { return checked > 0 && mismatches == 0; }
};
// Compares D (FP32 or INT32 words as `d_bits`, kM x kN row-major) with `ref`.
TileCheck compare_product(TensorType t, const uint32_t* d_bits, const std::vector<double>& ref);

}  // namespace roofline::ceilings::gpu
