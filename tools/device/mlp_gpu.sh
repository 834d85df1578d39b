#!/usr/bin/env bash
# simple-mlp's fused GPU kernel on the GPU machine (issue 3): its tests, then
# `roofline bench simple-mlp --device gpu` at batch 1, 64 and 128 beside the
# PyTorch peer with ROOFLINE_FUSED_PHASES=1 (block 0's time per phase of a
# step and of the last inference, printed to the log).
#   tools/device/run.sh mlp_gpu:600   (then memcheck and racecheck of the fused tests)
set -u
OUT=${OUT:-/tmp/roofline-mlp-gpu}
mkdir -p "$OUT/mlp_gpu"
export ROOFLINE_DB=${ROOFLINE_DB:-$OUT/roofline.db}
R=./build/bin/roofline
./build/bin/roofline_gpu_tests --gtest_filter='TrainGpu*:*Fused*' > "$OUT/mlp_gpu/tests.log" 2>&1
echo "fused tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$OUT/mlp_gpu/tests.log"
# The benches (PEER=0 leaves PyTorch out; BENCH_SPECS replaces the batch/epoch specs, ';'-separated).
peer=(--peer pytorch); [[ ${PEER:-1} == 0 ]] && peer=()
specs=("64,128 --epochs 5" "1 --epochs 1 --max-steps 2000 --lr 0.001")
[[ -n ${BENCH_SPECS:-} ]] && IFS=';' read -r -a specs <<< "$BENCH_SPECS"  # e.g. "128 --epochs 1"
for spec in "${specs[@]}"; do
  f="$OUT/mlp_gpu/bench-${spec%% *}"
  # shellcheck disable=SC2086
  ROOFLINE_FUSED_PHASES=1 timeout 100 "$R" bench simple-mlp --device gpu --batch $spec "${peer[@]}" \
    > "$f.txt" 2> "$f.log"
  echo "bench simple-mlp gpu batch ${spec%% *}: rc=$?"
  grep -E "fused-mlp: |phases|inference \(block" "$f.log"
  grep -E -A12 "Table 4|speedup|x PyTorch|×" "$f.txt" | head -30
done
# The fused kernels under compute-sanitizer: memcheck, and racecheck for the
# row phase's shared-memory handoffs (ROOFLINE_SANITIZE=0 skips them).
if [[ ${ROOFLINE_SANITIZE:-1} != 0 ]]; then
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for tool in memcheck racecheck; do
    timeout 240 "$CS" --tool $tool --error-exitcode 9 ./build/bin/roofline_gpu_tests \
      --gtest_filter='FusedGpu.LaunchLengths*:FusedGpu.Inference*' > "$OUT/mlp_gpu/$tool.log" 2>&1
    echo "$tool fused rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED) " "$OUT/mlp_gpu/$tool.log"
  done
fi
