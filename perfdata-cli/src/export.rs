//! `perfdata export`: a recording in another profiler's format (the work is in
//! perfdata-report).

use std::io::Write;
use std::path::PathBuf;

use perfdata_report::symbolize::{SymbolOptions, Symbolizer};
use perfdata_report::{folded, replay};
use perfdata_write::output::AtomicOutput;

use crate::CliError;

/// The formats `export` writes.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// `comm;outer;...;leaf count` lines (flame graph input).
    Folded,
}

#[derive(clap::Args)]
pub struct ExportArgs {
    #[command(flatten)]
    file: crate::input::Input,
    /// The output format.
    #[arg(long, value_enum)]
    format: Format,
    /// The output file (written to a temporary file, renamed into place when complete).
    #[arg(short, long)]
    output: PathBuf,
    /// Look for binaries and debug files under this directory (perf's --symfs).
    #[arg(long)]
    symfs: Option<PathBuf>,
}

/// The input path (for the interrupt policy: a stream ends on the first SIGINT).
pub fn input_of(a: &ExportArgs) -> &std::path::Path {
    a.file.path()
}

pub fn run(a: &ExportArgs) -> Result<(), CliError> {
    let r = replay::replay(a.file.path())?;
    let opts = SymbolOptions {
        symfs: a.symfs.clone(),
        kallsyms: r.kernel_is_running(),
        buildid_dir: None,
    };
    let mut symbols = Symbolizer::new(opts);
    let mut out = AtomicOutput::create(&a.output)?;
    {
        let mut w = out.writer();
        match a.format {
            Format::Folded => folded::write_folded(&mut w, &folded::folded(&r, &mut symbols))?,
        }
        w.flush()?;
    }
    out.commit(None)?;
    Ok(())
}
