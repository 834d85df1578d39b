#include "roofline/engine/precision.hpp"

#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::engine {

const char* to_string(Precision p) {
  switch (p) {
    case Precision::FP32:
      return "fp32";
    case Precision::TF32:
      return "tf32";
    case Precision::BF16:
      return "bf16";
    case Precision::FP16:
      return "fp16";
  }
  return "?";
}

Precision parse_precision(const std::string& s) {
  for (Precision p : {Precision::FP32, Precision::TF32, Precision::BF16, Precision::FP16})
    if (s == to_string(p)) return p;
  throw Error(ErrorKind::Usage, fmt::format("unknown precision '{}'", printable(s)),
              "use fp32 (TF32 off), tf32, bf16 or fp16, comma-separated for several");
}

std::vector<Precision> parse_precisions(const std::string& csv) {
  std::vector<Precision> out;
  size_t start = 0;
  while (start <= csv.size()) {
    size_t end = csv.find(',', start);
    if (end == std::string::npos) end = csv.size();
    out.push_back(parse_precision(csv.substr(start, end - start)));
    start = end + 1;
  }
  return out;
}

DType activation_dtype(Precision p) {
  switch (p) {
    case Precision::BF16:
      return DType::BF16;
    case Precision::FP16:
      return DType::F16;
    default:
      return DType::F32;
  }
}

std::string precision_unsupported_reason(Precision p, int major, int minor) {
  if ((p == Precision::BF16 || p == Precision::TF32) && major < 8)
    return fmt::format("{} needs the tensor cores of compute capability 8.0 (Ampere) or newer; this GPU is {}.{}",
                       to_string(p), major, minor);
  return {};
}

}  // namespace roofline::engine
