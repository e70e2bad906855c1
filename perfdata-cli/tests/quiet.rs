//! `-q`/`--quiet` (before or after the command, as perf takes it): no warnings,
//! summaries or progress on stderr, the same stdout and output files; errors still.

use std::ffi::OsStr;
use std::process::Output;

use perfdata_tests::{fixtures_dir, run_perfdata};

fn perfdata(args: &[&OsStr]) -> Output {
    run_perfdata(env!("CARGO_BIN_EXE_perfdata"), args, None)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn quiet_leaves_out_warnings_and_summaries_but_not_errors() {
    let dir = tempfile::tempdir().unwrap();
    // A file cut inside its data section: read with a warning.
    let bytes = std::fs::read(fixtures_dir().join("file-callgraph-fp.data")).unwrap();
    let cut = dir.path().join("cut.data");
    std::fs::write(&cut, &bytes[..15000]).unwrap();
    let stats = |args: &[&str]| {
        let mut all: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        all.push(cut.as_os_str());
        perfdata(&all)
    };
    let loud = stats(&["stats"]);
    assert!(loud.status.success());
    assert!(
        stderr(&loud).contains("perfdata: warning: "),
        "{}",
        stderr(&loud)
    );
    for args in [&["-q", "stats"][..], &["stats", "--quiet"][..]] {
        let quiet = stats(args);
        assert!(quiet.status.success());
        assert_eq!(stderr(&quiet), "", "{args:?}");
        assert_eq!(quiet.stdout, loud.stdout, "{args:?}");
    }

    // strip's summary goes; the output is the same file.
    let input = fixtures_dir().join("strip-multi.data");
    let strip = |quiet: bool, out: &std::path::Path| {
        let mut all: Vec<&OsStr> = vec![OsStr::new("strip")];
        if quiet {
            all.push(OsStr::new("-q"));
        }
        all.extend([input.as_os_str(), OsStr::new("--pid"), OsStr::new("31451")]);
        all.extend([OsStr::new("-o"), out.as_os_str()]);
        perfdata(&all)
    };
    let (a, b) = (dir.path().join("a.data"), dir.path().join("b.data"));
    let loud = strip(false, &a);
    let quiet = strip(true, &b);
    assert!(loud.status.success() && quiet.status.success());
    assert!(stderr(&loud).contains("record type"), "{}", stderr(&loud));
    assert_eq!(stderr(&quiet), "");
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());

    // An error is still said, with its status.
    let missing = dir.path().join("missing.data");
    let out = perfdata(&[OsStr::new("-q"), OsStr::new("stats"), missing.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with("perfdata: error: cannot open"),
        "{}",
        stderr(&out)
    );
}
