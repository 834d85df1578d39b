// The sweep on a GPU, with the seed's kernel, the overlap or the ws kernel: the seed's
// discipline (3 warm-ups, 10 runs each timed with CUDA events, mean and RMS),
// inputs generated on the device, outputs poisoned before every k, all of them
// scanned for inf/NaN and a sample compared with the host's emulation.
#include <cuda_runtime.h>

#include <fmt/format.h>

#include "roofline/measure/measure_gpu.hpp"
#include "roofline/sweep/sweep.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/cuda/check.hpp"
#include "roofline/cuda/memory.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "src/sweep/kernels.hpp"
#include "src/sweep/reference.hpp"

namespace roofline::sweep {

namespace gpu {

PersistentConfig persistent_config(const void* fn, int threads, size_t ring_bytes, Variant v, const char* kernel,
                                   const char* hint, int device) {
  if (ring_bytes > 0)
    CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(ring_bytes)));
  CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  static_cast<int>(cudaSharedmemCarveoutMaxShared)));
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, fn));
  PersistentConfig c;
  c.threads = threads;
  c.registers = attr.numRegs;
  c.smem_per_block = attr.sharedSizeBytes + ring_bytes;
  c.local_bytes = attr.localSizeBytes;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&c.blocks_per_sm, fn, threads, ring_bytes));
  CUDA_CHECK(cudaDeviceGetAttribute(&c.sms, cudaDevAttrMultiProcessorCount, device));
  if (c.blocks_per_sm < 1)
    throw_device(fmt::format("the {} {} kernel does not fit on an SM ({} registers a thread, {} bytes of shared "
                             "memory a block)",
                             info(v).name, kernel, attr.numRegs, c.smem_per_block),
                 hint);
  c.grid = c.blocks_per_sm * c.sms;
  return c;
}

}  // namespace gpu

std::vector<Point> run_gpu(int device, Variant v, const Options& o, const measure::Progress& progress) {
  return run_gpu(device, v, Kernel::Seed, o, progress);
}

void check_gpu_fit(int device, Variant v, Kernel kernel, const Options& o) {
  validate(o);
  cuda::require_gpu(device);
  const VariantInfo& vi = info(v);
  if (o.n % vi.elements_per_thread != 0)
    throw_usage(fmt::format("n = {} is odd, but the {} kernel takes two elements per thread", o.n, vi.name),
                "use an even --n");
  CUDA_CHECK(cudaSetDevice(device));
  hw::GpuInfo gpu = hw::query_gpu(device);
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  double need = static_cast<double>(o.n) * vi.bytes_per_element();
  // For the context, sample buffers, fragmentation, and the timer's 2 x L2 flush buffer.
  const double margin = 256.0 * (1 << 20) + 2.0 * gpu.l2_bytes;
  if (need + margin > static_cast<double>(free_b))
    throw_usage(fmt::format("n = {} needs {} of GPU memory for the {} sweep (input and output), but {} has {} free "
                            "of {}",
                            o.n, format_bytes(need), vi.name, gpu.name, format_bytes(double(free_b)),
                            format_bytes(double(total_b))),
                fmt::format("use a smaller --n, at most about {}",
                            static_cast<std::int64_t>((double(free_b) - margin) / vi.bytes_per_element())));
  if (kernel == Kernel::Ws && gpu.cc_major < 9)
    throw_unsupported(fmt::format("the ws sweep kernel needs bulk copies (TMA) and mbarrier transaction counts, "
                                  "from compute capability 9.0 on; {} is {}.{}",
                                  gpu.name, gpu.cc_major, gpu.cc_minor),
                      "use --kernel seed,overlap on this GPU");
  if (kernel == Kernel::Seed && o.n > kMaxGpuElements)
    throw_usage(fmt::format("n = {} is beyond what the lecture's kernel indexes (int): at most {}", o.n, kMaxGpuElements),
                "use a smaller --n, e.g. --n 64M (the lecture's 2^26), or --kernel overlap");
}

std::vector<Point> run_gpu(int device, Variant v, Kernel kernel, const Options& o, const measure::Progress& progress) {
  if (kernel == Kernel::Cpu)
    throw Error(ErrorKind::Internal, "run_gpu asked for the CPU kernel", "use run_cpu for the CPU");
  check_gpu_fit(device, v, kernel, o);
  const VariantInfo& vi = info(v);
  hw::GpuInfo gpu = hw::query_gpu(device);
  measure::GpuTimer timer(device);
  // What each kernel keeps in flight (Little's law) and how it is launched.
  int resident_threads = 0;
  double in_flight_per_thread = 0;
  int grid = 0;
  if (kernel == Kernel::Seed) {
    resident_threads = gpu::seed_blocks_per_sm(v, o.block) * o.block;
    in_flight_per_thread = static_cast<double>(vi.element_bytes) * vi.elements_per_thread;  // its one load
  } else {
    const bool ws = kernel == Kernel::Ws;
    const gpu::PersistentConfig cfg = ws ? gpu::ws_config(v, device) : gpu::overlap_config(v, device);
    if (cfg.local_bytes > 0 && progress)
      progress(
          fmt::format("warning: the {} {} kernel uses {} bytes of local memory per thread (registers "
                      "spilled): it will be slower than designed",
                      vi.name, ws ? "ws" : "overlap", cfg.local_bytes));
    // Every thread of a block counts as resident (the ws kernel's producer
    // warp too, its ring's bytes spread over them), so resident threads x
    // bytes each = what the SM's blocks keep in flight.
    resident_threads = cfg.blocks_per_sm * cfg.threads;
    in_flight_per_thread = cfg.bytes_in_flight_per_thread;
    grid = cfg.grid;
  }
  const size_t bytes = static_cast<size_t>(o.n) * static_cast<size_t>(vi.element_bytes);
  cuda::DeviceBuffer<char> a(bytes, "sweep input"), b(bytes, "sweep output");
  cudaStream_t s = timer.stream();
  gpu::launch_init(v, a.get(), o.n, o.seed, s);

  cuda::DeviceBuffer<unsigned long long> nonfinite(1, "non-finite count");
  std::vector<Point> out;
  for (std::int64_t k : o.k) {
    // Poison (all bits set: NaN in every float format) so unwritten outputs show.
    CUDA_CHECK(cudaMemsetAsync(b.get(), 0xFF, bytes, s));
    measure::MeasureOptions mo;
    mo.warmup = o.warmup;
    mo.min_samples = o.runs;
    mo.max_samples = o.runs;
    mo.max_seconds = 1e9;  // the seed's fixed count of runs
    measure::Measurement m = timer.measure(
        [&](cudaStream_t st) {
          if (kernel == Kernel::Seed) gpu::launch_sweep(v, a.get(), b.get(), o.n, static_cast<int>(k), o.block, st);
          else if (kernel == Kernel::Ws) gpu::launch_ws(v, a.get(), b.get(), o.n, static_cast<int>(k), grid, st);
          else gpu::launch_overlap(v, a.get(), b.get(), o.n, static_cast<int>(k), grid, st);
        },
        mo);

    Point p;
    p.device = fmt::format("gpu:{}", device);
    p.device_name = gpu.name;
    p.variant = v;
    p.kernel = kernel;
    p.resident_threads_per_sm = resident_threads;
    p.bytes_in_flight_per_sm = resident_threads * in_flight_per_thread;
    p.k = k;
    p.n = o.n;
    p.timing = timing_of(m.samples);
    p.clock_mhz = m.clock_median_mhz;

    auto idx = ref::sample_indices(o.n, o.check_samples, o.seed + static_cast<std::uint32_t>(k));
    cuda::DeviceBuffer<std::int64_t> d_idx(idx.size(), "sample indices");
    cuda::DeviceBuffer<std::uint64_t> d_out(idx.size(), "sampled outputs");
    d_idx.upload(idx.data(), idx.size(), s);
    gpu::launch_gather(v, b.get(), d_idx.get(), static_cast<std::int64_t>(idx.size()), d_out.get(), s);
    gpu::launch_count_nonfinite(v, b.get(), o.n, nonfinite.get(), s);
    std::vector<std::uint64_t> raw(idx.size());
    unsigned long long bad = 0;
    d_out.download(raw.data(), raw.size(), s);
    nonfinite.download(&bad, 1, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<double> got;
    got.reserve(raw.size());
    for (auto r : raw) got.push_back(ref::decode(v, r));
    p.check = ref::compare(v, k, o.seed, idx, got);
    p.check.nonfinite = static_cast<std::int64_t>(bad);
    if (progress)
      progress(fmt::format("{} {} {} k={}: {:.3f} ms, RMS {:.2f}%", p.device, vi.name, info(kernel).name, k,
                           p.timing.mean_s * 1e3, p.timing.rms_pct));
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace roofline::sweep
