//! `perfdata info`: the header and every feature, as `perf report --header-only -I -i FILE`
//! of perf 6.1 prints them (see `perfdata_view::info`, which formats them).

use std::io::{self, Write};
use std::path::Path;

use perfdata_core::{ContainerKind, PerfReader};
use perfdata_view::info;

use crate::{print_warnings, CliError};

pub fn run(path: &Path, as_json: bool) -> Result<(), CliError> {
    let mut reader = PerfReader::open(path)?;
    // In pipe mode the metadata arrives as records: read the whole stream. In file mode
    // everything is in the header and its sections.
    let mut read_error = None;
    if reader.meta().container == ContainerKind::Pipe {
        loop {
            match reader.next_record() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    read_error = Some(e);
                    break;
                }
            }
        }
    }
    let meta = reader.meta();
    crate::verbose::describe_input(meta);
    print_warnings(meta);
    let captured_on = info::captured_on(path);
    let mut out = io::BufWriter::new(io::stdout().lock());
    if as_json {
        info::write_json(&mut out, meta, captured_on)?;
    } else {
        info::write_text(&mut out, meta, captured_on)?;
    }
    out.flush()?;
    // What was read is printed; a damaged stream still fails the command, as every
    // command does on bad input.
    match read_error {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}
