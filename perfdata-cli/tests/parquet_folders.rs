//! A folder of Parquet parts that later exports add to: the parts' file mode, one
//! partition layout and one schema version per folder (others refused before anything
//! is written), and a leftover of an interrupted export (a samples part, a temporary
//! file) named.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use perfdata_tests::{fixtures_dir, run_perfdata};

use crate::parquet_support;

use parquet_support::{export_parquet, query_script, walk};

/// The parts are readable as any new file is (0666 less the umask), not 0600 as the
/// temp files they are written to: a Spark or Trino service reads them as another user.
#[perfdata_oracle::needs(parquet)]
#[test]
fn parts_get_a_new_files_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("pq");
    export_parquet(&[fixtures_dir().join("file-cpu-clock.data")], &out, &[]);
    let parts: Vec<PathBuf> = walk(&out)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    assert_eq!(parts.len(), 3, "samples, stacks and recordings: {parts:?}");
    for p in parts {
        let mode = std::fs::metadata(&p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(
            mode,
            perfdata_write::output::new_file_mode(),
            "{}",
            p.display()
        );
    }
}

/// A folder keeps one partition layout: an export asking another is refused, naming
/// both, and adds nothing (DuckDB would refuse the folder: "Hive partition mismatch").
#[perfdata_oracle::needs(parquet)]
#[test]
fn another_partition_layout_in_one_folder_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("pq");
    export_parquet(&[fixtures_dir().join("file-cpu-clock.data")], &out, &[]);
    let other = fixtures_dir().join("file-callgraph-fp.data");
    let err = refused_export(&other, &out, &["--partition", "host,date"]);
    assert!(
        err.contains("no --partition") && err.contains("--partition host,date"),
        "{err}"
    );
    // The same layout goes on.
    export_parquet(&[other], &out, &[]);
}

/// An export into a folder of another schema version is refused before it writes
/// anything, naming the part, its version and this one: the readers take a folder's
/// parts as one table, and version 1's `symbol` and stack ids differ from version 2's.
#[perfdata_oracle::needs(parquet)]
#[test]
fn an_append_onto_another_schema_version_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("pq");
    export_parquet(&[fixtures_dir().join("file-cpu-clock.data")], &out, &[]);
    // The samples part as version 1 wrote it: its footer's key-value metadata (thrift:
    // the key, then the value's field header 0x18, its length 1, its text).
    let part = walk(&out.join("samples")).pop().expect("a samples part");
    let mut bytes = std::fs::read(&part).expect("read");
    let key = b"schema_version\x18\x01";
    let at: Vec<usize> = (0..bytes.len() - key.len())
        .filter(|&i| bytes[i..].starts_with(key))
        .collect();
    assert_eq!(at.len(), 1, "one schema_version in the footer");
    let v = at[0] + key.len();
    assert_eq!(bytes[v], b'2', "this perfdata writes version 2");
    bytes[v] = b'1';
    std::fs::write(&part, bytes).expect("write");
    let other = fixtures_dir().join("file-callgraph-fp.data");
    let err = refused_export(&other, &out, &[]);
    let said = format!(
        "{} was written with schema version 1 by perfdata {}, and this perfdata writes \
         version 2",
        part.display(),
        env!("CARGO_PKG_VERSION")
    );
    assert!(err.contains(&said), "{err}");
    // A part without the key is no part of ours.
    let mut bytes = std::fs::read(&part).expect("read");
    bytes[at[0] + b"schema_versio".len()] = b'X';
    std::fs::write(&part, bytes).expect("write");
    let err = refused_export(&other, &out, &[]);
    let said = format!("{} has no schema_version", part.display());
    assert!(err.contains(&said), "{err}");
}

/// `perfdata export INPUT --format parquet -o OUT EXTRA`, which must fail and add
/// nothing to OUT: its stderr.
fn refused_export(input: &Path, out: &Path, extra: &[&str]) -> String {
    let sorted = |d: &Path| {
        let mut v = walk(d);
        v.sort();
        v
    };
    let before = sorted(out);
    let mut args: Vec<&OsStr> = vec![OsStr::new("export"), input.as_os_str()];
    args.extend(["--format", "parquet", "-o"].map(OsStr::new));
    args.push(out.as_os_str());
    args.extend(extra.iter().map(OsStr::new));
    let run = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    let err = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(!run.status.success(), "{err}");
    assert_eq!(sorted(out), before, "nothing added");
    err
}

/// A samples part with no recordings row (what an interrupted export leaves) that the
/// next export does not replace is named in a warning, not passed over in silence.
#[perfdata_oracle::needs(parquet)]
#[test]
fn a_leftover_of_another_recording_is_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("pq");
    export_parquet(&[fixtures_dir().join("file-cpu-clock.data")], &out, &[]);
    let part = walk(&out.join("samples"))
        .into_iter()
        .next()
        .expect("a samples part");
    let orphan = out.join("samples").join("part-0123456789abcdef.parquet");
    std::fs::copy(&part, &orphan).expect("copied");
    let other = fixtures_dir().join("file-callgraph-fp.data");
    let said = export_parquet(&[other], &out, &[]);
    assert!(
        said.contains(&format!(
            "{}: samples an interrupted export left",
            orphan.display()
        )),
        "{said}"
    );
    assert!(!said.contains(&part.display().to_string()), "{said}");
}

/// What `kill -9` during an export leaves: the part being written, 0 bytes, under its
/// temporary name. The README's DuckDB query over the folder still gives every
/// recording's periods (DuckDB's `**/*.parquet` matches hidden files, and refused the
/// old `.tmp-*.parquet` name: "too small to be a Parquet file"), and the next export
/// names the file in a warning and leaves it (an export running now may be writing it).
#[perfdata_oracle::needs(python_duckdb, parquet)]
#[test]
fn a_temp_file_a_killed_export_left_is_named_and_read_past() {
    use perfdata_report::export::{PARQUET_TEMP_PREFIX, PARQUET_TEMP_SUFFIX};
    let fx = |n: &str| fixtures_dir().join(n);
    let (a, b) = (fx("file-callgraph-fp.data"), fx("file-cpu-clock.data"));
    let dir = tempfile::tempdir().expect("temp dir");
    let alone = |input: &PathBuf, name: &str| {
        let d = dir.path().join(name);
        export_parquet(std::slice::from_ref(input), &d, &[]);
        query_script(&[], &d)
    };
    let (a_sums, b_sums) = (alone(&a, "a"), alone(&b, "b"));
    let mut both = a_sums.clone();
    for (symbol, period) in &b_sums {
        *both.entry(symbol.clone()).or_default() += period;
    }
    assert!(
        both.len() > a_sums.len() && both.values().all(|&p| p > 0),
        "{both:?}"
    );

    let out = dir.path().join("pq");
    export_parquet(std::slice::from_ref(&a), &out, &[]);
    let killed = out
        .join("samples")
        .join(format!("{PARQUET_TEMP_PREFIX}k1ll3d{PARQUET_TEMP_SUFFIX}"));
    std::fs::File::create(&killed).expect("a 0-byte temp part");
    assert_eq!(
        query_script(&[], &out),
        a_sums,
        "the query over the killed export"
    );

    let said = export_parquet(std::slice::from_ref(&b), &out, &[]);
    assert!(
        said.contains(&format!(
            "{}: the temporary file of a part",
            killed.display()
        )),
        "{said}"
    );
    assert!(killed.exists(), "named, never removed");
    assert_eq!(
        query_script(&[], &out),
        both,
        "the query after the next export"
    );
}

/// A temporary part an older perfdata left (`.tmp-*.parquet`, which DuckDB's glob takes)
/// is named too, with what it breaks.
#[perfdata_oracle::needs(parquet)]
#[test]
fn an_older_perfdatas_temp_file_is_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("pq");
    export_parquet(&[fixtures_dir().join("file-cpu-clock.data")], &out, &[]);
    let old = out.join("stacks").join(".tmp-AbC123.parquet");
    std::fs::File::create(&old).expect("a 0-byte temp part");
    let said = export_parquet(&[fixtures_dir().join("file-callgraph-fp.data")], &out, &[]);
    assert!(
        said.contains(&format!("{}: the temporary file of a part", old.display()))
            && said.contains("as an older perfdata named them"),
        "{said}"
    );
}
