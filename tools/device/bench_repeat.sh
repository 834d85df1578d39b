#!/usr/bin/env bash
# Issue 3's speed cells run ROUNDS times each beside the PyTorch peer
# (`roofline bench --repeat`: every round roofline's runs, then PyTorch's in
# a fresh process), so that each cell's speedup is a ratio of medians with
# its per-round spread. Writes $OUT/bench_repeat/<part>.txt (tables) and .log.
#   tools/device/run.sh bench_repeat:600
#   ROUNDS=3 MODELS=simple-mlp,simple-cnn DEVICES=cpu,gpu PARTS="b64-128 b1" (the defaults)
set -u
OUT=${OUT:-/tmp/roofline-bench-repeat}
mkdir -p "$OUT/bench_repeat"
R=./build/bin/roofline
rounds=${ROUNDS:-3}
run() {  # run NAME ARGS...
  local name=$1
  shift
  timeout "${LIMIT:-290}" "$R" bench "${MODELS:-simple-mlp,simple-cnn}" --device "${DEVICES:-cpu,gpu}" \
    --peer pytorch --repeat "$rounds" "$@" > "$OUT/bench_repeat/$name.txt" 2> "$OUT/bench_repeat/$name.log"
  echo "=== $name ($rounds rounds) rc=$?"
  sed -n '/over the rounds/,/^  note:/p' "$OUT/bench_repeat/$name.txt"
  grep -E "Table 4" -A8 "$OUT/bench_repeat/$name.txt" | grep -E "^ +[0-9]+ " || true
}
for part in ${PARTS:-b64-128 b1}; do
  case $part in
    b64-128) run "$part" --batch 64,128 --epochs 5 ;;
    # One epoch capped at 2000 steps at lr 0.001, as engine.sh (simple-cnn diverges at 0.01 at batch 1).
    b1) run "$part" --batch 1 --epochs 1 --max-steps 2000 --lr 0.001 --keep-going ;;
    *) echo "unknown part $part (b64-128, b1)" ;;
  esac
done
