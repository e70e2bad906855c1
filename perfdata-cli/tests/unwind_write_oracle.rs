//! `perfdata unwind IN -o OUT` (issue #26, done-means 2) against perf 6.1, on
//! recordings made here with `perf record --call-graph dwarf` (the workloads of
//! unwind_oracle.rs: a C program, a Rust release binary, `ls -R /usr`):
//!
//! - perf reads the output; `perf report --no-children -q --percent-limit=1 --sort
//!   comm,dso,sym` of the output equals that of the input, whole (rows and call graphs,
//!   lines of the exceptions below left out);
//! - `perf script -F ip,sym` callchains of the output equal perf's unwinding of the input
//!   for at least 99% of the samples;
//! - the output is at most a tenth of the input (`dwarf` is `dwarf,8192`);
//! - with the binary moved away, the output's callchains (addresses) are still perf's
//!   unwinding of the input with the binary present (and the input's are not);
//! - pipe, compressed and directory inputs give the same callchains, and an event
//!   without CALLCHAIN gains it.
//!
//! One exception, by design of perf 6.1: it names frames of functions inlined at an
//! address (`__libc_start_main_impl (inlined)`) only on the frames its own DWARF
//! unwinder gives, never on recorded callchains (later perf does both). The input is
//! therefore read with `--no-inline`, the output as it is. And where a walk needs a
//! return address beyond the stack copy, perf's libunwind gives a last frame
//! `ffffffffffffffff` (0 less 1, read from outside the copy) that perfdata leaves out;
//! that frame of the input's is not compared.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use perfdata_tests::{name, perf_available, perf_output, run_perfdata};

use crate::unwind;

use unwind::{build, record_dwarf, record_uncached, recordings};

/// `perfdata unwind input -o output` (with `extra`), which must succeed; its stderr.
fn unwind_to(input: &Path, output: &Path, extra: &[&str]) -> String {
    let mut args: Vec<&OsStr> = vec![OsStr::new("unwind"), input.as_os_str()];
    args.extend([OsStr::new("-o"), output.as_os_str()]);
    args.extend(extra.iter().map(OsStr::new));
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "unwind {}: {stderr}", name(input));
    stderr
}

/// perf's stdout for `args` on `input`, which perf must read without complaint.
fn perf_text(args: &[&str], input: &Path) -> String {
    let out = perf_output(args, input);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "perf {args:?} {}: {stderr}",
        name(input)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `perf report --no-children -q --percent-limit=1 --sort comm,dso,sym` (the check of
/// perf's own `inject --convert-callchain` test), with `extra`.
fn perf_report(input: &Path, extra: &[&str]) -> String {
    let mut args = vec![
        "report",
        "--no-children",
        "-q",
        "--percent-limit=1",
        "--sort",
        "comm,dso,sym",
    ];
    args.extend_from_slice(extra);
    perf_text(&args, input)
}

/// `perf script -F ip,sym` (with `extra`) as one block per sample, its frames' lines
/// trimmed; a last `ffffffffffffffff` frame (see the module's note) left out.
fn perf_script_chains(input: &Path, fields: &str, extra: &[&str]) -> Vec<Vec<String>> {
    let mut args = vec!["script", "-F", fields];
    args.extend_from_slice(extra);
    let text = perf_text(&args, input);
    let mut chains = Vec::new();
    let mut chain: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !chain.is_empty() {
                chains.push(std::mem::take(&mut chain));
            }
            continue;
        }
        chain.push(line.trim().to_string());
    }
    if !chain.is_empty() {
        chains.push(chain);
    }
    for c in &mut chains {
        if c.len() > 1 && c.last().is_some_and(|f| f.starts_with("ffffffffffffffff")) {
            c.pop();
        }
    }
    chains
}

/// Samples whose chains are equal, and the input's samples (the sample counts must be
/// equal: samples are never dropped).
fn equal_chains(input: &[Vec<String>], output: &[Vec<String>]) -> (usize, usize) {
    assert_eq!(input.len(), output.len(), "samples in and out");
    let same = input.iter().zip(output).filter(|(a, b)| a == b).count();
    (same, input.len())
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).expect("output written").len()
}

#[perfdata_oracle::needs(perf)]
#[test]
fn unwound_output_reads_in_perf_as_perfs_unwinding_of_the_input() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    for input in recordings(dir.path()) {
        let output = input.with_extension("unwound");
        unwind_to(&input, &output, &[]);
        let (bytes_in, bytes_out) = (size(&input), size(&output));
        eprintln!("{}: {bytes_in} -> {bytes_out} bytes", name(&input));
        assert!(
            bytes_out * 10 <= bytes_in,
            "{}: {bytes_in} -> {bytes_out} bytes",
            name(&input)
        );
        // perf's frame from outside the stack copy (see the module's note) left out.
        let report_in: String = perf_report(&input, &["--no-inline"])
            .lines()
            .filter(|l| l.trim_start_matches([' ', '|']).trim_end() != "0xffffffffffffffff")
            .map(|l| format!("{l}\n"))
            .collect();
        let report_out = perf_report(&output, &[]);
        assert!(report_in.lines().count() > 10, "{report_in}");
        assert_eq!(report_in, report_out, "{}: perf report", name(&input));
        // The unwound frames are real: without unwinding the input, perf sees less.
        let unwound_in = perf_script_chains(&input, "ip,sym", &["--no-inline"]);
        let out = perf_script_chains(&output, "ip,sym", &[]);
        let (same, total) = equal_chains(&unwound_in, &out);
        eprintln!("{}: {same} of {total} callchains equal", name(&input));
        assert!(
            same * 100 >= total * 99 && total > 100,
            "{}: {same} of {total} callchains equal",
            name(&input)
        );
        let longest = out.iter().map(Vec::len).max().unwrap_or(0);
        assert!(longest >= 6, "{}: at most {longest} frames", name(&input));
        // --json says the run's accounting: every sample counted once, each cut one
        // under its reason (`ls -R` cuts hundreds: its stacks outgrow the copy), and the
        // output's size as written.
        let json_out = input.with_extension("unwound-json");
        let args = [OsStr::new("unwind"), input.as_os_str(), OsStr::new("-o")];
        let args = [&args[..], &[json_out.as_os_str(), OsStr::new("--json")]].concat();
        let run = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&run.stdout).expect("JSON");
        let count = |k: &str| doc["unwind"][k].as_u64().unwrap_or(u64::MAX);
        let counted = count("whole") + count("cut") + count("not_unwound");
        assert_eq!(counted, total as u64, "{}: {doc}", name(&input));
        let by_reason: u64 = doc["unwind"]["cut_by"]
            .as_object()
            .map_or(0, |m| m.values().filter_map(|v| v.as_u64()).sum());
        assert_eq!(by_reason, count("cut"), "{}: {doc}", name(&input));
        assert!(count("whole") * 2 > counted, "{}: {doc}", name(&input));
        assert_eq!(doc["output_bytes"].as_u64(), Some(size(&json_out)));
    }
}

#[perfdata_oracle::needs(perf)]
#[test]
fn unwound_callchains_need_no_binaries() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    // The binary is in no build-id cache, so moving it away leaves perf without it.
    let (c, input) = record_uncached(dir.path());
    let exe = c.to_str().expect("utf-8 path");
    let output = dir.path().join("c.unwound");
    unwind_to(&input, &output, &[]);
    let perfs = perf_script_chains(&input, "ip", &["--no-inline"]);
    let before = perf_script_chains(&output, "ip", &[]);
    let moved: PathBuf = dir.path().join("moved-away");
    std::fs::rename(&c, &moved).expect("binary moved");
    let after = perf_script_chains(&output, "ip", &[]);
    let input_after = perf_script_chains(&input, "ip", &["--no-inline"]);
    std::fs::rename(&moved, &c).expect("binary back");
    assert_eq!(before, after, "the output's callchains without the binary");
    let (same, total) = equal_chains(&perfs, &after);
    assert!(
        same * 100 >= total * 99 && total > 100,
        "{same} of {total} callchains equal perf's unwinding"
    );
    // And the check means something: perf cannot unwind the input without it.
    let (same_in, _) = equal_chains(&perfs, &input_after);
    assert!(
        same_in * 2 < total,
        "{same_in} of {total} input callchains unwound without the binary"
    );
    // Unwinding the input without the binary names it, and still writes the output.
    std::fs::rename(&c, &moved).expect("binary moved");
    let stderr = unwind_to(&input, &dir.path().join("cut.unwound"), &[]);
    std::fs::rename(&moved, &c).expect("binary back");
    let named = stderr.lines().filter(|l| l.contains(exe)).count();
    assert_eq!(named, 1, "{stderr}");
    assert!(stderr.contains("not found, "), "{stderr}");
}

#[perfdata_oracle::needs(perf)]
#[test]
fn pipe_compressed_and_directory_inputs_unwind_alike() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let (c, _) = build(dir.path(), None);
    let exe = c.to_str().expect("utf-8 path");
    let file = record_dwarf(dir.path(), "c.data", &[], &[exe, "300"]);
    let file_out = dir.path().join("c.unwound");
    unwind_to(&file, &file_out, &[]);
    let expected = perf_script_chains(&file_out, "ip,sym", &[]);
    let convert_with = |command: &str, args: &[&str], to: &str| {
        let to = dir.path().join(to);
        let mut a: Vec<&OsStr> = vec![OsStr::new(command), file.as_os_str()];
        a.extend(args.iter().map(OsStr::new));
        a.extend([OsStr::new("-o"), to.as_os_str()]);
        let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &a, None);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        to
    };
    let pipe = convert_with("convert", &["--to-pipe"], "c.pipe");
    let zst = convert_with("convert", &["--compress=3"], "c.zst");
    for input in [pipe, zst] {
        let out = input.with_extension("unwound");
        unwind_to(&input, &out, &[]);
        assert_eq!(
            perf_script_chains(&out, "ip,sym", &[]),
            expected,
            "{}",
            name(&input)
        );
    }
    // An event without CALLCHAIN (dropped here) gains it: the user frames as before,
    // the kernel's went with the field.
    let bare = convert_with("strip", &["--drop-sample-fields", "CALLCHAIN"], "c.bare");
    let bare_out = bare.with_extension("unwound");
    unwind_to(&bare, &bare_out, &[]);
    let user = |chains: Vec<Vec<String>>| -> Vec<Vec<String>> {
        chains
            .into_iter()
            .map(|c| {
                c.into_iter()
                    .filter(|f| !f.starts_with("ffffffff"))
                    .collect()
            })
            .collect()
    };
    let user_frames = user(expected.clone());
    assert!(user_frames.iter().map(Vec::len).sum::<usize>() > 1000);
    assert_eq!(
        user(perf_script_chains(&bare_out, "ip,sym", &[])),
        user_frames,
        "without CALLCHAIN"
    );
    // The pipe read from stdin.
    let stdin_out = dir.path().join("stdin.unwound");
    let piped = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(["unwind", "-", "-o"])
        .arg(&stdin_out)
        .stdin(std::fs::File::open(dir.path().join("c.pipe")).expect("pipe file"))
        .output()
        .expect("perfdata runs");
    assert!(piped.status.success(), "{piped:?}");
    assert_eq!(perf_script_chains(&stdin_out, "ip,sym", &[]), expected);
    // A directory (perf record --threads): the same report as perf's unwinding.
    let threads = record_dwarf(dir.path(), "d.data", &["--threads"], &[exe, "300"]);
    assert!(threads.is_dir(), "--threads makes a directory");
    let out = dir.path().join("d.unwound");
    unwind_to(&threads, &out, &[]);
    assert_eq!(
        perf_report(&threads, &["--no-inline"]),
        perf_report(&out, &[]),
        "directory"
    );
}
