//! The threads side-band records are about, and their commands as perf names them.

use std::borrow::Cow;
use std::collections::HashMap;

use binrw::Endian;

use crate::record::RecordType;
use crate::{u32_at, RecordRef};

/// Whether a side-band record belongs to a thread or to its process (MMAP and MMAP2:
/// a process's threads share its maps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskScope {
    /// The thread's own (COMM, FORK, EXIT, SWITCH, ...).
    Thread,
    /// Its process's (MMAP, MMAP2).
    Process,
}

/// The task a side-band record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task {
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// The thread's record or its process's.
    pub scope: TaskScope,
}

/// The task a side-band record is about: COMM, NAMESPACES, READ, ITRACE_START, MMAP and
/// MMAP2 start with pid and tid, FORK and EXIT with pid, ppid, tid; SWITCH,
/// SWITCH_CPU_WIDE, CGROUP, AUX and AUX_OUTPUT_HW_ID are about the task their sample_id
/// names. `None` for other records (samples, the kernel's KSYMBOL, BPF_EVENT,
/// TEXT_POKE, LOST counts, perf's own records).
pub fn task_of(item: &RecordRef<'_>) -> Option<Task> {
    let (b, e) = (item.raw.bytes, item.meta.endian);
    let word = |o| u32_at(b, o, e).map(|v| v as i32);
    let task = |pid, tid, scope| Some(Task { pid, tid, scope });
    match item.raw.record_type() {
        RecordType::Comm | RecordType::Namespaces | RecordType::Read | RecordType::ItraceStart => {
            task(word(8)?, word(12)?, TaskScope::Thread)
        }
        RecordType::Fork | RecordType::Exit => task(word(8)?, word(16)?, TaskScope::Thread),
        RecordType::Mmap | RecordType::Mmap2 => task(word(8)?, word(12)?, TaskScope::Process),
        RecordType::Switch
        | RecordType::SwitchCpuWide
        | RecordType::Cgroup
        | RecordType::Aux
        | RecordType::AuxOutputHwId => {
            let at = item.locate();
            task(at.pid?, at.tid?, TaskScope::Thread)
        }
        _ => None,
    }
}

/// Each thread's command as the records so far name it, as perf's `thread__comm_str`
/// gives it: COMM names a thread, FORK gives the child its parent's. Fed in perf's
/// order ([`crate::ordered`]), it names each sample's thread as perf does.
#[derive(Debug, Clone, Default)]
pub struct ThreadComms(HashMap<u32, Vec<u8>>);

impl ThreadComms {
    /// Follow a record of type `ty` (COMM and FORK change commands).
    pub fn track(&mut self, ty: RecordType, bytes: &[u8], endian: Endian) {
        match ty {
            RecordType::Comm => {
                if let Some(tid) = u32_at(bytes, 12, endian) {
                    let name = &bytes[16.min(bytes.len())..];
                    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                    self.0.insert(tid, name[..end].to_vec());
                }
            }
            RecordType::Fork => {
                if let (Some(tid), Some(ptid)) =
                    (u32_at(bytes, 16, endian), u32_at(bytes, 20, endian))
                {
                    if let Some(c) = self.0.get(&ptid).cloned() {
                        self.0.insert(tid, c);
                    }
                }
            }
            _ => {}
        }
    }

    /// The thread's command, if a record named it.
    pub fn get(&self, tid: u32) -> Option<&[u8]> {
        self.0.get(&tid).map(Vec::as_slice)
    }

    /// The thread's command; perf shows `:TID` for a thread it has no COMM of.
    pub fn of(&self, tid: u32) -> Cow<'_, [u8]> {
        match self.get(tid) {
            Some(c) => Cow::Borrowed(c),
            None => Cow::Owned(format!(":{tid}").into_bytes()),
        }
    }
}
