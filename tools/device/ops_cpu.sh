#!/usr/bin/env bash
# Per-op CPU times on the GPU machine's host (all cores, then one core for the
# Linear layers): where the CPU engine's inference at batch 64/128 spends its
# time against PyTorch CPU.   tools/device/run.sh ops_cpu:200
set -u
OUT=${OUT:-/tmp/roofline-ops-cpu}
mkdir -p "$OUT/ops_cpu"
n=$(nproc)
for b in 64 128; do
  OMP_NUM_THREADS=$n timeout 90 ./build/bin/roofline -q ops --perf --device cpu --batch "$b" > "$OUT/ops_cpu/b$b-t$n.txt" 2>&1
  echo "ops --perf --device cpu --batch $b on $n threads: rc=$?"
done
OMP_NUM_THREADS=1 timeout 60 ./build/bin/roofline -q ops --perf --device cpu --batch 128 --op linear \
  > "$OUT/ops_cpu/b128-t1-linear.txt" 2>&1
echo "linear, one thread: rc=$?"
grep -E "^  (linear|linear\+relu|conv2d|maxpool2d|gather_batch|log_softmax|softmax) +forward" "$OUT/ops_cpu/b128-t$n.txt" | cut -c1-120
