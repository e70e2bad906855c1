//! `perf script`'s listing of samples, as perf 6.1 prints it
//! (tools/perf/builtin-script.c: `perf_sample__fprintf_start`, `process_event`, and
//! util/evsel_fprintf.c: `sample__fprintf_sym`): one line per sample with the command,
//! thread, CPU, time, period and event, then the ip with its symbol and DSO, or the
//! callchain one frame per line; a tracepoint's fields as libtraceevent prints them.
//! Samples come in perf's time order from the replay, each printed as it comes, so
//! memory does not grow with the samples.
//!
//! ```no_run
//! use perfdata_report::script::Script;
//!
//! let reader = perfdata_core::PerfReader::open(std::path::Path::new("perf.data"))?;
//! let mut out = std::io::BufWriter::new(std::io::stdout());
//! Script::new().write(reader, &mut out)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use perfdata_core::attr::SampleType;
use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::record::{AuxtraceInfo, RecordBody, RecordType};
use perfdata_core::select::{in_ranges, resolve_time, TimeRange, TimeSpec};
use perfdata_core::{Error, Metadata, PerfReader, Result};
use perfdata_view::tracing::TraceEvents;

use crate::filter::SampleFilter;
use crate::model::{Replay, ResolvedSample};
use crate::process::{Location, Machine};
use crate::replay::{replay, Delivered, ReplayOptions, SampleExtra, ShownRecord};
use crate::symbolize::{kallsyms_in_background, SymbolOptions, Symbolizer};
use crate::symtab::SymbolTable;

mod auxtrace;
pub mod fields;
mod inlined;
mod intel_pt;
mod line;
pub mod meminfo;
mod names;
mod refusal;
mod sample;
pub mod sideband;
pub mod stat;

use fields::{output_type, Field, FieldSpec, Fields, OUTPUT_TYPES};
pub use refusal::Refusal;

/// perf's PERF_MAX_STACK_DEPTH: perf script prints at most this many frames of a
/// recorded chain, and as many unwound ones (its default `--max-stack`).
const MAX_STACK: usize = 127;

/// What `perf script` prints and of which samples.
#[derive(Debug, Clone)]
pub struct Script {
    fields: FieldSpec,
    ns: bool,
    callchains: bool,
    filter: SampleFilter,
    time: Option<TimeSpec>,
    symfs: Option<PathBuf>,
    unwind: bool,
    inline: bool,
    max_stack: Option<usize>,
    shown: Vec<RecordType>,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            fields: FieldSpec::default(),
            ns: false,
            callchains: true,
            filter: SampleFilter::default(),
            time: None,
            symfs: None,
            unwind: true,
            inline: true,
            max_stack: None,
            shown: Vec::new(),
        }
    }
}

/// What a listing went through.
#[derive(Debug, Clone, Default)]
pub struct Listed {
    /// Samples printed.
    pub samples: u64,
    /// The replay's account of the recording (the machine as it ended, unwinding).
    pub unwind: crate::unwind::UnwindStats,
    /// What the reading found odd (a recording cut short) and what the replay could not
    /// use (a jitdump), to be said once each.
    pub warnings: Vec<String>,
    /// The view perf refuses for this recording, where it does: the listing stopped
    /// there (before its first line for a [`Refusal::Setup`]).
    pub refused: Option<Refusal>,
}

impl Script {
    /// perf script's default listing.
    pub fn new() -> Self {
        Self::default()
    }

    /// The fields, as `-F` arguments made them ([`FieldSpec::parse`]).
    pub fn fields(mut self, spec: FieldSpec) -> Self {
        self.fields = spec;
        self
    }

    /// Times in nanoseconds (perf's `--ns`).
    pub fn nanoseconds(mut self, on: bool) -> Self {
        self.ns = on;
        self
    }

    /// Callchains printed under each sample (on by default; perf's `-G` turns them off).
    pub fn callchains(mut self, on: bool) -> Self {
        self.callchains = on;
        self
    }

    /// Only the samples the filter keeps (`--pid`, `--tid`, `--comms`, `--cpu`).
    pub fn filter(mut self, filter: SampleFilter) -> Self {
        self.filter = filter;
        self
    }

    /// Only the samples in these times (perf's `--time`).
    pub fn time(mut self, spec: Option<TimeSpec>) -> Self {
        self.time = spec;
        self
    }

    /// Look for binaries under `dir` (perf's `--symfs`).
    pub fn symfs(mut self, dir: Option<PathBuf>) -> Self {
        self.symfs = dir;
        self
    }

    /// Unwind `--call-graph dwarf` stack copies (on by default, as in perf).
    pub fn unwind(mut self, on: bool) -> Self {
        self.unwind = on;
        self
    }

    /// List the functions inlined at unwound frames, as perf 6.1 does by default (its
    /// `--inline`; off: `--no-inline`): see [`crate::inlines`].
    pub fn inline(mut self, on: bool) -> Self {
        self.inline = on;
        self
    }

    /// At most `n` frames of each callchain (perf script's `--max-stack`; None: perf's
    /// default, 127): the first `n` of a recorded chain, and of a `--call-graph dwarf`
    /// chain the first `n` kernel frames and the first `n` unwound ones, the inlined
    /// functions perf lists at those not counted (see `max_stack.rs`). A chain made of
    /// an LBR call stack is not cut (perf's `--max-stack` only bounds where it looks for
    /// PERF_CONTEXT_USER in it, [`ReplayOptions::max_stack`]).
    pub fn max_stack(mut self, n: Option<usize>) -> Self {
        self.max_stack = n;
        self
    }

    /// Print the side-band records of these types among the samples, as perf's
    /// `--show-task-events` and the like do ([`sideband::TASK_EVENTS`], ...).
    pub fn show(mut self, types: &[RecordType]) -> Self {
        self.shown.extend_from_slice(types);
        self
    }

    /// Print the listing of `reader`'s recording into `out`, each sample as its turn
    /// comes. An error writing stops the listing and is returned.
    pub fn write(self, reader: PerfReader, out: &mut (dyn Write + Send)) -> Result<Listed> {
        let mut opts = ReplayOptions::unwinding(self.unwind, self.symfs.clone());
        opts.extra = true;
        opts.shown = self.shown.clone();
        opts.max_stack = self.max_stack;
        // perf script prints a `perf stat record` recording's counts whatever the view.
        opts.shown.extend_from_slice(stat::STAT_RECORDS);
        // An AUX area trace's decoder adds events, whose fields perf checks then.
        opts.shown.push(RecordType::AuxtraceInfo);
        // An Intel PT trace is decoded among the events: where its buffers are is read
        // first (perf queues them from the file's AUXTRACE records before it begins),
        // their bytes as the decoder reaches them.
        let (trace, too_large) = intel_pt::trace_of(&reader)?;
        // perf's --time bounds the decoding too (intel_pt_setup_time_ranges).
        let ranges = match &self.time {
            Some(spec) if trace.is_some() => resolve_time(spec, reader.meta())?,
            _ => Vec::new(),
        };
        let mut pt = trace
            .as_ref()
            .and_then(|t| intel_pt::PtListing::new(t, &ranges));
        if pt.is_some() {
            opts.shown.extend_from_slice(intel_pt::DECODER_RECORDS);
        }
        let mut printer = Printer::new(self, out);
        // A file's events are known before its first record: perf checks the fields
        // against them then, samples or not (a pipe's, at its first sample).
        if !reader.meta().attrs().is_empty() {
            if let Err(r) = printer.settle(&Arc::new(reader.meta().clone()), true) {
                return Ok(Listed {
                    refused: Some(r),
                    ..Listed::default()
                });
            }
        }
        // An Intel PT trace not decoded (a pipe's: read once, its buffers not queued)
        // is said, not left out without a word.
        let mut undecoded_pt = false;
        let replay = replay(reader, &opts, |m, d| match (d, pt.as_mut()) {
            (Delivered::Sample(s, x), None) => printer.sample(m, s, x),
            (Delivered::Record(r), None) => {
                if let RecordBody::AuxtraceInfo(i) = &r.record.body {
                    undecoded_pt |= i.type_ == crate::intel_pt::info::AUXTRACE_TYPE;
                }
                printer.record(m, r)
            }
            (Delivered::Due(_), None) => {}
            (d, Some(pt)) => intel_pt::deliver(&mut printer, pt, m, d),
        })?;
        let mut warnings = replay.warnings;
        if undecoded_pt && trace.is_none() && too_large.is_none() {
            warnings.push(
                "the Intel PT trace is not decoded (a pipe-mode recording, or a file \
                 without the AUXTRACE feature): only the recorded samples are listed"
                    .to_string(),
            );
        }
        warnings.extend(too_large);
        if let Some(pt) = pt.as_mut() {
            // perf decodes what is left at the end (`intel_pt_flush`).
            pt.run_to(&replay.machine, u64::MAX, &mut |m, l| printer.pt_line(m, l));
            if pt.errors != 0 {
                warnings.push(format!("{} instruction trace errors", pt.errors));
            }
        }
        // A buffer read as the decoder reached it and failed ended its queue there.
        if let Some(failed) = trace.as_ref().and_then(|t| t.store.failure()) {
            warnings.push(format!(
                "the Intel PT trace was decoded up to an error: {failed}"
            ));
        }
        let refused = printer.refused.take();
        let samples = printer.finish()?;
        Ok(Listed {
            samples,
            unwind: replay.unwind,
            warnings,
            refused,
        })
    }
}

/// How one event's samples are printed.
#[derive(Debug, Clone)]
struct EventOut {
    fields: Fields,
    name: String,
    callchain: bool,
    /// A tracepoint's id (its attr's config).
    tracepoint: Option<u64>,
    /// A software page-fault event: its addr is an address of the thread, named as ips
    /// are (perf's `sample_addr_correlates_sym`).
    addr_is_code: bool,
    /// Its weight is WEIGHT_STRUCT's (a 32-bit weight, then the instruction latency),
    /// not WEIGHT's u64.
    weight_struct: bool,
    /// A trace decoder's event (see [`auxtrace`]), not a recorded one.
    synthesized: bool,
    /// A BTS-style branch event (perf's `is_bts_event`): printed `ip => addr`.
    bts: bool,
    /// Its output type's fields were not set by `-F` (perf's `!output[type].user_set`):
    /// a BTS event's target is printed without `addr` asked for.
    default_fields: bool,
}

/// The listing's state between samples.
struct Printer<'o> {
    script: Script,
    out: &'o mut (dyn Write + Send),
    meta: Option<Arc<Metadata>>,
    events: Vec<EventOut>,
    /// Each output type's fields as last settled.
    types: [Fields; OUTPUT_TYPES],
    /// The attr types of the events trace decoders added.
    synthesized: Vec<u32>,
    /// How the events trace decoders added are printed (after the recorded ones in
    /// `events`).
    synth_outs: Vec<EventOut>,
    /// The synth field of the synthesized sample being printed.
    synth_text: Option<String>,
    /// The target of the synthesized branch being printed.
    branch_to: Option<Location>,
    name_width: usize,
    ranges: Vec<TimeRange>,
    traces: Option<TraceEvents>,
    symbols: Option<Symbolizer>,
    kallsyms: Option<std::thread::JoinHandle<Option<SymbolTable>>>,
    buf: Vec<u8>,
    /// Frame texts already written, by DSO and address.
    names: names::FrameNames,
    /// The numbers of the line written last.
    memos: line::Memos,
    printed: u64,
    /// The widest data source column printed yet (perf's static `maxlen`).
    data_src_width: usize,
    /// The counts of a `perf stat record` recording.
    stat: stat::StatListing,
    error: Option<Error>,
    /// The view perf refuses, met on the way: the listing stops there.
    refused: Option<Refusal>,
}

impl<'o> Printer<'o> {
    fn new(script: Script, out: &'o mut (dyn Write + Send)) -> Self {
        Printer {
            script,
            out,
            meta: None,
            events: Vec::new(),
            types: [Fields::default(); OUTPUT_TYPES],
            synthesized: Vec::new(),
            synth_outs: Vec::new(),
            synth_text: None,
            branch_to: None,
            name_width: 0,
            ranges: Vec::new(),
            traces: None,
            symbols: None,
            kallsyms: Some(kallsyms_in_background()),
            buf: Vec::with_capacity(1 << 16),
            names: names::FrameNames::new(),
            memos: line::Memos::default(),
            printed: 0,
            data_src_width: 0,
            stat: stat::StatListing::new(),
            error: None,
            refused: None,
        }
    }

    fn finish(mut self) -> Result<u64> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.flush();
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        Ok(self.printed)
    }

    fn flush(&mut self) {
        if let Err(e) = self
            .out
            .write_all(&self.buf)
            .and_then(|()| self.out.flush())
        {
            self.error = Some(Error::io("writing the listing", e));
        }
        self.buf.clear();
    }

    /// Settle the fields and names of the events of `meta` (again when a pipe's
    /// metadata grew); `setup`: before the first record (a file's events), where perf
    /// refuses a field the events lack otherwise than during the processing.
    fn settle(&mut self, meta: &Arc<Metadata>, setup: bool) -> std::result::Result<(), Refusal> {
        let types = match self.script.fields.settle(meta, self.script.callchains) {
            Ok(t) => t,
            Err(e) if setup => return Err(Refusal::Setup(e.to_string())),
            Err(e) => return Err(Refusal::Processing(e.to_string())),
        };
        self.types = types;
        if !self.script.filter.cpus.is_empty()
            && meta
                .attrs()
                .iter()
                .any(|a| !a.attr.sample_type.contains(SampleType::CPU))
        {
            return Err(Refusal::Setup(
                "File does not contain CPU events. Remove -C option to proceed.".into(),
            ));
        }
        self.events = meta
            .attrs()
            .iter()
            .enumerate()
            .map(|(i, a)| EventOut {
                fields: types[output_type(a.attr.type_).min(OUTPUT_TYPES - 1)],
                name: meta.event_name(i),
                callchain: a.attr.sample_type.contains(SampleType::CALLCHAIN),
                tracepoint: (a.attr.type_ == 2).then_some(a.attr.config),
                addr_is_code: a.attr.type_ == 1 && matches!(a.attr.config, 2 | 5 | 6),
                weight_struct: !a.attr.sample_type.contains(SampleType::WEIGHT),
                synthesized: false,
                bts: false,
                default_fields: false,
            })
            .collect();
        self.events.extend(self.synth_outs.iter().cloned());
        if let Some(spec) = &self.script.time {
            self.ranges =
                resolve_time(spec, meta).map_err(|e| Refusal::Processing(e.to_string()))?;
        }
        if self.traces.is_none() && self.events.iter().any(|e| e.tracepoint.is_some()) {
            self.traces = perfdata_core::tracing::tracing_blob(meta).and_then(TraceEvents::parse);
        }
        self.meta = Some(meta.clone());
        Ok(())
    }

    /// The symbolizer, made at the first address to name: the kernel's symbols are
    /// chosen from what the recording says of its kernel by then.
    fn symbols(&mut self, m: &Machine) -> &mut Symbolizer {
        if self.symbols.is_none() {
            let meta = self.meta.as_deref();
            let string_feature = |id| match meta.and_then(|m| m.feature(id)) {
                Some(Feature::Hostname(s)) | Some(Feature::OsRelease(s)) => Some(s.to_string()),
                _ => None,
            };
            let now = Replay {
                machine: m.clone(),
                event_names: Vec::new(),
                event_ids: Vec::new(),
                hostname: string_feature(FeatureId::Hostname),
                osrelease: string_feature(FeatureId::OsRelease),
                lost_samples: 0,
                groups: Vec::new(),
                unwind: Default::default(),
                warnings: Vec::new(),
            };
            let opts = SymbolOptions::for_replay(&now, self.script.symfs.clone());
            let table = self.kallsyms.take().and_then(|k| k.join().ok().flatten());
            self.symbols = Some(Symbolizer::new(opts).with_kallsyms(table));
        }
        self.symbols.as_mut().expect("made above")
    }

    /// Settle the events again if `meta` is new; false once an error or a refusal stopped the listing.
    fn follow(&mut self, meta: &Option<Arc<Metadata>>) -> bool {
        if self.error.is_some() || self.refused.is_some() {
            return false;
        }
        if let Some(meta) = meta {
            if !self.meta.as_ref().is_some_and(|old| Arc::ptr_eq(old, meta)) {
                if let Err(r) = self.settle(meta, false) {
                    self.refused = Some(r);
                    return false;
                }
            }
        }
        true
    }

    fn sample(&mut self, m: &Machine, s: &ResolvedSample, x: &SampleExtra) {
        if !self.follow(&x.meta) {
            return;
        }
        if !in_ranges(&self.ranges, s.time.unwrap_or(0))
            || !self.script.filter.keeps_thread(m, s)
            || !self.script.filter.keeps_cpu(s)
        {
            return;
        }
        let Some(ev) = self.events.get(s.event) else {
            return;
        };
        let f = ev.fields;
        if f.0 == 0 {
            return;
        }
        if f.has(Field::Event) && self.name_width == 0 {
            self.name_width = self.events.iter().map(|e| e.name.len()).max().unwrap_or(0);
        }
        self.print(m, s, x, s.event);
        self.printed += 1;
        if self.buf.len() >= 1 << 16 {
            self.flush();
        }
    }

    /// perf's `process_attr` for the events the decoder of the trace `info` describes
    /// adds: each checked against `-F` where no event of its attr type came before.
    fn synthesize(&mut self, info: &AuxtraceInfo) -> Result<()> {
        let Some(meta) = self.meta.clone() else {
            return Ok(());
        };
        let events = auxtrace::synthesized_events(info, meta.attrs());
        for event in &events {
            let attr = &event.attr;
            let seen = meta.attrs().iter().any(|a| a.attr.type_ == attr.type_)
                || self.synthesized.contains(&attr.type_);
            self.synthesized.push(attr.type_);
            if seen {
                continue;
            }
            let name = match event.name {
                Some(n) => n.to_string(),
                None => perfdata_core::names::attr_name(attr, &meta),
            };
            (self.script.fields).check_synthesized(&mut self.types, attr, &name, &meta)?;
        }
        for event in events {
            let attr = &event.attr;
            let out = EventOut {
                fields: self.types[output_type(attr.type_)],
                name: match event.name {
                    Some(n) => n.to_string(),
                    None => perfdata_core::names::attr_name(attr, &meta),
                },
                callchain: false,
                tracepoint: None,
                addr_is_code: false,
                weight_struct: false,
                synthesized: true,
                bts: attr.type_ == 0 && attr.config & 4 != 0 && attr.sample_period == 1,
                default_fields: !self.script.fields.types[output_type(attr.type_)].user,
            };
            self.events.push(out.clone());
            self.synth_outs.push(out);
        }
        Ok(())
    }

    /// A side-band record's line: the sample's start (comm, pid/tid, CPU, time, as the
    /// fields of its event ask) and the record's text.
    fn record(&mut self, m: &Machine, r: &ShownRecord) {
        if !self.follow(&r.meta) {
            return;
        }
        if let RecordBody::AuxtraceInfo(info) = &r.record.body {
            if let Err(e) = self.synthesize(info) {
                self.refused = Some(Refusal::Processing(e.to_string()));
            }
            return;
        }
        if stat::STAT_RECORDS.contains(&r.record.record_type()) {
            // Not filtered: perf's stat handlers take no sample.
            if let Some(meta) = &self.meta {
                if let Err(e) = self.stat.record(meta, &r.record, r.offset, &mut self.buf) {
                    self.error = Some(e);
                }
            }
            return;
        }
        // Records the trace decoder wanted are not printed unless asked for.
        if !self.script.shown.contains(&r.record.record_type())
            || !self.script.filter.keeps_record_cpu(r.cpu)
        {
            return;
        }
        let Some(ev) = self.events.get(r.event) else {
            return;
        };
        let chain = self.script.callchains && ev.callchain;
        let comm = r
            .thread
            .and_then(|t| m.comms.get(m.threads[t].comm))
            .map_or(":-1", String::as_str);
        let (f, ns) = (ev.fields, self.script.ns);
        line::start(
            &mut self.buf,
            &mut self.memos,
            f,
            chain,
            ns,
            comm,
            r.pid,
            r.tid,
            r.cpu,
            r.time,
        );
        sideband::record_text(&mut self.buf, &r.record);
        if self.buf.len() >= 1 << 16 {
            self.flush();
        }
    }
}
