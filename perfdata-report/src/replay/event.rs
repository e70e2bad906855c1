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
    /// A sample still in the mapped file, read when its turn comes: its key's word
    /// (`super::keys::sample_word`). Only where a queued key goes to disk and comes back.
    At(u64),
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

impl PendingSample {
    /// Write the sample, with its chain's `words`, into `out` for the queue's part on
    /// disk ([`super::spill`]); false (nothing written) for what cannot go there (the
    /// recording's metadata, which a queued sample never carries, is shared, not bytes).
    pub(super) fn encode(&self, words: &[u64], out: &mut Vec<u8>) -> bool {
        let rare = self.rare.as_deref();
        if rare
            .and_then(|r| r.extra.as_ref())
            .is_some_and(|e| e.meta.is_some())
        {
            return false;
        }
        let flags = u8::from(self.has.0)
            | u8::from(self.has.1) << 1
            | u8::from(self.kernel) << 2
            | u8::from(self.lbr) << 3
            | u8::from(self.chain != 0) << 4;
        out.push(flags);
        for v in [self.ip, self.period, self.time] {
            put(out, v);
        }
        for v in [self.cpu, self.event, self.pid as u32, self.tid as u32] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        if self.chain != 0 {
            put_words(out, words);
        }
        let Some(r) = rare else {
            out.push(0);
            return true;
        };
        out.push(
            1 | u8::from(r.read.is_some()) << 1
                | u8::from(r.user.is_some()) << 2
                | u8::from(r.extra.is_some()) << 3,
        );
        if let Some(read) = &r.read {
            put(out, read.len() as u64);
            for &(event, id, value) in read {
                put(out, event.map_or(u64::MAX, |e| e as u64));
                put(out, id);
                put(out, value);
            }
        }
        if let Some(u) = &r.user {
            for v in [u.abi, u.mask, u.stack_size] {
                put(out, v);
            }
            put_words(out, &u.regs);
            put_bytes(out, Some(&u.stack));
        }
        if let Some(e) = &r.extra {
            put_bytes(out, e.raw.as_deref());
            for v in [e.addr, e.data_src, e.weight] {
                out.push(u8::from(v.is_some()));
                put(out, v.unwrap_or(0));
            }
        }
        true
    }

    /// The sample [`PendingSample::encode`] wrote at the start of `bytes`, its chain's
    /// words into `words` (emptied first), its user state in `reuse` if given; None
    /// where the bytes are not what it writes.
    pub(super) fn decode(
        bytes: &[u8],
        words: &mut Vec<u64>,
        reuse: Option<Box<UserState>>,
    ) -> Option<PendingSample> {
        let mut r = Bytes(bytes);
        let flags = r.u8()?;
        let (ip, period, time) = (r.u64()?, r.u64()?, r.u64()?);
        let (cpu, event, pid, tid) = (r.u32()?, r.u32()?, r.u32()? as i32, r.u32()? as i32);
        words.clear();
        if flags & 16 != 0 {
            let n = usize::try_from(r.u64()?).ok()?;
            for _ in 0..n {
                words.push(r.u64()?);
            }
        }
        let rare_flags = r.u8()?;
        let rare = if rare_flags & 1 == 0 {
            None
        } else {
            let mut rare = Rare::default();
            if rare_flags & 2 != 0 {
                let n = usize::try_from(r.u64()?).ok()?;
                let mut read = Vec::with_capacity(n.min(1 << 16));
                for _ in 0..n {
                    let event = r.u64()?;
                    let event = (event != u64::MAX)
                        .then(|| usize::try_from(event).ok())
                        .flatten();
                    read.push((event, r.u64()?, r.u64()?));
                }
                rare.read = Some(read);
            }
            if rare_flags & 4 != 0 {
                let mut u = reuse.unwrap_or_default();
                (u.abi, u.mask, u.stack_size) = (r.u64()?, r.u64()?, r.u64()?);
                u.regs.clear();
                let n = usize::try_from(r.u64()?).ok()?;
                for _ in 0..n {
                    u.regs.push(r.u64()?);
                }
                let stack = r.bytes()?;
                u.stack.clear();
                u.stack.extend_from_slice(stack);
                rare.user = Some(u);
            }
            if rare_flags & 8 != 0 {
                let raw = r.bytes_opt()?.map(<[u8]>::to_vec);
                let mut opt = || -> Option<Option<u64>> {
                    let some = r.u8()? != 0;
                    let v = r.u64()?;
                    Some(some.then_some(v))
                };
                let (addr, data_src, weight) = (opt()?, opt()?, opt()?);
                rare.extra = Some(SampleExtra {
                    raw,
                    addr,
                    data_src,
                    weight,
                    meta: None,
                });
            }
            Some(Box::new(rare))
        };
        Some(PendingSample {
            ip,
            period,
            time,
            cpu,
            has: (flags & 1 != 0, flags & 2 != 0),
            event,
            pid,
            tid,
            kernel: flags & 4 != 0,
            lbr: flags & 8 != 0,
            // 1 where it had a chain: the caller holds the words again and names them.
            chain: u32::from(flags & 16 != 0),
            rare,
        })
    }
}

/// Append `v`, little-endian.
fn put(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Append `words` after their count.
fn put_words(out: &mut Vec<u8>, words: &[u64]) {
    put(out, words.len() as u64);
    for &w in words {
        put(out, w);
    }
}

/// Append `bytes` after their length plus one (0: none).
fn put_bytes(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    put(out, bytes.map_or(0, |b| b.len() as u64 + 1));
    out.extend_from_slice(bytes.unwrap_or_default());
}

/// Bytes [`PendingSample::encode`] wrote, read from the front.
struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn bytes_opt(&mut self) -> Option<Option<&'a [u8]>> {
        let n = usize::try_from(self.u64()?).ok()?;
        match n.checked_sub(1) {
            None => Some(None),
            Some(len) => Some(Some(self.take(len)?)),
        }
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        self.bytes_opt()?
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

/// The fields of a sample with nothing beyond them (no READ values, no chain).
pub(super) struct PlainFields {
    pub(super) event: usize,
    /// pid and tid (0 and 0 without TID).
    pub(super) task: (u32, u32),
    pub(super) time: Option<u64>,
    pub(super) cpu: Option<u32>,
    /// The sample's, else the attr's.
    pub(super) period: u64,
    pub(super) ip: u64,
    /// The record header's misc.
    pub(super) misc: u16,
}

/// [`sample_event`] of a sample read field by field, not through a [`SampleView`]
/// (whose every field a fixed-size sample read from the mapped file did not need: its
/// making was most of that reading's time).
#[inline(always)]
pub(super) fn plain_sample(f: PlainFields) -> PendingSample {
    PendingSample {
        event: u32::try_from(f.event).unwrap_or(u32::MAX),
        pid: f.task.0 as i32,
        tid: f.task.1 as i32,
        cpu: f.cpu.unwrap_or(0),
        time: f.time.unwrap_or(0),
        has: (f.time.is_some(), f.cpu.is_some()),
        period: f.period,
        ip: f.ip,
        kernel: f.misc & misc::CPUMODE_MASK == misc::KERNEL,
        chain: 0,
        lbr: false,
        rare: None,
    }
}

/// A sample of event 0 at `time` (0: none) whose ip is `ip`, with nothing more: for
/// tests that follow samples through the queue.
#[cfg(test)]
pub(super) fn test_sample(ip: u64, time: u64) -> PendingSample {
    PendingSample {
        ip,
        period: 1,
        time,
        cpu: 0,
        has: (time != 0, false),
        event: 0,
        pid: 1,
        tid: 1,
        kernel: false,
        lbr: false,
        chain: 0,
        rare: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_comes_back_from_its_bytes_whole() {
        let mut p = test_sample(0x1234, 99);
        (p.cpu, p.has.1, p.kernel, p.lbr, p.pid, p.tid) = (3, true, true, true, -1, 7);
        p.chain = 5;
        p.rare().read = Some(vec![(Some(2), 11, 12), (None, 13, 14)]);
        p.rare().user = Some(Box::new(UserState {
            abi: 2,
            mask: 0xff,
            regs: vec![1, 2, 3],
            stack: vec![9; 100],
            stack_size: 8192,
        }));
        p.rare().extra = Some(SampleExtra {
            raw: Some(vec![1, 2]),
            addr: Some(0xdead),
            data_src: None,
            weight: Some(0),
            meta: None,
        });
        let mut bytes = Vec::new();
        assert!(p.encode(&[7, 8, 9], &mut bytes));
        let mut words = vec![1];
        // A user state to reuse, its old contents gone.
        let reuse = Box::new(UserState {
            regs: vec![5; 10],
            stack: vec![5; 10],
            ..UserState::default()
        });
        let q = PendingSample::decode(&bytes, &mut words, Some(reuse)).expect("decodes");
        assert_eq!(words, [7, 8, 9]);
        assert_eq!(
            (q.ip, q.period, q.time(), q.cpu(), q.event, q.pid, q.tid),
            (0x1234, 1, Some(99), Some(3), 0, -1, 7)
        );
        assert_eq!((q.kernel, q.lbr, q.chain), (true, true, 1));
        let (r, want) = (
            q.rare.as_deref().expect("rare"),
            p.rare.as_deref().expect("rare"),
        );
        assert_eq!(r.read, want.read);
        assert_eq!(r.user, want.user);
        let (e, w) = (
            r.extra.as_ref().expect("extra"),
            want.extra.as_ref().expect("extra"),
        );
        assert_eq!(
            (&e.raw, e.addr, e.data_src, e.weight),
            (&w.raw, w.addr, w.data_src, w.weight)
        );
        // Cut anywhere, the bytes are refused, not misread.
        for n in 0..bytes.len() {
            assert!(
                PendingSample::decode(&bytes[..n], &mut words, None).is_none(),
                "{n}"
            );
        }
        // A plain sample: no chain, nothing rare.
        bytes.clear();
        assert!(test_sample(1, 0).encode(&[], &mut bytes));
        let q = PendingSample::decode(&bytes, &mut words, None).expect("decodes");
        assert!(words.is_empty() && q.chain == 0 && q.rare.is_none() && q.time().is_none());
    }

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
