//! pprof's profile.proto (github.com/google/pprof, proto/profile.proto), gzipped as pprof
//! reads it, written as it is made (see [`write_pprof`]). Per event two sample types:
//! `<event>_samples` (count) and its period: for a software clock (`cpu-clock`,
//! `task-clock`, with any modifiers) `cpu` in nanoseconds as Go's CPU profiles name it,
//! else `<event>_period` (count). Samples of equal stack, event, pid, tid, comm and cpu
//! are merged; labels `pid`, `tid`, `cpu` (numbers) and `comm`.
//!
//! Mappings are the DSOs' maps as the process that sampled them first had them (see
//! `pprof/mappings.rs`), the main binary first (pprof headlines the profile with mapping 1's
//! file); locations are the addresses in those maps, already symbolised
//! (`has_functions`), each with its function's source line from DWARF and, with inlines,
//! a line per inlined function, innermost first; functions name their source file and
//! start line (`go tool pprof -list` reads the file). An address without a symbol has a
//! location without lines.

use std::collections::HashMap;
use std::io::{self, Write};

use prost::Message;

use crate::model::is_clock;
use crate::process::Machine;
use crate::stacks::{Detail, Stacks};

mod mappings;

/// The messages of profile.proto that are written (field numbers as in the proto).
// Each field is the proto's field of the same name, documented there.
#[allow(missing_docs)]
pub mod proto {
    /// The whole profile.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Profile {
        #[prost(message, repeated, tag = "1")]
        pub sample_type: Vec<ValueType>,
        #[prost(message, repeated, tag = "2")]
        pub sample: Vec<Sample>,
        #[prost(message, repeated, tag = "3")]
        pub mapping: Vec<Mapping>,
        #[prost(message, repeated, tag = "4")]
        pub location: Vec<Location>,
        #[prost(message, repeated, tag = "5")]
        pub function: Vec<Function>,
        /// Index 0 is the empty string.
        #[prost(string, repeated, tag = "6")]
        pub string_table: Vec<String>,
        #[prost(int64, tag = "9")]
        pub time_nanos: i64,
        #[prost(int64, tag = "10")]
        pub duration_nanos: i64,
        #[prost(message, optional, tag = "11")]
        pub period_type: Option<ValueType>,
        #[prost(int64, tag = "12")]
        pub period: i64,
        #[prost(int64, repeated, tag = "13")]
        pub comment: Vec<i64>,
        #[prost(int64, tag = "14")]
        pub default_sample_type: i64,
    }

    /// A value's type and unit (string table indices).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ValueType {
        #[prost(int64, tag = "1")]
        pub r#type: i64,
        #[prost(int64, tag = "2")]
        pub unit: i64,
    }

    /// A stack (leaf first) with one value per sample type.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Sample {
        #[prost(uint64, repeated, tag = "1")]
        pub location_id: Vec<u64>,
        #[prost(int64, repeated, tag = "2")]
        pub value: Vec<i64>,
        #[prost(message, repeated, tag = "3")]
        pub label: Vec<Label>,
    }

    /// A string (`str`) or numeric (`num`) label.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Label {
        #[prost(int64, tag = "1")]
        pub key: i64,
        #[prost(int64, tag = "2")]
        pub str: i64,
        #[prost(int64, tag = "3")]
        pub num: i64,
    }

    /// A mapped file.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Mapping {
        #[prost(uint64, tag = "1")]
        pub id: u64,
        #[prost(uint64, tag = "2")]
        pub memory_start: u64,
        #[prost(uint64, tag = "3")]
        pub memory_limit: u64,
        #[prost(uint64, tag = "4")]
        pub file_offset: u64,
        #[prost(int64, tag = "5")]
        pub filename: i64,
        #[prost(int64, tag = "6")]
        pub build_id: i64,
        #[prost(bool, tag = "7")]
        pub has_functions: bool,
        #[prost(bool, tag = "8")]
        pub has_filenames: bool,
        #[prost(bool, tag = "9")]
        pub has_line_numbers: bool,
        #[prost(bool, tag = "10")]
        pub has_inline_frames: bool,
    }

    /// An address and the functions (lines) it is in.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Location {
        #[prost(uint64, tag = "1")]
        pub id: u64,
        #[prost(uint64, tag = "2")]
        pub mapping_id: u64,
        #[prost(uint64, tag = "3")]
        pub address: u64,
        #[prost(message, repeated, tag = "4")]
        pub line: Vec<Line>,
    }

    /// A function of a location.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Line {
        #[prost(uint64, tag = "1")]
        pub function_id: u64,
        #[prost(int64, tag = "2")]
        pub line: i64,
    }

    /// A function's names.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Function {
        #[prost(uint64, tag = "1")]
        pub id: u64,
        #[prost(int64, tag = "2")]
        pub name: i64,
        #[prost(int64, tag = "3")]
        pub system_name: i64,
        #[prost(int64, tag = "4")]
        pub filename: i64,
        #[prost(int64, tag = "5")]
        pub start_line: i64,
    }
}

/// The string table under construction.
#[derive(Default)]
struct Strings {
    table: Vec<String>,
    index: HashMap<String, i64>,
}

impl Strings {
    fn new() -> Self {
        let mut s = Strings::default();
        s.id("");
        s
    }

    fn id(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        self.table.push(s.to_string());
        let i = self.table.len() as i64 - 1;
        self.index.insert(s.to_string(), i);
        i
    }
}

/// The period sample type of each event: `cpu` (nanoseconds) for the one software clock
/// with samples (`<event>_cpu` where there are several), else `<event>_period` (count).
fn period_types(stacks: &Stacks) -> Vec<(String, &'static str)> {
    let clocks = stacks.event_names.iter().filter(|n| is_clock(n)).count();
    stacks
        .event_names
        .iter()
        .map(|name| match (is_clock(name), clocks) {
            (true, 1) => ("cpu".to_string(), "nanoseconds"),
            (true, _) => (format!("{name}_cpu"), "nanoseconds"),
            (false, _) => (format!("{name}_period"), "count"),
        })
        .collect()
}

/// Write the profile of `stacks` (collected for [`Detail::Labels`]), gzipped; the
/// `machine` as the replay left it gives mappings their maps, file and build id.
/// Everything but the samples is laid out first (the string table must hold every
/// label), then the samples are encoded one at a time into the compressor: prost writes
/// a message's fields in tag order, `sample_type` (1) and `sample` (2) before the rest,
/// so the bytes are those of the whole message.
pub fn write_pprof(out: &mut dyn Write, stacks: &Stacks, machine: &Machine) -> io::Result<()> {
    stacks.require(Detail::Labels, "pprof")?;
    let mut strings = Strings::new();
    let mut p = proto::Profile::default();
    let events = stacks.event_names.len();
    let periods = period_types(stacks);
    for (name, (period, unit)) in stacks.event_names.iter().zip(&periods) {
        for (kind, unit) in [(format!("{name}_samples"), "count"), (period.clone(), unit)] {
            p.sample_type.push(proto::ValueType {
                r#type: strings.id(&kind),
                unit: strings.id(unit),
            });
        }
    }
    // The first event with samples is shown by default; its period is the profile's,
    // its mean period the sampling period.
    if let Some(first) = stacks.counts().map(|c| c.track.event).min() {
        p.default_sample_type = strings.id(&format!("{}_samples", stacks.event_names[first]));
        let (name, unit) = &periods[first];
        p.period_type = Some(proto::ValueType {
            r#type: strings.id(name),
            unit: strings.id(unit),
        });
        let (n, sum) = stacks
            .counts()
            .filter(|c| c.track.event == first)
            .fold((0u64, 0u64), |(n, s), c| {
                (n + c.samples, s.saturating_add(c.period))
            });
        p.period = i64::try_from(sum / n.max(1)).unwrap_or(i64::MAX);
    }
    let maps = mappings::Mappings::new(stacks, machine);
    p.mapping = maps.protos(&mut strings, &machine.dsos);
    // Functions per distinct (name, DSO, source file), locations per frame.
    let mut function_of: HashMap<(&str, Option<usize>, Option<&str>), u64> = HashMap::new();
    let mut lines: Vec<Vec<proto::Line>> = vec![Vec::new(); stacks.frame_count()];
    for (i, f) in stacks.frames().enumerate() {
        let line = f.function.map(|name| {
            let id = *function_of.entry((name, f.dso, f.file)).or_insert_with(|| {
                let n = strings.id(name);
                p.function.push(proto::Function {
                    id: p.function.len() as u64 + 1,
                    name: n,
                    system_name: n,
                    filename: strings.id(f.file.unwrap_or("")),
                    start_line: i64::from(f.start_line),
                });
                p.function.len() as u64
            });
            proto::Line {
                function_id: id,
                line: i64::from(f.line),
            }
        });
        // An inlined function is a line of its address's location, before the lines
        // already there: profile.proto lists the innermost inlined function first.
        let at = f.inlined_in.unwrap_or(i);
        lines[at].splice(0..0, line);
    }
    drop(function_of);
    for (i, f) in stacks.frames().enumerate() {
        if f.inlined_in.is_some() {
            continue;
        }
        let (mapping_id, address) = maps.locate(&f);
        p.location.push(proto::Location {
            id: i as u64 + 1,
            mapping_id,
            address,
            line: std::mem::take(&mut lines[i]),
        });
    }
    drop(lines);
    // One sample per count: the counts are per distinct stack, event, pid, tid, comm
    // and CPU, in the order of each one's first sample. Their comms are named in that
    // order.
    let (pid, tid, cpu, comm) = (
        strings.id("pid"),
        strings.id("tid"),
        strings.id("cpu"),
        strings.id("comm"),
    );
    for c in stacks.counts() {
        strings.id(&c.track.comm);
    }
    if let Some((first, last)) = stacks.time_span() {
        p.duration_nanos = i64::try_from(last - first).unwrap_or(i64::MAX);
    }
    let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
    let mut buf = Vec::new();
    for t in std::mem::take(&mut p.sample_type) {
        prost::encoding::message::encode(1, &t, &mut buf);
    }
    for c in stacks.counts() {
        let t = c.track;
        let mut label = vec![
            num_label(pid, t.pid.into()),
            num_label(tid, t.tid.into()),
            proto::Label {
                key: comm,
                str: strings.id(&t.comm),
                num: 0,
            },
        ];
        if let Some(c) = c.cpu {
            label.push(num_label(cpu, c.into()));
        }
        let mut value = vec![0i64; 2 * events];
        value[2 * t.event] = i64::try_from(c.samples).unwrap_or(i64::MAX);
        value[2 * t.event + 1] = i64::try_from(c.period).unwrap_or(i64::MAX);
        let sample = proto::Sample {
            // Leaf first; locations are numbered from 1.
            location_id: stacks
                .frames_of(c.stack)
                .iter()
                .rev()
                .filter(|&&f| stacks.frame(f).inlined_in.is_none())
                .map(|&f| f as u64 + 1)
                .collect(),
            value,
            label,
        };
        prost::encoding::message::encode(2, &sample, &mut buf);
        if buf.len() >= 1 << 16 {
            gz.write_all(&buf)?;
            buf.clear();
        }
    }
    gz.write_all(&buf)?;
    p.string_table = strings.table;
    gz.write_all(&p.encode_to_vec())?;
    gz.finish()?;
    Ok(())
}

fn num_label(key: i64, num: i64) -> proto::Label {
    proto::Label { key, str: 0, num }
}
