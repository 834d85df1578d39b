#!/usr/bin/env bash
# GPU tests under compute-sanitizer: memcheck (out-of-bounds and misaligned
# accesses, reads too: the op harness's guards catch only writes), then
# racecheck (shared-memory hazards), for a gtest filter. Exit code 1 when either
# tool reports an error or a test fails.
#   tools/checks/run.sh sanitize:420[:FILTER[,RACECHECK_FILTER]]
# The default filter is the engine's own kernels: the op harness on the GPU, the
# tiled and pooled convolutions' edge shapes, the small Linear and head kernels,
# every model's inference, and the fused kernels' launch lengths and inference.
# '*' (the whole GPU suite, ceiling and sweep benchmarks included) is far slower
# under the sanitizers. SANITIZE_S: each tool's limit in seconds (default 200).
set -u
OUT=${OUT:-/tmp/roofline-sanitize}
mkdir -p "$OUT/sanitize"
ENGINE='*OpsOnGpu*:OpsGpu.TiledConvolutionEdges*:OpsGpu.SmallLinear*:ConvMaxPoolGpu*:LinearHeadGpu*:InferenceGpu*'
ENGINE=$ENGINE:'FusedGpu.LaunchLengths*:FusedGpu.Inference*'
filter=${1:-$ENGINE}
race_filter=${2:-$filter}
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
status=0
for tool in memcheck racecheck; do
  f=$filter
  [[ $tool == racecheck ]] && f=$race_filter
  timeout "${SANITIZE_S:-200}" "$CS" --tool $tool --error-exitcode 9 ./build/bin/roofline_gpu_tests --gtest_filter="$f" \
    > "$OUT/sanitize/$tool.log" 2>&1
  rc=$?
  echo "$tool rc=$rc ($f)"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) " "$OUT/sanitize/$tool.log"
  ((rc == 0)) || status=1
done
exit $status
