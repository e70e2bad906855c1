//! A warning or error about one input of several names that input: `export --format
//! parquet` of many recordings, a differential flame graph's two, `merge`'s.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use perfdata_tests::{fixtures_dir, run_perfdata};

fn perfdata(args: &[&OsStr]) -> Output {
    run_perfdata(env!("CARGO_BIN_EXE_perfdata"), args, None)
}

/// The warning and error lines of `out`'s stderr (not progress or tables).
fn said(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("perfdata: warning: ") || l.starts_with("perfdata: error: "))
        .map(str::to_string)
        .collect()
}

/// file-callgraph-dwarf.data's stacks are cut (its binary is not of the recorded build
/// id here): the only fixture of the two with warnings.
fn inputs() -> (PathBuf, PathBuf) {
    let d = fixtures_dir();
    (
        d.join("file-callgraph-fp.data"),
        d.join("file-callgraph-dwarf.data"),
    )
}

/// Every line names `bad` right after the prefix, none names `good`.
fn all_name(lines: &[String], bad: &Path, good: &Path) {
    assert!(!lines.is_empty());
    for l in lines {
        let rest = l.split_once(": ").map(|(_, r)| r).unwrap_or_default();
        let rest = rest.split_once(": ").map(|(_, r)| r).unwrap_or_default();
        assert!(
            rest.starts_with(&format!("{}: ", bad.display())),
            "{l:?} does not begin with {}",
            bad.display()
        );
        assert!(!l.contains(&good.display().to_string()), "{l}");
    }
}

#[perfdata_oracle::needs(parquet)]
#[test]
fn a_parquet_exports_warnings_name_their_recording() {
    let (good, bad) = inputs();
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("pq");
    for order in [[&good, &bad], [&bad, &good]] {
        let _ = std::fs::remove_dir_all(&out_dir);
        let mut args: Vec<&OsStr> = vec![OsStr::new("export")];
        args.extend(order.iter().map(|p| p.as_os_str()));
        args.extend(["--format", "parquet", "-o"].map(OsStr::new));
        args.push(out_dir.as_os_str());
        let out = perfdata(&args);
        assert!(out.status.success());
        let lines = said(&out);
        // The unwinding summary and the binary of the wrong build id.
        assert_eq!(lines.len(), 2, "{lines:?}");
        all_name(&lines, &bad, &good);
    }
}

#[perfdata_oracle::needs(parquet)]
#[test]
fn a_parquet_exports_error_names_its_recording() {
    let (good, _) = inputs();
    let dir = tempfile::tempdir().unwrap();
    // A perf.data magic, then nothing: it is a recording, and it cannot be read.
    let broken = dir.path().join("broken.data");
    std::fs::write(&broken, b"PERFILE2").unwrap();
    let out_dir = dir.path().join("pq");
    let args: Vec<&OsStr> = vec![
        OsStr::new("export"),
        good.as_os_str(),
        broken.as_os_str(),
        OsStr::new("--format"),
        OsStr::new("parquet"),
        OsStr::new("-o"),
        out_dir.as_os_str(),
    ];
    let out = perfdata(&args);
    assert!(!out.status.success());
    let lines = said(&out);
    // Said as it is skipped, and as the error the command exits with.
    assert_eq!(lines.len(), 2, "{lines:?}");
    all_name(&lines, &broken, &good);
}

#[test]
fn a_differential_flame_graphs_warnings_name_their_recording() {
    let (good, bad) = inputs();
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("diff.svg");
    for (input, base) in [(&good, &bad), (&bad, &good)] {
        let args: Vec<&OsStr> = vec![
            OsStr::new("export"),
            input.as_os_str(),
            OsStr::new("--format"),
            OsStr::new("flamegraph"),
            OsStr::new("--diff"),
            base.as_os_str(),
            OsStr::new("-o"),
            svg.as_os_str(),
        ];
        let out = perfdata(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines = said(&out);
        assert_eq!(lines.len(), 2, "{lines:?}");
        all_name(&lines, &bad, &good);
    }
}

#[test]
fn a_merges_error_in_a_record_names_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let good = fixtures_dir().join("file-cpu-clock.data");
    // The same recording with its 31st record (a SAMPLE, at byte 1696 of the data
    // section at 264) saying it is 4 bytes long: less than its own header.
    let mut bytes = std::fs::read(&good).unwrap();
    assert_eq!(&bytes[1696..1698], &9u16.to_le_bytes(), "a SAMPLE record");
    bytes[1702..1704].copy_from_slice(&4u16.to_le_bytes());
    let bad = dir.path().join("bad.data");
    std::fs::write(&bad, bytes).unwrap();
    let out_file = dir.path().join("merged.data");
    for order in [[&good, &bad], [&bad, &good]] {
        let mut args: Vec<&OsStr> = vec![OsStr::new("merge")];
        args.extend(order.iter().map(|p| p.as_os_str()));
        args.extend([OsStr::new("--allow-duplicates"), OsStr::new("-o")]);
        args.push(out_file.as_os_str());
        let out = perfdata(&args);
        assert!(!out.status.success());
        let lines = said(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        all_name(&lines, &bad, &good);
    }
}
