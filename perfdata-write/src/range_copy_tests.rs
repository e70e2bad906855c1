//! Tests of the kernel's copies: bytes equal to what memory writes, and the copy of an
//! identity conversion started whole and cut back where a run ends sooner.

use std::io::{Cursor, Read, Seek, SeekFrom, Write};

use perfdata_core::record::RecordType;
use perfdata_core::{PerfReader, ReadOptions};

use crate::convert::testing as convert;
use crate::convert::{ConvertOptions, Target};
use crate::edit::{self, Selection, Strip};
use perfdata_synth::{write_workload, SynthSpec, SynthWriter};

/// A synthetic recording of `samples` samples of 4 threads, in a temp file.
fn recording(samples: u64) -> tempfile::NamedTempFile {
    recording_in(samples, &std::env::temp_dir())
}

fn recording_in(samples: u64, dir: &std::path::Path) -> tempfile::NamedTempFile {
    let spec = SynthSpec {
        samples,
        processes: 2,
        threads_per_process: 2,
        callchain: Some(4),
        ..SynthSpec::default()
    };
    let (workload, trace) = spec.build().unwrap();
    let file = tempfile::NamedTempFile::new_in(dir).unwrap();
    let w = SynthWriter::file(std::io::BufWriter::new(file.reopen().unwrap()), trace).unwrap();
    write_workload(&workload, w).unwrap();
    file
}

fn read_all(mut f: &std::fs::File) -> Vec<u8> {
    let mut v = Vec::new();
    f.seek(SeekFrom::Start(0)).unwrap();
    f.read_to_end(&mut v).unwrap();
    v
}

#[test]
fn an_identity_conversion_is_copied_by_the_kernel_and_equals_the_input() {
    let input = recording(40_000);
    let opts = ConvertOptions::default();
    let open = || PerfReader::open_with(input.path(), ReadOptions::Containers).unwrap();
    let (through_memory, plain) =
        convert::to_target(open(), Target::File, Cursor::new(Vec::new()), &opts).unwrap();
    assert_eq!(plain.bytes_copied, 0);
    let mut out = tempfile::tempfile().unwrap();
    let handle = out.try_clone().unwrap();
    let (_, copied) = convert::to_target_in(
        open(),
        Target::File,
        std::io::BufWriter::new(&mut out),
        Some(handle),
        &opts,
    )
    .unwrap();
    let bytes = read_all(&out);
    assert_eq!(bytes, through_memory.into_inner());
    assert_eq!(bytes, std::fs::read(input.path()).unwrap());
    // The data section is one run, expected whole: all of it is the kernel's copy.
    let reader = PerfReader::open(input.path()).unwrap();
    let data = reader.meta().header.as_ref().unwrap().data;
    assert_eq!(copied.bytes_copied, data.size);
}

/// An input of `len` bytes that differ from one offset to the next.
fn input_bytes(len: usize) -> (tempfile::NamedTempFile, Vec<u8>) {
    let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &bytes).unwrap();
    (file, bytes)
}

/// A copy from an input of `len` bytes (see [`input_bytes`]) into a fresh output file,
/// expecting a run up to `end`; the input file is returned to keep it alive.
fn speculating(
    len: usize,
    end: u64,
) -> (
    tempfile::NamedTempFile,
    Vec<u8>,
    std::fs::File,
    super::RangeCopy,
) {
    let (input, bytes) = input_bytes(len);
    let out = tempfile::tempfile().unwrap();
    let mut rc = super::RangeCopy::new(input.reopen().unwrap(), out.try_clone().unwrap());
    rc.expect_run_to(end).unwrap();
    (input, bytes, out, rc)
}

/// Records of 1000 bytes at `from..to` of the input, taken one by one: each left to
/// the kernel (the run is expected to go on).
fn take_run(rc: &mut super::RangeCopy, out: &mut std::fs::File, from: u64, to: u64) {
    for at in (from..to).step_by(1000) {
        assert!(rc.take(out, at, 1000).unwrap(), "record at {at}");
    }
}

/// A run expected to reach 4 MiB ends at 2 MiB (the next record is not the
/// input's next): the copy, started for 4 MiB at the first record, is stopped and
/// the output cut back to 2 MiB before the record after it is written, whether the
/// copier had passed 2 MiB or not. The bytes are the two pieces, nothing between.
#[test]
fn a_speculative_copy_stops_where_the_run_breaks() {
    let (_input, bytes, mut out, mut rc) = speculating(4 << 20, 4 << 20);
    out.write_all(&[b'H'; 100]).unwrap();
    take_run(&mut rc, &mut out, 0, 2_000_000);
    // The copier runs ahead, to the end expected (it would stop at the break if it
    // were slower: waiting makes the cut back certain).
    let start = std::time::Instant::now();
    while out.metadata().unwrap().len() < 100 + (4 << 20) {
        assert!(start.elapsed().as_secs() < 60, "the copy did not finish");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // Not where the run goes on: the run ends, and this record is written.
    assert!(!rc.take(&mut out, 3_000_000, 1000).unwrap());
    out.write_all(&bytes[3_000_000..3_001_000]).unwrap();
    rc.flush(&mut out).unwrap();
    out.write_all(&[b'T'; 10]).unwrap();
    rc.finish().unwrap();
    let mut expected = vec![b'H'; 100];
    expected.extend_from_slice(&bytes[..2_000_000]);
    expected.extend_from_slice(&bytes[3_000_000..3_001_000]);
    expected.extend_from_slice(&[b'T'; 10]);
    same(&read_all(&out), &expected);
    assert_eq!(rc.copied(), 2_000_000);
}

/// A run that goes on past the end expected: the rest is copied when it ends.
#[test]
fn a_run_longer_than_expected_is_copied_whole() {
    let (_input, bytes, mut out, mut rc) = speculating(4 << 20, 1 << 20);
    out.write_all(&[b'H'; 100]).unwrap();
    take_run(&mut rc, &mut out, 0, 3_000_000);
    rc.flush(&mut out).unwrap();
    out.write_all(&[b'T'; 10]).unwrap();
    rc.finish().unwrap();
    let mut expected = vec![b'H'; 100];
    expected.extend_from_slice(&bytes[..3_000_000]);
    expected.extend_from_slice(&[b'T'; 10]);
    same(&read_all(&out), &expected);
    assert_eq!(rc.copied(), 3_000_000);
}

/// An end past the input's length is cut to it: the copy does not fail on bytes
/// the input does not have.
#[test]
fn an_expected_end_past_the_input_is_cut_to_its_length() {
    let (_input, bytes, mut out, mut rc) = speculating(1 << 20, u64::MAX);
    take_run(&mut rc, &mut out, 0, 1_048_000);
    rc.flush(&mut out).unwrap();
    rc.finish().unwrap();
    same(&read_all(&out), &bytes[..1_048_000]);
}

/// `a == b`, or a panic naming the first byte that differs (not the bytes).
fn same(a: &[u8], b: &[u8]) {
    let first = a.iter().zip(b).position(|(x, y)| x != y);
    assert!(
        a.len() == b.len() && first.is_none(),
        "{} bytes and {} bytes, first difference at {first:?}",
        a.len(),
        b.len()
    );
}

/// Between file systems that cannot copy to each other (tmpfs to the temp
/// directory's, where /dev/shm exists), the copy goes through memory, same bytes.
#[test]
fn a_copy_between_file_systems_falls_back_to_memory() {
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let input = recording_in(40_000, &dir);
    let reader = PerfReader::open_with(input.path(), ReadOptions::Containers).unwrap();
    let mut out = tempfile::tempfile().unwrap();
    let handle = out.try_clone().unwrap();
    let opts = ConvertOptions::default();
    let w = std::io::BufWriter::new(&mut out);
    convert::to_target_in(reader, Target::File, w, Some(handle), &opts).unwrap();
    assert_eq!(read_all(&out), std::fs::read(input.path()).unwrap());
}

/// A strip of one process (short runs) and of the second half of the time (one long
/// run) write the same bytes with and without the kernel's copies.
#[test]
fn a_strip_copies_the_runs_it_keeps_and_writes_what_memory_would() {
    for (pids, time, long_runs) in [
        (Some(vec![(10000, 10000)]), None, false),
        (None, Some("50%-100%"), true),
    ] {
        strips_alike(pids, time, long_runs);
    }
}

fn strips_alike(pids: Option<Vec<(u64, u64)>>, time: Option<&str>, long_runs: bool) {
    let input = recording(40_000);
    let opts = ConvertOptions::default();
    let strip = || -> Vec<Box<dyn edit::RecordEdit>> {
        let sel = Selection {
            select: edit::Selectors {
                pids: pids.clone(),
                time: time.map(|t| edit::parse_time_ranges(t).unwrap()),
                ..Default::default()
            },
            ..Selection::default()
        };
        vec![Box::new(Strip::new(sel))]
    };
    let open = || convert::open(input.path()).unwrap();
    let (expected, _) = convert::run(
        open(),
        Target::File,
        Cursor::new(Vec::new()),
        &opts,
        strip(),
    )
    .unwrap();
    let mut out = tempfile::tempfile().unwrap();
    let handle = out.try_clone().unwrap();
    let (_, report) = convert::run_in(
        open(),
        Target::File,
        std::io::BufWriter::new(&mut out),
        Some(handle),
        &opts,
        strip(),
    )
    .unwrap();
    let expected = expected.into_inner();
    assert_eq!(read_all(&out), expected);
    let samples = report.edits.unwrap().records[&RecordType::Sample];
    assert!(
        samples.removed > 5_000 && samples.kept > 5_000,
        "{samples:?}"
    );
    assert_eq!(
        report.bytes_copied > 0,
        long_runs,
        "{}",
        report.bytes_copied
    );
    assert!(report.bytes_copied < expected.len() as u64);
}
