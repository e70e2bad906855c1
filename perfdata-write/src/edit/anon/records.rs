//! The allow list of records other than SAMPLE and HEADER_FEATURE: per type, what is
//! renamed, what is kept and why it cannot carry a name or user data, what is zeroed.
//! A type not listed here (past perf's numbers, simpleperf's, a variant added to the
//! models later) is left out.

use perfdata_core::record::{
    misc, AuxtraceError, AuxtraceInfo, Content, CpuMapData, EventUpdateData, Mmap2Id, Record,
    RecordBody, RecordType, SchedstatCpuData, SchedstatDomainData, StringKind,
};
use perfdata_core::RecordRef;

use super::checks::{event_of, located_ok, numbers_ok};
use super::text::{c_text, printable, rename, rename_fixed, zero_padding};
use super::{Anonymize, Fate};
use crate::edit::Action;
use crate::error::Result;

/// PERF_AUXTRACE_INTEL_PT, whose private words may end with an address filter string.
const AUXTRACE_INTEL_PT: u32 = 1;
/// The Intel PT private words before the filter string: PMU type ... FILTER_STR_LEN.
const INTEL_PT_FILTER_AT: usize = 17;

impl Anonymize {
    /// A record other than SAMPLE and HEADER_FEATURE through the allow list.
    pub(super) fn other_record(&mut self, item: &RecordRef<'_>) -> Result<Action> {
        let ty = item.raw.record_type();
        if item.raw.rest > 0 {
            // Its payload streams past (over 16 MiB): it cannot be rewritten.
            return match ty {
                RecordType::Auxtrace if self.keep_raw => Ok(Action::Keep),
                RecordType::Auxtrace => self.leave_out(
                    item,
                    Fate::Withhold("its trace data is too large to be zeroed in memory"),
                ),
                _ => self.leave_out(item, Fate::unvouched("too large to be read")),
            };
        }
        if ty.has_sample_id_trailer() {
            if let Err(fate) = event_of(item, false) {
                return self.leave_out(item, fate);
            }
        }
        let mut record = match item.decode() {
            Ok(r) => r,
            Err(_) => {
                return self.leave_out(item, Fate::unvouched("its bytes do not fit its layout"))
            }
        };
        let trailer_ok = record.sample_id.as_ref().is_none_or(|s| {
            let tid = s.tid.map(|t| (t.pid, t.tid));
            let cpu = s.cpu.map(|c| c.cpu);
            located_ok(
                item.meta,
                tid,
                s.time,
                [s.id, s.stream_id, s.identifier],
                cpu,
            )
        });
        if !trailer_ok || !numbers_ok(&record.body, item.meta) {
            return self.leave_out(item, Fate::unvouched("numbers no kernel or perf gives"));
        }
        match self.body(&mut record) {
            Fate::Write => {}
            fate => return self.leave_out(item, fate),
        }
        if let Some(cpu) = record.sample_id.as_mut().and_then(|s| s.cpu.as_mut()) {
            cpu.res = 0; // reserved
        }
        self.write(item, record)
    }

    /// Count a renamed record.
    fn renamed(&self, changed: bool) {
        if changed {
            self.counts.borrow_mut().renamed_records += 1;
        }
    }

    /// The allow list. The numbers kept (ids, pids, tids, times, addresses, lengths,
    /// counts, flags, cpu numbers) are what the kernel or perf measured; an address or a
    /// count is the program's doing at most, never its memory.
    ///
    /// A type whose catalogue row lists all it holds besides numbers
    /// ([`Content::Listed`]) needs no arm here: the strings its row lists are renamed
    /// by what they name ([`Self::rename_strings`]), the rest are numbers. The arms are
    /// for checks and for what the rows do not list; a type whose row says it holds
    /// more ([`Content::Other`]) and has no arm is left out.
    fn body(&mut self, record: &mut Record) -> Fate {
        let flags = record.header.misc;
        let listed = record.record_type().facts().content == Content::Listed;
        let names = &self.names;
        let renamed = match &mut record.body {
            RecordBody::Mmap(m) => {
                if flags & misc::MMAP_DATA == 0 {
                    self.exec.add(m.addr, m.len);
                }
                Ok(false)
            }
            RecordBody::Mmap2(m) => {
                if m.prot & PROT_EXEC != 0 {
                    self.exec.add(m.addr, m.len);
                }
                if let Mmap2Id::BuildId {
                    build_id_size,
                    reserved1,
                    reserved2,
                    build_id,
                } = &mut m.id
                {
                    (*reserved1, *reserved2) = (0, 0);
                    let n = usize::from(*build_id_size).min(build_id.len());
                    build_id[n..].fill(0);
                }
                Ok(false)
            }
            // PERF_RECORD_KSYMBOL_TYPE_* (unknown, BPF, out of line) and its flag
            // (unregister): other values are not the kernel's.
            RecordBody::Ksymbol(k) if k.ksym_type > 2 || k.flags > 1 => {
                return Fate::unvouched("a symbol type or flag the kernel does not give")
            }
            // PERF_BPF_EVENT_PROG_LOAD and _UNLOAD; the tag is a hash of the program.
            RecordBody::BpfEvent(e) if !(1..=2).contains(&e.type_) || e.flags != 0 => {
                return Fate::unvouched("a BPF event type or flag the kernel does not give")
            }
            RecordBody::ThreadMap(t) => {
                let mut any = false;
                for e in &mut t.entries {
                    any |= rename_fixed(&mut e.comm, |b| names.comm(b));
                }
                Ok(any)
            }
            // The record's body is a BUILD_ID entry, renamed as the feature's are.
            RecordBody::HeaderBuildId(e) => match super::features::build_id_entry(names, e) {
                Ok(changed) => Ok(changed),
                Err(fate) => return fate,
            },
            RecordBody::HeaderTracingData(t) => {
                return self.tracing_record(t, &mut record.payload);
            }
            RecordBody::Auxtrace(a) => {
                a.reserved = 0;
                if !self.keep_raw && !record.payload.is_empty() {
                    let mut c = self.counts.borrow_mut();
                    c.auxtrace_zeroed += 1;
                    c.auxtrace_bytes += record.payload.len() as u64;
                    record.payload.fill(0);
                }
                Ok(false)
            }
            RecordBody::AuxtraceInfo(info) => return self.auxtrace_info(info),
            RecordBody::AuxtraceError(e) => {
                self.auxtrace_error(e);
                Ok(false)
            }
            RecordBody::TextPoke(t) => {
                // Kernel text before and after a change: of no use with the AUX trace
                // zeroed, which is what it serves to decode.
                if !self.keep_raw && t.bytes.iter().any(|&b| b != 0) {
                    t.bytes.fill(0);
                    self.counts
                        .borrow_mut()
                        .zero("TEXT_POKE instruction bytes", 1);
                }
                Ok(false)
            }
            // Event names and units are kept: perf's vocabulary, as in EVENT_DESC.
            RecordBody::EventUpdate(u) => match &mut u.data {
                EventUpdateData::Unit(s) | EventUpdateData::Name(s) => match c_text(&s.bytes) {
                    Some(t) if printable(t) => {
                        zero_padding(&mut s.bytes);
                        Ok(false)
                    }
                    _ => return Fate::unvouched("an event name that is not text"),
                },
                EventUpdateData::Scale(_) | EventUpdateData::Cpus(_) => Ok(false),
                _ => return Fate::unvouched("an update type perf does not define"),
            },
            // Old perf's tracepoint names: perf's vocabulary. A name of 8, 16, ... bytes
            // fills its room, with no NUL.
            RecordBody::HeaderEventType(e) => match c_text(&e.name.bytes).or(Some(&e.name.bytes)) {
                Some(t) if printable(t) => {
                    zero_padding(&mut e.name.bytes);
                    Ok(false)
                }
                _ => return Fate::unvouched("an event name that is not text"),
            },
            RecordBody::HeaderAttr(a) => {
                // Bytes of attrs newer than the model: their meaning is not known.
                a.attr.tail.fill(0);
                Ok(false)
            }
            RecordBody::CpuMap(m) => {
                zero_cpu_map_pad(&mut m.data);
                Ok(false)
            }
            RecordBody::TimeConv(t) => {
                if let Some(c) = &mut t.cycles {
                    c.reserved = [0; 6];
                }
                Ok(false)
            }
            RecordBody::SchedstatCpu(s) => match s.counters {
                SchedstatCpuData::Known(_) => {
                    s.pad = [0; 2];
                    Ok(false)
                }
                _ => return Fate::unvouched("a schedstat version whose layout is not known"),
            },
            RecordBody::SchedstatDomain(s) => match s.counters {
                SchedstatDomainData::Unknown(_) => {
                    return Fate::unvouched("a schedstat version whose layout is not known")
                }
                _ => Ok(false),
            },
            // A user callchain, as a sample's: entries in no executable mapping zeroed.
            RecordBody::CallchainDeferred(c) => {
                let stray: Vec<usize> =
                    super::sample::stray_entries(c.ips.iter().copied(), misc::USER, &self.exec)
                        .collect();
                for &i in &stray {
                    c.ips[i] = 0;
                }
                self.counts
                    .borrow_mut()
                    .zero(super::sample::STRAY, stray.len() as u64);
                Ok(false)
            }
            RecordBody::BpfMetadata(_) => {
                return Fate::Withhold(
                    "BPF programs' metadata: names and values their authors chose",
                )
            }
            // The row's facts say what it holds: numbers, and the strings renamed below.
            _ if listed => Ok(false),
            // Containers are expanded before edits see records; anything else (Raw: a
            // type perf does not define) is not understood.
            _ => return Fate::unvouched("a record type anonymize does not know"),
        };
        let renamed = renamed.and_then(|own| Ok(own | self.rename_strings(record)?));
        match renamed {
            Ok(changed) => {
                self.renamed(changed);
                Fate::Write
            }
            Err(fate) => fate,
        }
    }

    /// The strings a record's catalogue row lists, each renamed as what it names is;
    /// whether one changed.
    fn rename_strings(&self, record: &mut Record) -> Result<bool, Fate> {
        let names = &self.names;
        let mut changed = false;
        for (kind, field) in record.body.strings_mut() {
            changed |= match kind {
                StringKind::Comm => rename(field, |b| names.comm(b)),
                StringKind::Path => rename(field, |b| names.path(b)),
                StringKind::Cgroup => rename(field, |b| names.cgroup(b)),
                StringKind::Symbol => rename(field, |b| super::bpf::ksymbol(names, b)),
            }?;
        }
        Ok(changed)
    }

    /// AUXTRACE_INFO: the private words are the decoder's numbers (PMU type, time
    /// conversion, capabilities, per-CPU trace configuration) for the trace types perf
    /// defines, except Intel PT's address filter, a string that names binaries and
    /// functions: zeroed. Other types' words are not known: left out.
    pub(super) fn auxtrace_info(&self, info: &mut AuxtraceInfo) -> Fate {
        info.reserved = 0;
        match info.type_ {
            AUXTRACE_INTEL_PT => {
                let len = info.priv_.get(INTEL_PT_FILTER_AT - 1).copied().unwrap_or(0);
                if len > 0 {
                    // perf: the string and its NUL, rounded up to 8 bytes.
                    let words = (len.saturating_add(1)).div_ceil(8);
                    let end = INTEL_PT_FILTER_AT
                        .saturating_add(usize::try_from(words).unwrap_or(usize::MAX))
                        .min(info.priv_.len());
                    if let Some(filter) = info.priv_.get_mut(INTEL_PT_FILTER_AT..end) {
                        filter.fill(0);
                        self.counts.borrow_mut().zero("Intel PT address filters", 1);
                    }
                }
                Fate::Write
            }
            2..=6 => Fate::Write,
            _ => Fate::unvouched("an AUX trace type whose parameters are not known"),
        }
    }

    /// AUXTRACE_ERROR: the decoder's message may quote what it decoded: zeroed.
    fn auxtrace_error(&self, e: &mut AuxtraceError) {
        if e.msg.iter().any(|&b| b != 0) {
            e.msg.fill(0);
            self.counts.borrow_mut().zero("AUXTRACE_ERROR messages", 1);
        }
    }
}

/// PROT_EXEC of MMAP2's prot.
const PROT_EXEC: u32 = 4;

fn zero_cpu_map_pad(data: &mut CpuMapData) {
    match data {
        CpuMapData::Mask64 { pad, .. } => *pad = [0; 4],
        CpuMapData::Range { pad, .. } => *pad = 0,
        _ => {}
    }
}
