//! perf report's table: samples grouped by sort keys, one table per event, with sample
//! counts, period and percent of the event's period; cells are the strings perf prints.

use rustc_hash::FxHashMap;

use crate::callgraph::frames::FrameNamer;
use crate::callgraph::{CallGraph, Order};
use crate::children::Children;
use crate::filter::{Percentage, SampleFilter};
use crate::intern::{Chunked, Interner};
use crate::keys::{name_keys, raw_key, Creator, RawKey, Rows};
use crate::model::{EventTable, Replay, ResolvedSample, SortKey};
use crate::process::{Location, Machine};
use crate::same_names::SettledComms;
use crate::symbolize::Symbolizer;

mod rows;
use rows::named_tables;

/// A raw key's count: samples, period, the first sample, and whether the filters drop
/// it.
#[derive(Debug, Clone, Copy)]
struct Count {
    samples: u64,
    period: u64,
    /// The period of the samples no thread filter hid (whatever the first one's fate).
    kept: u64,
    creator: Creator,
    filtered: bool,
}

/// Samples counted one at a time (perf's hists), so that a report need not keep them:
/// [`Tally::add`] each, then [`Tally::tables`].
///
/// ```
/// use perfdata_report::replay;
/// use perfdata_report::symbolize::{SymbolOptions, Symbolizer};
/// use perfdata_report::model::SortKey;
/// use perfdata_report::table::Tally;
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-cpu-clock.data");
/// let keys = SortKey::parse_list("comm").unwrap();
/// let mut tally = Tally::new(&keys);
/// let reader = perfdata_core::PerfReader::open(std::path::Path::new(path))?;
/// let r = replay::replay(reader, &Default::default(), |machine, d| {
///     d.sample().inspect(|s| tally.count(machine, s));
/// })?;
/// let mut warnings = Vec::new();
/// let tables = tally.tables(&r, &mut Symbolizer::new(SymbolOptions::default()), &mut warnings);
/// assert_eq!(tables[0].samples, 279);
/// assert_eq!(tables[0].rows[0].cells, ["perfdata-spin"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Tally {
    keys: Vec<SortKey>,
    /// Each distinct raw key once, numbered, and its count in `values`.
    counts: Interner<RawKey>,
    values: Chunked<Count>,
    /// The key of the last sample and what its run has counted so far.
    last: Option<(RawKey, Count)>,
    seen: u64,
    filter: SampleFilter,
    /// The `--symbols` entries that are addresses ([`SampleFilter::symbol_addresses`]).
    symbol_addresses: Vec<u64>,
    /// The other `--symbols` entries, names.
    symbol_names: Vec<String>,
    /// The comm entry each sample is counted under.
    comms: SettledComms,
    /// Per event: samples and period before filtering (the absolute percent base).
    totals: Vec<(u64, u64)>,
    /// The samples' walks through their callchains, when children periods or call
    /// graphs are counted.
    children: Option<Children>,
    /// Whether children periods are counted (perf's `--children`).
    cumulate: bool,
    /// The call graph under each entry, if asked for.
    graph: Option<CallGraph>,
    /// The entries perf lists at unwound frames, when inlined functions are counted
    /// as perf's `--inline` does.
    inlines: Option<crate::inlines::InlineCounts>,
    /// The samples' trace texts, when a key is [`SortKey::Trace`].
    traces: Option<crate::trace_keys::TraceKeys>,
    /// Whether the tables keep the entries a filter hides (see
    /// [`EventTable::filtered`]).
    keep_filtered: bool,
    /// The order the samples' walks came in, where a call graph may hold an inlined
    /// function among siblings (inlined functions counted): perf's graphs there
    /// depend on it ([`crate::callgraph::appends`]).
    appends: Option<crate::callgraph::appends::Appends>,
    /// Whether rows carry what `perf report -v` prints ([`crate::verbose`]).
    verbose: bool,
}

impl Tally {
    /// Keep the entries a filter hides in [`EventTable::filtered`] (perf diff pairs
    /// them).
    pub fn keep_filtered(mut self, on: bool) -> Tally {
        self.keep_filtered = on;
        self
    }

    /// Give each row the cells `perf report -v` prints ([`crate::model::Row::verbose`]).
    pub fn verbose(mut self, on: bool) -> Tally {
        self.verbose = on;
        self
    }

    /// An empty tally for `keys`.
    pub fn new(keys: &[SortKey]) -> Tally {
        Tally {
            keys: keys.to_vec(),
            counts: Interner::default(),
            values: Chunked::default(),
            last: None,
            seen: 0,
            filter: SampleFilter::default(),
            symbol_addresses: Vec::new(),
            symbol_names: Vec::new(),
            comms: SettledComms::default(),
            totals: Vec::new(),
            children: None,
            cumulate: false,
            graph: None,
            inlines: None,
            traces: None,
            keep_filtered: false,
            appends: None,
            verbose: false,
        }
    }

    /// Name the samples' tracepoint payloads as perf's `trace` key does, for a recording
    /// whose metadata before its first record is `meta`: needed where a key is
    /// [`SortKey::Trace`], whose samples are counted with [`Tally::count_raw`].
    pub fn with_traces_of(mut self, meta: &perfdata_core::Metadata) -> Tally {
        if self.keys.contains(&SortKey::Trace) {
            self.traces = Some(crate::trace_keys::TraceKeys::new(meta));
        }
        self
    }

    /// Count the functions perf 6.1 lists inlined at unwound frames (its `--inline`,
    /// on by default) as frames of the callchains, finding binaries as `opts` says.
    pub fn with_inlines(mut self, opts: crate::symbolize::SymbolOptions) -> Tally {
        self.inlines = Some(crate::inlines::InlineCounts::new(opts));
        self
    }

    /// Also count children periods from the samples' callchains (perf's `--children`).
    pub fn with_children(mut self) -> Tally {
        self.children = Some(Children::default());
        self.cumulate = true;
        self
    }

    /// Also make the call graph under each entry from the samples' callchains.
    pub fn with_graph(mut self, graph: CallGraph) -> Tally {
        self.children.get_or_insert_with(Children::default);
        self.graph = Some(graph);
        self
    }

    /// [`Tally::with_children`] (if `children`) and [`Tally::with_graph`] (if `graph`)
    /// as perf 6.1 does for a recording whose metadata before its first record is
    /// `meta`: both are dropped silently when those events do not sample callchains;
    /// in a pipe (no events yet) the graph is kept and the children dropped.
    pub fn with_callchains_of(
        self,
        meta: &perfdata_core::Metadata,
        children: bool,
        graph: Option<CallGraph>,
    ) -> Tally {
        if meta.attrs().is_empty() {
            // A pipe: its events are not known when perf sets the report up, so perf
            // turns the call graph on (`use_callchain`) whatever they sample, and drops
            // `--children` (the empty sample_type has no CALLCHAIN) after the graph's
            // order was chosen for it: caller unless `--no-children` or `-g` says.
            return match graph {
                Some(mut g) => {
                    g.order = Some(g.order_for(children));
                    self.with_graph(g)
                }
                None => self,
            };
        }
        if !has_callchains(meta) {
            return self;
        }
        let t = if children { self.with_children() } else { self };
        match graph {
            Some(g) => t.with_graph(g),
            None => t,
        }
    }

    /// The order chains are walked in: the graph's, else perf's for the view.
    fn order(&self) -> Order {
        self.graph.unwrap_or_default().order_for(self.cumulate)
    }

    /// [`Tally::with_children`] as perf 6.1's `--children` for a recording whose metadata
    /// before its first record is `meta`: perf drops the option silently when those
    /// events (none in a pipe) do not sample callchains (`report__setup_sample_type`).
    pub fn with_children_of(self, meta: &perfdata_core::Metadata) -> Tally {
        if has_callchains(meta) {
            self.with_children()
        } else {
            self
        }
    }

    /// An empty tally for `keys` that counts what `filter` keeps (see [`Tally::count`]).
    pub fn with_filter(keys: &[SortKey], filter: SampleFilter) -> Tally {
        Tally {
            symbol_addresses: filter.symbol_addresses(),
            symbol_names: filter.symbol_names().map(str::to_string).collect(),
            filter,
            ..Tally::new(keys)
        }
    }

    /// Count one sample through the filter, as perf's hists do: a sample of another CPU
    /// is not counted at all; any other counts towards its event's total (the absolute
    /// percent base), and a row is shown or hidden by its first sample's thread (perf
    /// marks a hist entry filtered when it creates it, and adds later samples of the
    /// same key to it whatever their thread: after an exec, say, a row keyed without comm
    /// keeps the samples of the new name, and a `sh` sample of the child before its exec
    /// joins the shell's own `sh` row, hidden with it under `--pid CHILD`).
    pub fn count(&mut self, m: &Machine, s: &ResolvedSample) {
        self.count_raw(m, s, None);
    }

    /// [`Tally::count`] a sample whose RAW payload (a tracepoint's fields, see
    /// [`crate::replay::SampleExtra`]) is `raw`, which the `trace` key shows.
    pub fn count_raw(&mut self, m: &Machine, s: &ResolvedSample, raw: Option<&[u8]>) {
        if !self.filter.keeps_cpu(s) {
            return;
        }
        if self.totals.len() <= s.event {
            self.totals.resize(s.event + 1, (0, 0));
        }
        let t = &mut self.totals[s.event];
        t.0 += 1;
        t.1 += s.period;
        let filtered = !self.filter.keeps_thread(m, s);
        let comm = self.comms.of(m, &s.ip);
        let trace = self.traces.as_mut().and_then(|t| t.id(s.event, raw));
        self.add_marked(Some(m), s, filtered, comm, trace);
    }

    /// Count one sample (without inlined functions: their DSOs are the machine's).
    pub fn add(&mut self, s: &ResolvedSample) {
        self.add_marked(None, s, false, s.ip.comm, None);
    }

    /// Count one sample of comm entry `comm` and trace text `trace`, `filtered` if the
    /// row it may create is to be hidden.
    fn add_marked(
        &mut self,
        m: Option<&Machine>,
        s: &ResolvedSample,
        filtered: bool,
        comm: usize,
        trace: Option<u32>,
    ) {
        let ip = &s.ip;
        let mut k = raw_key(&self.keys, s, ip, comm);
        k.set_trace(trace);
        if !self.filter.symbols.is_empty() {
            k.locate(ip);
            // perf's address list matches the ip itself, where a map holds it.
            if ip.dso.is_some() && self.symbol_addresses.contains(&ip.ip) {
                k.set_address_listed();
            }
        }
        let order = self.order();
        let max_stack = self.graph.and_then(|g| g.max_stack);
        if let Some(children) = &mut self.children {
            // perf's --max-stack cuts no chain made of an LBR call stack.
            let (chain, unwound) = crate::max_stack::cut_chain(
                &s.callchain,
                max_stack.filter(|_| !s.lbr),
                order,
                s.unwound,
            );
            let inlines = &mut self.inlines;
            let mut count = |at: &Location| match (inlines.as_mut(), m) {
                (Some(i), Some(m)) => i.at(m, at),
                _ => 0,
            };
            let walk = crate::children::chain_keys(
                &self.keys, s, &chain, unwound, k, comm, order, &mut count,
            );
            let w = children.add(walk, s.period, ip.thread, self.seen, filtered);
            // The order also tells where perf splits an entry ([`crate::hist_split`]).
            if (self.graph.is_some() || self.cumulate) && self.inlines.is_some() {
                self.appends
                    .get_or_insert_with(Default::default)
                    .push(w, s.period);
            }
        }
        let first = self.seen;
        self.seen += 1;
        // Runs of samples with the same key (a hot loop) are counted before the map.
        if let Some((last, c)) = &mut self.last {
            if *last == k {
                c.samples += 1;
                c.period += s.period;
                c.kept += if filtered { 0 } else { s.period };
                return;
            }
        }
        self.flush_last();
        let c = Count {
            samples: 1,
            period: s.period,
            kept: if filtered { 0 } else { s.period },
            creator: Creator {
                first,
                thread: ip.thread,
                pos: 0,
                kernel: k.kernel(),
                ip: k.entry_ip(true),
                dso: k.dso_plus_one(),
            },
            filtered,
        };
        self.last = Some((k, c));
    }

    /// Move the current run into the map: a key's first run makes its count.
    fn flush_last(&mut self) {
        if let Some((k, c)) = self.last.take() {
            let (i, new) = self.counts.intern(k);
            if new {
                self.values.push(c);
            } else {
                let e = self.values.get_mut(i as usize);
                e.samples += c.samples;
                e.period += c.period;
                e.kept += c.kept;
            }
        }
    }

    /// The tables: one per event that has samples; `warnings` gets what they could not
    /// show as perf does (a call graph built without the samples' order, its spool
    /// failed), to be said once each.
    pub fn tables(
        mut self,
        replay: &Replay,
        symbols: &mut Symbolizer,
        warnings: &mut Vec<String>,
    ) -> Vec<EventTable> {
        self.flush_last();
        // The counting's symbols and DWARF go before the naming loads its own; the
        // inlined entries it found are the naming's, which so reads no DWARF again.
        let mut counts = Default::default();
        if let Some(inlines) = self.inlines.take() {
            let entries;
            (counts, entries) = inlines.finish();
            symbols.adopt_inline_entries(entries);
        }
        // A pending frame's entries, as the counting found them.
        let inlines = |dso: u32, addr: u64| {
            dso.checked_sub(1)
                .and_then(|d| counts.get(&(d as usize, addr)).copied())
                .unwrap_or(0)
        };
        let events = replay.event_names.len();
        // Every raw key named once, its row numbered (one DSO's symbols at a time).
        let order = self.order();
        let keys = self.counts.into_keys();
        let (child_keys, walks, frames) = match self.children.take().map(|c| c.keys(inlines)) {
            Some((k, locs, w)) => {
                let frames = self.graph.map(|g| FrameNamer::new(locs, g.key));
                (Some(k), Some(w), frames)
            }
            None => (None, None, None),
        };
        let mut frames = frames;
        let traces = self.traces.take().map(|t| t.into_texts());
        let mut rows = Rows::with_traces(traces.unwrap_or_default());
        let mut sets = vec![&keys];
        sets.extend(child_keys.as_ref());
        let mut kept = Vec::new();
        let listed =
            (!self.filter.symbols.is_empty()).then_some((&self.symbol_names[..], &mut kept));
        let named = name_keys(
            &self.keys,
            &sets,
            replay,
            symbols,
            &mut rows,
            frames.as_mut(),
            listed,
        );
        let (mut named, mut child_keys, mut walks) = (named, child_keys, walks);
        // Should the spool have failed, the graphs are built from the distinct chains
        // in the order they first came (see `Appends::finish`), and the forest says so
        // where a graph depends on the order; perf's entries are not split either.
        let (mut appended, mut lost) = match self.appends.take().map(|a| a.finish()) {
            Some(Ok(order)) => (Some(order), None),
            Some(Err(e)) => (None, Some(e)),
            None => (None, None),
        };
        if let (Some(e), None) = (&lost, &frames) {
            warnings.push(format!(
                "the order of the samples' call chains could not be kept in a temporary \
                 file ({e}): an inlined function perf makes two entries of is one row here"
            ));
            lost = None;
        }
        // perf's entries where its comparison is not one order: a function it makes
        // two entries of is two rows, its walks' frames counted to each as in perf.
        let (mut own_split, mut depth_split) = (FxHashMap::default(), FxHashMap::default());
        let mut kept_split: FxHashMap<(usize, u32), Creator> = FxHashMap::default();
        let mut parts = FxHashMap::default();
        if let (true, Some(ck), Some(w), Some(a)) = (
            self.cumulate,
            child_keys.as_mut(),
            walks.as_ref(),
            appended.as_ref(),
        ) {
            if let Some(r) = crate::hist_split::refine(
                &self.keys,
                replay,
                &mut rows,
                ck,
                &mut named[1],
                w,
                a,
                order,
                self.verbose,
                warnings,
            ) {
                (walks, appended) = (Some(r.walks), r.order);
                (own_split, depth_split, kept_split) = (r.own, r.depth, r.kept);
                parts = r.parts;
                // A key's copy is listed as the key is (the same function).
                if let Some(listed) = kept.get_mut(1) {
                    for &k in &r.copied_from {
                        let was = listed[k as usize];
                        listed.push(was);
                    }
                }
            }
        }
        // perf's --symbols: a sample outside the functions listed marks its entries
        // filtered, as a thread filter does.
        let unlisted =
            |set: usize, k: u32| kept.get(set).is_some_and(|v: &Vec<bool>| !v[k as usize]);
        let mut trees = FxHashMap::default();
        let mut children = None;
        if let (Some(child_keys), Some(walks)) = (&child_keys, &walks) {
            if let Some(f) = frames {
                let mut forest = walks.forest(
                    child_keys,
                    &named[1],
                    &f.frame_of,
                    order,
                    self.cumulate,
                    appended,
                    &parts,
                );
                if let Some(e) = lost {
                    forest.order_lost(e);
                }
                trees = forest.trees(f.keys, f.names, &f.places, warnings);
            }
            if self.cumulate {
                let mut tables = walks.rows(events, child_keys, &named[1], order, &|own| {
                    unlisted(1, own)
                });
                // The entry the collapse pass kept is printed as its sample made it.
                for (&(event, row), &c) in &kept_split {
                    if let Some(e) = tables.get_mut(event).and_then(|t| t.get_mut(&row)) {
                        e.creator = c;
                    }
                }
                for (&(event, row), &depth) in &depth_split {
                    if let Some(e) = tables.get_mut(event).and_then(|t| t.get_mut(&row)) {
                        e.rank = match order {
                            Order::Caller => i64::from(depth),
                            Order::Callee => -i64::from(depth),
                        };
                    }
                }
                children = Some(tables);
            }
        }
        drop((child_keys, walks));
        // Raw keys whose values perf's sort keys find equal are one hist entry, shown or
        // hidden by the earliest sample of any of them: a thread's `sh` before exec adds
        // to the shell's own `sh` row, filtered or not (see `SameNames`).
        let mut groups: Vec<FxHashMap<u32, Count>> = vec![FxHashMap::default(); events];
        // Per event: the period of the samples no filter hid (perf's
        // total_non_filtered_period, summed sample by sample).
        let mut kept = vec![0u64; events];
        for (i, ((k, c), &row)) in keys
            .iter()
            .zip(self.values.iter())
            .zip(&named[0])
            .enumerate()
        {
            let Some(g) = groups.get_mut(k.event()) else {
                continue;
            };
            let mut c = *c;
            c.filtered |= unlisted(0, i as u32);
            if !unlisted(0, i as u32) {
                kept[k.event()] += c.kept;
            }
            let e = g.entry(row).or_insert(Count {
                samples: 0,
                period: 0,
                kept: 0,
                ..c
            });
            e.samples += c.samples;
            e.period += c.period;
            if (c.creator.first, c.creator.pos) < (e.creator.first, e.creator.pos) {
                (e.creator, e.filtered) = (c.creator, c.filtered);
            }
        }
        rows::split_own(&mut groups, &own_split, &rows);
        for (&(event, row), &c) in &kept_split {
            if let Some(e) = groups.get_mut(event).and_then(|g| g.get_mut(&row)) {
                e.creator = c;
            }
        }
        drop(keys);
        drop(std::mem::take(&mut self.values));
        let relative = self.filter.percentage == Percentage::Relative;
        let totals = |e: usize| self.totals.get(e).copied();
        let keep = self.keep_filtered;
        let origins = self
            .verbose
            .then(|| crate::verbose::origins(replay, symbols));
        let mut tables = named_tables(
            replay,
            &rows,
            groups,
            children,
            trees,
            totals,
            relative,
            origins.as_deref(),
        );
        let elided = self.filter.elided(&self.keys);
        for t in &mut tables {
            if !keep {
                t.filtered.clear();
            }
            t.unfiltered_period = kept.get(t.index).copied().unwrap_or(0);
            crate::row_order::sort_rows(&mut t.rows, &self.keys, &elided);
        }
        tables.retain(|t| self.filter.keeps_event(&t.event));
        tables
    }
}

/// Whether the events of a recording whose metadata before its first record is `meta`
/// sample callchains.
pub(crate) fn has_callchains(meta: &perfdata_core::Metadata) -> bool {
    meta.attrs().iter().any(|e| {
        let st = e.attr.sample_type;
        st.contains(perfdata_core::attr::SampleType::CALLCHAIN)
    })
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
