//! `perfdata anonymize` against perf 6.1. The names a recording holds are taken from
//! perf's own views of the input (comms from `perf script`, paths of the MMAP records,
//! the hostname and command line of `perf report --header-only -I`, cgroup paths), and
//! after anonymising none of them may occur anywhere in the output's bytes (compressed
//! output expanded first). perf must read the output as it reads the input, and the
//! samples per comm must be the input's, each comm's pseudonym computed here with
//! `sha1sum` (the first 12 hex digits of SHA-1 of salt, a 0 byte and the name). Every
//! fixture and every corpus file is checked (those perf refuses through a copy it reads).

#[path = "../anon_secrets/mod.rs"]
mod anon_secrets;
mod secrets;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use anon_secrets::{comm_counts, kept_path, secrets, secrets_counted};
use perfdata_tests::{
    corpus_files, fixture_files, fixtures_dir, listed, name, perf_available, perf_run, perf_stats,
    run_perfdata, CORRUPT, PERF_REFUSES,
};

const SALT: &str = "test-salt";

fn perfdata(args: &[&OsStr], stdin: Option<&[u8]>) -> Output {
    run_perfdata(env!("CARGO_BIN_EXE_perfdata"), args, stdin)
}

/// Run `perfdata anonymize input -o out extra...`.
fn run_anonymize(input: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<&OsStr> = vec![
        OsStr::new("anonymize"),
        input.as_os_str(),
        OsStr::new("-o"),
        out.as_os_str(),
    ];
    args.extend(extra.iter().map(OsStr::new));
    perfdata(&args, None)
}

/// `perfdata anonymize input -o out --salt SALT extra...`, which must succeed; its stderr.
fn anonymize(input: &Path, out: &Path, extra: &[&str]) -> String {
    let mut args = extra.to_vec();
    if !extra.contains(&"--salt") {
        args.extend(["--salt", SALT]);
    }
    let o = run_anonymize(input, out, &args);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        o.status.success(),
        "anonymize {}: {stderr}",
        input.display()
    );
    stderr
}

/// The first `len` hex digits of SHA-1(salt, 0, name), by `sha1sum`.
fn sha1_prefix(salt: &str, name: &str, len: usize) -> String {
    let mut child = Command::new("sha1sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sha1sum runs");
    let mut input = salt.as_bytes().to_vec();
    input.push(0);
    input.extend_from_slice(name.as_bytes());
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)[..len].to_string()
}

/// What a sample's comm becomes: names perf makes up itself (`:PID` for a thread it has
/// no COMM of, `swapper` for pid 0) are in no file and stay.
fn comm_pseudonym(salt: &str, comm: &str) -> String {
    if comm.starts_with(':') || comm == "swapper" {
        comm.to_string()
    } else {
        sha1_prefix(salt, comm, 12)
    }
}

/// stdout of a perf run that must succeed without complaint.
fn perf_clean(args: &[&str], input: &Path) -> String {
    let run = perf_run(args, input);
    assert!(run.clean(), "perf {args:?} {}: {:?}", input.display(), run);
    run.stdout
}

/// The input's counts with each comm replaced by its pseudonym.
fn expected_counts(input: &BTreeMap<String, u64>, salt: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (comm, n) in input {
        *out.entry(comm_pseudonym(salt, comm)).or_insert(0) += n;
    }
    out
}

/// The output's bytes, its compressed records expanded (`perfdata convert --decompress`).
fn expanded(out: &Path, dir: &Path) -> Vec<u8> {
    let plain = dir.join(format!("{}.plain", name(out)));
    let o = perfdata(
        &[
            OsStr::new("convert"),
            OsStr::new("--decompress"),
            out.as_os_str(),
            OsStr::new("-o"),
            plain.as_os_str(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(plain).unwrap()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    // str::contains is std's (optimised) search; ASCII and UTF-8 names survive the
    // lossy conversion, which only replaces bytes that are no UTF-8.
    String::from_utf8_lossy(haystack).contains(needle)
}

/// The secrets of `input` still in `out`'s bytes, as written and with its compressed
/// records expanded, as messages; and how many words were checked.
fn secrets_left(input: &Path, out: &Path, dir: &Path) -> (Vec<String>, usize) {
    words_left(input, secrets(input), out, dir)
}

/// [`secrets_left`] where `input`'s secret words are `words`.
fn words_left(
    input: &Path,
    words: Vec<(&'static str, String)>,
    out: &Path,
    dir: &Path,
) -> (Vec<String>, usize) {
    let mut left = Vec::new();
    for bytes in [std::fs::read(out).unwrap(), expanded(out, dir)] {
        assert!(!bytes.is_empty());
        let text = String::from_utf8_lossy(&bytes);
        for (kind, w) in &words {
            if text.contains(w.as_str()) {
                left.push(format!("{}: the {kind} word {w:?}", name(input)));
            }
        }
    }
    (left, words.len())
}

/// No secret of `input` is in `out`'s bytes; returns how many words were checked.
fn assert_no_secret(input: &Path, out: &Path, dir: &Path) -> usize {
    let (left, n) = secrets_left(input, out, dir);
    assert!(left.is_empty(), "still in the output: {left:#?}");
    n
}

/// perf reads the output as it reads the input: exit 0, nothing on stderr but what it
/// prints for the input too, and the same samples per (pseudonymous) comm.
fn assert_read_alike(input: &Path, out: &Path, salt: &str) -> usize {
    read_alike(input, &comm_counts(input), out, salt)
}

/// [`assert_read_alike`] of `input`, whose [`comm_counts`] are `counts`.
fn read_alike(input: &Path, counts: &BTreeMap<String, u64>, out: &Path, salt: &str) -> usize {
    for args in [&["report", "--stats"][..], &["script"][..]] {
        let o = perf_run(args, out);
        assert_eq!(o.status, Some(0), "perf {args:?} {}: {o:?}", name(input));
        // The input's run only where the output's says more than nothing (most do not).
        assert!(
            o.clean() || o.stderr == perf_run(args, input).stderr,
            "{}: {o:?}",
            name(input)
        );
    }
    let want = expected_counts(counts, salt);
    let got = comm_counts(out);
    assert_eq!(got, want, "{}: samples per comm", name(input));
    got.values().sum::<u64>() as usize
}

/// A copy of `input` that perf 6.1 reads (`perfdata convert --to-file --decompress
/// --compat=perf6.1`), for inputs perf refuses: their names are listed from it.
fn perf_twin(input: &Path, dir: &Path) -> Option<PathBuf> {
    let twin = dir.join(format!("{}.twin", name(input)));
    let o = perfdata(
        &[
            OsStr::new("convert"),
            OsStr::new("--to-file"),
            OsStr::new("--decompress"),
            OsStr::new("--compat=perf6.1"),
            input.as_os_str(),
            OsStr::new("-o"),
            twin.as_os_str(),
        ],
        None,
    );
    (o.status.success() && perf_run(&["report", "--stats"], &twin).clean()).then_some(twin)
}

/// What [`check_inputs`] checked: inputs perf reads (and of them, those with samples),
/// inputs perf refuses whose names came from their [`perf_twin`], and secret words.
#[derive(Debug, Default)]
struct Checked {
    read: usize,
    with_samples: usize,
    twins: usize,
    words: usize,
}

/// Anonymise every input: none of its names may be left in the output, and where perf
/// reads the input, perf must read the output alike. The inputs on every core (a dozen
/// perf runs each: the corpus's took minutes on one).
fn check_inputs(inputs: &[PathBuf], dir: &Path) -> Checked {
    let each = perfdata_tests::par_map(inputs, |input| check_input(input, dir));
    let mut c = Checked::default();
    let mut left = Vec::new();
    for (one, l) in each {
        c.read += one.read;
        c.with_samples += one.with_samples;
        c.twins += one.twins;
        c.words += one.words;
        left.extend(l);
    }
    eprintln!("{c:?}");
    assert!(left.is_empty(), "still in the output: {left:#?}");
    c
}

/// [`check_inputs`] of one input: what it checked, and the secrets left.
fn check_input(input: &Path, dir: &Path) -> (Checked, Vec<String>) {
    let mut c = Checked::default();
    let out = dir.join(format!("{}.anon", name(input)));
    anonymize(input, &out, &[]);
    if listed(PERF_REFUSES, &name(input)).is_some() {
        let Some(twin) = perf_twin(input, dir) else {
            return (c, Vec::new());
        };
        let (left, n) = secrets_left(&twin, &out, dir);
        (c.words, c.twins) = (n, 1);
        return (c, left);
    }
    // The input's samples per comm: its secret words and the output's counts.
    let counts = comm_counts(input);
    let (left, n) = words_left(input, secrets_counted(input, &counts), &out, dir);
    c.words = n;
    c.with_samples = usize::from(read_alike(input, &counts, &out, SALT) > 0);
    c.read = 1;
    (c, left)
}

#[perfdata_oracle::needs(perf)]
#[test]
fn every_fixture_keeps_no_name_and_its_samples() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let c = check_inputs(&fixture_files(), dir.path());
    // Every fixture perf reads (files, pipes, directories, compressed) was checked, and
    // the two it refuses (a compressed pipe, a pipe with tracepoints) through their twins.
    assert!(c.read >= 25, "{c:?}");
    assert!(c.with_samples >= 23, "{c:?}");
    assert_eq!(c.twins, 2, "{c:?}");
    assert!(c.words > 200, "{c:?}");
}

#[perfdata_oracle::needs(perf, corpus)]
#[test]
fn every_corpus_file_keeps_no_name_and_its_samples() {
    assert!(perf_available());
    let files = corpus_files();
    assert_eq!(files.len(), 40, "the corpus's 40 recordings");
    let dir = tempfile::tempdir().unwrap();
    let (corrupt, inputs): (Vec<PathBuf>, Vec<PathBuf>) =
        files.into_iter().partition(|f| name(f) == CORRUPT.0);
    // The corrupt file: a clear error naming the offset, and no output.
    assert_eq!(corrupt.len(), 1);
    let out = dir.path().join("corrupt.anon");
    let o = run_anonymize(&corrupt[0], &out, &["--salt", SALT]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("offset {}", CORRUPT.1)),
        "{stderr}"
    );
    assert!(!out.exists());
    let c = check_inputs(&inputs, dir.path());
    assert_eq!(c.read + c.twins + 1, 40, "{c:?}: every corpus file checked");
    assert!(c.with_samples >= 25, "{c:?}");
    assert!(c.words > 3000, "{c:?}");
}

#[perfdata_oracle::needs(perf)]
#[test]
fn distinctive_names_are_gone_and_binaries_keep_their_build_ids() {
    assert!(perf_available());
    let input = fixtures_dir().join("anon-secret.data");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    let stderr = anonymize(&input, &out, &[]);
    assert!(stderr.contains("renamed: 7 records"), "{stderr}");
    let (before, after) = (std::fs::read(&input).unwrap(), std::fs::read(&out).unwrap());
    for w in [
        "zqxsecretworker",
        "zqxotherhelper",
        "zqxanondir",
        "zqxsecrethost",
    ] {
        assert!(contains(&before, w), "the fixture has {w}");
        assert!(!contains(&after, w), "{w} left in the output");
    }
    assert!(assert_no_secret(&input, &out, dir.path()) >= 10);
    let counts = comm_counts(&input);
    assert_eq!(counts.len(), 3, "{counts:?}");
    assert!(counts["zqxsecretworker"] > 100 && counts["zqxotherhelper"] > 100);
    assert_eq!(assert_read_alike(&input, &out, SALT), 283);
    // perf matches each binary to its build id under the new name.
    let ids = |p: &Path| -> BTreeMap<String, String> {
        perf_clean(&["buildid-list"], p)
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(id, path)| (path.to_string(), id.to_string()))
            .collect()
    };
    let (ids_in, ids_out) = (ids(&input), ids(&out));
    assert_eq!(ids_in.len(), ids_out.len());
    for worker in ["zqxsecretworker", "zqxotherhelper"] {
        let path = format!("/tmp/zqxanondir/{worker}");
        let new = format!("/anon/{}", sha1_prefix(SALT, &path, 16));
        assert_eq!(ids_out.get(&new), ids_in.get(&path), "{new} in {ids_out:?}");
    }
    let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    assert_eq!(ids_out.get(libc), ids_in.get(libc), "a kept path");
    // Samples land in the same binaries, by their new names.
    // Columns are as wide as the longest name: compare the words of each line.
    let dsos = |p: &Path| {
        let report = perf_clean(
            &[
                "report", "--stdio", "-q", "-g", "none", "--sort", "dso", "-n",
            ],
            p,
        );
        let lines: Vec<String> = report
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|l| !l.is_empty())
            .collect();
        lines.join("\n")
    };
    let renamed = dsos(&input).replace(
        "zqxsecretworker",
        &sha1_prefix(SALT, "/tmp/zqxanondir/zqxsecretworker", 16),
    );
    let renamed = renamed.replace(
        "zqxotherhelper",
        &sha1_prefix(SALT, "/tmp/zqxanondir/zqxotherhelper", 16),
    );
    assert!(renamed.lines().count() >= 3, "{renamed}");
    assert_eq!(dsos(&out), renamed);
}

/// `perfdata convert` of the fixture with `args` into `dir`.
fn converted(dir: &Path, file: &str, args: &[&str]) -> PathBuf {
    let out = dir.join(file);
    let mut all: Vec<&OsStr> = vec![OsStr::new("convert")];
    all.extend(args.iter().map(OsStr::new));
    let input = fixtures_dir().join("anon-secret.data");
    all.extend([input.as_os_str(), OsStr::new("-o"), out.as_os_str()]);
    let o = perfdata(&all, None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

#[perfdata_oracle::needs(perf)]
#[test]
fn compressed_input_comes_out_compressed() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let made = converted(d, "z.data", &["--compress"]);
    for input in [fixtures_dir().join("file-compressed.data"), made] {
        let out = d.join(format!("{}.anon", name(&input)));
        anonymize(&input, &out, &[]);
        let stats = perf_stats(&out);
        assert!(stats.clean, "{}", name(&input));
        assert!(stats.records.get("COMPRESSED").is_some_and(|&n| n > 0));
        assert!(assert_no_secret(&input, &out, d) >= 3);
        assert!(assert_read_alike(&input, &out, SALT) > 100);
        let plain = d.join(format!("{}.plain-anon", name(&input)));
        anonymize(&input, &plain, &["--decompress"]);
        assert_eq!(perf_stats(&plain).records.get("COMPRESSED"), None);
        assert_eq!(comm_counts(&plain), comm_counts(&out));
    }
}

#[perfdata_oracle::needs(perf)]
#[test]
fn a_pipe_on_stdin_comes_out_as_a_pipe_on_stdout() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pipe = converted(d, "pipe.data", &["--to-pipe"]);
    let bytes = std::fs::read(&pipe).unwrap();
    let args: Vec<&OsStr> = ["anonymize", "-", "-o", "-", "--salt", SALT]
        .iter()
        .map(OsStr::new)
        .collect();
    let o = perfdata(&args, Some(&bytes));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A pipe stream: the 16-byte header, no file sections.
    assert_eq!(&o.stdout[..8], b"PERFILE2");
    assert_eq!(u64::from_le_bytes(o.stdout[8..16].try_into().unwrap()), 16);
    let out = d.join("out.pipe.data");
    std::fs::write(&out, &o.stdout).unwrap();
    assert!(!contains(&o.stdout, "zqxsecretworker") && !contains(&o.stdout, "zqxsecrethost"));
    assert!(assert_no_secret(&pipe, &out, d) >= 10);
    assert_eq!(assert_read_alike(&pipe, &out, SALT), 283);
}

#[perfdata_oracle::needs(perf)]
#[test]
fn one_salt_gives_one_pseudonym_across_files() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Both recordings ran `sh -c`: their shells share a comm.
    let inputs = ["anon-secret.data", "strip-multi.data"].map(|f| fixtures_dir().join(f));
    let mut by_salt = Vec::new();
    for salt in ["one", "two"] {
        let mut comms = Vec::new();
        for input in &inputs {
            let out = d.join(format!("{salt}-{}", name(input)));
            anonymize(input, &out, &["--salt", salt]);
            let c = comm_counts(&out);
            assert!(comm_counts(input).contains_key("sh"), "{}", name(input));
            assert!(c.contains_key(&comm_pseudonym(salt, "sh")), "{c:?}");
            comms.push(c.into_keys().collect::<Vec<_>>());
        }
        by_salt.push(comms);
    }
    let sh_one = comm_pseudonym("one", "sh");
    assert_ne!(sh_one, comm_pseudonym("two", "sh"));
    assert!(!by_salt[1].iter().flatten().any(|c| *c == sh_one));
    // Without a salt, a random one: two runs share no pseudonym.
    let input = &inputs[0];
    let runs: Vec<Vec<String>> = (0..2)
        .map(|i| {
            let out = d.join(format!("random-{i}.data"));
            let o = run_anonymize(input, &out, &[]);
            assert!(String::from_utf8_lossy(&o.stderr).contains("salt: random"));
            comm_counts(&out).into_keys().collect()
        })
        .collect();
    assert_eq!(runs[0].len(), 3);
    assert!(runs[0].iter().all(|c| !runs[1].contains(c)), "{runs:?}");
}

/// A `perf script` trace line with each `KEY=VALUE` string argument renamed as the
/// tracepoint's format allows: comms (room for 15 bytes) by their pseudonyms, paths by
/// `/anon/` and 16 hex digits, cut to the length the input's string had.
fn renamed_trace(line: &str, salt: &str) -> String {
    line.split(' ')
        .map(|word| match word.split_once('=') {
            Some((key, value)) if key.ends_with("comm") => {
                format!("{key}={}", comm_pseudonym(salt, value))
            }
            Some((key, value)) if value.starts_with('/') && !kept_path(value) => {
                let mut new = format!("/anon/{}", sha1_prefix(salt, value, 16));
                new.truncate(value.len());
                format!("{key}={new}")
            }
            _ => word.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[perfdata_oracle::needs(perf)]
#[test]
fn tracepoint_strings_are_renamed_unless_raw_is_kept() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let trace = |p: &Path| perf_clean(&["script", "-F", "trace:event,trace"], p);
    for file in ["file-tracepoint.data", "pipe-tracepoint.data"] {
        let input = fixtures_dir().join(file);
        let before = trace(&input);
        assert!(before.contains("filename=/usr/bin/s"), "{before}");
        assert!(before.contains("prev_comm=sh "), "{before}");
        let out = dir.path().join(format!("renamed-{file}"));
        let stderr = anonymize(&input, &out, &[]);
        assert!(stderr.contains("10 RAW payloads"), "{stderr}");
        let want: Vec<String> = before.lines().map(|l| renamed_trace(l, SALT)).collect();
        assert_eq!(want.len(), 10);
        assert_ne!(want.join("\n"), before.trim_end());
        assert_eq!(trace(&out).lines().collect::<Vec<_>>(), want, "{file}");
        let kept = dir.path().join(format!("kept-{file}"));
        let stderr = anonymize(&input, &kept, &["--keep-raw"]);
        assert!(stderr.contains("--keep-raw"), "{stderr}");
        assert_eq!(trace(&kept), before, "{file}");
    }
}

#[test]
fn bad_options_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    let input = fixtures_dir().join("anon-secret.data");
    let not_perf = fixtures_dir().join("README.md");
    for (from, args, says) in [
        (&input, &["--salt", ""][..], "salt is empty"),
        (
            &input,
            &["--keep-path", "usr/lib"][..],
            "must start with '/'",
        ),
        (
            &input,
            &["--keep-comm", "a-much-too-long-comm"][..],
            "cannot be a comm",
        ),
        (&not_perf, &["--salt", SALT][..], "not a perf.data file"),
    ] {
        let o = run_anonymize(from, &out, args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?} wrote an output");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
    // Never over its input.
    let copy = dir.path().join("in.data");
    std::fs::copy(&input, &copy).unwrap();
    let o = run_anonymize(&copy, &copy, &["--salt", SALT]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is the input"));
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(&input).unwrap()
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
