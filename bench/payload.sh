#!/usr/bin/env bash
# Memory with a 3 GiB AUXTRACE payload (issue #9, defect 1): peak RSS of stats, check,
# dump --json and convert on one recording made by `perfdata synth --aux-payload`, read
#   - as a plain file (3 GiB on disk),
#   - as a small file whose COMPRESSED records expand to it,
#   - from a stdin pipe, plain and compressed (synth writing into the reader),
# then the small compressed file again under `prlimit --as=268435456` (256 MiB of
# address space). Every conversion's payload is checked against the plain input's by
# SHA-256 of the payload bytes, cut out of the files with tail/head at the record's
# offset. Prints a Markdown table for docs/benchmarks.md.
#
#   bench/payload.sh [SIZE]        (default 3G; needs about 3 x SIZE of free disk)
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-payload}
SIZE=${1:-3G}
mkdir -p "$BENCH_DIR"
cargo build --profile bench-lto -q
perfdata=$PWD/target/bench-lto/perfdata
plain=$BENCH_DIR/plain.data
small=$BENCH_DIR/compressed.data
out=$BENCH_DIR/out.data
limit=268435456
synth=("$perfdata" synth --samples 1000 --aux-payload "$SIZE")

# payload_hash FILE: SHA-256 of the AUXTRACE payload of FILE (a file or a pipe stream,
# one AUXTRACE record), found at the offset `dump --json` gives the record.
payload_hash() {
    local off len
    read -r off len < <("$perfdata" dump --json "$1" | grep '"type":"AUXTRACE"' |
        sed -E 's/^\{"offset":([0-9]+),.*"size":([0-9]+),"body".*"payload_len":([0-9]+).*/\1 \2 \3/' |
        awk '{ print $1 + $2, $3 }')
    tail -c +$((off + 1)) "$1" | head -c "$len" | sha256sum | cut -d' ' -f1
}

# row NAME STATUS: one table row (exit status, wall time, peak RSS of the measured
# command), failing the script when the command failed.
row() {
    local name=$1 status=$2
    read -r wall kb < <(tail -n 1 "$BENCH_DIR/time.txt")
    printf '| %s | %s | %s s | %s MiB (%s KiB) |\n' "$name" "$status" "$wall" \
        "$((kb / 1024))" "$kb"
    [ "$status" = 0 ] || { echo "failed: $name" >&2; exit 1; }
}
# measure NAME CMD...: run CMD under /usr/bin/time.
measure() {
    local name=$1; shift
    local status=0
    rm -f "$out"
    /usr/bin/time -o "$BENCH_DIR/time.txt" -f '%e %M' "$@" >/dev/null 2>"$BENCH_DIR/err.txt" ||
        status=$?
    row "$name" "$status"
}
# measure_stdin NAME GEN_ARGS -- CMD...: CMD reads `synth --pipe GEN_ARGS -o -` on
# stdin; only CMD, the reader, is measured (with pipefail, a writer that could not
# write everything fails the row too).
measure_stdin() {
    local name=$1; shift
    local gen=()
    while [ "$1" != -- ]; do gen+=("$1"); shift; done
    shift
    local status=0
    rm -f "$out"
    "${synth[@]}" --pipe "${gen[@]}" -o - |
        /usr/bin/time -o "$BENCH_DIR/time.txt" -f '%e %M' "$@" >/dev/null \
            2>"$BENCH_DIR/err.txt" || status=$?
    row "$name" "$status"
}

echo "generating: $SIZE payload (plain file, compressed file) ..." >&2
[ -e "$plain" ] || "${synth[@]}" -o "$plain"
[ -e "$small" ] || "${synth[@]}" --compress -o "$small"
want=$(payload_hash "$plain")
# The payload synth means to write (`perfdata-synth`'s `aux` module), computed here
# independently: a 64 KiB block of SplitMix64 words from seed 1 (stream 0xa0c5), each
# copy starting with its index as a little-endian u64.
made=$(python3 - "$(numfmt --from=iec "$SIZE")" <<'PY'
import hashlib, struct, sys
M = (1 << 64) - 1
state = 1 ^ ((0xa0c5 * 0xd1b54a32d192ed03) & M)
def next_u64():
    global state
    state = (state + 0x9e3779b97f4a7c15) & M
    z = state
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    return z ^ (z >> 31)
next_u64()
block = bytearray(b"".join(struct.pack("<Q", next_u64()) for _ in range(8192)))
h, left, i = hashlib.sha256(), int(sys.argv[1]), 0
while left > 0:
    block[:8] = struct.pack("<Q", i)
    h.update(block[: min(left, 65536)])
    left, i = left - 65536, i + 1
print(h.hexdigest())
PY
)
[ "$made" = "$want" ] || { echo "the plain file's payload is $want, synth's is $made" >&2; exit 1; }

echo "perfdata, AUXTRACE payload of $SIZE: plain file $(stat -c %s "$plain") bytes," \
    "compressed file $(stat -c %s "$small") bytes; load average:" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| input: command | exit | wall | peak RSS |"
echo "|---|---|---|---|"
hashes=()
check_payload() {
    local got
    got=$(payload_hash "$1")
    hashes+=("$2: $got")
    [ "$got" = "$want" ] || { echo "payload differs after $2: $got, want $want" >&2; exit 1; }
}
for input in plain small; do
    f=${!input}
    measure "$input file: stats" "$perfdata" stats "$f"
    measure "$input file: check" "$perfdata" check "$f"
    measure "$input file: dump --json" "$perfdata" dump --json "$f"
done
measure "plain file: convert" "$perfdata" convert "$plain" -o "$out"
check_payload "$out" "convert plain"
measure "plain file: convert --to-pipe" "$perfdata" convert --to-pipe "$plain" -o "$out"
check_payload "$out" "convert --to-pipe plain"
measure "small file: convert (compression kept)" "$perfdata" convert "$small" -o "$out"
cmp -s "$small" "$out" || echo "note: the kept-compression copy is not byte-identical" >&2
measure "small file: convert --decompress" "$perfdata" convert --decompress "$small" -o "$out"
check_payload "$out" "convert --decompress small"
for c in "stats -" "check -" "dump --json -"; do
    read -ra cmd <<<"$c"
    measure_stdin "stdin pipe: ${c% -}" -- "$perfdata" "${cmd[@]}"
    measure_stdin "compressed stdin pipe: ${c% -}" --compress -- "$perfdata" "${cmd[@]}"
done
measure_stdin "stdin pipe: convert --to-file" -- "$perfdata" convert --to-file - -o "$out"
check_payload "$out" "convert --to-file stdin"
measure_stdin "compressed stdin pipe: convert --decompress --to-file" --compress -- \
    "$perfdata" convert --decompress --to-file - -o "$out"
check_payload "$out" "convert --decompress --to-file compressed stdin"
for c in "stats" "check" "dump --json" "convert --decompress --to-file"; do
    read -ra cmd <<<"$c"
    measure "small file, prlimit --as=$limit: $c" prlimit --as=$limit "$perfdata" "${cmd[@]}" \
        "$small" $([ "${cmd[0]}" = convert ] && echo "-o $out")
done
check_payload "$out" "convert --decompress under prlimit"
rm -f "$out"
echo
echo "Payload SHA-256 of the plain input: $want (as computed independently of perfdata);"
echo "the same after every conversion:"
printf -- '- %s\n' "${hashes[@]}"
