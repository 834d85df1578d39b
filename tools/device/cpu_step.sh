#!/usr/bin/env bash
# Where simple-mlp's CPU training step goes on the GPU host (416 us at batch 1
# there on 16 threads, 61 us on one thread of the development machine):
# thread counts 1/4/16, OPENBLAS_NUM_THREADS=1, and perf if the host has it.
#   tools/device/run.sh cpu_step:200
set -u
OUT=${OUT:-/tmp/roofline-cpu-step}
mkdir -p "$OUT/cpu_step"
export ROOFLINE_DB=${ROOFLINE_DB:-$OUT/roofline.db}
R=./build/bin/roofline
run() {  # NAME ENV...
  local name=$1; shift
  env "$@" timeout 40 "$R" bench simple-mlp --device cpu --batch 1,128 --epochs 1 --max-steps 1000 --lr 0.001 \
    --mode train > "$OUT/cpu_step/$name.txt" 2>&1
  echo "$name rc=$?: $(grep -E '^  roofline  cpu' "$OUT/cpu_step/$name.txt" | awk '{printf "b%s %s us/step; ", $4, $9}')"
}
run t1 OMP_NUM_THREADS=1
run t4 OMP_NUM_THREADS=4
run t16 OMP_NUM_THREADS=16
run t16-blas1 OMP_NUM_THREADS=16 OPENBLAS_NUM_THREADS=1
if command -v perf > /dev/null; then
  OMP_NUM_THREADS=16 timeout 60 perf record -g -o "$OUT/cpu_step/perf.data" "$R" bench simple-mlp --device cpu \
    --batch 1 --epochs 1 --max-steps 2000 --lr 0.001 --mode train > /dev/null 2>&1
  perf report -i "$OUT/cpu_step/perf.data" --stdio --no-children --sort dso,symbol 2> /dev/null | grep -v "^#" | grep "%" \
    | head -40 > "$OUT/cpu_step/perf.txt"
  head -25 "$OUT/cpu_step/perf.txt"
  rm -f "$OUT/cpu_step/perf.data"
else
  echo "no perf on this host"
fi
