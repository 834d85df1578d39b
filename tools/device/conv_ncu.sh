#!/usr/bin/env bash
# Why ece408's tiled convolution kernels run at 11-25% of the FP32 roof
# (docs/perf-notes.md): ncu on the first step's convolution launches (eager,
# batch 64) — speed of light, occupancy, launch, warp-state and shared-memory
# sections.   tools/device/run.sh conv_ncu:240
set -u
OUT=${OUT:-/tmp/roofline-conv-ncu}
mkdir -p "$OUT/conv_ncu"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 200 "$NCU" --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
  --section WarpStateStats --section MemoryWorkloadAnalysis_Tables --section SchedulerStats \
  -k regex:conv2d --launch-count 8 \
  ./build/bin/roofline -q bench ece408 --device gpu --batch 64 --epochs 1 --max-steps 3 --mode train \
  > "$OUT/conv_ncu/ncu.txt" 2> "$OUT/conv_ncu/ncu.log"
echo "ncu rc=$?"
grep -E "conv2d|Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per|Compute \(SM\) Throughput|Memory Throughput|Stall|Warp Cycles Per Issued|Issued Warp|No Eligible|Bank" "$OUT/conv_ncu/ncu.txt" | cut -c1-150 | head -120
