//! Where a conversion writes ([`Sink`]): a file put in place atomically, a stream
//! (stdout, any writer, or an existing device or FIFO written in place), or any
//! seekable writer.
//!
//! A file-mode output is written with seeking (its header comes last): on a stream it
//! is built in an unnamed temp file first and copied into the stream when complete, so
//! the bytes are those the same conversion writes to a regular file.

use std::fs::File;
use std::io::{BufWriter, Seek, Write};
use std::path::{Path, PathBuf};

use super::{Report, Target};
use crate::error::{Result, WriteError};
use crate::output::{copy_to, AtomicOutput, ThreadedWriter};

/// A seekable output, as the file writer takes it.
pub trait WriteSeek: Write + Seek {}
impl<T: Write + Seek> WriteSeek for T {}

/// The writer a sink hands to what writes into it ([`Sink::write_with`]).
pub enum Writer<'a> {
    /// For a file-mode output: seekable, with a handle of the file written when there is
    /// one (for the kernel's copies of unchanged records).
    Seek(&'a mut dyn WriteSeek, Option<File>),
    /// For a pipe-mode output: a stream (a regular file's writer too).
    Stream(&'a mut dyn Write),
}

enum Kind<'a> {
    Path(AtomicOutput),
    Stdout,
    Seekable(&'a mut dyn WriteSeek, Option<File>),
    Stream(&'a mut dyn Write),
}

/// Where a conversion writes.
///
/// ```
/// use perfdata_write::convert::{Conversion, Input, Sink};
/// # let dir = tempfile::tempdir()?; let output = dir.path().join("out.data");
/// let input = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-cpu-clock.data");
/// // Created now: a directory or an unwritable place is refused before any work.
/// let sink = Sink::path(&output)?.keeping_times_of(input);
/// Conversion::new(Input::open(input)?).write(sink)?;
/// assert_eq!(std::fs::read(input)?, std::fs::read(&output)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Sink<'a> {
    kind: Kind<'a>,
    like: Option<PathBuf>,
}

impl<'a> Sink<'a> {
    /// The file at `path`, written to a temp file beside it and renamed into place
    /// only when the conversion succeeded ([`AtomicOutput`]); an existing output that
    /// is no regular file (a device, a FIFO) is written in place, never replaced.
    /// Made now, so that a directory or an unwritable place is refused before any work.
    pub fn path(path: impl AsRef<Path>) -> Result<Sink<'static>> {
        Ok(Sink {
            kind: Kind::Path(AtomicOutput::create(path.as_ref())?),
            like: None,
        })
    }

    /// The process's stdout.
    pub fn stdout() -> Sink<'static> {
        Sink {
            kind: Kind::Stdout,
            like: None,
        }
    }

    /// A writer that may seek; `file`, when given, is a handle of the file it writes
    /// to (`File::try_clone`): runs of records copied unchanged from an input file are
    /// then copied by the kernel (`copy_file_range`). The bytes are the same either way.
    pub fn seekable(out: &'a mut dyn WriteSeek, file: Option<File>) -> Self {
        Sink {
            kind: Kind::Seekable(out, file),
            like: None,
        }
    }

    /// A writer that cannot seek.
    pub fn stream(out: &'a mut dyn Write) -> Self {
        Sink {
            kind: Kind::Stream(out),
            like: None,
        }
    }

    /// A file put in place gets the modification time of `like` when it is a regular
    /// file (perf shows the time as "captured on"). Its permissions are those of the
    /// file it replaces, or 0600 for a new one, as perf writes its recordings (they
    /// hold paths and command lines): see [`AtomicOutput::commit`].
    pub fn keeping_times_of(mut self, like: impl AsRef<Path>) -> Self {
        let like = like.as_ref();
        // `-` is stdin, even where a file named "-" exists.
        self.like = Some(like.to_path_buf()).filter(|p| p.as_os_str() != "-" && p.is_file());
        self
    }

    /// Run `convert` on the writer this sink gives for `target`, then finish the
    /// output (flush, copy a spool, put a file in place). Errors name the target, never
    /// the temp file; the report says the bytes written when they are known.
    pub(super) fn run(
        self,
        target: Target,
        convert: impl FnOnce(Writer<'_>) -> Result<Report>,
    ) -> Result<Report> {
        let (mut report, bytes) = self.write_with(target, convert)?;
        report.bytes_written = bytes.or(report.bytes_written);
        Ok(report)
    }

    /// Run `write` on the writer this sink gives for `target`, then finish the output
    /// (flush, copy a spool, put a file in place). The writer is [`Writer::Seek`] for a
    /// file-mode target (on a stream, spooled in a temp file and copied on success) and
    /// [`Writer::Stream`] for a pipe-mode one, whatever the sink (a regular file too),
    /// so `write` needs only the writer to know the mode. Errors name
    /// the target, never the temp file. Returns what `write` returned and the bytes of
    /// a file or spool written, where known. What a conversion writes through; also for
    /// other writers of recordings (`perfdata synth`'s).
    pub fn write_with<R>(
        self,
        target: Target,
        write: impl FnOnce(Writer<'_>) -> Result<R>,
    ) -> Result<(R, Option<u64>)> {
        let flushed = |e| WriteError::io("writing the output", e);
        match self.kind {
            Kind::Path(mut out) => {
                if out.is_stream() && target == Target::Pipe {
                    let value = {
                        let mut w = out.writer();
                        write(Writer::Stream(&mut w))
                            .and_then(|value| w.flush().map(|_| value).map_err(flushed))
                    };
                    let value = value.map_err(|e| out.name_error(e))?;
                    out.commit(None)?;
                    return Ok((value, None));
                }
                // A file, or a node's spool (copied into it on commit).
                let written = {
                    let mut w = out
                        .threaded_writer()
                        .map_err(|e| WriteError::io("creating the output", e))?;
                    let file = w.file().try_clone().ok();
                    let writer = match target {
                        Target::File => Writer::Seek(&mut w, file),
                        Target::Pipe => Writer::Stream(&mut w),
                    };
                    write(writer).and_then(|value| {
                        w.flush().map_err(flushed)?;
                        Ok((value, w.file().metadata().map(|m| m.len()).ok()))
                    })
                };
                let written = written.map_err(|e| out.name_error(e))?;
                out.commit(self.like.as_deref())?;
                Ok(written)
            }
            Kind::Stdout => {
                let mut out = std::io::stdout().lock();
                if target == Target::Pipe {
                    let mut w = BufWriter::with_capacity(1 << 20, out);
                    let value = write(Writer::Stream(&mut w))?;
                    w.flush().map_err(flushed)?;
                    return Ok((value, None));
                }
                spooled(&mut out, write)
            }
            Kind::Seekable(w, file) if target == Target::File => {
                Ok((write(Writer::Seek(w, file))?, None))
            }
            Kind::Seekable(w, _) => Ok((write(Writer::Stream(w))?, None)),
            Kind::Stream(w) if target == Target::Pipe => Ok((write(Writer::Stream(w))?, None)),
            Kind::Stream(w) => spooled(w, write),
        }
    }
}

/// A file-mode output for a stream: built in an unnamed temp file, then copied.
fn spooled<R>(
    out: &mut dyn Write,
    write: impl FnOnce(Writer<'_>) -> Result<R>,
) -> Result<(R, Option<u64>)> {
    let mut tmp: File = tempfile::tempfile().map_err(|e| WriteError::io("creating a spool", e))?;
    let value = {
        let mut w = ThreadedWriter::new(&tmp).map_err(|e| WriteError::io("creating a spool", e))?;
        let file = w.file().try_clone().ok();
        let value = write(Writer::Seek(&mut w, file))?;
        w.flush()
            .map_err(|e| WriteError::io("writing the output", e))?;
        value
    };
    let bytes = tmp.metadata().map(|m| m.len()).ok();
    copy_to(&mut tmp, out)?;
    Ok((value, bytes))
}
