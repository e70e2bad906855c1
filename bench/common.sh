# Shared by the benchmark scripts: `source bench/common.sh "$@"` from the repository
# root after setting BENCH_DIR. Sets input (the script's FILE argument; else, with
# BENCH_INPUT=synth or without perf, an 800 MiB synthetic trace from `perfdata synth`,
# the same bytes on every machine; else a recording made here), out, perfdata and RUNS
# (default 5), and defines run.

# prepare INPUT: record INPUT if it does not exist (about 800 MB: cpu-clock every 10 us
# with call graphs, system wide, while two dd processes run), build perfdata, and warm
# the page cache.
prepare() {
    local input=$1
    if [ ! -e "$input" ]; then
        echo "recording $input ..." >&2
        perf record -q -e cpu-clock -c 10000 -g -a -o "$input" -- sh -c \
            'dd if=/dev/zero of=/dev/null bs=4k count=3000000 2>/dev/null &
             dd if=/dev/zero of=/dev/null bs=4k count=3000000 2>/dev/null; wait' >&2
    fi
    cargo build --profile bench-lto -q
    cat "$input" > /dev/null
}

# shellcheck source=bench/measure.sh
source bench/measure.sh

# run NAME CMD...: a table row of the median wall seconds (to the millisecond) and max
# RSS (MiB) over RUNS runs.
run() {
    local name=$1; shift
    measure "$@"
    printf '| %s | %s s | %s MiB |\n' "$name" "$MEDIAN" "$RSS_MIB"
}

RUNS=${RUNS:-5}
mkdir -p "$BENCH_DIR"
out=$BENCH_DIR/out.data
perfdata=target/bench-lto/perfdata
if [ -z "${1:-}" ] && { [ "${BENCH_INPUT:-}" = synth ] || ! command -v perf >/dev/null; }; then
    cargo build --profile bench-lto -q
    input=$BENCH_DIR/synth-input.data
    [ -e "$input" ] || "$perfdata" synth -o "$input" --size 800MB \
        --callchain 8 --processes 8 --threads-per-process 4 --dsos 8 --cpus 2
fi
input=${input:-${1:-$BENCH_DIR/big.data}}
prepare "$input"
