#!/usr/bin/env python3
"""The L2-clean experiment (tools/checks/counters.sh): DRAM bytes per kernel launch
of known_flops under roofline's range profiler with each way of treating L2
before a profiled launch, side by side with ncu's.

    counters_l2_table.py NCU.csv DEFAULT NAME=OURS.json [NAME=OURS.json ...]

NCU.csv: ncu's raw CSV page (the reference, --cache-control all: caches flushed
before every pass). DEFAULT: the NAME of the variant RangeProfiler uses by
default. Prints the write-bytes table (MB, and ours - ncu), a line per variant
(INFO, PASS/MISS for the default) and which variant comes closest to ncu.
"""
import json
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from counters_compare import DRAM_ABS, DRAM_TOL, keyed, ours_keyed, read_ncu  # noqa: E402

READ, WRITE = "dram__bytes_read.sum", "dram__bytes_write.sum"


def close(a, b):
    return a is not None and b is not None and (abs(a - b) <= DRAM_ABS or abs(a - b) / max(a, b, 1.0) <= DRAM_TOL)


def mb(v):
    return "   n/a" if v is None else f"{v / 1e6:8.2f}"


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    ncu = keyed(read_ncu(sys.argv[1]))
    default = sys.argv[2]
    variants = []
    for spec in sys.argv[3:]:
        name, _, path = spec.partition("=")
        try:
            ours = json.load(open(path))
        except (OSError, ValueError) as e:
            print(f"MISS l2-clean {name}: no counters ({e})")
            continue
        variants.append((name, ours, ours_keyed(ours)))
    if not variants:
        return 0
    # Rows: every launch any variant recorded, in the first variant's order.
    rows = []
    for _, _, recs in variants:
        for key, vals in recs.items():
            if key not in [r[0] for r in rows]:
                rows.append((key, vals["_nvtx"]))
    head = f"{'phase':<11}{'launch':>7}{'ncu':>10}" + "".join(f"{n[:22]:>24}" for n, _, _ in variants)
    print(f"== DRAM write bytes per launch, MB (ours - ncu), against {sys.argv[1].rsplit('/', 1)[-1]}")
    print("   variants: " + "; ".join(f"{n}: l2-clean {o.get('l2_clean')}, {o.get('passes')} pass(es), "
                                      f"{len(o.get('metrics', []))} metrics" for n, o, _ in variants))
    print(head)
    for (name, k), phase in rows:
        theirs = ncu.get((name, k), {})
        line = f"{phase[:11]:<11}{'#' + str(k):>7}{mb(theirs.get(WRITE)):>10}"
        for _, _, recs in variants:
            v = recs.get((name, k), {}).get(WRITE)
            d = None if v is None or theirs.get(WRITE) is None else v - theirs[WRITE]
            line += f"{mb(v)} ({'   n/a' if d is None else f'{d / 1e6:+7.2f}'}){'':>6}"
        print(line)
    scores = []
    for vname, ours, recs in variants:
        mine = [(key, phase) for key, phase in rows if key in recs]  # with the DRAM pass: every other launch
        n = len(mine)
        w_ok = sum(close(recs[key].get(WRITE), ncu.get(key, {}).get(WRITE)) for key, _ in mine)
        r_ok = sum(close(recs[key].get(READ), ncu.get(key, {}).get(READ)) for key, _ in mine)
        diffs = [recs[key][WRITE] - ncu[key][WRITE] for key, _ in mine
                 if recs[key].get(WRITE) is not None and ncu.get(key, {}).get(WRITE) is not None]
        mean = sum(abs(d) for d in diffs) / len(diffs) if diffs else float("inf")
        read_phase = [recs[key][WRITE] for key, phase in rows if phase == "read" and WRITE in recs.get(key, {})]
        text = (f"l2-clean {vname}: DRAM writes within 3% of ncu on {w_ok}/{n} launches, reads on {r_ok}/{n}; "
                f"mean |ours - ncu| write {mean / 1e6:.2f} MB"
                + (f"; the read-only kernel after the copy writes "
                   f"{', '.join(f'{v / 1e6:.2f}' for v in read_phase)} MB" if read_phase else "")
                + f"; {ours.get('l2_cleans', 0)} cleans, {ours.get('l2_clean_seconds', 0) * 1e3:.1f} ms")
        if vname == default:
            print(("PASS " if w_ok == n and r_ok == n else "MISS ") + text + " (the default)")
        else:
            print("INFO " + text)
        scores.append(((w_ok + r_ok) / max(2 * n, 1), -mean, vname))
    best = max(scores)[2]
    if best == default or max(scores)[:2] == next(s for s in scores if s[2] == default)[:2]:
        print(f"PASS the default ({default}) is the variant closest to ncu")
    else:
        print(f"MISS the variant closest to ncu is {best}, not the default ({default}): "
              f"make it RangeProfilerOptions::l2_clean's default")
    return 0


if __name__ == "__main__":
    sys.exit(main())
