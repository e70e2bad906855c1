#!/usr/bin/env bash
# Parquet export at scale: `perfdata export --format parquet` of COUNT synthetic
# recordings of about 1 MB each (default 1000) and of one of BIG (default 4GB), peak RSS
# and rate in MB/s of input beside `perfdata report`'s on the same inputs, and DuckDB's
# time for the README's query over the COUNT recordings' tables. Prints Markdown for
# docs/benchmarks.md.
#
#   bench/parquet.sh
#
# The inputs are `perfdata synth --size 1MB --seed N --callchain 8 --processes 4
# --threads-per-process 2 --dsos 6 --cpus 4` (seeds 1..COUNT: the same bytes on every
# machine, and each a recording of its own id) and `--size BIG` with `--callchain 2`,
# made in $BENCH_DIR (default /tmp/perfdata-bench-parquet) and removed at the end, the
# big one as soon as it is measured. The big one needs about 1.8 times BIG of disk (its
# spooled samples and its tables besides): check `df` first, and set BIG smaller
# where that would leave less than 15 GB free. PROFILE picks the build (default bench-lto, as the other
# benchmarks; `release` builds faster); PERFDATA=BINARY runs that one, built already. Each command runs RUNS times (default 1), its
# output removed before each run; the table shows the median wall and CPU time and the
# largest peak RSS. The query runs QUERY_RUNS times (default 5) in one DuckDB process,
# timed around the query alone (the views made first); needs `pip install duckdb`.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-parquet}
COUNT=${COUNT:-1000}
BIG=${BIG:-4GB}
RUNS=${RUNS:-1}
QUERY_RUNS=${QUERY_RUNS:-5}
PROFILE=${PROFILE:-bench-lto}
mkdir -p "$BENCH_DIR/many"
if [ -z "${PERFDATA:-}" ]; then
    cargo build --profile "$PROFILE" -q -p perfdata-cli
fi
perfdata=${PERFDATA:-$PWD/target/$PROFILE/perfdata}
shape=(--processes 4 --threads-per-process 2 --dsos 6 --cpus 4)
synth_opts=(--callchain 8 "${shape[@]}")

# shellcheck source=bench/measure.sh
source bench/measure.sh

for i in $(seq "$COUNT"); do
    f=$BENCH_DIR/many/r$i.data
    [ -e "$f" ] || "$perfdata" synth -o "$f" --size 1MB --seed "$i" "${synth_opts[@]}"
done
many_bytes=$(cat "$BENCH_DIR"/many/*.data | wc -c)
many_samples=$("$perfdata" stats "$BENCH_DIR/many/r1.data" | awk '$1 == "SAMPLE" { print $3; exit }')

# rate BYTES SECONDS: MB/s (10^6 bytes).
rate() {
    awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / 1e6 / s }'
}

# report_all: perfdata report of every one of the COUNT recordings, one process each.
report_all() {
    for f in "$BENCH_DIR"/many/*.data; do
        "$perfdata" report --sort comm,dso,sym "$f" > /dev/null
    done
}
export -f report_all
export perfdata BENCH_DIR

echo "inputs: $COUNT recordings, $((many_bytes / 1000000)) MB in all (about $many_samples samples each); one of $BIG"
echo
echo "| run | input | wall time | CPU time | rate | peak RSS |"
echo "|---|---|---|---|---|---|"
# export_into DIR INPUT...: the export into DIR made empty first (measure removes files
# only); exec, so that the peak RSS measured is perfdata's.
export_into() {
    bash -c 'rm -rf "$1"; dir=$1; shift; exec "$perfdata" export --format parquet "$@" -o "$dir"' \
        export_into "$@"
}
export -f export_into
out=$BENCH_DIR/none
cat "$BENCH_DIR"/many/*.data > /dev/null
measure bash -c 'export_into "$0/pq" "$0/many"' "$BENCH_DIR"
printf '| export --format parquet | %s x 1 MB | %s s | %s s | %s MB/s | %s MiB |\n' \
    "$COUNT" "$MEDIAN" "$CPU" "$(rate "$many_bytes" "$MEDIAN")" "$RSS_MIB"
pq_bytes=$(du -sb "$BENCH_DIR/pq" | cut -f1)
measure bash -c report_all
printf '| report --sort comm,dso,sym, one process per file | %s x 1 MB | %s s | %s s | %s MB/s | %s MiB |\n' \
    "$COUNT" "$MEDIAN" "$CPU" "$(rate "$many_bytes" "$MEDIAN")" "$RSS_MIB"

big=$BENCH_DIR/big.data
# Two-frame callchains: random eight-frame ones are a distinct stack per sample, whose
# spool alone would take some 24 GB of disk for 4 GB of input.
[ -e "$big" ] || "$perfdata" synth -o "$big" --size "$BIG" --callchain 2 "${shape[@]}"
big_bytes=$(stat -c %s "$big")
big_samples=$("$perfdata" stats "$big" | awk '$1 == "SAMPLE" { print $3; exit }')
big_out=$BENCH_DIR/big-pq
measure bash -c 'export_into "$0" "$1"' "$big_out" "$big"
printf '| export --format parquet | %s MB, %s samples | %s s | %s s | %s MB/s | %s MiB |\n' \
    "$((big_bytes / 1000000))" "$big_samples" "$MEDIAN" "$CPU" "$(rate "$big_bytes" "$MEDIAN")" "$RSS_MIB"
big_pq=$(du -sb "$big_out" | cut -f1)
rm -rf "$big_out"
measure "$perfdata" report --sort comm,dso,sym "$big"
printf '| report --sort comm,dso,sym | %s MB | %s s | %s s | %s MB/s | %s MiB |\n' \
    "$((big_bytes / 1000000))" "$MEDIAN" "$CPU" "$(rate "$big_bytes" "$MEDIAN")" "$RSS_MIB"
rm -f "$big"

echo
echo "tables: $((pq_bytes / 1000000)) MB for the $COUNT recordings, $((big_pq / 1000000)) MB for the big one"
echo
python3 - "$BENCH_DIR/pq" "$QUERY_RUNS" <<'EOF'
import sys, time
import duckdb
d, runs = sys.argv[1], int(sys.argv[2])
con = duckdb.connect()
con.execute(f"CREATE VIEW samples AS SELECT * FROM read_parquet('{d}/samples/**/*.parquet', hive_partitioning = true)")
q = "SELECT symbol, sum(period) FROM samples GROUP BY symbol ORDER BY 2 DESC"
n = con.execute("SELECT count(*) FROM samples").fetchone()[0]
times = []
for _ in range(runs):
    t = time.perf_counter()
    rows = con.execute(q).fetchall()
    times.append(time.perf_counter() - t)
times.sort()
print(f"DuckDB {duckdb.__version__}, `{q}` over {n} samples in "
      f"{len(list(__import__('pathlib').Path(d, 'samples').glob('*.parquet')))} files: "
      f"median {times[len(times) // 2]:.3f} s of {runs} runs, {len(rows)} symbols")
EOF
rm -rf "$BENCH_DIR"
