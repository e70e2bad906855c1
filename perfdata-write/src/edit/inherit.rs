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
use perfdata_core::record::{misc, RecordType};
use perfdata_core::u32_at;
use perfdata_core::RecordRef;

use super::Action;

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
        let (b, e) = (item.raw.bytes, item.meta.endian);
        match item.raw.record_type() {
            RecordType::Mmap | RecordType::Mmap2 => {
                if let Some(pid) = u32_at(b, 8, e) {
                    let owned = item.raw.to_owned_record();
                    self.parked.entry(pid).or_default().push(owned);
                }
            }
            RecordType::Comm => {
                if let Some(tid) = u32_at(b, 12, e) {
                    self.stripped_tids.insert(tid);
                }
                self.forget_on_exec(item);
            }
            RecordType::Fork => {
                if let Some(tid) = u32_at(b, 16, e) {
                    self.stripped_tids.insert(tid);
                }
            }
            RecordType::Exit => self.forget_exit(item),
            _ => {}
        }
    }

    /// An exec replaces the process's maps.
    fn forget_on_exec(&mut self, item: &RecordRef<'_>) {
        if item.raw.header.misc & misc::COMM_EXEC != 0 {
            if let Some(pid) = u32_at(item.raw.bytes, 8, item.meta.endian) {
                self.parked.remove(&pid);
            }
        }
    }

    fn forget_exit(&mut self, item: &RecordRef<'_>) {
        let (b, e) = (item.raw.bytes, item.meta.endian);
        if let (Some(pid), Some(tid)) = (u32_at(b, 8, e), u32_at(b, 16, e)) {
            self.stripped_tids.remove(&tid);
            if pid == tid {
                self.parked.remove(&pid);
            }
        }
    }

    /// A side-band record was kept: for a FORK of a stripped parent, the records that
    /// give the child what it inherits (`comm` is the parent thread's).
    pub(super) fn kept(&mut self, item: &RecordRef<'_>, parent_comm: Option<&[u8]>) -> Action {
        match item.raw.record_type() {
            RecordType::Comm => self.forget_on_exec(item),
            RecordType::Exit => self.forget_exit(item),
            _ => {}
        }
        if item.raw.record_type() != RecordType::Fork {
            return Action::Keep;
        }
        let (b, e) = (item.raw.bytes, item.meta.endian);
        let (Some(pid), Some(ppid), Some(tid), Some(ptid)) = (
            u32_at(b, 8, e),
            u32_at(b, 12, e),
            u32_at(b, 16, e),
            u32_at(b, 20, e),
        ) else {
            return Action::Keep;
        };
        let mut out = vec![item.raw.to_owned_record()];
        if self.stripped_tids.contains(&ptid) {
            if let Some(comm) = parent_comm {
                let bytes = comm_record(pid, tid, comm, trailer(item), e);
                out.push(super::Action::record_like(&item.raw, bytes));
            }
        }
        if pid != ppid {
            for map in self.parked.get(&ppid).into_iter().flatten() {
                out.push(rehome(map, pid, tid, item));
            }
        }
        if out.len() == 1 {
            Action::Keep
        } else {
            Action::Replace(out)
        }
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
    let own = trailer(&RecordRef::new(map.as_raw(e), item.meta));
    let new_trailer = trailer(item);
    let mut bytes = map.bytes.clone();
    put_u32(&mut bytes, 8, pid, e);
    put_u32(&mut bytes, 12, tid, e);
    if own.len() == new_trailer.len() {
        let at = bytes.len() - own.len();
        bytes[at..].copy_from_slice(new_trailer);
    }
    super::Action::record_like(&item.raw, bytes)
}

/// A COMM record (not an exec) for (pid, tid), the name NUL-padded to 8 bytes.
fn comm_record(pid: u32, tid: u32, comm: &[u8], trailer: &[u8], endian: Endian) -> Vec<u8> {
    let name_len = (comm.len() + 1).div_ceil(8) * 8;
    let size = 8 + 8 + name_len + trailer.len();
    let mut bytes = vec![0u8; size];
    put_u32(&mut bytes, 0, RecordType::Comm.as_u32(), endian);
    let size16 = match endian {
        Endian::Little => (size as u16).to_le_bytes(),
        Endian::Big => (size as u16).to_be_bytes(),
    };
    bytes[6..8].copy_from_slice(&size16);
    put_u32(&mut bytes, 8, pid, endian);
    put_u32(&mut bytes, 12, tid, endian);
    bytes[16..16 + comm.len()].copy_from_slice(comm);
    bytes[size - trailer.len()..].copy_from_slice(trailer);
    bytes
}
