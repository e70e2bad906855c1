//! What every command that writes a file does with it (issue #24 follow-up): an output
//! that is the input is refused by export, flamegraph and `report --csv` too; a file
//! replaced keeps its permissions and owner, a new recording is 0600, a new export
//! follows the umask; exports need no writable `TMPDIR` for small recordings, and say
//! which directory when they need one.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output};

use perfdata_tests::fixtures_dir;

const BIN: &str = env!("CARGO_BIN_EXE_perfdata");

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ok(out: &Output) {
    assert!(out.status.success(), "{}", stderr(out));
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// `perfdata ARGS` through `sh` with `umask` set, so that the test process keeps its own.
fn with_umask(umask: &str, args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(args)
        .output()
        .unwrap()
}

/// `export` and `flamegraph` replaced their input before (`-o x.data` onto x.data, or
/// from stdin redirected from it); `report --csv DIR` one of its table files. Each is
/// refused now, the input the same inode with the same bytes, nothing else written.
#[test]
fn exports_and_csv_tables_never_replace_their_input() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = fixtures_dir().join("file-callgraph-fp.data");
    let original = std::fs::read(&fixture).unwrap();
    let x = dir.path().join("x.data");
    std::fs::write(&x, &original).unwrap();
    let ino = std::fs::metadata(&x).unwrap().ino();
    let xs = x.to_str().unwrap();
    let cases: [&[&str]; 6] = [
        &["export", xs, "--format", "folded", "-o", xs],
        &["export", "-", "--format", "pprof", "-o", xs],
        &["flamegraph", xs, "-o", xs],
        &["flamegraph", "-", "-o", xs],
        &["export", "-", "--format", "speedscope", "-o", xs],
        &["export", xs, "--format", "firefox", "-o", xs],
    ];
    for args in cases {
        let out = Command::new(BIN)
            .args(args)
            .stdin(std::fs::File::open(&x).unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("the output {xs} is the input")),
            "{args:?}: {}",
            stderr(&out)
        );
        assert_eq!(std::fs::metadata(&x).unwrap().ino(), ino, "{args:?}");
        assert!(std::fs::read(&x).unwrap() == original, "{args:?}");
    }

    // The input named as one of the tables readperf writes into DIR.
    let tables = dir.path().join("tables");
    std::fs::create_dir(&tables).unwrap();
    let input = tables.join("results.csv");
    std::fs::write(&input, &original).unwrap();
    let ino = std::fs::metadata(&input).unwrap().ino();
    let out = Command::new(BIN)
        .args(["report", input.to_str().unwrap(), "--csv"])
        .arg(&tables)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("is the input"), "{}", stderr(&out));
    assert_eq!(std::fs::metadata(&input).unwrap().ino(), ino);
    assert!(std::fs::read(&input).unwrap() == original);
    // Refused before any table was written.
    let mut names: Vec<_> = std::fs::read_dir(&tables)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["results.csv"]);

    // A device is written into, not replaced: the same node as input and output runs.
    let out = Command::new(BIN)
        .args(["export", "-", "--format", "folded", "-o", "/dev/null"])
        .stdin(std::fs::File::open(&fixture).unwrap())
        .output()
        .unwrap();
    ok(&out);
}

/// An existing regular output keeps its mode and owner (convert kept 0644 from its input,
/// exports and synth wrote 0600, before); a new recording is 0600 whatever the input's
/// mode or the umask, as perf record and perf inject create them; a new export is 0666
/// less the umask.
#[test]
fn replaced_outputs_keep_their_mode_and_new_ones_follow_perf_or_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.data");
    std::fs::copy(fixtures_dir().join("file-callgraph-fp.data"), &input).unwrap();
    std::fs::set_permissions(&input, std::fs::Permissions::from_mode(0o644)).unwrap();
    let ins = input.to_str().unwrap();
    let at = |name: &str| dir.path().join(name);
    let commands = |out: &str| -> Vec<Vec<String>> {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        vec![
            v(&["convert", ins, "-o", out]),
            v(&["strip", "--drop", "MMAP", ins, "-o", out]),
            v(&["export", ins, "--format", "folded", "-o", out]),
            v(&["export", ins, "--format", "pprof", "-o", out]),
            v(&["flamegraph", ins, "-o", out]),
            v(&["synth", "--size", "64K", "-o", out]),
        ]
    };
    let root = unsafe { libc::geteuid() } == 0;
    for (i, args) in commands("OUT").into_iter().enumerate() {
        // Replacing a 0640 file (and, as root, one of another owner).
        let existing = at(&format!("existing{i}"));
        std::fs::write(&existing, b"x").unwrap();
        std::fs::set_permissions(&existing, std::fs::Permissions::from_mode(0o640)).unwrap();
        if root {
            std::os::unix::fs::chown(&existing, Some(4321), Some(4322)).unwrap();
        }
        let args: Vec<String> = args
            .iter()
            .map(|a| a.replace("OUT", existing.to_str().unwrap()))
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(&with_umask("022", &args));
        assert_eq!(mode(&existing), 0o640, "{args:?}");
        assert!(std::fs::metadata(&existing).unwrap().len() > 1, "{args:?}");
        if root {
            let md = std::fs::metadata(&existing).unwrap();
            assert_eq!((md.uid(), md.gid()), (4321, 4322), "{args:?}");
        }
    }
    for umask in ["022", "027", "077"] {
        for (i, args) in commands("OUT").into_iter().enumerate() {
            let new = at(&format!("new{i}-{umask}"));
            let args: Vec<String> = args
                .iter()
                .map(|a| a.replace("OUT", new.to_str().unwrap()))
                .collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            ok(&with_umask(umask, &args));
            let recording = matches!(args[0], "convert" | "strip" | "synth");
            let want = if recording {
                0o600
            } else {
                0o666 & !u32::from_str_radix(umask, 8).unwrap()
            };
            assert_eq!(mode(&new), want, "umask {umask}: {args:?}");
        }
    }
}

/// With `TMPDIR` where nothing can be created, a small recording exports in every format
/// (its spools stay in memory); one whose samples outgrow the memory spool fails naming
/// the temporary file and `TMPDIR`, not the output. A recording without samples gives
/// no flame graph, and the message says so without blaming the output.
#[test]
fn exports_need_a_temp_dir_only_when_large_and_say_which() {
    let dir = tempfile::tempdir().unwrap();
    let nowhere = dir.path().join("no-such-tmpdir");
    let fixture = fixtures_dir().join("file-callgraph-fp.data");
    for format in ["folded", "flamegraph", "speedscope", "firefox", "pprof"] {
        let out_file = dir.path().join(format!("out.{format}"));
        let out = Command::new(BIN)
            .env("TMPDIR", &nowhere)
            .args([
                "export",
                fixture.to_str().unwrap(),
                "--format",
                format,
                "-o",
            ])
            .arg(&out_file)
            .output()
            .unwrap();
        ok(&out);
        assert!(
            std::fs::metadata(&out_file).unwrap().len() > 100,
            "{format}"
        );
    }

    // About 350,000 samples: speedscope spools each, well past the 4 MiB in memory.
    let big = dir.path().join("big.data");
    ok(&Command::new(BIN)
        .args(["synth", "--size", "32M", "--callchain", "8", "-o"])
        .arg(&big)
        .output()
        .unwrap());
    let out_file = dir.path().join("big.speedscope");
    let out = Command::new(BIN)
        .env("TMPDIR", &nowhere)
        .args([
            "export",
            big.to_str().unwrap(),
            "--format",
            "speedscope",
            "-o",
        ])
        .arg(&out_file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let msg = stderr(&out);
    assert!(
        msg.contains("temporary file")
            && msg.contains(&format!("in {} (TMPDIR)", nowhere.display()))
            && msg.contains("No such file or directory")
            && !msg.contains("writing output"),
        "{msg}"
    );
    assert!(!out_file.exists());

    let out_file = dir.path().join("none.svg");
    let out = Command::new(BIN)
        .arg("flamegraph")
        .arg(fixtures_dir().join("stat-record.data"))
        .arg("-o")
        .arg(&out_file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "perfdata: error: the recording has no samples to draw\n"
    );
    assert!(!out_file.exists());
}
