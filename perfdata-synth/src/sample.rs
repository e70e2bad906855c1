//! Samples: every field the event's sample_type asks for, filled from a [`SampleSpec`]
//! into one [`Sample`] model that is kept and reused, and encoded straight into the
//! writer's buffer, so that a sample costs no allocation (the part of a trace that
//! grows with its size).

use binrw::BinWrite;
use perfdata_core::attr::{BranchSampleType, SampleType};
use perfdata_core::record::{
    misc, BranchStack, Callchain, CpuRes, PidTid, RawData, ReadData, ReadValue, RecordHeader,
    RecordType, Regs, StackUser,
};

use super::tracing::TracepointHit;
use super::writer::{SampleSpec, SynthTarget, SynthWriter};
use perfdata_write::error::{Result, WriteError};

/// perf's callchain context markers.
const PERF_CONTEXT_KERNEL: u64 = -128i64 as u64;
const PERF_CONTEXT_USER: u64 = -512i64 as u64;
/// Addresses from here up are the kernel's (x86-64).
const KERNEL_START: u64 = 0xffff_8000_0000_0000;

fn encode_err(e: binrw::Error) -> WriteError {
    WriteError::unsupported(None, format!("encoding a SAMPLE: {e}"))
}

impl<T: SynthTarget> SynthWriter<T> {
    /// A SAMPLE of `s.event`, every field its sample_type asks for filled in.
    pub fn sample(&mut self, s: &SampleSpec) -> Result<()> {
        let Some(ev) = self.events.get(s.event) else {
            return Err(WriteError::unsupported(
                None,
                format!(
                    "a sample of event {}: the trace has {}",
                    s.event,
                    self.events.len()
                ),
            ));
        };
        let st = ev.attr.sample_type;
        let bst = ev.attr.branch_sample_type;
        let has = |b| st.contains(b);
        let cpu_slot = s.cpu as usize % self.ids[s.event].len();
        let id = self.ids[s.event][cpu_slot];
        let period = s.period.unwrap_or(ev.attr.sample_period);
        let kernel = s.ip >= KERNEL_START;
        let raw = match &ev.tracepoint {
            Some(tp) if has(SampleType::RAW) => {
                self.hits += 1;
                let hit = TracepointHit {
                    pid: s.pid,
                    seq: self.hits,
                    cpu: s.cpu,
                    value: s.weight as i32,
                };
                Some(RawData::new(tp.raw(&hit, self.endian)))
            }
            _ => None,
        };
        let read = if has(SampleType::READ) {
            Some(self.group_read(s.event, cpu_slot, period))
        } else {
            None
        };
        let x = &mut self.sample;
        x.identifier = has(SampleType::IDENTIFIER).then_some(id);
        x.ip = has(SampleType::IP).then_some(s.ip);
        x.tid = has(SampleType::TID).then_some(PidTid {
            pid: s.pid,
            tid: s.tid,
        });
        x.time = has(SampleType::TIME).then_some(s.time);
        x.addr = has(SampleType::ADDR).then_some(s.addr);
        x.id = has(SampleType::ID).then_some(id);
        x.stream_id = has(SampleType::STREAM_ID).then_some(id);
        x.cpu = has(SampleType::CPU).then_some(CpuRes { cpu: s.cpu, res: 0 });
        x.period = has(SampleType::PERIOD).then_some(period);
        x.read = read;
        // The callchain's buffer is kept from sample to sample.
        let mut ips = x.callchain.take().map(|c| c.ips).unwrap_or_default();
        if has(SampleType::CALLCHAIN) {
            ips.clear();
            ips.push(if kernel {
                PERF_CONTEXT_KERNEL
            } else {
                PERF_CONTEXT_USER
            });
            ips.push(s.ip);
            ips.extend_from_slice(s.callers);
            x.callchain = Some(Callchain::new(ips));
        }
        x.raw = raw;
        x.branch_stack = has(SampleType::BRANCH_STACK).then(|| BranchStack {
            hw_idx: bst.contains(BranchSampleType::HW_INDEX).then_some(0),
            ..Default::default()
        });
        // ABI 0 (PERF_SAMPLE_REGS_ABI_NONE): no registers, as for a kernel thread.
        x.regs_user = has(SampleType::REGS_USER).then(Regs::default);
        x.stack_user = has(SampleType::STACK_USER).then(StackUser::default);
        x.weight = st
            .intersects(SampleType::WEIGHT | SampleType::WEIGHT_STRUCT)
            .then_some(s.weight);
        x.data_src = has(SampleType::DATA_SRC).then_some(0);
        x.transaction = has(SampleType::TRANSACTION).then_some(0);
        x.regs_intr = has(SampleType::REGS_INTR).then(Regs::default);
        x.phys_addr = has(SampleType::PHYS_ADDR).then_some(s.addr);
        x.cgroup = has(SampleType::CGROUP).then_some(1);
        x.data_page_size = has(SampleType::DATA_PAGE_SIZE).then_some(4096);
        x.code_page_size = has(SampleType::CODE_PAGE_SIZE).then_some(4096);
        x.aux = None;
        let t = s.time;
        self.recorded.sample_time = Some(match self.recorded.sample_time {
            Some((a, b)) => (a.min(t), b.max(t)),
            None => (t, t),
        });
        self.encode_sample(if kernel { misc::KERNEL } else { misc::USER })?;
        self.emit_encoded(true, Some(s.cpu))
    }

    /// Encode the kept sample model into `buf` after room for its header, then the
    /// header with the size now known.
    fn encode_sample(&mut self, misc: u16) -> Result<()> {
        let endian = self.endian;
        self.buf.clear();
        self.buf.resize(RecordHeader::SIZE, 0);
        let mut c = std::io::Cursor::new(&mut self.buf);
        c.set_position(RecordHeader::SIZE as u64);
        self.sample
            .write_options(&mut c, endian, ())
            .map_err(encode_err)?;
        let size = u16::try_from(self.buf.len()).map_err(|_| {
            WriteError::unsupported(
                None,
                "a SAMPLE larger than 64 KiB (the record size is a u16)",
            )
        })?;
        let mut c = std::io::Cursor::new(&mut self.buf);
        RecordHeader::new(RecordType::Sample, misc, size)
            .write_options(&mut c, endian, ())
            .map_err(encode_err)
    }

    /// The READ of a group leader's sample: every counter of the group on that CPU,
    /// each advanced by the period (the members count what the leader counts).
    fn group_read(&mut self, leader: usize, cpu_slot: usize, period: u64) -> ReadData {
        let members = std::iter::once(leader)
            .chain((0..self.events.len()).filter(|&i| self.events[i].leader == Some(leader)));
        let values = members
            .map(|m| {
                self.counters[m][cpu_slot] += period;
                ReadValue {
                    value: self.counters[m][cpu_slot],
                    id: Some(self.ids[m][cpu_slot]),
                    lost: None,
                }
            })
            .collect();
        ReadData::Group {
            time_enabled: None,
            time_running: None,
            values,
        }
    }
}
