#!/usr/bin/env bash
# Where simple-mlp's fused training kernel (src/engine/fused/fused_mlp.cu)
# waits: ncu on one launch of many steps at batch 128 — speed of light,
# occupancy, warp states, and every stall reason per issued instruction
# (no_instruction = instruction fetch: the kernel's code is large).
#   tools/device/run.sh mlp_ncu:240
set -u
OUT=${OUT:-/tmp/roofline-mlp-ncu}
mkdir -p "$OUT/mlp_ncu"
source "$(dirname "$0")/ncu_common.sh"  # NCU, STALLS
timeout 200 "$NCU" --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats \
  --section SchedulerStats --section InstructionStats \
  --metrics "$STALLS,smsp__inst_executed.sum,sm__cycles_elapsed.avg,smsp__warps_issue_stalled_no_instruction.sum,smsp__pcsamp_warps_issue_stalled_no_instructions" \
  -k regex:mlp_train_kernel --launch-count 1 \
  ./build/bin/roofline -q bench simple-mlp --device gpu --batch "${1:-128}" --epochs 1 --max-steps 400 --fused-steps 400 --mode train \
  > "$OUT/mlp_ncu/ncu.txt" 2> "$OUT/mlp_ncu/ncu.log"
echo "ncu rc=$?"
grep -E "mlp_train|stalled|inst_executed|Duration|Warp Cycles Per Issued|Issued Warp|No Eligible|Executed Ipc|Stall|cycles_elapsed" \
  "$OUT/mlp_ncu/ncu.txt" | cut -c1-150 | head -80
tail -5 "$OUT/mlp_ncu/ncu.log"
