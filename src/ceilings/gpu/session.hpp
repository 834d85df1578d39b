// State shared by the GPU ceiling measurements of one device: the timer, the
// device's description and datasheet, the options, the clock probe, and the
// way each figure is completed (reference attached) and handed on. Host code
// for src/ceilings/gpu/*_gpu.cpp only (CUDA types).
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <string>

#include "roofline/ceilings/gpu_ceilings.hpp"
#include "roofline/measure/measure_gpu.hpp"
#include "roofline/core/error.hpp"
#include "roofline/cuda/memory.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/model/roofline.hpp"
#include "src/ceilings/gpu/kernels.hpp"

namespace roofline::ceilings::gpu {

class Session {
 public:
  Session(int device, const CeilingOptions& opts, const measure::Progress& progress, const FigureSink& sink);

  int device() const { return device_; }
  const cudaDeviceProp& prop() const { return prop_; }
  const hw::GpuInfo& info() const { return info_; }
  bool quick() const { return opts_.quick; }
  bool hopper() const { return prop_.major == 9 && prop_.minor == 0; }
  // Sampling discipline for this run (MeasureOptions::quick() under --quick).
  const measure::MeasureOptions& measure_options() const { return opts_.measure; }
  measure::GpuTimer& timer() { return timer_; }
  cudaStream_t stream() const { return timer_.stream(); }

  bool wants(const std::string& name) const { return opts_.wants(name); }
  void say(const std::string& line) const;

  // The in-kernel clock probe (device memory) and a reader for GpuTimer::measure:
  // it copies the probe back after a sample and returns the SM clock in MHz.
  ClockProbe* probe() const { return probe_.get(); }
  std::function<double()> probe_clock();

  // Device seconds of one run of `launch` (events; for sizing a measurement).
  double time_once(const std::function<void(cudaStream_t)>& launch);
  // Free device memory now, bytes.
  size_t free_memory() const;

  // Completes a measured figure (reference, % of it) and hands it on: the sink
  // (the store) first, then the result.
  void add(measure::Figure f);
  // The same for a better figure of a name already measured: stored again (the
  // newest row of a name is the one that counts) and replacing it in the result.
  void replace(measure::Figure f);
  void note(std::string text) { result_.notes.push_back(std::move(text)); }
  void warn(std::string text);
  // Runs `fn`; an Error (or any exception) becomes a recorded failure of `name`
  // and the measurement goes on with the next figure.
  void attempt(const std::string& name, const std::string& label, const std::function<void()>& fn);
  void fail(const std::string& name, const std::string& label, const std::string& what, const std::string& hint,
            ErrorKind kind);

  GpuCeilingsResult take_result() { return std::move(result_); }
  const GpuCeilingsResult& result() const { return result_; }
  const measure::Figure* find(const std::string& name) const;

 private:
  int device_;
  cudaDeviceProp prop_{};
  hw::GpuInfo info_;
  model::Roofline sheet_;
  CeilingOptions opts_;
  measure::Progress progress_;
  FigureSink sink_;
  measure::GpuTimer timer_;
  cuda::DeviceBuffer<ClockProbe> probe_;
  GpuCeilingsResult result_;
};

// Measurement parts; every one checks wants() per figure. run_gpu_ceilings
// calls them in this order: the kernels whose faults would end the CUDA context
// (bulk copies, wgmma) come after everything that does not depend on them.
void measure_memory(Session& s);        // dram.read/write/copy (SM load/store kernels), dram.memcpy, l2.read, smem.read
void measure_latency(Session& s);       // launch.*, dram.latency, l2.latency, p2p.gpu<J>.latency
// Peer access from `from` to `to` (already enabled is fine). Leaves `from` current.
void enable_peer_access(int from, int to);
void measure_transfers(Session& s);     // pcie.*
void measure_peers(Session& s);         // p2p.gpu<J>.write, .bidir: copies to every other GPU reached as a peer
void measure_collectives(Session& s);   // nccl.<collective>.busbw across every GPU (GPU 0's session only)
void measure_fma(Session& s);           // fp64/fp32/fp16/bf16 .cuda (FMA)
void measure_addmul(Session& s);        // fp64/fp32/fp16/bf16 .cuda.addmul (the sweep's add + multiply loop)
void measure_dmma(Session& s);          // fp64.tensor (DMMA, every shape the GPU has)
void measure_tensor_library(Session& s);  // <type>.tensor.cublaslt
void measure_tensor_own(Session& s);    // <type>.tensor: own wgmma kernels (cuBLASLt's figure when they cannot be used)
void measure_memory_bulk(Session& s);   // the bulk-copy DRAM kernels: replace dram.* when faster
void measure_littles_law(Session& s);   // dram/l2 .bytes_in_flight from the figures above

// cuBLASLt reference GEMM (n x n x n, the best of the heuristic's candidates);
// adds the figure <type>.tensor.cublaslt to the session and returns it.
const measure::Figure* measure_cublaslt(Session& s, TensorType t, int n);

// Scales a count so that one run takes about `target_s`, from a run of
// `count0` that took `t0` seconds (at least 1, at most `max_count`).
long long scaled_count(long long count0, double t0, double target_s, long long max_count);

}  // namespace roofline::ceilings::gpu
