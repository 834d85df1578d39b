// libFuzzer target of the profile-file reader (ProfileData::from_json): any
// bytes must either parse into a profile that writes back out and reads again,
// or be refused with roofline::Error (a malformed file) — never crash, read out
// of bounds or throw anything else. The readers of a profile (profile --load,
// explain --from-json, the store, the merge of a profiled program's files) all
// go through it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "roofline/core/error.hpp"
#include "roofline/core/json_text.hpp"
#include "roofline/profiler/profile_data.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  using namespace roofline;
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;  // not JSON: the callers say so before the reader sees it
  try {
    prof::ProfileData p = prof::ProfileData::from_json(j);
    // What was read writes out and reads back (bad UTF-8 replaced on the way).
    const prof::ProfileData q = prof::ProfileData::from_json(nlohmann::json::parse(json_text(p.to_json())));
    if (q.kernels.size() != p.kernels.size() || q.pm_samples.size() != p.pm_samples.size()) std::abort();
  } catch (const Error&) {
    // Refused with a message: what a malformed file should get.
  }
  return 0;
}
