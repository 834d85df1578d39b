#!/usr/bin/env bash
# The register-tiled convolution (kernels/conv2d_regtile.cuh) against the
# tiled one: every tile (ROOFLINE_CONV_KERNEL) through the GPU edge tests, then
# ece408's conv2d rows of the op harness at batch 64 and 128 per tile, memcheck
# with the automatic choice, and `roofline bench ece408` beside PyTorch.
#   tools/device/run.sh conv_sweep:400[:VARIANT,VARIANT...]   (ROOFLINE_CONV_KERNEL values)
set -u
OUT=${OUT:-/tmp/roofline-conv-sweep}
mkdir -p "$OUT/conv_sweep"
export ROOFLINE_DB=${ROOFLINE_DB:-$OUT/roofline.db}
R=./build/bin/roofline T=./build/bin/roofline_gpu_tests D=$OUT/conv_sweep
VARIANTS=${*:-"tiled auto regtile:4:1 regtile:4:2 regtile:4:4 regtile:8:1 regtile:8:2 regtile:16:1 regtile:4:1:64 regtile:8:1:64 regtile:4:2:64 regtile:8:1:256"}
for v in $VARIANTS; do
  ROOFLINE_CONV_KERNEL=$v "$T" --gtest_filter='OpsGpu.TiledConvolutionEdges*' > "$D/tests-${v//:/_}.log" 2>&1
  echo "edges $v rc=$? $(grep -cE '^\[  PASSED' "$D/tests-${v//:/_}.log") passed-lines"
done
for b in 64 128; do
  for v in $VARIANTS; do
    ROOFLINE_CONV_KERNEL=$v timeout 60 "$R" -q ops --perf --device gpu --batch $b --op conv2d > "$D/ops-b$b-${v//:/_}.txt" 2>&1
    echo "--- b$b $v rc=$?"; grep -E "86x86|40x40" "$D/ops-b$b-${v//:/_}.txt" | grep -v "input-grad.*c=1 86x86" | \
      awk '{printf "  %-12s %-3s %8s µs\n", $2, $4, $(NF-4)}'
  done
done
"$T" --gtest_filter='OpsGpu.*:*OpsOnGpu*:TrainGpu*:Fused*:ConvMaxPool*:LinearHead*:Inference*' > "$D/tests.log" 2>&1
echo "tests (auto) rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure" "$D/tests.log" | head
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for v in auto regtile:4:4 regtile:8:2; do
  ROOFLINE_CONV_KERNEL=$v timeout 120 "$CS" --tool memcheck --error-exitcode 9 "$T" \
    --gtest_filter='OpsGpu.TiledConvolutionEdges*:OpsGpu.SmallLinear*:ConvMaxPoolGpu.*:LinearHeadGpu.*:InferenceGpu.*' > "$D/memcheck-${v//:/_}.log" 2>&1
  echo "memcheck $v rc=$?"; grep -E "ERROR SUMMARY" "$D/memcheck-${v//:/_}.log"
done
timeout 90 "$R" bench ece408 --device gpu --batch 64,128 --epochs 5 --peer pytorch > "$D/bench.txt" 2> "$D/bench.log"
echo "bench ece408 b64,128 rc=$?"; grep -A5 "roofline vs the PyTorch" "$D/bench.txt"
# Where ece408's synchronised inference spends its time: every kernel of the
# replayed forward graphs (profile, kernel summary), at batch 64 and 128.
for b in 64 128; do
  timeout 90 "$R" profile -- "$R" -q bench ece408 --device gpu --mode infer --batch $b --infer-reps 2000 \
    > "$D/profile-infer-b$b.txt" 2>&1
  echo "profile infer b$b rc=$?"; grep -A14 -i "kernel summary" "$D/profile-infer-b$b.txt" | cut -c1-170
done
