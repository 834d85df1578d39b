#!/usr/bin/env bash
# Hardware counters on the GPU machine (docs/counters.md). Builds nothing: it
# uses ./build (configured with CUDA, targets roofline_tests roofline_gpu_tests
# known_flops pm_workload). Steps:
#   1. the known-FLOPs kernels' SASS: only the intended floating-point opcodes
#   2. GPU tests of the range profiler and the PM sampler, CPU tests of the derivation
#   3. known_flops under roofline's range profiler and under
#      ncu --clock-control none (cache control none, then all), side by side per
#      kernel: FLOP counters equal? DRAM bytes within 3%? (PASS/MISS lines)
#   4. our profiler inside ncu: must report "another profiler" and carry on
#   5. PM sampling: supported metrics, utilization against the event-measured busy
#      fraction (duty 1.0 and 0.5, target within 5 points), overhead (target <= 2%)
# Output: $OUT/counters-report.txt (everything above) and $OUT/counters-data.tar.gz
# (raw JSON, CSV and XML). About 5 minutes on an H100.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=./build/bin
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)}
W=$(mktemp -d)
REPORT="$OUT/counters-report.txt"
: >"$REPORT"
say() { echo "$*" | tee -a "$REPORT"; }
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

say "== 1. SASS of the known-FLOPs kernels (floating-point opcodes per kernel)"
if [ -x "$CUOBJDUMP" ]; then
  "$CUOBJDUMP" -sass -arch sm_90 build/tests/libknown_flops_kernels.a >"$W/sass.txt" 2>&1
  python3 - "$W/sass.txt" <<'PY' | tee -a "$REPORT"
import collections, re, sys
txt = open(sys.argv[1]).read()
want = {"kf_fma_f32": {"FFMA"}, "kf_fma_x2I7__half2": {"HFMA2"}, "kf_fma_x2I14__nv_bfloat162": {"HFMA2"},
        "kf_poly": {"FADD", "FMUL"}, "kf_copy": set()}
for chunk in re.split(r"\n\s*Function : ", txt)[1:]:
    name = chunk.split("\n")[0].strip()
    key = next((k for k in want if k in name), None)
    if key is None:
        continue
    ops = collections.Counter()
    for line in chunk.split("\n"):
        m = re.match(r"\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_]+)*)", line)
        if m and re.match(r"^[FHD](ADD|MUL|FMA|MNMX|SETP|SET|SEL)|^HFMA2|^HADD2|^HMUL2", m.group(1)):
            ops[m.group(1) + m.group(2)] += 1
    bases = {o.split(".")[0] for o in ops}
    arith = {b for b in bases if re.match(r"^[FHD](ADD|MUL|FMA)|^H(FMA|ADD|MUL)2", b)}
    ok = arith == want[key]
    print(("PASS " if ok else "MISS ") + f"{key}: floating-point opcodes {dict(ops)}")
PY
else
  say "MISS cuobjdump not found: the SASS check was not done"
fi

say "== 2. tests"
run "$B/roofline_gpu_tests" --gtest_filter='RangeProfiler.*:PmSampler.*' --gtest_output="xml:$W/gpu-tests.xml"
say "gpu tests exit: $?"
run "$B/roofline_tests" --gtest_filter='Metrics.*:CounterStatus.*:PmSampleConversion.*:CounterEntryPoints.*'
say "cpu tests exit: $?"

say "== 3. known_flops: roofline's range profiler against ncu"
say "\$ known_flops --repeat 2 --verification --counters ours.json"
"$B/known_flops" --repeat 2 --verification --counters "$W/ours.json" >"$W/expected.json" 2>>"$REPORT"
say "known_flops (ours) exit: $?"
if [ ! -s "$W/ours.json" ]; then
  say "MISS our range profiler wrote no counters"
else
  METRICS=$(python3 -c "import json,sys; print(','.join(json.load(open(sys.argv[1]))['metrics']))" "$W/ours.json")
  say "metrics ($(echo "$METRICS" | tr ',' '\n' | wc -l)): $METRICS"
  say "unavailable: $(python3 -c "import json,sys; print(' '.join(json.load(open(sys.argv[1]))['unavailable']))" "$W/ours.json")"
  for cache in none all; do
    say "\$ ncu --clock-control none --cache-control $cache --metrics <the list> --csv --page raw ... known_flops --repeat 2"
    "$NCU" --clock-control none --cache-control "$cache" --metrics "$METRICS" --csv --page raw \
      --print-units base --print-kernel-base mangled --log-file "$W/ncu-cache-$cache.csv" \
      "$B/known_flops" --repeat 2 >"$W/expected-ncu-$cache.json" 2>>"$REPORT"
    say "ncu (cache-control $cache) exit: $?"
    run python3 tools/device/counters_compare.py "$W/expected.json" "$W/ours.json" "$W/ncu-cache-$cache.csv" \
      "ncu --cache-control $cache"
  done
fi

say "== 4. our profiler inside ncu (another profiler holds CUPTI)"
"$NCU" --clock-control none --metrics gpu__time_duration.sum --log-file "$W/ncu-busy.txt" \
  "$B/known_flops" --phases fp32_fma --repeat 1 --counters "$W/busy.json" >"$W/busy-stdout.json" 2>"$W/busy-stderr.txt"
rc=$?
cat "$W/busy-stderr.txt" | tee -a "$REPORT"
if [ $rc -eq 0 ] && grep -q "another profiler" "$W/busy-stderr.txt"; then
  say "PASS under ncu our profiler says another profiler holds CUPTI, and the kernels ran (exit 0)"
else
  say "MISS under ncu: exit $rc, expected exit 0 and an 'another profiler' warning"
fi

say "== 5. PM sampling"
"$B/pm_workload" --list-metrics >"$W/pm-metrics.json" 2>>"$REPORT"
python3 -c "import json,sys; m=json.load(open(sys.argv[1]))['pm_sampling_base_metrics']; print(len(m), 'base metrics:', ' '.join(m))" \
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

say "== summary: $(grep -c '^PASS' "$REPORT") PASS, $(grep -c '^MISS' "$REPORT") MISS"
grep '^MISS' "$REPORT" | head -40
tar -czf "$OUT/counters-data.tar.gz" -C "$W" .
rm -rf "$W"
