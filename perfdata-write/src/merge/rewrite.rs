//! One input record as the merged recording has it: its sample id remapped (and
//! IDENTIFIER inserted where the output's event has it and the input's had not), its
//! pids and tids moved by its host's offset, its times shifted when inputs are aligned.
//! Every field is found by the input event's layout and written by the output event's.

use binrw::Endian;
use perfdata_core::raw::{Origin, OwnedRecord, RawRecord};
use perfdata_core::record::{
    EventUpdateView, ForkView, IdIndex, LostView, RecordHeader, RecordType, Slots,
    SwitchCpuWideView, TaskFacts, ThrottleView,
};
use perfdata_core::{u32_at, u64_at, Metadata};

use super::events::EventMap;
use crate::error::{Result, WriteError};

/// What changes in the records of one input.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Shift {
    /// The input's place among the inputs.
    pub input: usize,
    /// Added to every pid and tid but 0 (the idle task) and -1 (none).
    pub pid_offset: u32,
    /// Added to every time but 0 and -1 (perf's "no time").
    pub time_delta: i64,
}

impl Shift {
    #[inline]
    fn pid(&self, v: u32) -> u32 {
        if v == 0 || v == u32::MAX {
            v
        } else {
            v.wrapping_add(self.pid_offset)
        }
    }

    #[inline]
    pub fn time(&self, t: u64) -> u64 {
        if t == 0 || t == u64::MAX {
            t
        } else {
            t.saturating_add_signed(self.time_delta)
        }
    }
}

fn put_u32(bytes: &mut [u8], at: usize, v: u32, endian: Endian) {
    let b = match endian {
        Endian::Little => v.to_le_bytes(),
        Endian::Big => v.to_be_bytes(),
    };
    bytes[at..at + 4].copy_from_slice(&b);
}

fn put_u64(bytes: &mut [u8], at: usize, v: u64, endian: Endian) {
    let b = match endian {
        Endian::Little => v.to_le_bytes(),
        Endian::Big => v.to_be_bytes(),
    };
    bytes[at..at + 8].copy_from_slice(&b);
}

/// The record's pid (or tid) at `at`, moved.
fn move_pid(bytes: &mut [u8], at: usize, shift: &Shift, endian: Endian) {
    if let Some(v) = u32_at(bytes, at, endian) {
        put_u32(bytes, at, shift.pid(v), endian);
    }
}

/// The record's time at `at`, shifted.
fn shift_time(bytes: &mut [u8], at: usize, shift: &Shift, endian: Endian) {
    if let Some(t) = u64_at(bytes, at, endian) {
        put_u64(bytes, at, shift.time(t), endian);
    }
}

/// The u64 id at `at`, remapped.
fn remap_body_id(bytes: &mut [u8], at: usize, map: &EventMap, shift: &Shift, endian: Endian) {
    if let Some(id) = u64_at(bytes, at, endian) {
        let new = match id {
            0 => 0,
            id => map.ids[shift.input].get(&id).copied().unwrap_or(id),
        };
        put_u64(bytes, at, new, endian);
    }
}

/// The fixed fields of a record (a SAMPLE's prefix or a trailer) at `base`: the id,
/// the pid/tid and the time written by the output's slots.
fn write_slots(
    bytes: &mut [u8],
    base: usize,
    slots: &Slots,
    id: u64,
    at: &perfdata_core::raw::Located,
    shift: &Shift,
    endian: Endian,
) {
    for slot in [slots.identifier, slots.id].into_iter().flatten() {
        put_u64(bytes, base + slot, id, endian);
    }
    if let (Some(slot), Some(pid), Some(tid)) = (slots.tid, at.pid, at.tid) {
        put_u32(bytes, base + slot, shift.pid(pid as u32), endian);
        put_u32(bytes, base + slot + 4, shift.pid(tid as u32), endian);
    }
    if let (Some(slot), Some(t)) = (slots.time, at.time) {
        put_u64(bytes, base + slot, shift.time(t), endian);
    }
}

/// `raw` (a record of the input `in_meta` describes) as the output `out_meta` has it.
pub(super) fn rewrite(
    raw: &RawRecord<'_>,
    in_meta: &Metadata,
    out_meta: &Metadata,
    map: &EventMap,
    shift: &Shift,
) -> Result<OwnedRecord> {
    let endian = in_meta.endian;
    let mut rec = raw.to_owned_record();
    // The merge's own record, wherever it was read from: compressed only when the
    // conversion compresses (kept compression would put it back into a container the
    // merged recording does not describe).
    rec.origin = Origin::Top;
    let ty = raw.record_type();
    if !ty.is_kernel() {
        perf_ids(&mut rec.bytes, raw.offset, ty, map, shift, endian)?;
        return Ok(rec);
    }
    let at = perfdata_core::raw::locate(raw, in_meta.events(), endian);
    let (Some(event), false) = (at.event, in_meta.attrs().is_empty()) else {
        return Ok(rec);
    };
    let out_event = map.to_out[shift.input][event];
    let (Some(in_layout), Some(out_layout)) = (
        in_meta.events().layout(event),
        out_meta.events().layout(out_event),
    ) else {
        return Ok(rec);
    };
    let listed = at
        .id
        .is_some_and(|id| in_meta.events().event_of_id(id).is_some());
    let id = map.id(shift.input, out_event, at.id, listed);
    let insert = out_layout
        .format()
        .sample_type
        .contains(perfdata_core::attr::SampleType::IDENTIFIER)
        && !in_layout
            .format()
            .sample_type
            .contains(perfdata_core::attr::SampleType::IDENTIFIER);
    let bytes = &mut rec.bytes;
    if ty == RecordType::Sample {
        if insert {
            grow(bytes, raw.offset, endian)?;
            bytes.splice(8..8, [0u8; 8]);
        }
        if bytes.len() >= out_layout.sample().end {
            write_slots(bytes, 0, out_layout.prefix(), id, &at, shift, endian);
        }
        return Ok(rec);
    }
    // The trailer, when the record has one whole.
    if in_layout.format().sample_id_all && bytes.len() >= 8 + in_layout.trailer().len {
        if insert {
            grow(bytes, raw.offset, endian)?;
            bytes.extend_from_slice(&[0u8; 8]);
        }
        let base = bytes.len() - out_layout.trailer().len;
        write_slots(
            bytes,
            base,
            out_layout.trailer_slots(),
            id,
            &at,
            shift,
            endian,
        );
    }
    body_fields(bytes, ty, map, shift, endian);
    Ok(rec)
}

/// The pids, tids, times and ids in the bodies of the kernel's side-band records
/// (`include/uapi/linux/perf_event.h`): the task fields the record type's facts name,
/// and the fields its view places (FORK's parent and time, THROTTLE's time and id).
fn body_fields(bytes: &mut [u8], ty: RecordType, map: &EventMap, shift: &Shift, endian: Endian) {
    if let TaskFacts::Fields { pid, tid, .. } = ty.facts().task {
        for at in [pid, tid] {
            move_pid(bytes, at, shift, endian);
        }
    }
    match ty {
        // The other task a switch names (next_prev_pid, next_prev_tid), which its facts
        // do not: the record is about the trailer's task.
        RecordType::SwitchCpuWide => {
            move_pid(bytes, SwitchCpuWideView::AT.next_prev_pid, shift, endian);
            move_pid(bytes, SwitchCpuWideView::AT.next_prev_tid, shift, endian);
        }
        RecordType::Fork | RecordType::Exit => {
            move_pid(bytes, ForkView::AT.ppid, shift, endian);
            move_pid(bytes, ForkView::AT.ptid, shift, endian);
            shift_time(bytes, ForkView::AT.time, shift, endian);
        }
        RecordType::Throttle | RecordType::Unthrottle => {
            shift_time(bytes, ThrottleView::AT.time, shift, endian);
            remap_body_id(bytes, ThrottleView::AT.id, map, shift, endian);
        }
        RecordType::Lost => remap_body_id(bytes, LostView::AT.id, map, shift, endian),
        _ => {}
    }
}

/// The ids in perf's own records: EVENT_UPDATE's, through its view, and each ID_INDEX
/// entry's id and tid, through the
/// record's model (one ID_INDEX per recording or pipe stream: decoding it costs nothing).
fn perf_ids(
    bytes: &mut [u8],
    offset: u64,
    ty: RecordType,
    map: &EventMap,
    shift: &Shift,
    endian: Endian,
) -> Result<()> {
    match ty {
        RecordType::EventUpdate => remap_body_id(bytes, EventUpdateView::AT.id, map, shift, endian),
        RecordType::IdIndex => {
            let body = bytes.get_mut(RecordHeader::SIZE..).unwrap_or_default();
            let at = offset + RecordHeader::SIZE as u64;
            let mut index: IdIndex =
                perfdata_core::decode(body, endian, (), at, "record ID_INDEX")?;
            // idx is the ring buffer the id's records went to (perf's sid->idx, which
            // AUX tracing queues by), not the event's place: kept.
            for entry in &mut index.entries {
                if entry.id != 0 {
                    entry.id = map.ids[shift.input]
                        .get(&entry.id)
                        .copied()
                        .unwrap_or(entry.id);
                }
                // -1 (every thread) is not a u32 pid.
                if entry.tid < 1 << 32 {
                    entry.tid = shift.pid(entry.tid as u32) as u64;
                }
            }
            // The same entries, so the same length: the rest of the body stays.
            let new = perfdata_core::encode(&index, endian, ())?;
            body[..new.len()].copy_from_slice(&new);
        }
        _ => {}
    }
    Ok(())
}

/// Add 8 bytes to the record's size field (IDENTIFIER inserted).
fn grow(bytes: &mut [u8], offset: u64, endian: Endian) -> Result<()> {
    let size = perfdata_core::raw::header_of(bytes, endian).size;
    let Some(new) = size.checked_add(8) else {
        return Err(WriteError::unsupported(
            Some(offset),
            "a record of 65528 bytes or more cannot take the IDENTIFIER the merged events \
             need",
        ));
    };
    perfdata_core::raw::set_header_size(bytes, new, endian);
    Ok(())
}
