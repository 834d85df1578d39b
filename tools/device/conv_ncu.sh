#!/usr/bin/env bash
# Why ece408's tiled convolution kernels run at 11-25% of the FP32 roof
# (docs/perf-notes.md): ncu on the first step's convolution launches (eager,
# batch 64) — speed of light, occupancy, launch, warp-state and shared-memory
# sections, and every stall reason per issued instruction.   tools/device/run.sh conv_ncu:240
set -u
OUT=${OUT:-/tmp/roofline-conv-ncu}
mkdir -p "$OUT/conv_ncu"
source "$(dirname "$0")/ncu_common.sh"  # NCU, STALLS
timeout 200 "$NCU" --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
  --section WarpStateStats --section MemoryWorkloadAnalysis_Tables --section SchedulerStats \
  --metrics "$STALLS,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_ld.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__inst_executed_pipe_fma.sum" \
  -k regex:conv2d --launch-count 8 \
  ./build/bin/roofline -q bench ece408 --device gpu --batch 64 --epochs 1 --max-steps 3 --mode train \
  > "$OUT/conv_ncu/ncu.txt" 2> "$OUT/conv_ncu/ncu.log"
echo "ncu rc=$?"
grep -E "conv2d|stalled|wavefronts|inst_executed|pipe_fma|Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per|Compute \(SM\) Throughput|Memory Throughput|Stall|Warp Cycles Per Issued|Issued Warp|No Eligible|Bank" "$OUT/conv_ncu/ncu.txt" | cut -c1-150 | head -220
