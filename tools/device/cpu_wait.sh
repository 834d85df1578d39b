#!/usr/bin/env bash
# Does the OpenMP wait policy set simple-mlp's CPU step time on the GPU host?
# (engine_cpu.sh, 2026-11-24: a batch-1 step took 293 us there, 61 us on one
# thread of the 2-core development machine.) simple-mlp at batch 1 and 128 on
# the CPU, default policy, then OMP_WAIT_POLICY=active, then passive.
#   tools/device/run.sh cpu_wait:200
set -u
OUT=${OUT:-/tmp/roofline-cpu-wait}
mkdir -p "$OUT/cpu_wait"
export ROOFLINE_DB=${ROOFLINE_DB:-$OUT/roofline.db} OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
R=./build/bin/roofline
for policy in default active passive; do
  for b in 1 128; do
    steps=$([[ $b == 1 ]] && echo 2000 || echo 300)
    if [[ $policy == default ]]; then env=(env -u OMP_WAIT_POLICY); else env=(env OMP_WAIT_POLICY=$policy); fi
    "${env[@]}" timeout 40 "$R" bench simple-mlp,ece408 --device cpu --batch $b --epochs 1 --max-steps $steps \
      --lr 0.001 > "$OUT/cpu_wait/$policy-b$b.txt" 2>&1
    echo "policy=$policy batch=$b rc=$?"
    grep -E "^  roofline  cpu" "$OUT/cpu_wait/$policy-b$b.txt" | awk '{print "  ", $3, "step", $9, "us; infer", $12, "us"}'
  done
done
