//! What a conversion is asked to do ([`ConvertOptions`]); [`super::Plan`] completes it
//! from the input's metadata before any record is read.

use binrw::Endian;
use perfdata_core::ContainerKind;

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

/// Options of a conversion (see [`Conversion::options`](super::Conversion::options)).
///
/// ```
/// use perfdata_write::convert::{Compression, ConvertOptions, Target};
///
/// // A pipe-mode stream, compressed as `perf record -z` does (level 3).
/// let opts = ConvertOptions {
///     target: Some(Target::Pipe),
///     compression: Compression::Compress { level: 3, format: Default::default() },
///     ..ConvertOptions::default()
/// };
/// assert_eq!(opts.endian, None); // the input's byte order
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
    /// to the TRACING_DATA feature. [`Plan::new`](super::Plan::new) says what else it
    /// implies.
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
}
