//! `perfdata convert`: read a recording and write it again, changing its container (file,
//! pipe), its compression or its byte order on the way, one record at a time.
//!
//! A conversion runs one way, each stage a module:
//!
//! 1. [`options`](ConvertOptions): what was asked, completed from the input's metadata
//!    into a [`Plan`] (what `compat_perf_6_1` implies; the container, byte order,
//!    compression level, record type and buffer size written), which later stages read.
//! 2. [`Source`]: the input's records ([`Input`]: a file, a directory whose streams
//!    `merge` merges by time, stdin; [`TreeSource`]: an owned tree).
//! 3. `stage`: the record stage: the edits of [`crate::edit`] (keep, drop, replace), the
//!    byte order, compression, and the writer (file or pipe); it notes what went
//!    by in an `Observed` summary (sample times, STAT and AUXTRACE records, the
//!    compressor's state).
//! 4. `features`: the output's features derived from the input's metadata and that
//!    summary, and the header written last.
//! 5. [`Sink`]: where the bytes go (a file put in place atomically, a stream, a
//!    writer).
//!
//! [`Conversion`] runs them, the one way to run a conversion (with or without edits):
//!
//! ```
//! use perfdata_write::convert::{Compression, Conversion, ConvertOptions, Input, Sink};
//!
//! // Compress a recording as `perf record -z` does (level 3), into memory.
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-cpu-clock.data");
//! let opts = ConvertOptions {
//!     compression: Compression::Compress { level: 3, format: Default::default() },
//!     ..ConvertOptions::default()
//! };
//! let mut out = std::io::Cursor::new(Vec::new());
//! let report = Conversion::new(Input::open(path)?)
//!     .options(opts)
//!     .write(Sink::seekable(&mut out, None))?;
//! assert_eq!(report.records_in, 294);
//! assert!(out.into_inner().len() < std::fs::metadata(path)?.len() as usize);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Records are copied as bytes unless a transformation needs them decoded (byte order)
//! or expanded (compression changes, directory merging). Metadata records of a pipe
//! stream become header sections of a file and the other way round.

mod features;
mod merge;
mod observed;
mod options;
mod pipeline;
mod plan;
mod sink;
mod source;
mod stage;
mod stream_features;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
mod tree;
mod verify;
mod writer_sink;

use perfdata_core::Metadata;

use crate::cancel::Cancel;
use crate::edit::{EditStage, EditSummary, RecordEdit};
use crate::error::Result;

pub use features::{output_attrs, FeatureEdits};
pub use options::{Compression, ConvertOptions, Target};
pub use plan::{CompressorPlan, Plan};
pub use sink::{Sink, WriteSeek, Writer as SinkWriter};
pub(crate) use source::read_metadata_ahead;
pub use source::{Input, Needs, Source, TreeSource};

/// What a conversion did.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Records read.
    pub records_in: u64,
    /// Records written (compressed records counted as the records they hold).
    pub records_out: u64,
    /// The reader's warnings, then the conversion's own.
    pub warnings: Vec<String>,
    /// What the record edits did, when the conversion ran any (see [`crate::edit`]).
    pub edits: Option<EditSummary>,
    /// Bytes of unchanged records the kernel copied from the input file to the output
    /// (see [`Sink::seekable`]); the rest went through memory.
    pub bytes_copied: u64,
    /// Bytes of the file-mode output, when the sink knows them (a file put in place, a
    /// file-mode output copied into a stream).
    pub bytes_written: Option<u64>,
}

impl Report {
    /// The report of a finished conversion: the stage's report, then the reader's
    /// warnings, then those of the feature derivation.
    fn finish(mut self, meta: &Metadata, warnings: Vec<String>) -> Report {
        self.warnings
            .extend(meta.warnings.iter().map(|w| w.to_string()));
        self.warnings.extend(warnings);
        self
    }
}

/// A conversion: a [`Source`] read once, its records through the edits (if any) and
/// the changes of container, byte order and compression its [`ConvertOptions`] ask
/// for, into a [`Sink`]. The one way to run `perfdata convert`, `strip`, `anonymize`
/// and `buildid`, and to write a tree back ([`TreeSource`]).
pub struct Conversion<S: Source> {
    source: S,
    edits: Vec<Box<dyn RecordEdit>>,
    options: ConvertOptions,
    cancel: Option<Cancel>,
}

impl<S: Source> Conversion<S> {
    /// Convert `source` as it is (same container, compression and byte order).
    pub fn new(source: S) -> Self {
        Conversion {
            source,
            edits: Vec::new(),
            options: ConvertOptions::default(),
            cancel: None,
        }
    }

    /// Add an edit; edits run in the order they were added, each seeing the records as
    /// the previous one left them. With edits, compressed records are expanded so that
    /// each edit sees every record once (and compressed again as they were).
    pub fn edit(mut self, edit: impl RecordEdit + 'static) -> Self {
        self.edits.push(Box::new(edit));
        self
    }

    /// Add edits already boxed, in order (see [`Conversion::edit`]).
    pub fn edits(mut self, edits: impl IntoIterator<Item = Box<dyn RecordEdit>>) -> Self {
        self.edits.extend(edits);
        self
    }

    /// Convert as `options` say (container, compression, byte order, compat).
    pub fn options(mut self, options: ConvertOptions) -> Self {
        self.options = options;
        self
    }

    /// Stop (with [`crate::WriteError::Cancelled`], leaving no output) once `cancel`
    /// is set.
    pub fn cancel(mut self, cancel: Cancel) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// The plan of this conversion: its options resolved for the source's metadata.
    pub fn plan(&self) -> Plan {
        Plan::new(&self.options, self.source.meta())
    }

    /// The source, as [`Conversion::prepare`] left it.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// Make the source ready for this conversion ([`Source::prepare`]): done by
    /// [`Conversion::write`], and before it by a caller that watches the source (its
    /// progress) as the conversion will read it.
    pub fn prepare(&mut self) -> Result<()> {
        let plan = self.plan();
        // Edits in perf's time order see a directory's streams merged by time, as a
        // file output has them, and write them so.
        let needs = Needs {
            contents: plan.expands() || !self.edits.is_empty(),
            time_order: plan.target() == Target::File
                || self.edits.iter().any(|e| e.time_ordered()),
        };
        self.source.prepare(needs)
    }

    /// Run the conversion into `sink`. A file put in place appears only when every
    /// record was written and every edit finished without error.
    pub fn write(mut self, sink: Sink<'_>) -> Result<Report> {
        if let Some(tree) = self.source.tree() {
            if !self.edits.is_empty() {
                return Err(crate::WriteError::unsupported(
                    None,
                    "edits of a tree are made on the tree: write it without record edits",
                ));
            }
            return tree::write(tree, &self.options, sink, self.cancel.as_ref());
        }
        self.prepare()?;
        let plan = self.plan();
        let edit = (!self.edits.is_empty()).then(|| EditStage::new(self.edits));
        let source = &mut self.source;
        let cancel = self.cancel.as_ref();
        sink.run(plan.target(), |out| match out {
            sink::Writer::Seek(w, file) => {
                pipeline::to_file(source, &plan, w, file, edit, cancel).map(|(_, report)| report)
            }
            sink::Writer::Stream(w) => {
                pipeline::to_pipe(source, &plan, w, edit, cancel).map(|(_, report)| report)
            }
        })
    }
}
