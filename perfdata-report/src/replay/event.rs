//! What the replay keeps of each record it uses until the record's turn comes: the
//! side-band records' effects on the machine, and samples with their locations still
//! to find.

use perfdata_core::record::{
    misc, EventIndex, ForkExit, Ksymbol, Mmap, Mmap2Id, Record, RecordBody, SampleView,
};
use perfdata_core::Metadata;

use super::{SampleExtra, ShownRecord};
use crate::jitdump::JitCode;
use crate::process::MapProt;
use crate::unwind::UserState;

/// perf marks the FORK records it synthesizes for running tasks (`MISC_FORK_EXEC`): their
/// maps come as MMAP records, so the parent's are not copied.
const MISC_FORK_EXEC: u16 = 1 << 13;

/// What the replay keeps of a record until its turn comes.
pub(super) enum Event {
    Comm {
        pid: i32,
        tid: i32,
        name: String,
        exec: bool,
    },
    /// The record, and whether the parent's maps are copied.
    Fork(ForkExit, bool),
    Exit(ForkExit),
    /// MMAP, or MMAP2 as an MMAP: its protection (perf's rule for an MMAP, which has
    /// none), whether in kernel mode, and its build id. Boxed, as
    /// the rarer records are: every queued record moves at the size of the largest
    /// variant, and a sample's size keeps the moves inline (calls to memmove of whole
    /// records were 16% of `perfdata script`'s cycles).
    Mmap(Box<(Mmap, MapProt, bool, Option<Vec<u8>>)>),
    /// HEADER_BUILD_ID: a file's build id, in a cpumode (its misc's).
    BuildId {
        filename: String,
        build_id: Vec<u8>,
        cpumode: u16,
    },
    /// KSYMBOL: a BPF program's (or other kernel code's) symbol, registered or not.
    Ksymbol(Box<Ksymbol>),
    /// A function a jitdump loaded or moved, at the time it says.
    JitCode(Box<JitCode>),
    /// A sample, its locations still to find.
    Sample(PendingSample),
    /// The recording's metadata from here on (it grew: in a pipe, attrs and features
    /// arrive as records), for [`SampleExtra::meta`].
    Meta(std::sync::Arc<Metadata>),
    /// A record handed over as it is replayed, and what it does to the machine.
    Shown(Box<(ShownRecord, Option<Event>)>),
}

/// What the replay keeps of `record` (None for the records it does not use; SAMPLEs are
/// read through the view, above).
pub(super) fn event_of(record: Record) -> Option<Event> {
    let m = record.header.misc;
    let kernel_mode = m & misc::CPUMODE_MASK == misc::KERNEL;
    Some(match record.body {
        RecordBody::Comm(c) => Event::Comm {
            pid: c.pid,
            tid: c.tid,
            name: c.comm.as_str_lossy(),
            exec: m & misc::COMM_EXEC != 0,
        },
        RecordBody::Fork(f) => Event::Fork(f, m & MISC_FORK_EXEC == 0),
        RecordBody::Exit(f) => Event::Exit(f),
        RecordBody::Mmap(mm) => Event::Mmap(Box::new((mm, MapProt::of_mmap(m), kernel_mode, None))),
        RecordBody::Mmap2(mm) => {
            let build_id = match mm.id {
                Mmap2Id::BuildId {
                    build_id_size,
                    build_id,
                    ..
                } => Some(build_id[..usize::from(build_id_size).min(20)].to_vec()),
                Mmap2Id::Inode { .. } => None,
            };
            let prot = MapProt::of_mmap2(mm.prot, mm.flags);
            let mm = Mmap {
                pid: mm.pid,
                tid: mm.tid,
                addr: mm.addr,
                len: mm.len,
                pgoff: mm.pgoff,
                filename: mm.filename,
            };
            Event::Mmap(Box::new((mm, prot, kernel_mode, build_id)))
        }
        RecordBody::HeaderBuildId(b) => Event::BuildId {
            filename: b.filename.as_str_lossy(),
            build_id: b.build_id_padded.to_vec(),
            cpumode: m & misc::CPUMODE_MASK,
        },
        RecordBody::Ksymbol(k) => Event::Ksymbol(Box::new(k)),
        _ => return None,
    })
}

/// A sample waiting for its turn: its locations still to find. Kept small (see
/// [`Event::Mmap`]): what few samples carry is boxed apart.
pub(super) struct PendingSample {
    pub(super) ip: u64,
    pub(super) period: u64,
    /// The time ([`PendingSample::time`]; an Option's tag here would take 8 bytes
    /// more, and every byte is moved through the queue).
    time: u64,
    /// The CPU ([`PendingSample::cpu`]).
    cpu: u32,
    /// Whether the sample has a time and a CPU.
    has: (bool, bool),
    pub(super) event: u32,
    pub(super) pid: i32,
    pub(super) tid: i32,
    /// The ip is in kernel mode.
    pub(super) kernel: bool,
    /// The chain is made of an LBR call stack ([`crate::model::ResolvedSample::lbr`]).
    pub(super) lbr: bool,
    /// The callchain's raw entries, markers included: while the sample waits, held on
    /// the reading thread (`Spare::hold`, which names them), then in its batch's words
    /// (`super::chain_words`); 0: none.
    pub(super) chain: u32,
    /// What only some samples carry.
    pub(super) rare: Option<Box<Rare>>,
}

/// What only some samples carry, boxed apart from the rest.
#[derive(Default)]
pub(super) struct Rare {
    /// With PERF_SAMPLE_READ: per counter its event (None for an id of no event), id and
    /// value.
    pub(super) read: Option<Vec<(Option<usize>, u64, u64)>>,
    /// With REGS_USER and STACK_USER (and unwinding on): what the unwinder needs.
    pub(super) user: Option<Box<UserState>>,
    /// What perf script prints beyond the rest, when asked for and present (its meta
    /// comes apart, as [`Event::Meta`]).
    pub(super) extra: Option<SampleExtra>,
}

impl PendingSample {
    /// The sample's time, if it has one.
    pub(super) fn time(&self) -> Option<u64> {
        self.has.0.then_some(self.time)
    }

    /// The sample's CPU, if it has one.
    pub(super) fn cpu(&self) -> Option<u32> {
        self.has.1.then_some(self.cpu)
    }

    /// What only some samples carry, made room for.
    pub(super) fn rare(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Box::default)
    }
}

/// A sample of event `event` as the replay keeps it, its locations still to find; `period` is the attr's, for samples
/// that do not carry one; `events` finds the events of its READ values' ids.
pub(super) fn sample_event(
    s: &SampleView<'_>,
    event: usize,
    period: u64,
    misc: u16,
    events: &EventIndex,
) -> PendingSample {
    let pt = s.tid.unwrap_or_default();
    // Each counter's id (0 where read_format has no ID, as in perf's zeroed sample),
    // the group's leader first.
    let read = s.read.map(|r| {
        r.values()
            .map(|v| {
                let id = v.id.unwrap_or(0);
                (events.event_of_id(id), id, v.value)
            })
            .collect()
    });
    PendingSample {
        event: u32::try_from(event).unwrap_or(u32::MAX),
        pid: pt.pid,
        tid: pt.tid,
        cpu: s.cpu.map_or(0, |c| c.cpu),
        time: s.time.unwrap_or(0),
        has: (s.time.is_some(), s.cpu.is_some()),
        period: s.period.unwrap_or(period),
        ip: s.ip.unwrap_or(0),
        kernel: misc & misc::CPUMODE_MASK == misc::KERNEL,
        // The words wait apart (super::Outbox::held).
        chain: 0,
        lbr: false,
        rare: read.map(|read| {
            Box::new(Rare {
                read: Some(read),
                ..Rare::default()
            })
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queued_record_moves_inline() {
        // LLVM copies up to 128 bytes with inline stores; past that, a call to memmove
        // per move of a queued record (super::Step adds a time and a tag).
        assert!(
            std::mem::size_of::<Event>() <= 96,
            "{}",
            std::mem::size_of::<Event>()
        );
        // And a sample, the most of them, at the fewest bytes (each moved into the
        // queue and out).
        assert!(
            std::mem::size_of::<PendingSample>() <= 56,
            "{}",
            std::mem::size_of::<PendingSample>()
        );
    }
}
