//! `perfdata report`: perf report's tables (the work is in perfdata-report).

use std::io::Write;
use std::path::PathBuf;

use perfdata_report::filter::SampleFilter;
use perfdata_report::group::{self, GroupView};
use perfdata_report::readperf::{self, Table};
use perfdata_report::symbolize::{self, SymbolOptions, Symbolizer};
use perfdata_report::table::{self, SortKey};
use perfdata_report::{replay, text};
use perfdata_write::edit;
use perfdata_write::output::AtomicOutput;

use crate::CliError;

#[derive(clap::Args)]
pub struct ReportArgs {
    #[command(flatten)]
    file: crate::input::Input,
    /// Sort keys, as perf's --sort: comm, pid, tid, dso, sym, cpu, event.
    #[arg(long, short = 's', default_value = "comm,dso,sym")]
    sort: String,
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
    /// its callchain passes through (perf's --children; needs a -g recording).
    #[arg(long)]
    children: bool,
    /// Self columns only (perf's --no-children, the default here).
    #[arg(long, conflicts_with = "children")]
    no_children: bool,
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
}

/// The input path (for the interrupt policy: a stream ends on the first SIGINT).
pub fn input_of(a: &ReportArgs) -> &std::path::Path {
    a.file.path()
}

pub fn run(a: &ReportArgs) -> Result<(), CliError> {
    crate::alloc::return_large_blocks();
    let keys = SortKey::parse_list(&a.sort).map_err(CliError::Usage)?;
    let filter = filter_of(a)?;
    let kallsyms = symbolize::kallsyms_in_background();
    // The tables count samples as they come, none kept.
    let wants_cpu = !filter.cpus.is_empty();
    let mut tally = table::Tally::with_filter(&keys, filter.clone());
    let mut cpu_less = false;
    let reader = perfdata_core::PerfReader::open(a.file.path())?;
    if a.children {
        tally = tally.with_children_of(reader.meta());
    }
    let progress = crate::progress::Progress::watch(a.file.path(), reader.progress());
    let mut csv_counts = readperf::SampleCounts::default();
    let replay_opts = a.unwind.options(&a.symfs);
    let r = if a.csv.is_some() {
        replay::replay_reader_with(reader, &replay_opts, |_, s| csv_counts.count(&s))?
    } else {
        replay::replay_reader_with(reader, &replay_opts, |m, s| {
            cpu_less |= s.cpu.is_none();
            tally.count(m, &s)
        })?
    };
    crate::unwinding::tell(&r.unwind);
    // The reading is done; symbolisation follows.
    drop(progress);
    if wants_cpu && cpu_less {
        return Err(CliError::Usage(
            "--cpu: the recording's samples carry no CPU (record with --sample-cpu or -a)".into(),
        ));
    }
    let unknown = filter.unknown_events(&r.event_names);
    if !unknown.is_empty() {
        return Err(CliError::Usage(format!(
            "--event {}: the recording's events are {}",
            unknown.join(", "),
            r.event_names.join(", ")
        )));
    }
    let opts = SymbolOptions {
        symfs: a.symfs.clone(),
        kallsyms: r.kernel_is_running(),
        buildid_dir: None,
    };
    // A failed read (or thread) leaves the kernel without symbols, as a missing file does.
    let mut symbols = Symbolizer::new(opts).with_kallsyms(kallsyms.join().ok().flatten());
    if let Some(dir) = &a.csv {
        return write_csv(a.file.path(), dir, &r, &csv_counts, &mut symbols);
    }
    let tables = tally.tables(&r, &mut symbols);
    let mut out = std::io::stdout().lock();
    if a.json {
        // Per event, groups or not: a group's counts are its members' tables.
        let unwind = Some(&r.unwind).filter(|u| u.any());
        text::write_json(&mut out, &tables, &keys, unwind)?;
    } else {
        let view = match (a.group, a.no_group) {
            (_, true) => GroupView::None,
            (true, false) => GroupView::Forced,
            (false, false) => GroupView::AsRecorded,
        };
        let groups = view.groups(&r.groups, r.event_names.len());
        let tables = group::group_view(tables, &groups, &r.event_names);
        let preamble = text::Preamble {
            lost_samples: r.lost_samples,
            single_comm: match filter.comms.as_slice() {
                [one] => Some(one.clone()),
                _ => None,
            },
        };
        text::write_stdio(&mut out, &tables, &keys, a.samples, &preamble)?;
    }
    out.flush()?;
    Ok(())
}

/// The filters as the options give them.
fn filter_of(a: &ReportArgs) -> Result<SampleFilter, CliError> {
    let ids = |list: &Option<String>, what: &str| -> Result<Vec<(u64, u64)>, CliError> {
        list.as_deref().map_or(Ok(Vec::new()), |s| {
            edit::parse_id_list(s, what).map_err(|e| CliError::Usage(e.to_string()))
        })
    };
    Ok(SampleFilter {
        pids: ids(&a.pid, "pid list")?,
        tids: ids(&a.tid, "tid list")?,
        cpus: ids(&a.cpu, "cpu list")?,
        comms: a
            .comms
            .as_deref()
            .map(|c| c.split(',').map(str::to_string).collect())
            .unwrap_or_default(),
        events: a.event.clone(),
        percentage: a.percentage.parse().map_err(CliError::Usage)?,
    })
}

/// readperf's four tables of `input` into `dir`, each file written whole or not at all.
fn write_csv(
    input: &std::path::Path,
    dir: &std::path::Path,
    r: &replay::Replay,
    counts: &readperf::SampleCounts,
    symbols: &mut Symbolizer,
) -> Result<(), CliError> {
    if input.as_os_str() == "-" {
        return Err(CliError::Usage(
            "--csv reads the recording twice: give a file, not standard input".into(),
        ));
    }
    let tables = readperf::tables(input, r, counts, symbols)?;
    std::fs::create_dir_all(dir)?;
    for t in Table::ALL {
        let mut out = AtomicOutput::create(&dir.join(t.file_name()))?;
        {
            let mut w = out.writer();
            tables.write(t, &mut w)?;
            w.flush()?;
        }
        out.commit(None)?;
    }
    Ok(())
}
