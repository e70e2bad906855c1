//! `perfdata report`: perf report's tables (the work is in perfdata-report).

use std::io::Write;
use std::path::PathBuf;

use perfdata_report::readperf::{self, Table};
use perfdata_report::symbolize::{self, SymbolOptions, Symbolizer};
use perfdata_report::table::{self, SortKey};
use perfdata_report::{replay, text};
use perfdata_write::output::AtomicOutput;

use crate::CliError;

#[derive(clap::Args)]
pub struct ReportArgs {
    #[command(flatten)]
    file: crate::input::Input,
    /// Sort keys, as perf's --sort: comm, pid, tid, dso, sym, cpu, event.
    #[arg(long, short = 's', default_value = "comm,dso,sym")]
    sort: String,
    /// Show the Samples column (perf's -n).
    #[arg(short = 'n', long = "show-nr-samples")]
    samples: bool,
    /// Text as perf report --stdio prints it (the default; accepted for perf's users).
    #[arg(long)]
    stdio: bool,
    /// Print JSON instead of text.
    #[arg(long, conflicts_with = "stdio")]
    json: bool,
    /// Look for binaries and debug files under this directory (perf's --symfs).
    #[arg(long)]
    symfs: Option<PathBuf>,
    /// Write readperf's tables (stat.csv, overview.csv, processes.csv, results.csv) into
    /// this directory, created if missing, instead of printing the report.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["json", "stdio"])]
    csv: Option<PathBuf>,
}

/// The input path (for the interrupt policy: a stream ends on the first SIGINT).
pub fn input_of(a: &ReportArgs) -> &std::path::Path {
    a.file.path()
}

pub fn run(a: &ReportArgs) -> Result<(), CliError> {
    let keys = SortKey::parse_list(&a.sort).map_err(CliError::Usage)?;
    let kallsyms = symbolize::kallsyms_in_background();
    // The tables count samples as they come; only the CSV tables keep them.
    let mut tally = table::Tally::new(&keys);
    let r = if a.csv.is_some() {
        replay::replay(a.file.path())?
    } else {
        replay::replay_each(a.file.path(), |_, s| tally.add(&s))?
    };
    let opts = SymbolOptions {
        symfs: a.symfs.clone(),
        kallsyms: r.kernel_is_running(),
        buildid_dir: None,
    };
    // A failed read (or thread) leaves the kernel without symbols, as a missing file does.
    let mut symbols = Symbolizer::new(opts).with_kallsyms(kallsyms.join().ok().flatten());
    if let Some(dir) = &a.csv {
        return write_csv(a.file.path(), dir, &r, &mut symbols);
    }
    let tables = tally.tables(&r, &mut symbols);
    let mut out = std::io::stdout().lock();
    if a.json {
        text::write_json(&mut out, &tables, &keys)?;
    } else {
        text::write_stdio(&mut out, &tables, &keys, a.samples)?;
    }
    out.flush()?;
    Ok(())
}

/// readperf's four tables of `input` into `dir`, each file written whole or not at all.
fn write_csv(
    input: &std::path::Path,
    dir: &std::path::Path,
    r: &replay::Replay,
    symbols: &mut Symbolizer,
) -> Result<(), CliError> {
    if input.as_os_str() == "-" {
        return Err(CliError::Usage(
            "--csv reads the recording twice: give a file, not standard input".into(),
        ));
    }
    let tables = readperf::tables(input, r, symbols)?;
    std::fs::create_dir_all(dir)?;
    for t in Table::ALL {
        let mut out = AtomicOutput::create(&dir.join(t.file_name()))?;
        {
            let mut w = out.writer();
            tables.write(t, &mut w)?;
            w.flush()?;
        }
        out.commit(None)?;
    }
    Ok(())
}
