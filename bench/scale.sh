#!/usr/bin/env bash
# Scale: time and peak RSS of each command on synthetic recordings of growing size, to
# show time growing with the input and memory staying flat. Prints a Markdown table.
#
#   bench/scale.sh [SIZE...]          (default: 50MB 800MB 4GB)
#
# The inputs are `perfdata synth --size SIZE --callchain 8 --processes 8
# --threads-per-process 4 --dsos 8 --cpus 2` (the same bytes on every machine), made
# in $BENCH_DIR (default /tmp/perfdata-bench-scale) and removed at the end. Each command
# runs RUNS times (default 3; the median is shown) on a warm page cache, its output
# removed and the disk synced before each run; `cp` of the input is the yardstick.
# `dump --json` and `perf script` run up to DUMP_MAX bytes of input (default 1000000000: at about
# 100 MB/s it would take a minute per GB).
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-scale}
DUMP_MAX=${DUMP_MAX:-1000000000}
RUNS=${RUNS:-3}
mkdir -p "$BENCH_DIR"
cargo build --profile bench-lto -q
perfdata=$PWD/target/bench-lto/perfdata
out=$BENCH_DIR/out.data
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(50MB 800MB 4GB)

# shellcheck source=bench/measure.sh
source bench/measure.sh

# one CMD...: "seconds, MiB" (median wall time of RUNS runs, to the hundredth; largest
# peak RSS).
one() {
    measure "$@"
    printf '%.2f s, %s MiB' "$MEDIAN" "$RSS_MIB"
}

echo "| input | records | cp | stats | dump --json | perf script | convert (identity) | convert --to-pipe | convert --compress | strip --pid |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for size in "${sizes[@]}"; do
    input=$BENCH_DIR/synth-$size.data
    [ -e "$input" ] || "$perfdata" synth -o "$input" --size "$size" --callchain 8 \
        --processes 8 --threads-per-process 4 --dsos 8 --cpus 2 >/dev/null
    cat "$input" > /dev/null
    bytes=$(stat -c %s "$input")
    records=$("$perfdata" stats --json "$input" | sed -n 's/.*"total": \([0-9]*\).*/\1/p')
    if [ "$bytes" -le "$DUMP_MAX" ]; then
        dump=$(one "$perfdata" dump --json "$input")
        if command -v perf >/dev/null; then
            script=$(one perf script -i "$input")
        else
            script="(no perf)"
        fi
    else
        dump="(not run)"
        script="(not run)"
    fi
    printf '| %s MiB | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$((bytes / 1048576))" \
        "$records" \
        "$(one cp "$input" "$out")" \
        "$(one "$perfdata" stats "$input")" \
        "$dump" \
        "$script" \
        "$(one "$perfdata" convert "$input" -o "$out")" \
        "$(one "$perfdata" convert --to-pipe "$input" -o "$out")" \
        "$(one "$perfdata" convert --compress "$input" -o "$out")" \
        "$(one "$perfdata" strip "$input" -o "$out" --pid 10000-10003)"
    rm -f "$input"
done
rm -f "$out"
