#!/usr/bin/env bash
# Where the tracing overhead on many small kernels goes: the overhead
# workload (300000 launches of a tiny kernel) plain and under `roofline
# profile` with the activity-buffer choices (size, recycling), without API
# records, and without snapshots; 3 interleaved repetitions, medians of the
# steady loop's time. One traced run with ROOFLINE_CUPTI_DEBUG=1 says how long
# folding each buffer took and on which thread.
set -u
OUT=${OUT:-/tmp/roofline-overhead}
D="$OUT/overhead"; mkdir -p "$D"
R=./build/bin/roofline T=./build/tests/programs DB="$D/overhead.db"
modes=(plain default legacy8 pool2 pool64 noapi noapi_legacy8 nosnap)
run_mode() {
  case $1 in
    plain) "$T/overhead_workload" small ;;
    default) "$R" --db "$DB" -q profile -- "$T/overhead_workload" small ;;
    legacy8) ROOFLINE_CUPTI_POOL=0 ROOFLINE_CUPTI_BUFFER_MB=8 "$R" --db "$DB" -q profile -- "$T/overhead_workload" small ;;
    pool2) ROOFLINE_CUPTI_BUFFER_MB=2 "$R" --db "$DB" -q profile -- "$T/overhead_workload" small ;;
    pool64) ROOFLINE_CUPTI_BUFFER_MB=64 "$R" --db "$DB" -q profile -- "$T/overhead_workload" small ;;
    noapi) ROOFLINE_API=0 "$R" --db "$DB" -q profile -- "$T/overhead_workload" small ;;
    noapi_legacy8) ROOFLINE_API=0 ROOFLINE_CUPTI_POOL=0 ROOFLINE_CUPTI_BUFFER_MB=8 "$R" --db "$DB" -q profile -- "$T/overhead_workload" small ;;
    nosnap) ROOFLINE_SNAPSHOT_MS=1000000 "$R" --db "$DB" -q profile -- "$T/overhead_workload" small ;;
  esac
}
: > "$D/raw.csv"
for rep in 1 2 3; do
  for m in "${modes[@]}"; do
    loop=$(run_mode "$m" 2>&1 | sed -n 's/.*loop_s=\([0-9.]*\).*/\1/p' | head -1)
    echo "$m,$rep,${loop:-nan}" >> "$D/raw.csv"
  done
done
python3 - "$D/raw.csv" <<'PY' | tee "$D/summary.txt"
import csv, statistics, sys
rows = list(csv.reader(open(sys.argv[1])))
med = {}
for m in dict.fromkeys(r[0] for r in rows):
    v = [float(r[2]) for r in rows if r[0] == m and r[2] != "nan"]
    med[m] = statistics.median(v) if v else float("nan")
for m, v in med.items():
    print(f"OVERHEAD {m:14} loop median {v:.4f} s  overhead {100 * (v / med['plain'] - 1):6.2f} %  (runs: {[r[2] for r in rows if r[0] == m]})")
PY
ROOFLINE_CUPTI_DEBUG=1 "$R" --db "$DB" -q profile -- "$T/overhead_workload" small > "$D/debug.txt" 2>&1
grep -c "roofline-cupti" "$D/debug.txt" | sed 's/^/buffers completed: /'
grep "roofline-cupti" "$D/debug.txt" | awk '{n++; ms+=$9; th[$(NF-1)]++} END {printf "OVERHEAD folding: %d buffers, %.1f ms total; threads:", n, ms; for (t in th) printf " %s=%d", t, th[t]; print ""}'
grep "roofline-cupti" "$D/debug.txt" | head -5
