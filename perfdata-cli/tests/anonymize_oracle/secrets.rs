//! The recordings of `fixtures/anon/`, whose secrets all start with `zqx`: none of them
//! in what perf shows of the output, and perf names the THREAD_MAP's thread and the BPF
//! program by their pseudonyms.

use std::path::{Path, PathBuf};

use perfdata_tests::{fixtures_dir, name, perf_available, perf_run};

use super::{anonymize, contains, expanded, perf_clean, sha1_prefix, SALT};

/// What perf shows of a recording: its header with every feature, and every record
/// dumped (`perf script -D`), stdout and stderr.
fn perf_views(input: &Path) -> String {
    let mut text = String::new();
    for args in [
        &["report", "--header-only", "-I"][..],
        &["script", "-D"][..],
    ] {
        let run = perf_run(args, input);
        text.push_str(&run.stdout);
        text.push_str(&run.stderr);
    }
    text
}

#[perfdata_oracle::needs(perf)]
#[test]
fn recordings_with_secrets_show_perf_none() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(fixtures_dir().join("anon"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "data"))
        .collect();
    inputs.sort();
    assert_eq!(inputs.len(), 5);
    for input in inputs {
        // Each secret starts with zqx (fixtures/README.md), and perf shows them.
        assert!(perf_views(&input).contains("zqx"), "{}", name(&input));
        let out = dir.path().join(name(&input));
        let stderr = anonymize(&input, &out, &[]);
        assert!(!stderr.contains("anonymize dropped"), "{stderr}");
        let shown = perf_views(&out);
        assert!(!shown.to_lowercase().contains("zqx"), "{}", name(&input));
        let bytes = std::fs::read(&out).unwrap();
        assert!(!contains(&bytes, "zqx") && !contains(&expanded(&out, dir.path()), "zqx"));
    }
}

#[perfdata_oracle::needs(perf)]
#[test]
fn thread_map_comms_get_their_pseudonyms() {
    assert!(perf_available());
    // perf stat report names each thread of a --per-thread recording COMM-PID, from the
    // THREAD_MAP.
    let input = fixtures_dir().join("anon/secret-stat.data");
    let stat = |p: &Path| {
        let run = perf_run(&["stat", "report"], p);
        assert_eq!(run.status, Some(0), "{run:?}");
        let line = run
            .stderr
            .lines()
            .find(|l| l.contains("msec task-clock"))
            .map(str::to_string);
        line.unwrap_or_else(|| panic!("{run:?}"))
    };
    let before = stat(&input);
    let thread = before.split_whitespace().next().unwrap().to_string();
    let (comm, pid) = thread.rsplit_once('-').unwrap();
    assert_eq!(comm, "zqxsecretnap");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    let stderr = anonymize(&input, &out, &[]);
    let after = stat(&out);
    let want = format!("{}-{pid}", sha1_prefix(SALT, comm, 12));
    assert_eq!(
        after.split_whitespace().next(),
        Some(want.as_str()),
        "{after}"
    );
    assert_eq!(before.replace(&thread, &want), after);
    assert!(stderr.contains("renamed: 1 records"), "{stderr}");
}

#[perfdata_oracle::needs(perf)]
#[test]
fn bpf_program_names_get_their_pseudonyms() {
    assert!(perf_available());
    // perf names a BPF program's symbol bpf_prog_<tag>_<name>, from KSYMBOL in -D and
    // from BPF_PROG_INFO in the header.
    let input = fixtures_dir().join("anon/secret-bpf.data");
    let symbols = |p: &Path| -> Vec<String> {
        let mut out = Vec::new();
        let header = perf_clean(&["report", "--header-only", "-I"], p);
        for line in header.lines().filter(|l| l.starts_with("# bpf_prog_info ")) {
            out.push(line.split_whitespace().nth(3).unwrap().to_string());
        }
        let dump = perf_run(&["script", "-D"], p).stdout;
        for line in dump.lines().filter(|l| l.contains("PERF_RECORD_KSYMBOL")) {
            out.push(line.rsplit(' ').next().unwrap().to_string());
        }
        out
    };
    let before = symbols(&input);
    assert_eq!(before.len(), 2, "{before:?}");
    assert!(before
        .iter()
        .all(|s| s == &before[0] && s.ends_with("_zqxbpfsecret")));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    anonymize(&input, &out, &[]);
    let tag = before[0].strip_suffix("_zqxbpfsecret").unwrap();
    let want = format!("{tag}_{}", sha1_prefix(SALT, "zqxbpfsecret", 12));
    assert_eq!(symbols(&out), vec![want.clone(), want]);
}

#[test]
fn what_is_not_understood_is_named_or_with_strict_fails() {
    // anon-secret.data with its first COMM record given type 87, past perf's last.
    let mut bytes = std::fs::read(fixtures_dir().join("anon-secret.data")).unwrap();
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let mut at = word(40);
    while u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) != 3 {
        at += u16::from_le_bytes(bytes[at + 6..at + 8].try_into().unwrap()) as usize;
    }
    bytes[at..at + 4].copy_from_slice(&87u32.to_le_bytes());
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.data");
    std::fs::write(&input, &bytes).unwrap();
    let out = dir.path().join("out.data");
    let stderr = anonymize(&input, &out, &[]);
    assert!(
        stderr.contains("warning: anonymize dropped 1 UNKNOWN_87 record: a record type"),
        "{stderr}"
    );
    assert!(!contains(&std::fs::read(&out).unwrap(), "zqx"));
    let strict = dir.path().join("strict.data");
    let o = super::run_anonymize(&input, &strict, &["--strict", "--salt", SALT]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("offset {at}")), "{stderr}");
    assert!(stderr.contains("record UNKNOWN_87"), "{stderr}");
    assert!(!strict.exists());
}

#[test]
fn strict_fails_on_an_input_cut_short_and_writes_nothing() {
    // `head -c 20000`: a SAMPLE cut in two, and the 20 features after the data lost.
    let whole = std::fs::read(fixtures_dir().join("file-callgraph-fp.data")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("cut.data");
    std::fs::write(&input, &whole[..20_000]).unwrap();
    let out = dir.path().join("out.data");
    let stderr = anonymize(&input, &out, &[]);
    assert!(
        stderr.contains("the 20 features it flagged are lost")
            && stderr.contains("the input ends inside a record SAMPLE (24 of its 80 bytes)"),
        "{stderr}"
    );
    assert!(out.exists());
    std::fs::remove_file(&out).unwrap();
    let o = super::run_anonymize(&input, &out, &["--strict", "--salt", SALT]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("anonymize --strict: the input is not whole")
            && stderr.contains("the 20 features it flagged are lost"),
        "{stderr}"
    );
    assert!(!out.exists());
    // A pipe on stdin cut inside its last record: the whole records before it, or with
    // --strict an error and no output.
    let pipe = std::fs::read(fixtures_dir().join("pipe-cpu-clock.data")).unwrap();
    let cut = &pipe[..pipe.len() - 20];
    for strict in [false, true] {
        let mut args = vec!["anonymize", "-", "-o"];
        let out = out.to_str().unwrap();
        args.extend([out, "--salt", SALT]);
        if strict {
            args.push("--strict");
        }
        let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
        let o = super::perfdata(&args, Some(cut));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(i32::from(strict)), "{stderr}");
        assert!(
            stderr.contains("the input ends inside a record"),
            "{stderr}"
        );
        assert_eq!(Path::new(out).exists(), !strict);
        let _ = std::fs::remove_file(out);
    }
}
