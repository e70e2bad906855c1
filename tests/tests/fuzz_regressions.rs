//! What fuzzing found (`fuzz/`, runs in `fuzz/README.md`), each rebuilt here from a
//! fixture so the input is small and says what it exercises.

use std::io::Cursor;

use perfdata_core::record::RecordType;
use perfdata_core::{PerfReader, ReadOptions};
use perfdata_synth::SynthSpec;
use perfdata_tests::{fixtures_dir, perf_available, perf_stats};
use perfdata_write::convert::{self, ConvertOptions};
use perfdata_write::{Conversion, Input, Sink};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixtures_dir().join(name)).expect("fixture exists")
}

/// Every record the reader gives, by type, and how reading ended.
fn read_all(bytes: Vec<u8>) -> (Vec<RecordType>, Option<String>) {
    let mut reader = match PerfReader::from_vec(bytes, ReadOptions::default()) {
        Ok(r) => r,
        Err(e) => return (Vec::new(), Some(e.to_string())),
    };
    let mut types = Vec::new();
    loop {
        match reader.next_record() {
            Ok(Some(item)) => types.push(item.raw.record_type()),
            Ok(None) => return (types, None),
            Err(e) => return (types, Some(e.to_string())),
        }
    }
}

/// `read` and `strip` targets: an AUXTRACE whose payload size is near 2^64 made the
/// record's total size wrap (a panic with overflow checks, a slice out of range
/// without). It is a payload too large to hold, cut short by the end of the input: the
/// records before it are kept.
#[test]
fn an_auxtrace_payload_size_near_2_pow_64_does_not_wrap() {
    let mut bytes = fixture("pipe-cpu-clock.data");
    let (whole, err) = read_all(bytes.clone());
    assert!(err.is_none(), "{err:?}");
    for size in [u64::MAX, u64::MAX - 47, 1 << 63] {
        let mut b = bytes.clone();
        // PERF_RECORD_AUXTRACE: header, then size, offset, reference, idx, tid, cpu.
        b.extend_from_slice(&71u32.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&48u16.to_le_bytes());
        b.extend_from_slice(&size.to_le_bytes());
        b.extend_from_slice(&[0; 32]);
        // From memory (the slice source) and as a stream (stdin's source).
        let mut stream = PerfReader::from_stream(
            Box::new(Cursor::new(b.clone())),
            ReadOptions::default(),
            "-",
        )
        .unwrap();
        let mut streamed = Vec::new();
        let stream_err = loop {
            match stream.next_record() {
                Ok(Some(item)) => streamed.push(item.raw.record_type()),
                Ok(None) => break None,
                Err(e) => break Some(e.to_string()),
            }
        };
        let (types, err) = read_all(b);
        for (types, err) in [(types, err), (streamed, stream_err)] {
            assert_eq!(&types[..whole.len()], &whole[..], "payload size {size:#x}");
            if let Some(e) = err {
                assert!(e.contains("AUXTRACE"), "payload size {size:#x}: {e}");
            }
        }
    }
    bytes.truncate(bytes.len() - 1);
    assert!(read_all(bytes).0.len() < whole.len());
}

/// `convert` target: a pipe stream with header records only, made a file, had an empty
/// data section, which the reader (and perf) take for a killed recording: the features
/// after it were read as records ("record size 0"). The file now holds one
/// FINISHED_ROUND, and reads back clean, by perfdata and by perf.
#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn a_stream_without_data_records_becomes_a_file_that_reads_back() {
    assert!(perf_available());
    let bytes = fixture("pipe-cpu-clock.data");
    // The stream up to its first data record (the 16-byte header, then its records).
    let mut reader = PerfReader::from_vec(bytes.clone(), ReadOptions::default()).unwrap();
    let mut end = 16;
    while let Some(item) = reader.next_record().unwrap() {
        if !item.raw.record_type().is_metadata() {
            break;
        }
        end = (item.raw.offset as usize) + item.raw.bytes.len() + item.raw.payload.len();
    }
    drop(reader);
    let header_only = bytes[..end].to_vec();
    let (types, err) = read_all(header_only.clone());
    assert!(
        err.is_none() && types.iter().all(|t| t.is_metadata()),
        "{types:?}"
    );

    let reader = PerfReader::from_vec(header_only, ReadOptions::default()).unwrap();
    let mut out = Cursor::new(Vec::new());
    let to_file = ConvertOptions {
        target: Some(convert::Target::File),
        ..ConvertOptions::default()
    };
    Conversion::new(Input::from_reader(reader))
        .options(to_file)
        .write(Sink::seekable(&mut out, None))
        .unwrap();
    let out = out.into_inner();
    let data_size = u64::from_le_bytes(out[48..56].try_into().unwrap());
    assert_eq!(data_size, 8, "one FINISHED_ROUND");
    let reader = PerfReader::from_vec(out.clone(), ReadOptions::default()).unwrap();
    assert!(
        reader.meta().warnings.is_empty(),
        "{:?}",
        reader.meta().warnings
    );
    let (types, err) = read_all(out.clone());
    assert_eq!((types, err), (vec![RecordType::FinishedRound], None));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.data");
    std::fs::write(&path, &out).unwrap();
    let perf = perf_stats(&path);
    assert!(perf.clean, "perf 6.1 rejects a file without samples");
    assert_eq!(perf.records.get("FINISHED_ROUND"), Some(&1));
}

/// `synth` target: a spec whose events the writer refuses (RAW samples of an event that
/// is no tracepoint) built, then failed to write. It is refused when it is built.
#[test]
fn a_synth_spec_the_writer_would_refuse_does_not_build() {
    let spec = SynthSpec {
        events: "cycles".into(),
        fields: "RAW".into(),
        ..SynthSpec::default()
    };
    let Err(err) = spec.build() else {
        panic!("RAW on cycles is refused");
    };
    assert!(
        err.to_string()
            .contains("event cycles: RAW samples need a tracepoint format"),
        "{err}"
    );
    let tracepoint = SynthSpec {
        events: "tracepoint".into(),
        fields: "RAW".into(),
        ..SynthSpec::default()
    };
    assert!(tracepoint.build().is_ok());
}

/// `convert` target: a pipe stream whose HEADER_ATTR says its attr is 48 bytes (less
/// than PERF_ATTR_SIZE_VER0) was written as a file its own reader refuses ("attr_size
/// 64 is smaller than a perf_event_attr and its ids section"). The writer refuses it
/// instead, before anything is written.
#[test]
fn an_attr_smaller_than_ver0_is_refused_for_a_file() {
    let mut bytes = fixture("pipe-cpu-clock.data");
    // The first record is the HEADER_ATTR: its attr's size field follows attr.type.
    assert_eq!(&bytes[16..20], &64u32.to_le_bytes(), "HEADER_ATTR first");
    bytes[16 + 8 + 4..16 + 8 + 8].copy_from_slice(&48u32.to_le_bytes());
    let reader = PerfReader::from_vec(bytes, ReadOptions::default()).unwrap();
    let opts = ConvertOptions {
        target: Some(convert::Target::File),
        ..ConvertOptions::default()
    };
    let mut out = Cursor::new(Vec::new());
    let written = Conversion::new(Input::from_reader(reader))
        .options(opts)
        .write(Sink::seekable(&mut out, None));
    let err = match written {
        Ok(_) => panic!(
            "a file with 48-byte attrs was written: {:?}",
            read_all(out.into_inner()).1
        ),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("attrs of 48 bytes: a file's attrs are at least 64 bytes"),
        "{err}"
    );
}
