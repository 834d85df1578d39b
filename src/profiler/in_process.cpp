// The parts of the in-process tracer that need no CUDA (a CPU-only build's
// tracer is in_process_nocuda.cpp).
#include "roofline/profiler/in_process.hpp"

namespace roofline::prof {

double busy_fraction(const ProfileData& p) { return p.timeline.busy_fraction(); }

}  // namespace roofline::prof
