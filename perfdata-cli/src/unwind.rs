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
}

impl UnwindCmdArgs {
    /// The input path (for the interrupt policy: a stream ends on the first SIGINT).
    pub fn input(&self) -> &std::path::Path {
        self.input.path()
    }
}

pub fn run(args: &UnwindCmdArgs) -> Result<(), CliError> {
    let edit = UnwindEdit::new(&UnwindOptions {
        symfs: args.symfs.clone(),
        buildid_dir: None,
    });
    let stats = edit.stats();
    let edits: Vec<Box<dyn RecordEdit>> = vec![Box::new(edit)];
    let report = crate::output::run_edits(args.input.path(), &args.output, args.decompress, edits)?;
    report.warnings.iter().for_each(crate::warn);
    let stats = stats.borrow();
    crate::unwinding::tell(&stats);
    if !crate::quiet() && stats.cut == 0 {
        // tell says it only with -v when nothing was cut: unwind's one result, said.
        errln!("{}", stats.summary());
    }
    Ok(())
}
