#!/usr/bin/env bash
# The CPU cells with part of the host kept busy by other processes, as on the
# lent instances where ece408's CPU step ran 3.5x slower than on the next one
# (2026-11-25, docs/perf-notes.md): roofline as it is (parallel_for's threads
# take the tasks a slower thread has not started) and with ROOFLINE_CPU_TAKE=0
# (every thread its own block, every region waiting for all), beside PyTorch,
# on a quiet host, then with HOGS vCPUs (default 4, the last ones) each running
# a process of one of two kinds:
#   burst: busy 200 µs, asleep 200 µs (the vCPU's time shared at a fine grain)
#   fma:   a one-thread PyTorch matmul without pause (a neighbour on a core)
# One line per setting, model, batch and mode: step and inference times, and
# the peer's where it ran.
#   tools/device/run.sh cpu_contention:300
# MODELS (default "ece408:64 simple-mlp:128 simple-cnn:128"), STEPS (100), ROUNDS, KINDS, PEER_KINDS
# (below). ~300 s with the defaults.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/roofline-cpu-contention}
D="$OUT/cpu_contention"; mkdir -p "$D"
R=${ROOFLINE_BIN:-./build/bin/roofline}
export ROOFLINE_DB="$D/cpu_contention.db"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
n=$(nproc) hogs=${HOGS:-4} steps=${STEPS:-100}
MODELS=${MODELS:-"ece408:64 simple-mlp:128 simple-cnn:128"}
lscpu | grep -E "^(CPU\(s\)|Thread|Core|Socket|Model name|NUMA)" | tee "$D/lscpu.txt"
for c in 0 1 $((n - 1)); do
  echo "cpu$c siblings: $(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list 2>/dev/null)"
done

HOG_PIDS=()
start_hogs() {  # start_hogs KIND: one process per vCPU n-hogs .. n-1
  local kind=$1 c
  for ((c = n - hogs; c < n; ++c)); do
    if [[ $kind == burst ]]; then
      taskset -c "$c" python3 -c '
import time
while True:
    t = time.perf_counter()
    while time.perf_counter() - t < 200e-6: pass
    time.sleep(200e-6)' &
    else
      taskset -c "$c" python3 -c '
import torch
torch.set_num_threads(1)
a = torch.randn(256, 256)
while True: a = (a @ a).clamp_(-1, 1)' &
    fi
    HOG_PIDS+=($!)
  done
  sleep 2
}
stop_hogs() {
  ((${#HOG_PIDS[@]})) && kill "${HOG_PIDS[@]}" 2>/dev/null
  wait "${HOG_PIDS[@]}" 2>/dev/null
  HOG_PIDS=()
}
trap stop_hogs EXIT

run() {  # run LABEL PEER(0/1) ENV...: every model of MODELS
  local label=$1 peer=$2 spec m b
  shift 2
  for spec in $MODELS; do
    m=${spec%%:*} b=${spec##*:}
    local args=(--json bench "$m" --device cpu --mode train,infer --batch "$b" --epochs 1 --max-steps "$steps")
    ((peer)) && args+=(--peer pytorch)
    env "$@" timeout 120 "$R" -q "${args[@]}" > "$D/$label-$m.json" 2> "$D/$label-$m.err"
    python3 - "$D/$label-$m.json" "$label" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"{sys.argv[2]:<16} no result ({e})"); sys.exit(0)
for t in j["tables"]:
    if t["id"] == "bench.details":
        for r in t["rows"]:
            print(f"{sys.argv[2]:<16} {r['source']:<8} {r['model']:<10} b{r['batch']:<4} step {r['step_us']:9.1f} us"
                  f"  infer {r['infer_us']:9.1f} us (IQR {r['infer_iqr_us']:.1f})")
PY
  done
}

source tools/device/quiet_host.sh
quiet_host
# ROUNDS (default 3) rounds on the quiet host, taking and not taking in turn, PyTorch beside the
# first; then once with each kind of neighbour in KINDS (default "burst fma"), PyTorch beside the
# kinds in PEER_KINDS (default "burst": beside the FMA neighbours its step took 280 ms, 17x its quiet
# step, on 2026-11-25).
for ((round = 1; round <= ${ROUNDS:-3}; ++round)); do
  echo "=== round $round: quiet host, $OMP_NUM_THREADS threads $(date -u +%T)"
  run quiet $((round == 1)) ROOFLINE_CPU_TAKE=1
  run quiet-take0 0 ROOFLINE_CPU_TAKE=0
done
for kind in ${KINDS:-burst fma}; do
  echo "=== $hogs vCPUs busy ($kind), $OMP_NUM_THREADS threads $(date -u +%T)"
  start_hogs "$kind"
  peer=0
  [[ " ${PEER_KINDS-burst} " == *" $kind "* ]] && peer=1
  run "$kind" $peer ROOFLINE_CPU_TAKE=1
  run "$kind-take0" 0 ROOFLINE_CPU_TAKE=0
  stop_hogs
done
