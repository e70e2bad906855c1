//! CPU_TOPOLOGY and HYBRID_TOPOLOGY: how the CPUs are grouped into cores, dies, sockets
//! and (on hybrid machines) PMUs.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use std::io::{Cursor, Read, Seek, SeekFrom};

use binrw::{binrw, BinRead, BinResult, Endian};
use serde::Serialize;

use crate::bounded;

use super::{PerfString, StringList};

/// CPU_TOPOLOGY. The section grew twice, and how much of it is present is known only
/// from its size (perf's `process_cpu_topology` reads on while bytes remain):
///
/// ```text
/// StringList cores; StringList threads;                 // always
/// {u32 core_id, u32 socket_id} cpus[nr_cpus_avail];      // perf 4.0 and later
/// StringList dies; u32 die_id[nr_cpus_avail];            // perf 5.3 and later
/// ```
///
/// `nr_cpus_avail` comes from NRCPUS. The optional parts are `Option`s, written only when
/// present, so encoding gives back exactly the bytes read.
#[binrw]
#[br(import(nr_cpus_avail: Option<u32>))]
#[bw(assert(
    dies_fit(cpus, dies),
    "CPU_TOPOLOGY needs one die id per CPU of the core/socket list, and dies need that list"
))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct CpuTopology {
    /// Sibling lists of the CPUs that share a core ("0-1", "2-3").
    pub cores: StringList,
    /// Sibling lists of the hardware threads ("0,8").
    pub threads: StringList,
    /// Per available CPU: core and socket.
    #[br(parse_with = parse_cpus, args(nr_cpus_avail))]
    pub cpus: Option<Vec<CpuCoreSocket>>,
    /// Die siblings and per-CPU die ids.
    #[br(parse_with = parse_dies, args(cpus.as_ref().map(Vec::len)))]
    pub dies: Option<CpuDies>,
}

/// Whether the die part (if any) has one die id per CPU of the core/socket list.
fn dies_fit(cpus: &Option<Vec<CpuCoreSocket>>, dies: &Option<CpuDies>) -> bool {
    match (cpus, dies) {
        (_, None) => true,
        (Some(cpus), Some(d)) => d.die_ids.len() == cpus.len(),
        (None, Some(_)) => false,
    }
}

/// A CPU's core and socket id.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct CpuCoreSocket {
    /// Core id of the CPU.
    pub core_id: u32,
    /// -1 (u32::MAX) when unknown.
    pub socket_id: u32,
}

/// The die part of CPU_TOPOLOGY.
#[binrw]
#[br(import(nr_cpus: usize))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct CpuDies {
    /// Sibling lists of the CPUs that share a die.
    pub dies: StringList,
    /// Per available CPU (as many as the core/socket list has).
    #[br(parse_with = bounded::vec, args(nr_cpus, 4))]
    pub die_ids: Vec<u32>,
}

/// The core/socket list: present when bytes remain after the thread list.
///
/// Its length is NRCPUS's nr_cpus_avail. Without it, the count is the one for which the
/// rest of the section is exactly the list, the dies and the die ids (what perf 5.3+
/// writes); failing that, as many pairs as fit. Fewer bytes than the list needs are left
/// as the section's trailing bytes (padding, say), as perf itself would fail on them.
#[binrw::parser(reader, endian)]
fn parse_cpus(nr_cpus_avail: Option<u32>) -> BinResult<Option<Vec<CpuCoreSocket>>> {
    let left = bounded::remaining(reader)?;
    if left == 0 {
        return Ok(None);
    }
    let n = match nr_cpus_avail {
        Some(n) => u64::from(n),
        None => guess_nr_cpus(reader, endian, left)?,
    };
    if n.saturating_mul(8) > left {
        return Ok(None);
    }
    bounded::vec(reader, endian, (n as usize, 8)).map(Some)
}

/// The nr_cpus_avail that makes the rest of the section parse exactly (see
/// [`parse_cpus`]). The reader is left where it was.
fn guess_nr_cpus<R: Read + Seek>(reader: &mut R, endian: Endian, left: u64) -> BinResult<u64> {
    let pos = reader.stream_position()?;
    let rest = bounded::rest(reader, endian, ())?;
    reader.seek(SeekFrom::Start(pos))?;
    for n in 1..=left / 12 {
        let mut c = Cursor::new(&rest[(8 * n) as usize..]);
        let fits = StringList::read_options(&mut c, endian, ()).is_ok()
            && c.position() + 4 * n == left - 8 * n;
        if fits {
            return Ok(n);
        }
    }
    Ok(left / 8)
}

/// The die part: present when bytes remain after the core/socket list. If they do not
/// parse as dies (padding after an older layout), they are left as trailing bytes.
#[binrw::parser(reader, endian)]
fn parse_dies(nr_cpus: Option<usize>) -> BinResult<Option<CpuDies>> {
    let Some(nr_cpus) = nr_cpus else {
        return Ok(None);
    };
    if bounded::remaining(reader)? == 0 {
        return Ok(None);
    }
    let pos = reader.stream_position()?;
    match CpuDies::read_options(reader, endian, (nr_cpus,)) {
        Ok(d) => Ok(Some(d)),
        Err(_) => {
            reader.seek(SeekFrom::Start(pos))?;
            Ok(None)
        }
    }
}

/// HYBRID_TOPOLOGY: `u32 nr, nr x {string pmu_name, string cpus}`.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct HybridTopology {
    #[br(temp)]
    #[bw(try_calc = u32::try_from(nodes.len()))]
    nr: u32,
    #[br(parse_with = bounded::vec, args(nr as usize, 8))]
    /// One entry per hybrid PMU.
    pub nodes: Vec<HybridNode>,
}

/// The CPUs of one core type ("cpu_core", "cpu_atom").
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct HybridNode {
    /// The PMU's name (cpu_core, cpu_atom).
    pub pmu_name: PerfString,
    /// Its CPUs, in perf's text form.
    pub cpus: PerfString,
}

impl HybridTopology {
    /// A HYBRID_TOPOLOGY feature of these nodes.
    pub fn new(nodes: Vec<HybridNode>) -> Self {
        HybridTopology { nodes }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::testutil::{round_trip, same_in_big_endian, Bytes};

    fn lists(b: &mut Bytes) {
        b.u32(1).str("0-3");
        b.u32(2).str("0,2").str("1,3");
    }

    #[test]
    fn oldest_layout_has_only_the_lists() {
        let mut b = Bytes::le();
        lists(&mut b);
        let t: CpuTopology = round_trip(&b.take(), Endian::Little, (Some(4),));
        assert_eq!(t.cores.to_strings(), vec!["0-3"]);
        assert_eq!(t.threads.to_strings(), vec!["0,2", "1,3"]);
        assert_eq!((t.cpus, t.dies), (None, None));
    }

    #[test]
    fn core_and_socket_ids_without_dies() {
        let mut b = Bytes::le();
        lists(&mut b);
        for (core, socket) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
            b.u32(core).u32(socket);
        }
        let t: CpuTopology = round_trip(&b.take(), Endian::Little, (Some(4),));
        let cpus = t.cpus.as_ref().unwrap();
        assert_eq!(cpus.len(), 4);
        assert_eq!(
            cpus[2],
            CpuCoreSocket {
                core_id: 0,
                socket_id: 1
            }
        );
        assert!(t.dies.is_none());
    }

    fn full() -> Vec<u8> {
        let mut b = Bytes::le();
        lists(&mut b);
        b.u32(0).u32(0).u32(1).u32(0);
        b.u32(1).str("0-1");
        b.u32(0).u32(0);
        b.take()
    }

    #[test]
    fn full_layout_with_dies() {
        let t: CpuTopology = round_trip(&full(), Endian::Little, (Some(2),));
        assert_eq!(t.cpus.as_ref().unwrap()[1].core_id, 1);
        let d = t.dies.as_ref().unwrap();
        assert_eq!(d.dies.to_strings(), vec!["0-1"]);
        assert_eq!(d.die_ids, vec![0, 0]);
        same_in_big_endian(&t, (Some(2),));
    }

    #[test]
    fn without_nrcpus_the_count_is_found_from_the_size() {
        let t: CpuTopology = round_trip(&full(), Endian::Little, (None,));
        assert_eq!(t.cpus.as_ref().unwrap().len(), 2);
        assert_eq!(t.dies.unwrap().die_ids.len(), 2);
    }

    #[test]
    fn padding_after_the_ids_is_left_unread() {
        // perf 6.12 pads pipe-mode features to 8 bytes.
        let mut bytes = full();
        bytes.extend_from_slice(&[0; 4]);
        let (t, used) =
            crate::codec::decode_prefix::<CpuTopology>(&bytes, Endian::Little, (Some(2),), 0, "t")
                .unwrap();
        assert_eq!(used, bytes.len() - 4);
        assert!(t.dies.is_some());

        let mut b = Bytes::le();
        lists(&mut b);
        b.u32(0).u32(0).u32(1).u32(0).raw(&[0; 4]);
        let bytes = b.take();
        let (t, used) =
            crate::codec::decode_prefix::<CpuTopology>(&bytes, Endian::Little, (Some(2),), 0, "t")
                .unwrap();
        assert_eq!(used, bytes.len() - 4);
        assert!(t.cpus.is_some() && t.dies.is_none());
    }

    #[test]
    fn die_count_must_match_on_write() {
        let mut t: CpuTopology = round_trip(&full(), Endian::Little, (Some(2),));
        t.dies.as_mut().unwrap().die_ids.push(1);
        assert!(crate::codec::encode(&t, Endian::Little, ()).is_err());
    }

    #[test]
    fn hybrid_topology() {
        let mut b = Bytes::le();
        b.u32(2)
            .str("cpu_core")
            .str("0-15")
            .str("cpu_atom")
            .str("16-23");
        let h: HybridTopology = round_trip(&b.take(), Endian::Little, ());
        assert_eq!(h.nodes[0].pmu_name.as_str_lossy(), "cpu_core");
        assert_eq!(h.nodes[1].cpus.as_str_lossy(), "16-23");
        same_in_big_endian(&h, ());
    }
}
