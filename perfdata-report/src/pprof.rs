//! pprof's profile.proto (github.com/google/pprof, proto/profile.proto), gzipped as pprof
//! reads it, written as it is made (see [`write_pprof`]). Per event two sample types: `<event>_samples` (count) and `<event>_period`
//! (nanoseconds for the software clocks, else count). Samples of equal stack, event,
//! pid, tid, comm and cpu are merged; labels `pid`, `tid`, `cpu` (numbers) and `comm`.
//! One mapping per DSO, with its build id; locations are DSO-relative addresses
//! (mappings start at 0), already symbolised (`has_functions`), one line each; an
//! address without a symbol has a location without lines.

use std::collections::HashMap;
use std::io::{self, Write};

use prost::Message;

use crate::process::Dso;
use crate::stacks::{Detail, Stacks};

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

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Write the profile of `stacks` (collected for [`Detail::Labels`]), gzipped; `dsos`
/// gives mappings their file and build id. Everything but the samples is laid out first
/// (the string table must hold every label), then the samples are encoded one at a time
/// into the compressor: prost writes a message's fields in tag order, `sample_type` (1)
/// and `sample` (2) before the rest, so the bytes are those of the whole message.
pub fn write_pprof(out: &mut dyn Write, stacks: &Stacks, dsos: &[Dso]) -> io::Result<()> {
    stacks.require(Detail::Labels, "pprof")?;
    let mut strings = Strings::new();
    let mut p = proto::Profile::default();
    let events = stacks.event_names.len();
    for name in &stacks.event_names {
        let unit = match name.as_str() {
            "cpu-clock" | "task-clock" => "nanoseconds",
            _ => "count",
        };
        for (kind, unit) in [("samples", "count"), ("period", unit)] {
            p.sample_type.push(proto::ValueType {
                r#type: strings.id(&format!("{name}_{kind}")),
                unit: strings.id(unit),
            });
        }
    }
    // The first event with samples is shown by default.
    if let Some(first) = stacks.counts().map(|c| c.track.event).min() {
        p.default_sample_type = strings.id(&format!("{}_samples", stacks.event_names[first]));
    }
    // Mappings per DSO (ids from 1), functions per distinct (name, DSO), locations per
    // frame.
    let mut mapping_of: HashMap<usize, u64> = HashMap::new();
    for f in stacks.frames() {
        let Some(d) = f.dso else { continue };
        mapping_of.entry(d).or_insert_with(|| {
            let dso = &dsos[d];
            p.mapping.push(proto::Mapping {
                id: p.mapping.len() as u64 + 1,
                memory_start: 0,
                memory_limit: u64::MAX,
                file_offset: 0,
                filename: strings.id(&dso.long_name),
                build_id: dso.build_id.as_deref().map_or(0, |b| strings.id(&hex(b))),
                has_functions: true,
            });
            p.mapping.len() as u64
        });
    }
    let mut function_of: HashMap<(&str, Option<usize>), u64> = HashMap::new();
    let mut lines: Vec<Vec<proto::Line>> = vec![Vec::new(); stacks.frame_count()];
    for (i, f) in stacks.frames().enumerate() {
        let line = f.function.map(|name| {
            let id = *function_of.entry((name, f.dso)).or_insert_with(|| {
                let n = strings.id(name);
                let file = f.dso.map_or(0, |d| strings.id(&dsos[d].long_name));
                p.function.push(proto::Function {
                    id: p.function.len() as u64 + 1,
                    name: n,
                    system_name: n,
                    filename: file,
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
        p.location.push(proto::Location {
            id: i as u64 + 1,
            mapping_id: f.dso.map_or(0, |d| mapping_of[&d]),
            address: f.addr,
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
