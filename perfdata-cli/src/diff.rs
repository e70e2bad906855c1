//! `perfdata diff [BASE] [NEW...]`: perf diff's view of two or more recordings (the
//! work is in perfdata_report::diff).

use std::io::Write;
use std::path::{Path, PathBuf};

use perfdata_core::select::{parse_time_ranges, TimeSpec};
use perfdata_report::diff::{self, Compute, DiffView, Recording};
use perfdata_report::filter::{Percentage, SampleFilter};
use perfdata_report::group::GroupView;
use perfdata_report::model::SortKey;
use perfdata_report::Report;

use crate::CliError;

#[derive(clap::Args)]
pub struct DiffArgs {
    /// The baseline, then the recordings compared with it, as perf diff takes them: none
    /// compares perf.data.old with perf.data, one compares perf.data.old with it.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// How rows are compared (perf's -c): delta-abs (the default), delta, ratio,
    /// wdiff:W1,W2.
    #[arg(short = 'c', long, default_value = "delta-abs")]
    compute: String,
    /// Sort the rows by this recording's column first (perf's -o/--order: 1 is the
    /// first after the baseline, the default; 0 sorts by the baseline's period).
    #[arg(short = 'o', long, default_value_t = 1, value_name = "N")]
    order: usize,
    /// Only the baseline's rows that another recording has too (perf's -b).
    #[arg(short = 'b', long)]
    baseline_only: bool,
    /// A period column per recording (perf's -p).
    #[arg(short = 'p', long)]
    period: bool,
    /// The formula of each computed value (perf's -F).
    #[arg(short = 'F', long)]
    formula: bool,
    /// Sort keys, as perf's --sort: comm, pid, dso, sym, cpu (and tid, which perf 6.1
    /// does not have).
    #[arg(long, short = 's', default_value = "dso,sym")]
    sort: String,
    /// Only samples in these DSOs, by short or long name (perf's -d/--dsos).
    #[arg(long, short = 'd', value_name = "DSO,...")]
    dsos: Option<String>,
    /// Only samples of threads of these names (perf's -C/--comms).
    #[arg(long, short = 'C', value_name = "COMM,...")]
    comms: Option<String>,
    /// Only samples in these functions (perf's -S/--symbols); an entry that reads as hex
    /// (`b`, `add`, `0x1139`) is an address, as perf 6.1 takes it.
    #[arg(long, short = 'S', value_name = "SYMBOL,...")]
    symbols: Option<String>,
    /// Only samples of these processes (perf's list syntax, `1,3-5`).
    #[arg(long, value_name = "PID,...")]
    pid: Option<String>,
    /// Only samples of these threads.
    #[arg(long, value_name = "TID,...")]
    tid: Option<String>,
    /// Only samples on these CPUs.
    #[arg(long, value_name = "CPU,...")]
    cpu: Option<String>,
    /// Only samples of these time ranges, as perf report's --time, for every recording.
    #[arg(long, value_name = "START,STOP|SLICES")]
    time: Option<String>,
    /// Percentages of a filtered diff: of the event's samples before filtering
    /// (absolute, perf's default) or of those kept (relative).
    #[arg(long, default_value = "absolute", value_name = "absolute|relative")]
    percentage: String,
    /// The rows alone, no headers (perf's -q).
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Look for binaries and debug files under this directory (perf's --symfs).
    #[arg(long)]
    symfs: Option<PathBuf>,
    /// Print text as perf diff --stdio does (the default; accepted for perf's users).
    #[arg(long)]
    stdio: bool,
}

impl DiffArgs {
    /// The recordings, the baseline first, perf's defaults filled in.
    fn paths(&self) -> Vec<PathBuf> {
        match self.files.as_slice() {
            [] => vec!["perf.data.old".into(), "perf.data".into()],
            [new] => vec!["perf.data.old".into(), new.clone()],
            all => all.to_vec(),
        }
    }
}

pub fn run(args: &DiffArgs) -> Result<(), CliError> {
    let mut view = DiffView {
        compute: args.compute.parse::<Compute>().map_err(CliError::Usage)?,
        order: args.order,
        baseline_only: args.baseline_only,
        period: args.period,
        formula: args.formula,
        relative: false,
    };
    let keys = SortKey::parse_list(&args.sort).map_err(CliError::Usage)?;
    let paths = args.paths();
    if view.order >= paths.len() {
        return Err(CliError::Usage(format!(
            "--order {}: out of limit (there are {} recordings, numbered from 0)",
            view.order,
            paths.len()
        )));
    }
    let mut filter = SampleFilter::parse(
        args.pid.as_deref(),
        args.tid.as_deref(),
        args.cpu.as_deref(),
        args.comms.as_deref(),
        &[],
        &args.percentage,
    )?;
    let list = |s: &Option<String>| -> Vec<String> {
        s.iter()
            .flat_map(|s| s.split(','))
            .map(str::to_string)
            .collect()
    };
    view.relative = filter.percentage == Percentage::Relative;
    filter.dsos = list(&args.dsos);
    filter.symbols = list(&args.symbols);
    let time: Option<TimeSpec> = args.time.as_deref().map(parse_time_ranges).transpose()?;
    // A filter of one name leaves its column out (perf's sort__setup_elide; of
    // --symbols, the names its address entries leave).
    let elided: Vec<SortKey> = [
        (SortKey::Dso, filter.dsos.len()),
        (SortKey::Comm, filter.comms.len()),
        (SortKey::Sym, filter.symbol_names().count()),
    ]
    .into_iter()
    .filter(|&(_, names)| names == 1)
    .map(|(k, _)| k)
    .collect();
    let tables = |path: &Path| -> Result<_, CliError> {
        // perf diff compares self periods per event: no Children column, no call
        // graph, no group view.
        let mut report = Report::new()
            .sort(keys.clone())
            .filter(filter.clone())
            .children(false)
            .call_graph(None)
            .group(GroupView::None)
            // perf pairs the entries its filters hide too.
            .keep_filtered(true)
            .symfs(args.symfs.clone());
        if let (Some(window), Some(given)) = (&time, &args.time) {
            report = report.time(window.clone(), given);
        }
        let counted = report.read(perfdata_core::PerfReader::open(path)?)?;
        crate::unwinding::tell(counted.unwind());
        counted.warnings().iter().for_each(crate::warn);
        let (events, names) = (counted.event_ids().to_vec(), counted.event_names().to_vec());
        let tables = counted.tables();
        tables.warnings().iter().for_each(crate::warn);
        Ok((tables, events, names))
    };
    let tables = paths
        .iter()
        .map(|p| tables(p))
        .collect::<Result<Vec<_>, _>>()?;
    let recordings: Vec<Recording> = tables
        .iter()
        .map(|(t, events, names)| Recording {
            tables: t.per_event(),
            events,
            names,
        })
        .collect();
    let diffs = diff::diff(&recordings, &keys, &view);
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    diff::write_stdio(&mut out, &diffs, &names, &keys, &elided, &view, args.quiet)?;
    out.flush()?;
    Ok(())
}
