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
# --threads-per-process 2 --dsos 6 --cpus 4 --dso-dir DSOS/rN` (seeds 1..COUNT: the
# same bytes on every machine, and each a recording of its own id; each writes its own
# six DSOs with symbol tables, which the export finds by the paths the recording maps,
# so the query groups real function names), and `--size BIG` of the same shape with
# `--functions 50 --ips-per-function 8`: a long recording of a bounded set of stacks, as
# a real one is (at most 6 x 50 x 8 = 2,400 distinct stacks, where any byte of a
# function sampled allows one per byte of their text, some 600,000). They are
# made in $BENCH_DIR (default /tmp/perfdata-bench-parquet) and removed at the end, the
# big one as soon as it is measured. The big one needs about 1.3 times BIG of disk (its
# spooled samples and its tables besides): the script stops unless MIN_FREE_GB
# (default 15) GB would stay free.
# PROFILE picks the build (default bench-lto, as the other benchmarks; `release` builds
# faster); PERFDATA=BINARY runs that one, built already. Each export runs RUNS times
# (default 3), each report REPORT_RUNS times (default 1: report of the 1,000 takes
# minutes), outputs removed before each run; the table shows the median wall and CPU
# time and the largest peak RSS, and the load average before each row. The query runs
# QUERY_RUNS times (default 5) in one DuckDB process, timed around the query alone (the
# views made first); needs `pip install duckdb`.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/perfdata-bench-parquet}
COUNT=${COUNT:-1000}
BIG=${BIG:-4GB}
RUNS=${RUNS:-3}
REPORT_RUNS=${REPORT_RUNS:-1}
QUERY_RUNS=${QUERY_RUNS:-5}
PROFILE=${PROFILE:-bench-lto}
MIN_FREE_GB=${MIN_FREE_GB:-15}
mkdir -p "$BENCH_DIR/many" "$BENCH_DIR/dsos"
if [ -z "${PERFDATA:-}" ]; then
    cargo build --profile "$PROFILE" -q -p perfdata-cli --features parquet
fi
perfdata=${PERFDATA:-$PWD/target/$PROFILE/perfdata}
shape=(--processes 4 --threads-per-process 2 --dsos 6 --cpus 4)
synth_opts=(--callchain 8 "${shape[@]}")

# shellcheck source=bench/measure.sh
source bench/measure.sh

for i in $(seq "$COUNT"); do
    f=$BENCH_DIR/many/r$i.data
    mkdir -p "$BENCH_DIR/dsos/r$i"
    [ -e "$f" ] || "$perfdata" synth -o "$f" --size 1MB --seed "$i" "${synth_opts[@]}" \
        --dso-dir "$BENCH_DIR/dsos/r$i"
done
many_bytes=$(cat "$BENCH_DIR"/many/*.data | wc -c)
many_samples=$("$perfdata" stats "$BENCH_DIR/many/r1.data" | awk '$1 == "SAMPLE" { print $3; exit }')

# rate BYTES SECONDS: MB/s (10^6 bytes).
rate() {
    awk -v b="$1" -v s="$2" 'BEGIN { printf "%.1f", b / 1e6 / s }'
}
load() {
    cut -d' ' -f1 /proc/loadavg
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
echo "| run | input | wall time | CPU time | rate (wall / CPU) | peak RSS | load before |"
echo "|---|---|---|---|---|---|---|"
# export_into DIR INPUT...: the export into DIR made empty first (measure removes files
# only); exec, so that the peak RSS measured is perfdata's.
export_into() {
    bash -c 'rm -rf "$1"; dir=$1; shift; exec "$perfdata" export --format parquet "$@" -o "$dir"' \
        export_into "$@"
}
export -f export_into
out=$BENCH_DIR/none
# row NAME INPUT BYTES: a table row of the last measure.
row() {
    printf '| %s | %s | %s s | %s s | %s / %s MB/s | %s MiB | %s |\n' "$1" "$2" "$MEDIAN" "$CPU" \
        "$(rate "$3" "$MEDIAN")" "$(rate "$3" "$CPU")" "$RSS_MIB" "$LOAD"
}
cat "$BENCH_DIR"/many/*.data > /dev/null
LOAD=$(load)
measure bash -c 'export_into "$0/pq" "$0/many"' "$BENCH_DIR"
row "export --format parquet" "$COUNT x 1 MB" "$many_bytes"
pq_bytes=$(du -sb "$BENCH_DIR/pq" | cut -f1)
LOAD=$(load)
RUNS=$REPORT_RUNS measure bash -c report_all
row "report --sort comm,dso,sym, one process per file" "$COUNT x 1 MB" "$many_bytes"

big=$BENCH_DIR/big.data
mkdir -p "$BENCH_DIR/dsos/big"
free_gb=$(df -BG --output=avail "$BENCH_DIR" | tail -n 1 | tr -dc 0-9)
big_gb=$(awk -v s="$BIG" 'BEGIN { n = s + 0; u = toupper(substr(s, length(n) + 1, 1));
    print (u == "G" ? n : u == "T" ? n * 1024 : 1) }')
if [ $((free_gb - big_gb * 13 / 10)) -lt "$MIN_FREE_GB" ]; then
    echo "only ${free_gb} GB free: $BIG would leave less than $MIN_FREE_GB GB; set BIG smaller" >&2
    exit 1
fi
[ -e "$big" ] || "$perfdata" synth -o "$big" --size "$BIG" "${synth_opts[@]}" \
    --functions 50 --ips-per-function 8 --dso-dir "$BENCH_DIR/dsos/big"
big_bytes=$(stat -c %s "$big")
big_samples=$("$perfdata" stats "$big" | awk '$1 == "SAMPLE" { print $3; exit }')
big_out=$BENCH_DIR/big-pq
cat "$big" > /dev/null
LOAD=$(load)
measure bash -c 'export_into "$0" "$1"' "$big_out" "$big"
big_stacks=$(python3 -c 'import glob, sys
import pyarrow.parquet as pq
print(sum(pq.ParquetFile(f).metadata.num_rows for f in glob.glob(sys.argv[1] + "/stacks/*.parquet")))' "$big_out")
row "export --format parquet" "$((big_bytes / 1000000)) MB, $big_samples samples, $big_stacks stacks" "$big_bytes"
big_pq=$(du -sb "$big_out" | cut -f1)
rm -rf "$big_out"
LOAD=$(load)
RUNS=$REPORT_RUNS measure "$perfdata" report --sort comm,dso,sym "$big"
row "report --sort comm,dso,sym" "the same" "$big_bytes"
rm -f "$big"

echo
echo "tables: $((pq_bytes / 1000000)) MB for the $COUNT recordings, $((big_pq / 1000000)) MB for the big one"
echo
python3 - "$BENCH_DIR/pq" "$QUERY_RUNS" <<'EOF'
import pathlib, sys, time
import duckdb
d, runs = sys.argv[1], int(sys.argv[2])
con = duckdb.connect()
con.execute(f"CREATE VIEW samples AS SELECT * FROM read_parquet('{d}/samples/**/*.parquet', hive_partitioning = true)")
q = "SELECT symbol, sum(period) FROM samples GROUP BY symbol ORDER BY 2 DESC"
n = con.execute("SELECT count(*) FROM samples").fetchall()[0][0]
times = []
for _ in range(runs):
    t = time.perf_counter()
    rows = con.execute(q).fetchall()
    times.append(time.perf_counter() - t)
times.sort()
files = len(list(pathlib.Path(d, "samples").glob("*.parquet")))
print(f"DuckDB {duckdb.__version__}, `{q}` over {n} samples in {files} files: "
      f"median {times[len(times) // 2]:.3f} s of {runs} runs ({times[0]:.3f} to {times[-1]:.3f}), "
      f"{len(rows)} symbols; the first: {rows[:3]}")
n = con.execute(f"SELECT count(*) FROM read_parquet('{d}/stacks/*.parquet')").fetchall()[0][0]
print(f"{n} distinct stacks")
EOF
rm -rf "$BENCH_DIR"
