#!/usr/bin/env bash
# Hardware area on the GPU machine (tools/checks/run.sh hardware:60): the GPU
# tests of query_gpu() and the datasheet match, then `roofline device` as text
# and JSON, and nvidia-smi's own view of clocks, power and memory to compare.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
./build/bin/roofline_gpu_tests --gtest_filter='GpuDevice.*'
./build/bin/roofline_tests --gtest_filter='DeviceCli.*:Datasheet*:ReferenceRoofline.*:GpuInfoComplete.*'
./build/bin/roofline --db "$OUT/hw.db" device --device all | tee "$OUT/hw-device.txt"
./build/bin/roofline --db "$OUT/hw.db" --json device --device all > "$OUT/hw-device.json"
nvidia-smi -q -d CLOCK,POWER,MEMORY > "$OUT/hw-nvidia-smi.txt" 2>&1 || true
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem,power.default_limit --format=csv \
  | tee -a "$OUT/hw-device.txt"
