#!/usr/bin/env python3
"""How perf's and perfdata's `report --children -n -g none` rows compare: the Self
samples of every row, and the Children share of the rows at or above a share (default
0.1%) in either: equal (to the printed hundredth), higher in perfdata (its unwinding
went further up those stacks), higher in perf. Also how many "(inlined)" rows each has.

    bench/children_equal.py PERF_TEXT OUR_TEXT [MIN_PERCENT]
"""
import re
import sys


def rows(path):
    """(comm, dso, sym) -> [children %, self samples], rows of one key added up."""
    out = {}
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            m = re.match(r"\s*([\d.]+)%\s+[\d.]+%\s+(\d+)\s+(.*)$", line.rstrip("\n"))
            if not m:
                continue
            key = tuple(x.strip() for x in re.split(r"\s{2,}", m.group(3).strip(), maxsplit=2))
            row = out.setdefault(key, [0.0, 0])
            row[0] += float(m.group(1))
            row[1] += int(m.group(2))
    return out


def main():
    perf, ours = rows(sys.argv[1]), rows(sys.argv[2])
    share = float(sys.argv[3]) if len(sys.argv) > 3 else 0.1
    if not perf:
        sys.exit("no rows in perf's text")
    keys = set(perf) | set(ours)
    none = [0.0, 0]
    self_equal = sum(1 for k in keys if perf.get(k, none)[1] == ours.get(k, none)[1])
    print(f"rows: perf {len(perf)}, perfdata {len(ours)}; Self samples equal in "
          f"{self_equal} of {len(keys)}")
    big = [k for k in keys if max(perf.get(k, none)[0], ours.get(k, none)[0]) >= share]
    diff = {k: ours.get(k, none)[0] - perf.get(k, none)[0] for k in big}
    equal = sum(1 for k in big if k in perf and k in ours and abs(diff[k]) < 0.015)
    higher = [k for k in big if diff[k] >= 0.015]
    lower = sorted((k for k in big if diff[k] <= -0.015), key=lambda k: diff[k])
    print(f"rows at or above {share}% Children: {len(big)}; equal {equal}, higher in "
          f"perfdata {len(higher)}, higher in perf {len(lower)}")
    inl = lambda t: sum(1 for k in t if k[-1].endswith("(inlined)"))
    print(f"(inlined) rows: perf {inl(perf)}, perfdata {inl(ours)}")
    for k in lower[:10]:
        print(f"  perf {perf.get(k, none)[0]:.2f}%, perfdata {ours.get(k, none)[0]:.2f}%: "
              f"{' '.join(k)[:140]}")


main()
