//! `perfdata diff [BASE] [NEW]`: perf diff's view of two recordings (the work is in
//! perfdata_report::diff).

use std::io::Write;
use std::path::{Path, PathBuf};

use perfdata_report::diff::{self, Compute};
use perfdata_report::model::SortKey;
use perfdata_report::Report;

use crate::CliError;

#[derive(clap::Args)]
pub struct DiffArgs {
    /// The baseline and the new recording, as perf diff takes them: none compares
    /// perf.data.old with perf.data, one compares perf.data.old with it.
    #[arg(value_name = "FILE", num_args = 0..=2)]
    files: Vec<PathBuf>,
    /// How rows are compared (perf's -c): delta-abs (the default), delta, ratio,
    /// wdiff:W1,W2.
    #[arg(short = 'c', long, default_value = "delta-abs")]
    compute: String,
    /// Sort keys, as perf's --sort: comm, pid, tid, dso, sym, cpu.
    #[arg(long, short = 's', default_value = "dso,sym")]
    sort: String,
    /// Look for binaries and debug files under this directory (perf's --symfs).
    #[arg(long)]
    symfs: Option<PathBuf>,
    /// Print text as perf diff --stdio does (the default; accepted for perf's users).
    #[arg(long)]
    stdio: bool,
}

impl DiffArgs {
    /// The two recordings, perf's defaults filled in.
    fn paths(&self) -> (PathBuf, PathBuf) {
        match self.files.as_slice() {
            [] => ("perf.data.old".into(), "perf.data".into()),
            [new] => ("perf.data.old".into(), new.clone()),
            [base, new, ..] => (base.clone(), new.clone()),
        }
    }
}

pub fn run(args: &DiffArgs) -> Result<(), CliError> {
    let compute: Compute = args.compute.parse().map_err(CliError::Usage)?;
    let keys = SortKey::parse_list(&args.sort).map_err(CliError::Usage)?;
    let (base, new) = args.paths();
    let tables = |path: &Path| -> Result<_, CliError> {
        // perf diff compares self periods: no Children column, no call graph.
        let report = Report::new()
            .sort(keys.clone())
            .children(false)
            .call_graph(None)
            .symfs(args.symfs.clone());
        let counted = report.read(perfdata_core::PerfReader::open(path)?)?;
        crate::unwinding::tell(counted.unwind());
        counted.warnings().iter().for_each(crate::warn);
        Ok(counted.tables())
    };
    let (base, new) = (tables(&base)?, tables(&new)?);
    let diffs = diff::diff(base.per_event(), new.per_event(), compute);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    diff::write_stdio(&mut out, &diffs, &keys, compute)?;
    out.flush()?;
    Ok(())
}
