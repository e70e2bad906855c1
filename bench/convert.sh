#!/usr/bin/env bash
# Benchmark: identity `perfdata convert` of a large recording against `cp` and
# `perf inject`, wall time and peak RSS. Prints a Markdown table for docs/benchmarks.md.
#
#   bench/convert.sh [FILE]
#
# Without FILE it records one (about 800 MB) with perf into $BENCH_DIR (default
# /tmp/perfdata-bench): cpu-clock every 10 us with call graphs, system wide, while two
# dd processes run. With BENCH_INPUT=synth, or where perf is not installed, it makes an
# 800 MiB synthetic one instead (`perfdata synth`, the same bytes on every machine).
# Each tool runs RUNS times (default 5) on a warm page cache with its output removed
# and the disk synced first; the table shows the median.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench}
# shellcheck source=bench/common.sh
source bench/common.sh "$@"

size=$(stat -c %s "$input")
records=$("$perfdata" stats --json "$input" | sed -n 's/.*"total": \([0-9]*\).*/\1/p')
echo "input: $input, $((size / 1048576)) MiB, $records records"
echo
echo "| tool | median time | peak RSS |"
echo "|---|---|---|"
run "cp" cp "$input" "$out"
run "perfdata convert (identity)" "$perfdata" convert "$input" -o "$out"
cmp -s "$input" "$out" && echo "|   (output byte-identical to input) | | |"
run "perfdata convert --compress" "$perfdata" convert --compress "$input" -o "$out"
run "perfdata stats" "$perfdata" stats "$input"
if command -v perf >/dev/null; then
    run "perf inject" perf inject -i "$input" -o "$out"
fi
rm -f "$out"
