#!/usr/bin/env bash
# Interrupted conversions leave no file but the old target or the finished one.
#
#   bench/interrupts.sh [RUNS]
#
# Makes a 100 MB recording in $BENCH_DIR (default /tmp/perfdata-interrupts) from
# fixtures/pipe-cpu-clock.data (its SAMPLE records repeated, then made a file), then runs
# RUNS (default 50) conversions (identity, --compress, --to-pipe in turn), each sent
# SIGINT, SIGTERM or SIGKILL at a random moment of its run. After each, the directory
# must hold only the input and out.data, and out.data must be the old target or the
# whole output of an uninterrupted run. Prints the outcomes; exits 1 on any stray file.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-50}
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-interrupts}
rm -rf "$BENCH_DIR"; mkdir -p "$BENCH_DIR/work"
cargo build --profile bench-lto -q
perfdata=$PWD/target/bench-lto/perfdata
work=$BENCH_DIR/work

python3 - fixtures/pipe-cpu-clock.data "$BENCH_DIR/big.pipe" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
at, samples = 16, b''
while at + 8 <= len(data):
    ty, _, size = struct.unpack_from('<IHH', data, at)
    if ty == 9:
        samples += data[at:at + size]
    at += size
with open(sys.argv[2], 'wb') as f:
    f.write(data)
    n = len(data)
    while n < 100 << 20:
        f.write(samples)
        n += len(samples)
PY
"$perfdata" convert --to-file "$BENCH_DIR/big.pipe" -o "$work/in.data"
echo "input: $(( $(stat -c %s "$work/in.data") / 1048576 )) MiB"

convs=("" "--compress" "--to-pipe")
for i in 0 1 2; do
    start=$(date +%s%N)
    # shellcheck disable=SC2086
    "$perfdata" convert ${convs[$i]} "$work/in.data" -o "$BENCH_DIR/ref$i.data"
    dur_ms[i]=$(( ($(date +%s%N) - start) / 1000000 ))
    echo "convert ${convs[$i]:-(identity)}: ${dur_ms[$i]} ms uninterrupted"
done

signals=(INT TERM KILL)
declare -A outcome
stray=0
for run in $(seq "$RUNS"); do
    i=$(( run % 3 ))
    sig=${signals[$(( RANDOM % 3 ))]}
    printf 'old target %s\n' "$run" > "$work/out.data"
    # A moment in the run, up to 10% past its usual end.
    delay_ms=$(( RANDOM % (dur_ms[i] * 11 / 10 + 1) ))
    # shellcheck disable=SC2086
    "$perfdata" convert ${convs[$i]} "$work/in.data" -o "$work/out.data" 2>/dev/null &
    pid=$!
    sleep "$(printf '%d.%03d' $(( delay_ms / 1000 )) $(( delay_ms % 1000 )))"
    kill -s "$sig" "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null && status=0 || status=$?
    files=$(cd "$work" && ls -A | tr '\n' ' ')
    if [ "$files" != "in.data out.data " ]; then
        echo "run $run: SIG$sig after ${delay_ms} ms left: $files"
        stray=$(( stray + 1 ))
        find "$work" -name '.perfdata-*' -delete
    elif grep -qx "old target $run" "$work/out.data" 2>/dev/null; then
        outcome["SIG$sig, old target kept (status $status)"]=$(( ${outcome["SIG$sig, old target kept (status $status)"]:-0} + 1 ))
    elif cmp -s "$work/out.data" "$BENCH_DIR/ref$i.data"; then
        outcome["SIG$sig, finished output (status $status)"]=$(( ${outcome["SIG$sig, finished output (status $status)"]:-0} + 1 ))
    else
        echo "run $run: SIG$sig after ${delay_ms} ms: out.data is neither old nor finished"
        stray=$(( stray + 1 ))
    fi
done
echo
echo "$RUNS interrupted runs:"
for k in "${!outcome[@]}"; do echo "  ${outcome[$k]} x $k"; done | sort -k3
echo "  $stray with a stray or partial file"
rm -rf "$BENCH_DIR"
[ "$stray" -eq 0 ]
