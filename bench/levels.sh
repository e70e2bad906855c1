#!/usr/bin/env bash
# Benchmark: `perfdata convert --compress` at zstd levels 1, 3 and 9 beside perf's own
# `perf record -z` output of the same recording: size, ratio, wall time and rate.
# Prints a Markdown table for docs/benchmarks.md.
#
#   bench/levels.sh [FILE]
#
# FILE is a recording made with `perf record -z`; without it one is recorded into
# $BENCH_DIR (default /tmp/perfdata-bench-levels): task-clock every 10 us of
# `ls -R /usr/lib` three times, compressed by perf at its default level (1). perfdata
# decompresses it once and compresses the records again at each level; each level runs
# RUNS times (default 5) on a warm page cache, output removed and the disk synced first.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-levels}
RUNS=${RUNS:-5}
mkdir -p "$BENCH_DIR"
perfdata=target/bench-lto/perfdata
out=$BENCH_DIR/out.data
cargo build --profile bench-lto -q
# shellcheck source=bench/measure.sh
source bench/measure.sh

z=${1:-$BENCH_DIR/perf-z.data}
[ -e "$z" ] || perf record -q -z -c 10000 --period -e task-clock -o "$z" -- \
    sh -c 'for i in 1 2 3; do ls -R /usr/lib >/dev/null; done' >&2
plain=$BENCH_DIR/plain.data
"$perfdata" convert -q --decompress "$z" -o "$plain"
plain_size=$(stat -c %s "$plain")

row() { # NAME SIZE SECONDS RSS
    awk -v n="$1" -v s="$2" -v p="$plain_size" -v t="$3" -v r="$4" 'BEGIN {
        printf "| %s | %d | %.1f | %s | %s | %s |\n", n, s, p / s, (t == "-" ? "-" : t " s"),
            (t == "-" ? "-" : sprintf("%.0f MB/s", p / t / 1e6)), r }'
}

echo "input: $z; its records uncompressed: $plain_size bytes; medians of $RUNS runs"
echo
echo "| compressed by | bytes | ratio | time | rate (uncompressed bytes) | peak RSS |"
echo "|---|---|---|---|---|---|"
row "perf record -z (level 1, while recording)" "$(stat -c %s "$z")" - -
for level in 1 3 9; do
    measure "$perfdata" convert --compress="$level" "$plain" -o "$out"
    "$perfdata" convert --compress="$level" "$plain" -o "$out"
    row "perfdata convert --compress=$level" "$(stat -c %s "$out")" "$MEDIAN" "$RSS_MIB MiB"
done
