//! `perfdata report`: perf report's tables (the work is in perfdata-report).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use perfdata_core::select::{parse_time_ranges, TimeSpec};
use perfdata_report::callgraph::{CallGraph, Order};
use perfdata_report::fields::Field;
use perfdata_report::filter::SampleFilter;
use perfdata_report::group::GroupView;
use perfdata_report::model::SortKey;
use perfdata_report::readperf::Table;
use perfdata_report::Report;
use perfdata_write::output::{AtomicOutput, NewFile};

use crate::CliError;

#[derive(clap::Args)]
pub struct ReportArgs {
    #[command(flatten)]
    file: crate::input::Input,
    /// Sort keys, as perf's --sort: comm, pid, tid, dso, sym, srcline, cpu, event, trace
    /// (default comm,dso,sym, or trace where every event of a file is a tracepoint;
    /// with -F, the fields' keys).
    #[arg(long, short = 's')]
    sort: Option<String>,
    /// Output fields, as perf's -F/--fields: overhead, overhead_children, sample, period
    /// and sort keys, printed in this order, the rows ordered by the --sort keys then by
    /// these fields (`-F overhead,sample,comm,dso,sym`).
    #[arg(long, short = 'F', value_name = "FIELD,...")]
    fields: Option<String>,
    /// Show the Samples column (perf's -n).
    #[arg(short = 'n', long = "show-nr-samples")]
    samples: bool,
    /// Text as perf report --stdio prints it (the default; accepted for perf's users).
    #[arg(long)]
    stdio: bool,
    /// Print JSON instead of text.
    #[arg(long, conflicts_with = "stdio")]
    json: bool,
    /// Look for binaries and debug files under this directory (perf's --symfs).
    #[arg(long)]
    symfs: Option<PathBuf>,
    /// Only samples of these processes (perf's list syntax, `1,3-5`).
    #[arg(long, value_name = "PID,...")]
    pid: Option<String>,
    /// Only samples of these threads.
    #[arg(long, value_name = "TID,...")]
    tid: Option<String>,
    /// Only samples of threads of these names at the sample (exact, comma-separated).
    #[arg(long = "comms", short = 'c', alias = "comm", value_name = "COMM,...")]
    comms: Option<String>,
    /// Only samples on these CPUs (the recording must sample the CPU).
    #[arg(long, short = 'C', value_name = "CPU,...")]
    cpu: Option<String>,
    /// Only the table of this event, as perf names it (repeatable; not a perf report
    /// option).
    #[arg(long, short = 'e', value_name = "EVENT")]
    event: Vec<String>,
    /// Children and Self columns: each sample's period also counts towards every row
    /// its callchain passes through (perf's --children; the default on a recording with
    /// callchains, as in perf).
    #[arg(long)]
    children: bool,
    /// Self columns only (perf's --no-children).
    #[arg(long, conflicts_with = "children")]
    no_children: bool,
    /// The call graph under each entry, in perf's syntax:
    /// `print_type,threshold[,print_limit],order,sort_key,value` with print_type graph,
    /// fractal, flat, folded or none; order caller or callee; sort_key function or
    /// address; value percent, period or count (perf's default
    /// graph,0.5,caller,function,percent; callee without --children unless given).
    #[arg(long = "call-graph", short = 'g', value_name = "PARAMS", num_args = 0..=1,
          default_missing_value = perfdata_report::callgraph::PERF_DEFAULT)]
    call_graph: Option<String>,
    /// The call graph from the callers (perf's -G/--inverted: order caller).
    #[arg(long, short = 'G')]
    inverted: bool,
    /// Entries under this percent are not printed, nor call graph nodes under it
    /// (perf's --percent-limit).
    #[arg(long, value_name = "PERCENT")]
    percent_limit: Option<f64>,
    /// Only samples of these time ranges (perf's --time): start,stop in seconds, either
    /// may be empty, or percent slices of the samples' time span: `10%/2` (the second
    /// tenth), `10%/1,10%/3`, `0%-10%`, `10%-20%,30%-40%`, `25%` (the first quarter).
    #[arg(long, value_name = "START,STOP|SLICES")]
    time: Option<String>,
    /// Only samples in these DSOs, by short or long name (perf's -d/--dsos).
    #[arg(long, short = 'd', value_name = "DSO,...")]
    dsos: Option<String>,
    /// Only samples in these functions, by name (perf's -S/--symbols).
    #[arg(long, short = 'S', value_name = "SYMBOL,...")]
    symbols: Option<String>,
    /// At most this many frames of each callchain (perf's --max-stack).
    #[arg(long, value_name = "N")]
    max_stack: Option<usize>,
    /// Show each event group as one table with a column per member (the default when the
    /// recording has groups, as perf's; on a recording without groups, all its events
    /// are one group, as perf's --group).
    #[arg(long)]
    group: bool,
    /// A table per event, groups or not (perf's --no-group).
    #[arg(long, conflicts_with = "group")]
    no_group: bool,
    /// Percentages of a filtered report: of the event's samples before filtering
    /// (absolute, perf's default) or of those kept (relative).
    #[arg(long, default_value = "absolute", value_name = "absolute|relative")]
    percentage: String,
    /// Write readperf's tables (stat.csv, overview.csv, processes.csv, results.csv) into
    /// this directory, created if missing, instead of printing the report.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["json", "stdio", "pid", "tid", "comms", "cpu", "event", "children"])]
    csv: Option<PathBuf>,
    #[command(flatten)]
    unwind: crate::unwinding::UnwindArgs,
    #[command(flatten)]
    inline: crate::unwinding::InlineArgs,
}

/// The input path (for the interrupt policy: a stream ends on the first SIGINT).
pub fn input_of(a: &ReportArgs) -> &std::path::Path {
    a.file.path()
}

/// perf 6.1's exit status where its option parser refuses an option's value
/// (`usage_with_options`): a `-g` it cannot parse.
const USAGE_STATUS: u8 = 129;
/// perf's where `cmd_report` returns -EINVAL: a `--time` that does not parse.
const INVALID_STATUS: u8 = 234;

/// Run the report; perf's exit status where perf refuses an option with one of its own
/// (`-g`, `--time`), the error said on stderr. Where perf 6.1 prints an error and
/// exits 0 (an unknown `--sort` or `-F` key, a `--pid` list that does not parse, `-C` on
/// a recording without CPUs) perfdata exits 1: a script must see the failure.
pub fn run(a: &ReportArgs) -> Result<ExitCode, CliError> {
    // A table file that is the input would replace it: refused before any work.
    for t in a
        .csv
        .iter()
        .flat_map(|dir| Table::ALL.map(|t| dir.join(t.file_name())))
    {
        crate::output::refuse_same(a.file.path(), &t, "")?;
    }
    crate::alloc::return_large_blocks();
    let keys = match &a.sort {
        Some(s) => Some(SortKey::parse_list(s).map_err(CliError::Usage)?),
        None => None,
    };
    let fields = match &a.fields {
        Some(f) => Some(Field::parse_list(f).map_err(CliError::Usage)?),
        None => None,
    };
    let mut filter = SampleFilter::parse(
        a.pid.as_deref(),
        a.tid.as_deref(),
        a.cpu.as_deref(),
        a.comms.as_deref(),
        &a.event,
        &a.percentage,
    )?;
    if let Some(d) = &a.dsos {
        filter.dsos = d.split(',').map(str::to_string).collect();
    }
    if let Some(d) = &a.symbols {
        filter.symbols = d.split(',').map(str::to_string).collect();
    }
    let time: Option<(TimeSpec, &str)> = match &a.time {
        Some(t) => match parse_time_ranges(t) {
            Ok(spec) => Some((spec, t.as_str())),
            Err(e) => return Ok(crate::fail(e.into(), ExitCode::from(INVALID_STATUS))),
        },
        None => None,
    };
    let group = match (a.group, a.no_group) {
        (_, true) => GroupView::None,
        (true, false) => GroupView::Forced,
        (false, false) => GroupView::AsRecorded,
    };
    let mut graph = match &a.call_graph {
        Some(g) => match CallGraph::default().parse_onto(g) {
            Ok(graph) => graph,
            Err(e) => {
                return Ok(crate::fail(
                    CliError::Usage(e),
                    ExitCode::from(USAGE_STATUS),
                ))
            }
        },
        None => Some(CallGraph::default()),
    };
    if let Some(g) = &mut graph {
        if a.inverted {
            g.order = Some(Order::Caller);
        }
        g.max_stack = a.max_stack;
    }
    let mut report = Report::new()
        .filter(filter)
        .children(!a.no_children)
        .call_graph(graph)
        .call_graph_asked(a.call_graph.is_some())
        .group(group)
        .symfs(a.symfs.clone())
        // perf report -v's text; the JSON's cells stay the plain ones.
        .verbose(crate::verbose::level() > 0 && !a.json)
        .unwind(a.unwind.on())
        .inline(a.inline.on());
    if let Some((window, given)) = time {
        report = report.time(window, given);
    }
    if let Some(keys) = keys {
        report = report.sort(keys);
    }
    if let Some(fields) = fields {
        report = report.fields(fields);
    }
    if let Some(limit) = a.percent_limit {
        report = report.percent_limit(limit);
    }
    let reader = perfdata_core::PerfReader::open(a.file.path())?;
    // The progress of the reading; symbolisation follows.
    let progress = crate::progress::Progress::watch(a.file.path(), reader.progress());
    if let Some(dir) = &a.csv {
        let (tables, unwind) = report.readperf(reader, a.file.path())?;
        drop(progress);
        crate::unwinding::tell(&unwind);
        return write_csv(&tables, dir).map(|()| ExitCode::SUCCESS);
    }
    let counted = report.read(reader)?;
    drop(progress);
    crate::unwinding::tell(counted.unwind());
    counted.warnings().iter().for_each(crate::warn);
    let tables = counted.tables().quiet(crate::quiet());
    tables.warnings().iter().for_each(crate::warn);
    let mut out = std::io::stdout().lock();
    if a.json {
        tables.write_json(&mut out)?;
    } else {
        tables.write_stdio(&mut out, a.samples)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// readperf's four tables into `dir`, each file written whole or not at all.
fn write_csv(
    tables: &perfdata_report::readperf::Tables,
    dir: &std::path::Path,
) -> Result<(), CliError> {
    std::fs::create_dir_all(dir)?;
    for t in Table::ALL {
        let mut out = AtomicOutput::create(&dir.join(t.file_name()))?.new_file(NewFile::Umask);
        {
            let mut w = out.writer();
            tables.write(t, &mut w)?;
            w.flush()?;
        }
        out.commit(None)?;
    }
    Ok(())
}
