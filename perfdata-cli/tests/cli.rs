//! The command line: stdin and stdout, exit codes, error messages, and outputs that are
//! either complete or absent.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;

use perfdata_tests::{fixtures_dir, run_perfdata};

fn perfdata(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, stdin)
}

fn fixture(name: &str) -> String {
    fixtures_dir().join(name).to_str().unwrap().to_string()
}

fn stats_json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn stats_json_names_records_as_perf_does() {
    let v = stats_json(&perfdata(
        &["stats", "--json", &fixture("pipe-cpu-clock.data")],
        None,
    ));
    assert_eq!(v["records"]["SAMPLE"], 130);
    assert_eq!(v["records"]["ATTR"], 1);
    assert_eq!(v["records"]["FEATURE"], 19);
    assert_eq!(v["records"]["FINISHED_INIT"], 1);
    assert_eq!(v["events"][0]["name"], "cpu-clock");
    assert_eq!(v["events"][0]["samples"], 130);
    let total: u64 = v["records"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(v["total"], total);
}

#[test]
fn stdin_gives_the_same_stats_as_the_file() {
    for f in [
        "pipe-cpu-clock.data",
        "pipe-compressed.data",
        "file-cpu-clock.data",
    ] {
        let from_file = stats_json(&perfdata(&["stats", "--json", &fixture(f)], None));
        let bytes = std::fs::read(fixture(f)).unwrap();
        let from_stdin = stats_json(&perfdata(&["stats", "--json", "-"], Some(&bytes)));
        assert_eq!(from_file, from_stdin, "{f}");
    }
}

#[test]
fn directory_input_is_read_whole() {
    let v = stats_json(&perfdata(
        &["stats", "--json", &fixture("dir-threads.data")],
        None,
    ));
    let samples = v["records"]["SAMPLE"].as_u64().unwrap();
    assert!(samples > 100, "{samples} samples");
}

#[test]
fn dump_prints_one_line_per_record_with_offsets() {
    let out = perfdata(&["dump", "--json", &fixture("file-cpu-clock.data")], None);
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let stats = stats_json(&perfdata(
        &["stats", "--json", &fixture("file-cpu-clock.data")],
        None,
    ));
    assert_eq!(lines.len() as u64, stats["total"].as_u64().unwrap());
    let first_sample = lines.iter().find(|l| l["type"] == "SAMPLE").unwrap();
    // Addresses are hex strings (README, JSON output): jq and JavaScript keep them whole.
    let ip = first_sample["body"]["ip"].as_str().unwrap();
    assert!(u64::from_str_radix(ip.strip_prefix("0x").unwrap(), 16).unwrap() > 0);
    assert!(first_sample["body"]["tid"]["pid"].as_i64().unwrap() > 0);
    let offsets: Vec<u64> = lines
        .iter()
        .map(|l| l["offset"].as_u64().unwrap())
        .collect();
    assert!(offsets.windows(2).all(|w| w[0] < w[1]), "offsets increase");
}

#[test]
fn corrupt_input_exits_non_zero_naming_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.data");
    let mut bytes = std::fs::read(fixture("pipe-cpu-clock.data")).unwrap();
    // A record of size 0 three quarters in (a cut stream is read up to the cut).
    let mut at = 16;
    while at < bytes.len() * 3 / 4 {
        at += u16::from_le_bytes(bytes[at + 6..at + 8].try_into().unwrap()) as usize;
    }
    bytes[at + 6..at + 8].copy_from_slice(&[0, 0]);
    let expected = format!(
        "at byte offset {at} ({at:#x}), record header: record size 0 is smaller than the 8 \
         bytes its type needs"
    );
    std::fs::write(&bad, &bytes).unwrap();
    for cmd in ["stats", "dump", "info"] {
        let out = perfdata(&[cmd, bad.to_str().unwrap()], None);
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err, format!("perfdata: error: {expected}\n"), "{cmd}");
    }
    let out = perfdata(&["stats", "/nonexistent/perf.data"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot open /nonexistent/perf.data"));
}

#[test]
fn convert_refuses_to_overwrite_its_input_unless_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("perf.data");
    std::fs::copy(fixture("file-cpu-clock.data"), &file).unwrap();
    let before = std::fs::read(&file).unwrap();
    let f = file.to_str().unwrap();
    let out = perfdata(&["convert", f, "-o", f, "--compress"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--in-place"));
    assert_eq!(std::fs::read(&file).unwrap(), before);

    let out = perfdata(&["convert", f, "-o", f, "--compress", "--in-place"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = stats_json(&perfdata(&["stats", "--json", f], None));
    assert!(v["records"]["COMPRESSED"].as_u64().unwrap() >= 1);
    assert_eq!(v["records"]["SAMPLE"], 279);
}

/// A conversion that fails leaves neither an output nor a temp file behind.
#[test]
fn failed_convert_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.data");
    let corrupt = dir.path().join("corrupt.data");
    let mut bytes = std::fs::read(fixture("file-cpu-clock.data")).unwrap();
    // Give the 20th record of the data section a size of 0.
    let mut at = u64::from_le_bytes(bytes[40..48].try_into().unwrap()) as usize;
    for _ in 0..20 {
        at += u16::from_le_bytes(bytes[at + 6..at + 8].try_into().unwrap()) as usize;
    }
    bytes[at + 6..at + 8].copy_from_slice(&[0, 0]);
    std::fs::write(&corrupt, &bytes).unwrap();
    let out = perfdata(
        &[
            "convert",
            corrupt.to_str().unwrap(),
            "-o",
            out_path.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        vec!["corrupt.data".to_string()],
        "files left: {left:?}"
    );
}

#[test]
fn convert_pipes_through_stdin_and_stdout() {
    let bytes = std::fs::read(fixture("pipe-cpu-clock.data")).unwrap();
    let out = perfdata(&["convert", "--to-file", "-", "-o", "-"], Some(&bytes));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(&out.stdout[..8], b"PERFILE2");
    assert_eq!(
        u64::from_le_bytes(out.stdout[8..16].try_into().unwrap()),
        104
    );
    let back = perfdata(&["convert", "--to-pipe", "-", "-o", "-"], Some(&out.stdout));
    assert!(
        back.status.success(),
        "{}",
        String::from_utf8_lossy(&back.stderr)
    );
    let a = stats_json(&perfdata(&["stats", "--json", "-"], Some(&bytes)));
    let b = stats_json(&perfdata(&["stats", "--json", "-"], Some(&back.stdout)));
    assert_eq!(a["records"]["SAMPLE"], b["records"]["SAMPLE"]);
    assert_eq!(a["events"], b["events"]);
}

#[perfdata_oracle::needs(corpus)]
#[test]
fn byte_swap_of_an_unknown_feature_is_refused_clearly() {
    let corpus = perfdata_tests::corpus_dir().expect("PERFDATA_CORPUS is set");
    let input = corpus.join("jbeich-perf_with_arm_regs.data");
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("be.data");
    let out = perfdata(
        &[
            "convert",
            input.to_str().unwrap(),
            "--endian",
            "big",
            "-o",
            out_path.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be byte-swapped"));
    assert!(!Path::new(&out_path).exists());
}

/// A reader that goes away (`| head`) ends every writing command quietly with status 0:
/// the output is larger than a pipe's buffer, so each command meets EPIPE.
#[test]
fn closed_stdout_ends_every_command_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let input = fixture("file-callgraph-dwarf.data");
    assert!(std::fs::metadata(&input).unwrap().len() > 65536);
    for args in [
        vec!["dump", input.as_str()],
        vec!["dump", "--json", input.as_str()],
        vec!["convert", input.as_str(), "-o", "-"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_perfdata"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut head = [0u8; 10];
        child.stdout.take().unwrap().read_exact(&mut head).unwrap();
        // stdout is dropped here: the next write fails with EPIPE.
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// perf's habits: every command reads `FILE`, `-i FILE`, or `./perf.data` when given
/// neither, and the three give the same output.
#[test]
fn every_command_takes_its_input_three_ways() {
    use std::process::Command;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("perf.data");
    std::fs::copy(fixture("file-cpu-clock.data"), &data).unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    for cmd in [
        &["info"][..],
        &["stats", "--json"],
        &["dump"],
        &["check"],
        &["buildid", "list"],
    ] {
        let default = run(cmd);
        let positional = run(&[cmd, &["perf.data"]].concat());
        let dash_i = run(&[cmd, &["-i", "perf.data"]].concat());
        assert!(!default.is_empty(), "{cmd:?}");
        assert_eq!(default, positional, "{cmd:?}");
        assert_eq!(default, dash_i, "{cmd:?}");
    }
    for cmd in [
        &["convert", "--to-pipe"][..],
        &["strip", "--drop", "FINISHED_ROUND"],
        &["buildid", "remap", "--path", "/usr=/srv"],
        &["export", "--format", "folded"],
        &["flamegraph"],
    ] {
        let outs: Vec<Vec<u8>> = [&[][..], &["perf.data"][..], &["-i", "perf.data"][..]]
            .iter()
            .enumerate()
            .map(|(i, input)| {
                let out = format!("out{i}.data");
                run(&[cmd, input, &["-o", &out]].concat());
                std::fs::read(dir.path().join(out)).unwrap()
            })
            .collect();
        assert!(!outs[0].is_empty(), "{cmd:?}");
        assert!(outs.windows(2).all(|w| w[0] == w[1]), "{cmd:?}");
    }
    // Both forms at once is an error, not a guess.
    let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(["info", "perf.data", "-i", "perf.data"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
