//! Where a rewriting command's output goes: a file (written beside the target and renamed
//! into place when everything succeeded) or a stream: stdout, or an existing output that
//! is no regular file (a device, a FIFO, `/dev/stdout` on a pipe), written in place and
//! never replaced. A stream gets a pipe-mode output as it is made; a file-mode one is
//! built in an unnamed temp file first (its header is written last, which needs
//! seeking) and copied into the stream when complete, as `-o -` always did: the bytes
//! are those the same command writes to a regular file.
//!
//! The output is created before the input is read, so that a directory or an unwritable
//! place is refused before any work.

use std::fs::File;
use std::io::{BufWriter, Seek, Write};
use std::path::Path;

use perfdata_write::convert::{Report, Target};
use perfdata_write::output::{copy_to, AtomicOutput, ThreadedWriter};

use crate::CliError;

/// A seekable output, as the file writers take it.
pub trait WriteSeek: Write + Seek {}
impl<T: Write + Seek> WriteSeek for T {}

/// The writer handed to a command's conversion.
pub enum Out<'a> {
    /// Seekable: any target; with a handle of the file written (for the kernel's copies
    /// of unchanged records, `convert::to_target_in`).
    Seek(&'a mut dyn WriteSeek, Option<File>),
    /// stdout with a pipe target.
    Stream(&'a mut dyn Write),
}

/// An output opened for a command: a file, or stdout for `-`.
pub struct Output(Option<AtomicOutput>);

impl Output {
    /// Open `output` (a path or `-`): a file output's temp file is made now.
    pub fn create(output: &Path) -> Result<Self, CliError> {
        Ok(Output(if output.as_os_str() == "-" {
            None
        } else {
            Some(AtomicOutput::create(output)?)
        }))
    }

    /// Write the output with `convert`; returns the report and the bytes written. A file
    /// output keeps `input`'s mtime and permissions (perf shows the mtime as "captured
    /// on"), or gets 0600 when the input is no regular file (stdin, a directory), as perf
    /// writes its recordings. Errors name the target, never the temp file.
    pub fn write(
        self,
        input: &Path,
        target: Target,
        convert: impl FnOnce(Out<'_>) -> Result<Report, CliError>,
    ) -> Result<(Report, Option<u64>), CliError> {
        if let Some(mut out) = self.0 {
            if out.is_stream() && target == Target::Pipe {
                let report = {
                    let mut w = out.writer();
                    convert(Out::Stream(&mut w)).and_then(|report| {
                        w.flush()?;
                        Ok(report)
                    })
                };
                let report = report.map_err(|e| name_error(&out, e))?;
                out.commit(None)?;
                return Ok((report, None));
            }
            // A file, or a node's spool (copied into it on commit).
            let written = {
                let mut w = out.threaded_writer()?;
                let file = w.file().try_clone().ok();
                convert(Out::Seek(&mut w, file)).and_then(|report| {
                    w.flush()
                        .map_err(|e| perfdata_write::WriteError::io("writing the output", e))?;
                    Ok((report, w.file().metadata().map(|m| m.len()).ok()))
                })
            };
            let (report, len) = written.map_err(|e| name_error(&out, e))?;
            // `-` is stdin, even where a file named "-" exists.
            out.commit(Some(input).filter(|p| p.as_os_str() != "-" && p.is_file()))?;
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
            let mut w = ThreadedWriter::new(&tmp)?;
            let file = w.file().try_clone().ok();
            let report = convert(Out::Seek(&mut w, file))?;
            w.flush()?;
            report
        };
        let len = tmp.metadata().map(|m| m.len()).ok();
        copy_to(&mut tmp, &mut std::io::stdout().lock())?;
        Ok((report, len))
    }
}

/// Run `edits` over `input` into `output` (a path or `-`), as the edit commands do:
/// an output that is the input is refused, the output is created before the input is
/// read (a directory or unwritable place is refused before any work), compressed input
/// is compressed again unless `decompress`. Returns the report and the bytes written.
pub fn run_edits(
    input: &Path,
    output: &Path,
    decompress: bool,
    edits: Vec<Box<dyn perfdata_write::edit::RecordEdit>>,
) -> Result<(Report, Option<u64>), CliError> {
    use perfdata_write::convert::{Compression, ConvertOptions};
    use perfdata_write::edit;
    if output.as_os_str() != "-" && crate::convert::same_file(input, output) {
        return Err(CliError::Usage(format!(
            "the output {} is the input",
            output.display()
        )));
    }
    let out = Output::create(output)?;
    let reader = edit::open(input)?;
    let _progress = crate::progress::Progress::watch(input, reader.progress());
    let opts = ConvertOptions {
        compression: if decompress {
            Compression::Decompress
        } else {
            Compression::Keep
        },
        ..Default::default()
    };
    let target = opts.target_for(reader.meta().container);
    out.write(input, target, |out| {
        Ok(match out {
            Out::Seek(w, file) => edit::run_in(reader, target, w, file, &opts, edits)?.1,
            Out::Stream(w) => edit::run_to_pipe(reader, w, &opts, edits)?.1,
        })
    })
}

/// A write failure names the target the user gave, not the temp file behind it.
fn name_error(out: &AtomicOutput, e: CliError) -> CliError {
    match e {
        CliError::Write(w) => CliError::Write(out.name_error(w)),
        // EPIPE stays what it is: the reader of a pipe went away, which is no failure.
        CliError::Output(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            CliError::Write(out.name_error(perfdata_write::WriteError::io("writing", e)))
        }
        other => other,
    }
}
