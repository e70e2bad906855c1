//! The kernel's less common records: LOST, LOST_SAMPLES, THROTTLE and UNTHROTTLE,
//! SWITCH, NAMESPACES, CGROUP and KSYMBOL, each from its perfdata-core model with the
//! sample_id trailer of the first event.

use perfdata_core::attr::AttrFlags;
use perfdata_core::record::{
    misc, Cgroup, Ksymbol, Lost, LostSamples, NamespaceLink, Namespaces, PaddedString, RecordBody,
    RecordType, Throttle,
};

use super::writer::{SynthTarget, SynthWriter};
use perfdata_write::error::Result;

/// The attr flags that ask the kernel for these records (context_switch, namespaces,
/// cgroup, ksymbol): perf sets them on its tracking event.
pub const EXTRA_RECORD_FLAGS: AttrFlags = AttrFlags::CONTEXT_SWITCH
    .union(AttrFlags::NAMESPACES)
    .union(AttrFlags::CGROUP)
    .union(AttrFlags::KSYMBOL);

/// KSYMBOL's type for a BPF program (PERF_RECORD_KSYMBOL_TYPE_BPF).
const KSYMBOL_TYPE_BPF: u16 = 1;

impl<T: SynthTarget> SynthWriter<T> {
    /// The first event's id on `cpu` (what LOST and THROTTLE name).
    fn first_id(&self, cpu: u32) -> u64 {
        self.ids[0][cpu as usize % self.ids[0].len()]
    }

    /// LOST: `lost` records of the first event dropped on `cpu`.
    pub fn lost(&mut self, lost: u64, time: u64, cpu: u32) -> Result<()> {
        let body = RecordBody::Lost(Lost {
            id: self.first_id(cpu),
            lost,
        });
        self.kernel_record(RecordType::Lost, 0, body, (-1, -1, time, cpu))
    }

    /// LOST_SAMPLES: `lost` samples dropped on `cpu`.
    pub fn lost_samples(&mut self, lost: u64, time: u64, cpu: u32) -> Result<()> {
        let body = RecordBody::LostSamples(LostSamples { lost });
        self.kernel_record(RecordType::LostSamples, 0, body, (-1, -1, time, cpu))
    }

    /// THROTTLE (or UNTHROTTLE) of the first event on `cpu`.
    pub fn throttle(&mut self, unthrottle: bool, time: u64, cpu: u32) -> Result<()> {
        let id = self.first_id(cpu);
        let t = Throttle {
            time,
            id,
            stream_id: id,
        };
        let (ty, body) = if unthrottle {
            (RecordType::Unthrottle, RecordBody::Unthrottle(t))
        } else {
            (RecordType::Throttle, RecordBody::Throttle(t))
        };
        self.kernel_record(ty, 0, body, (-1, -1, time, cpu))
    }

    /// SWITCH: the thread is switched in, or out (`out`, misc SWITCH_OUT).
    pub fn switch(&mut self, pid: i32, tid: i32, out: bool, time: u64, cpu: u32) -> Result<()> {
        let misc = if out { misc::SWITCH_OUT } else { 0 };
        self.kernel_record(
            RecordType::Switch,
            misc,
            RecordBody::Switch,
            (pid, tid, time, cpu),
        )
    }

    /// NAMESPACES: the thread's 7 namespaces (net, uts, ipc, pid, user, mnt, cgroup),
    /// each on device 4 with inode `base + index`.
    pub fn namespaces(&mut self, pid: i32, tid: i32, base: u64, time: u64) -> Result<()> {
        let links = (0..7)
            .map(|i| NamespaceLink {
                dev: 4,
                ino: base + i,
            })
            .collect();
        let body = RecordBody::Namespaces(Namespaces { pid, tid, links });
        self.kernel_record(RecordType::Namespaces, 0, body, (pid, tid, time, 0))
    }

    /// CGROUP: the cgroup `id` is at `path`.
    pub fn cgroup(&mut self, id: u64, path: &str, time: u64) -> Result<()> {
        let body = RecordBody::Cgroup(Cgroup {
            id,
            path: PaddedString::new(path),
        });
        self.kernel_record(RecordType::Cgroup, 0, body, (-1, -1, time, 0))
    }

    /// KSYMBOL: a BPF program's symbol `name` registered at `addr`.
    pub fn ksymbol(&mut self, addr: u64, len: u32, name: &str, time: u64) -> Result<()> {
        let body = RecordBody::Ksymbol(Ksymbol {
            addr,
            len,
            ksym_type: KSYMBOL_TYPE_BPF,
            flags: 0,
            name: PaddedString::new(name),
        });
        self.kernel_record(RecordType::Ksymbol, misc::KERNEL, body, (-1, -1, time, 0))
    }
}
