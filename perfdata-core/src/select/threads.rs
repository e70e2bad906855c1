//! The threads side-band records are about, and their commands as perf names them.

use std::borrow::Cow;
use std::collections::HashMap;

use binrw::Endian;

pub use crate::record::TaskScope;
use crate::record::{CommView, ForkView, RecordView};
use crate::record::{RecordType, TaskFacts};
use crate::RecordRef;

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

/// The task a side-band record is about, as its type's catalogue row says
/// ([`crate::record::Facts::task`]): COMM, NAMESPACES, READ, ITRACE_START, MMAP and
/// MMAP2 name it in their pid and tid fields, FORK and EXIT in pid and tid (after
/// ppid); SWITCH, SWITCH_CPU_WIDE, CGROUP, AUX and AUX_OUTPUT_HW_ID are about the task
/// their sample_id names. `None` for other records (samples, the kernel's KSYMBOL,
/// BPF_EVENT, TEXT_POKE, LOST counts, perf's own records).
pub fn task_of(item: &RecordRef<'_>) -> Option<Task> {
    let facts = item.raw.record_type().facts();
    match facts.task {
        TaskFacts::Fields { .. } => {
            let (pid, tid, scope) = facts.task_fields(item.raw.bytes, item.meta.endian)?;
            Some(Task { pid, tid, scope })
        }
        TaskFacts::Trailer => {
            let at = item.locate();
            Some(Task {
                pid: at.pid?,
                tid: at.tid?,
                scope: TaskScope::Thread,
            })
        }
        TaskFacts::None => None,
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
                if let Ok(c) = CommView::new(bytes, endian, 0) {
                    self.0.insert(c.tid() as u32, c.comm().to_vec());
                }
            }
            RecordType::Fork => {
                if let Ok(f) = ForkView::new(bytes, endian, 0) {
                    if let Some(c) = self.0.get(&(f.ptid() as u32)).cloned() {
                        self.0.insert(f.tid() as u32, c);
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
