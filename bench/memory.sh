#!/usr/bin/env bash
# Benchmark: peak RSS of `perfdata export` (every format) and `perfdata report` on large
# recordings and on recordings four times larger (issue #24: memory may grow with the
# distinct stacks and symbols, never with the samples). Prints a Markdown table for
# docs/benchmarks.md: per input its size, samples and distinct stacks (export -v), and per command
# the wall time and peak RSS (/usr/bin/time; the largest of RUNS runs, default 3:
# the input's pages mapped while it is read make a few MiB of noise).
#
#   bench/memory.sh [synth|perf|all]   (default all)
#
# Inputs, made in $BENCH_DIR (default /tmp/perfdata-bench-memory) when missing:
# - synth: `perfdata synth` of 1 GiB and 4 GiB with callchains of depth 8, 2 processes of
#   2 threads, 2 DSOs of 4 functions, 2 CPUs, every thread and function as likely as the
#   others (a --spec file), so that every (thread, CPU, address) is sampled dozens of
#   times in the first GiB: the distinct stacks, and the counts per thread and CPU, are
#   the same at 4 GiB (export -v prints them).
# - perf: `perf record -e cpu-clock -c 50000 -g -a` while two pipelines compress random
#   data (gzip then xz), one per CPU, for PERF_SECONDS (default 90: about 400 MB here)
#   and four times as long. System wide, the recording has whatever else ran.
# - ISSUE_SYNTH=1 adds the issue's synthetic shape (`--callchain 8 --processes 8
#   --threads-per-process 4 --dsos 8 --cpus 2`) at 1 GiB and 4 GiB: its DSOs have no
#   symbols, so each of its ~140,000 addresses is a symbol of its own.
#
# Outputs go to standard output, which is /dev/null here.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-memory}
RUNS=${RUNS:-3}
PERF_SECONDS=${PERF_SECONDS:-90}
which=${1:-all}
mkdir -p "$BENCH_DIR"
perfdata=$PWD/target/bench-lto/perfdata
cargo build --profile bench-lto -q -p perfdata-cli

# synth_spec SIZE: the benchmark's synthetic recording of SIZE bytes.
synth_spec() {
    local out=$BENCH_DIR/synth-$1.data spec=$BENCH_DIR/synth-$1.json
    [ -e "$out" ] && return
    cat > "$spec" <<EOF
{"processes": 2, "threads_per_process": 2, "dsos": 2, "functions_per_dso": 4,
 "callchain": 8, "size": $1,
 "thread_weights": [1, 1, 1, 1], "function_weights": [1, 1, 1, 1, 1, 1, 1, 1],
 "host": {"nr_cpus": 2}}
EOF
    "$perfdata" synth --spec "$spec" -o "$out"
}

# synth_issue SIZE: the issue's synthetic shape, SIZE as synth's --size takes it.
synth_issue() {
    local out=$BENCH_DIR/issue-$1.data
    [ -e "$out" ] || "$perfdata" synth -o "$out" --size "$1" --callchain 8 --processes 8 \
        --threads-per-process 4 --dsos 8 --cpus 2
}

# record SECONDS NAME: the system-wide recording of two compressing pipelines.
record() {
    local out=$BENCH_DIR/$2.data
    [ -e "$out" ] && return
    echo "recording $out ($1 s) ..." >&2
    perf record -q -e cpu-clock -c 50000 -g -a -o "$out" -- sh -c '
        job() { end=$(( $(date +%s) + $1 ))
                while [ "$(date +%s)" -lt "$end" ]; do
                    head -c 2M /dev/urandom | gzip -6 | xz -1 > /dev/null
                done; }
        job '"$1"' & job '"$1"'; wait' >&2
}

# peak CMD...: "seconds MiB": the last run's wall time and the largest peak RSS of RUNS
# runs, standard output discarded.
peak() {
    local max=0 kb t
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -o "$BENCH_DIR/time.txt" -f '%e %M' "$@" > /dev/null 2> "$BENCH_DIR/stderr.txt" \
            || { cat "$BENCH_DIR/stderr.txt" >&2; exit 1; }
        read -r t kb < "$BENCH_DIR/time.txt"
        [ "$kb" -gt "$max" ] && max=$kb
    done
    echo "$t $((max / 1024))"
}

# row INPUT: one table row of INPUT.
row() {
    local input=$1 size samples stacks locations distinct t mib cells=""
    size=$(($(stat -L -c %s "$input") / 1048576))
    # export -v says how many samples, distinct stacks and locations there are.
    distinct=$("$perfdata" -v export "$input" --format folded -o - 2>&1 >/dev/null \
        | sed -n 's/^perfdata: \([0-9]*\) samples: \([0-9]*\) distinct stacks ([0-9]* with their callers. stacks) of \([0-9]*\) distinct locations.*/\1 \2 \3/p')
    read -r samples stacks locations <<< "$distinct"
    for format in folded pprof speedscope firefox flamegraph; do
        read -r t mib <<< "$(peak "$perfdata" -q export "$input" --format "$format" -o -)"
        cells="$cells | $mib MiB ($t s)"
    done
    read -r t mib <<< "$(peak "$perfdata" -q report "$input")"
    cells="$cells | $mib MiB ($t s)"
    printf '| %s, %s MiB | %s | %s (%s)%s |\n' "$(basename "$input" .data)" "$size" \
        "$samples" "$stacks" "$locations" "$cells"
}

echo "| input | samples | distinct stacks (locations) | folded | pprof | speedscope | firefox | flamegraph | report |"
echo "|---|---|---|---|---|---|---|---|---|"
if [ "$which" = synth ] || [ "$which" = all ]; then
    synth_spec 1073741824
    synth_spec 4294967296
    row "$BENCH_DIR/synth-1073741824.data"
    row "$BENCH_DIR/synth-4294967296.data"
    if [ "${ISSUE_SYNTH:-0}" = 1 ]; then
        synth_issue 1G
        synth_issue 4G
        row "$BENCH_DIR/issue-1G.data"
        row "$BENCH_DIR/issue-4G.data"
    fi
fi
if [ "$which" = perf ] || [ "$which" = all ]; then
    record "$PERF_SECONDS" system-wide
    record "$((4 * PERF_SECONDS))" system-wide-4x
    row "$BENCH_DIR/system-wide.data"
    row "$BENCH_DIR/system-wide-4x.data"
fi
