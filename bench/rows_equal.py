#!/usr/bin/env python3
"""How many of perf's `--sort comm,dso,sym -n` rows above a share of the samples
(default 0.01%) perfdata prints with the same sample count, and the rows that differ.

    bench/rows_equal.py PERF_TEXT OUR_TEXT [MIN_PERCENT]
"""
import re
import sys


def rows(path):
    """(comm, dso, sym) -> samples, rows of one key added up (perf splits a symbol
    name that two functions share into two rows)."""
    out = {}
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            m = re.match(r"\s*([\d.]+)%\s+(\d+)\s+(.*)$", line.rstrip("\n"))
            if not m:
                continue
            key = tuple(x.strip() for x in re.split(r"\s{2,}", m.group(3).strip(), maxsplit=2))
            out[key] = out.get(key, 0) + int(m.group(2))
    return out


def main():
    perf, ours = rows(sys.argv[1]), rows(sys.argv[2])
    share = float(sys.argv[3]) if len(sys.argv) > 3 else 0.01
    floor = sum(perf.values()) * share / 100
    big = [k for k in perf if perf[k] >= floor]
    if not big:
        sys.exit("no rows in perf's text")
    equal = sum(1 for k in big if ours.get(k) == perf[k])
    print(f"rows above {share}%: {len(big)}; equal in perfdata: {equal} "
          f"({100 * equal / len(big):.2f}%)")
    for k in sorted((k for k in big if ours.get(k) != perf[k]), key=lambda k: -perf[k])[:10]:
        print(f"  perf {perf[k]}, perfdata {ours.get(k, 0)}: {' '.join(k)[:160]}")


main()
