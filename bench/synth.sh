#!/usr/bin/env bash
# Benchmark: `perfdata synth --size SIZE` (default 2GB) throughput and peak RSS.
# Prints a Markdown table for docs/benchmarks.md.
#
#   bench/synth.sh [SIZE]
#
# Each variant runs RUNS times (default 3) into $BENCH_DIR (default /tmp/perfdata-bench),
# the output removed and the disk synced first; the table shows the median wall time,
# the median CPU time (user + sys: what the machine's other load does not change), the
# rates of output bytes per second of each, and the largest peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench}
RUNS=${RUNS:-3}
SIZE=${1:-2GB}
mkdir -p "$BENCH_DIR"
cargo build --profile bench-lto -q
perfdata=target/bench-lto/perfdata
out=$BENCH_DIR/synth.data

median() { sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"; }

# run NAME ARGS...: one table row.
run() {
    local name=$1; shift
    local walls=() cpus=() rss=0 bytes=0
    for _ in $(seq "$RUNS"); do
        rm -f "$out"; sync
        /usr/bin/time -o "$BENCH_DIR/time.txt" -f '%e %U %S %M' \
            "$perfdata" synth -o "$out" --size "$SIZE" "$@"
        read -r wall user sys kb < <(tail -n 1 "$BENCH_DIR/time.txt")
        walls+=("$wall")
        cpus+=("$(printf '%.2f' "$(echo "$user + $sys" | bc)")")
        [ "$kb" -gt "$rss" ] && rss=$kb
        bytes=$(stat -c %s "$out")
    done
    local wall cpu
    wall=$(printf '%s\n' "${walls[@]}" | median)
    cpu=$(printf '%s\n' "${cpus[@]}" | median)
    printf '| %s | %s MiB | %s s | %s MB/s | %s s | %s MB/s | %s MiB |\n' "$name" \
        "$((bytes / 1048576))" "$wall" "$(echo "$bytes / $wall / 1000000" | bc)" \
        "$cpu" "$(echo "$bytes / $cpu / 1000000" | bc)" "$((rss / 1024))"
}

echo "perfdata synth --size $SIZE, $RUNS runs, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| options | output | median wall | wall rate | median CPU | CPU rate | peak RSS |"
echo "|---|---|---|---|---|---|---|"
run "(defaults: cpu-clock, 2x2 threads, 3 DSOs)"
run "--callchain 8 --processes 8 --threads-per-process 4 --dsos 8" \
    --callchain 8 --processes 8 --threads-per-process 4 --dsos 8
run "--compress --callchain 8" --compress --callchain 8
run "--pipe --endian big" --pipe --endian big
rm -f "$out"
