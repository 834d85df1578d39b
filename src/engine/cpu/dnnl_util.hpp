// What the oneDNN convolutions and Linear layers share (dnnl_conv.hpp): the
// process's CPU engine, each thread's stream, an operand with the reorder its
// primitive needs, and one call's execution with oneDNN's errors turned into
// roofline::Error.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

namespace roofline::engine::fast::onednn {

// The CPU engine, created on first use and kept for the process.
dnnl::engine& cpu_engine();
// The calling thread's stream (a stream is not to be shared between threads).
dnnl::stream& cpu_stream();

// For the scope of a call: inside one of the fast path's parallel regions
// (ours or an OpenMP one), this thread's OpenMP thread count is 1, so that the
// plans made and run here use the calling thread alone (a region's threads
// would otherwise each open a team of omp_get_max_threads()). The same in a
// child forked from this process, where a libgomp team of more than one
// thread never ends once the parent had one.
class OneThreadInRegion {
 public:
  OneThreadInRegion();
  ~OneThreadInRegion();
  OneThreadInRegion(const OneThreadInRegion&) = delete;
  OneThreadInRegion& operator=(const OneThreadInRegion&) = delete;

 private:
  int saved_ = 0;  // the thread count to restore, 0 when unchanged
};

// Whether oneDNN's implementation name is one of its JIT ones ("jit:avx2",
// "brg:avx512_core", …), not a reference or im2col-GEMM loop.
bool is_fast_impl(const std::string& impl);

// One argument of a primitive: the caller's memory (`user`, its pointer set on
// every call) and, when the primitive wants another layout, a buffer in that
// layout (`inner`, allocated once) with the reorder between them: before the
// primitive for an input, after it for an output.
struct Operand {
  int arg = 0;
  bool output = false;
  dnnl::memory user, inner;
  dnnl::reorder reorder;
  dnnl::memory reorder_scratch;
  std::vector<dnnl_exec_arg_t> reorder_args;  // FROM, TO, SCRATCHPAD
  bool reordered() const { return static_cast<bool>(inner); }
};
Operand make_operand(int arg, const dnnl::memory::desc& user_md, const dnnl::memory::desc& prim_md, bool output);

// Runs `prim` with `ops` pointing at ptrs[i] (in the order of ops): the input
// reorders, the primitive, the output reorders, then waits. `what` names the
// pass in an error.
void execute(const dnnl::primitive& prim, const dnnl::memory& scratch, std::vector<Operand>& ops,
             const std::vector<const void*>& ptrs, const char* what);

// "impl" followed by the operands it reorders, e.g. "jit:avx2 (reorders src, dst)".
std::string describe(const std::string& impl, const std::vector<Operand>& ops);

}  // namespace roofline::engine::fast::onednn
