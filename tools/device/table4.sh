#!/usr/bin/env bash
# Seed 000's Table 4 for simple-mlp and simple-cnn (batch 64 and 128, 5 epochs,
# CPU and GPU) beside the PyTorch peer, as text (the README's example).
#   tools/device/run.sh table4:200
set -u
OUT=${OUT:-/tmp/roofline-table4}
mkdir -p "$OUT"
./build/bin/roofline bench simple-mlp,simple-cnn --device cpu,gpu --batch 64,128 --epochs 5 --peer pytorch \
  > "$OUT/table4.txt" 2> "$OUT/table4.err"
echo "table4 rc=$?"
cat "$OUT/table4.txt"
