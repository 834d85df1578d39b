#!/usr/bin/env bash
# The profiler on the GPU machine (run by the lead; see docs/profiler.md):
#   1. the profiler's GPU tests (and its CPU tests, for the record)
#   2. tracing overhead on steady workloads, many small kernels and large
#      kernels: the program's own steady-loop time and the whole run's wall
#      time, without and with `roofline profile` (and with kernels/copies only,
#      ROOFLINE_API=0), 5 repetitions each, interleaved, medians; the target
#      is <= 5 %
#   3. a stock PyTorch training script (tests/programs/torch_cnn_train.py,
#      300 steps): the summary, a Chrome trace, and its overhead
#   4. programs that fork, exit non-zero, are killed, or meet another CUPTI
#      subscriber
#   5. NVTX ranges, PM sampling (with a device reset before exit, and at a
#      1 us interval on the small-kernel workload) and per-kernel counters in
#      injected programs
# Expects the build at ./build (cmake --build build --target roofline
# roofline_tests roofline_gpu_tests); writes everything under $OUT/profiler.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-./out}
D=$OUT/profiler
mkdir -p "$D"
source tools/checks/device_env.sh
B=./build
R=$B/bin/roofline
T=$B/tests/programs
DB=$D/profiler.db
log() { echo "== $*" | tee -a "$D/summary.txt"; }
: > "$D/summary.txt"

log "machine"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee -a "$D/summary.txt"
for f in "$R" "$B/lib/libroofline_inject.so" "$T/profile_target" "$T/overhead_workload" "$B/bin/roofline_gpu_tests"; do
  [ -e "$f" ] || { log "missing $f: build the targets first"; exit 1; }
done

log "1. tests"
$B/bin/roofline_gpu_tests --gtest_filter='ProfileGpu*' > "$D/gpu_tests.txt" 2>&1
echo "gpu tests rc=$?" | tee -a "$D/summary.txt"
grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$D/gpu_tests.txt" | tee -a "$D/summary.txt"
$B/bin/roofline_tests --gtest_filter='Profile*' > "$D/cpu_tests.txt" 2>&1
echo "cpu profile tests rc=$?" | tee -a "$D/summary.txt"
grep -E "^\[  (PASSED|FAILED) " "$D/cpu_tests.txt" | tee -a "$D/summary.txt"

log "2. tracing overhead (5 repetitions, interleaved; medians)"
now() { date +%s.%N; }
: > "$D/overhead_raw.csv"
for w in small busy large; do
  for rep in 1 2 3 4 5; do
    for mode in plain traced kernels_only; do
      t0=$(now)
      case $mode in
        plain) out=$("$T/overhead_workload" "$w" 2>&1) ;;
        traced) out=$("$R" --db "$DB" -q profile --label "overhead-$w" -- "$T/overhead_workload" "$w" 2>&1) ;;
        kernels_only) out=$(ROOFLINE_API=0 "$R" --db "$DB" -q profile --label "overhead-$w-noapi" -- "$T/overhead_workload" "$w" 2>&1) ;;
      esac
      t1=$(now)
      loop=$(echo "$out" | sed -n 's/.*loop_s=\([0-9.]*\).*/\1/p' | head -1)
      echo "$w,$mode,$rep,${loop:-nan},$(awk "BEGIN{print $t1 - $t0}")" >> "$D/overhead_raw.csv"
      [ "$mode" = traced ] && [ "$rep" = 1 ] && echo "$out" > "$D/overhead_$w.txt"
    done
  done
done
python3 - "$D/overhead_raw.csv" <<'EOF' | tee -a "$D/summary.txt"
import csv, statistics, sys
rows = list(csv.reader(open(sys.argv[1])))
print(f"{'workload':8} {'mode':13} {'loop med s':>11} {'wall med s':>11} {'loop ovh':>9} {'wall ovh':>9}  target <= 5 %")
for w in ("small", "busy", "large"):
    med = {}
    for mode in ("plain", "traced", "kernels_only"):
        r = [x for x in rows if x[0] == w and x[1] == mode]
        med[mode] = (statistics.median(float(x[3]) for x in r), statistics.median(float(x[4]) for x in r))
    for mode in ("plain", "traced", "kernels_only"):
        lo = 100 * (med[mode][0] / med["plain"][0] - 1)
        wo = 100 * (med[mode][1] / med["plain"][1] - 1)
        ok = "" if mode == "plain" else ("  ok" if lo <= 5 else "  OVER")
        print(f"{w:8} {mode:13} {med[mode][0]:11.4f} {med[mode][1]:11.4f} {lo:8.2f}% {wo:8.2f}%{ok}")
EOF

log "3. PyTorch training script (300 steps)"
S=tests/programs/torch_cnn_train.py
"$R" --db "$DB" profile --label "300/train" --trace "$D/torch_cnn_trace.json" -- python3 "$S" --steps 300 \
  > "$D/torch_cnn_summary.txt" 2> "$D/torch_cnn_stderr.txt"
echo "profile rc=$?" | tee -a "$D/summary.txt"
"$R" --db "$DB" --json profile --label "300/train" -- python3 "$S" --steps 300 > "$D/torch_cnn_summary.json" 2>/dev/null
du -h "$D/torch_cnn_trace.json" | tee -a "$D/summary.txt"
: > "$D/torch_overhead_raw.csv"
for rep in 1 2 3; do
  for mode in plain traced; do
    t0=$(now)
    if [ $mode = plain ]; then python3 "$S" --steps 300 > /dev/null 2>&1
    else "$R" --db "$DB" -q profile -- python3 "$S" --steps 300 > /dev/null 2>&1; fi
    t1=$(now)
    echo "$mode,$rep,$(awk "BEGIN{print $t1 - $t0}")" >> "$D/torch_overhead_raw.csv"
  done
done
python3 - "$D/torch_overhead_raw.csv" <<'EOF' | tee -a "$D/summary.txt"
import csv, statistics, sys
rows = list(csv.reader(open(sys.argv[1])))
m = {k: statistics.median(float(x[2]) for x in rows if x[0] == k) for k in ("plain", "traced")}
print(f"torch_cnn_train 300 steps: wall median plain {m['plain']:.2f} s, traced {m['traced']:.2f} s, "
      f"overhead {100 * (m['traced'] / m['plain'] - 1):.1f} % (includes CUDA/cuDNN start-up in both)")
EOF

log "4. fork, non-zero exit, killed, another CUPTI subscriber"
for args in "--fork" "--exit 3" "--selfkill" "--cupti-first"; do
  name=$(echo "$args" | tr -d ' -')
  read -r -a argv <<< "$args"
  "$R" --db "$DB" profile -- "$T/profile_target" "${argv[@]}" > "$D/target_$name.txt" 2>&1
  echo "profile_target $args: rc=$?" | tee -a "$D/summary.txt"
done

log "5. NVTX, PM sampling and counters in an injected program"
"$R" --db "$DB" profile -- "$T/profile_target" > "$D/target_nvtx.txt" 2>&1
echo "profile_target (NVTX ranges): rc=$? $(grep -c 'epoch/forward' "$D/target_nvtx.txt") lines name epoch/forward" \
  | tee -a "$D/summary.txt"
"$R" --db "$DB" profile --pm-sampling -- "$T/profile_target" --reset > "$D/target_pm_reset.txt" 2>&1
echo "profile_target --reset with --pm-sampling: rc=$?" | tee -a "$D/summary.txt"
"$R" --db "$DB" profile --pm-sampling --pm-interval 1000 -- "$T/overhead_workload" small > "$D/pm_small.txt" 2>&1
echo "overhead_workload small with --pm-sampling: rc=$?" | tee -a "$D/summary.txt"
"$R" --db "$DB" profile --counters -- "$T/profile_target" > "$D/target_counters.txt" 2>&1
echo "profile_target --counters: rc=$?" | tee -a "$D/summary.txt"
grep -h "^warning" "$D/target_nvtx.txt" "$D/target_pm_reset.txt" "$D/pm_small.txt" "$D/target_counters.txt" \
  | sort | uniq -c | tee -a "$D/summary.txt"

log "done: $D"
