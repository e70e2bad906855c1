//! Where a rewriting command's output goes: a file (written beside the target and renamed
//! into place when everything succeeded) or stdout (a pipe stream as it is made; a file
//! built in a temp file first, since its header is written last).

use std::fs::File;
use std::io::{BufWriter, Seek, Write};
use std::path::Path;

use perfdata_write::convert::{Report, Target};
use perfdata_write::output::{copy_to, AtomicOutput};

use crate::CliError;

/// A seekable output, as the file writers take it.
pub trait WriteSeek: Write + Seek {}
impl<T: Write + Seek> WriteSeek for T {}

/// The writer handed to a command's conversion.
pub enum Out<'a> {
    /// Seekable: any target.
    Seek(&'a mut dyn WriteSeek),
    /// stdout with a pipe target.
    Stream(&'a mut dyn Write),
}

/// Write `output` (a path or `-`) with `convert`; returns the report and the bytes
/// written. A file output keeps `input`'s mtime and permissions (perf shows the mtime
/// as "captured on").
pub fn write(
    input: &Path,
    output: &Path,
    target: Target,
    convert: impl FnOnce(Out<'_>) -> Result<Report, CliError>,
) -> Result<(Report, Option<u64>), CliError> {
    if output.as_os_str() != "-" {
        let mut out = AtomicOutput::create(output)?;
        let report = {
            let mut w = out.writer();
            let report = convert(Out::Seek(&mut w))?;
            w.flush()?;
            report
        };
        out.commit(Some(input).filter(|p| p.is_file()))?;
        let len = std::fs::metadata(output).map(|m| m.len()).ok();
        return Ok((report, len));
    }
    if target == Target::Pipe {
        let mut w = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
        let report = convert(Out::Stream(&mut w))?;
        w.flush()?;
        return Ok((report, None));
    }
    let mut tmp: File = tempfile::tempfile()?;
    let report = {
        let mut w = BufWriter::with_capacity(1 << 20, &mut tmp);
        let report = convert(Out::Seek(&mut w))?;
        w.flush()?;
        report
    };
    let len = tmp.metadata().map(|m| m.len()).ok();
    copy_to(&mut tmp, &mut std::io::stdout().lock())?;
    Ok((report, len))
}
