#!/usr/bin/env bash
# Benchmark: `perfdata report --children` against `perf report --stdio --children` on a
# `perf record --call-graph dwarf` recording of at least 100 MB: both unwind every
# sample's 8 KiB stack copy (perf 6.1 with libunwind, perfdata with framehop); and
# `perfdata unwind` of it into a file (MB/s of input). Wall time and peak RSS; prints
# a Markdown table for docs/benchmarks.md.
#
#   bench/unwind.sh [FILE]
#   WORKLOAD=python bench/unwind.sh
#
# Without FILE it records one into $BENCH_DIR (default /tmp/perfdata-bench-unwind):
# `perf record --call-graph dwarf -e task-clock -c 100000` (a sample every 100 us of
# CPU time, each with its 8 KiB stack copy) of tests/unwind/levels.c built `gcc -O2
# -fomit-frame-pointer` (ROUNDS rounds, default 3000): about 250 MB here. One process:
# with a second one mapping libc elsewhere (`ls` run beside it), perf 6.1 stops its
# walks at libc's memset in the first for most samples (perfdata does not; perf does
# not either on the process recorded alone), and so does less work. Each tool runs RUNS times (default 3) on a warm page cache, output
# to /dev/null (bench/measure.sh: median wall time, median CPU time, largest peak RSS).
#
# WORKLOAD=python records bench/unwind-work.py under python3 instead (ROUNDS ignored;
# about 110 MB): deeper C stacks through libpython, its extension modules and libc, 12
# DSOs. perf report also reads the inlined frames of libpython's debug info there (its
# "(inlined)" rows, which perfdata does not print), so `perf report --no-inline` is
# measured beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-unwind}
RUNS=${RUNS:-3}
ROUNDS=${ROUNDS:-3000}
mkdir -p "$BENCH_DIR"
# PERFDATA=target/release/perfdata measures another build (the fat-LTO build takes
# minutes on a shared machine).
perfdata=${PERFDATA:-target/bench-lto/perfdata}
[ -n "${PERFDATA:-}" ] || cargo build --profile bench-lto -q -p perfdata-cli

WORKLOAD=${WORKLOAD:-levels}
input=${1:-}
if [ -z "$input" ] && [ "$WORKLOAD" = python ]; then
    input=$BENCH_DIR/python-dwarf.data
    if [ ! -e "$input" ]; then
        echo "recording $input ..." >&2
        perf record -q --call-graph dwarf -e task-clock -c 100000 -m 4096 -o "$input" -- \
            python3 bench/unwind-work.py > /dev/null
    fi
elif [ -z "$input" ]; then
    input=$BENCH_DIR/dwarf.data
    if [ ! -e "$input" ]; then
        gcc -O2 -fomit-frame-pointer -o "$BENCH_DIR/levels" perfdata-cli/tests/unwind/levels.c
        echo "recording $input ..." >&2
        perf record -q --call-graph dwarf -e task-clock -c 100000 -m 4096 -o "$input" -- \
            "$BENCH_DIR/levels" "$ROUNDS" > /dev/null
    fi
fi
cat "$input" > /dev/null

# shellcheck source=bench/measure.sh
source bench/measure.sh
out=$BENCH_DIR/none

samples=$("$perfdata" stats "$input" | awk '$1 == "SAMPLE" { print $3; exit }')
size=$(stat -c %s "$input")
echo "input: $input, $((size / 1048576)) MiB, ${samples:-?} samples"
"$perfdata" -v report --children "$input" 2>&1 >/dev/null | grep -E "unwound" || true
echo
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| tool | median wall time | median CPU time | peak RSS |"
echo "|---|---|---|---|"
measure "$perfdata" report --children --sort comm,dso,sym "$input"
echo "| perfdata report --children | $MEDIAN s | $CPU s | $RSS_MIB MiB |"
measure perf report --stdio --children -g none --sort comm,dso,sym -i "$input"
echo "| perf report --stdio --children | $MEDIAN s | $CPU s | $RSS_MIB MiB |"
measure perf report --stdio --no-inline --children -g none --sort comm,dso,sym -i "$input"
echo "| perf report --stdio --no-inline --children | $MEDIAN s | $CPU s | $RSS_MIB MiB |"
out=$BENCH_DIR/unwound.data
measure "$perfdata" unwind "$input" -o "$out"
"$perfdata" unwind "$input" -o "$out" 2>/dev/null
mbps=$(awk -v s="$size" -v t="$MEDIAN" 'BEGIN { printf "%.0f", s / t / 1e6 }')
echo "| perfdata unwind -o FILE | $MEDIAN s ($mbps MB/s of input) | $CPU s | $RSS_MIB MiB |"
echo
echo "unwound: $(stat -c %s "$out") bytes"
