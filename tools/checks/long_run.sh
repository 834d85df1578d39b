#!/usr/bin/env bash
# The profiler's figures on a long PyTorch run (tests/programs/torch_resnet_train.py:
# ResNet-18 training, batch 128, DataLoader workers, copies and normalisation
# on a side stream), each part a step of its own so that they fit device calls:
#   union     `roofline profile --trace` of one run: the busy fraction it prints
#             against the union of every kernel interval in the complete event
#             lines, computed here offline; the kernel count and streams.
#             PASS within 0.1 percentage point.
#   overhead  plain, profiled, plain, profiled (images/s): PASS at <= 3 %.
#   pm        plain, --pm-sampling, plain, --pm-sampling: PASS at <= 2 %.
#   counters  `profile --counters` of tests/programs/torch_cnn_train.py (every
#             launch replayed): PASS when the kernel table has rows and the
#             timeline rules are off with the reason, not "GPU idle 100%".
#   intervals `profile --pm-sampling --pm-interval US` of torch_cnn_train.py at 100,
#             200 and 500 us (shorter ones are refused, kMinPmIntervalNs): whether
#             the samples cover the GPU-active window.
# Usage: long_run.sh [STEP...] [SECONDS]   (steps as separate arguments or comma-separated;
#        a number is the run length, default 60; default step: union)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-./out}
D=$OUT/long_run
mkdir -p "$D"
source tools/checks/device_env.sh
R=./build/bin/roofline
PROG=tests/programs/torch_resnet_train.py
steps="" secs=60
for a in "$@"; do
  if [[ $a =~ ^[0-9]+$ ]]; then secs=$a; else steps+=" ${a//,/ }"; fi
done
[[ -n $steps ]] || steps=union
status=0
plain() { python3 "$PROG" --seconds "$secs" | tail -1; }
profiled() { $R --db "$D/r.db" --json profile "$@" -- python3 "$PROG" --seconds "$secs" > "$D/profile.json" 2> "$D/profile.err"
  grep '"images_per_s"' "$D/profile.err" | tail -1; }
ips() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["images_per_s"])'; }
compare() {  # label limit_pct plain1 other1 plain2 other2
  python3 - "$@" <<'PY'
import sys, statistics
label, limit = sys.argv[1], float(sys.argv[2])
p = [float(sys.argv[3]), float(sys.argv[5])]; o = [float(sys.argv[4]), float(sys.argv[6])]
over = [100 * (1 - o[i] / p[i]) for i in range(2)]
print(f"{label}: plain {p[0]:.1f} {p[1]:.1f} img/s, {label} {o[0]:.1f} {o[1]:.1f} img/s; overhead per pair "
      f"{over[0]:.2f}% {over[1]:.2f}%, mean {statistics.mean(over):.2f}% (limit {limit}%): "
      + ("PASS" if statistics.mean(over) <= limit else "MISS"))
PY
}
for step in $steps; do
  case $step in
    union)
      rm -rf "$D/lines"
      echo "== union: roofline profile --trace of a ${secs}-s run"
      $R --db "$D/r.db" --json profile --trace "$D/trace.json.gz" --trace-limit 20000000 --output-dir "$D/lines" \
        -- python3 "$PROG" --seconds "$secs" > "$D/profile.json" 2> "$D/profile.err" || status=1
      tail -3 "$D/profile.err"
      python3 - "$D" <<'PY' || status=1
import glob, json, os, sys
d = sys.argv[1]
prof = json.load(open(os.path.join(d, "profile.json")))
busy = window = None
for t in prof["tables"]:
    if t["id"] == "utilization":
        for r in t["rows"]:
            if r["metric"] == "GPU (kernels)": busy = r["value"]
kernels, gpu, streams = [], [], set()
for f in glob.glob(os.path.join(d, "lines", "trace-*.jsonl")):
    for line in open(f):
        try: j = json.loads(line)
        except ValueError: continue
        k = j.get("k")
        if k in ("kernel", "memcpy", "memset"):
            gpu.append((j["s"], j["e"]))
            if k == "kernel":
                kernels.append((j["s"], j["e"])); streams.add((j.get("d"), j.get("q")))
kernels.sort()
u, cs, ce = 0, None, None
for s, e in kernels:
    if cs is None: cs, ce = s, e
    elif s <= ce: ce = max(ce, e)
    else: u += ce - cs; cs, ce = s, e
if cs is not None: u += ce - cs
w = max(e for _, e in gpu) - min(s for s, _ in gpu)
offline = 100.0 * u / w
late = [x for x in prof.get("warnings", []) if "late" in x or "after their time window" in x]
print(f"PASS-INFO kernels {len(kernels)} on {len(streams)} streams, GPU-active window {w/1e9:.3f} s, "
      f"kernel time {sum(e-s for s,e in kernels)/1e9:.3f} s, {len(gpu) - len(kernels)} copies and memsets")
print(f"busy fraction: roofline {busy:.3f}%, offline union {offline:.3f}%, difference {abs(busy-offline):.3f} pp "
      + ("PASS" if abs(busy - offline) <= 0.1 else "MISS") + (f"; warnings: {late}" if late else ""))
PY
      ls -la "$D/trace.json.gz" | awk '{print "PASS-INFO trace file (gzip):", $5, "bytes"}'
      rm -rf "$D/lines" "$D/trace.json.gz"  # hundreds of MB: the device tool brings back at most 16 MiB a file
      ;;
    overhead)
      echo "== overhead: plain, profiled, plain, profiled (${secs} s each)"
      a=$(plain | ips); b=$(profiled | ips); c=$(plain | ips); e=$(profiled | ips)
      compare profiled 3 "$a" "$b" "$c" "$e" || status=1
      ;;
    pm)
      echo "== PM sampling: plain, --pm-sampling, plain, --pm-sampling (${secs} s each)"
      a=$(plain | ips); b=$(profiled --pm-sampling | ips); c=$(plain | ips); e=$(profiled --pm-sampling | ips)
      compare pm-sampling 2 "$a" "$b" "$c" "$e" || status=1
      grep -o '"PM samples cover[^"]*"' "$D/profile.json" | head -2
      ;;
    counters)
      echo "== counters: profile --counters of a short PyTorch script"
      $R --db "$D/r.db" --json profile --counters --counters-limit 0 -- python3 tests/programs/torch_cnn_train.py \
        --steps 20 > "$D/counters.json" 2> "$D/counters.err" || status=1
      python3 - "$D/counters.json" <<'PY' || status=1
import json, sys
p = json.load(open(sys.argv[1]))
rows = {t["id"]: t["rows"] for t in p["tables"]}
k = len(rows.get("kernels", [])); c = len(rows.get("counters", []))
diag = [r.get("rule") for r in rows.get("diagnoses", [])]
ok = k > 0 and c > 0 and "host-starvation" not in diag and "timeline-rules-off" in diag
print(f"counters run: {k} kernel rows, {c} counter rows, diagnoses {diag}: " + ("PASS" if ok else "MISS"))
for w in p.get("warnings", []): print("  warning:", w[:200])
sys.exit(0 if ok else 1)
PY
      ;;
    intervals)
      for us in 100 200 500; do
        $R --db "$D/r.db" --json profile --pm-sampling --pm-interval $us -- python3 tests/programs/torch_cnn_train.py \
          > "$D/pm_$us.json" 2> "$D/pm_$us.err"
        python3 - "$D/pm_$us.json" $us <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
note = [n for t in p["tables"] if t["id"] == "utilization" for n in t.get("notes", []) if "samples" in n]
gap = [w for w in p.get("warnings", []) if "PM samples cover" in w or "PM" in w]
print(f"--pm-interval {sys.argv[2]} us: {note[:1]} " + ("PASS: covers the run" if not gap else f"MISS: {gap[:2]}"))
PY
      done
      ;;
    *) echo "unknown step $step"; status=1 ;;
  esac
done
exit $status
