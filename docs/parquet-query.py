#!/usr/bin/env python3
"""The README's query over a `perfdata export --format parquet` directory, in DuckDB
(default), DataFusion or Spark SQL: each symbol's period, largest first, as
`PERIOD<TAB>SYMBOL` lines.

    pip install duckdb            # or: pip install datafusion / pip install pyspark (Java 17)
    perfdata export --format parquet recordings/ -o profiles
    python3 docs/parquet-query.py profiles [LIMIT]
    python3 docs/parquet-query.py --engine datafusion profiles [LIMIT]
    python3 docs/parquet-query.py --engine spark profiles [LIMIT]

Each engine reads DIR/samples as a table, with the `host=`/`date=` folders of an export
with --partition as columns. Rows of equal period come in the engine's order.
"""
import os
import sys

QUERY = "SELECT symbol, sum(period) FROM samples GROUP BY symbol ORDER BY 2 DESC"


def quoted(path):
    return path.replace("'", "''")


def duckdb_rows(d):
    import duckdb

    con = duckdb.connect()
    # hive_partitioning: an export with --partition host,date has them in its folders.
    con.execute(
        "CREATE VIEW samples AS SELECT * FROM read_parquet("
        f"'{quoted(d)}/samples/**/*.parquet', hive_partitioning = true, union_by_name = true)"
    )
    return con.execute(QUERY).fetchall()


def partition_keys(d):
    """The Hive keys of DIR/samples's folders (an export keeps one layout per folder)."""
    keys = []
    at = os.path.join(d, "samples")
    while True:
        sub = sorted(e for e in os.listdir(at) if "=" in e and os.path.isdir(os.path.join(at, e)))
        if not sub:
            return keys
        keys.append(sub[0].split("=", 1)[0])
        at = os.path.join(at, sub[0])


def datafusion_rows(d):
    from datafusion import SessionContext

    ctx = SessionContext()
    # A listing table reads the folder and its subfolders; the partition columns must
    # be named (as strings: a date folder is text to DataFusion, as `date=...` is).
    cols = [(k, "string") for k in partition_keys(d)]
    ctx.register_parquet(
        "samples", os.path.join(d, "samples") + "/", table_partition_cols=cols,
        file_extension=".parquet",
    )
    table = ctx.sql(QUERY).to_arrow_table()
    return list(zip(*(c.to_pylist() for c in table.columns)))


def spark_rows(d):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("perfdata-parquet-query")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        # Spark finds the host=/date= folders itself (partition discovery) and skips
        # the hidden temporary parts (names starting with '.').
        spark.sql(
            "CREATE TEMPORARY VIEW samples USING parquet "
            f"OPTIONS (path '{quoted(os.path.join(d, 'samples'))}')"
        )
        return [tuple(r) for r in spark.sql(QUERY).collect()]
    finally:
        spark.stop()


ENGINES = {"duckdb": duckdb_rows, "datafusion": datafusion_rows, "spark": spark_rows}


def main():
    args = sys.argv[1:]
    engine = "duckdb"
    if args[:1] == ["--engine"] and len(args) >= 2:
        engine, args = args[1], args[2:]
    if engine not in ENGINES or len(args) not in (1, 2):
        sys.exit(__doc__)
    limit = int(args[1]) if len(args) == 2 else None
    for symbol, period in ENGINES[engine](args[0])[:limit]:
        print(f"{period}\t{symbol}")


if __name__ == "__main__":
    main()
