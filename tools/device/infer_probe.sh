#!/usr/bin/env bash
# Where a GPU inference's wall time goes (issue 3's batch-1 inference cells):
# the launch ceilings (plain and cooperative round trips, the grid barrier),
# then `roofline profile` of `bench MODEL --mode infer` runs (API, queue and
# kernel time per launch; the kernels of one inference).
#   tools/device/run.sh infer_probe:240   (MODELS="simple-mlp:1 ece408:1" overrides)
set -u
OUT=${OUT:-/tmp/roofline-infer-probe}
mkdir -p "$OUT/infer_probe"
export ROOFLINE_DB=${ROOFLINE_DB:-$OUT/roofline.db}
R=./build/bin/roofline
timeout 120 "$R" ceilings --device gpu:0 --only launch,sync.grid > "$OUT/infer_probe/ceilings.txt" 2>&1
echo "ceilings rc=$?"; grep -E "launch|sync" "$OUT/infer_probe/ceilings.txt" | head -20
# VARIANTS: environment settings to compare, each run in turn ("-" for none),
# e.g. VARIANTS="- ROOFLINE_CONV_KERNEL=regtile:4:1".
for spec in ${MODELS:-simple-mlp:1 simple-mlp:128 ece408:1}; do
  m=${spec%%:*} b=${spec##*:}
  vi=0
  for v in ${VARIANTS:--}; do
    vi=$((vi + 1))
    f="$OUT/infer_probe/$m-b$b-v$vi"
    envs=(); [[ $v != - ]] && envs=("$v")
    timeout 120 env "${envs[@]}" "$R" profile --label "infer/$m/b$b/$v" -- "$R" bench "$m" --device gpu --mode infer \
      --batch "$b" --infer-reps 1000 > "$f.txt" 2> "$f.log"
    echo "profile $m b$b [$v] rc=$?"
    grep -E "per inference|GPU inference" "$f.log" "$f.txt" | head -3
    grep -E -A8 "kernel summary" "$f.txt" | tail -6 | cut -c1-190
    grep -E "cudaGraphLaunch|cudaLaunchCooperativeKernel|cudaStreamSynchronize" "$f.txt" | head -3 | cut -c1-150
  done
done
