#!/usr/bin/env bash
# ece408's GPU convolutions (issue 3): the tiled-convolution and op tests, the
# conv2d rows of the op harness at batch 64 and 128, memcheck on the edge
# shapes, then `roofline bench ece408 --device gpu` beside PyTorch.
#   tools/device/run.sh conv_gpu:400
set -u
OUT=${OUT:-/tmp/roofline-conv-gpu}
mkdir -p "$OUT/conv_gpu"
export ROOFLINE_DB=${ROOFLINE_DB:-$OUT/roofline.db}
R=./build/bin/roofline T=./build/bin/roofline_gpu_tests D=$OUT/conv_gpu
"$T" --gtest_filter='OpsGpu.*:*OpsOnGpu*:TrainGpu*' > "$D/tests.log" 2>&1
echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" "$D/tests.log" | head
for b in 64 128; do
  timeout 60 "$R" -q ops --perf --device gpu --batch $b --op conv2d > "$D/ops-b$b.txt" 2>&1
  echo "ops conv2d b$b rc=$?"; grep -E "86x86|40x40" "$D/ops-b$b.txt" | cut -c1-130
done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 120 "$CS" --tool memcheck --error-exitcode 9 "$T" --gtest_filter='OpsGpu.TiledConvolutionEdges*' \
  > "$D/memcheck.log" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY" "$D/memcheck.log"
timeout 90 "$R" bench ece408 --device gpu --batch 64,128 --epochs 5 --peer pytorch > "$D/bench.txt" 2> "$D/bench.log"
echo "bench ece408 b64,128 rc=$?"; grep -A5 "roofline vs the PyTorch" "$D/bench.txt"
timeout 60 "$R" bench ece408 --device gpu --batch 1 --epochs 1 --max-steps 2000 --lr 0.001 --peer pytorch \
  > "$D/bench1.txt" 2> "$D/bench1.log"
echo "bench ece408 b1 rc=$?"; grep -A4 "roofline vs the PyTorch" "$D/bench1.txt"
