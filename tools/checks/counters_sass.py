#!/usr/bin/env python3
"""The SASS check of the known-FLOPs kernels (tools/checks/counters.sh, step 1).

    counters_sass.py SASS.txt [MOVES.json]

SASS.txt: `cuobjdump -sass` of build/tests/libknown_flops_kernels.a. For each
known kernel prints PASS when its floating-point arithmetic is only the intended
opcodes, and lists the compiler's register moves: HFMA2 / HFMA2.MMA whose two
multiplicands are RZ (`HFMA2.MMA R3, -RZ, RZ, 0, 0` zeroes R3 on the tensor pipe).
They are no FP work, but the hfma counter counts them (so does ncu): the counters
read threads x (moves outside loops) more HFMA2 than the arithmetic. A move inside
a loop runs a data-dependent number of times, which the exact checks cannot
predict: that is a MISS. MOVES.json gets {mangled name: {"moves_outside_loops": n,
"moves_in_loops": k, "moves": [...]}} for counters_compare.py.
"""
import collections
import json
import re
import sys

# Intended floating-point arithmetic per kernel (substring of the mangled name).
WANT = {
    "kf_fma_f32": {"FFMA"},
    "kf_fma_x2I7__half2": {"HFMA2"},
    "kf_fma_x2I14__nv_bfloat162": {"HFMA2"},
    "kf_poly": {"FADD", "FMUL"},
    "kf_copy": set(),
    "kf_read": set(),
}

INSTR = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)((?:\.[A-Z0-9_]+)*)\s*(.*?)\s*;")
FP = re.compile(r"^[FHD](ADD|MUL|FMA|MNMX|SETP|SET|SEL)|^HFMA2|^HADD2|^HMUL2")
ARITH = re.compile(r"^[FHD](ADD|MUL|FMA)|^H(FMA|ADD|MUL)2")
ZERO = re.compile(r"^-?\|?RZ\|?$")


def parse(chunk):
    """[(address, opcode base, modifiers, operands text, line)] of one function's listing."""
    out = []
    for line in chunk.split("\n"):
        m = INSTR.match(line)
        if m:
            out.append((int(m.group(1), 16), m.group(3), m.group(4), m.group(5), line.strip()))
    return out


def loops(instrs):
    """(target, branch address) of every backward branch: the loop bodies. A branch
    to itself (the BRA after EXIT that ends each listing) is no loop."""
    spans = []
    for addr, op, _, operands, _ in instrs:
        if op != "BRA":
            continue
        t = re.search(r"0x([0-9a-f]+)", operands)
        if t and int(t.group(1), 16) < addr:
            spans.append((int(t.group(1), 16), addr))
    return spans


def is_move(op, operands):
    """HFMA2(.MMA) Rd, A, B, C with A and B zero: Rd = C, a move."""
    if op != "HFMA2":
        return False
    parts = [p.strip() for p in operands.split(",")]
    return len(parts) >= 3 and ZERO.match(parts[1]) is not None and ZERO.match(parts[2]) is not None


def analyse(text):
    results = []
    for chunk in re.split(r"\n\s*Function : ", text)[1:]:
        name = chunk.split("\n")[0].strip()
        key = next((k for k in WANT if k in name), None)
        if key is None:
            continue
        instrs = parse(chunk)
        spans = loops(instrs)
        ops = collections.Counter()
        moves_out, moves_in = [], []
        for addr, op, mods, operands, line in instrs:
            if is_move(op, operands):
                clean = re.sub(r"\s+", " ", re.sub(r"/\* 0x[0-9a-f]+ \*/", "", line)).strip()
                (moves_in if any(t <= addr <= b for t, b in spans) else moves_out).append(clean)
                continue
            if FP.match(op):
                ops[op + mods] += 1
        arith = {o.split(".")[0] for o in ops if ARITH.match(o.split(".")[0])}
        results.append({"name": name, "key": key, "ops": dict(ops), "arith": arith,
                        "moves_out": moves_out, "moves_in": moves_in})
    return results


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    results = analyse(open(sys.argv[1]).read())
    moves = {}
    seen = set()
    for r in results:
        seen.add(r["key"])
        ok = r["arith"] == WANT[r["key"]] and not r["moves_in"]
        text = f"{r['key']}: floating-point opcodes {r['ops']}"
        if r["moves_out"] or r["moves_in"]:
            text += (f"; register moves (HFMA2 with zero multiplicands, counted by hfma, not FP work): "
                     f"{len(r['moves_out'])} outside loops")
            if r["moves_in"]:
                text += f", {len(r['moves_in'])} INSIDE a loop (their count depends on the trip count)"
            text += " -- " + " | ".join(r["moves_out"] + r["moves_in"])
        print(("PASS " if ok else "MISS ") + text)
        moves[r["name"]] = {"key": r["key"], "moves_outside_loops": len(r["moves_out"]),
                            "moves_in_loops": len(r["moves_in"]), "moves": r["moves_out"] + r["moves_in"]}
    for k in WANT:
        if k not in seen:
            print(f"MISS {k}: not found in the SASS listing")
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            json.dump(moves, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
