#!/usr/bin/env bash
# throwaway: why is this host's CPU slow for us?
R=./build/bin/roofline
nproc; cat /sys/fs/cgroup/cpu.max 2>/dev/null; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|NUMA node|MHz|L2|L3"
grep -m1 -E "flags" /proc/cpuinfo | tr ' ' '\n' | grep -cE "avx512"
for t in 16 8; do
  OMP_NUM_THREADS=$t timeout 60 $R bench ece408 --device cpu --batch 64 --epochs 1 --max-steps 100 > $OUT/t$t.txt 2>&1
  echo "threads $t: $(grep -E '^roofline ece408' $OUT/t$t.txt)"
done
OMP_NUM_THREADS=16 timeout 60 $R ops --perf --device cpu --op conv2d --batch 64 2>&1 | grep -E "forward " | grep -E "86x86|40x40"
OMP_NUM_THREADS=8 timeout 60 $R ops --perf --device cpu --op conv2d --batch 64 2>&1 | grep -E "forward " | grep -E "86x86|40x40"
