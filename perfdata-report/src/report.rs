//! `perf report` as a builder: the sort keys, filters, children, group view and symbol
//! options of a report, then the recording read ([`Report::read`]) and its tables made
//! ([`Counted::tables`]), printed as perf's `--stdio` or as JSON.
//!
//! ```
//! use perfdata_report::Report;
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-cpu-clock.data");
//! let reader = perfdata_core::PerfReader::open(std::path::Path::new(path))?;
//! let tables = Report::new().read(reader)?.tables();
//! let mut out = Vec::new();
//! tables.write_stdio(&mut out, false)?;
//! assert!(String::from_utf8(out)?.contains("# Overhead  Command"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The reading and the making are two calls so that a caller can watch the reading's
//! progress ([`PerfReader::progress`]) and stop watching before symbolisation.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use perfdata_core::select::{in_ranges, resolve_time, TimeSpec};
use perfdata_core::{Error, PerfReader, Result};

use crate::callgraph::CallGraph;
use crate::fields::{Field, Layout};
use crate::filter::SampleFilter;
use crate::group::{group_view, GroupView};
use crate::model::{EventGroup, EventTable, Replay, SortKey};
use crate::readperf::{self, SampleCounts};
use crate::replay::{replay, Delivered, ReplayOptions};
use crate::symbolize::{kallsyms_in_background, SymbolOptions, Symbolizer};
use crate::symtab::SymbolTable;
use crate::table::Tally;
use crate::text::{self, Preamble};
use crate::unwind::UnwindStats;

/// perf 6.1's words where `-g` is given for a recording without callchains.
pub const NO_CALLCHAINS: &str = "Selected -g or --branch-history.\nBut no callchain or branch data.\nDid you call 'perf record' without -g or -b?";

/// What a report shows: perf's defaults (`--sort comm,dso,sym`, or `trace` where every
/// event is a tracepoint; no filter, children where callchains are, the recording's
/// groups) until a method says otherwise.
#[derive(Debug, Clone)]
pub struct Report {
    keys: Vec<SortKey>,
    filter: SampleFilter,
    children: bool,
    group: GroupView,
    symfs: Option<PathBuf>,
    unwind: bool,
    inline: bool,
    graph: Option<CallGraph>,
    /// Whether the call graph was asked for (perf's `-g` given), see
    /// [`Report::call_graph_asked`].
    graph_asked: bool,
    time: Option<(TimeSpec, String)>,
    percent_limit: f64,
    /// Whether `sort` set the keys (else they are perf's default).
    sorted: bool,
    fields: Option<Vec<Field>>,
    /// Whether the tables keep the entries a filter hides ([`Report::keep_filtered`]).
    keep_filtered: bool,
    /// Whether the text is `perf report -v`'s ([`Report::verbose`]).
    verbose: bool,
}

impl Default for Report {
    fn default() -> Self {
        Report::new()
    }
}

impl Report {
    /// perf report's defaults.
    pub fn new() -> Self {
        Report {
            keys: vec![SortKey::Comm, SortKey::Dso, SortKey::Sym],
            filter: SampleFilter::default(),
            children: true,
            group: GroupView::AsRecorded,
            symfs: None,
            unwind: true,
            inline: true,
            graph: Some(CallGraph::default()),
            graph_asked: false,
            time: None,
            percent_limit: 0.0,
            sorted: false,
            fields: None,
            keep_filtered: false,
            verbose: false,
        }
    }

    /// Keep the entries a filter hides, in [`EventTable::filtered`] (perf diff pairs
    /// them with the other recordings' entries, though it prints none of them).
    pub fn keep_filtered(mut self, on: bool) -> Self {
        self.keep_filtered = on;
        self
    }

    /// Print the text as `perf report -v` does: DSOs by their long names (paths), each
    /// symbol after its entry's address and the letter of the kind of file its DSO's
    /// symbols came from (see `verbose.rs`). The DSO cells are the long names in the
    /// JSON too; the command leaves this off for `--json`.
    pub fn verbose(mut self, on: bool) -> Self {
        self.verbose = on;
        self
    }

    /// The sort keys (perf's `--sort`).
    pub fn sort(mut self, keys: Vec<SortKey>) -> Self {
        self.keys = keys;
        self.sorted = true;
        self
    }

    /// The output fields (perf's `-F/--fields`): the columns printed and the order of
    /// the rows, with the sort keys as [`Layout`] makes them of these and of the keys
    /// [`Report::sort`] set, if it did.
    pub fn fields(mut self, fields: Vec<Field>) -> Self {
        self.fields = Some(fields);
        self
    }

    /// The layout of the output fields, if set.
    fn layout(&self) -> Option<Layout> {
        let fields = self.fields.as_deref()?;
        Some(Layout::new(fields, self.sorted.then_some(&self.keys[..])))
    }

    /// Which samples are counted (perf's `--pid`, `--tid`, `--comms`, `--cpu`,
    /// `--percentage`, and `--event`).
    pub fn filter(mut self, filter: SampleFilter) -> Self {
        self.filter = filter;
        self
    }

    /// Children and Self columns (perf's `--children`, on by default as in perf 6.1;
    /// off is `--no-children`). Either way, only for recordings with callchains.
    pub fn children(mut self, on: bool) -> Self {
        self.children = on;
        self
    }

    /// The call graph under each entry (perf's `-g`; perf's default graph unless set,
    /// None for `-g none`). Only for recordings with callchains.
    pub fn call_graph(mut self, graph: Option<CallGraph>) -> Self {
        self.graph = graph;
        self
    }

    /// The call graph was asked for (perf's `-g` given, not `-g none`): a recording file
    /// whose events sample no callchains is then refused, as perf 6.1's
    /// `report__setup_sample_type` refuses it (perf says so and exits 0 with an empty
    /// report; a pipe is not checked). Without it, such a recording's report is flat.
    pub fn call_graph_asked(mut self, asked: bool) -> Self {
        self.graph_asked = asked;
        self
    }

    /// Which event groups print as one table (perf's `--group`, `--no-group`); the JSON
    /// tables are per event whatever the view.
    pub fn group(mut self, view: GroupView) -> Self {
        self.group = view;
        self
    }

    /// Only the samples of these time ranges (perf's `--time`: `start,stop` in seconds,
    /// or percent slices of the recording's sample time span such as `10%/2`,
    /// `0%-10%,30%-40%`), `as_given` the argument, which perf repeats after each sample
    /// count.
    pub fn time(mut self, spec: TimeSpec, as_given: &str) -> Self {
        self.time = Some((spec, as_given.to_string()));
        self
    }

    /// Entries under this percent (of Children with `--children`, else of Overhead)
    /// are not printed, nor call graph nodes under it (perf's `--percent-limit`, which
    /// is also the call graph's threshold).
    pub fn percent_limit(mut self, limit: f64) -> Self {
        self.percent_limit = limit;
        if let Some(g) = &mut self.graph {
            g.threshold = limit;
        }
        self
    }

    /// Where binaries and debug files are looked for (perf's `--symfs`).
    pub fn symfs(mut self, dir: Option<PathBuf>) -> Self {
        self.symfs = dir;
        self
    }

    /// Whether the user stack copies of `--call-graph dwarf` samples are unwound (on by
    /// default, as perf always does; off, their callchains are the recorded kernel part).
    pub fn unwind(mut self, on: bool) -> Self {
        self.unwind = on;
        self
    }

    /// Whether the functions inlined at unwound frames are frames of the callchains,
    /// each a function of its own in the call graph and the Children rows (perf 6.1's
    /// `--inline`, on by default; off: `--no-inline`), see [`crate::inlines`].
    pub fn inline(mut self, on: bool) -> Self {
        self.inline = on;
        self
    }

    /// How the replay goes: unwinding as asked, binaries looked for as symbols are, the
    /// tracepoints' payloads kept where the `trace` key shows them.
    fn replay_options(&self) -> ReplayOptions {
        ReplayOptions {
            extra: self.keys.contains(&SortKey::Trace),
            // The order the call graph and the Children rows walk chains in, which
            // perf resolves LBR call stacks in.
            callchain_order: self.graph.unwrap_or_default().order_for(self.children),
            max_stack: self.graph.and_then(|g| g.max_stack),
            ..ReplayOptions::unwinding(self.unwind, self.symfs.clone())
        }
    }

    /// Read the recording, counting its samples as they come (none kept), and check the
    /// filters against it: a `--cpu` filter on samples without a CPU and an event the
    /// recording does not have are errors ([`Error::Select`]).
    pub fn read(mut self, reader: PerfReader) -> Result<Counted> {
        let meta = reader.meta();
        if self.graph_asked
            && self.graph.is_some()
            && meta.container != perfdata_core::ContainerKind::Pipe
            && !crate::table::has_callchains(meta)
        {
            return Err(Error::Select(NO_CALLCHAINS.into()));
        }
        let layout = self.layout();
        if let Some(l) = &layout {
            self.keys = l.keys.clone();
        } else if !self.sorted && crate::trace_keys::all_tracepoints(reader.meta()) {
            self.keys = vec![SortKey::Trace];
        }
        let kallsyms = kallsyms_in_background();
        let tally = Tally::with_filter(&self.keys, self.filter.clone())
            .with_traces_of(reader.meta())
            .keep_filtered(self.keep_filtered)
            .verbose(self.verbose);
        let mut tally = tally.with_callchains_of(reader.meta(), self.children, self.graph);
        if self.inline && self.unwind {
            tally = tally.with_inlines(SymbolOptions {
                symfs: self.symfs.clone(),
                kallsyms: None,
                buildid_dir: None,
            });
        }
        let mut cpu_less = false;
        // Percent slices need the SAMPLE_TIME feature, which a pipe does not have before
        // its samples: an error, as perf's ("no first/last sample time found").
        let ranges = match &self.time {
            Some((spec, _)) => resolve_time(spec, reader.meta())?,
            None => Vec::new(),
        };
        let replay = replay(reader, &self.replay_options(), |m, d| {
            let Delivered::Sample(s, extra) = d else {
                return;
            };
            if !in_ranges(&ranges, s.time.unwrap_or(0)) {
                return;
            }
            cpu_less |= s.cpu.is_none();
            tally.count_raw(m, s, extra.raw.as_deref())
        })?;
        if !self.filter.cpus.is_empty() && cpu_less {
            return Err(Error::Select(
                "--cpu: the recording's samples carry no CPU (record with --sample-cpu or -a)"
                    .into(),
            ));
        }
        let unknown = self.filter.unknown_events(&replay.event_names);
        if !unknown.is_empty() {
            return Err(Error::Select(format!(
                "--event {}: the recording's events are {}",
                unknown.join(", "),
                replay.event_names.join(", ")
            )));
        }
        Ok(Counted {
            report: self,
            layout,
            tally,
            replay,
            kallsyms,
        })
    }

    /// Read the recording at `path` (a file: it is read twice) for readperf's tables
    /// (stat.csv, overview.csv, processes.csv, results.csv), and what became of the
    /// stack copies; filters do not apply.
    pub fn readperf(
        self,
        reader: PerfReader,
        path: &Path,
    ) -> Result<(readperf::Tables, UnwindStats)> {
        let kallsyms = kallsyms_in_background();
        let mut counts = SampleCounts::default();
        let replay = replay(reader, &self.replay_options(), |_, d| {
            d.sample().inspect(|s| counts.count(s));
        })?;
        if path.as_os_str() == "-" {
            return Err(Error::Select(
                "--csv reads the recording twice: give a file, not standard input".into(),
            ));
        }
        let mut symbols = self.symbolizer(&replay, kallsyms);
        let tables = readperf::tables(path, &replay, &counts, &mut symbols)?;
        Ok((tables, replay.unwind))
    }

    /// The symbolizer for `replay`: the running kernel's symbols where they apply.
    fn symbolizer(&self, replay: &Replay, kallsyms: JoinHandle<Option<SymbolTable>>) -> Symbolizer {
        let opts = SymbolOptions::for_replay(replay, self.symfs.clone());
        // A failed read (or thread) leaves the kernel without symbols, as a missing file
        // does.
        Symbolizer::new(opts).with_kallsyms(kallsyms.join().ok().flatten())
    }
}

/// A recording read and its samples counted: [`Counted::tables`] names them.
pub struct Counted {
    report: Report,
    /// The output fields' layout, made of the keys as given.
    layout: Option<Layout>,
    tally: Tally,
    replay: Replay,
    kallsyms: JoinHandle<Option<SymbolTable>>,
}

impl Counted {
    /// What became of the samples' user stack copies (`--call-graph dwarf`).
    pub fn unwind(&self) -> &UnwindStats {
        &self.replay.unwind
    }

    /// What the reading could not use, to be said once each (a jitdump it could not
    /// read).
    pub fn warnings(&self) -> &[String] {
        &self.replay.warnings
    }

    /// Each event's attr type and config, by index ([`EventTable::index`]).
    pub fn event_ids(&self) -> &[(u32, u64)] {
        &self.replay.event_ids
    }

    /// Each event's name, by index ([`EventTable::index`]), samples or not.
    pub fn event_names(&self) -> &[String] {
        &self.replay.event_names
    }

    /// The report's tables, symbolised.
    pub fn tables(self) -> Tables {
        let Counted {
            report,
            layout,
            tally,
            replay,
            kallsyms,
        } = self;
        let mut symbols = report.symbolizer(&replay, kallsyms);
        let mut warnings = Vec::new();
        let mut tables = tally.tables(&replay, &mut symbols, &mut warnings);
        if let Some(l) = &layout {
            for t in &mut tables {
                l.sort_rows(&mut t.rows);
            }
        }
        let groups = report
            .group
            .groups(&replay.groups, replay.event_names.len());
        let preamble = Preamble {
            lost_samples: replay.lost_samples,
            single_comm: report.filter.single(SortKey::Comm).map(str::to_string),
            single_dso: report.filter.single(SortKey::Dso).map(str::to_string),
            single_sym: report.filter.single(SortKey::Sym).map(str::to_string),
            elided: report.filter.elided(&report.keys),
            time_slices: report.time.as_ref().map(|t| t.1.clone()),
            dso_filter: !report.filter.dsos.is_empty(),
        };
        let graph = report.graph.filter(|_| {
            tables
                .iter()
                .any(|t| t.rows.iter().any(|r| r.callchain.is_some()))
        });
        Tables {
            tables,
            graph,
            percent_limit: report.percent_limit,
            sym_first: report.keys.first() == Some(&SortKey::Sym) && layout.is_none(),
            layout,
            keys: report.keys,
            groups,
            event_names: replay.event_names,
            preamble,
            unwind: replay.unwind,
            quiet: false,
            warnings,
        }
    }
}

/// A report's tables, one per event, ready to print.
#[derive(Debug, Clone)]
pub struct Tables {
    tables: Vec<EventTable>,
    graph: Option<CallGraph>,
    percent_limit: f64,
    /// The output fields' columns and row order (`-F`), if given.
    layout: Option<Layout>,
    /// Whether the `--sort` (given, or perf's default) starts with `sym`, without output
    /// fields (with them perf prints the entry's symbol atop its graph, as measured).
    sym_first: bool,
    keys: Vec<SortKey>,
    groups: Vec<EventGroup>,
    event_names: Vec<String>,
    preamble: Preamble,
    unwind: UnwindStats,
    /// Whether the text leaves out its header lines (perf's `-q`).
    quiet: bool,
    /// What the tables could not show as perf does ([`Tables::warnings`]).
    warnings: Vec<String>,
}

impl Tables {
    /// The tables, one per event with samples (groups not folded).
    pub fn per_event(&self) -> &[EventTable] {
        &self.tables
    }

    /// What the tables could not show as perf does, to be said once each (a call graph
    /// built without the samples' order: its temporary file could not be written).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Leave the header lines (those starting with `#`) out of the text, as perf
    /// report's `-q/--quiet` does.
    pub fn quiet(mut self, on: bool) -> Tables {
        self.quiet = on;
        self
    }

    /// Print as perf 6.1's `perf report --stdio`, each shown group as one table;
    /// `samples` adds the Samples column (perf's `-n`) unless output fields were given.
    pub fn write_stdio(self, out: &mut dyn Write, samples: bool) -> io::Result<()> {
        let mut tables = group_view(self.tables, &self.groups, &self.event_names);
        // A group's rows too are in the fields' order.
        if let Some(l) = &self.layout {
            for t in &mut tables {
                l.sort_rows(&mut t.rows);
            }
        }
        // Last: rows are grouped and sorted by their plain cells.
        crate::verbose::apply(&mut tables, &self.keys);
        let view = text::View {
            samples,
            graph: self.graph.as_ref(),
            percent_limit: self.percent_limit,
            fields: self.layout.as_ref().map(|l| &l.columns[..]),
            sym_first: self.sym_first,
            quiet: self.quiet,
        };
        text::write_stdio(out, &tables, &self.keys, view, &self.preamble)
    }

    /// Print as JSON, a table per event (groups or not: a group's counts are its
    /// members' tables), with what became of the stack copies where there were any.
    pub fn write_json(&self, out: &mut dyn Write) -> io::Result<()> {
        let unwind = Some(&self.unwind).filter(|u| u.any());
        text::write_json(out, &self.tables, &self.keys, self.graph.as_ref(), unwind)
    }
}
