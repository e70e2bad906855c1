//! `convert --compress` puts FINISHED_ROUND records into the compression stream, so a
//! batch of compressed records spans many rounds: ending a batch at every round (perf
//! writes one every flush of its ring buffers, every ~120 KiB of a busy recording)
//! made compression 1.5x slower than `zstd -1` on the same bytes. perf 6.1 reads rounds
//! inside compressed records as it reads them outside (it handles each decompressed
//! record as a top-level one); `convert_oracle` checks perf's view of compressed corpus
//! files.

use perfdata_core::raw::Origin;
use perfdata_core::record::RecordType;
use perfdata_core::{PerfReader, ReadOptions};
use perfdata_synth::{write_workload, SynthSpec, SynthWriter};
use perfdata_write::convert::{Compression, ConvertOptions, Target};
use perfdata_write::{Conversion, Input, Sink};

/// Record types in order, and which of them were inside compressed records.
fn walk(bytes: Vec<u8>, opts: ReadOptions) -> Vec<(RecordType, bool)> {
    let mut r = PerfReader::from_vec(bytes, opts).unwrap();
    let mut out = Vec::new();
    while let Some(item) = r.next_record().unwrap() {
        let inside = matches!(item.raw.origin, Origin::Decompressed { .. });
        out.push((item.raw.record_type(), inside));
    }
    out
}

#[test]
fn rounds_go_inside_the_compressed_batches() {
    // 20,000 samples with a round after every 100 records: 200-odd rounds, of ~4 KiB.
    let spec = SynthSpec {
        samples: 20_000,
        round_every: 100,
        ..SynthSpec::default()
    };
    let (workload, trace) = spec.build().unwrap();
    let writer = SynthWriter::file(std::io::Cursor::new(Vec::new()), trace).unwrap();
    let input = write_workload(&workload, writer).unwrap().0.into_inner();
    let before = walk(input.clone(), ReadOptions::default());
    let rounds = before
        .iter()
        .filter(|(t, _)| *t == RecordType::FinishedRound)
        .count();
    assert!(rounds > 150, "{rounds} rounds");

    let opts = ConvertOptions {
        compression: Compression::Compress {
            level: 1,
            format: Default::default(),
        },
        target: Some(Target::File),
        ..ConvertOptions::default()
    };
    let reader = PerfReader::from_vec(input, ReadOptions::default()).unwrap();
    let mut out = std::io::Cursor::new(Vec::new());
    let report = Conversion::new(Input::from_reader(reader))
        .options(opts)
        .write(Sink::seekable(&mut out, None))
        .unwrap();
    assert_eq!(report.records_in, before.len() as u64);
    let out = out.into_inner();

    // The same records in the same order, every FINISHED_ROUND among them compressed.
    let after = walk(out.clone(), ReadOptions::default());
    let types = |w: &[(RecordType, bool)]| w.iter().map(|(t, _)| *t).collect::<Vec<_>>();
    assert_eq!(types(&after), types(&before));
    let rounds_inside = after
        .iter()
        .filter(|&&(t, inside)| t == RecordType::FinishedRound && inside)
        .count();
    assert_eq!(rounds_inside, rounds);

    // Batches fill to the decompression buffer (perf's 512 KiB) rather than ending at
    // each round: the ~1.1 MB of records need 3 batches, not one per round. A batch is
    // cut into records of under 64 KiB, so count the compressed bytes' records.
    let containers = walk(out, ReadOptions::Containers);
    let compressed = containers
        .iter()
        .filter(|(t, _)| *t == RecordType::Compressed)
        .count();
    assert!(compressed > 0 && compressed < rounds / 4, "{compressed}");
    assert!(!containers.contains(&(RecordType::FinishedRound, false)));
}
