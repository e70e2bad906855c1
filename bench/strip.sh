#!/usr/bin/env bash
# Benchmark: `perfdata strip --pid` of a large recording (keeping about half of the
# samples) against `cp` and `perf inject` of the same file: wall time and peak RSS.
# Prints a Markdown table for docs/benchmarks.md.
#
#   bench/strip.sh [FILE]
#
# Without FILE it records one (about 800 MB) into $BENCH_DIR (default
# /tmp/perfdata-bench-strip): cpu-clock every 10 us with call graphs, system wide, while
# two dd processes run; the pids stripped are the busiest ones, about half the samples.
# Each tool runs RUNS times (default 5) on a warm page cache, its output removed and
# the disk synced first; the table shows the median time and the largest RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-strip}
# shellcheck source=bench/common.sh
source bench/common.sh "$@"

# The busiest pids among the first samples that together make at most 55% of them: the
# strip keeps about half the samples. (head closes the pipe early: perf's SIGPIPE is
# expected.)
pid=$( (perf script -F pid -i "$input" 2>/dev/null || true) | head -n 200000 | sort \
    | uniq -c | sort -rn | awk '{ n[NR] = $1; p[NR] = $2; total += $1 }
        END { for (i = 1; i <= NR; i++) if (p[i] > 0 && sum + n[i] <= total * 0.55) {
            sum += n[i]; printf "%s%s", (out ? "," : ""), p[i]; out = 1 } }')

size=$(stat -c %s "$input")
echo "input: $input, $((size / 1048576)) MiB; stripping pids $pid"
echo
echo "| tool | median time | peak RSS |"
echo "|---|---|---|"
run "cp" cp "$input" "$out"
run "perfdata strip --pid $pid" "$perfdata" strip "$input" -o "$out" --pid "$pid"
"$perfdata" strip "$input" -o "$out" --pid "$pid" 2>&1 | grep -E '^(SAMPLE|bytes)' \
    | sed 's/^/|   /; s/$/ | | |/'
if command -v perf >/dev/null; then
    run "perf inject" perf inject -i "$input" -o "$out"
fi
rm -f "$out"
