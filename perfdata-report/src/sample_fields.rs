//! The few fields of a SAMPLE record a report needs (ip, pid/tid, time, cpu, period and
//! the callchain), read straight from its bytes: the full decode builds every field and
//! is most of the cost of a large report. Records whose layout before the callchain is
//! not fixed (PERF_SAMPLE_READ) or whose bytes end early are left to the full decode.

use perfdata_core::attr::SampleType;
use perfdata_core::record::{ReadData, Sample};
use perfdata_core::Endian;

/// A sample's fields, as the full decode would give them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SampleFields {
    /// The sampled instruction pointer.
    pub ip: Option<u64>,
    /// The process.
    pub pid: i32,
    /// The thread.
    pub tid: i32,
    /// Its time in ns, if sampled.
    pub time: Option<u64>,
    /// The CPU, if sampled.
    pub cpu: Option<u32>,
    /// Its period, if sampled.
    pub period: Option<u64>,
    /// The callchain's addresses, context markers included.
    pub callchain: Vec<u64>,
    /// With PERF_SAMPLE_READ: each counter's id (0 where read_format has no ID, as in
    /// perf's zeroed sample) and value, the group's leader first.
    pub read: Option<Vec<(u64, u64)>>,
}

impl SampleFields {
    /// The same fields of a fully decoded sample.
    pub fn from_decoded(s: Sample) -> SampleFields {
        let pt = s.tid.unwrap_or_default();
        SampleFields {
            ip: s.ip,
            pid: pt.pid,
            tid: pt.tid,
            time: s.time,
            cpu: s.cpu.map(|c| c.cpu),
            period: s.period,
            callchain: s.callchain.map(|c| c.ips).unwrap_or_default(),
            read: s.read.map(|r| match r {
                ReadData::Single { value, id, .. } => vec![(id.unwrap_or(0), value)],
                ReadData::Group { values, .. } => values
                    .iter()
                    .map(|v| (v.id.unwrap_or(0), v.value))
                    .collect(),
            }),
        }
    }
}

/// Read the fields of `record` (the SAMPLE record's bytes, header included) laid out by
/// `sample_type`; None where this reader does not apply.
pub fn read(record: &[u8], sample_type: SampleType, endian: Endian) -> Option<SampleFields> {
    if sample_type.contains(SampleType::READ) {
        return None;
    }
    let mut at = 8;
    let mut next = || -> Option<u64> {
        let b: [u8; 8] = record.get(at..at + 8)?.try_into().ok()?;
        at += 8;
        Some(match endian {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        })
    };
    // Each field in the kernel's order, one u64 each up to the callchain.
    let has = |t| sample_type.contains(t);
    let mut f = SampleFields::default();
    if has(SampleType::IDENTIFIER) {
        next()?;
    }
    if has(SampleType::IP) {
        f.ip = Some(next()?);
    }
    if has(SampleType::TID) {
        let w = next()?;
        // Two u32 in the record's byte order: pid first.
        let b = match endian {
            Endian::Little => w.to_le_bytes(),
            Endian::Big => w.to_be_bytes(),
        };
        let half = |h: [u8; 4]| match endian {
            Endian::Little => i32::from_le_bytes(h),
            Endian::Big => i32::from_be_bytes(h),
        };
        f.pid = half([b[0], b[1], b[2], b[3]]);
        f.tid = half([b[4], b[5], b[6], b[7]]);
    }
    if has(SampleType::TIME) {
        f.time = Some(next()?);
    }
    for t in [SampleType::ADDR, SampleType::ID, SampleType::STREAM_ID] {
        if has(t) {
            next()?;
        }
    }
    if has(SampleType::CPU) {
        let w = next()?;
        let b = match endian {
            Endian::Little => w.to_le_bytes(),
            Endian::Big => w.to_be_bytes(),
        };
        f.cpu = Some(match endian {
            Endian::Little => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            Endian::Big => u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
        });
    }
    if has(SampleType::PERIOD) {
        f.period = Some(next()?);
    }
    if has(SampleType::CALLCHAIN) {
        let n = next()?;
        // Bounded by the record's size: no allocation beyond what it holds.
        if n > (record.len() / 8) as u64 {
            return None;
        }
        f.callchain = (0..n).map(|_| next()).collect::<Option<Vec<u64>>>()?;
    }
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfdata_core::record::{RecordBody, RecordType};
    use perfdata_core::PerfReader;

    /// Every sample of the fixtures (callchains, DWARF stacks, several events, pipe,
    /// compressed, a group with PERF_SAMPLE_READ) read here and by the full decode: the
    /// same fields, or None where READ is in the layout.
    #[test]
    fn fields_equal_the_full_decode_on_the_fixtures() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
        let (mut read_here, mut left) = (0, 0);
        for name in [
            "file-callgraph-fp.data",
            "file-callgraph-dwarf.data",
            "file-multi-event.data",
            "file-sample-fields.data",
            "file-compressed.data",
            "pipe-cpu-clock.data",
            "file-group.data",
        ] {
            let mut reader = PerfReader::open(dir.join(name)).expect(name);
            while let Some(item) = reader.next_record().expect(name) {
                if item.raw.record_type() != RecordType::Sample {
                    continue;
                }
                let Some(e) = item.locate().event else {
                    continue;
                };
                let st = item.meta.attrs()[e].attr.sample_type;
                let fast = read(item.raw.bytes, st, item.meta.endian);
                let RecordBody::Sample(s) = item.decode().expect("decodes").body else {
                    panic!("{name}: not a sample");
                };
                let Some(fast) = fast else {
                    assert!(st.contains(SampleType::READ), "{name}: {st:?}");
                    left += 1;
                    continue;
                };
                assert_eq!(fast, SampleFields::from_decoded(*s), "{name}");
                read_here += 1;
            }
        }
        assert!(
            read_here > 1000 && left > 0,
            "{read_here} read, {left} left"
        );
    }

    #[test]
    fn a_short_record_is_left_to_the_full_decode() {
        let st = SampleType::IP | SampleType::TID | SampleType::CALLCHAIN;
        let mut rec = vec![0u8; 8];
        rec.extend(0x1234u64.to_le_bytes());
        rec.extend([1, 0, 0, 0, 2, 0, 0, 0]);
        rec.extend(1000u64.to_le_bytes()); // 1000 entries, none there
        assert_eq!(read(&rec, st, Endian::Little), None);
        rec.truncate(24);
        rec.extend(1u64.to_le_bytes());
        rec.extend(0x99u64.to_le_bytes());
        let f = read(&rec, st, Endian::Little).expect("fields");
        assert_eq!((f.ip, f.pid, f.tid), (Some(0x1234), 1, 2));
        assert_eq!(f.callchain, vec![0x99]);
    }
}
