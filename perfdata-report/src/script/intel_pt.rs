//! An Intel PT trace's samples in the listing, as perf 6.1's perf script interleaves
//! them with the recorded events (intel-pt.c `intel_pt_process_event`): before each
//! event with a time every queue is decoded up to it ([`crate::intel_pt::queues`]),
//! its synthesized samples (`psb`, `cbr`, `branches`) and errors printed as they come;
//! then the event's own effect: a context switch sets its CPU's current thread
//! (`intel_pt_context_switch`), which the CPU's queue decodes as next time it runs
//! (`intel_pt_set_pid_tid_cpu`).
//!
//! Nothing decoded is kept: each state is printed when its queue hands it out. Where
//! the AUX buffers are is read before the listing (as perf queues them from the file's
//! AUXTRACE records up front); each buffer's bytes are read when its queue's decoder
//! reaches it and dropped at its end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use perfdata_core::record::{RecordBody, RecordType};

use crate::intel_pt::decoder::Decoder;
use crate::intel_pt::dso_data::DsoData;
use crate::intel_pt::info::IntelPtInfo;
use crate::intel_pt::queues::{Output, Queues, TscRange};
use crate::intel_pt::state::{InsnWalker, State, WalkError};
use crate::intel_pt::synth::{self, Synth};
use crate::intel_pt::Trace;
use crate::process::{DsoId, Location, Machine, Maps, ThreadId};
use crate::replay::{Delivered, SampleExtra, ShownRecord};
use perfdata_core::feature::FeatureId;
use perfdata_core::select::TimeRange;
use perfdata_core::{PerfReader, Result};

use super::fields::Field;
use super::{in_ranges, Printer};

/// The record types perf hands to the decoder whose time or effect matters to it,
/// beyond those the listing shows: each is a point the queues are decoded up to.
pub(super) const DECODER_RECORDS: &[RecordType] = &[
    RecordType::Mmap,
    RecordType::Mmap2,
    RecordType::Comm,
    RecordType::Fork,
    RecordType::Exit,
    RecordType::Switch,
    RecordType::SwitchCpuWide,
    RecordType::ItraceStart,
    RecordType::Aux,
    RecordType::Lost,
    RecordType::Throttle,
    RecordType::Unthrottle,
    RecordType::Namespaces,
    RecordType::Ksymbol,
    RecordType::BpfEvent,
    RecordType::Cgroup,
    RecordType::TextPoke,
];

/// PERF_RECORD_MISC_SWITCH_OUT.
const SWITCH_OUT: u16 = 1 << 13;

/// What the walker looks ips up in, as of the event the queues are decoded up to: a
/// copy of the maps it needs (the kernel's, and each queue's thread's), refreshed when
/// they change, and the DSOs' data status shared with the listing's other readers.
#[derive(Default)]
struct WalkContext {
    data: DsoData,
    kernel_start: u64,
    kernel: (u64, Maps),
    /// By queue: the thread and its maps' generation, and the copy.
    user: HashMap<u32, (Option<(ThreadId, u64)>, Maps)>,
}

impl WalkContext {
    fn dso_of(&self, queue: u32, ip: u64) -> Option<DsoId> {
        let maps = if ip >= self.kernel_start {
            &self.kernel.1
        } else {
            &self.user.get(&queue)?.1
        };
        maps.find(ip).map(|m| m.dso)
    }
}

/// The DSO key of the status table: its id in the machine.
fn key(d: DsoId) -> String {
    d.to_string()
}

/// perf's walker for one queue, which can read no code (see `dso_data`).
struct Walker {
    queue: u32,
    ctx: Arc<Mutex<WalkContext>>,
}

impl InsnWalker for Walker {
    fn walk(&mut self, ip: u64, to_ip: u64, _nr: bool) -> Result<(), WalkError> {
        if to_ip != 0 && ip == to_ip {
            return Ok(());
        }
        let mut ctx = self.ctx.lock().unwrap_or_else(|p| p.into_inner());
        let dso = ctx.dso_of(self.queue, ip).map(key);
        Err(ctx.data.walk(dso.as_deref()))
    }
}

/// One synthesized line for the printer.
pub(super) enum Line<'a> {
    /// A synthesized sample: its event's name, the sample, its addr (branches), and
    /// its synth field's text (psb, cbr).
    Sample {
        /// The synthesized event's name.
        event: &'static str,
        /// The sample, resolved in the queue's thread.
        sample: crate::model::ResolvedSample,
        /// A branch's target.
        addr: Option<u64>,
        /// The sample's addr (perf's `sample->addr = state->to_ip`, what `-F addr`
        /// prints, for every synthesized sample: a `psb` after a resync has its FUP's
        /// ip there).
        to_ip: u64,
        /// The synth field.
        synth: Option<String>,
    },
    /// An error line (`auxtrace_error__fprintf`), newline included.
    Error(&'a str),
}

/// The listing's Intel PT decoding.
pub(super) struct PtListing<'t> {
    info: IntelPtInfo,
    queues: Queues<'t, Walker>,
    ctx: Arc<Mutex<WalkContext>>,
    /// Each queue's CPU.
    queue_cpu: HashMap<u32, i32>,
    /// Each CPU's current (pid, tid) (perf's `machine__set_current_tid`).
    current: HashMap<i32, (i32, i32)>,
    /// perf's `cbr2khz`.
    khz_per_cbr: u64,
    /// Errors printed (perf's "N instruction trace errors" warning).
    pub(super) errors: u64,
}

impl<'t> PtListing<'t> {
    /// The decoding of `trace` within the time `ranges` (perf time, none: all); None
    /// without Intel PT's AUXTRACE_INFO.
    pub(super) fn new(trace: &'t Trace, ranges: &[TimeRange]) -> Option<PtListing<'t>> {
        let info = trace.info?;
        let ctx: Arc<Mutex<WalkContext>> = Arc::default();
        let queue_cpu = trace.buffers.iter().map(|b| (b.idx, b.cpu)).collect();
        let ranges = ranges
            .iter()
            .map(|r| TscRange {
                start: if r.start != 0 {
                    tsc_start(&info, r.start)
                } else {
                    0
                },
                end: if r.end != 0 { tsc_end(&info, r.end) } else { 0 },
            })
            .collect();
        let queues = Queues::with_ranges(
            trace
                .queue_indexes()
                .into_iter()
                .map(|q| {
                    let walker = Walker {
                        queue: q,
                        ctx: ctx.clone(),
                    };
                    (q, Decoder::new(trace.params, trace.queue(q), walker))
                })
                .collect(),
            ranges,
        );
        // perf: TSC frequency over the maximum non-turbo ratio, in kHz.
        let tsc_freq = ns_to_ticks(&info, 1_000_000_000);
        let ratio = match info.max_non_turbo_ratio {
            0 => ((tsc_freq + 50_000_000) / 100_000_000) as u32,
            r => r,
        };
        let khz_per_cbr = tsc_freq / u64::from(ratio.max(1)) / 1000;
        let mut info = info;
        info.max_non_turbo_ratio = ratio;
        Some(PtListing {
            info,
            queues,
            ctx,
            queue_cpu,
            current: HashMap::new(),
            khz_per_cbr,
            errors: 0,
        })
    }

    /// Bring the walker's copy of the maps up to `m` for every queue's thread.
    fn refresh(&mut self, m: &Machine) {
        let mut ctx = self.ctx.lock().unwrap_or_else(|p| p.into_inner());
        let kernel = m.kernel_maps();
        if ctx.kernel.0 != kernel.generation() || ctx.kernel_start == 0 {
            ctx.kernel = (kernel.generation(), kernel.clone());
            ctx.kernel_start = kernel_start(m);
        }
        for (&q, &cpu) in &self.queue_cpu {
            let thread = self
                .current
                .get(&cpu)
                .and_then(|&(_, tid)| m.thread_of(tid));
            let now = thread.map(|t| (t, m.maps_of(t).generation()));
            let entry = ctx.user.entry(q).or_default();
            if entry.0 != now {
                entry.1 = thread.map(|t| m.maps_of(t).clone()).unwrap_or_default();
                entry.0 = now;
            }
        }
    }

    /// Decode every queue up to perf time `time` (`u64::MAX`: to the end), handing
    /// each line to `print` as it comes; `print` returns the DSO of the ip it printed a
    /// sample at (perf script reads the instruction there: the DSO's status turns to
    /// error).
    pub(super) fn run_to(
        &mut self,
        m: &Machine,
        time: u64,
        print: &mut dyn FnMut(&Machine, Line<'_>) -> Option<DsoId>,
    ) {
        if time == 0 {
            return;
        }
        self.refresh(m);
        let tsc = if time == u64::MAX {
            u64::MAX
        } else {
            self.info.tc.to_tsc(time)
        };
        let (info, khz, ctx) = (self.info, self.khz_per_cbr, self.ctx.clone());
        let (queue_cpu, current) = (&self.queue_cpu, &self.current);
        let mut errors = 0;
        let mut text = String::new();
        self.queues.process(tsc, &mut |o| match o {
            Output::Sample { queue, state, time } => {
                let cpu = queue_cpu.get(&queue).copied().unwrap_or(-1);
                let who = current.get(&cpu).copied();
                let ns = info.tc.to_perf_time(time);
                for s in synth::samples(&state) {
                    let (event, ip, addr) = match s {
                        Synth::Psb { ip, .. } => ("psb", ip, None),
                        Synth::Cbr { ip, .. } => ("cbr", ip, None),
                        Synth::Branch { from, to } => ("branches", from, Some(to)),
                    };
                    let field = synth::synth_field(&s, khz, info.max_non_turbo_ratio);
                    let sample = resolved(m, &ctx, who, cpu, ns, ip);
                    let line = Line::Sample {
                        event,
                        sample,
                        addr,
                        to_ip: state.to_ip,
                        synth: field,
                    };
                    if let Some(d) = print(m, line) {
                        let mut c = ctx.lock().unwrap_or_else(|p| p.into_inner());
                        c.data.failed_read(&key(d));
                    }
                }
            }
            Output::Error { queue, state, time } => {
                errors += 1;
                let cpu = queue_cpu.get(&queue).copied().unwrap_or(-1);
                let (pid, tid) = pid_tid(m, current.get(&cpu).copied());
                text.clear();
                error_line(&mut text, &state, info.tc.to_perf_time(time), cpu, pid, tid);
                print(m, Line::Error(&text));
            }
        });
        self.errors += errors;
    }

    /// A record's effect on the decoding, after the queues ran up to it: a context
    /// switch or ITRACE_START names its CPU's current thread.
    pub(super) fn record(&mut self, r: &ShownRecord) {
        let cpu = r.cpu as i32;
        let switch = matches!(
            r.record.record_type(),
            RecordType::Switch | RecordType::SwitchCpuWide
        );
        let out = r.record.header.misc & SWITCH_OUT != 0;
        match &r.record.body {
            RecordBody::SwitchCpuWide(s) if out => {
                self.current.insert(cpu, (s.next_prev_pid, s.next_prev_tid));
            }
            // intel_pt_context_switch_in: the thread switched in, if not already.
            _ if switch && !out && self.current.get(&cpu).map(|c| c.1) != Some(r.tid) => {
                self.current.insert(cpu, (r.pid, r.tid));
            }
            RecordBody::ItraceStart(s) if self.info.per_cpu_mmaps => {
                self.current.insert(cpu, (s.pid, s.tid));
            }
            _ => {}
        }
    }

    /// A recorded sample perf script printed at a DSO: its status turns to error.
    pub(super) fn read_failed(&mut self, d: DsoId) {
        let mut c = self.ctx.lock().unwrap_or_else(|p| p.into_inner());
        c.data.failed_read(&key(d));
    }

    /// A `[vdso]` map of thread `t`: perf reads the ELF type of every `/` DSO the
    /// thread maps (`machine__thread_dso_type`), none readable.
    pub(super) fn vdso_mapped(&mut self, m: &Machine, t: ThreadId) {
        let mut c = self.ctx.lock().unwrap_or_else(|p| p.into_inner());
        for map in m.maps_of(t).iter() {
            if m.dsos[map.dso].long_name.starts_with('/') {
                c.data.failed_read(&key(map.dso));
            }
        }
    }
}

/// Hand `d` to the decoding and the printer in perf's order: the queues decoded up to
/// the event first, then the event (printed, and its effect on the decoding).
pub(super) fn deliver(
    printer: &mut Printer<'_>,
    pt: &mut PtListing<'_>,
    m: &Machine,
    d: Delivered<'_>,
) {
    match d {
        Delivered::Sample(s, x) => {
            pt.run_to(m, s.time.unwrap_or(0), &mut |m, l| printer.pt_line(m, l));
            let before = printer.printed;
            printer.sample(m, s, x);
            if let (true, Some(d)) = (printer.printed > before, s.ip.dso) {
                pt.read_failed(d);
            }
        }
        Delivered::Due(r) => {
            if r.time != u64::MAX {
                pt.run_to(m, r.time, &mut |m, l| printer.pt_line(m, l));
            }
        }
        Delivered::Record(r) => {
            pt.record(r);
            if let (RecordBody::Mmap2(mm), Some(t)) = (&r.record.body, r.thread) {
                if mm.filename.as_str_lossy() == "[vdso]" {
                    pt.vdso_mapped(m, t);
                }
            }
            printer.record(m, r);
        }
    }
}

/// The Intel PT trace of the recording `reader` reads, when it has one (where its
/// buffers are, read again from its file: perf queues every AUX buffer before it
/// begins); None for a pipe. With a warning where a buffer is too large to decode
/// ([`crate::intel_pt::MAX_BUFFER_BYTES`]).
pub(super) fn trace_of(
    reader: &PerfReader,
) -> Result<(Option<crate::intel_pt::Trace>, Option<String>)> {
    let meta = reader.meta();
    let has_pt = meta.feature(FeatureId::AuxTrace).is_some();
    let path = reader.path();
    if !has_pt || !path.is_file() {
        return Ok((None, None));
    }
    let trace = crate::intel_pt::read_trace(PerfReader::open(path)?)?;
    let warning = (trace.too_large > 0).then(|| {
        format!(
            "an Intel PT AUX buffer ({} bytes) is larger than perfdata decodes ({} bytes): \
             only the recorded samples are listed",
            trace.too_large,
            crate::intel_pt::MAX_BUFFER_BYTES
        )
    });
    Ok((trace.info.is_some().then_some(trace), warning))
}

impl Printer<'_> {
    /// A line of the Intel PT decoding: a synthesized sample printed as its event's
    /// (returning the DSO of its ip, whose code perf script then reads), or an error.
    pub(super) fn pt_line(&mut self, m: &Machine, line: Line<'_>) -> Option<crate::process::DsoId> {
        if self.error.is_some() {
            return None;
        }
        let (event, mut sample, addr, to_ip, synth) = match line {
            Line::Error(text) => {
                self.buf.extend_from_slice(text.as_bytes());
                return None;
            }
            Line::Sample {
                event,
                sample,
                addr,
                to_ip,
                synth,
            } => (event, sample, addr, to_ip, synth),
        };
        let i = self
            .events
            .iter()
            .position(|e| e.synthesized && e.name == event)?;
        if !in_ranges(&self.ranges, sample.time.unwrap_or(0))
            || !self.script.filter.keeps_thread(m, &sample)
            || !self.script.filter.keeps_cpu(&sample)
            || self.events[i].fields.0 == 0
        {
            return None;
        }
        if self.events[i].fields.has(Field::Event) && self.name_width == 0 {
            self.name_width = self.events.iter().map(|e| e.name.len()).max().unwrap_or(0);
        }
        sample.event = i;
        self.synth_text = synth;
        let thread = (sample.ip.thread != usize::MAX).then_some(sample.ip.thread);
        let kernel_start = if sample.ip.kernel { 0 } else { u64::MAX };
        self.branch_to = addr.map(|a| {
            // The target's mode: the source's, else the other (perf's thread__find_map_fb).
            let at = locate(m, thread, a, kernel_start);
            if at.dso.is_some() {
                at
            } else {
                locate(m, thread, a, u64::MAX - kernel_start)
            }
        });
        // perf's synthesized sample starts zeroed (`{ .ip = 0, }`): data_src 0, where a
        // recorded one without it has PERF_MEM_DATA_SRC_NONE.
        let extra = SampleExtra {
            addr: Some(to_ip),
            data_src: Some(0),
            ..SampleExtra::default()
        };
        self.print(m, &sample, &extra, i);
        self.synth_text = None;
        self.branch_to = None;
        self.printed += 1;
        if self.buf.len() >= 1 << 16 {
            self.flush();
        }
        sample.ip.dso
    }
}

/// perf's `intel_pt_ns_to_ticks`: `ns` in TSC ticks (no time zero).
fn ns_to_ticks(info: &IntelPtInfo, ns: u64) -> u64 {
    let (mult, shift) = (u64::from(info.tc.time_mult.max(1)), info.tc.time_shift);
    ((ns / mult) << shift) + (((ns % mult) << shift) / mult)
}

/// perf's `intel_pt_tsc_start`: the least TSC whose perf time is `ns` or later.
fn tsc_start(info: &IntelPtInfo, ns: u64) -> u64 {
    let tc = &info.tc;
    let mut tsc = tc.to_tsc(ns);
    while tsc > 0 && tc.to_perf_time(tsc) >= ns {
        tsc -= 1;
    }
    while tc.to_perf_time(tsc) < ns {
        tsc += 1;
    }
    tsc
}

/// perf's `intel_pt_tsc_end`: the greatest TSC whose perf time is `ns` or earlier.
fn tsc_end(info: &IntelPtInfo, ns: u64) -> u64 {
    let tc = &info.tc;
    let mut tsc = tc.to_tsc(ns);
    while tsc < u64::MAX && tc.to_perf_time(tsc) <= ns {
        tsc += 1;
    }
    while tsc > 0 && tc.to_perf_time(tsc) > ns {
        tsc -= 1;
    }
    tsc
}

/// perf's `machine__kernel_start`: where the kernel's image is mapped (2^63 unknown).
fn kernel_start(m: &Machine) -> u64 {
    m.kernel_maps()
        .iter()
        .filter(|map| m.dsos[map.dso].kernel)
        .map(|map| map.start)
        .min()
        .unwrap_or(1 << 63)
}

/// The queue's pid and tid (perf's `ptq->pid`, `ptq->tid`): the CPU's current tid and
/// the pid of its thread (-1 unknown).
fn pid_tid(m: &Machine, who: Option<(i32, i32)>) -> (i32, i32) {
    match who {
        Some((pid, tid)) => {
            let pid = m.thread_of(tid).map_or(pid, |t| m.threads[t].pid);
            (pid, tid)
        }
        None => (-1, -1),
    }
}

/// A synthesized sample at `ip`, resolved in the queue's thread.
fn resolved(
    m: &Machine,
    ctx: &Arc<Mutex<WalkContext>>,
    who: Option<(i32, i32)>,
    cpu: i32,
    ns: u64,
    ip: u64,
) -> crate::model::ResolvedSample {
    let (pid, tid) = pid_tid(m, who);
    let thread = m.thread_of(tid);
    let kernel_start = ctx.lock().map_or(1 << 63, |c| c.kernel_start);
    let at = locate(m, thread, ip, kernel_start);
    crate::model::ResolvedSample {
        event: 0,
        pid,
        tid,
        cpu: Some(cpu as u32),
        time: Some(ns),
        period: 1,
        ip: at,
        callchain: Vec::new(),
        unwound: 0,
        lbr: false,
    }
}

/// `ip` in thread `thread`'s maps, or the kernel's above `kernel_start` (perf's
/// cpumode of a synthesized sample, and its `thread__find_map`).
pub(super) fn locate(
    m: &Machine,
    thread: Option<ThreadId>,
    ip: u64,
    kernel_start: u64,
) -> Location {
    let kernel = ip >= kernel_start;
    let map = if kernel {
        m.kernel_maps().find(ip).copied()
    } else {
        thread.and_then(|t| m.maps_of(t).find(ip).copied())
    };
    Location {
        thread: thread.unwrap_or(usize::MAX),
        comm: thread.map_or(usize::MAX, |t| m.threads[t].comm),
        dso: map.map(|m| m.dso),
        addr: map.map_or(ip, |m| m.map_ip(ip)),
        ip,
        kernel,
    }
}

/// perf's `auxtrace_error__fprintf` of an Intel PT error (type 1, format 1).
fn error_line(out: &mut String, state: &State, ns: u64, cpu: i32, pid: i32, tid: i32) {
    use std::fmt::Write;
    let (code, msg) = state.err.map_or((0, ""), |e| (e.code(), e.message()));
    let ip = match state.from_ip {
        0 => "0".to_string(),
        ip => format!("{ip:#x}"),
    };
    let _ = writeln!(
        out,
        " instruction trace error type 1 time {}.{:09} cpu {cpu} pid {pid} tid {tid} ip {ip} code {code}: {msg}",
        ns / 1_000_000_000,
        ns % 1_000_000_000,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intel_pt::state::DecodeError;

    #[test]
    fn an_error_line_as_perf_prints_it() {
        let state = State {
            from_ip: 0xffff_ffff_b960_d302,
            err: Some(DecodeError::NoInstruction),
            ..State::default()
        };
        let mut s = String::new();
        error_line(&mut s, &state, 641_256_845_844, 3, 3174, 3174);
        assert_eq!(
            s,
            " instruction trace error type 1 time 641.256845844 cpu 3 pid 3174 tid 3174 \
             ip 0xffffffffb960d302 code 5: Failed to get instruction\n"
        );
    }
}

#[cfg(test)]
mod time_tests;
