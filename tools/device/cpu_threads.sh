#!/usr/bin/env bash
# Why the CPU engine's batch-128 runs were 5-8x slower than batch 64 on the
# 16-core GPU host (2026-11-24: simple-cnn inference 164 -> 1266 µs, simple-mlp
# step 654 -> 3641 µs) when the 2-core development machine scales 2x: the same
# runs under several OpenMP settings (thread count, wait policy, binding),
# without the peer, one line per setting, model and batch.
#   tools/device/run.sh cpu_threads:120
set -u
OUT=${OUT:-/tmp/roofline-cpu-threads}
D="$OUT/cpu_threads"; mkdir -p "$D"
R=${ROOFLINE_BIN:-./build/bin/roofline}
export ROOFLINE_DB="$D/cpu_threads.db"
lscpu | grep -E "^(CPU\(s\)|Thread|Core|Socket|Model name|NUMA|L[123])" | tee "$D/lscpu.txt"
cat /sys/fs/cgroup/cpu.max 2>/dev/null | sed 's/^/cgroup cpu.max: /'
n=$(nproc)
run() {  # label, then env assignments
  local label=$1; shift
  env "$@" "$R" -q --json bench simple-mlp,simple-cnn --device cpu --mode train,infer --batch 64,128 \
    --epochs 1 --max-steps 100 --infer-reps 100 > "$D/$label.json" 2> "$D/$label.err"
  python3 - "$D/$label.json" "$label" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"{sys.argv[2]:<24} no result ({e})"); sys.exit(0)
for t in j["tables"]:
    if t["id"] == "bench.details":
        for r in t["rows"]:
            print(f"{sys.argv[2]:<24} {r['model']:<10} b{r['batch']:<4} step {r['step_us']:8.1f} us  infer {r['infer_us']:8.1f} us (IQR {r['infer_iqr_us']:.1f})")
PY
}
run "threads$n" OMP_NUM_THREADS=$n
run "threads$n-active" OMP_NUM_THREADS=$n OMP_WAIT_POLICY=active
run "threads$n-passive" OMP_NUM_THREADS=$n OMP_WAIT_POLICY=passive
run "threads$n-bind-close" OMP_NUM_THREADS=$n OMP_PROC_BIND=close OMP_PLACES=cores
run "threads$((n/2))" OMP_NUM_THREADS=$((n/2))
run "threads4" OMP_NUM_THREADS=4
run "threads1" OMP_NUM_THREADS=1
