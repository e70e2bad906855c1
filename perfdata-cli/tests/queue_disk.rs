//! perf's time order with the replay's queue on disk: past `ReplayOptions::queue_bytes`
//! the queued records go to a temporary file and come back merged as rounds let them
//! out (perfdata-report/src/replay/spill.rs). With no memory at all for the queue
//! (`PERFDATA_QUEUE_BYTES=0`: every record queued goes to disk before the next is read)
//! `report` and `script` print what they print with the whole queue in memory, byte for
//! byte, from a file, a compressed file, a directory, a pipe stream read from stdin, a
//! dwarf recording (the user stack copies go to disk with their samples) and with
//! side-band records shown (they stay in memory, their places on disk). The unit tests
//! (`replay::order::tests`) check the merge on random times with ties and rounds.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use perfdata_tests::perf_available;

/// fixtures/NAME.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(name)
}

/// perfdata's stdout for `args` with the queue's memory at `budget` bytes, `input`
/// read by path, or from stdin (`-i -`) when `stdin`; it must succeed.
fn perfdata(args: &[&str], input: &Path, stdin: bool, budget: &str) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perfdata"));
    cmd.args(args).env("PERFDATA_QUEUE_BYTES", budget);
    if stdin {
        let file = std::fs::File::open(input).expect("fixture opens");
        cmd.args(["-i", "-"]).stdin(Stdio::from(file));
    } else {
        cmd.arg("-i").arg(input);
    }
    let out = cmd.output().expect("perfdata runs");
    assert!(
        out.status.success(),
        "perfdata {args:?} {}: {}",
        input.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn the_queue_on_disk_lists_and_reports_as_in_memory() {
    let inputs = [
        // Two CPUs' rounds interleaved: the time order is not the file's.
        ("file-system-wide.data", false),
        ("strip-compressed.data", false),
        ("file-callgraph-dwarf.data", false),
        ("dir-threads.data", false),
        ("dir-threads-compressed.data", false),
        ("pipe-cpu-clock.data", true),
        ("pipe-compressed.data", true),
    ];
    let views: [&[&str]; 4] = [
        &["report", "--stdio"],
        &["report", "--stdio", "-g", "none", "--sort", "cpu,pid,sym"],
        &["script"],
        &["script", "--show-task-events", "--show-mmap-events"],
    ];
    let mut problems = Vec::new();
    for (name, stdin) in inputs {
        let input = fixture(name);
        for view in views {
            let disk = perfdata(view, &input, stdin, "0");
            let memory = perfdata(view, &input, stdin, "18446744073709551615");
            assert!(!memory.is_empty(), "{name} {view:?}: nothing printed");
            if disk != memory {
                problems.push(format!("{name} {view:?}"));
            }
        }
    }
    assert!(problems.is_empty(), "differ: {problems:?}");
}

/// `input`'s records written again as two CPUs' ring buffers read one after the other
/// make their rounds: the timed records, in time order, dealt alternately to CPU A
/// and B; each round holds A's next [`WINDOW`] and B's, half a window behind; the
/// untimed records first. A later round then holds records earlier than some of the
/// round before it, which the round's limit (OE_FLUSH__ROUND) keeps waiting for.
fn two_cpus_rounds(input: &Path, out: &Path) {
    use perfdata_core::ordered::Delivery;
    use perfdata_core::PerfReader;
    use perfdata_write::FileWriter;
    let mut reader = PerfReader::open(input).expect("fixture reads");
    let (mut now, mut timed) = (Vec::new(), Vec::new());
    while let Some(item) = reader.next_record().expect("fixture reads") {
        let bytes = item.raw.bytes.to_vec();
        match Delivery::of(&item) {
            Delivery::Now => now.push(bytes),
            Delivery::At(t) => timed.push((t, bytes)),
            Delivery::Round => {}
        }
    }
    timed.sort_by_key(|(t, _)| *t);
    let round_of = |i: usize| match i % 2 {
        0 => i / WINDOW,
        _ => (i + WINDOW / 2) / WINDOW,
    };
    let rounds = round_of(timed.len()) + 1;
    let file = std::fs::File::create(out).expect("creates");
    let mut w = FileWriter::for_meta(file, reader.meta()).expect("writer");
    for bytes in &now {
        w.write_record(bytes, &[]).expect("writes");
    }
    // A FINISHED_ROUND: type, misc 0, 8 bytes, little-endian.
    let ty = perfdata_core::record::RecordType::FinishedRound
        .as_u32()
        .to_le_bytes();
    let round = [ty[0], ty[1], ty[2], ty[3], 0, 0, 8, 0];
    assert_eq!(reader.meta().endian, perfdata_core::Endian::Little);
    for r in 0..rounds {
        for cpu in [0, 1] {
            for (i, (_, bytes)) in timed.iter().enumerate() {
                if i % 2 == cpu && round_of(i) == r {
                    w.write_record(bytes, &[]).expect("writes");
                }
            }
        }
        w.write_record(&round, &[]).expect("writes");
    }
    let features = reader.meta().features.values().cloned().collect();
    w.finish(features).expect("finishes");
}

/// Timed records each CPU's part of a round holds ([`two_cpus_rounds`]).
const WINDOW: usize = 6;

/// Where a later round holds records earlier than the round before it
/// ([`two_cpus_rounds`]), the round's limit (OE_FLUSH__ROUND) holds those of the
/// earlier round back, on disk as in memory: `script` lists as perf does, and `report`
/// reports the same with the queue on disk or in memory.
#[perfdata_oracle::needs(perf)]
#[test]
fn the_queue_on_disk_keeps_the_rounds_limit_as_perf_does() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let mut problems = Vec::new();
    for name in ["file-system-wide.data", "file-callgraph-dwarf.data"] {
        let input = dir.path().join(name);
        two_cpus_rounds(&fixture(name), &input);
        let perf = Command::new("perf")
            .args(["script", "-i"])
            .arg(&input)
            .output()
            .expect("perf runs");
        assert!(perf.status.success(), "perf script {name}");
        let perf = String::from_utf8(perf.stdout).expect("utf-8");
        assert!(perf.lines().count() > 40, "{name}: {perf}");
        let report = ["report", "--stdio", "--sort", "pid,sym"];
        for budget in ["0", "18446744073709551615"] {
            if perfdata(&["script"], &input, false, budget) != perf {
                problems.push(format!("{name} script at {budget}"));
            }
        }
        if perfdata(&report, &input, false, "0")
            != perfdata(&report, &input, false, "18446744073709551615")
        {
            problems.push(format!("{name} report"));
        }
    }
    assert!(problems.is_empty(), "differ: {problems:?}");
}

/// And as perf lists it: a system-wide recording whose CPUs' records interleave.
#[perfdata_oracle::needs(perf)]
#[test]
fn the_queue_on_disk_lists_as_perf_does() {
    assert!(perf_available());
    let input = fixture("file-system-wide.data");
    let perf = Command::new("perf")
        .args(["script", "-i"])
        .arg(&input)
        .output()
        .expect("perf runs");
    assert!(perf.status.success());
    let perf = String::from_utf8(perf.stdout).expect("utf-8");
    assert!(perf.lines().count() > 40, "{perf}");
    assert!(
        perfdata(&["script"], &input, false, "0") == perf,
        "differs from perf script"
    );
}

/// Without a temporary file (TMPDIR missing) the queue stays in memory, as perf holds
/// it: the same listing, and a warning that says why.
#[test]
fn without_a_temporary_file_the_queue_stays_in_memory() {
    let input = fixture("file-system-wide.data");
    let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(["script", "-i"])
        .arg(&input)
        .env("PERFDATA_QUEUE_BYTES", "0")
        .env("TMPDIR", "/nonexistent/perfdata-queue")
        .output()
        .expect("perfdata runs");
    assert!(out.status.success());
    let memory = perfdata(&["script"], &input, false, "18446744073709551615");
    assert!(String::from_utf8(out.stdout).expect("utf-8") == memory);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("stayed in memory") && stderr.contains("/nonexistent/perfdata-queue"),
        "{stderr}"
    );
}

/// A temporary file that cannot grow (a full `TMPDIR`: here a file size limit, the
/// shell's `ulimit -f`, with its signal ignored so the write fails with EFBIG) is a
/// clear error naming the directory, not a panic and not a listing cut short without
/// a word.
#[test]
fn a_temporary_file_that_cannot_grow_is_a_clear_error() {
    let input = fixture("file-callgraph-dwarf.data");
    let tmp = std::env::temp_dir();
    let script = format!(
        "trap '' XFSZ; ulimit -f 8 && exec '{}' script -i '{}'",
        env!("CARGO_BIN_EXE_perfdata"),
        input.display()
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .env("PERFDATA_QUEUE_BYTES", "0")
        .env("TMPDIR", &tmp)
        .output()
        .expect("sh runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("perfdata: error: keeping the queued records in a temporary file in")
            && stderr.contains(&format!("{} (TMPDIR)", tmp.display()))
            && stderr.contains("PERFDATA_QUEUE_BYTES"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A budget that is not a size (`PERFDATA_QUEUE_BYTES=lots`, `1.5M`) is refused with
/// the variable named, before any work: it was the default without a word, as `1M` was
/// before sizes could carry a unit.
#[test]
fn a_budget_that_is_not_a_size_is_refused() {
    let input = fixture("file-system-wide.data");
    for bad in ["lots", "1.5M", "-1"] {
        let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
            .args(["script", "-i"])
            .arg(&input)
            .env("PERFDATA_QUEUE_BYTES", bad)
            .output()
            .expect("perfdata runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(out.stdout.is_empty(), "{bad}");
        assert!(
            stderr.contains(&format!(
                "PERFDATA_QUEUE_BYTES=\"{bad}\" is not a number of bytes"
            )),
            "{bad}: {stderr}"
        );
    }
    // With a unit it is a size: the same listing as the default's.
    assert!(
        perfdata(&["script"], &input, false, "1M")
            == perfdata(&["script"], &input, false, "33554432")
    );
}
