// libFuzzer target of the kernel-name decoder (`roofline explain`, the
// profiler's tables and diagnosis rules): any bytes, taken as a kernel name,
// must decode (recognised or not), demangle and shorten without crashing,
// hanging or reading out of bounds, and a shortened name must fit its width.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "roofline/core/strings.hpp"
#include "roofline/profiler/explain.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  using namespace roofline;
  const std::string_view name(reinterpret_cast<const char*>(data), size);
  const prof::KernelInfo k = prof::explain_kernel(name);
  for (const auto& f : k.fields)
    if (f.key.empty()) std::abort();
  (void)k.to_json();
  const std::string s = prof::shorten_kernel_name(name, 40);
  if (display_width(s) > 40) std::abort();
  (void)prof::demangle_kernel_name(name);
  (void)printable(name);
  return 0;
}
