//! The resolved plan of a conversion ([`Plan`]): what was asked ([`ConvertOptions`])
//! completed from the input's metadata once, before any record is read; the record
//! stage, the compressor and the feature derivation read it rather than work the
//! container, byte order, compression level, compressed record type and buffer size
//! out again.

use binrw::Endian;
use perfdata_core::feature::{Compressed, Feature, FeatureId};
use perfdata_core::record::RecordType;
use perfdata_core::{ContainerKind, Metadata};

use super::{Compression, ConvertOptions, Target};
use crate::compress::CompressFormat;

/// A conversion's options resolved for one input: the output's container and byte
/// order, and what happens to compressed records.
///
/// ```
/// use perfdata_write::convert::{ConvertOptions, Plan, Target};
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/pipe-compressed.data");
/// let reader = perfdata_core::PerfReader::open(path)?;
/// let compat = ConvertOptions { compat_perf_6_1: true, ..Default::default() };
/// let plan = Plan::new(&compat, reader.meta());
/// // perf 6.1 reads files better than streams: compat writes a file.
/// assert_eq!(plan.target(), Target::File);
/// assert_eq!(plan.endian(), reader.meta().endian);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    options: ConvertOptions,
    target: Target,
    endian: Endian,
    expands: bool,
}

/// How a conversion compresses what it compresses: the zstd level, the record type and
/// the decompression buffer the batches keep to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompressorPlan {
    /// The zstd level (1 to 22).
    pub level: i32,
    /// COMPRESSED or COMPRESSED2.
    pub format: CompressFormat,
    /// The decompression buffer (HEADER_COMPRESSED.mmap_len): the most a batch holds.
    pub buffer_size: usize,
}

impl Plan {
    /// The plan of converting the input `meta` describes as `opts` ask. What
    /// `compat_perf_6_1` implies is decided here, once, for every caller; planning with
    /// the options of a plan gives the same plan.
    pub fn new(opts: &ConvertOptions, meta: &Metadata) -> Plan {
        let options = resolve(opts, meta);
        let target = options.target_for(meta.container);
        let endian = options.endian.unwrap_or(meta.endian);
        Plan {
            options,
            target,
            endian,
            expands: expands(&options, target, meta),
        }
    }

    /// [`Plan::new`] writing `target` whatever the options say (a tree whose header
    /// records no longer say what its metadata says is read as a file's metadata, and
    /// still written as the stream it was).
    pub(super) fn writing(mut self, target: Target) -> Plan {
        self.target = target;
        self
    }

    /// Whether the options as asked, before they are resolved, expand compressed
    /// records (what a tree holding compressed records cannot give).
    pub(super) fn expands_as_asked(opts: &ConvertOptions, meta: &Metadata) -> bool {
        expands(opts, opts.target_for(meta.container), meta)
    }

    /// The options as resolved (what `compat_perf_6_1` implies filled in).
    pub fn options(&self) -> &ConvertOptions {
        &self.options
    }

    /// The container written.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The byte order written.
    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// What happens to compressed records.
    pub fn compression(&self) -> Compression {
        self.options.compression
    }

    /// Whether the reader must expand compressed records: a change of byte order or of
    /// compression, a directory's or a stream's records written as a file, or a
    /// recording that never finished (no COMPRESSED feature to copy: its records are
    /// compressed again, and described).
    pub fn expands(&self) -> bool {
        self.expands
    }

    /// The decompression buffer (HEADER_COMPRESSED.mmap_len) of what this conversion
    /// compresses, and so the most a batch holds: the input's, where it was compressed
    /// (the buffer perf recorded with); else the compressor's for the level
    /// ([`crate::compress::mmap_len_for_level`]).
    pub fn buffer_size(&self, meta: &Metadata) -> usize {
        let level = match self.options.compression {
            Compression::Compress { level, .. } => level,
            Compression::Keep | Compression::Decompress => 1,
        };
        input_compressed(meta)
            .map(|c| c.mmap_len as usize)
            .filter(|&n| n > 0)
            .unwrap_or_else(|| crate::compress::mmap_len_for_level(level))
    }

    /// The compressor's settings, with the metadata as of the first record it
    /// compresses: the asked level and type; keeping compression, the input's level
    /// (perf's -z takes 1 to 22; anything else in the feature is not a level perf
    /// wrote, and 1 is used) and the type it had (COMPRESSED or COMPRESSED2, as last
    /// seen) unless a type was asked for.
    pub fn compressor(&self, meta: &Metadata) -> CompressorPlan {
        let (level, format) = match self.options.compression {
            Compression::Compress { level, format } => (level, format),
            Compression::Keep | Compression::Decompress => {
                let seen = match meta.compression_record {
                    Some(RecordType::Compressed2) => CompressFormat::Compressed2,
                    _ => CompressFormat::Compressed,
                };
                let level = input_compressed(meta)
                    .map(|c| c.level)
                    .filter(|l| (1..=22).contains(l))
                    .map_or(1, |l| l as i32);
                (level, self.options.keep_format.unwrap_or(seen))
            }
        };
        CompressorPlan {
            level,
            format,
            buffer_size: self.buffer_size(meta),
        }
    }

    /// The level the output's COMPRESSED feature states: the asked one, else the
    /// input's feature's as it was (1 without one).
    pub fn feature_level(&self, meta: &Metadata) -> u32 {
        match self.options.compression {
            Compression::Compress { level, .. } => level.max(0) as u32,
            Compression::Keep | Compression::Decompress => {
                input_compressed(meta).map_or(1, |c| c.level)
            }
        }
    }
}

/// The input's COMPRESSED feature.
fn input_compressed(meta: &Metadata) -> Option<&Compressed> {
    match meta.feature(FeatureId::Compressed)? {
        Feature::Compressed(c) => Some(c),
        _ => None,
    }
}

/// `opts` completed for the input `meta` describes: what `compat_perf_6_1` implies.
/// Without compat the options are returned as they are.
fn resolve(opts: &ConvertOptions, meta: &Metadata) -> ConvertOptions {
    let mut out = *opts;
    if !opts.compat_perf_6_1 {
        return out;
    }
    // perf 6.1 reads files well and pipe streams less so (no decompression, tracing
    // data trips `report --stats`), so compat writes a file unless told otherwise.
    if out.target.is_none() {
        out.target = Some(Target::File);
    }
    // perf 6.1 cannot decompress records in pipe mode at all (its buffer size comes
    // from a feature it only reads in file mode), so compat expands them there.
    if out.target_for(meta.container) == Target::Pipe && out.compression == Compression::Keep {
        out.compression = Compression::Decompress;
    }
    // perf 6.1 reads COMPRESSED only: kept compressed records are re-encoded as such
    // (which expands them on reading; COMPRESSED input comes out re-compressed).
    if out.compression == Compression::Keep && out.keep_format.is_none() {
        out.keep_format = Some(CompressFormat::Compressed);
    }
    out
}

/// Whether the reader must expand compressed records for the resolved `opts`.
fn expands(opts: &ConvertOptions, target: Target, meta: &Metadata) -> bool {
    let endian_change = opts.endian.is_some_and(|e| e != meta.endian);
    // A file made from a stream derives SAMPLE_TIME from every sample, those inside
    // compressed records too.
    let pipe_to_file = meta.container == ContainerKind::Pipe && target == Target::File;
    // A recording that never finished has no COMPRESSED feature to copy (perf writes
    // the features last): the records are compressed again, and described.
    !matches!(opts.compression, Compression::Keep)
        || endian_change
        || meta.container == ContainerKind::Directory
        || pipe_to_file
        || meta.unfinished
        || opts.keep_format.is_some()
}
