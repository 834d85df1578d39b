// A build without CUDA has no NCCL: data-parallel training on GPUs says so.
#include "roofline/core/error.hpp"
#include "roofline/engine/nccl_sync.hpp"

namespace roofline::engine::dist {

namespace {
[[noreturn]] void no_nccl() {
  throw Error(ErrorKind::Unsupported, "this build of roofline has no CUDA, so no NCCL",
              "build on a machine with the CUDA toolkit to train on several GPUs");
}
}  // namespace

struct NcclSync::Impl {};
std::string nccl_unique_id() { no_nccl(); }
std::string nccl_version() { return ""; }
NcclSync::NcclSync(Context&, const std::string&, int, int, DType) { no_nccl(); }
std::vector<std::unique_ptr<NcclSync>> NcclSync::all(const std::vector<Context*>&, DType) { no_nccl(); }
NcclSync::NcclSync(std::unique_ptr<Impl> impl, int rank, int world) : impl_(std::move(impl)), rank_(rank), world_(world) {}
NcclSync::~NcclSync() = default;
void NcclSync::reduce(Context&, int, float*, std::int64_t) { no_nccl(); }
void NcclSync::finish(Context&) { no_nccl(); }
void NcclSync::broadcast(Context&, float*, std::int64_t) { no_nccl(); }
void NcclSync::wait(Context&, std::chrono::milliseconds) { no_nccl(); }

}  // namespace roofline::engine::dist
