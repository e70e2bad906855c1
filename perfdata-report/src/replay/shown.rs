//! Side-band records handed to the caller in perf's order, among the samples, for perf
//! script's `--show-task-events`, `--show-mmap-events`, `--show-switch-events`,
//! `--show-namespace-events` and `--show-lost-events` (builtin-script.c's
//! `process_*_event`): the record, perf's `sample` for it, and the thread perf names it
//! by, as of its turn.

use perfdata_core::raw::Located;
use perfdata_core::record::{Record, RecordBody, RecordType};

use crate::process::{Machine, ThreadId};

/// A side-band record as perf script prints it.
#[derive(Debug, Clone)]
pub struct ShownRecord {
    /// The record.
    pub record: Record,
    /// The event its sample id names (perf's `evlist__id2evsel`: the first event when
    /// there is one event or no id).
    pub event: usize,
    /// perf's `sample` of the record: from its sample_id_all trailer, -1 where that
    /// lacks a field; without sample_id_all, the record's pid and tid, CPU 0 and time 0
    /// (a FORK's own time).
    pub pid: i32,
    /// See `pid`.
    pub tid: i32,
    /// See `pid` (-1 is `u32::MAX`, as perf's u32).
    pub cpu: u32,
    /// See `pid` (-1 is `u64::MAX`).
    pub time: u64,
    /// The thread perf names the line by, found as the record's turn comes (None: a
    /// switch or lost record without a thread id, which perf names `:-1`).
    pub thread: Option<ThreadId>,
    /// Where the record is in the file (or in the decompressed stream), for errors.
    pub offset: u64,
    /// The recording's metadata as of the record, when samples' [`super::SampleExtra`]
    /// is kept (in a pipe, attrs and features arrive as records).
    pub meta: Option<std::sync::Arc<perfdata_core::Metadata>>,
    /// The pid and tid the record's own fields name, as its type's facts place them
    /// (task, mmap and namespaces records; None for a switch or lost record).
    own: Option<(i32, i32)>,
}

impl ShownRecord {
    /// `record` as perf script sees it, read at `offset` and located at `at`;
    /// `sample_id_all` is its event's attr bit; `own` the pid and tid its own fields name.
    pub(crate) fn new(
        record: Record,
        offset: u64,
        at: &Located,
        sample_id_all: bool,
        own: Option<(i32, i32)>,
    ) -> Self {
        let event = at.event.unwrap_or(0);
        let (pid, tid) = own.unwrap_or((-1, -1));
        if sample_id_all {
            ShownRecord {
                record,
                event,
                pid: at.pid.unwrap_or(-1),
                tid: at.tid.unwrap_or(-1),
                cpu: at.cpu.unwrap_or(u32::MAX),
                time: at.time.unwrap_or(u64::MAX),
                thread: None,
                offset,
                meta: None,
                own,
            }
        } else {
            let time = match &record.body {
                RecordBody::Fork(f) => f.time,
                _ => 0,
            };
            ShownRecord {
                record,
                event,
                pid,
                tid,
                cpu: 0,
                time,
                thread: None,
                offset,
                meta: None,
                own,
            }
        }
    }

    /// Whether perf prints the line before it replays the record (an EXIT: the thread
    /// is named as it was), not after.
    pub(crate) fn printed_first(&self) -> bool {
        self.record.header.type_ == RecordType::Exit.as_u32()
    }

    /// Find the thread perf names the line by (`machine__findnew_thread` of the record's
    /// own pid and tid; of the sample's for a switch or lost record).
    pub(crate) fn find_thread(&mut self, machine: &mut Machine) {
        self.thread = match self.own {
            Some((pid, tid)) => Some(machine.findnew_thread(pid, tid)),
            None if self.tid != -1 => Some(machine.findnew_thread(self.pid, self.tid)),
            None => None,
        };
    }
}
