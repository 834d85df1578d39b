#!/usr/bin/env bash
# simple-mlp's CPU runs at batch 128 were ~2x slower in one round of three in two
# `bench --repeat 3` runs (epochs 3-5 and the inference, 380-394 us against 77-114),
# both times right after a GPU run in the same process. The same rounds with and
# without the GPU runs between them, interleaved: epoch times and inference per run.
#   tools/device/run.sh cpu_spells:200   (BENCH_ARGS="--mode infer": no training, so no GPU training
#   run and no kernel tracer between the CPU runs; REPS processes per side, default 2)
set -u
OUT=${OUT:-/tmp/roofline-cpu-spells}
D="$OUT/cpu_spells"; mkdir -p "$D"
export ROOFLINE_DB="$D/spells.db"
R=./build/bin/roofline
for rep in $(seq "${REPS:-2}"); do
  for devs in cpu cpu,gpu; do
    # shellcheck disable=SC2086
    "$R" -q --json bench simple-mlp --device "$devs" --batch 64,128 ${BENCH_ARGS:---epochs 5} --repeat 3 \
      > "$D/$devs-$rep.json" 2>/dev/null
    python3 - "$D/$devs-$rep.json" "$devs" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for t in j["tables"]:
    if t["id"] == "bench.details":
        for r in t["rows"]:
            if r["device"] == "cpu":
                step = f"step {r['step_us']:6.0f} us  epochs {r['epoch_s']}" if r.get("step_us") else "(inference only)"
                print(f"{sys.argv[2]:8} b{r['batch']:<4} {step}  infer {r['infer_us']:6.1f} us (IQR {r['infer_iqr_us']:.1f})")
PY
  done
done
