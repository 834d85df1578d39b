#!/usr/bin/env bash
# The graph networks (alexnet, resnet18) on the GPU machine: the golden values
# from PyTorch (peers/golden_nets.py, written to $OUT/golden and read by the
# GPU tests through ROOFLINE_GOLDEN_DIR), the graph networks' GPU tests, and
# `roofline bench alexnet,resnet18` beside PyTorch eager and torch.compile in
# the same call. Steps (arguments; default all but cpu_bench):
#   golden      PyTorch's golden files: 64×64 batch 2 (the CPU suite's fixtures,
#               copied to $OUT/fixtures) and 224×224 batch 8, fp32 and bf16
#   tests       roofline_gpu_tests --gtest_filter='GraphGpu*:GraphFp16Gpu*:GraphFoldGpu*:NetDataGpu*:GoldenGpu*:…' (needs golden, or GOLDEN=DIR
#               holding golden files of an earlier call)
#   bench       GPU: both networks, fp32, tf32 and bf16, batch 1 and 128, train and infer, beside PyTorch eager
#   compile     GPU: batch 128 beside PyTorch eager and torch.compile (PRECISIONS, default fp32,tf32,bf16; fp16 taken too;
#               each compile takes tens of seconds: split the precisions over calls)
#   bench_b64   GPU: batch 64 beside PyTorch eager
#   cpu_bench   CPU: batch 1 and 64, fp32, with the peer (slow: several minutes)
#   profile     GPU: batch 128 with --profile (PRECISIONS, default bf16,fp32): GPU time per layer
#               and pass; the profiles stay in $OUT/roofline.db (roofline profile --show ID)
# Run through tools/checks/run.sh:   tools/checks/run.sh nets:560:golden,tests,bench
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
export OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export ROOFLINE_DB=${ROOFLINE_DB:-$OUT/roofline.db}
R=${ROOFLINE_BIN:-./build/bin/roofline}
steps=("$@")
((${#steps[@]})) || steps=(golden tests bench)
STEPS=${STEPS:-20} WARMUP=${WARMUP:-5}
declare -a SUMMARY
step() {  # step NAME SECONDS CMD...
  local name=$1 limit=$2
  shift 2
  local t0
  t0=$(date +%s)
  timeout --signal=TERM --kill-after=10 "$limit" "$@" > "$OUT/$name.out" 2> "$OUT/$name.log"
  local rc=$?
  SUMMARY+=("$(printf '%-14s rc=%-3d %4ds' "$name" "$rc" "$(( $(date +%s) - t0 ))")")
  tail -n 60 "$OUT/$name.out"
  ((rc == 0)) || tail -n 20 "$OUT/$name.log"
  return $rc
}
status=0
for s in "${steps[@]}"; do
  case $s in
    golden)
      step golden_small 120 python3 peers/golden_nets.py --out "$OUT/fixtures" --size 64 --batch 2 --precisions fp64,fp32,bf16 || status=1
      step golden_full 180 python3 peers/golden_nets.py --out "$OUT/golden" --size 224 --batch 8 --precisions fp64,fp32,bf16 || status=1
      cat "$OUT/golden_small.log" "$OUT/golden_full.log" | grep wrote
      mkdir -p tests/data/golden && cp -n "$OUT"/fixtures/*.safetensors tests/data/golden/ 2>/dev/null ;;
    tests)
      ROOFLINE_GOLDEN_DIR=${GOLDEN:-$OUT/golden} \
        step gpu_tests 300 ./build/bin/roofline_gpu_tests --gtest_filter='GraphGpu*:GraphFp16Gpu*:GraphFoldGpu*:NetDataGpu*:GoldenGpu*:MaxPoolGpu*:AllOps/OpsOnGpu*:OpsGpu*:BatchNormGpu*:DropoutGpu*:ConvPrecisionsGpu*:LinearPrecisionsGpu*:OptimGpu*' || status=1 ;;
    bench)
      step bench_gpu 420 "$R" bench alexnet,resnet18 --device gpu --precision fp32,tf32,bf16 --batch 1,128 \
        --mode train,infer --steps "$STEPS" --warmup "$WARMUP" --peer pytorch --no-compile || status=1 ;;
    compile)
      step bench_compile 560 "$R" bench alexnet,resnet18 --device gpu --precision "${PRECISIONS:-fp32,tf32,bf16}" \
        --batch 128 --mode train,infer --steps "$STEPS" --warmup "$WARMUP" --peer pytorch || status=1 ;;
    bench_b64)
      step bench_gpu64 300 "$R" bench alexnet,resnet18 --device gpu --precision fp32,tf32,bf16 --batch 64 \
        --mode train,infer --steps "$STEPS" --warmup "$WARMUP" --peer pytorch --no-compile || status=1 ;;
    cpu_bench)
      export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
      step bench_cpu 540 "$R" bench alexnet,resnet18 --device cpu --precision fp32 --batch 1,64 \
        --mode train,infer --steps 8 --warmup 2 --peer pytorch --no-compile || status=1 ;;
    profile)
      step bench_profile 300 "$R" bench alexnet,resnet18 --device gpu --precision "${PRECISIONS:-bf16,fp32}" \
        --batch 128 --mode train,infer --steps 10 --warmup 3 --profile || status=1 ;;
    *) echo "unknown step $s"; status=1 ;;
  esac
done
printf '%s\n' "${SUMMARY[@]}"
exit $status
