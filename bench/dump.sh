#!/usr/bin/env bash
# Benchmark: `perfdata dump` and `perfdata dump --json` against `perf script`, all to
# /dev/null, on the same recording. Prints a Markdown table for docs/benchmarks.md.
#
#   bench/dump.sh [FILE]
#
# Without FILE it records one into $BENCH_DIR (default /tmp/perfdata-bench-dump):
# task-clock every 10 us while `ls -R /usr/lib` runs twice (about 35-50 MB, 0.9-1.2 M
# records, no call graphs). The machine is shared and noisy, so the tools alternate: each
# round runs every tool once, in turn, RUNS rounds (default 7); the table shows each
# tool's median wall time and its ratio to perf script's median, and the load.
# PERFDATA_OLD=/path/to/perfdata adds rows for another build (before/after a change).
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-dump}
RUNS=${RUNS:-7}
mkdir -p "$BENCH_DIR"
input=${1:-$BENCH_DIR/task-clock.data}
if [ ! -e "$input" ]; then
    echo "recording $input ..." >&2
    perf record -q -c 10000 --period -e task-clock -o "$input" -- \
        sh -c 'for i in 1 2; do ls -R /usr/lib >/dev/null; done' >&2
fi
cargo build --profile bench-lto -q -p perfdata-cli
perfdata=target/bench-lto/perfdata
cat "$input" > /dev/null

names=("perf script" "perfdata dump" "perfdata dump --json")
cmds=("perf script -i $input" "$perfdata dump $input" "$perfdata dump --json $input")
if [ -n "${PERFDATA_OLD:-}" ]; then
    names+=("old dump" "old dump --json")
    cmds+=("$PERFDATA_OLD dump $input" "$PERFDATA_OLD dump --json $input")
fi

declare -A times
for _ in $(seq "$RUNS"); do
    for i in "${!cmds[@]}"; do
        start=$(date +%s.%N)
        ${cmds[$i]} > /dev/null 2>&1
        end=$(date +%s.%N)
        times[$i]+="$(echo "$end - $start" | bc) "
    done
done

median() { printf '%s\n' $1 | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"; }
records=$("$perfdata" stats "$input" 2>/dev/null | awk '/TOTAL events/ { print $NF; exit }')
echo "input: $input, $(( $(stat -c %s "$input") / 1048576 )) MiB, ${records:-?} records;" \
    "load: $(uptime | sed 's/.*load average: //')"
echo
echo "| tool | median of $RUNS | vs perf script |"
echo "|---|---|---|"
base=$(median "${times[0]}")
for i in "${!cmds[@]}"; do
    m=$(median "${times[$i]}")
    printf '| `%s` | %.3f s | %.2fx the time |\n' "${names[$i]}" "$m" "$(echo "$m / $base" | bc -l)"
done
