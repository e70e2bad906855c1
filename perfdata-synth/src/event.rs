//! The events of a synthetic trace: perf's presets (cpu-clock, task-clock, cycles, a
//! tracepoint, a `:S` group read) or any attr the caller fills in, each with the
//! sample_type fields it records.

use perfdata_core::attr::{AttrFlags, PerfEventAttr, ReadFormat, SampleType};

use super::tracing::Tracepoint;
use perfdata_write::error::{Result, WriteError};

/// PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE, PERF_TYPE_TRACEPOINT.
const TYPE_HARDWARE: u32 = 0;
const TYPE_SOFTWARE: u32 = 1;
const TYPE_TRACEPOINT: u32 = 2;

/// The sample_type `perf record -e EVENT -c N` gives an event: IP, TID, TIME, PERIOD
/// (perf adds PERIOD for a fixed period too) and CPU.
pub const DEFAULT_SAMPLE_TYPE: SampleType = SampleType::IP
    .union(SampleType::TID)
    .union(SampleType::TIME)
    .union(SampleType::CPU)
    .union(SampleType::PERIOD);

/// The fields of the sample_id trailer: they must agree between the events of one
/// trace, as perf requires (`evlist__valid_sample_id_all`).
const TRAILER: SampleType = SampleType::TID
    .union(SampleType::TIME)
    .union(SampleType::ID)
    .union(SampleType::STREAM_ID)
    .union(SampleType::CPU)
    .union(SampleType::IDENTIFIER);

/// The sample_type bits the builder can fill (every bit perf 6.1 knows but AUX, whose
/// area the builder does not make).
const SUPPORTED: SampleType = SampleType::all().difference(SampleType::AUX);

/// One event of a synthetic trace.
#[derive(Debug, Clone)]
pub struct EventSpec {
    /// The name EVENT_DESC gives it ("cpu-clock").
    pub name: String,
    /// The attr as written; the writer sets the flags perf sets on every event
    /// (sample_id_all as asked, tracking flags on the first event) and its size.
    pub attr: PerfEventAttr,
    /// For a tracepoint: its format, written into the tracing data, and what its RAW
    /// samples hold.
    pub tracepoint: Option<Tracepoint>,
    /// For a member of a group: the index of its leader among the trace's events.
    pub leader: Option<usize>,
}

impl EventSpec {
    /// An event from an attr the caller filled in.
    pub fn custom(name: &str, attr: PerfEventAttr) -> Self {
        EventSpec {
            name: name.to_string(),
            attr,
            tracepoint: None,
            leader: None,
        }
    }

    fn sampling(name: &str, type_: u32, config: u64, period: u64) -> Self {
        let attr = PerfEventAttr {
            type_,
            config,
            sample_period: period,
            sample_type: DEFAULT_SAMPLE_TYPE,
            flags: AttrFlags::DISABLED
                | AttrFlags::INHERIT
                | AttrFlags::ENABLE_ON_EXEC
                | AttrFlags::EXCLUDE_GUEST,
            ..Default::default()
        };
        Self::custom(name, attr)
    }

    /// `cpu-clock` (software), sampling every `period` ns.
    pub fn cpu_clock(period: u64) -> Self {
        Self::sampling("cpu-clock", TYPE_SOFTWARE, 0, period)
    }

    /// `task-clock` (software), sampling every `period` ns.
    pub fn task_clock(period: u64) -> Self {
        Self::sampling("task-clock", TYPE_SOFTWARE, 1, period)
    }

    /// `cycles` (hardware), sampling every `period` cycles.
    pub fn cycles(period: u64) -> Self {
        Self::sampling("cycles", TYPE_HARDWARE, 0, period)
    }

    /// A tracepoint (the builder's own `synth:synth_tick`), one sample per hit, with RAW
    /// data and its format in the tracing data so that `perf script` prints its fields.
    pub fn tracepoint() -> Self {
        let tp = Tracepoint::synth_tick();
        let mut e = Self::sampling(&tp.full_name(), TYPE_TRACEPOINT, tp.id, 1);
        e.attr.sample_type |= SampleType::RAW;
        e.tracepoint = Some(tp);
        e
    }

    /// A group whose leader samples and reads every member's counter, as
    /// `perf record -e '{leader,members...}:S'`: READ in the leader's samples with
    /// read_format GROUP | ID; the members do not sample. `first` is the index the
    /// leader will have among the trace's events.
    pub fn group_read(leader: EventSpec, members: Vec<EventSpec>, first: usize) -> Vec<Self> {
        let mut out = Vec::with_capacity(members.len() + 1);
        let read_format = ReadFormat::GROUP | ReadFormat::ID;
        let mut leader = leader;
        leader.attr.sample_type |= SampleType::READ | SampleType::ID;
        leader.attr.read_format = read_format;
        // perf turns inherit off for groups that read (the kernel refuses inherited
        // group reads).
        leader.attr.flags.remove(AttrFlags::INHERIT);
        out.push(leader);
        for mut m in members {
            m.attr.sample_type = out[0].attr.sample_type;
            m.attr.read_format = read_format;
            m.attr.sample_period = 0;
            m.attr.flags = AttrFlags::EXCLUDE_GUEST;
            m.leader = Some(first);
            out.push(m);
        }
        out
    }

    /// Add sample_type fields.
    pub fn with(mut self, fields: SampleType) -> Self {
        self.attr.sample_type |= fields;
        self
    }

    /// Whether this event writes samples (group members are read by their leader).
    pub fn samples(&self) -> bool {
        self.leader.is_none() && self.attr.sample_period != 0
    }

    /// Parse a preset name as `perfdata synth --events` takes it.
    pub fn preset(name: &str, period: u64) -> Result<Self> {
        match name {
            "cpu-clock" => Ok(Self::cpu_clock(period)),
            "task-clock" => Ok(Self::task_clock(period)),
            "cycles" => Ok(Self::cycles(period)),
            "tracepoint" | "synth:synth_tick" => Ok(Self::tracepoint()),
            other => Err(WriteError::unsupported(
                None,
                format!(
                    "unknown event preset {other:?} (known: cpu-clock, task-clock, cycles, \
                     tracepoint)"
                ),
            )),
        }
    }
}

/// Parse an event list as `perfdata synth --events` takes it: presets separated by
/// commas, and `{a,b,...}:S` for a group whose leader `a` samples and reads the others.
pub fn parse_events(list: &str, period: u64) -> Result<Vec<EventSpec>> {
    let mut out = Vec::new();
    let mut rest = list.trim();
    while !rest.is_empty() {
        if let Some(group) = rest.strip_prefix('{') {
            let (inner, after) = group.split_once('}').ok_or_else(|| {
                WriteError::unsupported(None, format!("unclosed group in {list:?}"))
            })?;
            let after = after.strip_prefix(":S").ok_or_else(|| {
                WriteError::unsupported(None, "a group is written as {a,b}:S (a sample read)")
            })?;
            let mut names = inner
                .split(',')
                .map(|n| EventSpec::preset(n.trim(), period));
            let leader = names
                .next()
                .unwrap_or_else(|| Err(WriteError::unsupported(None, "an empty group")))?;
            let members = names.collect::<Result<Vec<_>>>()?;
            let first = out.len();
            out.extend(EventSpec::group_read(leader, members, first));
            rest = after.trim_start_matches(',');
        } else {
            let (name, after) = rest.split_once(',').unwrap_or((rest, ""));
            out.push(EventSpec::preset(name.trim(), period)?);
            rest = after;
        }
    }
    Ok(out)
}

/// Parse sample_type field names as perf prints them (`addr,weight,data_src`, any
/// case; `IP|TID` works too).
pub fn parse_sample_fields(list: &str) -> Result<SampleType> {
    let mut out = SampleType::empty();
    for name in list
        .split([',', '|'])
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        out |= SampleType::from_name(&name.to_ascii_uppercase()).ok_or_else(|| {
            WriteError::unsupported(None, format!("unknown sample_type field {name:?}"))
        })?;
    }
    Ok(out)
}

/// Make a set of events one perf accepts: the attr size perf 6.1 writes,
/// sample_id_all as asked, perf's tracking flags (MMAP, COMM, TASK...) on the first
/// event only, and an id in every sample and trailer when there is more than one event
/// (IDENTIFIER when their sample layouts differ, so the id is at a fixed place).
pub fn normalize(events: &mut [EventSpec], sample_id_all: bool) -> Result<()> {
    if events.is_empty() {
        return Err(WriteError::unsupported(
            None,
            "a trace needs at least one event",
        ));
    }
    let differ = events
        .iter()
        .any(|e| e.attr.sample_type != events[0].attr.sample_type);
    for (i, e) in events.iter_mut().enumerate() {
        let unsupported = e.attr.sample_type.difference(SUPPORTED);
        if !unsupported.is_empty() {
            return Err(WriteError::unsupported(
                None,
                format!(
                    "event {}: sample_type {unsupported:?} is not generated",
                    e.name
                ),
            ));
        }
        if e.attr
            .sample_type
            .contains(SampleType::WEIGHT | SampleType::WEIGHT_STRUCT)
        {
            return Err(WriteError::unsupported(
                None,
                format!("event {}: WEIGHT and WEIGHT_STRUCT share one field", e.name),
            ));
        }
        if e.attr.sample_type.contains(SampleType::RAW) && e.tracepoint.is_none() {
            return Err(WriteError::unsupported(
                None,
                format!("event {}: RAW samples need a tracepoint format", e.name),
            ));
        }
        e.attr.flags.set(AttrFlags::SAMPLE_ID_ALL, sample_id_all);
        if i == 0 {
            e.attr.flags |= AttrFlags::MMAP
                | AttrFlags::COMM
                | AttrFlags::TASK
                | AttrFlags::MMAP2
                | AttrFlags::COMM_EXEC;
        }
        e.attr
            .set_encoded_len(perfdata_core::attr::ATTR_SIZE_PERF_6_1);
        e.attr.size = perfdata_core::attr::ATTR_SIZE_PERF_6_1 as u32;
    }
    // perf's `evsel__set_sample_id`: IDENTIFIER replaces ID when layouts differ.
    if events.len() > 1 {
        for e in events.iter_mut() {
            if differ {
                e.attr.sample_type.remove(SampleType::ID);
                e.attr.sample_type |= SampleType::IDENTIFIER;
            } else {
                e.attr.sample_type |= SampleType::ID;
            }
        }
    }
    let trailer = events[0].attr.sample_type & TRAILER;
    if let Some(e) = events
        .iter()
        .find(|e| e.attr.sample_type & TRAILER != trailer)
    {
        return Err(WriteError::unsupported(
            None,
            format!(
                "event {}: its sample_id fields differ from the first event's, which perf \
                 refuses",
                e.name
            ),
        ));
    }
    Ok(())
}
