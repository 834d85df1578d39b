#!/usr/bin/env bash
# `roofline analyze` (the main job) on the GPU machine, timed, with the charts
# it writes copied back. Builds nothing: uses ./build. 25.1 s on the H100 (docs/results-h100.md).
#   tools/checks/run.sh analyze:120
set -u
OUT=${OUT:-/tmp/roofline-analyze}
mkdir -p "$OUT/analyze"
start=$(date +%s.%N)
./build/bin/roofline analyze --out "$OUT/analyze/report" > "$OUT/analyze/analyze.txt" 2> "$OUT/analyze/analyze.err"
rc=$?
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}')
echo "roofline analyze rc=$rc in ${secs} s"
cat "$OUT/analyze/analyze.txt"
tail -20 "$OUT/analyze/analyze.err"
exit $rc
