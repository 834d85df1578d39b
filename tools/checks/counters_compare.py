#!/usr/bin/env python3
"""Compares roofline's range-profiler counters with ncu's and with the known
FLOPs of tests/programs/known_flops (run by tools/checks/counters.sh).

    counters_compare.py EXPECTED.json OURS.json NCU.csv [LABEL] [--sass MOVES.json] [--no-arith]
                        [--ncu-dram NCU_DRAM.csv]

EXPECTED.json: known_flops' stdout. OURS.json: known_flops --counters FILE.
NCU.csv: ncu --csv --page raw --print-units base --print-kernel-base mangled
--log-file. MOVES.json: counters_sass.py's register moves per kernel (else the
per-kernel numbers in EXPECTED.json are used). --no-arith: only ours against ncu.
NCU_DRAM.csv: ncu with the DRAM byte metrics alone (one pass, as our DRAM pass):
the DRAM bytes are checked against it too, at the launch ours took them from.
Our records are matched to ncu's launches by their launch number ("instance").
Prints one PASS/MISS line per check and a summary; exits 0 (the lines carry the
verdicts; the shell script counts them).
"""
import csv
import json
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
THREADS = "sm__threads_launched.sum"
DRAM = ["dram__bytes_read.sum", "dram__bytes_write.sum"]
DRAM_TOL = 0.03  # the target: DRAM bytes within 3% of ncu's
DRAM_ABS = 256 * 1024  # below this, byte counts are noise: a kernel writing 4 KB read 0.02-0.23 MB (ours) and 0.04-0.08 MB (ncu) over 4 launches, H100 2026-11-25
MAX_MOVES_PER_THREAD = 2  # prof::kMaxRegisterMovesPerThread


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


def ours_keyed(ours):
    """(name, launch number) -> values. The launch number is the record's "instance"
    (with the DRAM pass only every other launch has a record of its own)."""
    recs = ours.get("records", [])
    if not all("instance" in r for r in recs):
        return keyed([(r["kernel"], dict(r["values"], _nvtx=r["nvtx"])) for r in recs])
    return {(r["kernel"], r["instance"]): dict(r["values"], _nvtx=r["nvtx"], _dram_instance=r.get("dram_instance", r["instance"]),
                                             _dram_replayed=r.get("dram_replayed", False))
            for r in recs}


def fmt(v):
    return "n/a" if v is None else f"{v:,.0f}"


def si(v):
    if v is None:
        return "n/a"
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:.3g}{unit}"
    return f"{v:.3g}"


def flops(vals):
    """FLOPs per precision and unit as prof::derive computes them (absent metrics count 0)."""
    g = lambda m: vals.get(m) or 0.0
    f = {
        "fp64": g(SASS.format("dadd")) + g(SASS.format("dmul")) + 2 * g(SASS.format("dfma")),
        "fp32": g(SASS.format("fadd")) + g(SASS.format("fmul")) + 2 * g(SASS.format("ffma")),
        "fp16": 2 * g(SASS.format("hadd")) + 2 * g(SASS.format("hmul")) + 4 * g(SASS.format("hfma")),
    }
    out = {p + "/cuda": v for p, v in f.items()}
    out.update({p + "/tensor": g(m) for p, m in TENSOR.items()})
    return out


def register_moves(vals):
    """prof::fp16_register_move_flops: the FP16 FLOPs that are compiler register moves."""
    f = flops(vals)
    threads = vals.get(THREADS) or 0
    fp16 = f["fp16/cuda"]
    other = sum(f.values()) - fp16
    if threads > 0 and 0 < fp16 <= 4 * MAX_MOVES_PER_THREAD * threads and other > 0:
        return fp16
    return 0.0


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opts = sys.argv[1:]
    sass_path = opts[opts.index("--sass") + 1] if "--sass" in opts else None
    if sass_path in args:
        args.remove(sass_path)
    ncu_dram_path = opts[opts.index("--ncu-dram") + 1] if "--ncu-dram" in opts else None
    if ncu_dram_path in args:
        args.remove(ncu_dram_path)
    ncu_dram = keyed(read_ncu(ncu_dram_path)) if ncu_dram_path else None
    if len(args) < 3:
        print(__doc__)
        return 2
    expected = json.load(open(args[0]))
    ours = json.load(open(args[1]))
    ncu_rows = read_ncu(args[2])
    label = args[3] if len(args) > 3 else args[2]
    sass = json.load(open(sass_path)) if sass_path else {}
    print(f"== {label}: {len(ours.get('records', []))} ranges of ours (l2-clean {ours.get('l2_clean')}, "
          f"{ours.get('passes')} replay passes), {len(ncu_rows)} kernels profiled by ncu")
    if ours.get("status") != "ok":
        print(f"MISS our profiler reported: {ours.get('status')}")
    phases = {p["phase"]: p for p in expected.get("phases", [])}
    ncu = keyed(ncu_rows)
    mine_all = ours_keyed(ours)
    npass = nmiss = 0

    def verdict(ok, text):
        nonlocal npass, nmiss
        print(("PASS " if ok else "MISS ") + text)
        if ok:
            npass += 1
        else:
            nmiss += 1

    # 1. Ours against ncu, kernel by kernel: FLOPs per precision exact, DRAM within 3%.
    for (name, k), mine in mine_all.items():
        short = name if len(name) < 70 else name[:67] + "..."
        where = f"[{mine['_nvtx']}] {short} #{k}"
        theirs = ncu.get((name, k))
        if theirs is None:
            verdict(False, f"{where}: no matching ncu row")
            continue
        counters = [SASS.format(op) for op in FLOP_OPS] + list(TENSOR.values())
        diffs = [f"{m}: ours {fmt(mine.get(m))} ncu {fmt(theirs.get(m))}" for m in counters
                 if not (mine.get(m) is None and theirs.get(m) is None) and mine.get(m) != theirs.get(m)]
        fo, ft = flops(mine), flops(theirs)
        shown = [f"{p} {si(v)}" for p, v in fo.items() if v or ft[p]]
        moves = register_moves(mine)
        if moves:
            shown.append(f"of which fp16 {si(moves)} = compiler register moves, not FP16 work")
        diffs += [f"{p}: ours {si(fo[p])} ncu {si(ft[p])}" for p in fo if fo[p] != ft[p]]
        verdict(not diffs, f"{where}: FLOPs per precision equal ncu's ({', '.join(shown) or 'none'})"
                + ("" if not diffs else " -- " + "; ".join(diffs)))
        src = (f" (ours from launch #{mine['_dram_instance']}"
               + (", replayed" if mine.get("_dram_replayed") else ", one pass") + ")") if "_dram_instance" in mine else ""
        refs = [("ncu", theirs)]
        if ncu_dram is not None:
            refs.append(("ncu DRAM-only", ncu_dram.get((name, mine.get("_dram_instance", k)), {})))
        for m in DRAM:
            for ref, vals in refs:
                a, b = mine.get(m), vals.get(m)
                if a is None or b is None:
                    verdict(False, f"{where}: {m} ours {fmt(a)} {ref} {fmt(b)}{src}")
                    continue
                rel = abs(a - b) / max(a, b, 1.0)
                ok = rel <= DRAM_TOL or abs(a - b) <= DRAM_ABS
                verdict(ok, f"{where}: {m} ours {fmt(a)} {ref} {fmt(b)} ({100 * rel:.2f}%){src}")

    # 2. Ours against the arithmetic of known_flops, phase by phase.
    if "--no-arith" not in opts:
        by_phase = {}
        for (name, k), mine in mine_all.items():
            by_phase.setdefault(mine["_nvtx"], []).append((name, mine))
        for phase, e in phases.items():
            recs = by_phase.get(phase, [])
            launches = e.get("launches", 1)
            if not recs:
                verdict(False, f"{phase}: no ranges recorded")
                continue
            if e.get("kernel"):
                own = [(n, m) for n, m in recs if e["kernel"] in n]
                for i, (n, m) in enumerate(own):
                    threads = e.get("threads", 0)
                    if n in sass:
                        per_thread, source = sass[n]["moves_outside_loops"], "its SASS"
                    elif e.get("hfma_moves_per_thread", -1) >= 0:
                        per_thread, source = e["hfma_moves_per_thread"], "known_flops.cu (no SASS here)"
                    else:
                        per_thread, source = None, "unknown: no SASS listing"
                    bad = []
                    for op, arith in e["instructions"].items():
                        got = m.get(SASS.format(op))
                        want = arith
                        if op == "hfma":
                            if per_thread is None:
                                if got != arith:
                                    bad.append(f"hfma {fmt(got)} != {fmt(arith)} + register moves, "
                                               f"which are unknown without the SASS")
                                continue
                            want = arith + per_thread * threads
                        if got != want:
                            bad.append(f"{op} {fmt(got)} != {fmt(want)}")
                    if m.get(THREADS) is not None and m.get(THREADS) != threads:
                        bad.append(f"threads launched {fmt(m.get(THREADS))} != {fmt(threads)}")
                    note = (f" (hfma = arithmetic + {per_thread} register move(s) x {threads:,} threads, from {source})"
                            if per_thread else "")
                    verdict(not bad, f"{phase} launch {i}: instruction counts equal the kernel's arithmetic{note}"
                            + ("" if not bad else " -- " + "; ".join(bad)))
            # Launches with a record of their own (with the DRAM pass, every other one).
            per_name = {}
            for n, _ in recs:
                per_name[n] = per_name.get(n, 0) + 1
            recorded = max(per_name.values()) if per_name else launches
            for prec, want in e.get("tensor_flops", {}).items():
                got = sum(m.get(TENSOR[prec]) or 0 for _, m in recs) / recorded
                verdict(got == want, f"{phase}: tensor {prec} FLOPs per launch {fmt(got)} vs 2*M*N*K {fmt(want)}"
                        + ("" if got == want or not want else f" (ratio {got / want:.6f})"))
            if e.get("streaming"):
                for met, want in (("dram__bytes_read.sum", e["dram_read_min"]),
                                  ("dram__bytes_write.sum", e["dram_write_min"])):
                    own = [mm for n, mm in recs if e["kernel"] in n]
                    for i, mm in enumerate(own):
                        got = mm.get(met)
                        rel = "" if got is None or not want else f" ({100 * (got - want) / want:+.2f}%)"
                        print(f"INFO {phase} launch {i}: {met} {fmt(got)} vs analytic minimum {fmt(want)}{rel}")
    print(f"== {label}: {npass} PASS, {nmiss} MISS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
