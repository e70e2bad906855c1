//! What the record stage saw on the way through: the only input the feature derivation
//! takes from the records (see [`super::features`]).

use perfdata_core::record::RecordType;

/// The compressor's state at the end, for the COMPRESSED feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CompressorState {
    /// Uncompressed over compressed bytes, as perf states it.
    pub ratio: u32,
    /// The decompression buffer the records were cut for.
    pub mmap_len: usize,
}

/// A summary of the records written.
#[derive(Debug, Clone, Default)]
pub(crate) struct Observed {
    /// The first and last sample time, when the span is derived (see
    /// [`Observed::derives_sample_time`]).
    pub sample_time: Option<(u64, u64)>,
    /// Whether `perf stat record` data went by (STAT_CONFIG, STAT, STAT_ROUND).
    pub saw_stat: bool,
    /// Whether AUXTRACE records went by.
    pub saw_auxtrace: bool,
    /// Set when compressed records were written.
    pub compressed: Option<CompressorState>,
    /// Whether edits removed samples (the span is then that of the samples written).
    pub removed_samples: bool,
}

impl Observed {
    /// Note a record of type `ty` (written), with its time when it is a sample whose time
    /// counts.
    pub fn record(&mut self, ty: RecordType, sample_time: Option<u64>) {
        if let Some(t) = sample_time {
            self.sample_time = Some(match self.sample_time {
                Some((a, b)) => (a.min(t), b.max(t)),
                None => (t, t),
            });
        }
        self.saw_stat |= matches!(
            ty,
            RecordType::StatConfig | RecordType::Stat | RecordType::StatRound
        );
        self.saw_auxtrace |= ty == RecordType::Auxtrace;
    }
}
