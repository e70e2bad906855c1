//! What a conversion is asked to do ([`ConvertOptions`]) and the policy that completes
//! it from the input's metadata ([`ConvertOptions::resolve`]): the first stage of the
//! pipeline, before any record is read.

use binrw::Endian;
use perfdata_core::{ContainerKind, Metadata};

use crate::compress::CompressFormat;

/// The container to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Target {
    /// File mode: a header, attrs and feature sections around the data.
    File,
    /// Pipe mode: everything as records, written without seeking.
    Pipe,
}

/// What to do with compressed records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Compression {
    /// Keep what was compressed compressed, and nothing else.
    #[default]
    Keep,
    /// Compress the kernel's records (what `perf record -z` compresses).
    Compress {
        /// The zstd level (perf's -z takes 1 to 22).
        level: i32,
        /// The compressed record type written.
        format: CompressFormat,
    },
    /// Expand every compressed record and drop the COMPRESSED feature.
    Decompress,
}

/// Options of a conversion.
///
/// ```
/// use perfdata_write::convert::{self, Compression, ConvertOptions, Target};
///
/// // Compress a recording as `perf record -z` does (level 3).
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-cpu-clock.data");
/// let opts = ConvertOptions {
///     compression: Compression::Compress { level: 3, format: Default::default() },
///     ..ConvertOptions::default()
/// };
/// let (reader, opts) = convert::open_input(path.as_ref(), &opts)?;
/// let (out, report) = convert::to_target(reader, Target::File, std::io::Cursor::new(Vec::new()), &opts)?;
/// assert_eq!(report.records_in, 294);
/// assert!(out.into_inner().len() < std::fs::metadata(path)?.len() as usize);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConvertOptions {
    /// `None`: the input's container (a directory becomes a file).
    pub target: Option<Target>,
    /// What happens to compressed records.
    pub compression: Compression,
    /// `None`: the input's byte order.
    pub endian: Option<Endian>,
    /// Make a file perf 6.1 can open: attrs cut to 128 bytes (see
    /// [`output_attrs`](super::output_attrs)), simpleperf's in-data tracing record left
    /// to the TRACING_DATA feature. [`ConvertOptions::resolve`] says what else it implies.
    pub compat_perf_6_1: bool,
    /// Compressed records to write when keeping compression but rewriting records.
    pub keep_format: Option<CompressFormat>,
}

impl ConvertOptions {
    /// The container written for an input in `container`: `target`, else the input's
    /// (a directory becomes a file).
    pub fn target_for(&self, container: ContainerKind) -> Target {
        self.target.unwrap_or(match container {
            ContainerKind::Pipe => Target::Pipe,
            ContainerKind::File | ContainerKind::Directory => Target::File,
        })
    }

    /// The options completed for the input `meta` describes: what `compat_perf_6_1`
    /// implies is decided here, once, for every caller. Resolving resolved options
    /// changes nothing; without compat the options are returned as they are.
    pub fn resolve(&self, meta: &Metadata) -> ConvertOptions {
        let mut out = *self;
        if !self.compat_perf_6_1 {
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

    /// Whether the reader must expand compressed records for these (resolved) options.
    pub(super) fn expands(&self, meta: &Metadata) -> bool {
        let endian_change = self.endian.is_some_and(|e| e != meta.endian);
        // A file made from a stream derives SAMPLE_TIME from every sample, those inside
        // compressed records too.
        let pipe_to_file = meta.container == ContainerKind::Pipe
            && self.target_for(meta.container) == Target::File;
        // A recording that never finished has no COMPRESSED feature to copy (perf
        // writes the features last): the records are compressed again, and described.
        !matches!(self.compression, Compression::Keep)
            || endian_change
            || meta.container == ContainerKind::Directory
            || pipe_to_file
            || meta.unfinished
            || self.keep_format.is_some()
    }
}
