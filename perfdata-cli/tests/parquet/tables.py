"""Read a `perfdata export --format parquet` directory with DuckDB or pyarrow and print
what parquet_engines.rs compares, as JSON on stdout.

    tables.py rows DIR     per recording path: [event, comm, dso, symbol, samples, period]
    tables.py stacks DIR   per recording path: [event, comm, [[symbol, address], ...] leaf first,
                           samples]
    tables.py schema DIR   per table: its columns' pyarrow types and schema_version
    tables.py joins DIR    recordings, samples, stack ids in two parts, samples whose
                           stack is missing, and (host, hostname) pairs seen
"""
import json
import sys


def duckdb_views(con, d):
    # hive_partitioning: a --partition export has host (and date) in its folders.
    for table in ("samples", "stacks", "recordings"):
        con.execute(
            f"CREATE VIEW {table} AS SELECT * FROM read_parquet("
            f"'{d}/{table}/**/*.parquet', hive_partitioning = true, union_by_name = true)"
        )


def rows(d):
    import duckdb

    con = duckdb.connect()
    duckdb_views(con, d)
    out = {}
    q = """
        SELECT r.path, s.event, s.comm, s.dso, s.symbol, count(*), sum(s.period)::BIGINT
        FROM samples s JOIN recordings r USING (recording)
        GROUP BY ALL ORDER BY ALL
    """
    for path, *row in con.execute(q).fetchall():
        out.setdefault(path, []).append(row)
    return out


def stacks(d):
    import duckdb

    con = duckdb.connect()
    duckdb_views(con, d)
    out = {}
    q = """
        SELECT r.path, s.event, s.comm, list_transform(k.frames, lambda f: [f.symbol, f.address::VARCHAR]), count(*)
        FROM samples s
        JOIN stacks k USING (stack_id)
        JOIN recordings r USING (recording)
        GROUP BY ALL ORDER BY ALL
    """
    for path, *row in con.execute(q).fetchall():
        out.setdefault(path, []).append(row)
    return out


def schema(d):
    import glob

    import pyarrow.parquet as pq

    out = {}
    for table in ("samples", "stacks", "recordings"):
        files = sorted(glob.glob(f"{d}/{table}/**/*.parquet", recursive=True))
        seen = []
        for f in files:
            s = pq.read_schema(f)
            # The file's key-value metadata (not the Arrow schema's own).
            kv = pq.ParquetFile(f).metadata.metadata or {}
            meta = {k.decode(): v.decode() for k, v in kv.items()}
            cols = [[c.name, str(c.type), c.nullable] for c in s]
            entry = {"columns": cols, "schema_version": meta.get("schema_version"),
                     "table": meta.get("perfdata.table"),
                     "row_groups": pq.ParquetFile(f).num_row_groups}
            seen.append(entry)
        out[table] = seen
    return out


def joins(d):
    import duckdb

    con = duckdb.connect()
    duckdb_views(con, d)
    one = lambda q: con.execute(q).fetchone()[0]
    return {
        "recordings": one("SELECT count(*) FROM recordings"),
        "samples": one("SELECT count(*) FROM samples"),
        "stacks_twice": one("SELECT count(*) - count(DISTINCT stack_id) FROM stacks"),
        "orphans": one("SELECT count(*) FROM samples ANTI JOIN stacks USING (stack_id)"),
        "hosts": con.execute(
            "SELECT DISTINCT s.host, r.hostname FROM samples s JOIN recordings r "
            "USING (recording) ORDER BY ALL"
        ).fetchall(),
    }


if __name__ == "__main__":
    what, d = sys.argv[1], sys.argv[2]
    print(json.dumps({"rows": rows, "stacks": stacks, "schema": schema, "joins": joins}[what](d)))
