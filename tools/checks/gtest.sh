#!/usr/bin/env bash
# GPU tests on the GPU machine: roofline_gpu_tests with a gtest filter
# (default: all of them), then a list of what passed, failed and skipped.
#   tools/checks/run.sh gtest:SECONDS[:FILTER]
set -u
OUT=${OUT:-/tmp/roofline-gtest}
mkdir -p "$OUT/gtest"
filter=${1:-*}
./build/bin/roofline_gpu_tests --gtest_filter="$filter" --gtest_output="json:$OUT/gtest/gpu_tests.json" \
  > "$OUT/gtest/gpu_tests.log" 2>&1
rc=$?
echo "roofline_gpu_tests --gtest_filter=$filter rc=$rc"
grep -E "^\[( +OK|  FAILED|  SKIPPED|  PASSED) |Failure|Expected|Which is|error" "$OUT/gtest/gpu_tests.log" | head -150
exit $rc
