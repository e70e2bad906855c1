//! `perfdata dump`: every record, one per line, with its file offset.
//!
//! Text lines are `OFFSET TYPE key=value ...`; with `--json` each line is one JSON object
//! (JSON Lines). The formatting is `perfdata_core::dump`.

use std::io::{BufWriter, Write};
use std::path::Path;

use perfdata_core::{dump, PerfReader, ReadOptions};

use crate::{print_warnings, CliError};

pub fn run(path: &Path, as_json: bool, decompress: bool) -> Result<(), CliError> {
    let opts = if decompress {
        ReadOptions::ContainersAndContents
    } else {
        ReadOptions::Containers
    };
    let mut reader = PerfReader::open_with(path, opts)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut result = Ok(());
    loop {
        let item = match reader.next_record() {
            Ok(Some(item)) => item,
            Ok(None) => break,
            Err(e) => {
                result = Err(e);
                break;
            }
        };
        let record = dump::record_value(&item)?;
        if as_json {
            dump::write_json(&mut out, &record)?;
        } else {
            dump::write_text(&mut out, &record)?;
        }
    }
    out.flush()?;
    drop(out);
    print_warnings(reader.meta());
    Ok(result?)
}
