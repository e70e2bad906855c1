//! Bad input: truncated files, records of impossible sizes, sections past the end, counts
//! larger than the file, junk after a pipe stream. Each must end in an error naming a
//! byte offset (or, for junk, a warning), never a panic, a hang, or an allocation larger
//! than the input. A counting allocator in this test binary checks the last point.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::Ordering;

use perfdata_core::{Error, PerfReader, Problem, ReadOptions, Warning};
use perfdata_tests::{corpus_files, fixture_files, fixtures_dir, name};

mod layout;
use layout::{file_regions, record_offset, region_cut_at, u16_at, u32_at, u64_at};

/// Tracks the largest single allocation made since the last reset, per thread: the
/// tests of this binary run in parallel, and another test's allocations must not count
/// against the input being read.
struct Tracking;

thread_local! {
    static LARGEST_HERE: Cell<usize> = const { Cell::new(0) };
}

/// The largest allocation of this thread since the last `reset`.
struct Largest;
static LARGEST: Largest = Largest;

impl Largest {
    fn store(&self, v: usize, _: Ordering) {
        let _ = LARGEST_HERE.try_with(|l| l.set(v));
    }
    fn load(&self, _: Ordering) -> usize {
        LARGEST_HERE.try_with(Cell::get).unwrap_or(0)
    }
    fn fetch_max(&self, v: usize, _: Ordering) {
        // try_with: the allocator also runs while the thread's locals are torn down.
        let _ = LARGEST_HERE.try_with(|l| l.set(l.get().max(v)));
    }
}

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
fn read_all(bytes: Vec<u8>) -> (Option<Error>, Vec<Warning>, usize) {
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
    (err, reader.meta().warnings.clone(), n)
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixtures_dir().join(name)).expect("fixture exists")
}

/// The cut lengths the issue names: 8, 64, 256 bytes and 75%; in a file also half way
/// through its data section.
fn cuts(bytes: &[u8]) -> Vec<u64> {
    let len = bytes.len() as u64;
    let mut cuts = vec![8, 64, 256, len * 3 / 4];
    // A file-mode header is 104 bytes; a pipe stream's, 16.
    if u64_at(bytes, 8) > 16 {
        cuts.insert(
            3,
            u64_at(bytes, layout::DATA) + u64_at(bytes, layout::DATA + 8) / 2,
        );
    }
    cuts
}

/// `err` is `expected`: the same offset, the same thing named, the same problem.
fn assert_error(err: &Error, expected: &Error, what: &str) {
    assert_eq!(err.to_string(), expected.to_string(), "{what}");
    assert_eq!(err.problem(), expected.problem(), "{what}");
}

/// Cut each fixture at each length: the error names where the part of the file the cut
/// falls in starts, that part (file header, section, feature, record) and how much of
/// it is missing. A file cut inside its data section or the features after it is read
/// instead: its whole records are kept, and a warning names the header field (data size)
/// or index entry of what was cut off.
fn check_cuts(files: [&str; 3], regions: fn(&[u8]) -> Vec<layout::Region>) {
    for f in files {
        let bytes = fixture(f);
        let regions = regions(&bytes);
        for cut in cuts(&bytes) {
            let (err, warnings, n) = read_all(bytes[..cut as usize].to_vec());
            let what = format!("{f} cut at {cut}");
            let region = region_cut_at(&regions, cut);
            if let Some(field) = region.lost_when_cut(cut) {
                assert!(err.is_none(), "{what}: {err:?}");
                assert_eq!(warnings[0].offset, Some(field), "{what}: {warnings:?}");
                let size = region.end - region.start;
                let lost = if region.name == "data section" {
                    format!("the file ends at byte {cut}, inside its data section")
                } else {
                    format!(
                        "{} (said to be {size} bytes at offset {}): extends to byte {}",
                        region.name, region.start, region.end
                    )
                };
                assert!(warnings[0].message.contains(&lost), "{what}: {warnings:?}");
                assert!(n > 0, "{what}: no record read");
                println!("{what}: {n} records, {}", warnings[0]);
                continue;
            }
            let err = err.unwrap_or_else(|| panic!("{what}: no error ({warnings:?})"));
            let expected = region.error_when_cut_at(cut);
            assert_error(&err, &expected, &what);
            println!("{what}: {err}");
        }
    }
}

#[test]
fn truncated_file_mode_inputs_fail_with_an_offset_or_keep_their_records() {
    let files = [
        "file-cpu-clock.data",
        "file-compressed.data",
        "file-tracepoint.data",
    ];
    check_cuts(files, file_regions);
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
        for cut in cuts(&bytes) {
            let cut = cut as usize;
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
                warnings.iter().any(|w| w.to_string().starts_with(&cut_at)),
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

#[test]
fn record_of_size_zero_is_an_error_at_its_offset() {
    let mut bytes = fixture("file-cpu-clock.data");
    let at = record_offset(&bytes, 3) as usize;
    bytes[at + 6..at + 8].copy_from_slice(&0u16.to_le_bytes());
    let (err, _, n) = read_all(bytes);
    let err = err.expect("an error");
    let expected = Error::format(
        at as u64,
        "record header",
        Problem::RecordTooSmall { size: 0, min: 8 },
    );
    assert_error(&err, &expected, "record of size 0");
    assert_eq!(n, 3, "the three records before it are read");
}

/// The length of the sample_id trailer of file-mode `bytes` with a single attr: 8 bytes
/// for each of TID, TIME, ID, CPU, STREAM_ID and IDENTIFIER in its sample_type, when
/// the attr has sample_id_all (flags bit 18).
fn trailer_len(bytes: &[u8]) -> u64 {
    let attrs = u64_at(bytes, layout::ATTRS);
    let attr_size = u64_at(bytes, 16);
    assert_eq!(u64_at(bytes, layout::ATTRS + 8), attr_size, "one attr");
    let sample_type = u64_at(bytes, attrs + 24);
    let sample_id_all = u64_at(bytes, attrs + 40) >> 18 & 1 == 1;
    let fields = (1 << 1) | (1 << 2) | (1 << 6) | (1 << 7) | (1 << 9) | (1 << 16);
    if sample_id_all {
        8 * (sample_type & fields).count_ones() as u64
    } else {
        0
    }
}

#[test]
fn record_smaller_than_its_type_is_kept_raw_with_a_named_error() {
    // The second record of file-cpu-clock.data is an MMAP; shrink it and turn the rest
    // into a FINISHED_ROUND-sized filler so framing stays in step. At 16 bytes it cannot
    // hold its sample_id trailer; with 8 body bytes before the trailer, the body cannot
    // hold MMAP's layout (pid, tid, addr, ...), which fails where the body starts.
    let fixture_bytes = fixture("file-cpu-clock.data");
    let at = record_offset(&fixture_bytes, 1);
    assert_eq!(
        u32_at(&fixture_bytes, at),
        1,
        "fixture changed: MMAP second"
    );
    let size = u16_at(&fixture_bytes, at + 6);
    let trailer = trailer_len(&fixture_bytes);
    assert!(trailer > 8, "file-cpu-clock.data has a sample_id trailer");
    let cases = [
        (
            16,
            Error::format(
                at,
                "record MMAP",
                Problem::RecordTooSmall {
                    size: 16,
                    min: 8 + trailer,
                },
            ),
        ),
        (
            16 + trailer,
            Error::format(
                at + 8,
                "record MMAP",
                Problem::Decode("ends before its layout does".into()),
            ),
        ),
    ];
    for (shrunk, expected) in cases {
        let mut bytes = fixture_bytes.clone();
        let (at, filler) = (at as usize, (at + shrunk) as usize);
        bytes[at + 6..at + 8].copy_from_slice(&(shrunk as u16).to_le_bytes());
        bytes[filler..filler + 4].copy_from_slice(&68u32.to_le_bytes());
        bytes[filler + 4..filler + 6].copy_from_slice(&0u16.to_le_bytes());
        bytes[filler + 6..filler + 8].copy_from_slice(&((size - shrunk) as u16).to_le_bytes());

        let mut reader = PerfReader::from_vec(bytes, ReadOptions::default()).unwrap();
        reader.next_record().unwrap();
        let item = reader.next_record().unwrap().expect("the shrunk MMAP");
        let (record, err) = item.decode_or_raw();
        let err = err.expect("a shrunk MMAP does not decode");
        assert_error(&err, &expected, &format!("MMAP of {shrunk} bytes"));
        assert!(matches!(
            record.body,
            perfdata_core::record::RecordBody::Raw(_)
        ));
        assert_eq!(record.encode(item.meta.endian).unwrap(), item.raw.bytes);
    }
}

/// A data size far past the end of the file reads as a file cut short: every record is
/// read (the same number as with the true size), with a warning that names the data
/// size field and the bytes said to be missing, until the feature index that follows
/// the true data, which is no record: an error at its offset. A section that starts
/// past the end is an error at its header field.
#[test]
fn section_past_the_end_keeps_the_records_or_is_an_error() {
    let bytes = fixture("file-cpu-clock.data");
    let (err, _, whole) = read_all(bytes.clone());
    assert!(err.is_none(), "{err:?}");
    let data = u64_at(&bytes, layout::DATA);
    let size = u64_at(&bytes, layout::DATA + 8);

    let mut long = bytes.clone();
    // data.size (bytes 48..56) far past the end of the file.
    long[48..56].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let (err, warnings, n) = read_all(long);
    assert_eq!(n, whole, "records read");
    let missing = (1u64 << 40) - (bytes.len() as u64 - data);
    assert_eq!(warnings[0].offset, Some(layout::DATA + 8), "{warnings:?}");
    let message = &warnings[0].message;
    assert!(
        message.contains(&format!(
            "inside its data section (said to be {} bytes at offset {data})",
            1u64 << 40
        )) && message.contains(&format!("the {missing} bytes of data past the end")),
        "{message}"
    );
    // The first feature index entry's offset field reads as a record header of size 0.
    let index = data + size;
    assert_eq!(u16_at(&bytes, index + 6), 0);
    let expected = Error::format(
        index,
        "record header",
        Problem::RecordTooSmall { size: 0, min: 8 },
    );
    assert_error(&err.expect("an error"), &expected, "data.size 2^40");

    let mut far = bytes.clone();
    far[40..48].copy_from_slice(&(1u64 << 40).to_le_bytes());
    // The error names the header field that says where the section is.
    let expected = Error::format(
        layout::DATA,
        format!(
            "data section (said to be {size} bytes at offset {})",
            1u64 << 40
        ),
        Problem::PastEnd {
            end: (1 << 40) + size,
            limit: bytes.len() as u64,
        },
    );
    let (err, _, _) = read_all(far);
    assert_error(&err.expect("an error"), &expected, "data.offset 2^40");
}

#[test]
fn huge_counts_do_not_allocate() {
    // A SAMPLE whose callchain nr claims 2^60 entries must fail without asking for that
    // memory, naming where the entries would start and how little of the record is left.
    let mut bytes = fixture("file-callgraph-fp.data");
    let mut at = record_offset(&bytes, 0);
    while u32_at(&bytes, at) != 9 {
        at += u16_at(&bytes, at + 6);
    }
    // sample_type IP|TID|TIME|CALLCHAIN|PERIOD...: the callchain nr follows ip, tid, time.
    let nr_at = at + 8 + 24;
    let ips_at = nr_at + 8;
    let left = at + u16_at(&bytes, at + 6) - ips_at;
    let nr = nr_at as usize;
    bytes[nr..nr + 8].copy_from_slice(&(1u64 << 60).to_le_bytes());
    let expected = Error::format(
        ips_at,
        "record SAMPLE",
        Problem::Decode(format!(
            "array needs {} bytes but only {left} remain",
            (1u64 << 60) * 8
        )),
    );
    let len = bytes.len();
    LARGEST.store(0, Ordering::Relaxed);
    let mut reader = PerfReader::from_vec(bytes, ReadOptions::default()).unwrap();
    let mut decode_errors = Vec::new();
    while let Some(item) = reader.next_record().unwrap() {
        if let (_, Some(e)) = item.decode_or_raw() {
            decode_errors.push(e);
        }
    }
    let largest = LARGEST.load(Ordering::Relaxed);
    assert_eq!(decode_errors.len(), 1, "{decode_errors:?}");
    assert_error(&decode_errors[0], &expected, "callchain nr 2^60");
    assert!(
        largest < len.max(1 << 20),
        "largest allocation {largest} for a {len}-byte input"
    );
}

#[test]
fn junk_after_a_pipe_stream_is_a_warning() {
    let mut bytes = fixture("pipe-cpu-clock.data");
    let (_, _, clean) = read_all(bytes.clone());
    let junk_at = bytes.len() as u64;
    let junk = b"[ perf record: Woken up 1 times to write data ]\n";
    bytes.extend_from_slice(junk);
    let (err, warnings, n) = read_all(bytes);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(n, clean, "every record before the junk is read");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].offset, Some(junk_at), "{warnings:?}");
    let says = format!(
        "{} bytes after the last record are not a record (junk)",
        junk.len()
    );
    assert!(warnings[0].message.starts_with(&says), "{warnings:?}");
}

#[test]
fn huge_feature_string_length_does_not_allocate() {
    // HOSTNAME's length word claims 4 GiB: the feature is kept raw with a warning naming
    // where the string would start and how much of the section is left, and nothing
    // that large is allocated.
    let mut bytes = fixture("file-callgraph-fp.data");
    let host = file_regions(&bytes)
        .into_iter()
        .find(|r| r.name == "feature HOSTNAME")
        .expect("the fixture has HOSTNAME");
    let at = host.start as usize;
    bytes[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let expected = Error::format(
        host.start + 4,
        "feature HOSTNAME",
        Problem::Decode(format!(
            "byte array needs {} bytes but only {} remain",
            u32::MAX,
            host.end - host.start - 4
        )),
    );
    let len = bytes.len();
    LARGEST.store(0, Ordering::Relaxed);
    let (err, warnings, _) = read_all(bytes);
    let largest = LARGEST.load(Ordering::Relaxed);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].offset, Some(host.start + 4));
    assert_eq!(
        warnings[0].message,
        format!("feature HOSTNAME kept as raw bytes: {expected}")
    );
    assert!(
        largest < len.max(1 << 20),
        "largest allocation {largest} for a {len}-byte input"
    );
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
