// The range profiler's plain options (both builds).
#include "roofline/profiler/range_profiler.hpp"

namespace roofline::prof {

const char* to_string(L2Clean c) noexcept {
  switch (c) {
    case L2Clean::None:
      return "none";
    case L2Clean::Memset:
      return "memset";
    case L2Clean::Evict:
      return "evict";
  }
  return "none";
}

std::optional<L2Clean> parse_l2_clean(std::string_view s) {
  for (L2Clean c : {L2Clean::None, L2Clean::Memset, L2Clean::Evict})
    if (s == to_string(c)) return c;
  return std::nullopt;
}

}  // namespace roofline::prof
