//! What numbers the kernel and perf give. A record whose type was changed, an attrs
//! section read from the wrong offset, ids read from elsewhere: each reads other bytes
//! (a name, a path) as numbers, and keeping numbers would keep those bytes. Where a
//! field's values are known (a pid, an event id, a shift, an enumeration, the bits of a
//! bit set), a value outside them is refused, and the record, feature or run with it.
//! Four bytes of text are a number no pid reaches; eight are no event id.

use perfdata_core::attr::{PerfEventAttr, ReadFormat, SampleType};
use perfdata_core::feature::Feature;
use perfdata_core::record::{ReadData, ReadValue, RecordBody, SampleId};
use perfdata_core::{decode, Metadata, RecordRef};

use super::Fate;

/// The event a record with a sample_id trailer belongs to, as perf finds it
/// (`evlist__event2evsel`): the only one, or the one its id names (an id of 0 is
/// perf's own synthesized record, read with the first). An id no attr has, or no room
/// for the id, is refused: perf drops such records, and read with another event's
/// layout the trailer would take bytes of the body (a name) for numbers.
pub(super) fn event_of(item: &RecordRef<'_>, is_sample: bool) -> std::result::Result<usize, Fate> {
    let meta = item.meta;
    let events = meta.events();
    let first = events
        .format(0)
        .ok_or_else(|| Fate::unvouched("no attr describes its layout"))?;
    if events.len() == 1 || (!is_sample && !first.sample_id_all) {
        return Ok(0);
    }
    let id = events
        .record_id(item.raw.bytes, is_sample, meta.endian)
        .ok_or_else(|| Fate::unvouched("no room for the id that names its event"))?;
    if id == 0 {
        return Ok(0);
    }
    events
        .event_of_id(id)
        .ok_or_else(|| Fate::unvouched("its id matches no attr"))
}

/// The kernel's PID_MAX_LIMIT (4M): no pid or tid is larger.
const PID_MAX_LIMIT: i64 = 1 << 22;
/// Event ids count the events the kernel opened since boot; counts of lost records are
/// counts of what a ring buffer held.
const COUNT_LIMIT: u64 = 1 << 48;
/// CPU numbers (perf's own maps hold them in 16 bits).
const CPU_LIMIT: u64 = 1 << 16;

/// Whether `v` can be a pid or tid (-1: none, or any).
pub(super) fn pid_ok(v: i32) -> bool {
    (-1..=PID_MAX_LIMIT).contains(&i64::from(v))
}

/// A pid, tid or cpu held in a u64, where all ones means "any".
fn any_or_below(v: u64, limit: u64) -> bool {
    v == u64::MAX || v <= limit
}

/// An event id of this recording (0: perf's own records, which name none).
fn id_ok(meta: &Metadata, id: u64) -> bool {
    id == 0 || meta.events().event_of_id(id).is_some()
}

/// Whether an attr is one perf writes: its size field is a size an attr has, no more
/// than its room (simpleperf writes 120 in room for 128), or 0 (the first layout), and
/// its sample_type and read_format hold only bits perf defines.
pub(super) fn attr_ok(attr: &PerfEventAttr) -> bool {
    let size = attr.size as usize;
    (size == 0 || (size >= 64 && size.is_multiple_of(8) && size <= attr.encoded_len))
        && SampleType::from_bits(attr.sample_type.bits()).is_some()
        && ReadFormat::from_bits(attr.read_format.bits()).is_some()
}

/// Whether an attr's ids are ids the kernel gives.
pub(super) fn attr_ids_ok(ids: &[u64]) -> bool {
    ids.iter().all(|&id| id < COUNT_LIMIT)
}

/// Times in ns, of the boot clock or the wall clock (2116 is 2^62 ns after 1970).
const TIME_LIMIT: u64 = 1 << 62;

/// Whether the numbers of a feature are ones perf writes (a stream's HEADER_FEATURE
/// whose id lost a bit hands its bytes to another feature: a hostname read as NRCPUS
/// has four letters for a count).
pub(super) fn feature_numbers_ok(f: &Feature) -> bool {
    match f {
        Feature::NrCpus(n) => n.nr_cpus_online < 1 << 16 && n.nr_cpus_available < 1 << 16,
        // In kB: a pebibyte.
        Feature::TotalMem(kb) => *kb < 1 << 40,
        // The clock's resolution in ns.
        Feature::ClockId(ns) => *ns < 1 << 32,
        Feature::DirFormat(v) => *v < 1 << 16,
        // The buffer perf decompresses into is a number of pages.
        Feature::Compressed(c) => {
            c.version < 16
                && c.type_ < 16
                && c.level < 64
                && c.ratio < 1 << 24
                && c.mmap_len.is_multiple_of(4096)
        }
        Feature::ClockData(c) => c.version < 16 && c.clockid < 64,
        Feature::SampleTime(t) => t.first < TIME_LIMIT && t.last < TIME_LIMIT,
        _ => true,
    }
}

/// Whether the located fields of a sample or a sample_id trailer are ones the kernel
/// gives: pid and tid, a time, an id of the recording's events, a cpu. (With one event,
/// its id is not what finds its layout, and a trailer read from the next record's
/// bytes, the record's size grown, would pass unseen.)
pub(super) fn located_ok(
    meta: &Metadata,
    tid: Option<(i32, i32)>,
    time: Option<u64>,
    ids: [Option<u64>; 3],
    cpu: Option<u32>,
) -> bool {
    tid.is_none_or(|(p, t)| pid_ok(p) && pid_ok(t))
        && time.is_none_or(|t| t < TIME_LIMIT)
        && ids.iter().flatten().all(|&id| id_ok(meta, id))
        && cpu.is_none_or(|c| u64::from(c) < CPU_LIMIT)
}

/// Whether counter values are ones the kernel gives: counts and times below 2^62, ids
/// of the recording's events, lost counts of a ring buffer.
pub(super) fn read_ok(
    meta: &Metadata,
    times: [Option<u64>; 2],
    mut values: impl Iterator<Item = ReadValue>,
) -> bool {
    times.iter().flatten().all(|&t| t < TIME_LIMIT)
        && values.all(|v| {
            v.value < TIME_LIMIT
                && v.id.is_none_or(|id| id_ok(meta, id))
                && v.lost.is_none_or(|l| l < COUNT_LIMIT)
        })
}

/// The values of a READ record or a sample's READ field.
pub(super) fn read_data_ok(meta: &Metadata, r: &ReadData) -> bool {
    match r {
        ReadData::Single {
            value,
            time_enabled,
            time_running,
            id,
            lost,
        } => {
            let v = ReadValue {
                value: *value,
                id: *id,
                lost: *lost,
            };
            read_ok(meta, [*time_enabled, *time_running], std::iter::once(v))
        }
        ReadData::Group {
            time_enabled,
            time_running,
            values,
        } => read_ok(meta, [*time_enabled, *time_running], values.iter().copied()),
    }
}

/// Whether the recording has an event that can write AUX area data: a PMU of its own
/// (Intel PT and BTS, CoreSight, SPE: types from PERF_TYPE_MAX, 6, up). The AUX trace's
/// records (AUXTRACE_INFO, AUXTRACE, AUXTRACE_ERROR, AUX, ITRACE_START,
/// AUX_OUTPUT_HW_ID) come from no other.
fn aux_capable(meta: &Metadata) -> bool {
    meta.attrs().iter().any(|a| a.attr.type_ >= 6)
}

/// Whether a mapping's address and length are a user one's (below 2^56, the end of
/// user space on every architecture) or a kernel one's (in the top 2^48 bytes).
fn mapping_ok(addr: u64, len: u64) -> bool {
    let end = addr.checked_add(len);
    len < 1 << 48 && (end.is_some_and(|e| e <= 1 << 56) || addr >= 0xffff_0000_0000_0000)
}

/// Whether the numbers of a record are ones the kernel or perf gives; see the module
/// documentation.
pub(super) fn numbers_ok(body: &RecordBody, meta: &Metadata) -> bool {
    let pids: &[i32] = match body {
        RecordBody::Comm(c) => &[c.pid, c.tid],
        RecordBody::Mmap(m) => &[m.pid, m.tid],
        RecordBody::Mmap2(m) => &[m.pid, m.tid],
        RecordBody::Fork(f) | RecordBody::Exit(f) => &[f.pid, f.ppid, f.tid, f.ptid],
        RecordBody::Read(r) => &[r.pid, r.tid],
        RecordBody::ItraceStart(i) => &[i.pid, i.tid],
        RecordBody::SwitchCpuWide(s) => &[s.next_prev_pid, s.next_prev_tid],
        RecordBody::Namespaces(n) => &[n.pid, n.tid],
        RecordBody::Auxtrace(a) => &[a.tid],
        RecordBody::AuxtraceError(e) => &[e.pid, e.tid],
        _ => &[],
    };
    if !pids.iter().all(|&p| pid_ok(p)) {
        return false;
    }
    match body {
        // PROT_* and the MAP_* flags the kernel reports (its MMAP2 of Linux 3.12 to
        // 3.15 had neither, and the file name begins where they are read).
        // perf's own maps of the kernel (pid -1) span what perf likes (addr 0, len -1).
        RecordBody::Mmap2(m) => {
            m.prot < 1 << 4 && m.flags < 1 << 24 && (m.pid == -1 || mapping_ok(m.addr, m.len))
        }
        RecordBody::Mmap(m) => m.pid == -1 || mapping_ok(m.addr, m.len),
        RecordBody::Ksymbol(k) => mapping_ok(k.addr, u64::from(k.len)),
        RecordBody::Read(r) => read_data_ok(meta, &r.values),
        RecordBody::AuxtraceInfo(_)
        | RecordBody::AuxtraceError(_)
        | RecordBody::Aux(_)
        | RecordBody::ItraceStart(_)
        | RecordBody::AuxOutputHwId(_)
            if !aux_capable(meta) =>
        {
            false
        }
        RecordBody::Auxtrace(a) => {
            aux_capable(meta)
                && a.offset < COUNT_LIMIT
                && a.reference < TIME_LIMIT
                && a.idx < 1 << 16
                && (u64::from(a.cpu) < CPU_LIMIT || a.cpu == u32::MAX)
        }
        // Intel PT's and BTS's first two words: their PMU's type and the time shift.
        RecordBody::AuxtraceInfo(i) if (1..=2).contains(&i.type_) => {
            let pmu = i.priv_.first().copied().unwrap_or(u64::MAX);
            meta.attrs().iter().any(|a| u64::from(a.attr.type_) == pmu)
                && i.priv_.get(1).is_none_or(|&shift| shift < 64)
        }
        RecordBody::Lost(l) => id_ok(meta, l.id) && l.lost < COUNT_LIMIT,
        RecordBody::Throttle(t) | RecordBody::Unthrottle(t) => {
            id_ok(meta, t.id) && id_ok(meta, t.stream_id)
        }
        RecordBody::LostSamples(l) => l.lost < COUNT_LIMIT,
        // PERF_AUX_FLAG_*: four flags and the PMU's format byte.
        RecordBody::Aux(a) => a.flags < 1 << 16,
        RecordBody::TimeConv(t) => {
            t.time_shift < 64
                && t.time_mult <= u64::from(u32::MAX)
                && t.cycles.as_ref().is_none_or(|c| {
                    c.cap_user_time_zero <= 1 && c.cap_user_time_short <= 1 && c.reserved == [0; 6]
                })
        }
        RecordBody::ThreadMap(t) => t
            .entries
            .iter()
            .all(|e| any_or_below(e.pid, PID_MAX_LIMIT as u64)),
        RecordBody::IdIndex(x) => x.entries.iter().all(|e| {
            id_ok(meta, e.id)
                && any_or_below(e.cpu, CPU_LIMIT)
                && any_or_below(e.tid, PID_MAX_LIMIT as u64)
        }),
        RecordBody::Stat(s) => id_ok(meta, s.id),
        // PERF_STAT_ROUND_TYPE__INTERVAL and __FINAL.
        RecordBody::StatRound(r) => r.type_ <= 1,
        // PERF_STAT_CONFIG_TERM__*: aggregation mode, interval, scale, aggregation level.
        RecordBody::StatConfig(c) => c.entries.iter().all(|e| e.tag < 16),
        RecordBody::EventUpdate(u) => id_ok(meta, u.id),
        RecordBody::HeaderAttr(a) => attr_ok(&a.attr) && attr_ids_ok(&a.ids),
        // Old perf's names of tracepoint events, by their config.
        RecordBody::HeaderEventType(e) => meta.attrs().iter().any(|a| a.attr.config == e.event_id),
        RecordBody::SchedstatCpu(s) => u64::from(s.cpu) < CPU_LIMIT,
        RecordBody::SchedstatDomain(s) => u64::from(s.cpu) < CPU_LIMIT,
        _ => true,
    }
}

/// Whether `extra`, the bytes of a kernel record between its body and its sample_id
/// trailer, is a sample_id of the record's event and zeros: perf 6.1's synthesized
/// BPF_EVENT records put one there (and zeros where the trailer is).
pub(super) fn misplaced_trailer(item: &RecordRef<'_>, extra: &[u8]) -> bool {
    if !item.raw.record_type().has_sample_id_trailer() {
        return false;
    }
    let Ok(event) = event_of(item, false) else {
        return false;
    };
    let Some(format) = item.meta.events().format(event) else {
        return false;
    };
    let len = format.sample_id_len();
    if len == 0 || extra.len() < len || extra[len..].iter().any(|&b| b != 0) {
        return false;
    }
    let endian = item.meta.endian;
    let Ok(sid) = decode::<SampleId>(&extra[..len], endian, (format.sample_type,), 0, "sample_id")
    else {
        return false;
    };
    sid.tid.is_none_or(|t| pid_ok(t.pid) && pid_ok(t.tid))
        && sid.id.is_none_or(|id| id_ok(item.meta, id))
        && sid.identifier.is_none_or(|id| id_ok(item.meta, id))
        && sid.cpu.is_none_or(|c| u64::from(c.cpu) < CPU_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_no_pid() {
        assert!(pid_ok(-1) && pid_ok(0) && pid_ok(4_194_304));
        assert!(!pid_ok(i32::from_le_bytes(*b"zqxs")) && !pid_ok(-2));
        assert!(
            any_or_below(u64::MAX, 5) && !any_or_below(u64::from_le_bytes(*b"zqxsecre"), 1 << 48)
        );
    }
}
