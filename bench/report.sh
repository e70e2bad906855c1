#!/usr/bin/env bash
# Benchmark: `perfdata report --sort comm,dso,sym` against `perf report --stdio --sort
# comm,dso,sym` on a recording of about 1.4 million samples: wall time and peak RSS.
# Prints a Markdown table for docs/benchmarks.md.
#
#   bench/report.sh [FILE]
#
# Without FILE it records one into $BENCH_DIR (default /tmp/perfdata-bench-report):
# `perf record -c 10000 --period -e task-clock` (a sample every 10 us of CPU time) of
# two pipelines, in parallel, compressing DATA_KIB KiB (default 820) of random data
# with gzip then xz (user, libc and kernel symbols): about 1.4 million samples here,
# the timer's interrupts included. Without perf it makes a synthetic file with `perfdata synth` instead and
# times perfdata alone. The two tools run alternately RUNS times each (default 5) on a
# warm page cache, output to /dev/null; the table shows the median wall time, the
# median CPU time (user + system: steadier than wall time on a shared machine) and the
# largest peak RSS (/usr/bin/time -v).
#
# WORKLOAD=system-wide records instead `perf record -a -e cpu-clock -F 999` for
# SECONDS_WIDE seconds (default 15) while this workspace builds in release into a
# scratch target directory (rustc, cc, ld, as: hundreds of DSOs, big C++ and Rust
# libraries), and also prints how many of perf's rows above 0.01% perfdata prints with
# the same sample count (bench/rows_equal.py).
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-report}
RUNS=${RUNS:-5}
DATA_KIB=${DATA_KIB:-820}
mkdir -p "$BENCH_DIR"
perfdata=target/bench-lto/perfdata
cargo build --profile bench-lto -q -p perfdata-cli

input=${1:-}
if [ -z "$input" ] && ! command -v perf >/dev/null; then
    input=$BENCH_DIR/synth.data
    [ -e "$input" ] || "$perfdata" synth -o "$input" --size 120MB \
        --processes 8 --threads-per-process 4 --dsos 8 --cpus 2
elif [ -z "$input" ] && [ "${WORKLOAD:-}" = system-wide ]; then
    input=$BENCH_DIR/system-wide.data
    if [ ! -e "$input" ]; then
        echo "recording $input while a release build runs ..." >&2
        CARGO_TARGET_DIR=$BENCH_DIR/build cargo build -q --release -p perfdata-cli \
            > /dev/null 2>&1 &
        build=$!
        sleep 5
        perf record -q -a -e cpu-clock -F 999 -o "$input" -- sleep "${SECONDS_WIDE:-15}" >&2
        kill "$build" 2> /dev/null || true
        wait "$build" 2> /dev/null || true
    fi
elif [ -z "$input" ]; then
    input=$BENCH_DIR/task-clock.data
    if [ ! -e "$input" ]; then
        job="head -c ${DATA_KIB}K /dev/urandom | gzip -6 | xz -1 > /dev/null"
        echo "recording $input ..." >&2
        perf record -q -c 10000 --period -e task-clock -o "$input" -- \
            sh -c "($job) & ($job); wait" >&2
    fi
fi
cat "$input" > /dev/null

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
names=("perfdata report --sort comm,dso,sym")
cmds=("$perfdata report --sort comm,dso,sym $input")
if command -v perf >/dev/null; then
    names+=("perf report --stdio --sort comm,dso,sym")
    cmds+=("perf report --stdio --sort comm,dso,sym -i $input")
fi
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
if command -v perf > /dev/null; then
    # The rows: perf's and ours, every row (--percent-limit 0), compared by python.
    perf report --stdio --sort comm,dso,sym -n --percent-limit 0 -i "$input" \
        > "$BENCH_DIR/perf-rows.txt" 2> /dev/null
    "$perfdata" report --sort comm,dso,sym -n --percent-limit 0 --stdio "$input" \
        > "$BENCH_DIR/our-rows.txt" 2> /dev/null
    echo
    python3 bench/rows_equal.py "$BENCH_DIR/perf-rows.txt" "$BENCH_DIR/our-rows.txt"
fi
