//! Where the fixed fields of a SAMPLE and of a sample_id trailer sit, worked out once per
//! attr: the one description that [`locate`](crate::raw::locate), the borrowed
//! [`SampleView`](super::SampleView), report's sample reader and the edits that rewrite a
//! trailer in place all read.
//!
//! A SAMPLE starts with one u64 slot per fixed field present (IDENTIFIER up to PERIOD);
//! its variable fields (READ onwards) follow and are read by the view. The trailer is
//! slots only.

use super::format::{EventFormat, SAMPLE_PREFIX_FIELDS, TRAILER_FIELDS};
use crate::attr::SampleType;

/// Byte offsets of the u64 slots of a run of fixed fields (a SAMPLE's prefix, counted
/// from the record's start, header included; a trailer, from the trailer's start). A
/// field is `Some` exactly when its PERF_SAMPLE_* bit is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Slots {
    /// IDENTIFIER.
    pub identifier: Option<usize>,
    /// IP.
    pub ip: Option<usize>,
    /// TID: `{u32 pid, tid}`.
    pub tid: Option<usize>,
    /// TIME.
    pub time: Option<usize>,
    /// ADDR.
    pub addr: Option<usize>,
    /// ID.
    pub id: Option<usize>,
    /// STREAM_ID.
    pub stream_id: Option<usize>,
    /// CPU: `{u32 cpu, res}`.
    pub cpu: Option<usize>,
    /// PERIOD.
    pub period: Option<usize>,
    /// Bytes the slots take.
    pub len: usize,
}

impl Slots {
    /// The slots of the fields of `order` present in `st`, from `start`.
    fn of(order: &[SampleType], st: SampleType, start: usize) -> Self {
        let mut out = Slots::default();
        let mut pos = start;
        for &bit in order.iter().filter(|&&b| st.contains(b)) {
            let slot = match bit {
                SampleType::IDENTIFIER => &mut out.identifier,
                SampleType::IP => &mut out.ip,
                SampleType::TID => &mut out.tid,
                SampleType::TIME => &mut out.time,
                SampleType::ADDR => &mut out.addr,
                SampleType::ID => &mut out.id,
                SampleType::STREAM_ID => &mut out.stream_id,
                SampleType::CPU => &mut out.cpu,
                SampleType::PERIOD => &mut out.period,
                _ => unreachable!("only fixed fields are listed"),
            };
            *slot = Some(pos);
            pos += 8;
        }
        out.len = pos - start;
        out
    }

    /// Whether the slot at `at` holds two u32 (TID, CPU) rather than one u64.
    pub fn is_pair(&self, at: usize) -> bool {
        self.tid == Some(at) || self.cpu == Some(at)
    }
}

/// The fields a record is located by (see [`Slots`] for where offsets count from).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FieldOffsets {
    /// Offset of TID (pid, tid).
    pub tid: Option<usize>,
    /// Offset of TIME.
    pub time: Option<usize>,
    /// IDENTIFIER's slot, else ID's.
    pub id: Option<usize>,
    /// Offset of CPU (cpu, res).
    pub cpu: Option<usize>,
    /// Bytes the slots take.
    pub len: usize,
    /// One past the last slot, counted as the offsets are: a record (or trailer) this
    /// long holds every field listed, so they can be read unchecked.
    pub end: usize,
}

impl FieldOffsets {
    /// The located fields of `slots`, which start at `start`.
    fn of(slots: &Slots, start: usize) -> Self {
        FieldOffsets {
            tid: slots.tid,
            time: slots.time,
            id: slots.identifier.or(slots.id),
            cpu: slots.cpu,
            len: slots.len,
            end: start + slots.len,
        }
    }
}

/// Where the fields of one event's records are: its SAMPLE's fixed prefix and its
/// sample_id trailer, from the attr's sample_type (the variable fields after the prefix
/// are sized by read_format, branch_sample_type and the register masks, kept in
/// [`format`](Self::format)). Made once per attr by the [`EventIndex`](super::EventIndex).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleLayout {
    format: EventFormat,
    prefix: Slots,
    trailer_slots: Slots,
    sample: FieldOffsets,
    trailer: FieldOffsets,
}

impl SampleLayout {
    /// The layout of records of an event of format `f`.
    pub fn new(f: EventFormat) -> Self {
        let prefix = Slots::of(&SAMPLE_PREFIX_FIELDS, f.sample_type, 8);
        let trailer_slots = Slots::of(&TRAILER_FIELDS, f.sample_type, 0);
        SampleLayout {
            format: f,
            prefix,
            trailer_slots,
            sample: FieldOffsets::of(&prefix, 8),
            trailer: FieldOffsets::of(&trailer_slots, 0),
        }
    }

    /// The attr's fields that shape the records.
    #[inline]
    pub fn format(&self) -> &EventFormat {
        &self.format
    }

    /// A SAMPLE's fixed fields, from the record's start (header included).
    #[inline]
    pub fn prefix(&self) -> &Slots {
        &self.prefix
    }

    /// The sample_id trailer's fields, from the trailer's start.
    #[inline]
    pub fn trailer_slots(&self) -> &Slots {
        &self.trailer_slots
    }

    /// The located fields of a SAMPLE, from the record's start.
    #[inline]
    pub fn sample(&self) -> &FieldOffsets {
        &self.sample
    }

    /// The located fields of a sample_id trailer, from the trailer's start.
    #[inline]
    pub fn trailer(&self) -> &FieldOffsets {
        &self.trailer
    }

    /// Bytes of the sample_id trailer of non-SAMPLE kernel records (0 without
    /// sample_id_all).
    #[inline]
    pub fn sample_id_len(&self) -> usize {
        if self.format.sample_id_all {
            self.trailer.len
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fixed_field_has_its_slot() {
        let f = EventFormat {
            sample_type: SampleType::IDENTIFIER
                | SampleType::IP
                | SampleType::TID
                | SampleType::ADDR
                | SampleType::STREAM_ID
                | SampleType::PERIOD
                | SampleType::CALLCHAIN,
            sample_id_all: true,
            ..Default::default()
        };
        let l = SampleLayout::new(f);
        let p = l.prefix();
        assert_eq!(
            (p.identifier, p.ip, p.tid, p.time, p.addr, p.id),
            (Some(8), Some(16), Some(24), None, Some(32), None)
        );
        assert_eq!(
            (p.stream_id, p.cpu, p.period, p.len),
            (Some(40), None, Some(48), 48)
        );
        assert!(p.is_pair(24) && !p.is_pair(16));
        let t = l.trailer_slots();
        assert_eq!(
            (t.tid, t.stream_id, t.identifier, t.len),
            (Some(0), Some(8), Some(16), 24)
        );
        assert_eq!(l.trailer().id, Some(16));
        assert_eq!(l.sample().end, 56);
        assert_eq!(l.sample_id_len(), 24);
    }

    /// A SAMPLE cut anywhere in its fixed fields is refused by the view, as by the owned
    /// decode, at the field a field-by-field read finds missing: inside a TID or CPU
    /// slot, at the u32 that is missing.
    #[test]
    fn a_cut_prefix_is_refused_at_the_missing_field() {
        use super::super::{Sample, SampleView};
        use binrw::Endian;
        let f = EventFormat {
            sample_type: SampleType::IP
                | SampleType::TID
                | SampleType::TIME
                | SampleType::CPU
                | SampleType::PERIOD,
            ..Default::default()
        };
        let layout = SampleLayout::new(f);
        let body: Vec<u8> = (1..=40u8).collect();
        for endian in [Endian::Little, Endian::Big] {
            let whole = SampleView::parse(&body, &layout, endian, 100).expect("whole");
            assert_eq!(whole.len, 40);
            assert_eq!(
                whole.to_sample(),
                crate::codec::decode::<Sample>(&body, endian, (f,), 100, "SAMPLE")
                    .expect("decodes")
            );
            for cut in 0..body.len() {
                assert!(SampleView::parse(&body[..cut], &layout, endian, 100).is_err());
                assert!(
                    crate::codec::decode::<Sample>(&body[..cut], endian, (f,), 100, "SAMPLE")
                        .is_err()
                );
            }
        }
        let at = |cut: usize| {
            SampleView::parse(&body[..cut], &layout, Endian::Little, 0)
                .expect_err("cut")
                .offset()
        };
        // Slots: IP 0, TID 8 (pid, tid at 12), TIME 16, CPU 24 (cpu, res at 28), PERIOD 32.
        let cuts = [7, 9, 13, 17, 25, 29, 39].map(at);
        assert_eq!(cuts, [0, 8, 12, 16, 24, 28, 32].map(Some));
    }
}
