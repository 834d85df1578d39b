// Profiles in the results store (schema v3, docs/store.md): one `profiles`
// row per profiled program, holding the whole ProfileData as JSON for an
// exact round trip, and its kernels, API calls, copies, PM samples, counters
// and diagnoses as rows, all written in one transaction.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "roofline/profiler/profile_data.hpp"
#include "roofline/store/db.hpp"

namespace roofline::prof {

struct ProfileRow {
  std::int64_t id = 0, run_id = 0;
  std::string command, label, exit_status, created_at;
  int exit_code = 0;
  bool complete = false;
  double wall_s = 0, busy_fraction = 0, kernel_time_s = 0;
  std::int64_t kernels = 0;  // distinct kernels
};

// Stores `p` under `run_id`; returns the profile's id.
std::int64_t store_profile(store::Db& db, std::int64_t run_id, const ProfileData& p, const std::string& label = {});
// The stored ProfileData, exactly as it was stored. Throws Error(Input) when
// there is no such profile.
ProfileData load_profile(store::Db& db, std::int64_t profile_id);
// Profiles, newest first (of one run when run_id > 0).
std::vector<ProfileRow> list_profiles(store::Db& db, std::int64_t run_id = 0, int limit = 50);

}  // namespace roofline::prof
