//! perf's habits the command line keeps: `-v/--verbose` (repeatable, not with `-q`),
//! `-f/--force` (accepted, changes nothing: perfdata has no ownership check to skip),
//! `--compress 3` with a space, a closed stdout ending every command with status 0, and
//! an option of report, script or diff given twice taking the last value, as perf's
//! parse-options does.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use perfdata_tests::{fixtures_dir, perf_available, perf_stats, run_perfdata};

const INPUT: &str = "file-callgraph-dwarf.data";

fn perfdata(args: &[&OsStr]) -> Output {
    run_perfdata(env!("CARGO_BIN_EXE_perfdata"), args, None)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A u64 of a little-endian file header at `at` (the fixtures are little-endian).
fn le_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

#[perfdata_oracle::needs(perf)]
#[test]
fn verbose_says_what_was_read_and_repeats() {
    assert!(perf_available());
    let input = fixtures_dir().join(INPUT);
    let bytes = std::fs::read(&input).unwrap();
    // perf_file_header: magic, size, attr_size, attrs {offset, size}, data {offset, size}.
    let (data_offset, data_size) = (le_u64(&bytes, 40), le_u64(&bytes, 48));
    let plain = perfdata(&[OsStr::new("stats"), input.as_os_str()]);
    let v = perfdata(&[OsStr::new("-v"), OsStr::new("stats"), input.as_os_str()]);
    let vv = perfdata(&[OsStr::new("stats"), OsStr::new("-vv"), input.as_os_str()]);
    for out in [&plain, &v, &vv] {
        assert!(out.status.success(), "{}", stderr(out));
        assert_eq!(out.stdout, plain.stdout, "-v changes stderr only");
    }
    assert_eq!(stderr(&plain), "");
    assert!(
        stderr(&v).contains("input: File mode, Little endian, 1 event attrs"),
        "{}",
        stderr(&v)
    );
    let data = format!("section data: offset {data_offset:#x}, {data_size} bytes");
    assert!(!stderr(&v).contains(&data), "sections are -vv's");
    assert!(stderr(&vv).contains(&data), "{data} not in {}", stderr(&vv));

    // convert says the policy it resolved and how many records went through: the count
    // is perf's TOTAL for the file.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    let conv = perfdata(&[
        OsStr::new("convert"),
        OsStr::new("--verbose"),
        input.as_os_str(),
        OsStr::new("-o"),
        out.as_os_str(),
    ]);
    assert!(conv.status.success(), "{}", stderr(&conv));
    assert!(
        stderr(&conv).contains("convert: to File, policy "),
        "{}",
        stderr(&conv)
    );
    let total: u64 = perf_stats(&input).records.values().sum();
    let said = format!("convert: {total} records read, {total} written");
    assert!(
        stderr(&conv).contains(&said),
        "{said} not in {}",
        stderr(&conv)
    );
}

#[test]
fn quiet_and_verbose_are_refused_together() {
    let input = fixtures_dir().join(INPUT);
    for args in [["-q", "-v"], ["--verbose", "--quiet"]] {
        let mut all: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        all.extend([OsStr::new("info"), input.as_os_str()]);
        let out = perfdata(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        assert!(
            stderr(&out).contains("cannot be used with"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn force_is_accepted_and_reads_a_file_of_another_user() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("other.data");
    std::fs::copy(fixtures_dir().join(INPUT), &input).unwrap();
    // Owned by another user where the test may change that (root); perf refuses such a
    // file without -f when it is not root, perfdata reads it either way.
    let _ = Command::new("chown")
        .arg("12345:12345")
        .arg(&input)
        .status();
    for cmd in [&["info"][..], &["stats"], &["dump"], &["report"]] {
        let run = |force: &[&str]| {
            let mut all: Vec<&OsStr> = cmd.iter().chain(force).map(OsStr::new).collect();
            all.push(input.as_os_str());
            perfdata(&all)
        };
        let (plain, forced, long) = (run(&[]), run(&["-f"]), run(&["--force"]));
        assert!(plain.status.success(), "{cmd:?}: {}", stderr(&plain));
        assert!(!plain.stdout.is_empty());
        for out in [&forced, &long] {
            assert!(out.status.success(), "{cmd:?}: {}", stderr(out));
            assert_eq!(out.stdout, plain.stdout, "{cmd:?}");
        }
    }
}

#[perfdata_oracle::needs(perf)]
#[test]
fn compress_level_after_a_space() {
    assert!(perf_available());
    let input = fixtures_dir().join(INPUT);
    let dir = tempfile::tempdir().unwrap();
    let (spaced, equals) = (dir.path().join("a.data"), dir.path().join("b.data"));
    let conv = |out: &Path, level: &[&str], input_first: bool| {
        let mut all: Vec<&OsStr> = vec![OsStr::new("convert")];
        if input_first {
            all.push(input.as_os_str());
        }
        all.extend(level.iter().map(OsStr::new));
        if !input_first {
            all.push(input.as_os_str());
        }
        all.extend([OsStr::new("-o"), out.as_os_str()]);
        perfdata(&all)
    };
    for input_first in [true, false] {
        let a = conv(&spaced, &["--compress", "3"], input_first);
        let b = conv(&equals, &["--compress=3"], input_first);
        assert!(a.status.success(), "{}", stderr(&a));
        assert!(b.status.success(), "{}", stderr(&b));
        assert_eq!(
            std::fs::read(&spaced).unwrap(),
            std::fs::read(&equals).unwrap()
        );
    }
    // A level out of range is still refused, naming the range.
    let bad = conv(&spaced, &["--compress", "30"], true);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("1..=22"), "{}", stderr(&bad));
    // perf reads the level the header says, and the same records as the input.
    let header = perfdata_tests::perf_output(&["report", "--header-only"], &spaced);
    let header = String::from_utf8_lossy(&header.stdout);
    assert!(
        header.contains("# compressed : Zstd, level = 3,"),
        "{header}"
    );
    // perf counts the COMPRESSED records beside the records inside them.
    let mut records = perf_stats(&spaced).records;
    assert!(
        records.remove("COMPRESSED").is_some_and(|n| n > 0),
        "{records:?}"
    );
    assert_eq!(records, perf_stats(&input).records);
}

/// Run perfdata with a stdout whose reader is already gone: every write is EPIPE.
fn with_closed_stdout(args: &[&OsStr]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let input = fixtures_dir().join(INPUT);
    let i = input.as_os_str();
    let buildids = fixtures_dir().join("file-buildid-mmap.data");
    let b = buildids.as_os_str();
    let s = OsStr::new;
    // Every command that prints, in every form (issue #24, defect 5: `buildid list`
    // panicked with "failed printing to stdout").
    let mut cases: Vec<Vec<&OsStr>> = vec![
        vec![s("convert"), i, s("-o"), s("-")],
        vec![s("convert"), i, s("--to-pipe"), s("-o"), s("-")],
        vec![s("strip"), i, s("--drop"), s("MMAP2"), s("-o"), s("-")],
        vec![s("anonymize"), i, s("-o"), s("-")],
        vec![
            s("buildid"),
            s("remap"),
            b,
            s("--path"),
            s("/=/x/"),
            s("-o"),
            s("-"),
        ],
        vec![s("synth"), s("--samples"), s("10"), s("-o"), s("-")],
        vec![
            s("synth"),
            s("--samples"),
            s("10"),
            s("--pipe"),
            s("-o"),
            s("-"),
        ],
        vec![s("dump"), i],
        vec![s("dump"), s("--json"), i],
        vec![s("report"), i],
        vec![s("report"), s("--json"), i],
        vec![s("stats"), i],
        vec![s("stats"), s("--json"), i],
        vec![s("info"), i],
        vec![s("info"), s("--json"), i],
        vec![s("check"), i],
        vec![s("check"), s("--json"), i],
        vec![s("buildid"), s("list"), b],
        vec![s("buildid"), s("list"), s("--json"), b],
        vec![s("flamegraph"), i, s("-o"), s("-")],
        vec![s("completions"), s("bash")],
        vec![s("manpage")],
        vec![s("help-json")],
        vec![s("--help")],
        vec![s("convert"), s("--help")],
        vec![s("--version")],
    ];
    for format in ["folded", "pprof", "speedscope", "firefox", "flamegraph"] {
        cases.push(vec![
            s("export"),
            i,
            s("--format"),
            s(format),
            s("-o"),
            s("-"),
        ]);
    }
    let mut failed = Vec::new();
    for args in &cases {
        let out = with_closed_stdout(args);
        // The fixture's DWARF stacks cannot be unwound where its binary is not the one
        // recorded: that warning is about the recording, not about stdout.
        let unwinding = |l: &str| {
            l.starts_with("perfdata: warning: unwound ")
                || l.ends_with(" samples' stacks cut there")
        };
        if out.status.code() != Some(0) || !stderr(&out).lines().all(unwinding) {
            eprintln!("{args:?}: {:?}\n{}", out.status, stderr(&out));
            failed.push(args);
        }
    }
    assert!(failed.is_empty(), "{failed:?}");
}

/// A stderr whose reader went away (`perfdata strip ... 2>&1 | head -1`): the summaries,
/// warnings and -v lines it loses end nothing; the output is written all the same.
#[test]
fn a_closed_stderr_loses_the_messages_not_the_output() {
    let input = fixtures_dir().join(INPUT);
    let i = input.as_os_str();
    let buildids = fixtures_dir().join("file-buildid-mmap.data");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    let o = out.as_os_str();
    let s = OsStr::new;
    let cases: [&[&OsStr]; 5] = [
        &[s("strip"), i, s("--drop"), s("MMAP2"), s("-o"), o],
        &[s("anonymize"), i, s("-o"), o],
        &[
            s("buildid"),
            s("remap"),
            buildids.as_os_str(),
            s("--path"),
            s("/=/x/"),
            s("-o"),
            o,
        ],
        &[s("-vv"), s("convert"), i, s("-o"), o],
        &[s("-vv"), s("stats"), i],
    ];
    for args in cases {
        let _ = std::fs::remove_file(&out);
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let run = Command::new(env!("CARGO_BIN_EXE_perfdata"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(writer)
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(0), "{args:?}");
        if args.contains(&o) {
            // Every sample of the input is in the output.
            let from = if args.contains(&buildids.as_os_str()) {
                &buildids
            } else {
                &input
            };
            assert_eq!(samples(&out), samples(from), "{args:?}");
        } else {
            assert_eq!(run.stdout, perfdata(&[s("stats"), i]).stdout);
        }
    }
}

/// The SAMPLE count `stats --json` gives.
fn samples(path: &Path) -> u64 {
    let out = perfdata(&[OsStr::new("stats"), OsStr::new("--json"), path.as_os_str()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["records"]["SAMPLE"].as_u64().unwrap()
}

/// `-o -` of the edit commands is a pipe-mode stream, as `perf inject -o -` writes it:
/// `perfdata unwind IN -o - | perf report -i -` works (a file-mode header on a pipe was
/// "incompatible file format" to perf).
#[perfdata_oracle::needs(perf)]
#[test]
fn edits_to_stdout_are_streams_perf_reads_from_a_pipe() {
    assert!(perf_available());
    let input = fixtures_dir().join(INPUT);
    for words in [&["unwind"][..], &["anonymize"]] {
        let mut args: Vec<&OsStr> = words.iter().map(OsStr::new).collect();
        args.extend([input.as_os_str(), OsStr::new("-o"), OsStr::new("-")]);
        let out = perfdata(&args);
        assert!(out.status.success(), "{words:?}: {}", stderr(&out));
        // PERFILE2, then the pipe header's size: 16.
        assert_eq!(&out.stdout[..8], b"PERFILE2");
        assert_eq!(le_u64(&out.stdout, 8), 16, "{words:?}: not a pipe header");
        let mut perf = Command::new("perf")
            .args(["report", "--stdio", "-i", "-"])
            .env("PERF_PAGER", "cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("perf runs");
        let mut stdin = perf.stdin.take().expect("stdin");
        let bytes = out.stdout.clone();
        let writer = std::thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut stdin, &bytes);
        });
        let report = perf.wait_with_output().expect("perf report");
        writer.join().expect("writer");
        let text = String::from_utf8_lossy(&report.stdout);
        assert!(
            report.status.success(),
            "{words:?}: {}",
            String::from_utf8_lossy(&report.stderr)
        );
        assert!(text.contains("# Samples:"), "{words:?}: {text}");
    }
}

/// `--dsos A --dsos B` is `--dsos B`, and so `--sort` and `--percent-limit`, as perf
/// report takes them (perf's OPT_STRING keeps the last); perfdata refused the second
/// one before. Compared with perf's own text of the same options.
#[perfdata_oracle::needs(perf)]
#[test]
fn an_option_given_again_takes_the_last_value() {
    assert!(perf_available());
    let input = fixtures_dir().join(INPUT);
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &["--dsos", "libc.so.6", "--dsos", "perfdata-spin"],
            &["--dsos", "perfdata-spin"],
        ),
        (&["--sort", "dso", "--sort", "sym"], &["--sort", "sym"]),
        // A sort key named twice is one column, as in perf.
        (&["--sort", "sym,dso,sym"], &["--sort", "sym,dso"]),
        // perf's short forms of --dsos and --symbols.
        (
            &["-d", "perfdata-spin", "-S", "main"],
            &["--dsos", "perfdata-spin", "--symbols", "main"],
        ),
        (
            &["--percent-limit", "50", "--percent-limit", "5"],
            &["--percent-limit", "5"],
        ),
    ];
    for (twice, once) in cases {
        let report = |args: &[&str]| {
            let mut argv: Vec<&OsStr> = ["report", "-q", "--no-children", "-g", "none"]
                .into_iter()
                .map(OsStr::new)
                .collect();
            argv.extend(args.iter().map(OsStr::new));
            argv.push(input.as_os_str());
            let out = perfdata(&argv);
            assert!(out.status.success(), "{args:?}: {}", stderr(&out));
            String::from_utf8(out.stdout).expect("UTF-8")
        };
        let (a, b) = (report(twice), report(once));
        assert_eq!(a, b, "{twice:?}");
        assert!(!a.trim().is_empty(), "{twice:?}: no rows");
        let perf = Command::new("perf")
            .args([
                "report",
                "--stdio",
                "-q",
                "--no-children",
                "-g",
                "none",
                "-i",
            ])
            .arg(&input)
            .args(twice)
            .stderr(Stdio::null())
            .output()
            .expect("perf runs");
        assert_eq!(String::from_utf8_lossy(&perf.stdout), a, "perf {twice:?}");
    }
}
