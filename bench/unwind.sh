#!/usr/bin/env bash
# Benchmark: `perfdata report --children` against `perf report --stdio --children` on a
# `perf record --call-graph dwarf` recording of at least 100 MB: both unwind every
# sample's 8 KiB stack copy (perf 6.1 with libunwind, perfdata with framehop) and list
# the functions inlined at the unwound frames from the binaries' DWARF (perf 6.1's
# default, its "(inlined)" rows; perf runs binutils' addr2line, perfdata the addr2line
# crate); and `perfdata unwind` of it into a file (MB/s of input). Prints a Markdown
# table for docs/benchmarks.md.
#
#   bench/unwind.sh [FILE]
#   WORKLOAD=python bench/unwind.sh
#
# Without FILE it records one into $BENCH_DIR (default /tmp/perfdata-bench-unwind):
# `perf record --call-graph dwarf -e task-clock -c 100000` (a sample every 100 us of
# CPU time, each with its 8 KiB stack copy) of tests/unwind/levels.c built `gcc -O2
# -fomit-frame-pointer` (ROUNDS rounds, default 3000): about 270 MB here. One process:
# with a second one mapping libc elsewhere (`ls` run beside it), perf 6.1 stops its
# walks at libc's memset in the first for most samples (perfdata does not; perf does
# not either on the process recorded alone), and so does less work.
#
# WORKLOAD=python records bench/unwind-work.py under python3 instead (ROUNDS ignored;
# about 110 MB): deeper C stacks through libpython, its extension modules and libc, and
# inlined functions in libpython's and libc's DWARF.
#
# The commands are paired: each runs once in turn, RUNS times (default 5), on a warm
# page cache, output to /dev/null; the table shows the median wall time, the median CPU
# time (user + system: steadier than wall time on a shared machine) and the largest
# peak RSS. The reports are measured without the call graph (`-g none`: the same rows
# from both) and with it (each tool's default graph), and without the inlined
# functions (`--no-inline`) to show what they cost. Then perf's and perfdata's rows of
# `-n -g none` are compared (bench/children_equal.py).
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-unwind}
RUNS=${RUNS:-5}
ROUNDS=${ROUNDS:-3000}
mkdir -p "$BENCH_DIR"
# PERFDATA=target/release/perfdata measures another build (the fat-LTO build takes
# minutes on a shared machine).
perfdata=${PERFDATA:-target/bench-lto/perfdata}
[ -n "${PERFDATA:-}" ] || cargo build --profile bench-lto -q -p perfdata-cli

WORKLOAD=${WORKLOAD:-levels}
input=${1:-}
if [ -z "$input" ] && [ "$WORKLOAD" = python ]; then
    input=$BENCH_DIR/python-dwarf.data
    if [ ! -e "$input" ]; then
        echo "recording $input ..." >&2
        perf record -q --call-graph dwarf -e task-clock -c 100000 -m 4096 -o "$input" -- \
            python3 bench/unwind-work.py > /dev/null
    fi
elif [ -z "$input" ]; then
    input=$BENCH_DIR/dwarf.data
    if [ ! -e "$input" ]; then
        gcc -O2 -fomit-frame-pointer -o "$BENCH_DIR/levels" perfdata-cli/tests/unwind/levels.c
        echo "recording $input ..." >&2
        perf record -q --call-graph dwarf -e task-clock -c 100000 -m 4096 -o "$input" -- \
            "$BENCH_DIR/levels" "$ROUNDS" > /dev/null
    fi
fi
cat "$input" > /dev/null

out=$BENCH_DIR/unwound.data

# one CMD...: "wall-seconds cpu-seconds kib" of one run (cpu: user + system), output
# discarded, $out removed before.
one() {
    local start end
    rm -f "$out"
    start=$(date +%s%N)
    /usr/bin/time -o "$BENCH_DIR/time.txt" -f '%U %S %M' "$@" > /dev/null 2>&1
    end=$(date +%s%N)
    awk -v n=$((end - start)) '{ printf "%.3f %.2f %d\n", n / 1e9, $1 + $2, $3 }' \
        "$BENCH_DIR/time.txt"
}

# median of the numbers on standard input.
median() {
    sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

samples=$("$perfdata" stats "$input" | awk '$1 == "SAMPLE" { print $3; exit }')
size=$(stat -c %s "$input")
echo "input: $input, $((size / 1048576)) MiB, ${samples:-?} samples; $RUNS paired runs"
"$perfdata" -v report --children "$input" 2>&1 >/dev/null | grep -E "unwound" || true
echo
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
sort_keys="--sort comm,dso,sym"
names=(
    "perfdata report --children -g none"
    "perf report --stdio --children -g none"
    "perfdata report --children"
    "perf report --stdio --children"
    "perfdata report --no-inline --children -g none"
    "perf report --stdio --no-inline --children -g none"
    "perfdata unwind -o FILE"
)
cmds=(
    "$perfdata report --children -g none $sort_keys $input"
    "perf report --stdio --children -g none $sort_keys -i $input"
    "$perfdata report --children $sort_keys $input"
    "perf report --stdio --children $sort_keys -i $input"
    "$perfdata report --no-inline --children -g none $sort_keys $input"
    "perf report --stdio --no-inline --children -g none $sort_keys -i $input"
    "$perfdata unwind $input -o $out"
)
for _ in $(seq "$RUNS"); do
    for i in "${!cmds[@]}"; do
        # shellcheck disable=SC2086 # the command's words
        one ${cmds[$i]} >> "$BENCH_DIR/runs.$i"
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| tool | median wall time | median CPU time | peak RSS |"
echo "|---|---|---|---|"
walls=() cpus=()
for i in "${!cmds[@]}"; do
    walls[i]=$(cut -d' ' -f1 "$BENCH_DIR/runs.$i" | median)
    cpus[i]=$(cut -d' ' -f2 "$BENCH_DIR/runs.$i" | median)
    kb=$(cut -d' ' -f3 "$BENCH_DIR/runs.$i" | sort -n | tail -n 1)
    extra=""
    if [ "$i" = 6 ]; then
        extra=" ($(awk -v s="$size" -v t="${walls[i]}" 'BEGIN { printf "%.0f", s / t / 1e6 }') MB/s of input)"
    fi
    printf '| %s | %s s%s | %s s | %s MiB |\n' "${names[$i]}" "${walls[i]}" "$extra" \
        "${cpus[i]}" "$((kb / 1024))"
    rm -f "$BENCH_DIR/runs.$i"
done
echo
for pair in "0 1" "2 3" "4 5"; do
    read -r a b <<< "$pair"
    awk -v n="${names[a]}" -v wa="${walls[a]}" -v wb="${walls[b]}" -v ca="${cpus[a]}" \
        -v cb="${cpus[b]}" 'BEGIN { printf "%s: %.1fx faster than perf in wall time, %.1fx in CPU time\n", n, wb / wa, (ca > 0 ? cb / ca : 0) }'
done
"$perfdata" unwind "$input" -o "$out" 2>/dev/null
echo "unwound: $(stat -c %s "$out") bytes"
echo
perf report --stdio --children -n -g none $sort_keys -i "$input" \
    > "$BENCH_DIR/perf-rows.txt" 2> /dev/null
"$perfdata" report --children -n -g none $sort_keys "$input" \
    > "$BENCH_DIR/our-rows.txt" 2> /dev/null
python3 bench/children_equal.py "$BENCH_DIR/perf-rows.txt" "$BENCH_DIR/our-rows.txt"
