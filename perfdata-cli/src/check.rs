//! `perfdata check FILE...`: every problem of each recording, with its offset (see
//! `perfdata_view::check`). Exit status 0 when every file is clean, 1 when any has
//! problems, 2 when any cannot be read at all.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use perfdata_view::check::{check_reader, Report};

/// `perfdata check` arguments.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// perf.data files, perf.data directories, or `-` for stdin [default: perf.data].
    files: Vec<PathBuf>,
    /// Another input, as perf's `-i`.
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    input: Option<PathBuf>,
    /// One JSON object per file (JSON Lines): `file`, `records`, `stopped`,
    /// `unreadable`, and `problems` (each `offset`, `context`, `message`).
    #[arg(long)]
    json: bool,
}

/// Check every file; the exit status says the worst outcome.
pub fn run(args: &CheckArgs) -> Result<ExitCode, crate::CliError> {
    let mut worst = 0u8;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut files: Vec<PathBuf> = args.files.iter().chain(&args.input).cloned().collect();
    if files.is_empty() {
        files.push(PathBuf::from("perf.data"));
    }
    for file in &files {
        let opened = perfdata_core::PerfReader::open(file);
        let report = {
            let _progress = opened
                .as_ref()
                .ok()
                .map(|r| crate::progress::Progress::watch(file, r.progress()));
            check_reader(opened)
        };
        worst = worst.max(if report.unreadable {
            2
        } else if report.is_clean() {
            0
        } else {
            1
        });
        if args.json {
            let v = report.to_json(&file.display().to_string());
            perfdata_view::json::write_line(&mut out, &v)?;
        } else {
            write_text(&mut out, &file.display().to_string(), &report)?;
        }
    }
    out.flush()?;
    Ok(ExitCode::from(worst))
}

fn write_text(out: &mut impl Write, file: &str, report: &Report) -> std::io::Result<()> {
    if report.is_clean() {
        return writeln!(out, "{file}: ok, {} records", report.records);
    }
    writeln!(
        out,
        "{file}: {} problem(s){}",
        report.problems.len(),
        if report.stopped {
            "; reading stopped at the first, what follows was not checked"
        } else {
            ""
        }
    )?;
    for p in &report.problems {
        writeln!(out, "  {p}")?;
    }
    Ok(())
}
