//! A perf.data directory, as `perf record --threads` writes it: `data`, a file with the
//! header, the attrs, the records that are not samples and the features (DIR_FORMAT
//! among them), and `data.N`, one headerless stream of samples per CPU, which perf
//! merges by time.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use perfdata_core::codec::encode;
use perfdata_core::feature::FeatureId;

use super::writer::{attr_entries, prepare, SynthTarget, SynthWriter, TraceSpec};
use crate::error::{Result, WriteError};
use crate::file::FileWriter;

/// perf's directory format version (DIR_FORMAT).
const DIR_FORMAT_VERSION: u64 = 1;

/// The files of a perf.data directory being written.
pub struct DirWriter {
    data: FileWriter<BufWriter<File>>,
    streams: Vec<BufWriter<File>>,
}

fn create(path: &Path) -> Result<BufWriter<File>> {
    let f = File::create(path)
        .map_err(|e| WriteError::io(format!("cannot create {}", path.display()), e))?;
    Ok(BufWriter::with_capacity(1 << 20, f))
}

impl SynthTarget for DirWriter {
    type Output = ();

    fn write_record(&mut self, bytes: &[u8], payload: &[u8]) -> Result<()> {
        self.data.write_record(bytes, payload)
    }

    fn write_sample(&mut self, cpu: u32, bytes: &[u8]) -> Result<()> {
        let n = self.streams.len();
        self.streams[cpu as usize % n]
            .write_all(bytes)
            .map_err(|e| WriteError::io(format!("writing data.{}", cpu as usize % n), e))
    }

    fn finish(self, features: &[(FeatureId, Vec<u8>)]) -> Result<()> {
        let endian = self.data.endian();
        let mut features = features.to_vec();
        features.push((
            FeatureId::DirFormat,
            encode(&DIR_FORMAT_VERSION, endian, ()),
        ));
        features.sort_by_key(|(id, _)| id.bit());
        let mut data = self.data.finish(&features, &[])?;
        data.flush()
            .map_err(|e| WriteError::io("writing data", e))?;
        for (i, mut s) in self.streams.into_iter().enumerate() {
            s.flush()
                .map_err(|e| WriteError::io(format!("writing data.{i}"), e))?;
        }
        Ok(())
    }
}

impl SynthWriter<DirWriter> {
    /// Start a directory at `path` (created; it must not hold a recording already):
    /// `data` and one `data.N` per CPU. Compression is not offered here (perf compresses
    /// each stream on its own), and FINISHED_ROUND is not written: perf orders a
    /// directory's streams by time.
    pub fn dir(path: &Path, spec: TraceSpec) -> Result<Self> {
        let TraceSpec {
            events,
            host,
            mut opts,
        } = spec;
        if opts.compress.is_some() {
            return Err(WriteError::unsupported(
                None,
                "a synthetic directory is written uncompressed",
            ));
        }
        opts.round_every = 0;
        let (events, ids) = prepare(events, &host, &opts)?;
        std::fs::create_dir_all(path)
            .map_err(|e| WriteError::io(format!("cannot create {}", path.display()), e))?;
        let data = FileWriter::new(
            create(&path.join("data"))?,
            opts.endian,
            &attr_entries(&events, &ids),
            &[],
        )?;
        let streams = (0..host.nr_cpus.max(1))
            .map(|i| create(&path.join(format!("data.{i}"))))
            .collect::<Result<Vec<_>>>()?;
        SynthWriter::with_target(DirWriter { data, streams }, events, ids, host, opts)
    }
}
