#!/usr/bin/env bash
# Hardware counters on the GPU machine (docs/counters.md). Builds nothing: it
# uses ./build (configured with CUDA, targets roofline_tests roofline_gpu_tests
# known_flops pm_workload). Steps:
#   1. the known-FLOPs kernels' SASS: only the intended floating-point opcodes,
#      and the compiler's register moves (HFMA2 with zero multiplicands) listed
#   2. GPU tests of the range profiler and the PM sampler, CPU tests of the derivation
#   3. known_flops under roofline's range profiler (the default: L2 evicted before
#      each profiled launch, DRAM bytes from a one-pass launch after each replayed
#      one; the same without the DRAM pass; the DRAM metrics alone) against ncu
#      --clock-control none --cache-control all, with the full list and with the
#      DRAM metrics alone; then, for the default, per kernel: FLOPs per precision
#      equal ncu's? DRAM read and write within 3%? instruction counts equal the
#      arithmetic plus the register moves? (PASS/MISS lines)
#   4. our profiler inside ncu: must report "another profiler" and carry on
#   5. PM sampling: supported metrics, utilization against the event-measured busy
#      fraction (duty 1.0 and 0.5, target within 5 points), overhead (target <= 2%)
# Arguments (tools/checks/run.sh counters:SECONDS:ARG,...): ncu-none also compares
# the default against ncu --cache-control none (about 40 s more). The earlier
# l2-clean none/memset variants: known_flops --l2-clean none|memset by hand.
# Output: $OUT/counters-report.txt (everything above) and $OUT/counters-data.tar.gz
# (raw JSON, CSV and XML). 50 s on the H100 on 2026-11-24 (docs/counters.md); about 3 minutes
# was the estimate before.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=./build/bin
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)}
W=$(mktemp -d)
REPORT="$OUT/counters-report.txt"
: >"$REPORT"
say() { echo "$*" | tee -a "$REPORT"; }
T0=$(date +%s)
step() { say "== $* (at $(( $(date +%s) - T0 )) s)"; }
NCU_NONE=0
for a in "$@"; do
  case "$a" in
    ncu-none) NCU_NONE=1 ;;
    *) say "MISS unknown argument '$a' (known: ncu-none)"; exit 2 ;;
  esac
done
run() {  # run a command, its output into the report
  say "\$ $*"
  "$@" 2>&1 | tee -a "$REPORT"
  return "${PIPESTATUS[0]}"
}

for f in "$B/roofline_gpu_tests" "$B/roofline_tests" "$B/known_flops" "$B/pm_workload"; do
  [ -x "$f" ] || { say "MISS $f is missing: build the targets roofline_tests roofline_gpu_tests known_flops pm_workload"; exit 1; }
done

say "== environment"
run nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
run "$NCU" --version
say "user: $(id -un) (uid $(id -u))"

step "1. SASS of the known-FLOPs kernels (floating-point opcodes and register moves per kernel)"
SASS_MOVES=()
if [ -x "$CUOBJDUMP" ]; then
  "$CUOBJDUMP" -sass -arch sm_90 build/tests/libknown_flops_kernels.a >"$W/sass.txt" 2>&1
  python3 tools/checks/counters_sass.py "$W/sass.txt" "$W/sass-moves.json" | tee -a "$REPORT"
  [ -s "$W/sass-moves.json" ] && SASS_MOVES=(--sass "$W/sass-moves.json")
else
  say "MISS cuobjdump not found: the SASS check was not done (register moves come from known_flops.cu)"
fi

step "2. tests"
verdict_rc() {  # verdict_rc RC TEXT: PASS when RC is 0
  if [ "$1" -eq 0 ]; then say "PASS $2"; else say "MISS $2 (exit $1: see the failures above)"; fi
}
run "$B/roofline_gpu_tests" --gtest_filter='RangeProfiler.*:PmSampler.*' --gtest_output="xml:$W/gpu-tests.xml"
verdict_rc $? "GPU tests RangeProfiler.*:PmSampler.*"
run "$B/roofline_tests" --gtest_filter='Metrics.*:CounterStatus.*:PmSampleConversion.*:CounterEntryPoints.*:L2Clean.*'
verdict_rc $? "CPU tests of the derivation"

step "3. known_flops: roofline's range profiler against ncu, and the DRAM-write variants"
# Every kernel launches 4 times. The default (evict, DRAM pass) has a record for launches 0
# and 2, each with the DRAM bytes of the launch after it read alone in one pass; the
# others have one record per launch. ncu runs the full list (the reference of the
# FLOP checks) and the DRAM metrics alone (one pass, like our DRAM pass), both with
# --cache-control all.
DRAM_ONLY=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
REPEAT=4
VARIANTS=("evict:--l2-clean evict" "evict-replay:--l2-clean evict --no-dram-pass"
          "evict-dram-only:--l2-clean evict --metrics $DRAM_ONLY")
TABLE=()
for v in "${VARIANTS[@]}"; do
  name=${v%%:*}
  read -r -a vargs <<< "${v#*:}"
  say "\$ known_flops --repeat $REPEAT ${vargs[*]} --counters ours-$name.json"
  "$B/known_flops" --repeat $REPEAT "${vargs[@]}" --counters "$W/ours-$name.json" >"$W/expected-$name.json" 2>>"$REPORT"
  say "known_flops ($name) exit: $?"
  if [ -s "$W/ours-$name.json" ]; then TABLE+=("$name=$W/ours-$name.json"); else say "MISS known_flops ($name) wrote no counters"; fi
done
if [ ! -s "$W/ours-evict.json" ]; then
  say "MISS our range profiler wrote no counters (default variant)"
else
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('INFO default: %s passes, %s DRAM passes merged, %s records with replayed DRAM counts, %s configuration switches in %.1f ms' % (j['passes'], j.get('dram_passes'), j.get('dram_replayed'), j.get('config_switches'), 1e3 * j.get('config_switch_seconds', 0)))" "$W/ours-evict.json" | tee -a "$REPORT"
  METRICS=$(python3 -c "import json,sys; print(','.join(json.load(open(sys.argv[1]))['metrics']))" "$W/ours-evict.json")
  say "metrics ($(echo "$METRICS" | tr ',' '\n' | wc -l)): $METRICS"
  say "unavailable: $(python3 -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))['unavailable']))" "$W/ours-evict.json")"
  CACHES=(all)
  [ "$NCU_NONE" = 1 ] && CACHES+=(none)
  for cache in "${CACHES[@]}"; do
    say "\$ ncu --clock-control none --cache-control $cache --metrics <the list> --csv --page raw ... known_flops --repeat $REPEAT"
    "$NCU" --clock-control none --cache-control "$cache" --metrics "$METRICS" --csv --page raw \
      --print-units base --print-kernel-base mangled --log-file "$W/ncu-cache-$cache.csv" \
      "$B/known_flops" --repeat $REPEAT >"$W/expected-ncu-$cache.json" 2>>"$REPORT"
    say "ncu (cache-control $cache) exit: $? (at $(( $(date +%s) - T0 )) s)"
  done
  say "\$ ncu --clock-control none --cache-control all --metrics $DRAM_ONLY --csv --page raw ... known_flops --repeat $REPEAT"
  "$NCU" --clock-control none --cache-control all --metrics "$DRAM_ONLY" --csv --page raw \
    --print-units base --print-kernel-base mangled --log-file "$W/ncu-dram-only.csv" \
    "$B/known_flops" --repeat $REPEAT >"$W/expected-ncu-dram.json" 2>>"$REPORT"
  say "ncu (DRAM metrics only) exit: $? (at $(( $(date +%s) - T0 )) s)"
  run python3 tools/checks/counters_l2_table.py "$W/ncu-cache-all.csv" evict "${TABLE[@]}"
  run python3 tools/checks/counters_l2_table.py "$W/ncu-dram-only.csv" evict "${TABLE[@]}"
  run python3 tools/checks/counters_compare.py "$W/expected-evict.json" "$W/ours-evict.json" "$W/ncu-cache-all.csv" \
    "default (l2-clean evict, DRAM pass) against ncu --cache-control all" "${SASS_MOVES[@]}" \
    --ncu-dram "$W/ncu-dram-only.csv"
  if [ "$NCU_NONE" = 1 ]; then
    python3 tools/checks/counters_compare.py "$W/expected-evict.json" "$W/ours-evict.json" "$W/ncu-cache-none.csv" \
      "default against ncu --cache-control none (not counted)" --no-arith 2>&1 |
      sed -e 's/^MISS /INFO miss: /' -e 's/^PASS /INFO pass: /' | tee -a "$REPORT"
  fi
fi

step "4. our profiler inside ncu (another profiler holds CUPTI)"
"$NCU" --clock-control none --metrics gpu__time_duration.sum --log-file "$W/ncu-busy.txt" \
  "$B/known_flops" --phases fp32_fma --repeat 1 --counters "$W/busy.json" >"$W/busy-stdout.json" 2>"$W/busy-stderr.txt"
rc=$?
tee -a "$REPORT" <"$W/busy-stderr.txt"
if [ $rc -eq 0 ] && grep -q "another profiler" "$W/busy-stderr.txt"; then
  say "PASS under ncu our profiler says another profiler holds CUPTI, and the kernels ran (exit 0)"
else
  say "MISS under ncu: exit $rc, expected exit 0 and an 'another profiler' warning"
fi

step "5. PM sampling"
"$B/pm_workload" --list-metrics >"$W/pm-metrics.json" 2>>"$REPORT"
python3 -c "import json,sys; m=json.load(open(sys.argv[1]))['pm_sampling_base_metrics']; print('INFO', len(m), 'PM-sampling base metrics (the list: pm-metrics.json)')" \
  "$W/pm-metrics.json" 2>&1 | tee -a "$REPORT"
for duty in 1.0 0.5; do
  "$B/pm_workload" --duty $duty --seconds 2 --kernel-us 500 --interval-us 100 >"$W/pm-duty-$duty.json" 2>>"$REPORT"
  say "pm_workload --duty $duty exit: $?"
  python3 - "$W/pm-duty-$duty.json" <<'PY' | tee -a "$REPORT"
import json, sys
j = json.load(open(sys.argv[1]))
busy, pm = j["busy_fraction_events"], j["pm"]
print(f"INFO duty {j['duty_requested']}: {pm['samples_in_window']} samples in window ({pm['window_source']}), "
      f"metrics {j['pm_metrics']}, stats {j['pm_stats']}")
for key in ("mean_gr_active", "mean_sm_active"):
    d = abs(pm[key] - busy)
    print(("PASS " if d <= 0.05 else "MISS ") +
          f"duty {j['duty_requested']}: PM {key} {pm[key]:.3f} vs event busy fraction {busy:.3f} ({100 * d:.1f} points)")
PY
done
"$B/pm_workload" --overhead --runs 5 --seconds 1 --interval-us 100 >"$W/pm-overhead.json" 2>>"$REPORT"
say "pm_workload --overhead exit: $?"
python3 - "$W/pm-overhead.json" <<'PY' | tee -a "$REPORT"
import json, sys
j = json.load(open(sys.argv[1]))
o = j["overhead_pct"]
print(f"INFO without {j['seconds_without']} with {j['seconds_with']}")
print(("PASS " if o <= 2.0 else "MISS ") + f"PM-sampling overhead {o:+.2f}% (median of {j['runs']} runs, "
      f"{j['median_without']:.3f} s -> {j['median_with']:.3f} s)")
PY

say "== summary: $(grep -c '^PASS' "$REPORT") PASS, $(grep -c '^MISS' "$REPORT") MISS in $(( $(date +%s) - T0 )) s"
grep '^MISS' "$REPORT" | head -40
tar -czf "$OUT/counters-data.tar.gz" -C "$W" .
rm -rf "$W"
