#!/usr/bin/env bash
# Where a batch-1 inference's small kernels wait: ncu (warm caches, no clock
# lock) on a few launches of the head, the tiled convolution and the max pool
# inside `roofline bench MODEL --mode infer`: duration, speed of light, warp
# states and every stall reason per issued instruction.
#   tools/device/run.sh infer_ncu:240[:MODEL,BATCH,REGEX]
set -u
OUT=${OUT:-/tmp/roofline-infer-ncu}
mkdir -p "$OUT/infer_ncu"
source "$(dirname "$0")/ncu_common.sh"  # NCU, STALLS
model=${1:-ece408} batch=${2:-1} regex=${3:-linear_head|conv2d_tiled|maxpool_forward|linear_small}
timeout 200 "$NCU" --clock-control none --cache-control none --section SpeedOfLight --section WarpStateStats \
  --section LaunchStats --section Occupancy \
  --metrics "$STALLS,smsp__inst_executed.sum,sm__cycles_elapsed.avg,gpu__time_duration.sum,smsp__cycles_active.avg" \
  -k "regex:$regex" --launch-skip "${SKIP:-40}" --launch-count "${COUNT:-8}" \
  ./build/bin/roofline -q bench "$model" --device gpu --mode infer --batch "$batch" --infer-reps 60 \
  > "$OUT/infer_ncu/ncu.txt" 2> "$OUT/infer_ncu/ncu.log"
echo "ncu rc=$?"
grep -E "^  [a-z].*\(|Duration|gpu__time_duration|inst_executed.sum|stalled_(long_scoreboard|no_instruction|barrier|wait|short_scoreboard|lg_throttle|membar|mio)|Warp Cycles Per Issued|Registers Per|Shared Memory Config|Dynamic Shared|Block Limit Shared|Achieved Occupancy|Grid Size" \
  "$OUT/infer_ncu/ncu.txt" | cut -c1-140 | head -150
tail -3 "$OUT/infer_ncu/ncu.log"
