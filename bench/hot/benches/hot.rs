//! The hot paths, each over a whole recording (criterion; `cargo bench` in bench/hot):
//!
//! - `frame`: the fast walk (`PerfReader::for_each`) counting records;
//! - `locate`: the same walk locating each record's event, time, pid, tid and cpu;
//! - `decode/owned`: every record decoded into its owned model (`RecordRef::decode`);
//! - `decode/view`: SAMPLE records read through the borrowed view (`RecordRef::sample`),
//!   the others decoded as above;
//! - `decode/linux-perf-data`: linux-perf-data 0.13 iterating the same file and parsing
//!   every record (`RawRecord::parse`, samples included), the comparison of issue #13;
//! - `encode`: every decoded SAMPLE encoded back to bytes;
//! - `compress`: a file conversion compressing at zstd level 1, into memory.
//!
//! The input is `BENCH_FILE` if set (a perf.data file), else a synthetic recording of
//! about 20 MB written once to a temp file (`perfdata synth`'s builder: the same bytes on
//! every machine, no perf needed).

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use perfdata_core::record::{RecordBody, RecordType};
use perfdata_core::{PerfReader, Piece};

/// The input, and the temp dir that holds it (kept alive while the benches run).
fn input() -> (PathBuf, Option<tempfile::TempDir>) {
    if let Some(p) = std::env::var_os("BENCH_FILE") {
        return (PathBuf::from(p), None);
    }
    use perfdata_synth::{write_workload, SynthSpec, SynthWriter};
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("synth.data");
    let spec = SynthSpec {
        samples: 200_000,
        processes: 8,
        callchain: Some(8),
        ..SynthSpec::default()
    };
    let (workload, trace) = spec.build().expect("a synthetic trace");
    let file = std::fs::File::create(&path).expect("the temp file");
    let writer = SynthWriter::file(std::io::BufWriter::new(file), trace).expect("a writer");
    write_workload(&workload, writer).expect("written");
    (path, Some(dir))
}

fn walk(path: &Path, mut f: impl FnMut(&perfdata_core::RecordRef<'_>)) {
    let mut reader = PerfReader::open(path).expect("readable");
    reader
        .for_each(|piece| {
            if let Piece::Record(item) = piece {
                f(item);
            }
            Ok::<_, perfdata_core::Error>(true)
        })
        .expect("walked");
}

fn linux_perf_data(path: &Path) -> u64 {
    use linux_perf_data::{PerfFileReader, PerfFileRecord};
    let file = std::fs::File::open(path).expect("readable");
    let PerfFileReader {
        mut perf_file,
        mut record_iter,
    } = PerfFileReader::parse_file(std::io::BufReader::new(file)).expect("parsed");
    let mut n = 0u64;
    while let Some(record) = record_iter.next_record(&mut perf_file).expect("a record") {
        match record {
            PerfFileRecord::EventRecord { record, .. } => {
                black_box(record.parse().ok());
            }
            PerfFileRecord::UserRecord(record) => {
                black_box(record.parse().ok());
            }
        }
        n += 1;
    }
    n
}

fn benches(c: &mut Criterion) {
    let (path, _dir) = input();
    let bytes = std::fs::metadata(&path).expect("an input").len();
    let mut g = c.benchmark_group("walk");
    g.throughput(Throughput::Bytes(bytes));
    g.sample_size(20);
    g.bench_function("frame", |b| {
        b.iter(|| {
            let mut n = 0u64;
            walk(&path, |_| n += 1);
            n
        })
    });
    g.bench_function("locate", |b| {
        b.iter(|| {
            let mut t = 0u64;
            walk(&path, |item| t ^= item.locate().time.unwrap_or(0));
            t
        })
    });
    g.finish();

    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Bytes(bytes));
    g.sample_size(10);
    g.bench_function("owned", |b| {
        b.iter(|| walk(&path, |item| drop(black_box(item.decode().ok()))))
    });
    g.bench_function("view", |b| {
        b.iter(|| {
            walk(&path, |item| {
                if item.raw.record_type() == RecordType::Sample {
                    black_box(item.sample().ok());
                } else {
                    drop(black_box(item.decode().ok()));
                }
            })
        })
    });
    g.bench_function("linux-perf-data", |b| b.iter(|| linux_perf_data(&path)));
    g.finish();

    // Encoding: the decoded samples of the input, held in memory, encoded one by one.
    let mut records = Vec::new();
    walk(&path, |item| {
        if let Ok(r) = item.decode() {
            if matches!(r.body, RecordBody::Sample(_)) && records.len() < 200_000 {
                records.push(r);
            }
        }
    });
    let endian = PerfReader::open(&path).expect("readable").endian();
    let mut g = c.benchmark_group("encode");
    g.sample_size(10);
    g.bench_function("samples", |b| {
        let mut out = Vec::new();
        b.iter(|| {
            for r in &records {
                out.clear();
                r.encode_into(endian, &mut out).expect("encoded");
                black_box(&out);
            }
        })
    });
    g.finish();

    let mut g = c.benchmark_group("compress");
    g.throughput(Throughput::Bytes(bytes));
    g.sample_size(10);
    g.bench_function("level 1", |b| {
        use perfdata_write::convert::{Compression, ConvertOptions, Target};
        use perfdata_write::{Conversion, Input, Sink};
        let opts = ConvertOptions {
            compression: Compression::Compress {
                level: 1,
                format: Default::default(),
            },
            target: Some(Target::File),
            ..ConvertOptions::default()
        };
        b.iter(|| {
            let input = Input::open(&path).expect("readable");
            let mut out = std::io::Cursor::new(Vec::with_capacity(bytes as usize / 4));
            Conversion::new(input)
                .options(opts)
                .write(Sink::seekable(&mut out, None))
                .expect("converted");
            out.into_inner().len()
        })
    });
    g.finish();
}

criterion_group!(hot, benches);
criterion_main!(hot);
