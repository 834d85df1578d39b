#!/usr/bin/env bash
# Per-kernel counters of a stock PyTorch training script (20 steps) under
# `roofline profile --counters`: every kernel name's DRAM bytes should come from a
# one-pass launch (the DRAM pass: no warning about replayed DRAM counts), the wall
# time says what the counters cost (2026-11-25 on the H100: 21.1 s against 14.1 s
# plain; docs/counters.md). Exit code: the profile's.
#   tools/checks/run.sh torch_counters:120
set -u
OUT=${OUT:-/tmp/roofline-torch-counters}
mkdir -p "$OUT/torch_counters"
R=./build/bin/roofline
S=tests/programs/torch_cnn_train.py
t0=$(date +%s.%N)
python3 "$S" --steps 20 > "$OUT/torch_counters/plain.txt" 2>&1
t1=$(date +%s.%N)
"$R" --db "$OUT/torch_counters/db.sqlite" profile --counters -- python3 "$S" --steps 20 \
  > "$OUT/torch_counters/counters.txt" 2>&1
rc=$?
t2=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v rc="$rc" \
  'BEGIN{printf "plain %.1f s, profile --counters %.1f s (rc %d)\n", b-a, c-b, rc}'
grep -E "^warning|DRAM|replay" "$OUT/torch_counters/counters.txt" | head -12
sed -n '/Hardware counters per kernel/,/^$/p' "$OUT/torch_counters/counters.txt" | head -30
exit $rc
