#!/usr/bin/env python3
"""Compares roofline's range-profiler counters with ncu's and with the known
FLOPs of tests/programs/known_flops (run by tools/device/counters.sh).

    counters_compare.py EXPECTED.json OURS.json NCU.csv [LABEL]

EXPECTED.json: known_flops' stdout. OURS.json: known_flops --counters FILE.
NCU.csv: ncu --csv --page raw --print-units base --print-kernel-base mangled
--log-file. Prints one PASS/MISS line per check and a summary; exits 0 (the
lines carry the verdicts; the shell script counts them).
"""
import csv
import json
import math
import sys

FLOP_OPS = ["dadd", "dmul", "dfma", "fadd", "fmul", "ffma", "hadd", "hmul", "hfma"]
SASS = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
TENSOR = {
    "fp64": "sm__ops_path_tensor_src_fp64.sum",
    "tf32": "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    "fp16": "sm__ops_path_tensor_src_fp16.sum",
    "bf16": "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "fp8": "sm__ops_path_tensor_src_fp8.sum",
    "int8": "sm__ops_path_tensor_src_int8.sum",
}
DRAM = ["dram__bytes_read.sum", "dram__bytes_write.sum"]
DRAM_TOL = 0.03  # the target: DRAM bytes within 3% of ncu's
DRAM_ABS = 64 * 1024  # below this, byte counts are noise (a few sectors)


def num(s):
    if s is None:
        return None
    s = s.strip().replace(",", "")
    if s in ("", "n/a", "N/A", "nan"):
        return None
    try:
        return float(s)
    except ValueError:
        return None


def read_ncu(path):
    """Rows of ncu's raw CSV page, in launch order: (mangled name, {metric: value})."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return []
    rows = list(csv.reader(lines[start:]))
    header, body = rows[0], rows[1:]
    if body and (body[0][0] == "" or not body[0][0].strip().isdigit()):
        body = body[1:]  # the units row
    name_col = header.index("Kernel Name") if "Kernel Name" in header else None
    out = []
    for r in body:
        if len(r) != len(header) or name_col is None:
            continue
        vals = {h: num(v) for h, v in zip(header, r) if "__" in h}
        out.append((r[name_col], vals))
    return out


def keyed(items):
    """(name, occurrence of that name) -> values, keeping launch order."""
    seen, out = {}, {}
    for name, vals in items:
        k = seen.get(name, 0)
        seen[name] = k + 1
        out[(name, k)] = vals
    return out


def fmt(v):
    return "n/a" if v is None else f"{v:,.0f}"


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    expected = json.load(open(sys.argv[1]))
    ours = json.load(open(sys.argv[2]))
    ncu_rows = read_ncu(sys.argv[3])
    label = sys.argv[4] if len(sys.argv) > 4 else sys.argv[3]
    print(f"== {label}: {len(ours.get('records', []))} ranges of ours, {len(ncu_rows)} kernels profiled by ncu, "
          f"{ours.get('passes')} replay passes (ours)")
    if ours.get("status") != "ok":
        print(f"MISS our profiler reported: {ours.get('status')}")
    phases = {p["phase"]: p for p in expected.get("phases", [])}
    ncu = keyed(ncu_rows)
    ours_keyed = keyed([(r["kernel"], dict(r["values"], _nvtx=r["nvtx"])) for r in ours.get("records", [])])
    npass = nmiss = 0

    def verdict(ok, text):
        nonlocal npass, nmiss
        print(("PASS " if ok else "MISS ") + text)
        if ok:
            npass += 1
        else:
            nmiss += 1

    # 1. Ours against ncu, kernel by kernel: FLOP counters exact, DRAM within 3%.
    for (name, k), mine in ours_keyed.items():
        short = name if len(name) < 70 else name[:67] + "..."
        theirs = ncu.get((name, k))
        if theirs is None:
            verdict(False, f"{short} #{k}: no matching ncu row")
            continue
        flop_metrics = [SASS.format(op) for op in FLOP_OPS] + list(TENSOR.values())
        diffs = []
        for m in flop_metrics:
            a, b = mine.get(m), theirs.get(m)
            if a is None and b is None:
                continue
            if a is None or b is None or a != b:
                diffs.append(f"{m}: ours {fmt(a)} ncu {fmt(b)}")
        verdict(not diffs, f"[{mine['_nvtx']}] {short} #{k}: FLOP counters equal ncu's" + ("" if not diffs else
                                                                                            " -- " + "; ".join(diffs)))
        for m in DRAM:
            a, b = mine.get(m), theirs.get(m)
            if a is None or b is None:
                verdict(False, f"[{mine['_nvtx']}] {short} #{k}: {m} ours {fmt(a)} ncu {fmt(b)}")
                continue
            rel = abs(a - b) / max(a, b, 1.0)
            ok = rel <= DRAM_TOL or abs(a - b) <= DRAM_ABS
            verdict(ok, f"[{mine['_nvtx']}] {short} #{k}: {m} ours {fmt(a)} ncu {fmt(b)} ({100 * rel:.2f}%)")

    # 2. Ours against the arithmetic of known_flops, phase by phase.
    by_phase = {}
    for (name, k), mine in ours_keyed.items():
        by_phase.setdefault(mine["_nvtx"], []).append((name, mine))
    for phase, e in phases.items():
        recs = by_phase.get(phase, [])
        launches = e.get("launches", 1)
        if not recs:
            verdict(False, f"{phase}: no ranges recorded")
            continue
        if e.get("kernel"):
            own = [m for n, m in recs if e["kernel"] in n]
            for i, m in enumerate(own):
                bad = [f"{op} {fmt(m.get(SASS.format(op)))} != {fmt(want)}"
                       for op, want in e["instructions"].items() if m.get(SASS.format(op)) != want]
                verdict(not bad, f"{phase} launch {i}: instruction counts equal the kernel's arithmetic" +
                        ("" if not bad else " -- " + "; ".join(bad)))
        for prec, want in e.get("tensor_flops", {}).items():
            got = sum(m.get(TENSOR[prec]) or 0 for _, m in recs) / launches
            verdict(got == want, f"{phase}: tensor {prec} FLOPs per launch {fmt(got)} vs 2*M*N*K {fmt(want)}"
                    + ("" if got == want or not want else f" (ratio {got / want:.6f})"))
        if e.get("streaming"):
            for m, want in (("dram__bytes_read.sum", e["dram_read_min"]), ("dram__bytes_write.sum", e["dram_write_min"])):
                own = [mm for n, mm in recs if e["kernel"] in n]
                for i, mm in enumerate(own):
                    got = mm.get(m)
                    rel = None if got is None else (got - want) / want
                    print(f"INFO {phase} launch {i}: {m} {fmt(got)} vs analytic minimum {fmt(want)}"
                          + ("" if rel is None else f" ({100 * rel:+.2f}%)"))
    print(f"== {label}: {npass} PASS, {nmiss} MISS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
