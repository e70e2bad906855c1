//! Bad input: truncated files, records of impossible sizes, sections past the end, counts
//! larger than the file, junk after a pipe stream. Each must end in an error naming a
//! byte offset (or, for junk, a warning), never a panic, a hang, or an allocation larger
//! than the input. A counting allocator in this test binary checks the last point.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use perfdata_core::{PerfReader, Problem, ReadOptions};
use perfdata_tests::{corpus_files, fixture_files, fixtures_dir, name};

/// Tracks the largest single allocation made since the last reset.
struct Tracking;
static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Tracking = Tracking;

/// Read everything (decoding every record) from in-memory bytes. Returns the first
/// error, the warnings, and the number of records read.
fn read_all(bytes: Vec<u8>) -> (Option<perfdata_core::Error>, Vec<String>, usize) {
    let mut reader = match PerfReader::from_vec(bytes, ReadOptions::default()) {
        Ok(r) => r,
        Err(e) => return (Some(e), Vec::new(), 0),
    };
    let mut n = 0;
    let err = loop {
        match reader.next_record() {
            Ok(Some(item)) => {
                let _ = item.decode_or_raw();
                n += 1;
            }
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    let warnings = reader
        .meta()
        .warnings
        .iter()
        .map(|w| w.to_string())
        .collect();
    (err, warnings, n)
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixtures_dir().join(name)).expect("fixture exists")
}

/// The cut lengths the issue names: 8, 64, 256 bytes and 75%.
fn cuts(len: usize) -> [usize; 4] {
    [8, 64, 256, len * 3 / 4]
}

#[test]
fn truncated_file_mode_inputs_fail_with_an_offset() {
    for f in [
        "file-cpu-clock.data",
        "file-compressed.data",
        "file-tracepoint.data",
    ] {
        let bytes = fixture(f);
        for cut in cuts(bytes.len()) {
            let (err, _, _) = read_all(bytes[..cut].to_vec());
            let err = err.unwrap_or_else(|| panic!("{f} cut at {cut}: no error"));
            let offset = err
                .offset()
                .unwrap_or_else(|| panic!("{f} cut at {cut}: {err} names no offset"));
            assert!(
                offset <= bytes.len() as u64,
                "{f} cut at {cut}: offset {offset}"
            );
            println!("{f} cut at {cut}: {err}");
        }
    }
}

/// A pipe stream cut inside its 16-byte header is an error; cut anywhere after, every
/// whole record is read and a warning names the offset of the record cut short.
#[test]
fn truncated_pipe_inputs_keep_their_whole_records() {
    for f in [
        "pipe-cpu-clock.data",
        "pipe-compressed.data",
        "pipe-tracepoint.data",
    ] {
        let bytes = fixture(f);
        for cut in cuts(bytes.len()) {
            let (err, warnings, n) = read_all(bytes[..cut].to_vec());
            if cut < 16 {
                let err = err.unwrap_or_else(|| panic!("{f} cut at {cut}: no error"));
                assert!(
                    matches!(err.problem(), Some(Problem::Truncated { .. })),
                    "{f} cut at {cut}: {err}"
                );
                continue;
            }
            assert!(err.is_none(), "{f} cut at {cut}: {err:?}");
            // Where the last whole top-level record ends, walked here.
            let (mut at, mut whole) = (16, 0);
            while at + 8 <= cut {
                let mut size =
                    u16::from_le_bytes(bytes[at + 6..at + 8].try_into().unwrap()) as usize;
                // HEADER_TRACING_DATA: the tracing data follows the record.
                if bytes[at..at + 4] == 66u32.to_le_bytes() {
                    size += u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
                }
                if at + size > cut {
                    break;
                }
                at += size;
                whole += 1;
            }
            let cut_at = format!("at byte offset {at} ({at:#x}): the input ends inside a record");
            assert!(
                warnings.iter().any(|w| w.starts_with(&cut_at)),
                "{f} cut at {cut}: {warnings:?}"
            );
            // Compressed records count once each plus what they hold.
            assert!(
                n >= whole,
                "{f} cut at {cut}: {n} records read, {whole} whole"
            );
            println!("{f} cut at {cut}: {n} records; {warnings:?}");
        }
    }
}

#[test]
fn truncated_header_names_offset_zero() {
    let bytes = fixture("file-cpu-clock.data");
    let (err, _, _) = read_all(bytes[..8].to_vec());
    assert_eq!(err.expect("an error").offset(), Some(0));
}

/// Offset of the `n`th record of a file-mode fixture's data section.
fn record_offset(bytes: &[u8], n: usize) -> usize {
    let data = u64::from_le_bytes(bytes[40..48].try_into().unwrap()) as usize;
    let mut at = data;
    for _ in 0..n {
        at += u16::from_le_bytes(bytes[at + 6..at + 8].try_into().unwrap()) as usize;
    }
    at
}

#[test]
fn record_of_size_zero_is_an_error_at_its_offset() {
    let mut bytes = fixture("file-cpu-clock.data");
    let at = record_offset(&bytes, 3);
    bytes[at + 6..at + 8].copy_from_slice(&0u16.to_le_bytes());
    let (err, _, n) = read_all(bytes);
    let err = err.expect("an error");
    assert_eq!(err.offset(), Some(at as u64), "{err}");
    assert_eq!(n, 3, "the three records before it are read");
    assert!(matches!(
        err.problem(),
        Some(Problem::RecordTooSmall { size: 0, .. })
    ));
}

#[test]
fn record_smaller_than_its_type_is_kept_raw_with_a_named_error() {
    // The second record of file-cpu-clock.data is an MMAP; shrink it to 16 bytes and
    // turn the rest into a FINISHED_ROUND-sized filler so framing stays in step.
    let mut bytes = fixture("file-cpu-clock.data");
    let at = record_offset(&bytes, 1);
    let ty = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!(ty, 1, "fixture layout changed: expected MMAP second");
    let size = u16::from_le_bytes(bytes[at + 6..at + 8].try_into().unwrap()) as usize;
    bytes[at + 6..at + 8].copy_from_slice(&16u16.to_le_bytes());
    let filler = at + 16;
    bytes[filler..filler + 4].copy_from_slice(&68u32.to_le_bytes());
    bytes[filler + 4..filler + 6].copy_from_slice(&0u16.to_le_bytes());
    bytes[filler + 6..filler + 8].copy_from_slice(&((size - 16) as u16).to_le_bytes());

    let mut reader = PerfReader::from_vec(bytes, ReadOptions::default()).unwrap();
    reader.next_record().unwrap();
    let item = reader.next_record().unwrap().expect("the shrunk MMAP");
    let (record, err) = item.decode_or_raw();
    let err = err.expect("an MMAP of 16 bytes does not decode");
    assert!(err.to_string().contains("record MMAP"), "{err}");
    assert!(err.offset().unwrap() >= at as u64);
    assert!(matches!(
        record.body,
        perfdata_core::record::RecordBody::Raw(_)
    ));
    assert_eq!(record.encode(item.meta.endian).unwrap(), item.raw.bytes);
}

#[test]
fn section_past_the_end_is_an_error() {
    let mut bytes = fixture("file-cpu-clock.data");
    // data.size (bytes 48..56) far past the end of the file.
    bytes[48..56].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let (err, _, _) = read_all(bytes);
    let err = err.expect("an error");
    assert!(
        matches!(err.problem(), Some(Problem::PastEnd { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("data section"), "{err}");
}

#[test]
fn huge_counts_do_not_allocate() {
    // A SAMPLE whose callchain nr claims 2^60 entries, and a feature whose string
    // length claims 4 GiB: both must fail without asking for that memory.
    let mut bytes = fixture("file-callgraph-fp.data");
    let mut at = record_offset(&bytes, 0);
    loop {
        let ty = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        if ty == 9 {
            break;
        }
        at += u16::from_le_bytes(bytes[at + 6..at + 8].try_into().unwrap()) as usize;
    }
    // sample_type IP|TID|TIME|CALLCHAIN|PERIOD...: the callchain nr follows ip, tid, time.
    let nr_at = at + 8 + 24;
    bytes[nr_at..nr_at + 8].copy_from_slice(&(1u64 << 60).to_le_bytes());
    let len = bytes.len();
    LARGEST.store(0, Ordering::Relaxed);
    let mut reader = PerfReader::from_vec(bytes, ReadOptions::default()).unwrap();
    let mut decode_errors = Vec::new();
    while let Some(item) = reader.next_record().unwrap() {
        if let (_, Some(e)) = item.decode_or_raw() {
            decode_errors.push(e.to_string());
        }
    }
    let largest = LARGEST.load(Ordering::Relaxed);
    assert_eq!(decode_errors.len(), 1, "{decode_errors:?}");
    assert!(
        decode_errors[0].contains("record SAMPLE"),
        "{decode_errors:?}"
    );
    assert!(
        largest < len.max(1 << 20),
        "largest allocation {largest} for a {len}-byte input"
    );
}

#[test]
fn junk_after_a_pipe_stream_is_a_warning() {
    let mut bytes = fixture("pipe-cpu-clock.data");
    let (_, _, clean) = read_all(bytes.clone());
    bytes.extend_from_slice(b"[ perf record: Woken up 1 times to write data ]\n");
    let (err, warnings, n) = read_all(bytes);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(n, clean, "every record before the junk is read");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("junk"), "{warnings:?}");
}

/// Flip bytes all over small inputs: whatever happens, no panic and no huge allocation.
#[test]
fn mutated_inputs_never_panic() {
    let mut inputs: Vec<std::path::PathBuf> = fixture_files()
        .into_iter()
        .filter(|p| p.is_file() && std::fs::metadata(p).unwrap().len() < 40_000)
        .collect();
    inputs.extend(
        corpus_files()
            .into_iter()
            .filter(|p| std::fs::metadata(p).unwrap().len() < 40_000),
    );
    let mut runs = 0;
    for path in &inputs {
        let bytes = std::fs::read(path).unwrap();
        let step = (bytes.len() / 150).max(1);
        for (i, pos) in (0..bytes.len()).step_by(step).enumerate() {
            let mut m = bytes.clone();
            m[pos] ^= [0xff, 0x80, 0x01, 0x7f][i % 4];
            LARGEST.store(0, Ordering::Relaxed);
            let _ = read_all(m);
            let largest = LARGEST.load(Ordering::Relaxed);
            assert!(
                largest <= (bytes.len() * 2).max(4 << 20),
                "{}: flipping byte {pos} made a {largest}-byte allocation",
                name(Path::new(path))
            );
            runs += 1;
        }
    }
    println!("{runs} mutated inputs read without a panic");
}
