#!/usr/bin/env python3
"""The README's query in DuckDB over a `perfdata export --format parquet` directory: each
symbol's period, largest first, as `PERIOD<TAB>SYMBOL` lines.

    pip install duckdb
    perfdata export --format parquet recordings/ -o profiles
    python3 docs/parquet-query.py profiles [LIMIT]
"""
import sys

import duckdb

QUERY = "SELECT symbol, sum(period) FROM samples GROUP BY symbol ORDER BY 2 DESC"


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    d = sys.argv[1].replace("'", "''")
    limit = int(sys.argv[2]) if len(sys.argv) == 3 else None
    con = duckdb.connect()
    # hive_partitioning: an export with --partition host,date has them in its folders.
    con.execute(
        "CREATE VIEW samples AS SELECT * FROM read_parquet("
        f"'{d}/samples/**/*.parquet', hive_partitioning = true, union_by_name = true)"
    )
    rows = con.execute(QUERY).fetchall()
    for symbol, period in rows[:limit]:
        print(f"{period}\t{symbol}")


if __name__ == "__main__":
    main()
