//! `perfdata export`: a recording in another profiler's format (the work is in
//! perfdata-report).

use std::io::Write;
use std::path::PathBuf;

use perfdata_report::stacks::Stacks;
use perfdata_report::symbolize::{SymbolOptions, Symbolizer};
use perfdata_report::{firefox, flamegraph, folded, pprof, replay, speedscope};
use perfdata_write::output::AtomicOutput;

use crate::CliError;

/// The formats `export` writes.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// `comm;outer;...;leaf count` lines (flame graph input).
    Folded,
    /// pprof's profile.proto, gzipped (`go tool pprof`).
    Pprof,
    /// speedscope's JSON file format.
    Speedscope,
    /// The Firefox Profiler's processed format (JSON).
    Firefox,
    /// An SVG flame graph.
    Flamegraph,
}

#[derive(clap::Args)]
pub struct ExportArgs {
    #[command(flatten)]
    file: crate::input::Input,
    /// The output format.
    #[arg(long, value_enum)]
    format: Format,
    /// The output file (written to a temporary file, renamed into place when complete),
    /// or `-` for standard output.
    #[arg(short, long)]
    output: PathBuf,
    /// Look for binaries and debug files under this directory (perf's --symfs).
    #[arg(long)]
    symfs: Option<PathBuf>,
    /// Show functions inlined at each address (DWARF) as frames of their own, and in
    /// pprof as extra lines of the address's location (perf's --inline).
    #[arg(long)]
    inline: bool,
}

/// The input path (for the interrupt policy: a stream ends on the first SIGINT).
pub fn input_of(a: &ExportArgs) -> &std::path::Path {
    a.file.path()
}

pub fn run(a: &ExportArgs) -> Result<(), CliError> {
    let reader = perfdata_core::PerfReader::open(a.file.path())?;
    let r = {
        let _progress = crate::progress::Progress::watch(a.file.path(), reader.progress());
        replay::replay_all(reader)?
    };
    let opts = SymbolOptions {
        symfs: a.symfs.clone(),
        kallsyms: r.kernel_is_running(),
        buildid_dir: None,
    };
    let stacks = Stacks::with_inlines(&r, &mut Symbolizer::new(opts), a.inline);
    let title = a.file.path().display().to_string();
    let dsos = &r.machine.dsos;
    let write = |w: &mut dyn Write| -> Result<(), CliError> {
        match a.format {
            Format::Folded => folded::write_folded(w, &folded::folded(&stacks))?,
            Format::Pprof => pprof::write_pprof(w, &stacks, dsos)?,
            Format::Speedscope => speedscope::write_speedscope(w, &stacks, dsos, &title)?,
            Format::Firefox => firefox::write_firefox(w, &stacks, &title)?,
            Format::Flamegraph => flamegraph::write_flamegraph(w, &stacks, &title)?,
        }
        w.flush()?;
        Ok(())
    };
    // `-o -`: standard output, as convert and report take it (not a file named "-").
    if a.output.as_os_str() == "-" {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
        return write(&mut w);
    }
    let mut out = AtomicOutput::create(&a.output)?;
    write(&mut out.writer())?;
    out.commit(None)?;
    Ok(())
}
