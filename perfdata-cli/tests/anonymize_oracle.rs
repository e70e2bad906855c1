//! `perfdata anonymize` against perf 6.1. The names a recording holds are taken from
//! perf's own views of the input (comms from `perf script`, paths of the MMAP records,
//! the hostname and command line of `perf report --header-only -I`, cgroup paths), and
//! after anonymising none of them may occur anywhere in the output's bytes (compressed
//! output expanded first). perf must read the output as it reads the input, and the
//! samples per comm must be the input's, each comm's pseudonym computed here with
//! `sha1sum` (the first 12 hex digits of SHA-1 of salt, a 0 byte and the name).

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use perfdata_tests::{
    fixture_files, fixtures_dir, listed, name, perf_available, perf_run, perf_stats, run_perfdata,
    PERF_REFUSES,
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

/// Samples per comm, from `perf script -F comm` (callchains hidden); empty for a
/// recording without samples (`perf stat record`), where perf script prints counts.
fn comm_counts(input: &Path) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    if perf_stats(input).samples.iter().all(|(_, n)| *n == 0) {
        return counts;
    }
    for line in perf_clean(&["script", "-F", "comm", "-G"], input).lines() {
        *counts.entry(line.trim().to_string()).or_insert(0) += 1;
    }
    counts
}

/// The input's counts with each comm replaced by its pseudonym.
fn expected_counts(input: &BTreeMap<String, u64>, salt: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (comm, n) in input {
        *out.entry(comm_pseudonym(salt, comm)).or_insert(0) += n;
    }
    out
}

/// Paths perf and the kernel name memory with, and the default kept prefixes.
fn kept_path(p: &str) -> bool {
    p.starts_with('[')
        || ["/usr/lib/", "/usr/lib64/", "/lib/", "/lib64/", "//anon"]
            .iter()
            .any(|k| p.starts_with(k))
}

/// The names `input` holds, as perf shows them: (kind, word) with words of 4 bytes or
/// more (shorter ones occur in any binary by chance). Command-line words that are part of
/// an event's name are left out: event names are kept on purpose.
fn secrets(input: &Path) -> Vec<(&'static str, String)> {
    let mut words = Vec::new();
    let header = perf_clean(&["report", "--header-only", "-I"], input);
    let events = perf_clean(&["evlist"], input);
    for line in header.lines() {
        if let Some(h) = line.strip_prefix("# hostname : ") {
            words.push(("hostname", h.trim().to_string()));
        }
        if let Some(c) = line.strip_prefix("# cmdline : ") {
            for w in c.split(|ch: char| ch.is_whitespace() || ch == '/') {
                if !events.contains(w) {
                    words.push(("cmdline", w.to_string()));
                }
            }
        }
    }
    let args = [
        "script",
        "--show-task-events",
        "--show-mmap-events",
        "--show-cgroup-events",
        "-F",
        "comm,pid,tid,event",
    ];
    for line in perf_clean(&args, input).lines() {
        if let Some((_, rest)) = line.split_once("PERF_RECORD_COMM") {
            // `PERF_RECORD_COMM[ exec]: NAME:PID/TID`
            let rest = rest.trim_start_matches(" exec").trim_start_matches(": ");
            if let Some((comm, _)) = rest.rsplit_once(':') {
                words.push(("comm", comm.to_string()));
            }
        }
        if line.contains("PERF_RECORD_MMAP") {
            let path = line.rsplit(' ').next().unwrap_or("");
            if !kept_path(path) {
                words.extend(path.split('/').map(|w| ("path", w.to_string())));
            }
        }
        if let Some((_, rest)) = line.split_once("PERF_RECORD_CGROUP cgroup: ") {
            let path = rest.split_once(' ').map_or("", |(_, p)| p);
            words.extend(path.split('/').map(|w| ("cgroup", w.to_string())));
        }
    }
    for comm in comm_counts(input).keys() {
        if !comm.starts_with(':') && comm != "swapper" {
            words.push(("comm", comm.clone()));
        }
    }
    words.retain(|(_, w)| w.len() >= 4);
    words.sort();
    words.dedup();
    words
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
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// No secret of `input` is in `out`'s (expanded) bytes; returns how many were checked.
fn assert_no_secret(input: &Path, out: &Path, dir: &Path) -> usize {
    let words = secrets(input);
    let bytes = expanded(out, dir);
    for (kind, w) in &words {
        assert!(
            !contains(&bytes, w),
            "{}: the {kind} word {w:?} is still in the output",
            name(input)
        );
    }
    words.len()
}

/// perf reads the output as it reads the input: exit 0, nothing on stderr but what it
/// prints for the input too, and the same samples per (pseudonymous) comm.
fn assert_read_alike(input: &Path, out: &Path, salt: &str) -> usize {
    for args in [&["report", "--stats"][..], &["script"][..]] {
        let (i, o) = (perf_run(args, input), perf_run(args, out));
        assert_eq!(o.status, Some(0), "perf {args:?} {}: {o:?}", name(input));
        assert!(o.clean() || o.stderr == i.stderr, "{}: {o:?}", name(input));
    }
    let want = expected_counts(&comm_counts(input), salt);
    let got = comm_counts(out);
    assert_eq!(got, want, "{}: samples per comm", name(input));
    got.values().sum::<u64>() as usize
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn every_fixture_keeps_no_name_and_its_samples() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let (mut checked, mut with_samples, mut words) = (0, 0, 0);
    for input in fixture_files() {
        let out = dir.path().join(format!("{}.anon", name(&input)));
        anonymize(&input, &out, &[]);
        if listed(PERF_REFUSES, &name(&input)).is_some() {
            continue;
        }
        words += assert_no_secret(&input, &out, dir.path());
        with_samples += usize::from(assert_read_alike(&input, &out, SALT) > 0);
        checked += 1;
    }
    eprintln!("{checked} fixtures, {with_samples} with samples, {words} words checked");
    // Every fixture perf reads (files, pipes, directories, compressed) was checked.
    assert!(checked >= 25, "{checked} fixtures checked");
    assert!(with_samples >= 23, "{with_samples} with samples");
    assert!(words > 200, "{words} words checked");
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
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

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
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

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
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

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
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

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn tracepoint_strings_are_renamed_unless_raw_is_kept() {
    assert!(perf_available());
    let input = fixtures_dir().join("file-tracepoint.data");
    let dir = tempfile::tempdir().unwrap();
    let trace = |p: &Path| perf_clean(&["script", "-F", "trace:event,trace"], p);
    let before = trace(&input);
    assert!(before.contains("filename=/usr/bin/sleep"), "{before}");
    assert!(before.contains("prev_comm=sh "), "{before}");
    let out = dir.path().join("renamed.data");
    let stderr = anonymize(&input, &out, &[]);
    assert!(stderr.contains("10 RAW payloads"), "{stderr}");
    let want: Vec<String> = before.lines().map(|l| renamed_trace(l, SALT)).collect();
    assert_eq!(want.len(), 10);
    assert_ne!(want.join("\n"), before.trim_end());
    assert_eq!(trace(&out).lines().collect::<Vec<_>>(), want);
    let kept = dir.path().join("kept.data");
    let stderr = anonymize(&input, &kept, &["--keep-raw"]);
    assert!(stderr.contains("--keep-raw"), "{stderr}");
    assert_eq!(trace(&kept), before);
}

#[test]
fn bad_options_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    let input = fixtures_dir().join("anon-secret.data");
    for (args, says) in [
        (&["--salt", ""][..], "salt is empty"),
        (&["--keep-path", "usr/lib"][..], "must start with '/'"),
        (
            &["--keep-comm", "a-much-too-long-comm"][..],
            "cannot be a comm",
        ),
    ] {
        let o = run_anonymize(&input, &out, args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?} wrote an output");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
