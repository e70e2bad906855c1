//! The library's tests run conversions into a writer they hold by value (a `Cursor`, a
//! `BufWriter` over a temp file) from a reader they opened: these run them through
//! [`Conversion`] and hand the writer back.

use std::fs::File;
use std::io::{Seek, Write};
use std::path::Path;

use perfdata_core::{PerfReader, ReadOptions};

use super::{Conversion, ConvertOptions, Input, Report, Sink, Target};
use crate::edit::RecordEdit;
use crate::error::{Result, WriteError};

/// `reader` converted into `out` as `target`, with `edits`; `file` is a handle of the
/// file `out` writes to, if any.
pub(crate) fn run_in<W: Write + Seek>(
    reader: PerfReader,
    target: Target,
    mut out: W,
    file: Option<File>,
    opts: &ConvertOptions,
    edits: Vec<Box<dyn RecordEdit>>,
) -> Result<(W, Report)> {
    let opts = ConvertOptions {
        target: Some(target),
        ..*opts
    };
    let report = Conversion::new(Input::from_reader(reader))
        .options(opts)
        .edits(edits)
        .write(Sink::seekable(&mut out, file))?;
    out.flush()
        .map_err(|e| WriteError::io("flushing the output", e))?;
    Ok((out, report))
}

/// [`run_in`] without a file handle.
pub(crate) fn run<W: Write + Seek>(
    reader: PerfReader,
    target: Target,
    out: W,
    opts: &ConvertOptions,
    edits: Vec<Box<dyn RecordEdit>>,
) -> Result<(W, Report)> {
    run_in(reader, target, out, None, opts, edits)
}

/// [`run_in`] without edits.
pub(crate) fn to_target_in<W: Write + Seek>(
    reader: PerfReader,
    target: Target,
    out: W,
    file: Option<File>,
    opts: &ConvertOptions,
) -> Result<(W, Report)> {
    run_in(reader, target, out, file, opts, Vec::new())
}

/// [`run_in`] without edits or file handle.
pub(crate) fn to_target<W: Write + Seek>(
    reader: PerfReader,
    target: Target,
    out: W,
    opts: &ConvertOptions,
) -> Result<(W, Report)> {
    run_in(reader, target, out, None, opts, Vec::new())
}

/// `path` opened as edits read it: the records inside compressed records.
pub(crate) fn open(path: impl AsRef<Path>) -> Result<PerfReader> {
    Ok(PerfReader::open_with(path, ReadOptions::Contents)?)
}
