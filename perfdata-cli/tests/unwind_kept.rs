//! Unwinding of samples kept from recordings where the walk once went wrong
//! (fixtures/unwind: fixtures/README.md says where each came from), read with the CFI of
//! their binaries (fixtures/unwind/symfs holds only that: `cfi_only.py`'s copies) and an
//! empty build-id cache, so that the result is the same on any machine. No perf needed:
//! the frames expected are read off the binaries (each return address follows a `call`),
//! and what perf 6.1 gives for the sample is said.

use std::process::{Command, Output};

use perfdata_tests::fixtures_dir;

/// `perfdata ARGS --symfs fixtures/unwind/symfs FIXTURE`, with a `$HOME` of its own (no
/// build-id cache: the machine's may hold the binaries whole).
fn run(args: &[&str], fixture: &str) -> Output {
    let home = tempfile::tempdir().expect("temp dir");
    let dir = fixtures_dir().join("unwind");
    let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(args)
        .arg("--symfs")
        .arg(dir.join("symfs"))
        .arg(dir.join(fixture))
        .env("HOME", home.path())
        .output()
        .expect("perfdata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Each sample's frames as `script -F ip,dso` prints them: (address, DSO).
fn frames(fixture: &str) -> Vec<(String, String)> {
    let out = run(&["script", "-F", "ip,dso"], fixture);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().split_once(' '))
        .map(|(ip, dso)| (ip.to_string(), dso.trim_matches(['(', ')']).to_string()))
        .collect()
}

/// The `unwind` counts of `report --json`.
fn stats(fixture: &str) -> serde_json::Value {
    let out = run(&["report", "--json"], fixture);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    json["unwind"].clone()
}

/// `cat` sampled in ld.so's `_dl_fixup` at 0xff9a, just after `pop %rbx; pop %rbp` (its
/// row: CFA rsp+24, rbx at CFA-40, 16 bytes below rsp and so outside the stack copy),
/// called by `_dl_runtime_resolve_xsavec`, whose CFA is rbx+32. The walk needs rbx there,
/// and the sampled rbx is it (the `pop` loaded it from that slot). Before, the walk
/// wanted rbx from the slot, had no word there, and cut the stack at
/// `_dl_runtime_resolve_xsavec` ("return address in a register the walk does not
/// track"; `unwind_fork_oracle` saw it in about one dash recording of four). perf 6.1's
/// libunwind stops there too (the slot is not in its copy either); libdw would (it leaves
/// rbx unset). The frames past it, in cat: 0x6a8c follows `call fileno@plt` at 0x6a87,
/// 0x6a3c `call 0x6a80` at 0x6a37, 0x36e2 `call 0x6a20` at 0x36dd (objdump -d of Debian
/// 12's coreutils 9.1 cat), each less one; then libc's `__run_exit_handlers`, whose
/// binary is not in the fixture: the stack is cut there, and says so.
#[test]
fn a_register_popped_in_the_sampled_epilogue_carries_the_walk_past_dl_runtime_resolve() {
    let ld = "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2";
    let want: Vec<(String, String)> = [
        ("ff9a", ld),
        ("12309", ld),
        ("6a8b", "/usr/bin/cat"),
        ("6a3b", "/usr/bin/cat"),
        ("36e1", "/usr/bin/cat"),
        ("3e55c", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
    ]
    .iter()
    .map(|(ip, dso)| (ip.to_string(), dso.to_string()))
    .collect();
    assert_eq!(frames("dl-fixup-epilogue.data"), want);
    let s = stats("dl-fixup-epilogue.data");
    assert_eq!(
        (&s["whole"], &s["cut"], &s["not_unwound"]),
        (&0.into(), &1.into(), &0.into()),
        "{s}"
    );
    assert_eq!(
        s["cut_by"],
        serde_json::json!({ "binary_missing": 1 }),
        "no cut at an untracked register: {s}"
    );
    assert_eq!(
        s["missing_binaries"],
        serde_json::json!({ "/usr/lib/x86_64-linux-gnu/libc.so.6": 1 }),
        "{s}"
    );
}
