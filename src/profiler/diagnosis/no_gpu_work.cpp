// no-gpu-work: the profile holds no kernel, copy or memset at all (diagnose()
// runs this rule alone on such a profile, and never on another).
#include "src/profiler/diagnosis/facts.hpp"

namespace roofline::prof::diag {

std::optional<Diagnosis> no_gpu_work(const Facts& c, const Rule& rule) {
  return c.make(rule,
                "the profile holds no kernel, copy or memset" +
                    (c.p.apis.empty() ? std::string(" and no CUDA API call")
                                      : ", but " + count(c.p.apis.size()) + " CUDA API functions were called"),
                "check that the program uses the GPU (device placement, CUDA_VISIBLE_DEVICES) and runs long "
                "enough to launch work; a process killed early leaves only a partial profile",
                0);
}

}  // namespace roofline::prof::diag
