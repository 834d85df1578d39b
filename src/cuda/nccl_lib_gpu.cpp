// NCCL loaded at run time: see src/cuda/nccl_lib.hpp.
#include "src/cuda/nccl_lib.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <type_traits>

#include "roofline/core/error.hpp"

namespace roofline::cuda {

namespace {

NcclLib load() {
  // NVLink multicast (NVLS) stays off unless the user sets NCCL_NVLS_ENABLE:
  // the ring and tree algorithms are what is published, and the lent
  // machines forbid multicast. Set before NCCL reads its environment.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  NcclLib n;
  void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    n.why = fmt::format("libnccl.so.2 could not be loaded ({})", e ? e : "unknown");
    return n;
  }
  const auto sym = [&](auto& f, const char* name) {
    f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(lib, name));
    if (!f && n.why.empty()) n.why = fmt::format("libnccl.so.2 has no {}", name);
  };
  sym(n.get_version, "ncclGetVersion");
  sym(n.get_unique_id, "ncclGetUniqueId");
  sym(n.comm_init_all, "ncclCommInitAll");
  sym(n.comm_init_rank, "ncclCommInitRank");
  sym(n.comm_destroy, "ncclCommDestroy");
  sym(n.comm_abort, "ncclCommAbort");
  sym(n.comm_get_async_error, "ncclCommGetAsyncError");
  sym(n.all_reduce, "ncclAllReduce");
  sym(n.all_gather, "ncclAllGather");
  sym(n.reduce_scatter, "ncclReduceScatter");
  sym(n.broadcast, "ncclBroadcast");
  sym(n.group_start, "ncclGroupStart");
  sym(n.group_end, "ncclGroupEnd");
  sym(n.error_string, "ncclGetErrorString");
  if (n.why.empty() && n.get_version(&n.version) != ncclSuccess) n.why = "ncclGetVersion failed";
  // ncclAvg (the data-parallel mean) came with NCCL 2.10.
  if (n.why.empty() && n.version < 21000)
    n.why = fmt::format("NCCL {} is older than 2.10, which added the average", n.version);
  return n;
}

}  // namespace

void NcclLib::check(ncclResult_t r, const char* what) const {
  if (r != ncclSuccess)
    throw Error(ErrorKind::Device, fmt::format("{} failed: {}", what, error_string ? error_string(r) : "?"),
                "NCCL_DEBUG=WARN says more");
}

std::string NcclLib::version_string() const {
  return fmt::format("{}.{}.{}", version / 10000, version / 100 % 100, version % 100);
}

const NcclLib& nccl_lib() {
  static const NcclLib lib = load();
  return lib;
}

}  // namespace roofline::cuda
