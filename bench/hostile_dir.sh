#!/usr/bin/env bash
# Memory with several large records at once (issue #9): a perf.data directory whose N
# streams (default 8) each hold, inside compressed records, a 15 MiB AUXTRACE record
# (made with `perfdata synth --aux-payload`, its compressed data section copied into
# every data.N). Reading it, each stream's decompressor holds what it expanded; before
# the fix, finished streams kept their 16 MiB buffers (stats 135 MiB, check and
# dump --json 153 MiB with 8 streams). Prints peak RSS of stats, check and dump --json.
#
# With --plain the streams are not compressed (each data.N then holds the AUXTRACE as
# it is) and `convert`, which merges the streams by time, is measured too.
#
#   bench/hostile_dir.sh [N] [--plain]
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-hostile}
N=${1:-8}
compress=(--compress)
commands=(stats check "dump --json")
if [ "${2:-}" = --plain ]; then
    compress=()
    commands+=("convert -o $BENCH_DIR/out.data")
fi
rm -rf "$BENCH_DIR" && mkdir -p "$BENCH_DIR"
cargo build --profile bench-lto -q
perfdata=$PWD/target/bench-lto/perfdata
"$perfdata" -q synth --dir --cpus "$N" "${compress[@]}" --samples 2000 -o "$BENCH_DIR/dir.data"
"$perfdata" -q synth "${compress[@]}" --samples 100 --aux-payload 15M -o "$BENCH_DIR/one.data"
# The data section of one.data: its offset and size from the header (bytes 40 to 56).
read -r off size < <(od -An -t u8 -j 40 -N 16 "$BENCH_DIR/one.data")
for ((i = 0; i < N; i++)); do
    dd if="$BENCH_DIR/one.data" of="$BENCH_DIR/dir.data/data.$i" bs=1M status=none \
        iflag=skip_bytes,count_bytes skip="$off" count="$size"
done
echo "| command | streams | peak RSS |"
echo "|---|---|---|"
for cmd in "${commands[@]}"; do
    # shellcheck disable=SC2086
    /usr/bin/time -o "$BENCH_DIR/time.txt" -f '%M' "$perfdata" $cmd "$BENCH_DIR/dir.data" \
        > /dev/null 2>&1
    echo "| $cmd | $N | $(($(cat "$BENCH_DIR/time.txt") / 1024)) MiB |"
done
