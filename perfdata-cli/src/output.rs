//! Where a rewriting command's output goes: the library's [`Sink`] for a path (a file
//! written beside the target and renamed into place when everything succeeded, or an
//! existing device or FIFO written in place) or for `-`, stdout.
//!
//! The output is created before the input is read, so that a directory or an unwritable
//! place is refused before any work.

use std::path::Path;

use perfdata_core::ReadOptions;
use perfdata_write::convert::{Compression, ConvertOptions, Report};
use perfdata_write::edit::RecordEdit;
use perfdata_write::{Conversion, Input, Sink};

use crate::CliError;

/// The sink of `output` (a path or `-`), made now; a file output keeps `input`'s mtime
/// and permissions (perf shows the mtime as "captured on"), or gets 0600 when the input
/// is no regular file (stdin, a directory), as perf writes its recordings.
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
/// is compressed again unless `decompress`.
pub fn run_edits(
    input: &Path,
    output: &Path,
    decompress: bool,
    edits: Vec<Box<dyn RecordEdit>>,
) -> Result<Report, CliError> {
    if output.as_os_str() != "-" && same_file(input, output) {
        return Err(CliError::Usage(format!(
            "the output {} is the input",
            output.display()
        )));
    }
    let sink = sink(output, input)?;
    // Edits see the records inside compressed records: opened so at once.
    let source = Input::open_with(input, ReadOptions::Contents)?;
    let opts = ConvertOptions {
        compression: if decompress {
            Compression::Decompress
        } else {
            Compression::Keep
        },
        ..Default::default()
    };
    run(
        input,
        Conversion::new(source).options(opts).edits(edits),
        sink,
    )
}

/// Whether writing `output` would replace the recording read from `input`: the same
/// file (device and inode) however it is named, through links, or as stdin (`-`,
/// `perfdata anonymize - -o x.data < x.data`).
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
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}
