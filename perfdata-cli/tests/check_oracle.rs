//! `perfdata check` against perf 6.1 on recordings made here: records out of time order
//! are a problem exactly when perf's ordered events count them ("N out of order events
//! recorded"), and compressed records without the COMPRESSED feature, which perf cannot
//! decompress and convert refuses to write, are one.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use perfdata_core::record::RecordType;
use perfdata_core::{PerfReader, ReadOptions};
use perfdata_tests::{perf_available, perf_run, run_perfdata, Lcg};

use crate::workload;

fn perfdata(args: &[&OsStr]) -> std::process::Output {
    run_perfdata(env!("CARGO_BIN_EXE_perfdata"), args, None)
}

/// A shell busy for one second of wall time (however loaded the machine), then forking
/// `ls`.
const BUSY: &[&str] = &[
    "sh",
    "-c",
    "timeout 1 sh -c 'while :; do :; done'; ls /usr > /dev/null; true",
];

/// One SAMPLE of a recording: where its time field is, its time and cpu, and how many
/// FINISHED_ROUND records came before it.
#[derive(Debug, Clone, Copy)]
struct Sample {
    time_at: usize,
    time: u64,
    cpu: u32,
    round: usize,
}

/// The samples of a little-endian recording without compressed records.
fn samples(bytes: &[u8]) -> Vec<Sample> {
    let mut r = PerfReader::from_vec(bytes.to_vec(), ReadOptions::Containers).unwrap();
    let mut v = Vec::new();
    let mut round = 0;
    while let Some(item) = r.next_record().unwrap() {
        match item.raw.record_type() {
            RecordType::FinishedRound => round += 1,
            RecordType::Sample => {
                let at = item.locate();
                let event = at.event.unwrap();
                let offsets = *item.meta.events().layout(event).unwrap().sample();
                v.push(Sample {
                    time_at: item.raw.offset as usize + offsets.time.unwrap(),
                    time: at.time.unwrap(),
                    cpu: at.cpu.unwrap(),
                    round,
                });
            }
            _ => {}
        }
    }
    v
}

fn set_time(bytes: &mut [u8], s: &Sample, t: u64) {
    bytes[s.time_at..s.time_at + 8].copy_from_slice(&t.to_le_bytes());
}

/// How many records perf script counts out of order (0 when it says nothing).
fn perf_out_of_order(path: &Path) -> u64 {
    // The fewest fields: the count is the ordered events', whatever is printed.
    let run = perf_run(&["script", "-F", "comm"], path);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("out of order events"));
    line.map_or(0, |l| l.split_whitespace().next().unwrap().parse().unwrap())
}

/// What `perfdata check --json` says: its exit status, the records perf's ordered events
/// would count (listed, plus those "not listed"), and the other problems but SAMPLE_TIME's
/// (moved times may leave its range).
fn check_counts(path: &Path) -> (Option<i32>, u64, Vec<String>) {
    let out = perfdata(&[OsStr::new("check"), OsStr::new("--json"), path.as_os_str()]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let (mut late, mut other) = (0, Vec::new());
    for p in v["problems"].as_array().unwrap() {
        let message = p["message"].as_str().unwrap();
        if p["context"] == "ordered events" {
            late += match message.strip_suffix(" more problems of this kind not listed") {
                Some(n) => n.parse::<u64>().unwrap(),
                None => 1,
            };
        } else if p["context"] != "feature SAMPLE_TIME" {
            other.push(message.to_string());
        }
    }
    (out.status.code(), late, other)
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}
/// `perf record -a -g` writes one CPU's records out of time order at times, and perf
/// reads them without a word as long as they do not go back past what its ordered
/// events delivered at a FINISHED_ROUND. check says what perf says: nothing for a
/// fresh recording or two samples of a CPU swapped within a round (check used to say
/// "time ... on cpu 0 is before the time ..." and exit 1), and for records moved across
/// rounds, exactly as many problems as perf counts out of order events.
#[perfdata_oracle::needs(perf)]
#[test]
fn out_of_order_records_are_what_perfs_ordered_events_count() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let fresh = workload::record(
        dir.path(),
        "sys.data",
        &["-a", "-g", "-m", "16", "-F", "1000"],
        BUSY,
    );
    let bytes = std::fs::read(&fresh).unwrap();
    let all = samples(&bytes);
    let rounds = all.last().unwrap().round;
    assert!(rounds >= 3, "too few rounds with samples: {rounds}");

    // As perf wrote it.
    assert_eq!(perf_out_of_order(&fresh), 0);
    assert_eq!(check_counts(&fresh), (Some(0), 0, Vec::new()));

    // Two samples of one CPU, one after the other in a round, swap their times.
    let (a, b) = all
        .iter()
        .zip(&all[1..])
        .find(|(a, b)| a.cpu == b.cpu && a.round == b.round && a.time < b.time)
        .expect("two samples of a cpu in a round");
    let mut swapped = bytes.clone();
    set_time(&mut swapped, a, b.time);
    set_time(&mut swapped, b, a.time);
    let swapped = write(dir.path(), "swapped.data", &swapped);
    assert_eq!(perf_out_of_order(&swapped), 0);
    let out = perfdata(&[OsStr::new("check"), swapped.as_os_str()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains(": ok, "), "{stdout}");

    // The last sample given the first one's time: perf has delivered later ones.
    let mut late = bytes.clone();
    set_time(&mut late, all.last().unwrap(), all[0].time);
    let late = write(dir.path(), "late.data", &late);
    assert_eq!(perf_out_of_order(&late), 1);
    let out = perfdata(&[OsStr::new("check"), late.as_os_str()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("ordered events: record SAMPLE of time ")
            && stdout.contains("one of its \"1 out of order events recorded\""),
        "{stdout}"
    );

    // Up to 40 samples each moved by up to a tenth of the recording forward or its whole
    // length back: perf's count and check's agree on every mutant.
    let span = all.iter().map(|s| s.time).max().unwrap() - all[0].time;
    let mut rng = Lcg(24);
    let mut counted = Vec::new();
    for i in 0..12 {
        let mut m = bytes.clone();
        for _ in 0..=rng.draw() % 40 {
            let s = &all[rng.draw() as usize % all.len()];
            let back = rng.draw() % span;
            let forward = rng.draw() % (span / 10);
            set_time(&mut m, s, (s.time + forward).saturating_sub(back).max(1));
        }
        let m = write(dir.path(), &format!("moved{i}.data"), &m);
        let perf = perf_out_of_order(&m);
        let (_, late, other) = check_counts(&m);
        assert_eq!((late, other), (perf, Vec::new()), "mutant {i}");
        counted.push(perf);
    }
    println!("perf's out of order counts: {counted:?}");
    assert!(
        counted.iter().filter(|&&n| n > 0).count() >= 6,
        "{counted:?}"
    );
}

/// A compressed recording (perf record -z's COMPRESSED, and COMPRESSED2 made from it)
/// whose feature bitmap lost the COMPRESSED bit: perf cannot decompress its records,
/// convert refuses to write them, and check names the first (it used to say "ok").
#[perfdata_oracle::needs(perf)]
#[test]
fn compressed_records_without_the_compressed_feature_are_a_problem() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let z = workload::record(dir.path(), "z.data", &["-z"], BUSY);
    let z2 = dir.path().join("z2.data");
    let out = perfdata(&[
        OsStr::new("convert"),
        OsStr::new("--compress-format=compressed2"),
        z.as_os_str(),
        OsStr::new("-o"),
        z2.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (input, ty) in [(&z, "81"), (&z2, "83")] {
        let out = perfdata(&[OsStr::new("check"), input.as_os_str()]);
        assert_eq!(out.status.code(), Some(0), "{ty}");
        // The bitmap is the header's last 32 bytes, from 72; COMPRESSED is bit 27.
        let mut bytes = std::fs::read(input).unwrap();
        assert_ne!(bytes[72 + 27 / 8] & 1 << (27 % 8), 0, "{ty}");
        bytes[72 + 27 / 8] &= !(1 << (27 % 8));
        let first = first_compressed(&bytes);
        let cut = write(dir.path(), &format!("no-bit-{ty}.data"), &bytes);
        let run = perf_run(&["report", "--stats"], &cut);
        assert!(
            run.stderr
                .contains(&format!("failed to process type: {ty}")),
            "{ty}: perf reads it: {}",
            run.stderr
        );
        let conv = perfdata(&[
            OsStr::new("convert"),
            cut.as_os_str(),
            OsStr::new("-o"),
            dir.path().join("out.data").as_os_str(),
        ]);
        assert_eq!(conv.status.code(), Some(1), "{ty}");
        let out = perfdata(&[OsStr::new("check"), cut.as_os_str()]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{ty}: {stdout}");
        let want = format!(
            "at byte offset {first} ({first:#x}), compressed record: the recording has no \
             COMPRESSED feature: perf cannot decompress it (\"Couldn't decompress data\") and \
             convert refuses to write it"
        );
        assert_eq!(
            stdout.lines().nth(1).map(str::trim),
            Some(want.as_str()),
            "{stdout}"
        );
    }
}

/// A file whose events perf cannot open together (`file-multi-event`, event 1's
/// sample_id_all cleared): perf refuses it, and check names perf's reason.
#[perfdata_oracle::needs(perf)]
#[test]
fn events_perf_refuses_in_a_file_are_a_problem() {
    assert!(perf_available());
    let mut bytes =
        std::fs::read(perfdata_tests::fixtures_dir().join("file-multi-event.data")).unwrap();
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    // Header: attr_size at 16, the attrs section's offset at 24; flags 40 bytes into an
    // attr, sample_id_all its bit 18.
    let flags = word(24) + word(16) + 40;
    assert_ne!(bytes[flags + 2] & 1 << 2, 0);
    bytes[flags + 2] &= !(1 << 2);
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "m.data", &bytes);
    let run = perf_run(&["report", "--stats"], &path);
    assert!(
        run.stderr.contains("non matching sample_id_all"),
        "{}",
        run.stderr
    );
    let out = perfdata(&[OsStr::new("check"), path.as_os_str()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "events: event 1 and event 0 differ in sample_id_all: perf 6.1 \
             refuses the file (\"non matching sample_id_all\")"
        ),
        "{stdout}"
    );
}

/// The offset of the first compressed record.
fn first_compressed(bytes: &[u8]) -> u64 {
    let mut r = PerfReader::from_vec(bytes.to_vec(), ReadOptions::Containers).unwrap();
    while let Some(item) = r.next_record().unwrap() {
        if matches!(
            item.raw.record_type(),
            RecordType::Compressed | RecordType::Compressed2
        ) {
            return item.raw.offset;
        }
    }
    panic!("no compressed record")
}
