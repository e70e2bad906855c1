//! Each reason a stack is cut, counted exactly (issue #26's weak test: the reasons were
//! checked only in total), on recordings made for the purpose with `perf record
//! --call-graph dwarf`; each count is what perf 6.1's own unwinding of the same recording
//! (with every binary in place) says, never a count of perfdata's:
//!
//! - the C workload (unwind/levels.c, built with a build id of its own and recorded
//!   `-N`, so that no build-id cache has it), then its binary changed at its path:
//!   - deleted: "binary missing", one for each sample whose perf stack has a frame in it;
//!   - rebuilt with another build id: "build id differs", the same samples;
//!   - its `.eh_frame` removed (same build id): "no CFI for the address", the same
//!     samples more;
//!   - in place: nothing cut; a stack that ends at ld.so's `_start` (code without CFI,
//!     where perf's walk ends too) reached the process's first frame and is whole;
//! - the signal handler workload (unwind/signals.c) recorded with an 128-byte stack copy:
//!   "signal frame outside the stack copy" for each sample whose perf stack ends at the
//!   sigreturn trampoline after the handler (perf's libunwind stops there too), "stack
//!   copy too short" for each whose perf stack ends with the frame perf reads from outside
//!   the copy (`ffffffffffffffff`, 0 less one); those ending at ld.so's `_start` are
//!   whole, as above; one ending in `__restore_rt` (the signal came during the handler's
//!   rt_sigreturn call, the ip past the end of the trampoline's CFI) is "no CFI for the
//!   address", where perf's walk stops too.
//!
//! Each count is checked in `perfdata unwind --json` and in its stderr summary.
//!
//! And the corpus's one arm64 recording with user registers (simpleperf's
//! `jbeich-perf_with_arm_regs.data`; its binaries are Android's, absent here): its sample
//! says ABI 32 and has an empty stack copy, so it is not unwound (perf 6.1 gives such a
//! sample no user frames), with ABI 64 patched in too, and its kernel frames are kept as
//! perf script prints them.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use perfdata_tests::{corpus_dir, perf_available, perf_output, run_perfdata};

use crate::unwind;

use unwind::{build, build_signals, record_dwarf, record_uncached, unwind_stats};

/// One frame of perf script's: (ip, symbol, dso).
type Frame = (String, String, String);

/// `perf script --no-inline -F ip,sym,dso` of `input`: each sample's frames, innermost
/// first.
fn perf_stacks(input: &Path) -> Vec<Vec<Frame>> {
    let out = perf_output(&["script", "--no-inline", "-F", "ip,sym,dso"], input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .split("\n\n")
        .map(|block| {
            block
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| {
                    let (ip, rest) = l.trim().split_once(' ').unwrap_or_default();
                    let (sym, dso) = rest.rsplit_once(" (").unwrap_or((rest, ""));
                    let dso = dso.trim_end_matches(')');
                    (ip.to_string(), sym.to_string(), dso.to_string())
                })
                .collect::<Vec<_>>()
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// `perfdata unwind input -o output`, which must succeed, with `extra`: stdout, stderr.
fn unwind(input: &Path, output: &Path, extra: &[&str]) -> (Vec<u8>, String) {
    let mut args = vec![
        OsStr::new("unwind"),
        input.as_os_str(),
        OsStr::new("-o"),
        output.as_os_str(),
    ];
    args.extend(extra.iter().map(OsStr::new));
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (out.stdout, stderr)
}

/// `perfdata unwind`'s counts of cut samples by reason: `--json`'s `unwind.cut_by`, and
/// the summary line its stderr has without `--json`.
fn cuts(input: &Path, output: &Path) -> (BTreeMap<String, u64>, String, String) {
    let (json, _) = unwind(input, output, &["--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&json).expect("JSON");
    let whole = doc["unwind"].to_string();
    let cut_by = doc["unwind"]["cut_by"]
        .as_object()
        .expect("cut_by")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().expect("a count")))
        .collect();
    let (_, stderr) = unwind(input, output, &[]);
    let summary = stderr
        .lines()
        .find(|l| l.contains("samples whole"))
        .unwrap_or_default()
        .to_string();
    (cut_by, summary, whole)
}

/// Samples whose perf stack ends at ld.so's `_start`: code without CFI, where perf's walk
/// ends too; perfdata's ends there whole (the process's first frame), not cut.
fn at_ld_start(stacks: &[Vec<Frame>]) -> u64 {
    stacks
        .iter()
        .filter(|s| {
            s.last()
                .is_some_and(|f| f.1 == "_start" && f.2.contains("/ld-"))
        })
        .count() as u64
}

/// The counts as the summary names them, in its order (the reasons' order).
fn summary_part(expected: &[(&str, u64)]) -> String {
    let parts: Vec<String> = expected
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(why, n)| format!("{why}: {n}"))
        .collect();
    format!("({})", parts.join(", "))
}

/// The JSON keys of `expected` (the summary's words) with their counts, the zeros left
/// out.
fn json_part(expected: &[(&str, u64)]) -> BTreeMap<String, u64> {
    let key = |why: &str| match why {
        "binary missing" => "binary_missing",
        "build id differs" => "build_id_differs",
        "no CFI for the address" => "no_cfi",
        "stack copy too short" => "stack_too_short",
        "signal frame outside the stack copy" => "signal_frame_outside_copy",
        other => panic!("{other}"),
    };
    expected
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(why, n)| (key(why).to_string(), *n))
        .collect()
}

/// Check one run's counts against `expected` ((summary words, count), in the summary's
/// order), in the JSON and on stderr.
fn assert_cuts(input: &Path, output: &Path, what: &str, expected: &[(&str, u64)]) {
    let (json, summary, whole) = cuts(input, output);
    if json != json_part(expected) {
        // A live recording: keep it, so that a rare cut can be looked at.
        let kept = std::env::temp_dir().join(format!("unwind_cuts-{what}.data"));
        let _ = std::fs::copy(input, &kept);
        panic!(
            "{what}: --json cut_by {json:?}, expected {:?}; the summary: {whole}; the \
             recording kept as {}",
            json_part(expected),
            kept.display()
        );
    }
    if expected.iter().all(|(_, n)| *n == 0) {
        assert!(summary.contains(" 0 cut,"), "{what}: stderr {summary:?}");
        return;
    }
    assert!(
        summary.ends_with(&summary_part(expected)),
        "{what}: stderr {summary:?}, expected {:?}",
        summary_part(expected)
    );
}

#[perfdata_oracle::needs(perf)]
#[test]
fn a_binary_missing_changed_or_without_cfi_cuts_its_samples_under_its_reason() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let (c, input) = record_uncached(dir.path());
    let exe = c.to_str().expect("utf-8 path");
    let stacks = perf_stacks(&input);
    let through = stacks
        .iter()
        .filter(|s| s.iter().any(|f| f.2 == exe))
        .count() as u64;
    let at_ld_start = at_ld_start(&stacks);
    assert!(through > 100, "{through} of {} samples", stacks.len());
    let out = dir.path().join("out.data");
    // A walk that ends at ld.so's `_start` (no CFI there) reached the process's first
    // frame: whole, not cut.
    assert_cuts(&input, &out, "in place", &[("no CFI for the address", 0)]);
    eprintln!("in place: {at_ld_start} samples end at ld.so's _start, counted whole");
    let original = std::fs::read(&c).expect("the binary");

    // Its .eh_frame removed: the build id is the recorded one, the CFI is gone.
    let bare = dir.path().join("bare");
    let st = Command::new("objcopy")
        .args([
            "--remove-section",
            ".eh_frame",
            "--remove-section",
            ".eh_frame_hdr",
        ])
        .arg(&c)
        .arg(&bare)
        .status()
        .expect("objcopy runs");
    assert!(st.success());
    std::fs::copy(&bare, &c).expect("binary replaced");
    assert_cuts(
        &input,
        &out,
        "without .eh_frame",
        &[("no CFI for the address", through)],
    );

    // Rebuilt with another build id.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).expect("dir");
    let (rebuilt, _) = build(&other, Some(&"ab".repeat(20)));
    std::fs::copy(&rebuilt, &c).expect("binary replaced");
    assert_ne!(std::fs::read(&c).expect("the binary"), original);
    assert_cuts(
        &input,
        &out,
        "another build id",
        &[("build id differs", through)],
    );

    // Deleted.
    std::fs::remove_file(&c).expect("binary removed");
    assert_cuts(&input, &out, "deleted", &[("binary missing", through)]);
}

#[perfdata_oracle::needs(perf)]
#[test]
fn a_short_copy_cuts_at_the_signal_frame_or_where_the_stack_runs_out() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = build_signals(dir.path());
    let exe = exe.to_str().expect("utf-8 path");
    let input = record_dwarf(
        dir.path(),
        "short.data",
        &["--call-graph", "dwarf,128"],
        &[exe, "1000"],
    );
    let stacks = perf_stacks(&input);
    // perf's libunwind stops at the trampoline (the frame after the handler's) when the
    // signal frame is beyond the copy, and gives a frame of 0 less one where a return
    // address is.
    let at_trampoline = stacks
        .iter()
        .filter(|s| s.len() >= 2 && s[s.len() - 2].1 == "on_prof")
        .count() as u64;
    let ran_out = stacks
        .iter()
        .filter(|s| s.last().is_some_and(|f| f.0 == "ffffffffffffffff"))
        .count() as u64;
    // Now and then the profiling signal comes while the handler returns, inside the
    // rt_sigreturn system call: the user ip is then just past the `syscall` that ends
    // libc's __restore_rt, past the end of its signal frame's CFI; perf's walk ends
    // there, at its first user frame, and perfdata's stack is cut for want of CFI.
    let in_sigreturn = stacks
        .iter()
        .filter(|s| s.last().is_some_and(|f| f.1 == "__restore_rt"))
        .count() as u64;
    assert!(
        at_trampoline > 100 && ran_out > 50,
        "{at_trampoline} and {ran_out} of {} samples",
        stacks.len()
    );
    assert_cuts(
        &input,
        &dir.path().join("out.data"),
        "dwarf,128",
        &[
            ("no CFI for the address", in_sigreturn),
            ("stack copy too short", ran_out),
            ("signal frame outside the stack copy", at_trampoline),
        ],
    );
}

#[perfdata_oracle::needs(perf, corpus)]
#[test]
fn the_arm64_corpus_sample_is_not_unwound_and_keeps_its_kernel_frames() {
    assert!(perf_available());
    let corpus = corpus_dir().expect("PERFDATA_CORPUS is set");
    let original = corpus.join("jbeich-perf_with_arm_regs.data");
    let dir = tempfile::tempdir().expect("temp dir");
    // The same recording with the sample's ABI made 64-bit: the 8 bytes before its x0.
    let mut bytes = std::fs::read(&original).expect("corpus file");
    let x0 = 0xb400_006e_e325_f731u64.to_le_bytes();
    let at = bytes
        .windows(8)
        .position(|w| w == x0)
        .expect("the sample's x0")
        - 8;
    assert_eq!(bytes[at..at + 8], 1u64.to_le_bytes(), "ABI 32 as recorded");
    bytes[at..at + 8].copy_from_slice(&2u64.to_le_bytes());
    let abi64 = dir.path().join("abi64.data");
    std::fs::write(&abi64, bytes).expect("written");
    // The recorded sample is a 32-bit process's; made 64-bit, its stack copy is empty.
    for (input, why) in [
        (&original, serde_json::json!({"abi32": 1})),
        (&abi64, serde_json::json!({"empty_stack_copy": 1})),
    ] {
        let stats = unwind_stats(input);
        assert_eq!(
            stats,
            serde_json::json!({"whole": 0, "cut": 0, "not_unwound": 1, "not_unwound_by": why,
                "cut_by": {}, "missing_binaries": {}, "other_build_id": {}}),
            "{}",
            input.display()
        );
        let theirs = perf_stacks(input);
        let args = [
            OsStr::new("script"),
            OsStr::new("-F"),
            OsStr::new("ip"),
            input.as_os_str(),
        ];
        let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
        assert!(out.status.success());
        let ours: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        let kernel: Vec<String> = theirs.concat().into_iter().map(|f| f.0).collect();
        assert_eq!(kernel.len(), 11, "{kernel:?}");
        assert!(kernel.iter().all(|ip| ip.starts_with("ffffffa4")));
        assert_eq!(ours, kernel, "{}", input.display());
    }
}
