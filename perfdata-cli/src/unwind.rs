//! `perfdata unwind IN -o OUT`: write a `--call-graph dwarf` recording back with each
//! sample's user stack unwound into its callchain, without the stack copies. The
//! arguments only: the edit is `perfdata_report::unwind::UnwindEdit`.

use std::path::PathBuf;

use perfdata_report::unwind::{UnwindEdit, UnwindOptions};
use perfdata_write::edit::RecordEdit;

use crate::CliError;

#[derive(clap::Args)]
pub struct UnwindCmdArgs {
    #[command(flatten)]
    input: crate::input::Input,
    /// Output path, or `-` for stdout.
    #[arg(short, long)]
    output: PathBuf,
    /// Look for binaries and debug files under this directory (perf's --symfs).
    #[arg(long, value_name = "DIR")]
    symfs: Option<PathBuf>,
    /// Write the records of compressed input uncompressed.
    #[arg(long)]
    decompress: bool,
    /// Print the summary (samples unwound whole, cut by why, missing binaries) and the
    /// output's size as JSON on stdout instead of the summary line on stderr
    /// (schemas/unwind.schema.json). Not with `-o -`.
    #[arg(long)]
    json: bool,
}

/// What `--json` prints.
#[derive(serde::Serialize)]
struct Summary<'a> {
    /// Known when the output is a file (a device or FIFO is written into as a stream).
    #[serde(skip_serializing_if = "Option::is_none")]
    output_bytes: Option<u64>,
    unwind: &'a perfdata_report::unwind::UnwindStats,
}

impl UnwindCmdArgs {
    /// The input path (for the interrupt policy: a stream ends on the first SIGINT).
    pub fn input(&self) -> &std::path::Path {
        self.input.path()
    }
}

pub fn run(args: &UnwindCmdArgs) -> Result<(), CliError> {
    if args.json && args.output.as_os_str() == "-" {
        return Err(CliError::Usage(
            "--json prints on stdout, where -o - writes the recording: give -o a path".into(),
        ));
    }
    let edit = UnwindEdit::new(&UnwindOptions {
        symfs: args.symfs.clone(),
        buildid_dir: None,
    });
    let stats = edit.stats();
    let edits: Vec<Box<dyn RecordEdit>> = vec![Box::new(edit)];
    let report = crate::output::run_edits(args.input.path(), &args.output, args.decompress, edits)?;
    report.warnings.iter().for_each(crate::warn);
    let stats = stats.borrow();
    if args.json {
        let summary = Summary {
            output_bytes: report.bytes_written,
            unwind: &stats,
        };
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        perfdata_view::json::write_pretty(&mut out, &summary)?;
        std::io::Write::flush(&mut out)?;
        return Ok(());
    }
    crate::unwinding::tell(&stats);
    if !crate::quiet() && stats.cut == 0 {
        // tell says it only with -v when nothing was cut: unwind's one result, said.
        errln!("{}", stats.summary());
    }
    Ok(())
}
