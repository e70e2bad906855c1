//! `perfdata`: inspect, edit and convert Linux perf.data files.

/// `eprintln!` that cannot panic: a stderr whose reader went away (`2>&1 | head -1`)
/// loses the line instead of ending the command (eprintln! panics on EPIPE).
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod alloc;
mod anonymize;
mod buildid;
mod check;
mod convert;
mod diff;
mod docs;
mod dump;
mod export;
mod info;
mod input;
mod interrupt;
mod json_help;
mod merge;
mod output;
mod progress;
mod report;
mod script;
mod stats;
mod strip;
mod synth;
mod unwind;
mod unwinding;
mod verbose;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use clap::{FromArgMatches, Parser, Subcommand};
use interrupt::OnInterrupt;

#[derive(Parser)]
#[command(
    name = "perfdata",
    version,
    about = "Read, edit and write Linux perf.data files"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Print no warnings, summaries or progress on stderr (errors still); report: no
    /// `#` header lines, as perf report -q
    #[arg(short, long, global = true)]
    quiet: bool,
    /// Say more on stderr: the input's kind and the policy resolved (-v), each section
    /// and feature with its size (-vv); report: also the text of perf report -v (DSO
    /// paths, each symbol's address and symtab origin). Not with -q.
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    verbose: u8,
    /// Accepted as perf takes it: perf refuses files not owned by the user unless -f;
    /// perfdata reads them anyway, so -f changes nothing.
    #[arg(short, long, global = true)]
    force: bool,
}

/// `-q`/`--quiet`: stderr carries errors only.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether `-q` was given: warnings, summaries and progress are left out.
pub fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// Print a warning to stderr, unless `-q`.
pub fn warn(w: impl std::fmt::Display) {
    if !quiet() {
        errln!("perfdata: warning: {w}");
    }
}

/// A warning about one input of several (merge, export of many, a differential flame
/// graph's two): `INPUT: warning`, so that the user knows which.
pub fn warn_about(input: &std::path::Path, w: impl std::fmt::Display) {
    warn(format_args!("{}: {w}", input.display()));
}

#[derive(Subcommand)]
enum Command {
    /// Show the header and every feature, as `perf report --header-only -I` does.
    Info(InputArgs),
    /// Count records by type and samples per event, as `perf report --stats` does.
    Stats(InputArgs),
    /// Print every record decoded, one per line, with its file offset.
    Dump(DumpArgs),
    /// Check recordings fully: every problem with its offset (exit 0 clean, 1
    /// problems, 2 unreadable).
    Check(check::CheckArgs),
    /// Rewrite a recording: change its container, compression or byte order.
    Convert(convert::ConvertArgs),
    /// Write a synthetic trace: a seeded workload of processes, threads, DSOs and samples.
    Synth(synth::SynthArgs),
    /// Merge recordings into one: events, ids, pids and time order as perf reads them.
    Merge(merge::MergeArgs),
    /// Remove samples by pid, tid, comm, cpu, event or time, with their side-band.
    Strip(strip::StripArgs),
    /// List build ids as `perf buildid-list` does, or replace build ids and paths.
    #[command(subcommand)]
    Buildid(buildid::BuildIdCommand),
    /// Replace comms, paths, hostname, command line, cgroups and BPF names with stable
    /// pseudonyms, writing only what is understood and rewritten.
    Anonymize(anonymize::AnonymizeArgs),
    /// Unwind `--call-graph dwarf` samples and write them back as callchains, without
    /// their stack copies.
    Unwind(unwind::UnwindCmdArgs),
    /// Samples per command, DSO and symbol, as `perf report --stdio` prints them.
    // As perf's parse-options: an option given again replaces its value.
    #[command(args_override_self = true)]
    Report(report::ReportArgs),
    /// List the samples, with symbols and callchains, as `perf script` prints them.
    // As perf's parse-options: an option given again replaces its value.
    #[command(args_override_self = true)]
    Script(script::ScriptArgs),
    /// Two or more recordings' rows side by side, as `perf diff` prints them.
    // As perf's parse-options: an option given again replaces its value.
    #[command(args_override_self = true)]
    Diff(diff::DiffArgs),
    /// Write the samples in another profiler's format (folded, pprof, speedscope,
    /// firefox, flamegraph), or many recordings as Parquet tables.
    Export(export::ExportArgs),
    /// Draw an SVG flame graph of the samples (flamegraph.svg unless -o).
    Flamegraph(export::FlamegraphArgs),
    /// Print a shell completion script for bash, zsh, fish, elvish or powershell.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): every command with its options and examples.
    Manpage,
    /// Print the fields of every --json output, from the JSON Schemas the outputs are
    /// validated against: which are "0x..." addresses and which big-number strings.
    #[command(name = "help-json")]
    HelpJson,
}

#[derive(clap::Args)]
struct InputArgs {
    #[command(flatten)]
    file: input::Input,
    /// Print JSON instead of text (its fields: docs/json.md and `perfdata help-json`).
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct DumpArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Show compressed records as they are stored instead of the records inside them.
    #[arg(long)]
    no_decompress: bool,
    /// Only records that carry every field a selector names, each matching: samples
    /// and the records about the selected threads (COMM, MMAP, FORK, ...); records
    /// without a pid (FINISHED_ROUND, metadata) are left out under --pid.
    #[command(flatten)]
    select: strip::SelectorArgs,
    /// Only records of these types, by perf's names (`SAMPLE,MMAP2`).
    #[arg(long = "type", value_name = "TYPES")]
    types: Option<String>,
}

/// Whether `path` is read as a stream that a terminal's Ctrl-C also ends: stdin or a
/// FIFO that is not a regular file (`perf record -o - | perfdata ...`).
fn is_stream(path: &Path) -> bool {
    let path = if path.as_os_str() == "-" {
        Path::new("/dev/stdin")
    } else {
        path
    };
    std::fs::metadata(path).is_ok_and(|md| !md.is_file() && !md.is_dir())
}

fn main() -> ExitCode {
    // Parsed with the examples added to each command's help (see docs).
    let cli = match Cli::from_arg_matches(
        &docs::command()
            .get_matches_from(convert::join_compress_level(std::env::args_os().collect())),
    ) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    QUIET.store(cli.quiet, std::sync::atomic::Ordering::Relaxed);
    verbose::set_level(cli.verbose);
    // The queue's budget is read where each replay starts, which cannot refuse it: a
    // value that is not a size would be the default unsaid.
    if let Err(v) = perfdata_report::replay::queue_bytes_env() {
        let e = CliError::Usage(format!(
            "PERFDATA_QUEUE_BYTES={v:?} is not a number of bytes (such as 1048576, 512K, 64M, 1G)"
        ));
        return fail(e, ExitCode::from(2));
    }
    // One command: its input (a stream's first SIGINT ends the stream rather than the
    // command; either way an interrupted convert leaves no temp file), and its run.
    let (input, run): (Option<&Path>, Run) = match &cli.command {
        Command::Info(a) => (
            Some(a.file.path()),
            done(|| info::run(a.file.path(), a.json)),
        ),
        Command::Stats(a) => (
            Some(a.file.path()),
            done(|| stats::run(a.file.path(), a.json)),
        ),
        Command::Dump(a) => (
            Some(a.input.file.path()),
            done(|| {
                dump::run(
                    a.input.file.path(),
                    a.input.json,
                    !a.no_decompress,
                    &a.select,
                    a.types.as_deref(),
                )
            }),
        ),
        // check says with its exit status whether it found problems (2: unreadable).
        Command::Check(a) => (
            None,
            Box::new(|| Ok(check::run(a).unwrap_or_else(|e| fail(e, ExitCode::from(2))))),
        ),
        Command::Convert(a) => (Some(a.input()), done(|| convert::run(a))),
        Command::Synth(a) => (None, done(|| synth::run(a))),
        Command::Merge(a) => (Some(a.input()), done(|| merge::run(a))),
        Command::Strip(a) => (Some(a.input()), done(|| strip::run(a))),
        Command::Buildid(c) => (Some(c.input()), done(|| buildid::run(c))),
        Command::Anonymize(a) => (Some(a.input()), done(|| anonymize::run(a))),
        Command::Unwind(a) => (Some(a.input()), done(|| unwind::run(a))),
        Command::Report(a) => (Some(report::input_of(a)), Box::new(|| report::run(a))),
        Command::Script(a) => (Some(script::input_of(a)), Box::new(|| script::run(a))),
        Command::Diff(a) => (None, done(|| diff::run(a))),
        Command::Export(a) => (Some(export::input_of(a)), done(|| export::run(a))),
        Command::Flamegraph(a) => (
            Some(export::flamegraph_input_of(a)),
            done(|| export::run_flamegraph(a)),
        ),
        Command::Completions { shell } => (None, done(|| docs::completions(*shell))),
        Command::Manpage => (None, done(docs::manpage)),
        Command::HelpJson => (None, done(json_help::run)),
    };
    interrupt::install(if input.is_some_and(is_stream) {
        OnInterrupt::EndOfStream
    } else {
        OnInterrupt::Abort
    });
    let result = run();
    // An interrupt that cancelled the command ends it as the signal would have.
    interrupt::die_if_interrupted();
    result.unwrap_or_else(|e| fail(e, ExitCode::FAILURE))
}

/// The exit status of a command that stopped on `e`: `status`, the error said on stderr.
/// `perfdata dump | head`, `convert -o - | head -c 10`: the reader went away; that is not
/// a failure, whichever command was writing.
fn fail(e: CliError, status: ExitCode) -> ExitCode {
    if e.is_broken_pipe() {
        return ExitCode::SUCCESS;
    }
    let _ = std::io::stdout().flush();
    errln!("perfdata: error: {e}");
    status
}

/// A command's run: its exit status, or the error it stopped on.
type Run<'a> = Box<dyn FnOnce() -> Result<ExitCode, CliError> + 'a>;

/// The run of a command that succeeds with status 0.
fn done<'a>(run: impl FnOnce() -> Result<(), CliError> + 'a) -> Run<'a> {
    Box::new(move || run().map(|()| ExitCode::SUCCESS))
}

/// Errors the commands report: the core's, and failures to write the output.
#[derive(Debug)]
pub enum CliError {
    Core(perfdata_core::Error),
    Write(perfdata_write::WriteError),
    Output(std::io::Error),
    Usage(String),
    /// An error of one input of several, said with its path.
    Input(std::path::PathBuf, Box<CliError>),
}

impl CliError {
    /// This error as one of `input`'s (said `INPUT: error`), unless it names it
    /// already.
    pub fn about(self, input: &std::path::Path) -> CliError {
        let text = input.display().to_string();
        match self {
            CliError::Input(..) => self,
            e if e.to_string().contains(&text) => e,
            e => CliError::Input(input.to_path_buf(), Box::new(e)),
        }
    }

    /// Whether this is stdout closing under the command (EPIPE), from any writer.
    fn is_broken_pipe(&self) -> bool {
        let io = match self {
            CliError::Output(e) => Some(e),
            CliError::Write(perfdata_write::WriteError::Io { source, .. }) => Some(source),
            CliError::Input(_, e) => return e.is_broken_pipe(),
            _ => None,
        };
        io.is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Core(e) => write!(f, "{e}"),
            CliError::Write(e) => write!(f, "{e}"),
            CliError::Output(e) => write!(f, "writing output: {e}"),
            CliError::Usage(msg) => f.write_str(msg),
            CliError::Input(path, e) => write!(f, "{}: {e}", path.display()),
        }
    }
}

impl From<perfdata_core::Error> for CliError {
    fn from(e: perfdata_core::Error) -> Self {
        CliError::Core(e)
    }
}

impl From<perfdata_write::WriteError> for CliError {
    fn from(e: perfdata_write::WriteError) -> Self {
        match e {
            perfdata_write::WriteError::Read(e) => CliError::Core(e),
            other => CliError::Write(other),
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::Output(e)
    }
}

impl From<serde_json::Error> for CliError {
    fn from(e: serde_json::Error) -> Self {
        CliError::Output(e.into())
    }
}

/// Print the reader's warnings to stderr.
pub fn print_warnings(meta: &perfdata_core::Metadata) {
    meta.warnings.iter().for_each(warn);
}
