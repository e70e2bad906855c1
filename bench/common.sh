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
    cargo build --release -q
    cat "$input" > /dev/null
}

# run NAME CMD...: median wall seconds (to the millisecond) and max RSS (MiB) over RUNS
# runs.
run() {
    local name=$1; shift
    local times=() rss=0
    for _ in $(seq "$RUNS"); do
        rm -f "$out"; sync
        local start end kb
        start=$(date +%s%N)
        /usr/bin/time -o "$BENCH_DIR/time.txt" -f '%M' "$@" >/dev/null 2>&1
        end=$(date +%s%N)
        # Wall time to the millisecond (time's %e has hundredths).
        times+=("$(awk -v n=$((end - start)) 'BEGIN { printf "%.3f", n / 1e9 }')")
        kb=$(tail -n 1 "$BENCH_DIR/time.txt")
        [ "$kb" -gt "$rss" ] && rss=$kb
    done
    local median
    median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")
    printf '| %s | %s s | %s MiB |\n' "$name" "$median" "$(( rss / 1024 ))"
}

RUNS=${RUNS:-5}
mkdir -p "$BENCH_DIR"
out=$BENCH_DIR/out.data
perfdata=target/release/perfdata
if [ -z "${1:-}" ] && { [ "${BENCH_INPUT:-}" = synth ] || ! command -v perf >/dev/null; }; then
    cargo build --release -q
    input=$BENCH_DIR/synth-input.data
    [ -e "$input" ] || "$perfdata" synth -o "$input" --size 800MB \
        --callchain 8 --processes 8 --threads-per-process 4 --dsos 8 --cpus 2
fi
input=${input:-${1:-$BENCH_DIR/big.data}}
prepare "$input"
