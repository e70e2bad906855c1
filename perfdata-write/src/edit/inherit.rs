//! What a kept thread inherits from a parent whose side-band was stripped.
//!
//! perf gives a forked child its parent's comm and (for a new process) a copy of the
//! parent's maps when it meets the FORK record. When the parent's COMM and MMAP records
//! were stripped, the child would show as `:tid` with unresolved user addresses until it
//! execs. So the maps of stripped processes are held (until they exit or exec: memory
//! follows the live mappings, not the file), and a kept FORK of such a parent is
//! followed by a COMM with the inherited name and copies of the parent's maps, each
//! with the FORK's sample_id trailer.

use std::collections::{HashMap, HashSet};

use binrw::Endian;
use perfdata_core::raw::OwnedRecord;
use perfdata_core::record::{misc, Comm, PaddedString, Record, RecordBody, RecordType, TaskFacts};
use perfdata_core::record::{CommView, ForkView};
use perfdata_core::select::task_of;
use perfdata_core::RecordRef;

use super::Action;
use crate::error::Result;

#[derive(Default)]
pub(super) struct Inheritance {
    /// Maps (MMAP/MMAP2 records) of processes whose side-band was stripped, by pid.
    parked: HashMap<u32, Vec<OwnedRecord>>,
    /// Threads whose comm never reached the output.
    stripped_tids: HashSet<u32>,
}

fn put_u32(bytes: &mut [u8], at: usize, v: u32, endian: Endian) {
    let b = match endian {
        Endian::Little => v.to_le_bytes(),
        Endian::Big => v.to_be_bytes(),
    };
    bytes[at..at + 4].copy_from_slice(&b);
}

/// The sample_id trailer of a record (empty when its event has none).
fn trailer<'a>(item: &RecordRef<'a>) -> &'a [u8] {
    let b = item.raw.bytes;
    let len = item
        .meta
        .events()
        .event_of(b, false, item.meta.endian)
        .and_then(|e| item.meta.events().format(e))
        .map_or(0, |f| f.sample_id_len());
    if b.len() >= 8 + len {
        &b[b.len() - len..]
    } else {
        &[]
    }
}

impl Inheritance {
    /// A side-band record was stripped.
    pub(super) fn stripped(&mut self, item: &RecordRef<'_>) {
        match item.raw.record_type() {
            RecordType::Mmap | RecordType::Mmap2 => {
                if let Some(task) = task_of(item) {
                    let owned = item.raw.to_owned_record();
                    self.parked.entry(task.pid as u32).or_default().push(owned);
                }
            }
            RecordType::Comm => {
                if let Ok(c) = item.view::<CommView>() {
                    self.stripped_tids.insert(c.tid() as u32);
                }
                self.forget_on_exec(item);
            }
            RecordType::Fork => {
                if let Ok(f) = item.view::<ForkView>() {
                    self.stripped_tids.insert(f.tid() as u32);
                }
            }
            RecordType::Exit => self.forget_exit(item),
            _ => {}
        }
    }

    /// An exec replaces the process's maps.
    fn forget_on_exec(&mut self, item: &RecordRef<'_>) {
        if item.raw.header.misc & misc::COMM_EXEC != 0 {
            if let Ok(c) = item.view::<CommView>() {
                self.parked.remove(&(c.pid() as u32));
            }
        }
    }

    fn forget_exit(&mut self, item: &RecordRef<'_>) {
        if let Ok(f) = item.view::<ForkView>() {
            let (pid, tid) = (f.pid() as u32, f.tid() as u32);
            self.stripped_tids.remove(&tid);
            if pid == tid {
                self.parked.remove(&pid);
            }
        }
    }

    /// A side-band record was kept: for a FORK of a stripped parent, the records that
    /// give the child what it inherits (`comm` is the parent thread's).
    pub(super) fn kept(
        &mut self,
        item: &RecordRef<'_>,
        parent_comm: Option<&[u8]>,
    ) -> Result<Action> {
        match item.raw.record_type() {
            RecordType::Comm => self.forget_on_exec(item),
            RecordType::Exit => self.forget_exit(item),
            _ => {}
        }
        if item.raw.record_type() != RecordType::Fork {
            return Ok(Action::Keep);
        }
        let Ok(f) = item.view::<ForkView>() else {
            return Ok(Action::Keep);
        };
        let (pid, ppid, tid, ptid) = (
            f.pid() as u32,
            f.ppid() as u32,
            f.tid() as u32,
            f.ptid() as u32,
        );
        let mut out = vec![item.raw.to_owned_record()];
        if self.stripped_tids.contains(&ptid) {
            if let Some(comm) = parent_comm {
                let bytes = comm_record(pid, tid, comm, trailer(item), item.meta.endian)?;
                out.push(super::Action::record_like(&item.raw, bytes));
            }
        }
        if pid != ppid {
            for map in self.parked.get(&ppid).into_iter().flatten() {
                out.push(rehome(map, pid, tid, item));
            }
        }
        Ok(if out.len() == 1 {
            Action::Keep
        } else {
            Action::Replace(out)
        })
    }

    /// Process `pid` is kept from the side-band record `item` of its thread `tid` on,
    /// though its maps so far were stripped (`--keep --tid` of a thread started during
    /// the recording): its live maps, to follow `item`, with `item`'s sample_id trailer
    /// (so that perf has them from that time on).
    pub(super) fn adopt(&mut self, item: &RecordRef<'_>, pid: u32, tid: u32) -> Vec<OwnedRecord> {
        let maps = self.parked.remove(&pid).unwrap_or_default();
        maps.iter().map(|map| rehome(map, pid, tid, item)).collect()
    }
}

/// A copy of the parked `map` for thread `tid` of process `pid`, with the sample_id
/// trailer of `item` (a FORK or another record of that thread), made where it is.
fn rehome(map: &OwnedRecord, pid: u32, tid: u32, item: &RecordRef<'_>) -> OwnedRecord {
    let e = item.meta.endian;
    let raw = map.as_raw(e);
    let own = trailer(&RecordRef::new(raw, item.meta));
    let new_trailer = trailer(item);
    let mut bytes = map.bytes.clone();
    // Where its catalogue row says the task is (MMAP and MMAP2 are parked; both name it).
    if let TaskFacts::Fields {
        pid: pid_at,
        tid: tid_at,
        ..
    } = raw.record_type().facts().task
    {
        if bytes.len() >= pid_at.max(tid_at) + 4 {
            put_u32(&mut bytes, pid_at, pid, e);
            put_u32(&mut bytes, tid_at, tid, e);
        }
    }
    if own.len() == new_trailer.len() {
        let at = bytes.len() - own.len();
        bytes[at..].copy_from_slice(new_trailer);
    }
    super::Action::record_like(&item.raw, bytes)
}

/// A COMM record (not an exec) for (pid, tid), the name NUL-padded to 8 bytes, then
/// `trailer` (the sample_id bytes of the record it follows, kept as they are).
fn comm_record(pid: u32, tid: u32, comm: &[u8], trailer: &[u8], endian: Endian) -> Result<Vec<u8>> {
    let mut name = comm.to_vec();
    name.resize((comm.len() + 1).div_ceil(8) * 8, 0);
    let body = Comm {
        pid: pid as i32,
        tid: tid as i32,
        comm: PaddedString { bytes: name },
    };
    let record = Record {
        extra: trailer.to_vec(),
        ..Record::new(RecordType::Comm, RecordBody::Comm(body))
    };
    Ok(record.encode(endian)?)
}
