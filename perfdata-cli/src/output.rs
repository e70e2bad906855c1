//! Where a rewriting command's output goes: the library's [`Sink`] for a path (a file
//! written beside the target and renamed into place when everything succeeded, or an
//! existing device or FIFO written in place) or for `-`, stdout.
//!
//! The output is created before the input is read, so that a directory or an unwritable
//! place is refused before any work.

use std::path::Path;

use perfdata_core::ReadOptions;
use perfdata_write::convert::{Compression, ConvertOptions, Report, Target};
use perfdata_write::edit::RecordEdit;
use perfdata_write::{Conversion, Input, Sink};

use crate::CliError;

/// The sink of `output` (a path or `-`), made now; a file output keeps `input`'s mtime
/// (perf shows it as "captured on"), and the permissions of the file it replaces, or
/// 0600 when new, as perf writes its recordings.
pub fn sink(output: &Path, input: &Path) -> Result<Sink<'static>, CliError> {
    Ok(if output.as_os_str() == "-" {
        Sink::stdout()
    } else {
        Sink::path(output)?.keeping_times_of(input)
    })
}

/// Run `conversion` into `sink` with the command's interrupt flag and a progress bar
/// of its source.
pub fn run(
    input: &Path,
    conversion: Conversion<Input>,
    sink: Sink<'_>,
) -> Result<Report, CliError> {
    let mut conversion = conversion.cancel(crate::interrupt::cancel());
    conversion.prepare()?;
    let _progress = crate::progress::Progress::watch(input, conversion.source().progress());
    Ok(conversion.write(sink)?)
}

/// Run `edits` over `input` into `output` (a path or `-`), as the edit commands do:
/// an output that is the input is refused, the output is created before the input is
/// read (a directory or unwritable place is refused before any work), compressed input
/// is compressed again unless `decompress`, and `-` is written as a pipe-mode stream.
pub fn run_edits(
    input: &Path,
    output: &Path,
    decompress: bool,
    edits: Vec<Box<dyn RecordEdit>>,
) -> Result<Report, CliError> {
    refuse_same(input, output, "")?;
    let sink = sink(output, input)?;
    // Edits see the records inside compressed records: opened so at once.
    let source = Input::open_with(input, ReadOptions::Contents)?;
    let opts = ConvertOptions {
        compression: if decompress {
            Compression::Decompress
        } else {
            Compression::Keep
        },
        // `-o -` is a pipe-mode stream, as `perf inject -o -` writes it: what `perf
        // report -i -` reads (a file-mode header cannot be read from a pipe).
        target: (output.as_os_str() == "-").then_some(Target::Pipe),
        ..Default::default()
    };
    run(
        input,
        Conversion::new(source).options(opts).edits(edits),
        sink,
    )
}

/// Refuse an `output` (not `-`) that would replace `input` ([`same_file`]), before
/// anything is written; `hint` ends the message (how to allow it, if anything may).
pub fn refuse_same(input: &Path, output: &Path, hint: &str) -> Result<(), CliError> {
    if output.as_os_str() != "-" && same_file(input, output) {
        return Err(CliError::Usage(format!(
            "the output {} is the input{hint}",
            output.display()
        )));
    }
    Ok(())
}

/// Whether writing `output` would replace the recording read from `input`: the same
/// regular file (device and inode) however it is named, through links, or as stdin
/// (`-`, `perfdata anonymize - -o x.data < x.data`). A device or FIFO output is written
/// in place, never replaced: `perfdata export - -o /dev/null < /dev/null` may run.
pub fn same_file(input: &Path, output: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let input = if input.as_os_str() == "-" {
        use std::os::fd::AsFd;
        std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .and_then(|fd| std::fs::File::from(fd).metadata())
    } else {
        std::fs::metadata(input)
    };
    match (input, std::fs::metadata(output)) {
        (Ok(a), Ok(b)) => b.is_file() && (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}
