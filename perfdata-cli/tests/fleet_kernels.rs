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

use perfdata_synth::{EventSpec, HostInfo, Mapping, SampleSpec, SynthWriter, TraceSpec};
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

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A kallsyms text of a kernel whose `_text` is at `text` (loaded `shift` higher than
/// recorded): a function `PREFIX<recorded address>` every 64 KiB.
fn kallsyms(prefix: &str, text: u64, len: u64, shift: u64) -> String {
    let mut s = format!("{:016x} T _text\n", text.wrapping_add(shift));
    for a in (text..text + len).step_by(0x1_0000) {
        s.push_str(&format!("{:016x} t {prefix}{a:x}\n", a.wrapping_add(shift)));
    }
    s
}

/// Put `text` in `home`'s build-id cache as kernel `build_id`'s kallsyms.
fn cache(home: &Path, build_id: &str, text: &str) {
    let dir = home.join(".debug/[kernel.kallsyms]").join(build_id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("kallsyms"), text).unwrap();
}

/// The synthetic recording of host `host-b`: one process, 10 kernel samples at each of
/// 0x10000 * (1..=k) past `_text` plus 0x40 (k samples there: 1+2+3+4 in all) and 5 in
/// user space.
fn synth_recording(path: &Path) {
    let host = HostInfo {
        hostname: "host-b".into(),
        os_release: "6.1.0-hostb".into(),
        ..HostInfo::default()
    };
    let trace = TraceSpec {
        events: vec![EventSpec::cpu_clock(1000)],
        host,
        opts: Default::default(),
    };
    let file = std::fs::File::create(path).unwrap();
    let mut w = SynthWriter::file(std::io::BufWriter::new(file), trace).unwrap();
    w.kernel_build_id(&SYNTH_KERNEL);
    w.kernel_mmap(SYNTH_TEXT, SYNTH_TEXT_LEN, 1).unwrap();
    w.fork(500, 1, 500, 1, 10).unwrap();
    w.comm(500, 500, "kworker-b", true, 11).unwrap();
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

/// The running kernel must be neither recording's, or /proc/kallsyms would be right.
fn assert_not_running_kernel() {
    let notes = hex(&std::fs::read("/sys/kernel/notes").unwrap_or_default());
    for k in [FIXTURE_KERNEL.to_string(), hex(&SYNTH_KERNEL)] {
        assert!(!notes.contains(&k), "kernel {k} is running here");
    }
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
    assert_not_running_kernel();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let home = root.join("home");
    let empty_home = root.join("empty-home");
    std::fs::create_dir_all(&empty_home).unwrap();
    cache(
        &home,
        FIXTURE_KERNEL,
        &kallsyms("k_", FIXTURE_TEXT, FIXTURE_TEXT_LEN, 0x20_0000),
    );
    cache(
        &home,
        &hex(&SYNTH_KERNEL),
        &kallsyms(
            "b_",
            SYNTH_TEXT,
            SYNTH_TEXT_LEN,
            0u64.wrapping_sub(0x100_0000),
        ),
    );
    let synth = root.join("host-b.data");
    synth_recording(&synth);
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
    let warning = said
        .lines()
        .find(|l| l.contains("kernel"))
        .unwrap_or_else(|| panic!("no kernel warning: {said}"));
    for word in [
        "host vm, kernel 7bdad2f33eb8 (",
        "host host-b, kernel b0b1b2b3b4b5 (",
        "export --format parquet",
        "one merge per host",
    ] {
        assert!(warning.contains(word), "{word:?} not in {warning:?}");
    }
    // What perf does with it: the kernel read last (host-b's MMAP and BUILD_ID entry)
    // is the machine's, so its frames are named as in its recording alone, and the
    // first host's kernel samples fall outside that map ([unknown], unnamed): the
    // merged file's kernel rows are host-b's alone.
    assert_eq!(
        kernel_rows(true, &out, &f.home, &[]),
        kernel_rows(true, &f.synth, &f.home, &[])
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
