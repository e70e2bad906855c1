//! A tracepoint of the builder's own and the tracing data that describes it, so that
//! perf (libtraceevent) decodes its RAW samples and `perf script` prints their fields.
//!
//! perfdata-core has no model of the tracing blob beyond the event names, so it is laid
//! out here as perf's trace-event-info.c writes it (version 0.6): magic, version,
//! byte order, long size, page size, the ring-buffer header formats, no ftrace formats,
//! one system with the event formats, then empty kallsyms, printk formats and saved
//! cmdlines. Integers are in the trace's byte order, as the big_endian byte says.

use binrw::Endian;

/// The ring-buffer page header perf copies from tracefs (x86-64, kernel 6.1).
const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

/// The ring-buffer event header perf copies from tracefs.
const HEADER_EVENT: &str = "# compressed entry header\n\ttype_len    :    5 bits\n\
\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n\tpadding     : type == 29\n\
\ttime_extend : type == 30\n\ttime_stamp : type == 31\n\tdata max type_len  == 28\n";

/// The fields every tracepoint starts with (8 bytes).
const COMMON_FIELDS: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n";

/// A tracepoint: `system:name` with its ftrace id. Its fields are fixed: `u64 seq`,
/// `unsigned int cpu`, `int value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracepoint {
    /// The subsystem (`sched`).
    pub system: String,
    /// The tracepoint's name within it.
    pub name: String,
    /// The ftrace event id (the attr's config).
    pub id: u64,
}

/// What one hit of the tracepoint records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TracepointHit {
    /// The process that hit it (the payload's common_pid).
    pub pid: i32,
    /// The `seq` field.
    pub seq: u64,
    /// The `cpu` field.
    pub cpu: u32,
    /// The `value` field.
    pub value: i32,
}

impl Tracepoint {
    /// `synth:synth_tick`, id 9001 (above the ids a 6.1 kernel hands out, so it names
    /// no real event).
    pub fn synth_tick() -> Self {
        Tracepoint {
            system: "synth".into(),
            name: "synth_tick".into(),
            id: 9001,
        }
    }

    /// `system:name`, as perf names the event.
    pub fn full_name(&self) -> String {
        format!("{}:{}", self.system, self.name)
    }

    /// The format file, as tracefs prints it.
    pub fn format(&self) -> String {
        format!(
            "name: {}\nID: {}\nformat:\n{COMMON_FIELDS}\n\
             \tfield:u64 seq;\toffset:8;\tsize:8;\tsigned:0;\n\
             \tfield:unsigned int cpu;\toffset:16;\tsize:4;\tsigned:0;\n\
             \tfield:int value;\toffset:20;\tsize:4;\tsigned:1;\n\n\
             print fmt: \"seq=%llu cpu=%u value=%d\", REC->seq, REC->cpu, REC->value\n",
            self.name, self.id
        )
    }

    /// The RAW data of a hit: the 24 bytes of the record in the trace's byte order, then
    /// 4 bytes of padding so that the RAW size word and the data end on 8 bytes, as the
    /// kernel pads.
    pub fn raw(&self, hit: &TracepointHit, endian: Endian) -> Vec<u8> {
        let mut b = Bytes::new(endian);
        b.u16(self.id as u16);
        b.raw(&[0, 0]); // common_flags, common_preempt_count
        b.u32(hit.pid as u32);
        b.u64(hit.seq);
        b.u32(hit.cpu);
        b.u32(hit.value as u32);
        b.raw(&[0; 4]);
        b.out
    }
}

/// The tracing data blob describing `tracepoints` (grouped by system, in order).
pub fn tracing_data(tracepoints: &[&Tracepoint], endian: Endian) -> Vec<u8> {
    let mut b = Bytes::new(endian);
    b.raw(b"\x17\x08\x44tracing0.6\0");
    b.raw(&[u8::from(endian == Endian::Big), 8]);
    b.u32(4096);
    for (name, text) in [("header_page", HEADER_PAGE), ("header_event", HEADER_EVENT)] {
        b.raw(name.as_bytes());
        b.raw(&[0]);
        b.text(text);
    }
    b.u32(0); // ftrace formats
    let mut systems: Vec<&str> = Vec::new();
    for tp in tracepoints {
        if !systems.contains(&tp.system.as_str()) {
            systems.push(&tp.system);
        }
    }
    b.u32(systems.len() as u32);
    for system in systems {
        b.raw(system.as_bytes());
        b.raw(&[0]);
        let formats: Vec<String> = tracepoints
            .iter()
            .filter(|t| t.system == system)
            .map(|t| t.format())
            .collect();
        b.u32(formats.len() as u32);
        for f in &formats {
            b.text(f);
        }
    }
    b.u32(0); // kallsyms
    b.u32(0); // printk formats
    b.u64(0); // saved cmdlines (version 0.6)
    b.out
}

/// Integers in a chosen byte order.
struct Bytes {
    out: Vec<u8>,
    endian: Endian,
}

impl Bytes {
    fn new(endian: Endian) -> Self {
        Bytes {
            out: Vec::new(),
            endian,
        }
    }
    fn raw(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }
    fn u16(&mut self, v: u16) {
        match self.endian {
            Endian::Little => self.raw(&v.to_le_bytes()),
            Endian::Big => self.raw(&v.to_be_bytes()),
        }
    }
    fn u32(&mut self, v: u32) {
        match self.endian {
            Endian::Little => self.raw(&v.to_le_bytes()),
            Endian::Big => self.raw(&v.to_be_bytes()),
        }
    }
    fn u64(&mut self, v: u64) {
        match self.endian {
            Endian::Little => self.raw(&v.to_le_bytes()),
            Endian::Big => self.raw(&v.to_be_bytes()),
        }
    }
    /// `u64 size` then the text.
    fn text(&mut self, t: &str) {
        self.u64(t.len() as u64);
        self.raw(t.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_is_padded_like_the_kernel() {
        let tp = Tracepoint::synth_tick();
        let hit = TracepointHit {
            pid: 5,
            seq: 7,
            cpu: 1,
            value: -2,
        };
        let raw = tp.raw(&hit, Endian::Little);
        assert_eq!((raw.len() + 4) % 8, 0);
        assert_eq!(&raw[0..2], &9001u16.to_le_bytes());
        assert_eq!(&raw[8..16], &7u64.to_le_bytes());
        assert_eq!(&raw[20..24], &(-2i32).to_le_bytes());
        assert_eq!(&tp.raw(&hit, Endian::Big)[8..16], &7u64.to_be_bytes());
    }

    #[test]
    fn blob_names_the_event_as_the_reader_sees_it() {
        let tp = Tracepoint::synth_tick();
        let blob = tracing_data(&[&tp], Endian::Little);
        assert!(blob.starts_with(b"\x17\x08\x44tracing0.6\0\0\x08"));
        let text = String::from_utf8_lossy(&blob);
        assert!(text.contains("synth\0"));
        assert!(text.contains("name: synth_tick\nID: 9001\n"));
    }
}
