//! What the commands that read binaries do when the files a recording names are not
//! binaries, and when the recording is cut short (from the outside attack on issue #26):
//! a FIFO where the binary was must not block them (it did, for ever: the open waited
//! for a writer), and a recording cut short is said, not read silently.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use perfdata_tests::fixtures_dir;

/// Run perfdata with `args`, failing the test if it has not ended after 60 s.
fn run_bounded(args: &[&std::ffi::OsStr]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("perfdata runs");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("perfdata {args:?} still running after 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `mkfifo path`.
fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(st.success());
}

#[test]
fn a_fifo_where_the_binary_was_is_a_missing_binary() {
    let dir = tempfile::tempdir().expect("temp dir");
    // The dwarf fixture's program was /tmp/perfdata-spin; under --symfs it is a FIFO.
    let symfs = dir.path().join("symfs");
    std::fs::create_dir_all(symfs.join("tmp")).expect("symfs/tmp");
    mkfifo(&symfs.join("tmp/perfdata-spin"));
    let input = fixtures_dir().join("file-callgraph-dwarf.data");
    let out_file = dir.path().join("out");
    let runs: [&[&str]; 3] = [
        &["report"],
        &["export", "--format", "folded", "-o"],
        &["unwind", "-o"],
    ];
    for words in runs {
        let mut args: Vec<&std::ffi::OsStr> = words.iter().map(std::ffi::OsStr::new).collect();
        if words.last() == Some(&"-o") {
            args.push(out_file.as_os_str());
        }
        args.extend([std::ffi::OsStr::new("--symfs"), symfs.as_os_str()]);
        args.push(input.as_os_str());
        let out = run_bounded(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{words:?}: {stderr}");
        assert!(
            stderr.contains("perfdata-spin"),
            "{words:?} names the binary: {stderr}"
        );
    }
}

#[test]
fn a_recording_cut_short_is_said_by_report_script_and_export() {
    let dir = tempfile::tempdir().expect("temp dir");
    let whole = std::fs::read(fixtures_dir().join("file-cpu-clock.data")).expect("fixture");
    let cut = dir.path().join("cut.data");
    std::fs::write(&cut, &whole[..7320]).expect("cut copy");
    let folded = dir.path().join("out.folded");
    let runs: [Vec<&std::ffi::OsStr>; 3] = [
        vec!["report".as_ref(), cut.as_os_str()],
        vec!["script".as_ref(), cut.as_os_str()],
        vec![
            "export".as_ref(),
            "--format".as_ref(),
            "folded".as_ref(),
            "-o".as_ref(),
            folded.as_os_str(),
            cut.as_os_str(),
        ],
    ];
    for args in runs {
        let out = run_bounded(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(
            stderr.contains("cut short"),
            "{args:?} says nothing: {stderr:?}"
        );
    }
}
