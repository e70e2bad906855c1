//! Recordings of several hosts, each with its own kernel (issue #28). perf 6.1 picks a
//! recording's kernel symbols by the kernel's build id (`dso__find_kallsyms`):
//! /proc/kallsyms only when the build id is the running kernel's, else the copy in the
//! build-id cache, else none (addresses); with `--symfs`, no kallsyms at all
//! (`dso__load_kernel_sym`: "do not try local files if a symfs was given").
//!
//! Two recordings with different kernels, each with a kallsyms of its own in a build-id
//! cache (a temporary HOME's `.debug`): the fixture `file-system-wide.data` (recorded
//! by perf, kernel 7bdad2f3..., host `vm`) and a synthetic one (kernel `b0b1b2...`, host
//! `host-b`). Their kallsyms name each kernel function after the recording (`k_...`,
//! `b_...`), so a frame named from the wrong kernel's symbols (or this machine's
//! /proc/kallsyms) shows.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use perfdata_synth::{Mapping, SampleSpec, SynthWriter};

use crate::common::kernel::{
    assert_not_running, hex, kernel_recording, plant_kallsyms, SynthKernel,
};
use perfdata_tests::{fixtures_dir, perf_available};

/// The fixture: its kernel, `_text` and the MMAP's length.
const FIXTURE: &str = "file-system-wide.data";
const FIXTURE_KERNEL: &str = "7bdad2f33eb864144f7545c504378f3db829fd87";
const FIXTURE_TEXT: u64 = 0xffff_ffff_8100_0000;
const FIXTURE_TEXT_LEN: u64 = 0x120_8d88;

/// The synthetic recording's kernel: build id, `_text` and length.
const SYNTH_KERNEL: [u8; 20] = [
    0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf,
    0xc0, 0xc1, 0xc2, 0xc3,
];
const SYNTH_TEXT: u64 = 0xffff_ffff_a000_0000;
const SYNTH_TEXT_LEN: u64 = 0x40_0000;

/// A kallsyms text of a kernel whose `_text` is at `text` (loaded `shift` higher than
/// recorded): a function `PREFIX<recorded address>` every 64 KiB.
fn kallsyms(prefix: &str, text: u64, len: u64, shift: u64) -> String {
    let mut s = format!("{:016x} T _text\n", text.wrapping_add(shift));
    for a in (text..text + len).step_by(0x1_0000) {
        s.push_str(&format!("{:016x} t {prefix}{a:x}\n", a.wrapping_add(shift)));
    }
    s
}

/// The synthetic recording of host `host-b`: one process, 10 kernel samples at each of
/// 0x10000 * (1..=k) past `_text` plus 0x40 (k samples there: 1+2+3+4 in all) and 5 in
/// user space.
fn synth_recording(path: &Path, hostname: &str) {
    let kernel = SynthKernel {
        hostname,
        os_release: "6.1.0-hostb",
        build_id: &SYNTH_KERNEL,
        text: SYNTH_TEXT,
        len: SYNTH_TEXT_LEN,
        comm: "kworker-b",
    };
    let mut w = kernel_recording(path, &kernel);
    let lib = Mapping {
        pid: 500,
        tid: 500,
        addr: 0x40_0000,
        len: 0x1_0000,
        pgoff: 0,
        path: "/synth/libb.so".into(),
        build_id: None,
    };
    w.mmap2(&lib, 12).unwrap();
    let mut time = 100;
    let mut sample = |w: &mut SynthWriter<_>, ip: u64| {
        time += 1000;
        w.sample(&SampleSpec {
            pid: 500,
            tid: 500,
            time,
            ip,
            ..Default::default()
        })
        .unwrap();
    };
    for k in 1..=4u64 {
        for _ in 0..k {
            sample(&mut w, SYNTH_TEXT + k * 0x1_0000 + 0x40);
        }
    }
    for _ in 0..5 {
        sample(&mut w, 0x40_0100);
    }
    w.finish().unwrap();
}

/// perf report's (or perfdata report's) kernel rows of `input`, run with `home` as
/// HOME: symbol (without `[k] `) -> samples, every event added up.
fn kernel_rows(perf: bool, input: &Path, home: &Path, extra: &[&str]) -> BTreeMap<String, u64> {
    let mut cmd = if perf {
        let mut c = Command::new("perf");
        c.args(["report", "--stdio", "--no-children"]);
        c
    } else {
        let mut c = Command::new(env!("CARGO_BIN_EXE_perfdata"));
        c.arg("report");
        c
    };
    cmd.args(["-n", "--sort", "dso,sym"]).args(extra);
    if perf {
        cmd.arg("-i");
    }
    let out = cmd.arg(input).env("HOME", home).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut rows = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let cells: Vec<&str> = line.split_whitespace().collect();
        if line.starts_with('#') || cells.len() < 5 || cells[2] != "[kernel.kallsyms]" {
            continue;
        }
        assert_eq!(cells[3], "[k]", "{line}");
        *rows.entry(cells[4..].join(" ")).or_default() += cells[1].parse::<u64>().unwrap();
    }
    rows
}

/// The Parquet tables' kernel rows per recording path: symbol -> samples.
fn parquet_kernel_rows(dir: &Path) -> BTreeMap<String, BTreeMap<String, u64>> {
    let script = "import duckdb, json, sys\n\
        con = duckdb.connect()\n\
        d = sys.argv[1]\n\
        q = f\"\"\"SELECT r.path, s.symbol, count(*)\n\
          FROM read_parquet('{d}/samples/**/*.parquet') s\n\
          JOIN read_parquet('{d}/recordings/*.parquet') r USING (recording)\n\
          WHERE s.dso = '[kernel.kallsyms]' GROUP BY ALL ORDER BY ALL\"\"\"\n\
        print(json.dumps(con.execute(q).fetchall()))\n";
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(dir)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<(String, String, u64)> = serde_json::from_slice(&out.stdout).unwrap();
    let mut by_path: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for (path, symbol, n) in rows {
        by_path.entry(path).or_default().insert(symbol, n);
    }
    by_path
}

/// `perfdata ARGS` with `home` as HOME, which must succeed: its stderr.
fn perfdata(args: &[&str], home: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(args)
        .env("HOME", home)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "perfdata {args:?}: {stderr}");
    stderr
}

struct Fleet {
    _dir: tempfile::TempDir,
    home: PathBuf,
    empty_home: PathBuf,
    fixture: PathBuf,
    synth: PathBuf,
    root: PathBuf,
}

/// The two recordings and a HOME whose cache has both kernels' kallsyms (the fixture's
/// loaded 2 MiB higher than recorded, the synthetic one's 16 MiB lower).
fn fleet() -> Fleet {
    assert_not_running(&[FIXTURE_KERNEL, &hex(&SYNTH_KERNEL)]);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let home = root.join("home");
    let empty_home = root.join("empty-home");
    std::fs::create_dir_all(&empty_home).unwrap();
    plant_kallsyms(
        &home,
        &format!("{FIXTURE_KERNEL}/kallsyms"),
        &kallsyms("k_", FIXTURE_TEXT, FIXTURE_TEXT_LEN, 0x20_0000),
    );
    plant_kallsyms(
        &home,
        &format!("{}/kallsyms", hex(&SYNTH_KERNEL)),
        &kallsyms(
            "b_",
            SYNTH_TEXT,
            SYNTH_TEXT_LEN,
            0u64.wrapping_sub(0x100_0000),
        ),
    );
    let synth = root.join("host-b.data");
    synth_recording(&synth, "host-b");
    Fleet {
        _dir: dir,
        home,
        empty_home,
        fixture: fixtures_dir().join(FIXTURE),
        synth,
        root,
    }
}

/// The Parquet export of both recordings together names each one's kernel frames from
/// its own kernel's kallsyms, as perf names them in each recording alone; without a
/// cached kallsyms (another host's kernel, not running here), the frames are addresses
/// in both, never names from this machine's /proc/kallsyms.
#[perfdata_oracle::needs(perf, python_duckdb, parquet)]
#[test]
fn each_recordings_kernel_frames_are_named_from_its_own_kallsyms() {
    assert!(perf_available());
    let f = fleet();
    let inputs = [&f.fixture, &f.synth];
    for (home, named) in [(&f.home, true), (&f.empty_home, false)] {
        let out = f.root.join(format!("pq-{named}"));
        let mut args = vec!["export"];
        args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
        args.extend(["--format", "parquet", "-o", out.to_str().unwrap()]);
        perfdata(&args, home);
        let tables = parquet_kernel_rows(&out);
        for (input, prefix) in [(&f.fixture, "k_"), (&f.synth, "b_")] {
            let ours = &tables[input.to_str().unwrap()];
            let theirs = kernel_rows(true, input, home, &[]);
            assert_eq!(ours, &theirs, "{} (named: {named})", input.display());
            // perfdata report of the recording alone agrees too.
            assert_eq!(kernel_rows(false, input, home, &[]), theirs);
            assert!(!theirs.is_empty());
            for symbol in theirs.keys() {
                let address = symbol.starts_with("0x") && symbol.len() == 18;
                assert_eq!(
                    (symbol.starts_with(prefix), address),
                    (named, !named),
                    "{} (named: {named}): {theirs:?}",
                    input.display()
                );
            }
        }
        if named {
            // The synthetic plan: k samples at function k.
            let b = &tables[f.synth.to_str().unwrap()];
            let want: BTreeMap<String, u64> = (1..=4u64)
                .map(|k| (format!("b_{:x}", SYNTH_TEXT + k * 0x1_0000), k))
                .collect();
            assert_eq!(b, &want);
        }
    }
}

/// With `--symfs`, perf 6.1 reads no kallsyms (neither the cache nor /proc/kallsyms):
/// perfdata report and the Parquet export leave the kernel's addresses unnamed as perf
/// does.
#[perfdata_oracle::needs(perf, python_duckdb, parquet)]
#[test]
fn with_symfs_no_kallsyms_is_read_as_perf() {
    assert!(perf_available());
    let f = fleet();
    let symfs = f.root.join("symfs");
    std::fs::create_dir_all(&symfs).unwrap();
    let symfs = symfs.to_str().unwrap();
    let theirs = kernel_rows(true, &f.fixture, &f.home, &["--symfs", symfs]);
    assert!(!theirs.is_empty());
    assert!(theirs.keys().all(|s| s.starts_with("0x")), "{theirs:?}");
    let ours = kernel_rows(false, &f.fixture, &f.home, &["--symfs", symfs]);
    assert_eq!(ours, theirs);
    let out = f.root.join("pq");
    let fixture = f.fixture.to_str().unwrap();
    let args = [
        "export", fixture, "--format", "parquet", "--symfs", symfs, "-o",
    ];
    perfdata(&[&args[..], &[out.to_str().unwrap()]].concat(), &f.home);
    assert_eq!(parquet_kernel_rows(&out)[fixture], theirs);
}

/// A merge of the two hosts' recordings warns in words a user acts on, naming both
/// hosts and what to use instead; perf, holding one kernel map for the merged file,
/// names the kernel frames of one host's samples only (docs/commands.md).
#[perfdata_oracle::needs(perf)]
#[test]
fn a_merge_of_two_hosts_names_them_in_its_kernel_warning() {
    assert!(perf_available());
    let f = fleet();
    let out = f.root.join("merged.data");
    let said = perfdata(
        &[
            "merge",
            f.fixture.to_str().unwrap(),
            f.synth.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        &f.home,
    );
    assert_kernel_warning(
        &said,
        &[
            "host vm, kernel 7bdad2f33eb8 (",
            "host host-b, kernel b0b1b2b3b4b5 (",
            "export --format parquet",
            "one merge per host and kernel",
        ],
    );
    // What perf does with it: the kernel read last (host-b's MMAP and BUILD_ID entry)
    // is the machine's, so its frames are named as in its recording alone, and the
    // first host's kernel samples fall outside that map ([unknown], unnamed): the
    // merged file's kernel rows are host-b's alone.
    assert_eq!(
        kernel_rows(true, &out, &f.home, &[]),
        kernel_rows(true, &f.synth, &f.home, &[])
    );
    // perfdata report names them alike (the last [kernel.kallsyms] BUILD_ID entry's
    // kallsyms).
    assert_eq!(
        kernel_rows(false, &out, &f.home, &[]),
        kernel_rows(true, &out, &f.home, &[])
    );
    // perfdata report of the merged file: perf's rows, the first host's kernel samples
    // in [unknown] too.
    assert_eq!(
        dso_rows(true, &out, &f.home),
        dso_rows(false, &out, &f.home)
    );
    let unknown = dso_rows(true, &out, &f.home)
        .into_iter()
        .filter(|(dso, _)| dso == "[unknown]")
        .map(|r| r.1)
        .sum::<u64>();
    let alone: u64 = kernel_rows(true, &f.fixture, &f.home, &[]).values().sum();
    assert_eq!(unknown, alone);
}

/// Samples per DSO of perf report (or perfdata report) of `input`, with `home` as HOME.
fn dso_rows(perf: bool, input: &Path, home: &Path) -> BTreeMap<String, u64> {
    let out = if perf {
        let args = [
            "report",
            "--stdio",
            "--no-children",
            "-n",
            "--sort",
            "dso",
            "-i",
        ];
        Command::new("perf")
            .args(args)
            .arg(input)
            .env("HOME", home)
            .output()
    } else {
        let args = ["report", "-n", "--sort", "dso"];
        Command::new(env!("CARGO_BIN_EXE_perfdata"))
            .args(args)
            .arg(input)
            .env("HOME", home)
            .output()
    }
    .unwrap();
    assert!(out.status.success());
    let mut rows = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let cells: Vec<&str> = line.split_whitespace().collect();
        if line.starts_with('#') || cells.len() != 3 {
            continue;
        }
        *rows.entry(cells[2].to_string()).or_default() += cells[1].parse::<u64>().unwrap();
    }
    rows
}

/// One host's recordings, one in file mode (its BUILD_ID feature names the kernel) and
/// one through a pipe (perf 6.1 writes no kernel build id there): one kernel, no
/// kernel warning. Before, the pipe's unknown kernel counted as a second one, and the
/// merge warned that one host "ran on 2 kernels".
#[perfdata_oracle::needs(perf)]
#[test]
fn a_pipe_recording_of_the_same_host_is_no_second_kernel() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.data");
    let work = ["sh", "-c", "for i in $(seq 2000); do :; done"];
    let st = Command::new("perf")
        .args(["record", "-N", "-q", "-o"])
        .arg(&file)
        .arg("--")
        .args(work)
        .status()
        .unwrap();
    assert!(st.success());
    let pipe = dir.path().join("b.pipe");
    let out = Command::new("perf")
        .args(["record", "-N", "-q", "-o", "-", "--"])
        .args(work)
        .output()
        .unwrap();
    assert!(out.status.success());
    std::fs::write(&pipe, out.stdout).unwrap();
    let merged = dir.path().join("m.data");
    let said = perfdata(
        &[
            "merge",
            file.to_str().unwrap(),
            pipe.to_str().unwrap(),
            "-o",
            merged.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(!said.contains("kernels:"), "{said}");
}

/// The inputs the other way round: host-b's kernel MMAP is still the one read last in
/// time (its samples' times are the smaller, the fixture's MMAP comes first), but the
/// last `[kernel.kallsyms]` BUILD_ID entry is now the fixture's, so perf 6.1 names
/// host-b's 10 kernel samples with the fixture's kallsyms (`k_` names, wrong) and puts
/// the fixture's 51 in `[unknown]`. perfdata report of the merged file reads it alike.
#[perfdata_oracle::needs(perf)]
#[test]
fn a_merge_of_two_hosts_reversed_reads_as_perf_reads_it() {
    assert!(perf_available());
    let f = fleet();
    let out = f.root.join("merged.data");
    let (synth, fixture) = (f.synth.to_str().unwrap(), f.fixture.to_str().unwrap());
    let said = perfdata(
        &["merge", synth, fixture, "-o", out.to_str().unwrap()],
        &f.home,
    );
    assert!(said.contains("ran on 2 kernels"), "{said}");
    let theirs = kernel_rows(true, &out, &f.home, &[]);
    let k_names: BTreeMap<String, u64> = (1..=4u64)
        .map(|k| (format!("k_{:x}", FIXTURE_TEXT + k * 0x1_0000), k))
        .collect();
    assert_eq!(theirs, k_names);
    assert_eq!(kernel_rows(false, &out, &f.home, &[]), theirs);
    assert_eq!(
        dso_rows(false, &out, &f.home),
        dso_rows(true, &out, &f.home)
    );
}

/// One host's two kernels (a recording of `vm` after it booted another kernel): the
/// warning names both kernels of the host, and its advice is one merge per host and
/// kernel (one merge per host would still join the two).
#[test]
fn a_merge_of_one_hosts_two_kernels_advises_one_merge_per_kernel() {
    let f = fleet();
    let other = f.root.join("vm-b.data");
    synth_recording(&other, "vm");
    let out = f.root.join("merged.data");
    let (fixture, other) = (f.fixture.to_str().unwrap(), other.to_str().unwrap());
    let said = perfdata(
        &["merge", fixture, other, "-o", out.to_str().unwrap()],
        &f.home,
    );
    assert_kernel_warning(
        &said,
        &[
            "host vm, kernel 7bdad2f33eb8 (",
            "host vm, kernel b0b1b2b3b4b5 (",
            "or one merge per host and kernel",
        ],
    );
}

/// The kernels warning line of merge's stderr `said` holds each of `words`.
fn assert_kernel_warning(said: &str, words: &[&str]) {
    let warning = said
        .lines()
        .find(|l| l.contains("kernels:"))
        .unwrap_or_else(|| panic!("no kernel warning: {said}"));
    for word in words {
        assert!(warning.contains(word), "{word:?} not in {warning:?}");
    }
}

/// Another host's recording that names no kernel (no kernel sample, so perf wrote no
/// kernel build id): the warning names both hosts, and no kernel id, since nothing says
/// the kernels differ. Before, the fixture's id was said beside it as if it did, which
/// made merge_oracle's two-host test fail on recordings that happened to miss the
/// kernel.
#[test]
fn a_host_that_names_no_kernel_is_said_without_kernel_ids() {
    use perfdata_synth::{EventSpec, HostInfo, TraceSpec};
    let f = fleet();
    let other = f.root.join("nokernel.data");
    let trace = TraceSpec {
        events: vec![EventSpec::cpu_clock(1000)],
        host: HostInfo {
            hostname: "host-c".into(),
            ..HostInfo::default()
        },
        opts: Default::default(),
    };
    let file = std::fs::File::create(&other).unwrap();
    let mut w = SynthWriter::file(std::io::BufWriter::new(file), trace).unwrap();
    w.fork(600, 1, 600, 1, 10).unwrap();
    w.comm(600, 600, "userland", true, 11).unwrap();
    w.sample(&SampleSpec {
        pid: 600,
        tid: 600,
        time: 1000,
        ip: 0x40_0100,
        ..Default::default()
    })
    .unwrap();
    w.finish().unwrap();
    let out = f.root.join("merged.data");
    let (fixture, other) = (f.fixture.to_str().unwrap(), other.to_str().unwrap());
    let said = perfdata(
        &["merge", fixture, other, "-o", out.to_str().unwrap()],
        &f.home,
    );
    assert_kernel_warning(
        &said,
        &[
            &format!("host vm ({fixture})"),
            &format!("host host-c ({other})"),
        ],
    );
    assert!(!said.contains("kernel 7bdad2f33eb8"), "{said}");
}
