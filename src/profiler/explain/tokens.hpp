// Vocabulary shared by the kernel-name decoders (private to explain/):
// architectures, data-type spellings, shapes and layouts.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace roofline::prof::detail {

// "ampere" -> 80, "sm90a" -> 90, "sm_86" -> 86, "hopper" -> 90; 0 when not an architecture.
int sm_from_token(std::string_view tok);
// 80 -> "Ampere", 89 -> "Ada Lovelace", 90 -> "Hopper"; "" when unknown.
std::string arch_name(int sm);

// One type spelling as found in library names ("f32", "bf16", "tf32", "e4m3",
// "fp16", "s8", "int8", "void") -> canonical ("fp32", "bf16", ...); "" when
// not a type. "void" maps to "none".
std::string type_from_token(std::string_view tok);
// A run of concatenated spellings: "bf16bf16" -> {bf16, bf16}, "tf32f32" ->
// {tf32, fp32}; empty when the token is not entirely types.
std::vector<std::string> split_type_run(std::string_view tok);
// The BLAS one-letter precisions: s d h c z (and t = bf16 in nvjet names).
std::string type_from_blas_letter(char c);
// C++ spellings in template arguments: "float", "c10::Half", "__nv_bfloat16",
// "cutlass::half_t", "double", "signed char", ... -> canonical; "" otherwise.
std::string type_from_cpp(std::string_view t);
// Canonical -> for people: "fp32" -> "FP32", "fp8e4m3" -> "FP8 E4M3".
std::string display_type(std::string_view canonical);
// Types tensor cores multiply (tf32, fp16, bf16, fp8, int8, int4; fp64 from sm_80).
bool tensor_core_type(std::string_view canonical);

// An MMA instruction's M×N×K as library names write it, digits run together:
// "1688" -> {16, 8, 8}, "16816" -> {16, 8, 16}, "884" -> {8, 8, 4},
// "161616" -> {16, 16, 16}; empty unless the token is exactly three of 16,
// 32, 64, 8, 4.
std::vector<int> mma_shape(std::string_view digits);
// "nhwc" -> "NHWC": layouts and epilogues as people write them.
std::string upper(std::string_view s);

// "128x64x32" -> {128, 64, 32}; empty unless the token is numbers joined by 'x'.
std::vector<int> parse_dims(std::string_view tok);
std::string dims_text(const std::vector<int>& d, std::string_view sep = "\xC3\x97");  // "128×64"

// BLAS transpose letters "tn", "nt", "nn", "tt" (any case), and with a third
// letter for the output ("tnn"): true when `tok` is one.
bool is_blas_layout(std::string_view tok);
// "tn" -> "A transposed, B not (tn)".
std::string blas_layout_phrase(std::string_view tok);

// Template-argument identifiers of PyTorch's kernel machinery that never name
// the operation ("gpu_kernel_impl", "BinaryFunctor", "OffsetCalculator", ...):
// the decoder and the short names look past them for the functor that does.
bool generic_pytorch_identifier(std::string_view id);

bool is_number(std::string_view tok);
int to_int(std::string_view tok);

}  // namespace roofline::prof::detail
