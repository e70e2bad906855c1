#!/usr/bin/env bash
# Benchmark: peak RSS of `perfdata script` decoding an Intel PT trace larger than the
# 256 MiB perfdata once held in memory (the AUX buffers are now read from the file as the
# decoder reaches them: memory must not grow with the trace). Prints a Markdown table
# for docs/benchmarks.md.
#
#   bench/intel_pt.sh        (PERFDATA_CORPUS must name the corpus)
#
# Inputs, made in $BENCH_DIR (default /tmp/perfdata-bench-intel-pt) when missing: the
# corpus's piped Intel PT recording with its AUXTRACE records (two buffers, 141 KiB)
# appended again and again up to SIZE bytes (a pipe stream stays valid with records
# added at its end), converted to file mode by `perfdata convert --to-file`. The copies
# have the first buffers' times, so the decoding is no perf oracle: it is the memory
# that is measured.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-intel-pt}
RUNS=${RUNS:-3}
mkdir -p "$BENCH_DIR"
perfdata=$PWD/target/bench-lto/perfdata
cargo build --profile bench-lto -q -p perfdata-cli
piped=${PERFDATA_CORPUS:?}/google-perf.data.piped.intel_pt-4.14

# make SIZE: the recording with about SIZE bytes of trace.
make() {
    local out=$BENCH_DIR/pt-$1.data
    [ -e "$out" ] && return
    python3 - "$piped" "$BENCH_DIR/pt.pipe" "$1" <<'PY'
import struct, sys
src, out, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = open(src, 'rb').read()
pos, aux = 16, []
while pos + 8 <= len(b):
    ty, _misc, size = struct.unpack_from('<IHH', b, pos)
    if size == 0:
        break
    n = size + (struct.unpack_from('<Q', b, pos + 8)[0] if ty == 71 else 0)
    if ty == 71:
        aux.append(b[pos:pos + n])
    pos += n
with open(out, 'wb') as f:
    f.write(b[:pos])
    total = pos
    while total < target:
        for a in aux:
            f.write(a)
            total += len(a)
PY
    "$perfdata" convert --to-file "$BENCH_DIR/pt.pipe" -o "$out"
    rm "$BENCH_DIR/pt.pipe"
}

# shellcheck source=bench/measure.sh
out=$BENCH_DIR/none
source bench/measure.sh
echo "| trace | recording | lines listed | wall time (median) | peak RSS |"
echo "|---|---|---|---|---|"
for size in $((150 << 20)) $((600 << 20)); do
    make "$size"
    input=$BENCH_DIR/pt-$size.data
    lines=$("$perfdata" script -q -i "$input" | wc -l)
    measure "$perfdata" script -q -i "$input"
    printf '| %s MiB | %s MiB | %s | %s s | %s MiB |\n' $((size >> 20)) \
        $(($(stat -c %s "$input") >> 20)) "$lines" "$MEDIAN" "$RSS_MIB"
done
