#!/usr/bin/env bash
# Benchmark: identity `perfdata convert` of a large recording against `cp` and
# `perf inject`, wall time and peak RSS. Prints a Markdown table for the README.
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
RUNS=${RUNS:-5}
mkdir -p "$BENCH_DIR"
cargo build --release -q
if [ -z "${1:-}" ] && { [ "${BENCH_INPUT:-}" = synth ] || ! command -v perf >/dev/null; }; then
    input=$BENCH_DIR/synth-input.data
    [ -e "$input" ] || target/release/perfdata synth -o "$input" --size 800MB \
        --callchain 8 --processes 8 --threads-per-process 4 --dsos 8 --cpus 2
fi
input=${input:-${1:-$BENCH_DIR/big.data}}
if [ ! -e "$input" ]; then
    echo "recording $input ..." >&2
    perf record -q -e cpu-clock -c 10000 -g -a -o "$input" -- sh -c \
        'dd if=/dev/zero of=/dev/null bs=4k count=3000000 2>/dev/null &
         dd if=/dev/zero of=/dev/null bs=4k count=3000000 2>/dev/null; wait' >&2
fi
perfdata=target/release/perfdata
out=$BENCH_DIR/out.data
cat "$input" > /dev/null   # warm the page cache

# run NAME CMD...: median wall seconds and max RSS (MiB) over RUNS runs.
run() {
    local name=$1; shift
    local times=() rss=0
    for _ in $(seq "$RUNS"); do
        rm -f "$out"; sync
        local line
        /usr/bin/time -o "$BENCH_DIR/time.txt" -f '%e %M' "$@" >/dev/null 2>&1
        line=$(tail -n 1 "$BENCH_DIR/time.txt")
        times+=("${line% *}")
        local kb=${line#* }
        [ "$kb" -gt "$rss" ] && rss=$kb
    done
    local median
    median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")
    printf '| %s | %s s | %s MiB |\n' "$name" "$median" "$(( rss / 1024 ))"
}

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
