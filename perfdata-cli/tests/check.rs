//! `perfdata check`: the corrupt corpus file at its offset, nothing for clean inputs, a
//! problem for every mutant `stats` rejects, and each cross-reference check on a file
//! broken for it.

use std::ffi::OsStr;

use perfdata_core::record::RecordType;
use perfdata_core::PerfReader;
use perfdata_tests::{all_inputs, fixture_files, fixtures_dir, name, run_perfdata, Lcg, CORRUPT};
use perfdata_view::check::check_bytes;

fn perfdata(args: &[&OsStr]) -> std::process::Output {
    run_perfdata(env!("CARGO_BIN_EXE_perfdata"), args, None)
}

/// Inputs with something odd the reader reads past; check reports it.
const ODD: &[(&str, &str)] = &[
    (
        "jbeich-perf_with_arm_regs.data",
        "at byte offset 172 (0xac), reading: attr 0 says its size is 120 but attr_size gives 128",
    ),
    (
        "mstange-sleep.compressed2.pipe.data",
        "at byte offset 31808 (0x7c40), reading: 143 bytes after the last record are not a record",
    ),
];

/// The records `perfdata stats --json` counts, compressed records left out: check reads
/// what is inside them, not the containers. (`perf_oracle` holds stats to perf's counts.)
fn records_but_containers(path: &std::path::Path) -> u64 {
    let out = perfdata(&[OsStr::new("stats"), OsStr::new("--json"), path.as_os_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let count = |ty: &str| v["records"][ty].as_u64().unwrap_or(0);
    v["total"].as_u64().unwrap() - count("COMPRESSED") - count("COMPRESSED2")
}

#[test]
fn clean_inputs_have_no_problem_and_the_others_theirs() {
    let (mut clean, mut odd) = (0, Vec::new());
    for path in all_inputs() {
        let n = name(&path);
        let out = perfdata(&[OsStr::new("check"), path.as_os_str()]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        if n == CORRUPT.0 {
            assert_eq!(out.status.code(), Some(1), "{n}: {stdout}");
            let at = format!(
                "at byte offset {} ({:#x}), record header: record size 0",
                CORRUPT.1, CORRUPT.1
            );
            assert!(stdout.contains(&at), "{n}: {stdout}");
            assert!(stdout.contains("reading stopped at the first"), "{stdout}");
            odd.push(n);
        } else if let Some((_, problem)) = ODD.iter().find(|(f, _)| *f == n) {
            assert_eq!(out.status.code(), Some(1), "{n}: {stdout}");
            assert!(stdout.contains(problem), "{n}: {stdout}");
            assert_eq!(stdout.lines().count(), 2, "{n}: one problem only: {stdout}");
            odd.push(n);
        } else {
            assert_eq!(out.status.code(), Some(0), "{n}: {stdout}");
            // "FILE: ok, N records", N every record read.
            let want = format!(
                "{}: ok, {} records\n",
                path.display(),
                records_but_containers(&path)
            );
            assert_eq!(stdout, want, "{n}");
            clean += 1;
        }
    }
    // Every odd input was met (a corpus file renamed would otherwise go unchecked), and
    // every fixture is clean.
    let mut want_odd: Vec<String> = match perfdata_tests::corpus_dir() {
        Some(_) => ODD
            .iter()
            .map(|(f, _)| f.to_string())
            .chain([CORRUPT.0.to_string()])
            .collect(),
        None => Vec::new(),
    };
    want_odd.sort();
    odd.sort();
    assert_eq!(odd, want_odd);
    assert!(clean >= fixture_files().len(), "{clean} clean inputs");
}

#[test]
fn unreadable_input_exits_2_and_json_names_every_field() {
    let out = perfdata(&[
        OsStr::new("check"),
        OsStr::new("--json"),
        OsStr::new("/nonexistent/perf.data"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["file"], "/nonexistent/perf.data");
    assert_eq!(v["unreadable"], true);
    assert_eq!(v["records"], 0);
    assert!(v["problems"][0]["message"]
        .as_str()
        .unwrap()
        .contains("cannot open"));
    // Several files: the worst status wins, and each gets its line.
    let good = fixtures_dir().join("file-cpu-clock.data");
    let out = perfdata(&[
        OsStr::new("check"),
        OsStr::new("--json"),
        good.as_os_str(),
        OsStr::new("/nonexistent"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["problems"].as_array().unwrap().len(), 0);
    assert_eq!(lines[0]["records"], 294);
}
/// 1,000 mutants of the small fixtures (one to four bytes set to random values): every
/// one `perfdata stats` rejects or reads with a warning (a section cut off, say), check
/// reports with at least one problem.
#[test]
fn every_mutant_stats_rejects_has_a_problem() {
    let files: Vec<Vec<u8>> = fixture_files()
        .into_iter()
        .filter(|p| p.is_file() && std::fs::metadata(p).unwrap().len() < 40_000)
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let mutant = dir.path().join("mutant.data");
    let mut rng = Lcg(7);
    let (mut rejected, mut missed) = (0, Vec::new());
    for i in 0..1000 {
        let mut bytes = files[i % files.len()].clone();
        for _ in 0..=rng.draw() % 4 {
            let at = rng.draw() as usize % bytes.len();
            bytes[at] = rng.draw() as u8;
        }
        std::fs::write(&mutant, &bytes).unwrap();
        let stats = perfdata(&[OsStr::new("stats"), mutant.as_os_str()]);
        let warned = String::from_utf8_lossy(&stats.stderr).contains("warning:");
        if stats.status.success() && !warned {
            continue;
        }
        rejected += 1;
        let report = check_bytes(bytes);
        if report.is_clean() {
            missed.push(format!(
                "mutant {i}: {}",
                String::from_utf8_lossy(&stats.stderr)
            ));
        }
    }
    println!("{rejected} of 1000 mutants rejected or warned about by stats");
    assert!(rejected > 100, "the mutants are too gentle: {rejected}");
    assert!(missed.is_empty(), "{}", missed.join("\n"));
}

/// Mutants of the small fixtures: each with one feature bit of its header's bitmap
/// cleared (every set bit of every file-mode fixture, in turn), then 400 with a bit of the
/// first 104 bytes flipped or one to four bytes anywhere set to random values. Every one
/// `perfdata convert` refuses to write, check reports with at least one problem: check
/// finds what convert refuses (a COMPRESSED bit cleared, say).
#[test]
fn every_mutant_convert_refuses_has_a_problem() {
    let files: Vec<Vec<u8>> = fixture_files()
        .into_iter()
        .filter(|p| p.is_file() && std::fs::metadata(p).unwrap().len() < 40_000)
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    let mut mutants = Vec::new();
    for bytes in files.iter().filter(|b| b.starts_with(b"PERFILE2")) {
        // The bitmap: 32 bytes from 72, bit n of the set in byte n / 8.
        for bit in (0..256).filter(|n| bytes[72 + n / 8] & 1 << (n % 8) != 0) {
            let mut m = bytes.clone();
            m[72 + bit / 8] &= !(1 << (bit % 8));
            mutants.push(m);
        }
    }
    let mut rng = Lcg(24);
    for i in 0..400 {
        let mut m = files[i % files.len()].clone();
        if i % 2 == 0 {
            let at = rng.draw() as usize % 104;
            m[at] ^= 1 << (rng.draw() % 8);
        } else {
            for _ in 0..=rng.draw() % 4 {
                let at = rng.draw() as usize % m.len();
                m[at] = rng.draw() as u8;
            }
        }
        mutants.push(m);
    }
    let dir = tempfile::tempdir().unwrap();
    let (mutant, out) = (dir.path().join("mutant.data"), dir.path().join("out.data"));
    let (mut refused, mut missed) = (0, Vec::new());
    let total = mutants.len();
    for (i, bytes) in mutants.into_iter().enumerate() {
        std::fs::write(&mutant, &bytes).unwrap();
        let convert = perfdata(&[
            OsStr::new("convert"),
            mutant.as_os_str(),
            OsStr::new("-o"),
            out.as_os_str(),
        ]);
        if convert.status.success() {
            continue;
        }
        refused += 1;
        if check_bytes(bytes).is_clean() {
            missed.push(format!(
                "mutant {i}: {}",
                String::from_utf8_lossy(&convert.stderr)
            ));
        }
    }
    println!("{refused} of {total} mutants refused by convert");
    assert!(refused > 100, "the mutants are too gentle: {refused}");
    assert!(missed.is_empty(), "{}", missed.join("\n"));
}

/// Offsets of the records of `ty` in a file, as the reader frames them (top level).
fn offsets(bytes: &[u8], ty: RecordType) -> Vec<usize> {
    let mut r = PerfReader::from_vec(bytes.to_vec(), Default::default()).unwrap();
    let mut v = Vec::new();
    while let Some(item) = r.next_record().unwrap() {
        if item.raw.record_type() == ty {
            v.push(item.raw.offset as usize);
        }
    }
    v
}

fn problems(bytes: Vec<u8>) -> Vec<String> {
    check_bytes(bytes)
        .problems
        .iter()
        .map(|p| p.to_string())
        .collect()
}

#[test]
fn a_sample_of_no_attr_is_named() {
    // Three events sampling IP|TID|TIME|ID: the id is the u64 after ip, tid and time.
    let mut bytes = std::fs::read(fixtures_dir().join("file-multi-event.data")).unwrap();
    assert!(problems(bytes.clone()).is_empty());
    let at = offsets(&bytes, RecordType::Sample)[5];
    bytes[at + 8 + 24..at + 8 + 32].copy_from_slice(&999_999u64.to_le_bytes());
    assert_eq!(
        problems(bytes),
        vec![format!(
            "at byte offset {at} ({at:#x}), record SAMPLE: sample id 999999 belongs to no attr"
        )]
    );
}

/// A CPU's samples going back in time within a round are perf's to sort: it reads them
/// without a word, and so does check (`check_oracle` compares with perf).
#[test]
fn a_cpu_going_back_within_a_round_is_no_problem() {
    // IP|TID|TIME|ID|CPU: time is the u64 after ip and tid, cpu the u32 after the id.
    let mut bytes = std::fs::read(fixtures_dir().join("file-system-wide.data")).unwrap();
    assert!(problems(bytes.clone()).is_empty());
    let samples = offsets(&bytes, RecordType::Sample);
    let cpu = |at: usize| u32::from_le_bytes(bytes[at + 40..at + 44].try_into().unwrap());
    let time = |at: usize| u64::from_le_bytes(bytes[at + 24..at + 32].try_into().unwrap());
    // Two samples of one cpu; the later one gets a time before the earlier one's (and
    // after the first sample's, so SAMPLE_TIME still covers it).
    let a = samples[5];
    let b = *samples[6..].iter().find(|&&s| cpu(s) == cpu(a)).unwrap();
    let ta = time(a);
    assert!(ta - 1 > time(samples[0]));
    bytes[b + 24..b + 32].copy_from_slice(&(ta - 1).to_le_bytes());
    assert_eq!(problems(bytes), Vec::<String>::new());
}

/// SAMPLE_TIME of `file-cpu-clock.data` given another first or last time: the problem
/// check names, if any.
fn sample_time_problems(first_delta: i64, last_delta: i64) -> (u64, u64, Vec<String>) {
    let path = fixtures_dir().join("file-cpu-clock.data");
    let mut bytes = std::fs::read(&path).unwrap();
    let r = PerfReader::open(&path).unwrap();
    let Some(perfdata_core::feature::Feature::SampleTime(st)) = r
        .meta()
        .feature(perfdata_core::feature::FeatureId::SampleTime)
    else {
        panic!("the fixture has SAMPLE_TIME");
    };
    let (first, last) = (st.first, st.last);
    // The section holds the two u64s: find them and move them.
    let pos = bytes
        .windows(16)
        .position(|w| w[..8] == first.to_le_bytes() && w[8..] == last.to_le_bytes())
        .unwrap();
    let moved = |t: u64, d: i64| t.checked_add_signed(d).unwrap();
    bytes[pos..pos + 8].copy_from_slice(&moved(first, first_delta).to_le_bytes());
    bytes[pos + 8..pos + 16].copy_from_slice(&moved(last, last_delta).to_le_bytes());
    (first, last, problems(bytes))
}

#[test]
fn a_sample_time_that_misses_samples_is_named() {
    let (first, last, got) = sample_time_problems(1, 0);
    assert_eq!(
        got,
        vec![format!(
            "feature SAMPLE_TIME: says first {}, last {last}, but the samples run from {first} to {last}",
            first + 1
        )]
    );
    // Its end before the last sample.
    let (first, last, got) = sample_time_problems(0, -1);
    assert_eq!(
        got,
        vec![format!(
            "feature SAMPLE_TIME: says first {first}, last {}, but the samples run from {first} to {last}",
            last - 1
        )]
    );
    // A range wider than the samples claims nothing false.
    assert_eq!(sample_time_problems(-1, 1).2, Vec::<String>::new());
}

#[test]
fn check_reads_pipes_and_directories() {
    for f in ["pipe-cpu-clock.data", "dir-threads-compressed.data"] {
        let p = fixtures_dir().join(f);
        let out = perfdata(&[OsStr::new("check"), p.as_os_str()]);
        assert_eq!(out.status.code(), Some(0), "{f}");
    }
}
