#!/usr/bin/env python3
"""Writes cnn_train_h100.json: a recorded-style ProfileData of a small CNN
trained for 60 steps with PyTorch on an H100 (cuDNN convolutions, cuBLAS
GEMMs, PyTorch elementwise/reduction/optimizer kernels, NVTX ranges per
phase, pageable input copies, a synchronous loss read-back each step).

The data is simulated event by event (one CUDA stream, a launch-bound host
loop) and aggregated here exactly, so every figure in the file agrees with
the others: busy time is the union of the intervals, gaps are the holes,
NVTX range time includes nested ranges, launch statistics join each kernel
with its launch call. Names are real mangled names. Run it to regenerate the
fixture (fixed seed: the output is deterministic).
"""
import json
import math
import random
from collections import Counter, defaultdict

random.seed(408)

CONV_F = "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw_tilesize64x32x64_stage5_warpsize2x1x1_g1_tensor16x8x8_kernel__5x_cudnn"
CONV_D = "sm90_xmma_dgrad_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw_tilesize64x32x64_stage5_warpsize2x1x1_g1_tensor16x8x8_kernel__5x_cudnn"
CONV_W = "sm90_xmma_wgrad_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw_tilesize64x32x64_stage5_warpsize2x1x1_g1_tensor16x8x8_kernel__5x_cudnn"
GEMM_TN = "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
GEMM_NN = "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x64x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
RELU = "_ZN2at6native29vectorized_elementwise_kernelILi4EZNS0_12clamp_launchEvEUlfE_St5arrayIPcLm2EEEEviT0_T1_"
FILL = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"
POOL = "_Z21max_pool_forward_nchwILi256EEviPKfllliiiiiiiiiiPfPl"
SOFTMAX_F = "_ZN2at6native12_GLOBAL__N_120softmax_warp_forwardIfffLi4ELb1ELb0EEEvPT1_PKT_iiiPKbib"
SOFTMAX_B = "_ZN2at6native12_GLOBAL__N_121softmax_warp_backwardIfffLi4ELb1ELb0EEEvPT1_PKT_S7_iiiPKb"
NLL = "_Z38nll_loss_forward_reduce_cuda_kernel_2dILi32EEvPfS0_PKfPKlS2_blll"
REDUCE = "_ZN2at6native13reduce_kernelIfNS0_8ReduceOpIfEEEEvPT_T0_"
ADAM = "_ZN2at6native25multi_tensor_apply_kernelILi512ENS0_12_GLOBAL__N_118TensorListMetadataILi4EfEENS2_20FusedAdamMathFunctorIfEEJddEEEvT0_T1_DpT2_"

# name -> (mean ns, relative spread, grid, block, registers, static smem, dynamic smem, launched by the driver API)
KERNELS = {
    CONV_F: (11800, 0.04, (288, 1, 1), (128, 1, 1), 168, 0, 49152, True),
    CONV_D: (14200, 0.05, (288, 1, 1), (128, 1, 1), 168, 0, 49152, True),
    CONV_W: (16900, 0.06, (36, 4, 1), (128, 1, 1), 168, 0, 49152, True),
    GEMM_TN: (7900, 0.05, (4, 2, 1), (128, 1, 1), 154, 0, 34816, True),
    GEMM_NN: (8400, 0.05, (4, 2, 1), (128, 1, 1), 154, 0, 34816, True),
    RELU: (2300, 0.06, (196, 1, 1), (128, 1, 1), 16, 0, 0, False),
    FILL: (1900, 0.05, (64, 1, 1), (128, 1, 1), 16, 0, 0, False),
    POOL: (4100, 0.04, (392, 1, 1), (256, 1, 1), 32, 0, 0, False),
    SOFTMAX_F: (2650, 0.03, (16, 1, 1), (128, 1, 1), 22, 0, 0, False),
    SOFTMAX_B: (2350, 0.03, (16, 1, 1), (128, 1, 1), 24, 0, 0, False),
    NLL: (4400, 0.08, (1, 1, 1), (32, 1, 1), 30, 1024, 0, False),
    REDUCE: (6300, 0.07, (10, 1, 1), (512, 1, 1), 32, 0, 16, False),
    ADAM: (15100, 0.04, (38, 1, 1), (512, 1, 1), 64, 0, 0, False),
}

STEP = [
    ("train/step/forward", [CONV_F, RELU, POOL, CONV_F, RELU, POOL, GEMM_TN, RELU, GEMM_TN, SOFTMAX_F, NLL]),
    ("train/step/backward", [SOFTMAX_B, GEMM_NN, GEMM_TN, REDUCE, RELU, GEMM_NN, GEMM_TN, REDUCE, RELU,
                             CONV_D, CONV_W, REDUCE, RELU, CONV_W, REDUCE]),
    ("train/step/optimizer", [ADAM, FILL]),
]


class Stats:
    def __init__(self):
        self.v = []

    def add(self, x):
        self.v.append(float(x))

    def json(self):
        n = len(self.v)
        mean, m2 = 0.0, 0.0
        for i, x in enumerate(self.v, 1):
            d = x - mean
            mean += d / i
            m2 += d * (x - mean)
        return {"count": n, "total": sum(self.v), "min": min(self.v) if n else 0.0, "max": max(self.v) if n else 0.0,
                "mean": mean, "m2": m2, "reservoir": self.v[:2048]}


def main():
    t = 1_764_000_000_000_000_000  # CUPTI timestamps are ns since the epoch
    process_start = t
    t += 2_400_000_000  # CUDA init, model setup, cuDNN heuristics
    gpu_free = 0
    corr = 100
    intervals, kernel_intervals = [], []
    kernels = defaultdict(Stats)   # (name, path)
    first_cfg = {}
    apis = defaultdict(Stats)
    api_domain = {}
    launches = defaultdict(lambda: [Stats(), Stats(), Stats(), 0])
    mem = defaultdict(lambda: {"d": Stats(), "s": Stats(), "bytes": [], "pageable": 0, "sync": 0})
    nvtx_cpu = defaultdict(Stats)
    nvtx_gpu = defaultdict(lambda: [0, 0.0])
    seq = []

    def api(name, dur, domain="runtime"):
        nonlocal t
        apis[name].add(dur)
        api_domain[name] = domain
        s = t
        t += dur
        return s, t

    def gpu(start, dur):
        nonlocal gpu_free
        s = max(start, gpu_free)
        gpu_free = s + dur
        intervals.append((s, s + dur))
        return s, s + dur

    def copy(kind, nbytes, pageable, sync):
        nonlocal t
        name = "cudaMemcpy" if sync else "cudaMemcpyAsync"
        s, e = api(name, random.randint(9000, 14000) if pageable else random.randint(3000, 4000))
        dur = int(nbytes / 11e9 * 1e9) + random.randint(1200, 1600)
        gs, ge = gpu(s + 2500, dur)
        if sync and ge > t:
            apis[name].v[-1] += ge - t
            t = ge
        m = mem[kind]
        m["d"].add(ge - gs)
        m["s"].add(nbytes)
        m["bytes"].append(nbytes)
        m["pageable"] += pageable
        m["sync"] += sync

    train_start = t
    for step in range(60):
        # The data loader hands a batch over: the GPU idles meanwhile.
        t += random.randint(700_000, 1_300_000) if step % 20 else random.randint(18_000_000, 25_000_000)
        step_start = t
        copy("HtoD", 64 * 28 * 28 * 4, 1, 0)
        copy("HtoD", 64 * 8, 1, 0)
        for path, names in STEP:
            phase_start = t
            for name in names:
                mean, spread, grid, block, regs, ssmem, dsmem, driver = KERNELS[name]
                corr += 1
                api_name = "cuLaunchKernel" if driver else "cudaLaunchKernel"
                a_s, a_e = api(api_name, random.randint(3200, 5200), "driver" if driver else "runtime")
                dur = max(1000, int(random.gauss(mean, mean * spread)))
                k_s, k_e = gpu(a_e - 1500 + random.randint(0, 2500), dur)
                kernel_intervals.append((k_s, k_e))
                kernels[(name, path)].add(dur)
                first_cfg.setdefault((name, path), (grid, block, regs, ssmem, dsmem))
                la = launches[name]
                la[0].add(a_e - a_s)
                la[1].add(max(0, k_s - a_e))
                la[2].add(dur)
                la[3] += dur < (a_e - a_s)
                for p in ("train", "train/step", path):
                    nvtx_gpu[p][0] += 1
                    nvtx_gpu[p][1] += dur
                seq.append(name)
                t += random.randint(600, 1500)  # Python and dispatcher between ops
                if name == NLL:
                    # loss.item(): a blocking read-back
                    copy("DtoH", 4, 1, 1)
                if name == ADAM:
                    api("cudaMemsetAsync", random.randint(2500, 3500))
                    gs, ge = gpu(t, random.randint(1100, 1400))
                    mem["memset"]["d"].add(ge - gs)
                    mem["memset"]["s"].add(4096)
                    mem["memset"]["bytes"].append(4096)
            nvtx_cpu[path].add(t - phase_start)
        api("cudaStreamIsCapturing", random.randint(300, 600))
        nvtx_cpu["train/step"].add(t - step_start)
    t = max(t, gpu_free) + 50_000
    api("cudaStreamSynchronize", t - (t - 40_000))
    nvtx_cpu["train"].add(t - train_start)
    for _ in range(12):
        api("cudaMalloc", random.randint(80_000, 400_000))
    api("cudaGetDeviceProperties", 21_000)
    process_end = t + 300_000_000

    def union(iv):
        iv = sorted(iv)
        busy, gaps = 0, []
        cs, ce = iv[0]
        for s, e in iv[1:]:
            if s <= ce:
                ce = max(ce, e)
            else:
                busy += ce - cs
                gaps.append((ce, s))
                cs, ce = s, e
        return busy + ce - cs, gaps

    kernel_busy, _ = union(kernel_intervals)
    gpu_busy, gaps = union(intervals)

    def bucket(g):
        return "<10us" if g < 1e4 else "10-100us" if g < 1e5 else "0.1-1ms" if g < 1e6 else "1-10ms" if g < 1e7 else ">10ms"

    hist = Counter(bucket(e - s) for s, e in gaps)
    hist_ns = Counter()
    for s, e in gaps:
        hist_ns[bucket(e - s)] += e - s
    largest = sorted(gaps, key=lambda g: g[0] - g[1])[:10]
    grams = Counter()
    gram_ns = Counter()
    for n in (2, 3, 4):
        for i in range(len(seq) - n + 1):
            grams[tuple(seq[i:i + n])] += 1
    mean_of = {name: KERNELS[name][0] for name in KERNELS}
    top = sorted(grams.items(), key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))[:12]

    out = {
        "pid": 4242, "command": "python3 tests/programs/torch_cnn_train.py --steps 60", "exit_status": "exited 0",
        "exit_code": 0, "complete": True, "devices": ["NVIDIA H100 80GB HBM3"], "dram_peak_bps": [3.35e12],
        "processes": [4242], "wall_ns": float(process_end - process_start + 150_000_000),
        "kernels": [{"name": n, "demangled": "", "nvtx_path": p, "duration": s.json(), "grid": list(first_cfg[(n, p)][0]),
                     "block": list(first_cfg[(n, p)][1]), "registers": first_cfg[(n, p)][2],
                     "static_smem": first_cfg[(n, p)][3], "dynamic_smem": first_cfg[(n, p)][4], "device": 0}
                    for (n, p), s in sorted(kernels.items())],
        "apis": [{"name": n, "domain": api_domain[n], "duration": s.json(), "errors": 0} for n, s in sorted(apis.items())],
        "memcpys": [{"kind": k, "duration": m["d"].json(), "total_bytes": sum(m["bytes"]), "min_bytes": min(m["bytes"]),
                     "max_bytes": max(m["bytes"]), "pageable": m["pageable"], "synchronous": m["sync"],
                     "sizes": m["s"].json()} for k, m in sorted(mem.items())],
        "launches": [{"kernel": n, "api_ns": l[0].json(), "queue_ns": l[1].json(), "kernel_ns": l[2].json(),
                      "shorter_than_launch": l[3]} for n, l in sorted(launches.items())],
        "nvtx_ranges": [{"path": p, "cpu_ns": nvtx_cpu[p].json(), "kernels": nvtx_gpu[p][0], "kernel_ns": nvtx_gpu[p][1]}
                        for p in sorted(nvtx_cpu)],
        "timeline": {"process_start_ns": process_start, "process_end_ns": process_end,
                     "first_gpu_ns": min(s for s, _ in intervals), "last_gpu_ns": max(e for _, e in intervals),
                     "kernel_busy_ns": kernel_busy, "gpu_busy_ns": gpu_busy,
                     "largest_gaps": [[s, e] for s, e in largest], "gap_histogram": dict(hist), "gap_ns_histogram": dict(hist_ns),
                     "late_records": 0},
        "pm_interval_ns": 0.0, "pm_samples": [], "counters": [],
        "sequences": [{"kernels": list(k), "count": c, "total_ns": float(c * sum(mean_of[x] for x in k))} for k, c in top],
        "diagnoses": [], "warnings": [],
    }
    with open("cnn_train_h100.json", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
