//! Kernel symbols from the build-id cache, as perf 6.1's `dso__find_kallsyms` takes
//! them: for a recording whose kernel is not the running one, the copy at
//! `$HOME/.debug/[kernel.kallsyms]/<build id>/kallsyms` (or the older file
//! `.../[kernel.kallsyms]/<build id>`), moved by the difference between its `_text` and
//! the recorded one, and nothing from a copy without `_text`. Before, perfdata read
//! /proc/kallsyms for the running kernel only and never the cache, so perf and perfdata
//! disagreed wherever such a copy existed. Each case runs with a temporary HOME.

use std::path::Path;
use std::process::Command;

use perfdata_tests::{fixtures_dir, perf_available};

use crate::common::kernel::{assert_not_running, plant_kallsyms};

/// The fixture's kernel (recorded elsewhere: not this machine's) and its MMAP of
/// `[kernel.kallsyms]_text` at 0xffffffff81000000, 0x1208d88 long.
const FIXTURE: &str = "file-system-wide.data";
const BUILD_ID: &str = "7bdad2f33eb864144f7545c504378f3db829fd87";
const TEXT: u64 = 0xffff_ffff_8100_0000;
const TEXT_LEN: u64 = 0x120_8d88;

/// A kallsyms text of that kernel loaded `shift` bytes higher: `_text`, then a function
/// `k_<recorded address>` every 64 KiB of the image, with `text_line` or without.
fn kallsyms(shift: u64, text_line: bool) -> String {
    let mut s = String::new();
    if text_line {
        s.push_str(&format!("{:016x} T _text\n", TEXT + shift));
    }
    for a in (TEXT..TEXT + TEXT_LEN).step_by(0x1_0000) {
        s.push_str(&format!("{:016x} t k_{a:x}\n", a + shift));
    }
    s
}

/// A HOME whose build-id cache holds `text` at `relative` under `.debug/[kernel.kallsyms]/`.
fn home_with(relative: &str, text: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    plant_kallsyms(home.path(), relative, text);
    home
}

/// The rows (percent, samples, level, symbol) of `report --stdio -n --sort sym` by perf
/// (`perf`) or by perfdata, run with `home` as HOME.
fn rows(perf: bool, home: &Path) -> Vec<String> {
    let input = fixtures_dir().join(FIXTURE);
    let mut cmd = if perf {
        let mut c = Command::new("perf");
        c.args(["report", "--stdio", "-n", "--sort", "sym", "-i"]);
        c
    } else {
        let mut c = Command::new(env!("CARGO_BIN_EXE_perfdata"));
        c.args(["report", "-n", "--sort", "sym"]);
        c
    };
    let out = cmd.arg(&input).env("HOME", home).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The cases: the cache entry (relative path, text) and perf 6.1's rows for it (51
/// cpu-clock samples: 50 at 0xffffffff821f206b, 1 at 0xffffffff81b02207).
fn cases() -> Vec<(String, String, [&'static str; 2])> {
    let named = [
        "98.04% 50 [k] k_ffffffff821f0000",
        "1.96% 1 [k] k_ffffffff81b00000",
    ];
    let unnamed = [
        "98.04% 50 [k] 0xffffffff821f206b",
        "1.96% 1 [k] 0xffffffff81b02207",
    ];
    let new = format!("{BUILD_ID}/kallsyms");
    vec![
        // Loaded where it was recorded, then 1 MiB higher (moved back by perf).
        (new.clone(), kallsyms(0, true), named),
        (new.clone(), kallsyms(0x10_0000, true), named),
        // perf's older cache layout: the build id names the file itself.
        (BUILD_ID.to_string(), kallsyms(0x10_0000, true), named),
        // Without `_text` perf cannot place the copy and loads nothing from it.
        (new, kallsyms(0, false), unnamed),
    ]
}

#[test]
fn kernel_symbols_come_from_the_build_id_cache() {
    assert_not_running(&[BUILD_ID]);
    for (relative, text, want) in cases() {
        let home = home_with(&relative, &text);
        assert_eq!(rows(false, home.path()), want, "{relative}");
    }
    // No cache entry: the kernel stays unnamed.
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(rows(false, empty.path()), cases()[3].2);
}

#[perfdata_oracle::needs(perf)]
#[test]
fn kernel_symbols_from_the_cache_match_perf_report() {
    assert!(perf_available());
    assert_not_running(&[BUILD_ID]);
    for (relative, text, want) in cases() {
        let home = home_with(&relative, &text);
        let perf = rows(true, home.path());
        assert_eq!(perf, want, "perf 6.1 on {relative}");
        assert_eq!(rows(false, home.path()), perf, "{relative}");
    }
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(rows(false, empty.path()), rows(true, empty.path()));
}
