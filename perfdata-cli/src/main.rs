//! `perfdata`: inspect, edit and convert Linux perf.data files.

mod convert;
mod dump;
mod export;
mod info;
mod report;
mod stats;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "perfdata",
    version,
    about = "Read, edit and write Linux perf.data files"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show the header and every feature, as `perf report --header-only -I` does.
    Info(InputArgs),
    /// Count records by type and samples per event, as `perf report --stats` does.
    Stats(InputArgs),
    /// Print every record decoded, one per line, with its file offset.
    Dump(DumpArgs),
    /// Rewrite a recording: change its container, compression or byte order.
    Convert(convert::ConvertArgs),
    /// Samples per command, DSO and symbol, as `perf report --stdio` prints them.
    Report(report::ReportArgs),
    /// Write the samples in another profiler's format (folded stacks).
    Export(export::ExportArgs),
}

#[derive(clap::Args)]
struct InputArgs {
    /// A perf.data file, a perf.data directory, or `-` for stdin.
    file: PathBuf,
    /// Print JSON instead of text (field names are documented in the README).
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Info(a) => info::run(&a.file, a.json),
        Command::Stats(a) => stats::run(&a.file, a.json),
        Command::Dump(a) => dump::run(&a.input.file, a.input.json, !a.no_decompress),
        Command::Convert(a) => convert::run(a),
        Command::Report(a) => report::run(a),
        Command::Export(a) => export::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // `perfdata dump | head`: the reader went away; that is not a failure.
        Err(CliError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            let _ = std::io::stdout().flush();
            eprintln!("perfdata: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Errors the commands report: the core's, and failures to write the output.
#[derive(Debug)]
pub enum CliError {
    Core(perfdata_core::Error),
    Write(perfdata_write::WriteError),
    Output(std::io::Error),
    Usage(String),
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Core(e) => write!(f, "{e}"),
            CliError::Write(e) => write!(f, "{e}"),
            CliError::Output(e) => write!(f, "writing output: {e}"),
            CliError::Usage(msg) => f.write_str(msg),
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
    for w in &meta.warnings {
        eprintln!("perfdata: warning: {w}");
    }
}
