#!/usr/bin/env bash
# throwaway: the two CPU cells with little margin, in rounds
R=./build/bin/roofline
eval "$(sed -n '/^cpu_busy()/,/^}/p;/^quiet_host()/,/^}/p' tools/device/engine.sh)"
quiet_host
timeout 250 $R bench ece408 --device cpu --batch 64 --epochs 1 --max-steps 300 --peer pytorch --repeat 3 > $OUT/e64.txt 2>&1; echo "ece408 rc=$?"
sed -n '/over the rounds/,/^  note:/p' $OUT/e64.txt | grep -E "cpu|over"
timeout 200 $R bench simple-mlp --device cpu --batch 128 --epochs 1 --max-steps 300 --peer pytorch --repeat 5 > $OUT/m128.txt 2>&1; echo "mlp rc=$?"
sed -n '/over the rounds/,/^  note:/p' $OUT/m128.txt | grep -E "cpu|over"
