//! A perf.data directory, as `perf record --threads` writes it: `data`, a file with the
//! header, the attrs, the records that are not samples and the features (DIR_FORMAT
//! among them), and `data.N`, one headerless stream of samples per CPU, which perf
//! merges by time. Compressed, each stream has its own zstd stream, as each of perf's
//! writer threads has.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use perfdata_core::encode;
use perfdata_core::feature::{Compressed, Feature, FeatureId, FeatureSection};

use super::writer::{attr_entries, prepare, SynthTarget, SynthWriter, TraceSpec};
use perfdata_write::compress::{Compressor, DEFAULT_MMAP_LEN};
use perfdata_write::error::{Result, WriteError};
use perfdata_write::file::FileWriter;

/// perf's directory format version (DIR_FORMAT).
const DIR_FORMAT_VERSION: u64 = 1;

/// The files of a perf.data directory being written.
pub struct DirWriter {
    data: FileWriter<BufWriter<File>>,
    streams: Vec<BufWriter<File>>,
    /// One per stream when compressing, and the zstd level.
    compressors: Option<(Vec<Compressor>, i32)>,
}

fn create(path: &Path) -> Result<BufWriter<File>> {
    let f = File::create(path)
        .map_err(|e| WriteError::io(format!("cannot create {}", path.display()), e))?;
    Ok(BufWriter::with_capacity(1 << 20, f))
}

fn stream_err(i: usize) -> impl Fn(std::io::Error) -> WriteError {
    move |e| WriteError::io(format!("writing data.{i}"), e)
}

impl SynthTarget for DirWriter {
    type Output = ();

    fn write_record(&mut self, bytes: &[u8], payload: &[u8]) -> Result<()> {
        self.data.write_record(bytes, payload)
    }

    fn write_payload(&mut self, more: &[u8]) -> Result<()> {
        self.data.write_payload(more)
    }

    fn write_sample(&mut self, cpu: u32, bytes: &[u8]) -> Result<()> {
        let i = cpu as usize % self.streams.len();
        let stream = &mut self.streams[i];
        match &mut self.compressors {
            Some((cs, _)) => cs[i].push(bytes, &[], &mut |rec| {
                stream.write_all(rec).map_err(stream_err(i))
            }),
            None => stream.write_all(bytes).map_err(stream_err(i)),
        }
    }

    fn finish(mut self, features: &[(FeatureId, Vec<u8>)]) -> Result<()> {
        let endian = self.data.endian();
        let mut features = features.to_vec();
        let dir_format = encode(&DIR_FORMAT_VERSION, endian, ())?;
        features.push((FeatureId::DirFormat, dir_format));
        if let Some((cs, level)) = &mut self.compressors {
            for (i, (c, stream)) in cs.iter_mut().zip(&mut self.streams).enumerate() {
                c.flush(&mut |rec| stream.write_all(rec).map_err(stream_err(i)))?;
            }
            // perf prints one ratio: the first stream's stands for all.
            let c = Compressed::zstd(*level as u32, cs[0].ratio(), cs[0].mmap_len() as u32);
            let section = FeatureSection::new(FeatureId::Compressed, Feature::Compressed(c));
            features.push((FeatureId::Compressed, section.encode(endian)?));
        }
        features.sort_by_key(|(id, _)| id.bit());
        let mut data = self.data.finish_encoded(&features, &[])?;
        data.flush()
            .map_err(|e| WriteError::io("writing data", e))?;
        for (i, mut s) in self.streams.into_iter().enumerate() {
            s.flush().map_err(stream_err(i))?;
        }
        Ok(())
    }
}

impl SynthWriter<DirWriter> {
    /// Start a directory at `path` (created; it must not hold a recording already):
    /// `data` and one `data.N` per CPU. Compression applies to the sample streams, each
    /// its own zstd stream; FINISHED_ROUND is not written: perf orders a directory's
    /// streams by time.
    pub fn dir(path: &Path, spec: TraceSpec) -> Result<Self> {
        let TraceSpec {
            events,
            host,
            mut opts,
        } = spec;
        let compress = opts.compress.take();
        opts.round_every = 0;
        let (events, ids) = prepare(events, &host, &opts)?;
        std::fs::create_dir_all(path)
            .map_err(|e| WriteError::io(format!("cannot create {}", path.display()), e))?;
        let data = FileWriter::new(
            create(&path.join("data"))?,
            opts.endian,
            &attr_entries(&events, &ids),
            &[],
        )?
        .caller_derives();
        let streams = (0..host.nr_cpus.max(1))
            .map(|i| create(&path.join(format!("data.{i}"))))
            .collect::<Result<Vec<_>>>()?;
        let compressors = match compress {
            Some((level, format)) => Some((
                streams
                    .iter()
                    .map(|_| Compressor::new(level, format, DEFAULT_MMAP_LEN, opts.endian))
                    .collect::<Result<Vec<_>>>()?,
                level,
            )),
            None => None,
        };
        let target = DirWriter {
            data,
            streams,
            compressors,
        };
        SynthWriter::with_target(target, events, ids, host, opts)
    }
}
