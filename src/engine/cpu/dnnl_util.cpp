#include "src/engine/cpu/dnnl_util.hpp"

#include <omp.h>
#include <pthread.h>

#include <atomic>

#include "roofline/core/error.hpp"
#include "src/engine/cpu/parallel.hpp"
#include "src/engine/cpu/thread_pool.hpp"

namespace roofline::engine::fast::onednn {

namespace dn = dnnl;

dn::engine& cpu_engine() {
  static dn::engine e(dn::engine::kind::cpu, 0);
  return e;
}

dn::stream& cpu_stream() {
  thread_local dn::stream s(cpu_engine());
  return s;
}

namespace {

// Set in a child forked from this process. libgomp keeps no thread of its team
// across fork() but still waits for them: a parallel region of more than one
// thread in such a child never ends (the CLI's tests fork and run commands).
std::atomic<bool> g_forked{false};
[[maybe_unused]] const int g_atfork = pthread_atfork(nullptr, nullptr, [] { g_forked.store(true); });

}  // namespace

OneThreadInRegion::OneThreadInRegion() {
  if (!in_parallel() && !g_forked.load(std::memory_order_relaxed)) return;
  saved_ = omp_get_max_threads();
  omp_set_num_threads(1);
}

OneThreadInRegion::~OneThreadInRegion() {
  if (saved_ > 0) omp_set_num_threads(saved_);
}

bool is_fast_impl(const std::string& impl) {
  return impl.rfind("ref", 0) != 0 && impl.find("gemm") == std::string::npos;
}

Operand make_operand(int arg, const dn::memory::desc& user_md, const dn::memory::desc& prim_md, bool output) {
  Operand o;
  o.arg = arg;
  o.output = output;
  o.user = dn::memory(user_md, cpu_engine(), DNNL_MEMORY_NONE);
  if (prim_md == user_md) return o;
  o.inner = dn::memory(prim_md, cpu_engine());  // the primitive's layout: allocated here, once
  dn::primitive_attr attr;
  attr.set_scratchpad_mode(dn::scratchpad_mode::user);
  const auto& from = output ? prim_md : user_md;
  const auto& to = output ? user_md : prim_md;
  const dn::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to, attr);
  o.reorder = dn::reorder(pd);
  o.reorder_scratch = dn::memory(pd.scratchpad_desc(), cpu_engine());
  const dn::memory& src = output ? o.inner : o.user;
  const dn::memory& dst = output ? o.user : o.inner;
  o.reorder_args = {{DNNL_ARG_FROM, src.get()}, {DNNL_ARG_TO, dst.get()}, {DNNL_ARG_SCRATCHPAD, o.reorder_scratch.get()}};
  return o;
}

namespace {

void check(dnnl_status_t st, const char* what, const char* step) {
  if (st == dnnl_success) return;
  throw Error(ErrorKind::Internal,
              std::string("oneDNN failed in the CPU ") + what + " (" + step + "): status " + std::to_string(int(st)),
              "run with ONEDNN_VERBOSE=1 to see the primitive oneDNN ran, and report it with the shape");
}

}  // namespace

void execute(const dn::primitive& prim, const dn::memory& scratch, std::vector<Operand>& ops,
             const std::vector<const void*>& ptrs, const char* what) {
  // The primitive's arguments: at most 5 operands and the scratchpad, kept on
  // the stack (the C++ wrapper's execute() builds a map and a vector per call).
  constexpr int kMaxArgs = 8;
  dnnl_exec_arg_t args[kMaxArgs];
  int nargs = 0;
  dnnl_stream_t stream = cpu_stream().get();
  // oneDNN's OpenMP team is about to take every core: the pool's workers sleep
  // rather than spin beside it (thread_pool.hpp).
  ThreadPool::rest();
  for (size_t i = 0; i < ops.size(); ++i) {
    Operand& o = ops[i];
    check(dnnl_memory_set_data_handle_v2(o.user.get(), const_cast<void*>(ptrs[i]), nullptr), what, "set pointer");
    args[nargs++] = {o.arg, o.reordered() ? o.inner.get() : o.user.get()};
    if (o.reordered() && !o.output)
      check(dnnl_primitive_execute(o.reorder.get(), stream, 3, o.reorder_args.data()), what, "reorder in");
  }
  args[nargs++] = {DNNL_ARG_SCRATCHPAD, scratch.get()};
  check(dnnl_primitive_execute(prim.get(), stream, nargs, args), what, "primitive");
  for (Operand& o : ops)
    if (o.reordered() && o.output)
      check(dnnl_primitive_execute(o.reorder.get(), stream, 3, o.reorder_args.data()), what, "reorder out");
  check(dnnl_stream_wait(stream), what, "wait");
}

std::string describe(const std::string& impl, const std::vector<Operand>& ops) {
  std::string out = impl, list;
  for (const Operand& o : ops) {
    if (!o.reordered()) continue;
    const char* name = o.arg == DNNL_ARG_SRC            ? "src"
                       : o.arg == DNNL_ARG_DST          ? "dst"
                       : o.arg == DNNL_ARG_WEIGHTS      ? "weights"
                       : o.arg == DNNL_ARG_DIFF_SRC     ? "diff_src"
                       : o.arg == DNNL_ARG_DIFF_DST     ? "diff_dst"
                       : o.arg == DNNL_ARG_DIFF_WEIGHTS ? "diff_weights"
                                                        : "bias";
    list += list.empty() ? name : std::string(", ") + name;
  }
  return list.empty() ? out : out + " (reorders " + list + ")";
}

}  // namespace roofline::engine::fast::onednn
