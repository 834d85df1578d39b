#!/usr/bin/env bash
# GPU tests under compute-sanitizer: memcheck, then racecheck (shared-memory
# handoffs), for a gtest filter.
#   tools/device/run.sh sanitize:300:FILTER
set -u
OUT=${OUT:-/tmp/roofline-sanitize}
mkdir -p "$OUT/sanitize"
filter=${1:-*}
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  timeout 280 "$CS" --tool $tool --error-exitcode 9 ./build/bin/roofline_gpu_tests --gtest_filter="$filter" \
    > "$OUT/sanitize/$tool.log" 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) " "$OUT/sanitize/$tool.log"
done
