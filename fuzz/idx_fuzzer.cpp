// libFuzzer target of the IDX reader: any bytes (gzip-compressed when they
// start with the gzip magic, as in a file) must either parse into
// a consistent array or throw roofline::Error — never crash, hang, read out of
// bounds or allocate without limit. Build and run: see docs/engine.md "Fuzzing".
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "roofline/core/error.hpp"
#include "roofline/engine/data.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  using namespace roofline;
  try {
    engine::IdxArray a = engine::parse_idx(data, size, "fuzz input");
    // A parsed array must be consistent with its dimensions.
    size_t count = 1;
    for (auto d : a.dims) {
      if (d <= 0) std::abort();
      count *= static_cast<size_t>(d);
    }
    if (count != a.data.size() || a.dims.empty() || a.dims.size() > 4) std::abort();
    if (a.dims.size() == 3) {
      engine::IdxArray labels;
      labels.dims = {a.dims[0]};
      labels.data.assign(static_cast<size_t>(a.dims[0]), 0);
      engine::make_image_set(a, labels, "fuzz");
    }
  } catch (const Error&) {
    // Rejected with a message: what bad input should get.
  }
  return 0;
}
