#!/usr/bin/env bash
# Benchmark: issue #13's table, each row a paired run: perfdata and the other tool
# alternate RUNS times (default 7) on a warm page cache, outputs removed and the disk
# synced before each run; the table shows the medians, their ratio and peak RSS.
#
#   bench/speed.sh FILE...
#
# Without FILE it records the issue's two recordings into $BENCH_DIR (default
# /tmp/perfdata-bench-speed): a task-clock one (`ls -R /usr/lib` three times, every
# 10 us) and a cpu-clock one with call graphs, system wide, while two dd run.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-speed}
RUNS=${RUNS:-7}
mkdir -p "$BENCH_DIR"
out=$BENCH_DIR/out.data
perfdata=target/bench-lto/perfdata
cargo build --profile bench-lto -q

inputs=("$@")
if [ ${#inputs[@]} -eq 0 ]; then
    small=$BENCH_DIR/task-clock.data big=$BENCH_DIR/callchains.data
    [ -e "$small" ] || perf record -q -c 10000 --period -e task-clock -o "$small" -- \
        sh -c 'for i in 1 2 3; do ls -R /usr/lib >/dev/null; done' >&2
    [ -e "$big" ] || perf record -q -e cpu-clock -c 10000 -g -a -o "$big" -- sh -c \
        'dd if=/dev/zero of=/dev/null bs=4k count=3000000 2>/dev/null &
         dd if=/dev/zero of=/dev/null bs=4k count=3000000 2>/dev/null; wait' >&2
    inputs=("$small" "$big")
fi

# once CMD...: "seconds KiB" of one run (wall time to the millisecond, peak RSS),
# output removed and synced first.
once() {
    rm -f "$out" "$out.zst"; sync
    local start end
    start=$(date +%s%N)
    /usr/bin/time -o "$BENCH_DIR/time.txt" -f '%M' "$@" >/dev/null 2>&1
    end=$(date +%s%N)
    echo "$(awk -v n=$((end - start)) 'BEGIN { printf "%.3f", n / 1e9 }') $(tail -n 1 "$BENCH_DIR/time.txt")"
}

median() { sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"; }

# pair NAME OTHER_NAME -- PERFDATA_CMD... -- OTHER_CMD...: one table row.
pair() {
    local name=$1 other=$2; shift 3
    local ours=() theirs=()
    while [ "$1" != -- ]; do ours+=("$1"); shift; done
    shift
    theirs=("$@")
    local a=() b=() rss_a=0 rss_b=0 line
    for _ in $(seq "$RUNS"); do
        line=$(once "${ours[@]}"); a+=("${line% *}")
        [ "${line#* }" -gt "$rss_a" ] && rss_a=${line#* }
        line=$(once "${theirs[@]}"); b+=("${line% *}")
        [ "${line#* }" -gt "$rss_b" ] && rss_b=${line#* }
    done
    local ma mb
    ma=$(printf '%s\n' "${a[@]}" | median)
    mb=$(printf '%s\n' "${b[@]}" | median)
    printf '| %s | %s s | %s | %s s | %s | %s MiB | %s MiB |\n' "$name" "$ma" "$other" "$mb" \
        "$(awk -v a="$ma" -v b="$mb" 'BEGIN { if (a > 0 && b >= a) printf "%.1fx faster", b / a;
            else if (b > 0) printf "%.1fx slower", a / b; else print "-" }')" \
        "$((rss_a / 1024))" "$((rss_b / 1024))"
}

for input in "${inputs[@]}"; do
    cat "$input" > /dev/null
    size=$(stat -c %s "$input")
    records=$("$perfdata" stats --json "$input" | sed -n 's/.*"total": \([0-9]*\).*/\1/p')
    echo
    echo "input: $input, $((size / 1048576)) MiB, $records records; $RUNS paired runs"
    echo
    echo "| work | perfdata | the other | its time | ratio | perfdata RSS | its RSS |"
    echo "|---|---|---|---|---|---|---|"
    pair "stats" "perf report --stats" -- "$perfdata" stats "$input" \
        -- perf report --stats -i "$input"
    pair "convert (identity)" "cp" -- "$perfdata" convert "$input" -o "$out" \
        -- cp "$input" "$out"
    pair "convert (identity)" "perf inject" -- "$perfdata" convert "$input" -o "$out" \
        -- perf inject -i "$input" -o "$out"
    pair "convert --compress=1" "zstd -1" -- "$perfdata" convert --compress=1 "$input" -o "$out" \
        -- zstd -q -1 -f "$input" -o "$out.zst"
    "$perfdata" convert --compress=1 "$input" -o "$out"
    zstd -q -1 -f "$input" -o "$out.zst"
    echo "|   sizes: perfdata $(stat -c %s "$out") bytes, zstd $(stat -c %s "$out.zst") bytes | | | | | | |"
    rm -f "$out" "$out.zst"
done
