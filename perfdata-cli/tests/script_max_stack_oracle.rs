//! `perfdata script --max-stack N` against perf 6.1's `perf script --max-stack N`, live,
//! byte for byte: a `-g` fixture, the `--call-graph dwarf` fixture (read under
//! `--symfs fixtures/symfs`, where its binary is), and page faults recorded here with
//! `--call-graph dwarf` that the kernel takes inside read's system call under an
//! inlined function (tests/callgraph/kernel_faults.c: recorded kernel frames, then
//! unwound frames that list inlined functions). perf script keeps N entries of the
//! recorded chain and unwinds N frames of the stack copy, the inlined functions listed
//! at those not counted.
//!
//! Not compared: `--max-stack 0` on a dwarf recording, where perf 6.1's unwinders write
//! into an array of no entries (libunwind's `ips[max_stack]`, libdw's `entries`): its
//! samples list no frame, two, or the sample alone on its line, as the stack it
//! overwrote happened to hold. perfdata lists no frame there, as perf does on `-g`.

use std::ffi::OsStr;
use std::path::Path;

use perfdata_tests::{fixtures_dir, perf_available, perf_output, run_perfdata};

/// `perf script` and `perfdata script` of `input` with `args`; a description of the
/// first difference, if any, and perfdata's listing.
fn differs(input: &Path, args: &[&str]) -> (Option<String>, String) {
    let perf = perf_output(&[&["script"][..], args].concat(), input);
    assert!(perf.status.success(), "perf script {args:?}");
    let mut argv: Vec<&OsStr> = vec![OsStr::new("script"), input.as_os_str()];
    argv.extend(args.iter().map(OsStr::new));
    let ours = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &argv, None);
    let (p, o) = (
        String::from_utf8_lossy(&perf.stdout).into_owned(),
        String::from_utf8_lossy(&ours.stdout).into_owned(),
    );
    assert!(
        ours.status.success(),
        "perfdata script {args:?}: {}",
        String::from_utf8_lossy(&ours.stderr)
    );
    if p == o {
        return (None, o);
    }
    let at = p
        .lines()
        .zip(o.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(p.lines().count().min(o.lines().count()));
    let line = |t: &str| t.lines().nth(at).map(str::to_string);
    let name = input.file_name().unwrap_or_default().to_string_lossy();
    let what = format!(
        "{name} {args:?}: line {}: perf {:?}, ours {:?}",
        at + 1,
        line(&p),
        line(&o)
    );
    (Some(what), o)
}

/// Compare each `--max-stack` of `maxes` (and none) in `view`, given `shared` too; the
/// problems. Each bound must cut something: its listing is shorter than the whole one.
fn compare(input: &Path, shared: &[&str], view: &[&str], maxes: &[&str]) -> Vec<String> {
    let (mut problems, whole) = {
        let (d, whole) = differs(input, &[shared, view].concat());
        (d.into_iter().collect::<Vec<_>>(), whole)
    };
    for n in maxes {
        let args = [shared, view, &["--max-stack", n][..]].concat();
        let (d, cut) = differs(input, &args);
        problems.extend(d);
        assert!(cut.len() < whole.len(), "--max-stack {n} cut nothing");
    }
    problems
}

#[perfdata_oracle::needs(perf)]
#[test]
fn max_stack_cuts_recorded_and_unwound_chains_as_perf_script_does() {
    assert!(perf_available());
    let fixtures = fixtures_dir();
    let symfs = fixtures.join("symfs");
    let symfs = symfs.to_str().expect("utf-8 path");
    let fp = fixtures.join("file-callgraph-fp.data");
    let dwarf = fixtures.join("file-callgraph-dwarf.data");
    let dir = tempfile::tempdir().expect("temp dir");
    let faults = crate::report_max_stack_oracle::kernel_faults(dir.path());
    let mut problems = Vec::new();
    problems.extend(compare(&fp, &[], &["-F", "ip,sym"], &["1", "3", "0"]));
    problems.extend(compare(&fp, &[], &[], &["2"]));
    problems.extend(compare(
        &dwarf,
        &["--symfs", symfs],
        &["-F", "ip,sym"],
        &["1", "3"],
    ));
    problems.extend(compare(&faults, &[], &["-F", "ip,sym"], &["1", "3"]));
    problems.extend(compare(&faults, &[], &["-F", "ip,sym,dso"], &["2"]));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The case the recording is for: a kernel frame, then an unwound one that lists an
    // inlined function, within three frames.
    let (_, three) = differs(&faults, &["-F", "ip,sym", "--max-stack", "3"]);
    assert!(three.contains(" read_zero\n"), "{three}");
    assert!(three.contains(" fill (inlined)\n"), "{three}");
}
