//! Kernel modules' symbols from kallsyms, as perf 6.1 names and places them. perf reads
//! a module's symbol from kallsyms as `foo_read\t[foo]` (kallsyms__parse keeps the rest
//! of the line), fixes the ends of all symbols together, then `maps__split_kallsyms`
//! cuts the name at the tab, finds the kernel map whose DSO's short name is `[foo]` and
//! moves the symbol into that DSO at its map-relative address; a module with no map
//! loses its symbols ("/proc/{kallsyms,modules} inconsistency"). Before, perfdata named
//! them `foo_read [foo]`.
//!
//! No module is loaded on this machine, so the recording is synthetic: the kernel's
//! MMAP as perf record writes it (up to the first module), module MMAPs as it
//! synthesizes them from /proc/modules, a kernel build id, and a kallsyms planted in
//! the build-id cache of a temporary HOME given to perf and perfdata.

use std::path::Path;
use std::process::Command;

use perfdata_synth::SampleSpec;

use crate::common::kernel::{
    assert_not_running, hex, kernel_recording, plant_kallsyms, SynthKernel,
};
use perfdata_tests::perf_available;

/// The recording's kernel: build id (not the running kernel's) and `_text`.
const KERNEL: [u8; 20] = [0x6b; 20];
const TEXT: u64 = 0xffff_ffff_8100_0000;
/// The first module; perf record's kernel map ends there.
const FOO: u64 = 0xffff_ffff_c000_0000;
/// `bar-drv.ko`, whose DSO perf names `[bar_drv]`.
const BAR: u64 = FOO + 0x1_0000;
/// A module kallsyms lists but the recording has no map of.
const BAZ: u64 = FOO + 0x2_0000;

/// The planted kallsyms: the kernel, two mapped modules, and two without a map: `[baz]`
/// beyond every map and `[qux]`, listed inside `[foo]`'s map (a module reloaded since
/// /proc/modules was read).
fn kallsyms() -> String {
    let lines = [
        format!("{TEXT:016x} T _text"),
        format!("{:016x} T k_sched", TEXT + 0x1000),
        format!("{:016x} t k_idle", TEXT + 0x2000),
        format!("{:016x} t foo_read\t[foo]", FOO + 0x100),
        format!("{:016x} T foo_write\t[foo]", FOO + 0x400),
        format!("{:016x} t qux_fn\t[qux]", FOO + 0x2000),
        format!("{BAR:016x} t bar_probe\t[bar_drv]"),
        format!("{:016x} t bar_irq\t[bar_drv]", BAR + 0x800),
        format!("{BAZ:016x} t baz_poll\t[baz]"),
        format!("{:016x} t baz_exit\t[baz]", BAZ + 0x200),
    ];
    lines.join("\n") + "\n"
}

/// The samples (ip, how many), the first in the kernel image: perf loads the kernel's
/// symbols, and splits the modules' off, before any module's own load (a module loaded
/// before keeps not all of its kallsyms symbols; see the report).
fn samples() -> Vec<(u64, usize)> {
    vec![
        (TEXT + 0x1010, 3), // k_sched
        (TEXT + 0x2800, 1), // k_idle
        (FOO + 0x108, 4),   // foo_read
        (FOO + 0x10, 1),    // in [foo], before its first symbol
        (FOO + 0x1400, 2),  // foo_write
        (FOO + 0x2010, 1),  // [qux]'s symbol, in [foo]'s map: no symbol
        (BAR + 0x810, 2),   // bar_irq
        (FOO + 0x8000, 1),  // between modules: no map
        (BAZ + 0x10, 1),    // [baz]'s symbol, no map
    ]
}

/// Write the recording of `samples` to `path`.
fn recording(path: &Path, samples: &[(u64, usize)]) {
    let kernel = SynthKernel {
        hostname: "modhost",
        os_release: "6.1.0-synth",
        build_id: &KERNEL,
        text: TEXT,
        len: FOO - TEXT,
        comm: "kworker",
    };
    let mut w = kernel_recording(path, &kernel);
    let modules = "/lib/modules/6.1.0-synth/kernel";
    w.module_mmap(FOO, 0x5000, &format!("{modules}/fs/foo/foo.ko"), 1)
        .unwrap();
    w.module_mmap(BAR, 0x4000, &format!("{modules}/drivers/bar-drv.ko"), 1)
        .unwrap();
    let mut time = 100;
    for &(ip, n) in samples {
        for _ in 0..n {
            time += 1000;
            let s = SampleSpec {
                pid: 500,
                tid: 500,
                time,
                ip,
                ..Default::default()
            };
            w.sample(&s).unwrap();
        }
    }
    w.finish().unwrap();
}

/// A directory with the recording (`perf.data`) and a HOME (`home`) whose build-id
/// cache holds the kernel's kallsyms.
fn setup() -> tempfile::TempDir {
    setup_with(&kallsyms(), &samples())
}

/// [`setup`] with another kallsyms and other samples.
fn setup_with(kallsyms: &str, samples: &[(u64, usize)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let build_id = hex(&KERNEL);
    assert_not_running(&[&build_id]);
    let home = dir.path().join("home");
    plant_kallsyms(&home, &format!("{build_id}/kallsyms"), kallsyms);
    recording(&dir.path().join("perf.data"), samples);
    dir
}

/// The output of `perf ARGS -i perf.data` (`perf`) or `perfdata ARGS perf.data`, run
/// with the directory's HOME; report's comment lines (a random tip among them) left out.
fn run(perf: bool, args: &[&str], dir: &Path) -> String {
    let input = dir.join("perf.data");
    let mut cmd = match perf {
        true => Command::new("perf"),
        false => Command::new(env!("CARGO_BIN_EXE_perfdata")),
    };
    cmd.args(args);
    if perf {
        cmd.arg("-i");
    }
    let out = cmd
        .arg(&input)
        .env("HOME", dir.join("home"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect()
}

/// perf 6.1's rows of `report --stdio -n --sort dso,sym` on the recording.
const PERF_ROWS: [&str; 9] = [
    "    25.00%             4  [foo]              [k] foo_read",
    "    18.75%             3  [kernel.kallsyms]  [k] k_sched",
    "    12.50%             2  [bar_drv]          [k] bar_irq",
    "    12.50%             2  [foo]              [k] foo_write",
    "     6.25%             1  [foo]              [k] 0x0000000000000010",
    "     6.25%             1  [foo]              [k] 0x0000000000002010",
    "     6.25%             1  [kernel.kallsyms]  [k] k_idle",
    "     6.25%             1  [unknown]          [k] 0xffffffffc0008000",
    "     6.25%             1  [unknown]          [k] 0xffffffffc0020010",
];

fn perf_rows() -> String {
    PERF_ROWS.map(|l| format!("{l}\n")).concat()
}

#[test]
fn module_symbols_are_named_and_placed_as_perf_places_them() {
    let dir = setup();
    let args = ["report", "--stdio", "-n", "--sort", "dso,sym"];
    assert_eq!(run(false, &args, dir.path()), perf_rows());
}

#[perfdata_oracle::needs(perf)]
#[test]
fn module_symbols_match_perf() {
    assert!(perf_available());
    let dir = setup();
    let args = ["report", "--stdio", "-n", "--sort", "dso,sym"];
    assert_eq!(run(true, &args, dir.path()), perf_rows(), "perf 6.1's rows");
    let cases: [&[&str]; 5] = [
        &["report", "--stdio", "-n", "--sort", "sym,dso"],
        &["report", "--stdio", "--sort", "comm,dso,sym"],
        &["report", "--stdio", "--sort", "dso"],
        &["script"],
        &["script", "-F", "ip,sym,symoff,dso"],
    ];
    for args in cases {
        let perf = run(true, args, dir.path());
        assert_eq!(run(false, args, dir.path()), perf, "{args:?}");
    }
}

/// A kallsyms of a kernel relocated at boot (KASLR: `_text` 2 MiB above the recording's,
/// as a kallsyms read after a reboot), modules where their maps are: perf moves the
/// kernel's symbols down by the relocation delta and places a module's by its map
/// alone. Planted: the delta applied to the modules' symbols too (no test above catches
/// it, their delta being 0) fails this.
#[test]
fn only_the_kernels_symbols_are_moved_by_the_relocation() {
    const DELTA: u64 = 0x20_0000;
    let lines = [
        format!("{:016x} T _text", TEXT + DELTA),
        format!("{:016x} T k_sched", TEXT + DELTA + 0x1000),
        format!("{:016x} t k_idle", TEXT + DELTA + 0x2000),
        format!("{:016x} t foo_read\t[foo]", FOO + 0x100),
        format!("{:016x} T foo_write\t[foo]", FOO + 0x400),
        format!("{BAR:016x} t bar_probe\t[bar_drv]"),
    ];
    let samples = [
        (TEXT + 0x1010, 1),
        (TEXT + 0x2800, 1),
        (FOO + 0x108, 2),
        (FOO + 0x410, 1),
        (BAR + 0x10, 1),
    ];
    let dir = setup_with(&(lines.join("\n") + "\n"), &samples);
    let rows = [
        "    33.33%             2  [foo]              [k] foo_read",
        "    16.67%             1  [bar_drv]          [k] bar_probe",
        "    16.67%             1  [foo]              [k] foo_write",
        "    16.67%             1  [kernel.kallsyms]  [k] k_idle",
        "    16.67%             1  [kernel.kallsyms]  [k] k_sched",
    ];
    let rows = rows.map(|l| format!("{l}\n")).concat();
    let args = ["report", "--stdio", "-n", "--sort", "dso,sym"];
    assert_eq!(run(false, &args, dir.path()), rows);
    if perf_available() {
        assert_eq!(run(true, &args, dir.path()), rows, "perf 6.1's rows");
        let args = ["script", "-F", "ip,sym,symoff,dso"];
        assert_eq!(run(false, &args, dir.path()), run(true, &args, dir.path()));
    }
}
