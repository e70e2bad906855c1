//! `perfdata dump`: every record, one per line, with its file offset.
//!
//! Text lines are `OFFSET TYPE key=value ...`; with `--json` each line is one JSON object
//! (JSON Lines). The formatting is `perfdata_view::dump`.

use std::path::Path;

use perfdata_core::select::{parse_record_types, RecordFilter};
use perfdata_core::{PerfReader, ReadOptions};
use perfdata_view::dump;

use crate::progress::Progress;
use crate::strip::SelectorArgs;
use crate::{print_warnings, CliError};

pub fn run(
    path: &Path,
    as_json: bool,
    decompress: bool,
    select: &SelectorArgs,
    types: Option<&str>,
) -> Result<(), CliError> {
    let types = types.map(parse_record_types).transpose()?;
    let mut filter = RecordFilter::new(select.selectors()?, types.unwrap_or_default());
    let opts = if decompress {
        ReadOptions::ContainersAndContents
    } else {
        ReadOptions::Containers
    };
    let mut reader = PerfReader::open_with(path, opts)?;
    filter.start(reader.meta())?;
    let all = filter.shows_all();
    let stdout = std::io::stdout();
    // DumpWriter gathers its lines into large writes itself.
    let mut out = stdout.lock();
    let mut result = Ok(());
    let mut writer = dump::DumpWriter::new(as_json);
    let mut progress = Progress::for_input(path);
    loop {
        let item = match reader.next_record() {
            Ok(Some(item)) => item,
            Ok(None) => break,
            Err(e) => {
                result = Err(e);
                break;
            }
        };
        progress.set(item.raw.offset + item.raw.bytes.len() as u64);
        if all {
            writer.write(&mut out, &item)?;
        } else {
            filter.feed(&item, &mut |shown| writer.write(&mut out, shown))?;
        }
    }
    // Records still waiting for perf's order (a comm selector), at the end.
    filter.finish(reader.meta(), &mut |shown| writer.write(&mut out, shown))?;
    writer.flush(&mut out)?;
    drop(out);
    drop(progress);
    print_warnings(reader.meta());
    Ok(result?)
}
