//! `perfdata export`: a recording in another profiler's format (the work is in
//! perfdata-report).

use std::io::Write;
use std::path::PathBuf;

use perfdata_report::stacks::{Detail, StackCollector};
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
    #[command(flatten)]
    unwind: crate::unwinding::UnwindArgs,
}

/// `perfdata flamegraph`: `export --format flamegraph` with perf's habits (an output
/// named by default, one event picked).
#[derive(clap::Args)]
pub struct FlamegraphArgs {
    #[command(flatten)]
    file: crate::input::Input,
    /// The SVG file written (a temporary file renamed into place when complete), or `-`
    /// for standard output.
    #[arg(short, long, default_value = "flamegraph.svg")]
    output: PathBuf,
    /// Draw only this event's samples (as `perf script` names it); without it, every
    /// event with samples is a root of its own in one graph.
    #[arg(short, long)]
    event: Option<String>,
    /// Look for binaries and debug files under this directory (perf's --symfs).
    #[arg(long)]
    symfs: Option<PathBuf>,
    /// Show functions inlined at each address (DWARF) as frames of their own.
    #[arg(long)]
    inline: bool,
    #[command(flatten)]
    unwind: crate::unwinding::UnwindArgs,
}

/// The input path (for the interrupt policy: a stream ends on the first SIGINT).
pub fn input_of(a: &ExportArgs) -> &std::path::Path {
    a.file.path()
}

/// The input path of `perfdata flamegraph`.
pub fn flamegraph_input_of(a: &FlamegraphArgs) -> &std::path::Path {
    a.file.path()
}

/// `perfdata export`.
pub fn run(a: &ExportArgs) -> Result<(), CliError> {
    let job = Job {
        input: a.file.path(),
        format: a.format,
        output: &a.output,
        symfs: a.symfs.clone(),
        inline: a.inline,
        event: None,
        unwind: &a.unwind,
    };
    job.run()
}

/// `perfdata flamegraph`.
pub fn run_flamegraph(a: &FlamegraphArgs) -> Result<(), CliError> {
    let job = Job {
        input: a.file.path(),
        format: Format::Flamegraph,
        output: &a.output,
        symfs: a.symfs.clone(),
        inline: a.inline,
        event: a.event.as_deref(),
        unwind: &a.unwind,
    };
    job.run()
}

/// What an export writes from: folded lines (folded, flame graph) or the stacks.
enum Made {
    Lines(folded::FoldedLines),
    Stacks(Box<perfdata_report::stacks::Stacks>),
}

/// One export, from either command.
struct Job<'a> {
    input: &'a std::path::Path,
    format: Format,
    output: &'a std::path::Path,
    symfs: Option<PathBuf>,
    inline: bool,
    event: Option<&'a str>,
    unwind: &'a crate::unwinding::UnwindArgs,
}

impl Job<'_> {
    fn run(self) -> Result<(), CliError> {
        crate::alloc::return_large_blocks();
        let a = &self;
        let reader = perfdata_core::PerfReader::open(a.input)?;
        // Samples are counted per stack as they come, by what the format says of them;
        // speedscope and Firefox list each one, so those have them spooled to a
        // temporary file.
        let detail = match a.format {
            Format::Folded | Format::Flamegraph => Detail::Stacks,
            Format::Pprof => Detail::Labels,
            Format::Speedscope | Format::Firefox => Detail::Samples,
        };
        let spool = |e| perfdata_core::Error::io("the temporary file of the samples", e);
        let mut collector = StackCollector::new(detail).map_err(spool)?;
        let r = {
            let _progress = crate::progress::Progress::watch(a.input, reader.progress());
            let opts = a.unwind.options(&a.symfs);
            replay::replay_reader_with(reader, &opts, |m, s| collector.add(m, &s))?
        };
        crate::unwinding::tell(&r.unwind);
        let opts = SymbolOptions {
            symfs: a.symfs.clone(),
            kallsyms: r.kernel_is_running(),
            buildid_dir: None,
        };
        let mut stacks = collector
            .finish(&r, &mut Symbolizer::new(opts), a.inline)
            .map_err(spool)?;
        crate::verbose::say(1, stacks.summary());
        if let Some(event) = a.event {
            stacks.retain_event(event).map_err(CliError::Usage)?;
        }
        let title = a.input.display().to_string();
        let dsos = &r.machine.dsos;
        // Folded lines do not need the stacks once made: those go before the drawing.
        let made = match a.format {
            Format::Folded | Format::Flamegraph => {
                let lines = folded::lines(&stacks)?;
                drop(stacks);
                Made::Lines(lines)
            }
            _ => Made::Stacks(Box::new(stacks)),
        };
        let write = |w: &mut dyn Write| -> Result<(), CliError> {
            match (&made, a.format) {
                (Made::Lines(lines), Format::Flamegraph) => {
                    flamegraph::write_flamegraph(w, lines, &title)?
                }
                (Made::Lines(lines), _) => folded::write_folded(w, lines)?,
                (Made::Stacks(s), Format::Pprof) => pprof::write_pprof(w, s, dsos)?,
                (Made::Stacks(s), Format::Speedscope) => {
                    speedscope::write_speedscope(w, s, dsos, &title)?
                }
                (Made::Stacks(s), _) => firefox::write_firefox(w, s, &title)?,
            }
            w.flush()?;
            Ok(())
        };
        // `-o -`: standard output, as convert and report take it (not a file named "-").
        if a.output.as_os_str() == "-" {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
            return write(&mut w);
        }
        let mut out = AtomicOutput::create(a.output)?;
        write(&mut out.writer())?;
        out.commit(None)?;
        Ok(())
    }
}
