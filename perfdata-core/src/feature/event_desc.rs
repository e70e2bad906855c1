//! EVENT_DESC and GROUP_DESC: the events of the recording, with their names, ids and
//! groups.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use binrw::binrw;
use serde::Serialize;

use crate::attr::{PerfEventAttr, ATTR_SIZE_VER0};
use crate::bounded;

use super::PerfString;

/// EVENT_DESC: `u32 nr, u32 attr_size, nr x {attr, u32 nr_ids, string name, u64 ids[]}`.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventDesc {
    #[br(temp)]
    #[bw(try_calc = u32::try_from(events.len()))]
    nr: u32,
    /// Bytes of each attr. Kept even with no events (perf writes its own attr size), and
    /// every attr is written with exactly this many bytes.
    #[br(assert(
        nr == 0 || attr_size as usize >= ATTR_SIZE_VER0,
        "EVENT_DESC attr_size {} is below the 64 bytes of the first perf_event_attr",
        attr_size
    ))]
    pub attr_size: u32,
    // Each entry takes at least the attr, nr_ids and the string's len: a corrupt nr or
    // attr_size fails here instead of allocating.
    #[br(parse_with = bounded::vec_with, args(nr as usize, attr_size as u64 + 8, (attr_size as usize,)))]
    #[bw(assert(
        events.iter().all(|e| e.attr.encoded_len == *attr_size as usize),
        "every EVENT_DESC attr must be encoded with attr_size ({}) bytes",
        attr_size
    ))]
    /// One entry per event: its attr, name and ids.
    pub events: Vec<EventDescEntry>,
}

/// One event of EVENT_DESC.
#[binrw]
#[br(import(attr_size: usize))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventDescEntry {
    #[br(args(attr_size))]
    /// The event attribute.
    pub attr: PerfEventAttr,
    #[br(temp)]
    #[bw(try_calc = u32::try_from(ids.len()))]
    nr_ids: u32,
    /// The event name ("cycles:u", "sched:sched_switch").
    pub name: PerfString,
    /// The sample ids of this event (one per CPU or thread it was opened on).
    #[br(parse_with = bounded::vec, args(nr_ids as usize, 8))]
    pub ids: Vec<u64>,
}

impl EventDesc {
    /// An EVENT_DESC whose attrs are all written with `attr_size` bytes.
    pub fn new(attr_size: u32, events: Vec<EventDescEntry>) -> Self {
        EventDesc { attr_size, events }
    }
}

impl EventDescEntry {
    /// An entry for `attr` with its name and ids.
    pub fn new(attr: PerfEventAttr, name: PerfString, ids: Vec<u64>) -> Self {
        EventDescEntry { attr, name, ids }
    }
}

/// GROUP_DESC: `u32 nr, nr x {string name, u32 leader_idx, u32 nr_members}`.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct GroupDesc {
    #[br(temp)]
    #[bw(try_calc = u32::try_from(groups.len()))]
    nr: u32,
    #[br(parse_with = bounded::vec, args(nr as usize, 12))]
    /// The event groups.
    pub groups: Vec<Group>,
}

/// One event group.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Group {
    /// The group's name, "{anon_group}" when it has none.
    pub name: PerfString,
    /// Index of the leader among the file's attrs.
    pub leader_idx: u32,
    /// Events in the group, the leader included.
    pub nr_members: u32,
}

impl GroupDesc {
    /// A GROUP_DESC feature of these groups.
    pub fn new(groups: Vec<Group>) -> Self {
        GroupDesc { groups }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::SampleType;
    use crate::feature::testutil::{round_trip, same_in_big_endian, Bytes};
    use binrw::Endian;

    fn attr_bytes(b: &mut Bytes, type_: u32, config: u64, size: usize) {
        let start = b.v.len();
        b.u32(type_).u32(size as u32).u64(config).u64(4000);
        b.u64(SampleType::IP.bits() | SampleType::TID.bits()).u64(0);
        b.u64(1 << 10); // flags: freq
        b.v.resize(start + size, 0);
    }

    #[test]
    fn event_desc_two_events() {
        let mut b = Bytes::le();
        b.u32(2).u32(128);
        attr_bytes(&mut b, 0, 0, 128);
        b.u32(2).str("cycles:u").u64(17).u64(18);
        attr_bytes(&mut b, 1, 9, 128);
        b.u32(0).str("dummy:u");
        let bytes = b.take();
        let d: EventDesc = round_trip(&bytes, Endian::Little, ());
        assert_eq!(d.attr_size, 128);
        assert_eq!(d.events.len(), 2);
        assert_eq!(d.events[0].name.as_str_lossy(), "cycles:u");
        assert_eq!(d.events[0].ids, vec![17, 18]);
        assert_eq!(d.events[0].attr.sample_period, 4000);
        assert!(d.events[0].attr.freq());
        assert_eq!((d.events[1].attr.type_, d.events[1].attr.config), (1, 9));
        assert!(d.events[1].ids.is_empty());
        same_in_big_endian(&d, ());
    }

    #[test]
    fn event_desc_keeps_attr_size_without_events_and_checks_it() {
        let mut b = Bytes::le();
        b.u32(0).u32(136);
        let d: EventDesc = round_trip(&b.take(), Endian::Little, ());
        assert!(d.events.is_empty());
        assert_eq!(d.attr_size, 136);

        let mut b = Bytes::le();
        b.u32(1).u32(72);
        attr_bytes(&mut b, 0, 0, 72);
        b.u32(0).str("x");
        let mut d: EventDesc = round_trip(&b.take(), Endian::Little, ());
        d.attr_size = 128; // the attr still says 72 bytes: refused
        let e = crate::codec::encode(&d, Endian::Little, ()).unwrap_err();
        assert!(
            matches!(&e, crate::Error::Encode { what, .. } if what == "EventDesc"),
            "{e}"
        );
        // As a feature section, the error names the feature, as perf names it.
        let section = super::super::FeatureSection::new(
            super::super::FeatureId::EventDesc,
            super::super::Feature::EventDesc(d),
        );
        let e = section.encode(Endian::Little).unwrap_err().to_string();
        assert!(e.starts_with("encoding feature EVENT_DESC: "), "{e}");
    }

    #[test]
    fn event_desc_huge_count_is_an_error() {
        let mut b = Bytes::le();
        b.u32(u32::MAX).u32(128).raw(&[0; 64]);
        let r = crate::codec::decode::<EventDesc>(&b.v, Endian::Little, (), 0, "t");
        assert!(r.is_err());
    }

    #[test]
    fn group_desc() {
        let mut b = Bytes::le();
        b.u32(2)
            .str("{anon_group}")
            .u32(0)
            .u32(3)
            .str("g2")
            .u32(3)
            .u32(2);
        let bytes = b.take();
        let g: GroupDesc = round_trip(&bytes, Endian::Little, ());
        assert_eq!(g.groups.len(), 2);
        assert_eq!(g.groups[0].name.as_str_lossy(), "{anon_group}");
        assert_eq!((g.groups[0].leader_idx, g.groups[0].nr_members), (0, 3));
        assert_eq!((g.groups[1].leader_idx, g.groups[1].nr_members), (3, 2));
        same_in_big_endian(&g, ());
    }
}
