#!/usr/bin/env bash
# Peak RSS of every command on compression bombs (issue #24, defect 4), each read from
# the file and from stdin:
#   - window:   a 9 KB pipe stream whose zstd frame declares a 128 MiB window
#               (`zstd --long=27`) and expands to a 160 MiB AUXTRACE: refused by name;
#   - win32m:   the same with a 32 MiB window (`zstd --long=25`, perf -z 20's), 3 GiB;
#   - aux512k:  a 3 GiB AUXTRACE in COMPRESSED records of 1000 zstd bytes each (each
#               expands to about 28 MiB), zstd -1: a 512 KiB window, perf -z's default;
#   - aux8m:    the same at zstd -19: an 8 MiB window, the largest read;
#   - synth:    `perfdata synth --aux-payload 3G --compress` (batches of 2 MiB).
# The streams are perf record -z's pipe header records (fixtures/pipe-compressed.data up
# to its first COMPRESSED record) and then the bomb's records, made with python3 and the
# zstd tool. Prints a Markdown table for docs/benchmarks.md: peak RSS in MiB, and the exit status
# where it is not the expected one (0; 1 for the refused windows); `*`: refused because
# the recording has no sample (the exports that need one).
#
#   bench/bombs.sh              (needs python3, zstd and about 4 GiB of free disk)
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-bombs}
mkdir -p "$BENCH_DIR"
cargo build --profile bench-lto -q
perfdata=$PWD/target/bench-lto/perfdata
out=$BENCH_DIR/out

# bomb NAME PAYLOAD_BYTES PIECE ZSTD_ARGS...: $BENCH_DIR/NAME.data, a pipe stream whose
# COMPRESSED records (PIECE zstd bytes each) expand to one AUXTRACE of PAYLOAD_BYTES
# zeros, compressed as a stream of unknown size by `zstd ZSTD_ARGS`.
bomb() {
    local name=$1 len=$2 piece=$3; shift 3
    [ -e "$BENCH_DIR/$name.data" ] && return
    python3 - "$BENCH_DIR/$name.data" "$len" "$piece" "$@" <<'PY'
import struct, subprocess, sys, threading
path, n, piece, zargs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
fixture = open('fixtures/pipe-compressed.data', 'rb').read()
at = 16
while struct.unpack_from('<I', fixture, at)[0] != 81:
    at += struct.unpack_from('<H', fixture, at + 6)[0]
z = subprocess.Popen(['zstd', '-q', '-c'] + zargs, stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE)
got = []
reader = threading.Thread(target=lambda: got.append(z.stdout.read()))
reader.start()
# AUXTRACE: header, size, offset, reference, idx, tid, cpu, reserved.
z.stdin.write(struct.pack('<IHHQQQIIII', 71, 0, 48, n, 0, 0, 0, 0, 0, 0))
zeros, left = bytes(1 << 20), n
while left:
    z.stdin.write(zeros[:min(left, len(zeros))])
    left -= min(left, len(zeros))
z.stdin.close()
reader.join()
assert z.wait() == 0
frame = got[0]
body = bytearray(fixture[:at])
for i in range(0, len(frame), piece):
    part = frame[i:i + piece]
    body += struct.pack('<IHH', 81, 0, 8 + len(part)) + part
body += struct.pack('<IHH', 68, 0, 8)
open(path, 'wb').write(body)
PY
}

echo "generating the bombs ..." >&2
bomb window $((160 << 20)) 60000 --long=27 -1
bomb win32m $((3 << 30)) 1000 --long=25 -1
bomb aux512k $((3 << 30)) 1000 -1
bomb aux8m $((3 << 30)) 1000 -19
[ -e "$BENCH_DIR/synth.data" ] ||
    "$perfdata" synth --samples 1000 --aux-payload 3G --compress -o "$BENCH_DIR/synth.data"
bombs=(window win32m aux512k aux8m synth)

# cell NAME FROM CMD...: "RSS" (MiB) of CMD on bomb NAME read from FROM (file or stdin),
# with ", exit N" when the status is not the one expected.
cell() {
    local name=$1 from=$2; shift 2
    local f=$BENCH_DIR/$name.data status=0 want=0 kb
    case $name in window | win32m) want=1 ;; esac
    rm -f "$out"
    if [ "$from" = file ]; then
        /usr/bin/time -o "$BENCH_DIR/time.txt" -f '%M' "$perfdata" "$@" "$f" \
            >/dev/null 2>"$BENCH_DIR/err.txt" || status=$?
    else
        /usr/bin/time -o "$BENCH_DIR/time.txt" -f '%M' "$perfdata" "$@" - <"$f" \
            >/dev/null 2>"$BENCH_DIR/err.txt" || status=$?
    fi
    rm -f "$out"
    kb=$(tail -n 1 "$BENCH_DIR/time.txt")
    if [ "$want" = 1 ] && [ "$status" = 1 ] && ! grep -q "window" "$BENCH_DIR/err.txt" &&
        [ "${1}" != check ]; then
        status="1 without naming the window"
    fi
    # The AUXTRACE bombs other than synth's hold no sample: exports that need one say so.
    if [ "$status" = 1 ] && grep -q "has no samples" "$BENCH_DIR/err.txt"; then
        printf '%s*' "$(( (kb + 1023) / 1024 ))"
        return
    fi
    printf '%s' "$(( (kb + 1023) / 1024 ))"
    [ "$status" = "$want" ] || printf ', exit %s' "$status"
}

commands=(
    "stats" "check" "dump --json" "info" "report" "buildid list"
    "convert -o $out" "convert --decompress -o $out" "convert --to-file -o $out"
    "strip --drop MMAP -o $out" "anonymize --salt s -o $out"
    "buildid remap --path /=/x/ -o $out"
    "export --format folded -o $out" "export --format pprof -o $out"
    "export --format speedscope -o $out" "export --format firefox -o $out"
    "export --format flamegraph -o $out" "flamegraph -o $out"
)
echo "perfdata on compression bombs: peak RSS (MiB) from the file / from stdin;" \
    "$(date +%F), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
header="| command |"
rule="|---|"
for b in "${bombs[@]}"; do
    header+=" $b ($(stat -c %s "$BENCH_DIR/$b.data") B) |"
    rule+="---|"
done
echo "$header"
echo "$rule"
for c in "${commands[@]}"; do
    read -ra cmd <<<"$c"
    row="| ${c/$out/OUT} |"
    for b in "${bombs[@]}"; do
        row+=" $(cell "$b" file "${cmd[@]}") / $(cell "$b" stdin "${cmd[@]}") |"
    done
    echo "$row"
done
