#!/usr/bin/env python3
"""Writes the recorded profiles the diagnosis tests run on (diag_*.json), in the
format of ProfileData::to_json. Hand-built from what each scenario looks like
in real profiles; the numbers of diag_mlp_eager come from seed 000 §2.2
(SimpleMLP training, one epoch, batch 128, A100). Duration reservoirs are
abridged to 32 samples to keep the files small. Deterministic: rerun and diff.

    python3 tests/data/profiles/diag_generate.py
"""
import json
import math
import os
import random

OUT = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(20240601)


def stats(count, mean, lo=None, hi=None):
    """DurationStats JSON for `count` samples around `mean` ns."""
    lo = mean * 0.9 if lo is None else lo
    hi = mean * 1.1 if hi is None else hi
    n = min(count, 32)
    res = [round(rng.uniform(lo, hi), 1) for _ in range(n)]
    sd = (hi - lo) / math.sqrt(12)
    return {"count": count, "total": mean * count, "min": lo, "max": hi, "mean": mean,
            "m2": sd * sd * max(count - 1, 0), "reservoir": res}


def kernel(name, count, mean, grid=(0, 0, 0), block=(0, 0, 0), demangled=None, nvtx=""):
    return {"name": name, "demangled": demangled or name, "nvtx_path": nvtx, "duration": stats(count, mean),
            "grid": list(grid), "block": list(block), "registers": 32, "static_smem": 0, "dynamic_smem": 0,
            "device": 0}


def api(name, count, mean, domain="runtime"):
    return {"name": name, "domain": domain, "duration": stats(count, mean), "errors": 0}


def memcpy(kind, count, mean_ns, bytes_each, pageable=0, synchronous=0):
    return {"kind": kind, "duration": stats(count, mean_ns), "total_bytes": count * bytes_each,
            "min_bytes": bytes_each, "max_bytes": bytes_each, "pageable": pageable, "synchronous": synchronous}


def launch(kernel_name, count, api_mean, kernel_mean):
    return {"kernel": kernel_name, "api_ns": stats(count, api_mean), "queue_ns": stats(count, 3000.0),
            "kernel_ns": stats(count, kernel_mean)}


def profile(command, device, kernels, apis, memcpys, launches, timeline, sequences=(), counters=()):
    return {"pid": 4242, "command": command, "exit_status": "exited 0", "exit_code": 0, "complete": True,
            "devices": [device], "kernels": kernels, "apis": apis, "memcpys": memcpys, "launches": launches,
            "timeline": timeline, "pm_interval_ns": 0.0, "pm_samples": [], "counters": list(counters),
            "sequences": list(sequences), "diagnoses": [], "warnings": []}


def gaps(start, spans):
    """Largest-gap list from (offset_ns, length_ns) pairs."""
    return [[start + o, start + o + l] for o, l in spans]


# ---------------------------------------------------------------------------
# 1. Eager PyTorch SimpleMLP training, one epoch (seed 000 §2.2, Table 5).
#    469 training steps + 79 validation batches; the kernel rows are the seed's.
A = "at::native::"
EW = "void " + A + "vectorized_elementwise_kernel<4, {f}, at::detail::Array<char*, {n}> >(int, {f}, at::detail::Array<char*, {n}>)"
ADD = EW.format(f=A + "CUDAFunctor_add<float>", n=3)
RELU = EW.format(f=A + "(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
                 "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::"
                 "{lambda(float)#1}", n=2)
THRESH = EW.format(f=A + "threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}", n=3)
FILL = EW.format(f=A + "FillFunctor<float>", n=1)
MUL = EW.format(f=A + "binary_internal::MulFunctor<float>", n=3)
DIV = EW.format(f=A + "binary_internal::DivFunctor<float>", n=3)
ARGMAX_EQ = EW.format(f=A + "CompareEqFunctor<long>", n=3)
COPY = ("void " + A + "unrolled_elementwise_kernel<" + A + "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}"
        "::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, "
        "TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, "
        + A + "memory::LoadWithCast<1>, " + A + "memory::StoreWithCast<1> >(int)")
RED = ("void " + A + "reduce_kernel<{t}, 1, " + A + "ReduceOp<float, " + A + "func_wrapper_t<float, " + A +
       "{op}<float, float, float>::operator()(at::TensorIterator&)::{{lambda(float, float)#1}}>, unsigned int, float, 4> >"
       "(" + A + "ReduceOp<float>)")
SUM = RED.format(t=512, op="sum_functor")
SUM2 = RED.format(t=128, op="sum_functor")
MEAN = RED.format(t=512, op="MeanOps")
ARGMAX = RED.format(t=512, op="ArgMaxOps")
MTA = ("void " + A + "multi_tensor_apply_kernel<" + A + "TensorListMetadata<{n}>, " + A + "{f}<float, {n}, {a}, {b}>, "
       "std::plus<float>, float>(" + A + "TensorListMetadata<{n}>)")
SGD = MTA.format(n=3, f="BinaryOpListAlphaFunctor", a=2, b=2)
MOM = MTA.format(n=2, f="BinaryOpListAlphaFunctor", a=1, b=1)
SMF = "void (anonymous namespace)::softmax_warp_forward<float, float, float, 4, true, false>(float*, float const*, int, int, int, bool const*, int, bool)"
SMB = "void (anonymous namespace)::softmax_warp_backward<float, float, float, 4, true, false>(float*, float const*, float const*, int, int, int, bool const*)"
NLLF = "void " + A + "(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)"
NLLB = "void " + A + "(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>(float*, float const*, long const*, float const*, float const*, bool, int, int, long, long)"
SPLITK = "void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, 0, float, float, float, 1, 1, 0>(cublasLt::cublasSplitKParams<float>, float const*, float const*, float*)"

# (name, instances, mean ns, grid) — seed 000 Table 5 rows, one name per row.
mlp_rows = [
    ("ampere_sgemm_32x32_sliced1x4_tn", 1644, 10876.0, (16, 4, 1)),
    (SGD, 937, 15053.0, (12, 1, 1)),
    ("ampere_sgemm_32x32_sliced1x4_nt", 939, 7824.3, (16, 8, 1)),
    (SUM, 938, 7356.5, (4, 1, 1)),
    (MOM, 468, 11861.9, (12, 1, 1)),
    (MEAN, 469, 11210.4, (1, 1, 1)),
    ("ampere_sgemm_64x32_sliced1x4_nt", 468, 9030.9, (8, 8, 1)),
    (ADD, 1647, 2282.3, (128, 1, 1)),
    ("ampere_sgemm_32x32_sliced1x4_nn", 469, 7805.3, (16, 4, 1)),
    (RELU, 1407, 2298.3, (128, 1, 1)),
    ("ampere_sgemm_128x32_nn", 469, 5436.3, (4, 4, 1)),
    (NLLF, 548, 4419.6, (1, 1, 1)),
    (SPLITK, 549, 3799.7, (2, 1, 1)),
    (THRESH, 938, 1853.4, (128, 1, 1)),
    (NLLB, 469, 3500.7, (1, 1, 1)),
    (SMF, 549, 2652.8, (32, 1, 1)),
    (SMB, 469, 2353.7, (32, 1, 1)),
    (FILL, 469, 2152.9, (64, 1, 1)),
    (ARGMAX, 79, 6324.6, (1, 1, 1)),
    (SUM2, 79, 4632.3, (1, 1, 1)),
    (COPY, 79, 2605.0, (1, 1, 1)),
    (ARGMAX_EQ, 79, 2111.2, (1, 1, 1)),
    (DIV, 78, 2105.8, (1, 1, 1)),
    ("ampere_sgemm_32x128_tn", 1, 11488.0, (4, 1, 1)),
    ("ampere_sgemm_64x32_sliced1x4_tn", 1, 9184.0, (8, 4, 1)),
    ("void gemmSN_TN_kernel<float, 128, 16, 2, 4, 4, 4, true, cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float> >(cublasGemmSmallNParams<float>)",
     1, 6368.0, (1, 1, 1)),
]
T0 = 9_531_670_700           # first copy (seed: 9.5316707 s)
T1 = 19_447_882_187          # last kernel end (seed: 19.447882187 s)
k_total = sum(n * m for _, n, m, _ in mlp_rows)
launches_n = sum(n for _, n, _, _ in mlp_rows)
window = T1 - T0
htod_n, dtoh_n = 2 * 548, 548  # inputs and labels per batch; loss.item() per batch
memcpy_busy = htod_n * 35_000 + dtoh_n * 2_000
long_gaps = 548                 # the DataLoader's time per batch (train + validation)
long_idle = 8_930_000_000
short_idle = window - k_total - memcpy_busy - long_idle
mlp = profile(
    "python3 part2.py -b 128 -d cuda -w train -e 1", "NVIDIA A100-SXM4-80GB",
    [kernel(n, c, m, grid=g, block=(128, 1, 1)) for n, c, m, g in mlp_rows],
    [api("cudaLaunchKernel", launches_n, 5000.0), api("cudaMemcpyAsync", htod_n + dtoh_n, 14000.0),
     api("cudaStreamSynchronize", htod_n + dtoh_n, 31000.0), api("cudaMalloc", 40, 95000.0),
     api("cudaGetDevice", 120000, 120.0)],
    [memcpy("HtoD", htod_n, 35000.0, 201216, pageable=htod_n), memcpy("DtoH", dtoh_n, 2000.0, 4)],
    [launch(n, c, 5000.0, m) for n, c, m, _ in mlp_rows],
    {"process_start_ns": 0, "process_end_ns": 20_600_000_000, "first_gpu_ns": T0, "last_gpu_ns": T1,
     "kernel_busy_ns": int(k_total), "gpu_busy_ns": int(k_total + memcpy_busy),
     "largest_gaps": gaps(T0, [(1_000_000 + 18_000_000 * i, 19_500_000 - 40_000 * i) for i in range(16)]),
     "gap_histogram": {"<10us": 6100, "10-100us": 9400, "0.1-1ms": 560, "1-10ms": 12, ">10ms": long_gaps - 12},
     "gap_ns_histogram": {"<10us": 36_000_000, "10-100us": int(short_idle) - 36_000_000 - 150_000_000,
                          "0.1-1ms": 150_000_000, "1-10ms": 60_000_000, ">10ms": long_idle - 60_000_000}},
    sequences=[
        {"kernels": [ADD, RELU], "count": 938, "total_ns": 938 * (2282.3 + 2298.3)},
        {"kernels": [THRESH, FILL], "count": 469, "total_ns": 469 * (1853.4 + 2152.9)},
        {"kernels": ["ampere_sgemm_32x32_sliced1x4_tn", ADD], "count": 1644, "total_ns": 1644 * (10876.0 + 2282.3)},
        {"kernels": [SMF, NLLF], "count": 548, "total_ns": 548 * (2652.8 + 4419.6)},
    ],
    counters=[
        {"kernel": "ampere_sgemm_32x32_sliced1x4_tn", "nvtx_path": "", "instances": 10, "duration_ns": 108760.0,
         "flops": {"fp32": 10 * 2 * 128 * 512 * 784.0}, "tensor_flops": {}, "dram_read_bytes": 10 * 1.9e6,
         "dram_write_bytes": 10 * 0.26e6, "l2_read_bytes": 10 * 4e6, "l2_write_bytes": 10 * 0.3e6,
         "achieved_occupancy": 0.11, "raw": {}},
        {"kernel": ADD, "nvtx_path": "", "instances": 10, "duration_ns": 22823.0, "flops": {"fp32": 10 * 65536.0},
         "tensor_flops": {}, "dram_read_bytes": 10 * 524288.0, "dram_write_bytes": 10 * 262144.0,
         "l2_read_bytes": 10 * 524288.0, "l2_write_bytes": 10 * 262144.0, "achieved_occupancy": 0.45, "raw": {}},
    ])

# ---------------------------------------------------------------------------
# 2. Data-starved training: healthy tensor-core kernels, but each of the 200
#    steps waits ~190 ms for its batch, copied from pageable memory.
FPROP = "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel"
DGRAD = "sm80_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel"
WGRAD = "sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel"
BN = "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(cudnnTensorStruct, float const*)"
steps = 200
ds_rows = [(FPROP, steps * 20, 1_400_000.0, (216, 2, 1)), (DGRAD, steps * 19, 1_500_000.0, (216, 2, 1)),
           (WGRAD, steps * 20, 1_300_000.0, (108, 4, 1)), (BN, steps * 20, 180_000.0, (512, 1, 1)),
           (RELU, steps * 17, 120_000.0, (4096, 1, 1))]
ds_k = sum(n * m for _, n, m, _ in ds_rows)
ds_start = 2_000_000_000
ds_long = steps * 190_000_000
ds_copies = 2 * steps
ds_copy_ns = 6_400_000.0
ds_window = int(ds_k + ds_copies * ds_copy_ns + ds_long + 150_000_000)
starved = profile(
    "python3 train_resnet.py --batch 64", "NVIDIA A100-SXM4-80GB",
    [kernel(n, c, m, grid=g, block=(256, 1, 1)) for n, c, m, g in ds_rows],
    [api("cudaLaunchKernel", sum(c for _, c, _, _ in ds_rows), 5200.0), api("cudaMemcpyAsync", ds_copies, 6_500_000.0),
     api("cudaStreamSynchronize", steps, 40_000.0)],
    [memcpy("HtoD", ds_copies, ds_copy_ns, 19_267_584, pageable=ds_copies), memcpy("DtoH", steps, 2500.0, 4)],
    [launch(n, c, 5200.0, m) for n, c, m, _ in ds_rows],
    {"process_start_ns": 0, "process_end_ns": ds_start + ds_window + 1_000_000_000, "first_gpu_ns": ds_start,
     "last_gpu_ns": ds_start + ds_window, "kernel_busy_ns": int(ds_k), "gpu_busy_ns": int(ds_k + ds_copies * ds_copy_ns),
     "largest_gaps": gaps(ds_start, [(300_000_000 * i, 195_000_000 - 100_000 * i) for i in range(16)]),
     "gap_histogram": {"<10us": 30000, "10-100us": 1200, "0.1-1ms": 40, ">10ms": steps},
     "gap_ns_histogram": {"<10us": 120_000_000, "10-100us": 25_000_000, "0.1-1ms": 5_000_000, ">10ms": ds_long}},
    sequences=[{"kernels": [FPROP, BN, RELU], "count": steps * 17, "total_ns": steps * 17 * (1_400_000 + 180_000 + 120_000)}])

# ---------------------------------------------------------------------------
# 3. Healthy large bf16 GEMMs on an H100: busy 98%, pinned copies, one final sync.
GEMM = "nvjet_tst_256x128_64x4_2x1_v_bz_coopA_NNT"
h_n = 5000
h_mean = 1_960_000.0
h_start = 1_500_000_000
h_window = int(h_n * h_mean / 0.98)
healthy = profile(
    "./bench_gemm --m 8192 --n 8192 --k 8192 --dtype bf16", "NVIDIA H100 80GB HBM3",
    [kernel(GEMM, h_n, h_mean, grid=(132, 1, 1), block=(384, 1, 1))],
    [api("cudaLaunchKernel", h_n, 4100.0), api("cudaMemcpyAsync", 3, 40_000.0), api("cudaDeviceSynchronize", 1, 9.6e9),
     api("cudaMallocHost", 2, 300_000_000.0)],
    [memcpy("HtoD", 2, 5_600_000.0, 134_217_728), memcpy("DtoH", 1, 5_600_000.0, 134_217_728)],
    [launch(GEMM, h_n, 4100.0, h_mean)],
    {"process_start_ns": 0, "process_end_ns": h_start + h_window + 300_000_000, "first_gpu_ns": h_start,
     "last_gpu_ns": h_start + h_window, "kernel_busy_ns": int(h_n * h_mean), "gpu_busy_ns": int(h_n * h_mean + 16_800_000),
     "largest_gaps": gaps(h_start, [(10_000_000 * i, 45_000) for i in range(8)]),
     "gap_histogram": {"<10us": 200, "10-100us": 4799},
     "gap_ns_histogram": {"<10us": 1_000_000, "10-100us": int(h_window - h_n * h_mean - 16_800_000) - 1_000_000}},
    sequences=[{"kernels": [GEMM, GEMM], "count": h_n - 1, "total_ns": (h_n - 1) * 2 * h_mean}],
    counters=[{"kernel": GEMM, "nvtx_path": "", "instances": 5, "duration_ns": 5 * h_mean,
               "flops": {}, "tensor_flops": {"bf16": 5 * 2 * 8192.0 ** 3}, "dram_read_bytes": 5 * 2.1e9,
               "dram_write_bytes": 5 * 0.14e9, "l2_read_bytes": 5 * 9e9, "l2_write_bytes": 5 * 0.2e9,
               "achieved_occupancy": 0.09, "raw": {}}])

# ---------------------------------------------------------------------------
# 4. A CUDA program that calls cudaDeviceSynchronize after every kernel.
STENCIL = "_Z15stencil_2d_stepPKfPfii"
s_n = 20000
s_mean = 30_000.0
s_start = 150_000_000
s_gap = 12_500.0
s_window = int(s_n * s_mean + (s_n - 1) * s_gap)
sync_prog = profile(
    "./stencil 4096 20000", "NVIDIA H100 80GB HBM3",
    [kernel(STENCIL, s_n, s_mean, grid=(1024, 1, 1), block=(256, 1, 1), demangled="stencil_2d_step(float const*, float*, int, int)")],
    [api("cudaLaunchKernel", s_n, 3800.0), api("cudaDeviceSynchronize", s_n, 34_500.0), api("cudaMemcpy", 2, 12_000_000.0),
     api("cudaMalloc", 2, 250_000.0)],
    [memcpy("HtoD", 1, 11_000_000.0, 67_108_864, synchronous=1), memcpy("DtoH", 1, 11_500_000.0, 67_108_864, synchronous=1)],
    [launch(STENCIL, s_n, 3800.0, s_mean)],
    {"process_start_ns": 0, "process_end_ns": s_start + s_window + 200_000_000, "first_gpu_ns": s_start,
     "last_gpu_ns": s_start + s_window, "kernel_busy_ns": int(s_n * s_mean), "gpu_busy_ns": int(s_n * s_mean + 22_500_000),
     "largest_gaps": gaps(s_start, [(40_000 * i, 14_000) for i in range(8)]),
     "gap_histogram": {"10-100us": s_n - 1},
     "gap_ns_histogram": {"10-100us": int(s_window - s_n * s_mean - 22_500_000)}},
    sequences=[{"kernels": [STENCIL, STENCIL], "count": s_n - 1, "total_ns": (s_n - 1) * 2 * s_mean}])

for name, p in [("diag_mlp_eager", mlp), ("diag_data_starved", starved), ("diag_healthy_gemm", healthy),
                ("diag_sync_every_kernel", sync_prog)]:
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(p, f, indent=1)
        f.write("\n")
    print("wrote", name + ".json")
