// NVTX's entry point into libroofline_inject.so. `roofline profile` sets
// NVTX_INJECTION64_PATH to this library; at the program's first NVTX call,
// NVTX (the header-only v3 code compiled into the program, or libnvToolsExt)
// loads it and calls InitializeInjectionNvtx2, which fills NVTX's function
// tables with the hooks below. They go straight to the collector's NVTX
// tracker (the range path of each thread, and the time of each range).
//
// Why our own hooks rather than handing NVTX over to CUPTI (libcupti's
// InitializeInjectionNvtx2 + CUPTI's NVTX callback domain): that way the
// ranges of profiled programs never reached the collector on an H100 with
// CUDA 13, although the same forwarding worked for PyTorch; the hooks do not
// depend on CUPTI's internal NVTX state, work before CUDA starts, and their
// path can be checked without a GPU. The in-process tracer uses CUPTI's NVTX
// callbacks.
//
// Hooks are called on the program's threads: no exceptions escape (NVTX is
// C), and the work is a few pushes/pops on thread-local stacks.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "roofline/core/env.hpp"
#include "roofline/profiler/injection_config.hpp"
#include "src/profiler/cupti_collector.hpp"

#define ROOFLINE_EXPORT extern "C" __attribute__((visibility("default")))

using roofline::prof::CuptiCollector;
using roofline::prof::nvtx_narrow;

namespace {

std::atomic<std::uint64_t> g_next_range{1};

// Registered strings: the handle is our own copy of the text (never freed:
// handles stay valid for the life of the process).
nvtxStringHandle_t register_string(const std::string& s) {
  char* copy = static_cast<char*>(std::malloc(s.size() + 1));
  if (!copy) return nullptr;
  std::memcpy(copy, s.c_str(), s.size() + 1);
  return reinterpret_cast<nvtxStringHandle_t>(copy);
}

std::string attr_text(const nvtxEventAttributes_t* a) {
  if (!a) return {};
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return a->message.ascii ? a->message.ascii : "";
    case NVTX_MESSAGE_TYPE_UNICODE:
      return nvtx_narrow(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
      return a->message.registered ? reinterpret_cast<const char*>(a->message.registered) : "(registered string)";
    default:
      return {};
  }
}

// The nesting level NVTX's push/pop return (informational for programs).
thread_local int t_depth = 0;

template <class F>
void guarded(F&& f) noexcept {
  try {
    f();
  } catch (...) {  // out of memory in a path name: the range is lost, the program runs on
  }
}

int push(const std::string& name) {
  guarded([&] { CuptiCollector::instance().nvtx_push(name); });
  return t_depth++;
}

int pop() {
  guarded([] { CuptiCollector::instance().nvtx_pop(); });
  if (t_depth > 0) --t_depth;
  return t_depth;
}

nvtxRangeId_t start(const std::string& name) {
  nvtxRangeId_t id = g_next_range.fetch_add(1);
  guarded([&] { CuptiCollector::instance().nvtx_start(id, name); });
  return id;
}

void end(nvtxRangeId_t id) {
  guarded([&] { CuptiCollector::instance().nvtx_end(id); });
}

int NVTX_API push_a(const char* m) { return push(m ? m : ""); }
int NVTX_API push_w(const wchar_t* m) { return push(nvtx_narrow(m)); }
int NVTX_API push_ex(const nvtxEventAttributes_t* a) { return push(attr_text(a)); }
int NVTX_API pop_core() { return pop(); }
nvtxRangeId_t NVTX_API start_a(const char* m) { return start(m ? m : ""); }
nvtxRangeId_t NVTX_API start_w(const wchar_t* m) { return start(nvtx_narrow(m)); }
nvtxRangeId_t NVTX_API start_ex(const nvtxEventAttributes_t* a) { return start(attr_text(a)); }
void NVTX_API end_core(nvtxRangeId_t id) { end(id); }

int NVTX_API domain_push_ex(nvtxDomainHandle_t, const nvtxEventAttributes_t* a) { return push(attr_text(a)); }
int NVTX_API domain_pop(nvtxDomainHandle_t) { return pop(); }
nvtxRangeId_t NVTX_API domain_start_ex(nvtxDomainHandle_t, const nvtxEventAttributes_t* a) {
  return start(attr_text(a));
}
void NVTX_API domain_end(nvtxDomainHandle_t, nvtxRangeId_t id) { end(id); }
nvtxStringHandle_t NVTX_API domain_register_a(nvtxDomainHandle_t, const char* s) {
  return register_string(s ? s : "");
}
nvtxStringHandle_t NVTX_API domain_register_w(nvtxDomainHandle_t, const wchar_t* s) {
  return register_string(nvtx_narrow(s));
}
// Domains are not told apart (ranges of every domain share the thread's
// path); a non-null handle keeps programs that check it happy.
nvtxDomainHandle_t NVTX_API domain_create_a(const char*) {
  static char domain;
  return reinterpret_cast<nvtxDomainHandle_t>(&domain);
}
nvtxDomainHandle_t NVTX_API domain_create_w(const wchar_t*) { return domain_create_a(nullptr); }
void NVTX_API domain_destroy(nvtxDomainHandle_t) {}

// Puts `fn` into slot `id` of a module's table (slots a program's NVTX
// version does not have are skipped).
bool set_slot(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer fn) {
  if (!table || id >= size || !table[id]) return false;
  *table[id] = fn;
  return true;
}

template <class Fn>
NvtxFunctionPointer fp(Fn f) {
  return reinterpret_cast<NvtxFunctionPointer>(f);
}

}  // namespace

// Returns 1 when the hooks are in place, 0 (NVTX stays a no-op) when NVTX
// tracing is off (ROOFLINE_NVTX=0) or the program's NVTX offers no tables.
ROOFLINE_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  try {
    if (roofline::env::get(roofline::env::Var::ProfileNvtx) == "0") return 0;
  } catch (...) {
    return 0;  // no memory: NVTX stays a no-op
  }
  if (!get_export_table) return 0;
  // NVTX may come before CUDA: an nvtx:NAME capture range must see the first
  // NAME range. A malformed configuration is said when CUDA starts.
  try {
    const roofline::prof::InjectionConfig config = roofline::prof::InjectionConfig::from_environment();
    CuptiCollector::instance().configure_capture(config.capture(), config.program_start_ns);
  } catch (...) {
  }
  auto* cb = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!cb || cb->struct_size < sizeof(NvtxExportTableCallbacks) || !cb->GetModuleFunctionTable) return 0;
  NvtxFunctionTable core = nullptr, core2 = nullptr;
  unsigned core_size = 0, core2_size = 0;
  if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) || !core) return 0;
  set_slot(core, core_size, NVTX_CBID_CORE_RangePushA, fp(&push_a));
  set_slot(core, core_size, NVTX_CBID_CORE_RangePushW, fp(&push_w));
  set_slot(core, core_size, NVTX_CBID_CORE_RangePushEx, fp(&push_ex));
  set_slot(core, core_size, NVTX_CBID_CORE_RangePop, fp(&pop_core));
  set_slot(core, core_size, NVTX_CBID_CORE_RangeStartA, fp(&start_a));
  set_slot(core, core_size, NVTX_CBID_CORE_RangeStartW, fp(&start_w));
  set_slot(core, core_size, NVTX_CBID_CORE_RangeStartEx, fp(&start_ex));
  set_slot(core, core_size, NVTX_CBID_CORE_RangeEnd, fp(&end_core));
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) && core2) {
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, fp(&domain_push_ex));
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, fp(&domain_pop));
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, fp(&domain_start_ex));
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, fp(&domain_end));
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, fp(&domain_register_a));
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, fp(&domain_register_w));
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, fp(&domain_create_a));
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, fp(&domain_create_w));
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, fp(&domain_destroy));
  }
  return 1;
}
