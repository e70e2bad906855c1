//! Writing the owned tree back (`perfdata_write::TreeSource`): an unchanged tree gives
//! what identity `convert` gives, so the input's own bytes wherever convert does; a tree
//! changes container and recompresses as convert does. Edits made on the tree are in
//! `tree_edits.rs`.

use std::io::Cursor;
use std::path::Path;

use perfdata_core::record::RecordType;
use perfdata_core::{PerfData, PerfReader, ReadOptions};
use perfdata_tests::{all_inputs, fixture_files, name, CORRUPT};
use perfdata_write::compress::CompressFormat;
use perfdata_write::convert::{ConvertOptions, Plan, Target};
use perfdata_write::{Conversion, Input, Sink, TreeSource};

/// `perfdata convert` of `path` with `opts`, in memory.
fn converted(path: &Path, opts: &ConvertOptions) -> Result<Vec<u8>, String> {
    let mut out = Cursor::new(Vec::new());
    Input::open(path)
        .and_then(|input| {
            Conversion::new(input)
                .options(*opts)
                .write(Sink::seekable(&mut out, None))
        })
        .map_err(|e| e.to_string())?;
    Ok(out.into_inner())
}

/// A tree written into memory with `opts`.
fn tree_bytes(tree: &PerfData, opts: &ConvertOptions) -> Result<Vec<u8>, String> {
    let mut out = Cursor::new(Vec::new());
    Conversion::new(TreeSource::new(tree))
        .options(*opts)
        .write(Sink::seekable(&mut out, None))
        .map_err(|e| e.to_string())?;
    Ok(out.into_inner())
}

/// How a test reads its trees.
#[derive(Clone, Copy)]
enum Read {
    /// `PerfData::read`: compressed records kept whole.
    Tree,
    /// `PerfData::read_with(.., Contents)`: the records inside compressed records, as
    /// a tree is read to be edited.
    Contents,
    /// From the reader convert opens for the options (records inside compressed
    /// records when the conversion expands them).
    AsConvert,
}

/// The tree of `path` written with `opts`, in memory.
fn written(path: &Path, read: Read, opts: &ConvertOptions) -> Result<Vec<u8>, String> {
    let tree = match read {
        Read::Tree => PerfData::read(path),
        Read::Contents => PerfData::read_with(path, ReadOptions::Contents),
        Read::AsConvert => {
            // As convert opens a file: the containers kept unless the plan expands them.
            let probe = PerfReader::open_with(path, ReadOptions::Containers);
            let plan = Plan::new(opts, probe.map_err(|e| e.to_string())?.meta());
            match plan.expands() {
                true => PerfData::read_with(path, ReadOptions::Contents),
                false => PerfData::read_with(path, ReadOptions::Containers),
            }
        }
    };
    let tree = tree.map_err(|e| e.to_string())?;
    tree_bytes(&tree, opts)
}

/// Every input but the corrupt one, directories included.
fn inputs() -> Vec<std::path::PathBuf> {
    all_inputs()
        .into_iter()
        .filter(|p| name(p) != CORRUPT.0)
        .collect()
}

/// The compressed record type an input uses, if any.
fn compression_format(path: &Path) -> Option<CompressFormat> {
    let mut reader = PerfReader::open_with(path, ReadOptions::Containers).unwrap();
    while let Some(item) = reader.next_record().unwrap() {
        match item.raw.record_type() {
            RecordType::Compressed => return Some(CompressFormat::Compressed),
            RecordType::Compressed2 => return Some(CompressFormat::Compressed2),
            _ => {}
        }
    }
    None
}

/// The first byte where two outputs differ, for messages.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    let at = a.iter().zip(b).position(|(x, y)| x != y);
    format!("first at byte {at:?}, {} vs {} bytes", a.len(), b.len())
}

/// Compare the tree's output with convert's for every input but those of `differ`
/// (whose outputs must differ); returns the names of the inputs whose output is the
/// input itself.
fn compare_all(read: Read, opts: impl Fn(&Path) -> ConvertOptions, differ: &[&str]) -> Vec<String> {
    let (mut failures, mut identical) = (Vec::new(), Vec::new());
    for path in inputs() {
        let n = name(&path);
        let opts = opts(&path);
        let (tree, conv) = (written(&path, read, &opts), converted(&path, &opts));
        if differ.contains(&n.as_str()) {
            assert_ne!(tree.unwrap(), conv.unwrap(), "{n} is listed as differing");
            continue;
        }
        match (tree, conv) {
            (Ok(t), Ok(c)) if t == c => {
                if path.is_file() && std::fs::read(&path).unwrap() == t {
                    identical.push(n);
                }
            }
            (Ok(t), Ok(c)) => failures.push(format!("{n}: {}", first_difference(&t, &c))),
            (Err(_), Err(_)) => {}
            (t, c) => failures.push(format!("{n}: tree {:?}, convert {:?}", t.err(), c.err())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    identical
}

/// The inputs identity convert does not give back byte for byte (tests/tests/rewrite.rs
/// says why for each): perf's version-1 magic, layouts perf does not write (perf
/// inject's data at 4096, quipper, simpleperf), stderr junk after a pipe stream.
const NOT_CANONICAL: usize = 8;

#[test]
fn an_unchanged_tree_writes_the_input_back() {
    let identical = compare_all(Read::Tree, |_| ConvertOptions::default(), &[]);
    println!("byte-identical: {identical:?}");
    let fixtures = fixture_files().iter().filter(|p| p.is_file()).count();
    // Every fixture file, and the corpus files identity convert gives back.
    let corpus = if cfg!(no_corpus) {
        0
    } else {
        40 - 1 - NOT_CANONICAL
    };
    assert_eq!(identical.len(), fixtures + corpus, "{identical:?}");
}

#[test]
fn an_unchanged_tree_read_with_its_contents_writes_the_input_back() {
    // The compressed records it was read from are written back as they were.
    let identical = compare_all(Read::Contents, |_| ConvertOptions::default(), &[]);
    let fixtures = fixture_files().iter().filter(|p| p.is_file()).count();
    let corpus = if cfg!(no_corpus) {
        0
    } else {
        40 - 1 - NOT_CANONICAL
    };
    assert_eq!(identical.len(), fixtures + corpus, "{identical:?}");
    for compressed in [
        "file-compressed.data",
        "pipe-compressed.data",
        "strip-compressed.data",
    ] {
        assert!(identical.iter().any(|n| n == compressed), "{identical:?}");
    }
}

#[test]
fn an_expanded_tree_is_compressed_again_as_convert_does() {
    // Read with the records inside compressed records, written compressed again in
    // the input's record type: convert's re-compression (`keep_format`).
    compare_all(
        Read::AsConvert,
        |path| ConvertOptions {
            keep_format: compression_format(path),
            ..Default::default()
        },
        &[],
    );
}

/// simpleperf's tracing data is a HEADER_TRACING_DATA record in a file's data section.
/// Made into a pipe stream, convert writes the stream's header before it has read that
/// record, so its stream has no tracing data; the tree knows it from the start.
const SIMPLEPERF_TRACING: &str = "jbeich-perf_with_tracepoint_event.data";

#[test]
fn a_tree_changes_container_as_convert_does() {
    for target in [Target::File, Target::Pipe] {
        let opts = move |_: &Path| ConvertOptions {
            target: Some(target),
            ..Default::default()
        };
        let differ: &[&str] = match (target, cfg!(no_corpus)) {
            (Target::Pipe, false) => &[SIMPLEPERF_TRACING],
            _ => &[],
        };
        compare_all(Read::AsConvert, opts, differ);
    }
}

#[test]
#[cfg_attr(no_corpus, ignore = "PERFDATA_CORPUS is not set")]
fn a_pipe_stream_from_a_tree_keeps_a_files_tracing_data() {
    let path = perfdata_tests::corpus_dir()
        .unwrap()
        .join(SIMPLEPERF_TRACING);
    let tracing_records = |bytes: Vec<u8>| {
        let mut r = PerfReader::from_vec(bytes, ReadOptions::Contents).unwrap();
        let mut n = 0;
        while let Some(item) = r.next_record().unwrap() {
            n += usize::from(item.raw.record_type() == RecordType::HeaderTracingData);
        }
        n
    };
    let opts = ConvertOptions {
        target: Some(Target::Pipe),
        ..Default::default()
    };
    assert_eq!(tracing_records(std::fs::read(&path).unwrap()), 1);
    assert_eq!(
        tracing_records(written(&path, Read::Tree, &opts).unwrap()),
        1
    );
    assert_eq!(tracing_records(converted(&path, &opts).unwrap()), 0);
}

#[test]
fn write_file_writes_through_an_atomic_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = perfdata_tests::fixtures_dir().join("pipe-cpu-clock.data");
    let tree = PerfData::read(&input).unwrap();
    let out = dir.path().join("out.data");
    let report = Conversion::new(TreeSource::new(&tree))
        .write(Sink::path(&out).unwrap())
        .unwrap();
    assert_eq!(report.records_out as usize, tree.records.len());
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&input).unwrap());
    // Nothing else is left in the directory (no temp file).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn a_tree_that_never_finished_derives_sample_time_from_every_sample() {
    // file-compressed.data as `perf record` leaves it when killed: data.size 0 and
    // no features after the data.
    let input = perfdata_tests::fixtures_dir().join("file-compressed.data");
    let mut bytes = std::fs::read(&input).unwrap();
    let field = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let (offset, size) = (field(&bytes, 40), field(&bytes, 48));
    bytes.truncate((offset + size) as usize);
    bytes[48..56].fill(0);
    let dir = tempfile::tempdir().unwrap();
    let killed = dir.path().join("killed.data");
    std::fs::write(&killed, &bytes).unwrap();

    let tree = PerfData::read_with(&killed, ReadOptions::Contents).unwrap();
    assert!(tree.meta.unfinished);
    // Every sample is inside a compressed record.
    assert!(!tree.read_containers().is_empty());
    let (first, last) = tree.read_sample_span().unwrap();
    let out = dir.path().join("out.data");
    Conversion::new(TreeSource::new(&tree))
        .write(Sink::path(&out).unwrap())
        .unwrap();
    let written = PerfData::read(&out).unwrap();
    assert!(!written.meta.unfinished);
    match written
        .meta
        .feature(perfdata_core::feature::FeatureId::SampleTime)
    {
        Some(perfdata_core::feature::Feature::SampleTime(t)) => {
            assert_eq!((t.first, t.last), (first, last));
        }
        other => panic!("SAMPLE_TIME: {other:?}"),
    }
    // Identity convert compresses them again too (it refused to write them without
    // the COMPRESSED feature before), and gives the same bytes.
    let opts = ConvertOptions::default();
    assert_eq!(
        converted(&killed, &opts).unwrap(),
        std::fs::read(&out).unwrap()
    );
}
