#include "src/cli/commands/bench_profile.hpp"

#include <mutex>
#include <utility>

#include "roofline/core/error.hpp"

namespace roofline::cli::bench_profile {
namespace {
struct State {
  std::mutex m;
  bool enabled = false;
  std::vector<prof::ProfileData> profiles;
  std::vector<std::string> failures;
  std::vector<CounterRun> counters;
};
State& state() {
  static State s;
  return s;
}
}  // namespace

void enable() {
#if ROOFLINE_HAVE_CUDA
  std::lock_guard lock(state().m);
  state().enabled = true;
#else
  throw_unsupported("--profile traces GPU kernels, and this roofline was built without CUDA",
                    "rebuild on a machine with the CUDA toolkit, or drop --profile");
#endif
}
bool enabled() {
  std::lock_guard lock(state().m);
  return state().enabled;
}
void add(prof::ProfileData p) {
  std::lock_guard lock(state().m);
  state().profiles.push_back(std::move(p));
}
void failed(std::string why) {
  std::lock_guard lock(state().m);
  state().failures.push_back(std::move(why));
}
std::vector<prof::ProfileData> take() {
  std::lock_guard lock(state().m);
  return std::exchange(state().profiles, {});
}
std::vector<std::string> take_failures() {
  std::lock_guard lock(state().m);
  return std::exchange(state().failures, {});
}
void add_counters(CounterRun r) {
  std::lock_guard lock(state().m);
  state().counters.push_back(std::move(r));
}
std::vector<CounterRun> take_counters() {
  std::lock_guard lock(state().m);
  return std::exchange(state().counters, {});
}

}  // namespace roofline::cli::bench_profile
