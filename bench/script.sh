#!/usr/bin/env bash
# Benchmark: `perfdata script` against `perf script`, both to /dev/null, on a recording
# of about 50 MB: wall time and peak RSS. Prints a Markdown table for
# docs/benchmarks.md.
#
#   bench/script.sh [FILE]
#
# Without FILE it records one into $BENCH_DIR (default /tmp/perfdata-bench-script):
# `perf record -c 10000 --period -e task-clock` of two pipelines, in parallel,
# compressing DATA_KIB KiB (default 500) of random data with gzip then xz (user, libc
# and kernel symbols); with CALLGRAPH=fp it records with -g instead (callchains, one
# frame a line). PERFDATA names the binary to time (default: target/bench-lto/perfdata,
# built here). The two tools run alternately RUNS times each (default 3) on a warm page
# cache; the table shows the median wall time, the median CPU time (user + system) and
# the largest peak RSS (/usr/bin/time -v). The listings are compared once, first: the
# timing means nothing if they differ.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-script}
RUNS=${RUNS:-3}
DATA_KIB=${DATA_KIB:-500}
CALLGRAPH=${CALLGRAPH:-}
mkdir -p "$BENCH_DIR"
perfdata=${PERFDATA:-target/bench-lto/perfdata}
if [ -z "${PERFDATA:-}" ]; then
    cargo build --profile bench-lto -q -p perfdata-cli
fi
command -v perf >/dev/null || { echo "perf is not installed: nothing to compare" >&2; exit 1; }

input=${1:-}
if [ -z "$input" ]; then
    input=$BENCH_DIR/task-clock${CALLGRAPH:+-$CALLGRAPH}.data
    if [ ! -e "$input" ]; then
        job="head -c ${DATA_KIB}K /dev/urandom | gzip -6 | xz -1 > /dev/null"
        echo "recording $input ..." >&2
        perf record -q ${CALLGRAPH:+-g} -c 10000 --period -e task-clock -o "$input" -- \
            sh -c "($job) & ($job); wait" >&2
    fi
fi
cat "$input" > /dev/null

# The same text, or no timing.
perf script -i "$input" 2>/dev/null | cmp -s - <("$perfdata" script "$input" 2>/dev/null) \
    || echo "warning: the listings differ" >&2

# time_one CMD...: "wall-seconds cpu-seconds kib" of one run (cpu: user + system),
# output discarded.
time_one() {
    /usr/bin/time -v -o "$BENCH_DIR/time.txt" "$@" > /dev/null 2> "$BENCH_DIR/stderr.txt" \
        || { cat "$BENCH_DIR/stderr.txt" >&2; exit 1; }
    awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0;
                    for (i = 1; i <= n; i++) s = s * 60 + t[i] }
                /User time|System time/ { cpu += $2 }
                /Maximum resident set size/ { kb = $2 }
                END { printf "%.2f %.2f %d\n", s, cpu, kb }' "$BENCH_DIR/time.txt"
}

# median of the numbers on standard input.
median() {
    sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

samples=$("$perfdata" stats "$input" | awk '$1 == "SAMPLE" { print $3; exit }')
size=$(stat -c %s "$input")
echo "input: $input, $((size / 1048576)) MiB, ${samples:-?} samples"
echo
names=("perfdata script" "perf script")
cmds=("$perfdata script $input" "perf script -i $input")
for _ in $(seq "$RUNS"); do
    for i in "${!cmds[@]}"; do
        # shellcheck disable=SC2086 # the command's words
        time_one ${cmds[$i]} >> "$BENCH_DIR/runs.$i"
    done
done
echo "| tool | median wall time | median CPU time | peak RSS |"
echo "|---|---|---|---|"
for i in "${!cmds[@]}"; do
    t=$(cut -d' ' -f1 "$BENCH_DIR/runs.$i" | median)
    cpu=$(cut -d' ' -f2 "$BENCH_DIR/runs.$i" | median)
    kb=$(cut -d' ' -f3 "$BENCH_DIR/runs.$i" | sort -n | tail -n 1)
    printf '| %s | %s s | %s s | %s MiB |\n' "${names[$i]}" "$t" "$cpu" "$((kb / 1024))"
    rm -f "$BENCH_DIR/runs.$i"
done
