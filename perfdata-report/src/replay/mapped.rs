//! The samples of a regular file queued as keys ([`super::keys`]): which samples can
//! be (those whose every field has a fixed size but for the callchain, so that whether
//! their bytes parse is known from their length and the chain's), where their time is,
//! and, on the replaying thread, the sample read from the file's bytes when its turn
//! comes.

use std::sync::Arc;

use perfdata_core::attr::SampleType;
use perfdata_core::record::SampleView;
use perfdata_core::{ContainerKind, InputBytes, Metadata, PerfReader, RecordRef};

use super::event::{plain_sample, PendingSample, PlainFields};
use super::keys::{sample_word, word_sample, EVENT};
use super::SampleExtra;

/// How many bytes of the file go by before the replay gives their pages back
/// ([`Mapped::release_before`]): as the walk does, a few megabytes at a time.
const RELEASE_CHUNK: usize = 4 << 20;

/// The fields a sample read from its key may have: those of a fixed size, and the
/// callchain (its length first). The others are sized by the record or need more than
/// its bytes (an LBR call stack, a stack to unwind), so a sample with one might not
/// parse, and that must be found where the record is read, as perf finds it when it
/// queues the sample.
fn fixed_fields() -> SampleType {
    SampleType::CALLCHAIN
        | SampleType::IDENTIFIER
        | SampleType::IP
        | SampleType::TID
        | SampleType::TIME
        | SampleType::ADDR
        | SampleType::ID
        | SampleType::STREAM_ID
        | SampleType::CPU
        | SampleType::PERIOD
        | SampleType::WEIGHT
        | SampleType::WEIGHT_STRUCT
        | SampleType::DATA_SRC
        | SampleType::TRANSACTION
        | SampleType::PHYS_ADDR
        | SampleType::CGROUP
        | SampleType::DATA_PAGE_SIZE
        | SampleType::CODE_PAGE_SIZE
}

/// How an event's samples are queued as keys, and read again: where their fields are
/// (from the record's start, header included).
#[derive(Clone, Copy)]
struct Plan {
    time_at: Option<usize>,
    /// The fewest bytes (header included) a sample parses in, 8 more a callchain entry.
    min_len: usize,
    /// Where the callchain's length is; the fields after it are as many words later.
    chain_at: Option<usize>,
    ip: Option<usize>,
    tid: Option<usize>,
    cpu: Option<usize>,
    period: Option<usize>,
    addr: Option<usize>,
    weight: Option<usize>,
    data_src: Option<usize>,
    /// The attr's period, for samples without one.
    attr_period: u64,
}

/// A regular file's bytes and metadata, shared by the reading thread (which queues its
/// samples as keys) and the replaying one (which reads them).
pub(super) struct Mapped {
    bytes: InputBytes,
    meta: Arc<Metadata>,
    /// Per event: how its samples are queued as keys; None: as events.
    plans: Vec<Option<Plan>>,
    /// [`super::ReplayOptions::extra`].
    extra: bool,
}

impl Mapped {
    /// For `reader`, when it reads a regular file's records (not a pipe's, whose events
    /// arrive among them, nor a directory's); `extra` is [`super::ReplayOptions::extra`].
    pub(super) fn new(reader: &PerfReader, extra: bool) -> Option<Self> {
        let meta = reader.meta();
        if meta.container != ContainerKind::File || meta.attrs().is_empty() {
            return None;
        }
        let bytes = reader.input_bytes()?;
        let events = meta.events();
        let plans: Vec<Option<Plan>> = (0..meta.attrs().len())
            .map(|e| {
                plan(
                    events.layout(e)?,
                    meta.endian,
                    meta.attrs()[e].attr.sample_period,
                )
            })
            .collect();
        plans.iter().any(Option::is_some).then(|| Mapped {
            bytes,
            meta: Arc::new(meta.clone()),
            plans,
            extra,
        })
    }

    /// The time (None: none, or 0) and key word of SAMPLE `item`, when it is queued as
    /// a key: its bytes are the file's at its offset, the events are those known at the
    /// start, and its event's fields all have a fixed place, in the bytes it has.
    #[inline]
    pub(super) fn key_of(&self, item: &RecordRef<'_>) -> Option<(Option<u64>, u64)> {
        let record = item.raw.bytes;
        let offset = usize::try_from(item.raw.offset).ok()?;
        // Read as stored (not out of a compressed record), in this input.
        if !std::ptr::eq(record.as_ptr(), self.bytes.as_ptr().wrapping_add(offset))
            || item.meta.attrs().len() != self.plans.len()
        {
            return None;
        }
        let endian = self.meta.endian;
        let e = self.meta.events().event_of(record, true, endian)?;
        let plan = (*self.plans.get(e)?)?;
        if record.len() < plan.min_len + 8 * chain_len(&plan, record, endian)? {
            return None;
        }
        let word = sample_word(item.raw.offset, e)?;
        let time = plan
            .time_at
            .and_then(|at| perfdata_core::u64_at(record, at, endian))
            .filter(|&t| t != 0);
        Some((time, word))
    }

    /// Start fetching the bytes of key word `word`'s sample into the cache (nothing
    /// for [`super::keys::EVENT`]).
    #[inline]
    pub(super) fn prefetch(&self, word: u64) {
        let (offset, _) = word_sample(word);
        if let Some(byte) = usize::try_from(offset)
            .ok()
            .and_then(|at| self.bytes.get(at))
        {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a prefetch does not access memory as a load does: it never faults,
            // and the address is within the bytes anyway.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(byte).cast());
            }
            #[cfg(not(target_arch = "x86_64"))]
            let _ = byte;
        }
    }

    /// Give back the mapped pages before the samples of `keys` (a batch just replayed),
    /// once [`RELEASE_CHUNK`] bytes have gone by since `*released`. The walk gives back
    /// the pages it passed, but the samples are read again after it, which maps their
    /// pages anew: without this every page of the file holding a sample stayed resident
    /// (131 MiB of a 400 MiB recording). A later key before the mark only reads its
    /// page again.
    pub(super) fn release_before(&self, keys: &[u64], released: &mut usize) {
        let low = keys
            .iter()
            .filter(|&&w| w != EVENT)
            .map(|&w| word_sample(w).0)
            .min();
        let Some(low) = low.and_then(|l| usize::try_from(l).ok()) else {
            return;
        };
        if low >= *released + RELEASE_CHUNK {
            self.bytes.release(*released, low);
            *released = low / 4096 * 4096;
        }
    }

    /// The sample of key word `word`, read from the file, its callchain's entries into
    /// `chain`: None where its bytes are not one (they were checked by
    /// [`Mapped::key_of`]: never).
    #[inline(always)]
    pub(super) fn sample(&self, word: u64, chain: &mut Vec<u64>) -> Option<PendingSample> {
        let (offset, event) = word_sample(word);
        let at = usize::try_from(offset).ok()?;
        let plan = self.plans.get(event)?.as_ref()?;
        let record = self.bytes.get(at..)?;
        read(plan, record, event, self.meta.endian, self.extra, chain)
    }
}

/// The number of callchain entries of the sample in `record` laid out by `plan` (0
/// without a callchain); None where it cannot be one (past the record's bytes).
#[inline(always)]
fn chain_len(plan: &Plan, record: &[u8], endian: perfdata_core::Endian) -> Option<usize> {
    let Some(at) = plan.chain_at else {
        return Some(0);
    };
    let n = perfdata_core::u64_at(record, at, endian)?;
    usize::try_from(n).ok().filter(|&n| n <= record.len() / 8)
}

/// The sample of event `event` at the start of `record`, read where `plan` says its
/// fields are, with what perf script prints beyond them if `extra`, its callchain's
/// entries into `chain` (emptied first).
#[inline(always)]
fn read(
    plan: &Plan,
    record: &[u8],
    event: usize,
    endian: perfdata_core::Endian,
    extra: bool,
    chain: &mut Vec<u64>,
) -> Option<PendingSample> {
    chain.clear();
    let entries = chain_len(plan, record, endian)?;
    if let Some(at) = plan.chain_at {
        let words = record.get(at + 8..at + 8 + 8 * entries)?;
        chain.extend(words.chunks_exact(8).map(|w| {
            let w = w.try_into().expect("8 bytes");
            match endian {
                perfdata_core::Endian::Little => u64::from_le_bytes(w),
                perfdata_core::Endian::Big => u64::from_be_bytes(w),
            }
        }));
    }
    // The fields after the chain are its entries later.
    let later = |o: Option<usize>| o.map(|o| o + 8 * entries);
    let u64_at = |o: Option<usize>| o.and_then(|o| perfdata_core::u64_at(record, o, endian));
    let u32_at = |o: usize| perfdata_core::u32_at(record, o, endian);
    let pair = |o: Option<usize>| o.and_then(|o| Some((u32_at(o)?, u32_at(o + 4)?)));
    let mut p = plain_sample(PlainFields {
        event,
        task: pair(plan.tid).unwrap_or_default(),
        time: u64_at(plan.time_at),
        cpu: pair(plan.cpu).map(|(cpu, _)| cpu),
        period: u64_at(plan.period).unwrap_or(plan.attr_period),
        ip: u64_at(plan.ip).unwrap_or(0),
        misc: perfdata_core::u16_at(record, 4, endian)?,
    });
    // As `super::push_sample` keeps them (a fixed-size sample has no RAW).
    if extra && (plan.addr.is_some() || plan.data_src.is_some() || plan.weight.is_some()) {
        p.rare().extra = Some(SampleExtra {
            raw: None,
            addr: u64_at(plan.addr),
            data_src: u64_at(later(plan.data_src)),
            weight: u64_at(later(plan.weight)),
            meta: None,
        });
    }
    Some(p)
}

/// How samples laid out by `layout` (of an attr whose sample_period is `attr_period`)
/// are queued as keys, if they can be.
fn plan(
    layout: &perfdata_core::record::SampleLayout,
    endian: perfdata_core::Endian,
    attr_period: u64,
) -> Option<Plan> {
    let st = layout.format().sample_type;
    if !fixed_fields().contains(st) {
        return None;
    }
    // The fewest bytes the parse takes, found by the parse itself: with fixed fields
    // only, a record parses from some length on.
    let zeros = [0u8; 1024];
    let min_len = (8..=zeros.len())
        .step_by(8)
        .find(|&len| SampleView::parse(&zeros[8..len], layout, endian, 0).is_ok())?;
    // After the prefix, the fields the parse reads one after the other: the callchain
    // (its length, then its entries), WEIGHT (or WEIGHT_STRUCT), then DATA_SRC.
    let p = layout.prefix();
    let chain_at = st.contains(SampleType::CALLCHAIN).then_some(8 + p.len);
    let after = 8 + p.len + if chain_at.is_some() { 8 } else { 0 };
    let has_weight = st.intersects(SampleType::WEIGHT | SampleType::WEIGHT_STRUCT);
    let data_src_at = after + if has_weight { 8 } else { 0 };
    Some(Plan {
        time_at: p.time,
        min_len,
        chain_at,
        ip: p.ip,
        tid: p.tid,
        cpu: p.cpu,
        period: p.period,
        addr: p.addr,
        weight: has_weight.then_some(after),
        data_src: st.contains(SampleType::DATA_SRC).then_some(data_src_at),
        attr_period,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::event::sample_event;
    use perfdata_core::record::{EventFormat, EventIndex, SampleLayout};

    /// A SAMPLE of `len` bytes laid out for `st`: each word after the header distinct.
    fn record(len: usize, endian: perfdata_core::Endian) -> Vec<u8> {
        let mut r = vec![0u8; len];
        r[..4].copy_from_slice(&9u32.to_le_bytes());
        r[4..6].copy_from_slice(&1u16.to_le_bytes());
        r[6..8].copy_from_slice(&(len as u16).to_le_bytes());
        for (i, w) in r[8..].chunks_mut(8).enumerate() {
            let v = 0x0102_0304_0000_0000u64 + (i as u64 + 1) * 0x0001_0000_0003;
            w.copy_from_slice(&match endian {
                perfdata_core::Endian::Little => v.to_le_bytes(),
                perfdata_core::Endian::Big => v.to_be_bytes(),
            });
        }
        if endian == perfdata_core::Endian::Big {
            r[4..6].copy_from_slice(&1u16.to_be_bytes());
            r[6..8].copy_from_slice(&(len as u16).to_be_bytes());
        }
        r
    }

    #[test]
    fn a_sample_read_by_its_plan_is_the_parsed_one() {
        let all = fixed_fields();
        let bits: Vec<SampleType> = all.iter().collect();
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for endian in [perfdata_core::Endian::Little, perfdata_core::Endian::Big] {
            for round in 0..200 {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let st = bits
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| round == 0 || rng >> i & 1 == 1)
                    .fold(SampleType::empty(), |st, (_, &b)| st | b);
                let layout = SampleLayout::new(EventFormat {
                    sample_type: st,
                    ..Default::default()
                });
                let plan = plan(&layout, endian, 4000).expect("fixed fields only");
                // With a callchain, of three entries.
                let entries = if plan.chain_at.is_some() { 3 } else { 0 };
                let mut bytes = record(plan.min_len + 8 * entries, endian);
                if let Some(at) = plan.chain_at {
                    bytes[at..at + 8].copy_from_slice(&match endian {
                        perfdata_core::Endian::Little => 3u64.to_le_bytes(),
                        perfdata_core::Endian::Big => 3u64.to_be_bytes(),
                    });
                }
                let mut chain = vec![7];
                let got = read(&plan, &bytes, 0, endian, true, &mut chain).expect("reads");
                let s = SampleView::parse(&bytes[8..], &layout, endian, 8).expect("parses");
                let want = sample_event(&s, 0, 4000, 1, &EventIndex::default());
                let want_chain: Vec<u64> =
                    s.callchain.map(|c| c.iter().collect()).unwrap_or_default();
                assert_eq!(chain, want_chain, "{st:?}");
                assert_eq!(chain.len(), entries);
                assert_eq!(
                    (
                        got.ip,
                        got.period,
                        got.time(),
                        got.cpu(),
                        got.pid,
                        got.tid,
                        got.kernel
                    ),
                    (
                        want.ip,
                        want.period,
                        want.time(),
                        want.cpu(),
                        want.pid,
                        want.tid,
                        want.kernel
                    ),
                    "{st:?}"
                );
                let extra = got.rare.as_ref().and_then(|r| r.extra.as_ref());
                assert_eq!(
                    extra.map(|e| (e.addr, e.data_src, e.weight)),
                    (s.addr.is_some() || s.data_src.is_some() || s.weight.is_some())
                        .then_some((s.addr, s.data_src, s.weight)),
                    "{st:?}"
                );
                // One byte short, the sample does not parse (and is not queued as a key).
                if bytes.len() > 8 {
                    let short = &bytes[8..bytes.len() - 1];
                    assert!(SampleView::parse(short, &layout, endian, 8).is_err());
                }
            }
        }
        // A field of variable size: no plan.
        let layout = SampleLayout::new(EventFormat {
            sample_type: SampleType::IP | SampleType::RAW,
            ..Default::default()
        });
        assert!(plan(&layout, perfdata_core::Endian::Little, 1).is_none());
    }
}

#[cfg(test)]
mod file_tests {
    use super::*;
    use crate::replay::event::sample_event;
    use perfdata_core::record::RecordType;

    /// What a test compares of a sample.
    fn fields(p: &PendingSample) -> impl PartialEq + std::fmt::Debug {
        let extra = p.rare.as_ref().and_then(|r| r.extra.as_ref());
        (
            (
                p.ip,
                p.period,
                p.time(),
                p.cpu(),
                p.event,
                p.pid,
                p.tid,
                p.kernel,
            ),
            extra.map(|e| (e.addr, e.data_src, e.weight)),
        )
    }

    #[test]
    fn a_files_samples_read_back_from_their_keys_are_those_parsed_where_they_are() {
        let mut keyed = Vec::new();
        for name in [
            "file-cpu-clock.data",
            "file-multi-event.data",
            "file-sample-fields.data",
            "file-sample-identifier.data",
            "file-compressed.data",
            "file-callgraph-fp.data",
        ] {
            let path = format!("{}/../fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
            let mut reader = PerfReader::open(&path).expect("opens");
            let Some(mapped) = Mapped::new(&reader, true) else {
                keyed.push(0);
                continue;
            };
            let mut n = 0;
            while let Some(item) = reader.next_record().expect("reads") {
                if item.raw.record_type() != RecordType::Sample {
                    continue;
                }
                let Some((time, word)) = mapped.key_of(&item) else {
                    continue;
                };
                n += 1;
                let (events, endian) = (item.meta.events(), item.meta.endian);
                let e = events
                    .event_of(item.raw.bytes, true, endian)
                    .expect("an event");
                let layout = events.layout(e).expect("a layout");
                let s = SampleView::parse(&item.raw.bytes[8..], layout, endian, 8).expect("parses");
                let period = item.meta.attrs()[e].attr.sample_period;
                let mut want = sample_event(&s, e, period, item.raw.header.misc, events);
                if s.addr.is_some() || s.data_src.is_some() || s.weight.is_some() {
                    want.rare().extra = Some(SampleExtra {
                        addr: s.addr,
                        data_src: s.data_src,
                        weight: s.weight,
                        ..SampleExtra::default()
                    });
                }
                let mut chain = Vec::new();
                let got = mapped.sample(word, &mut chain).expect("reads back");
                assert_eq!(fields(&got), fields(&want), "{name} at {}", item.raw.offset);
                let want_chain: Vec<u64> =
                    s.callchain.map(|c| c.iter().collect()).unwrap_or_default();
                assert_eq!(chain, want_chain, "{name} at {}", item.raw.offset);
                assert_eq!(time, s.time.filter(|&t| t != 0), "{name}");
            }
            keyed.push(n);
        }
        // As perf report --stats counts them: every sample of cpu-clock and of the
        // three events of multi-event; none where RAW and registers (sized by the
        // record) come with every sample; cpu-clock's 141 of sample-identifier, not
        // sched_switch's 7 (RAW); none of the compressed file (its records are not the
        // file's bytes); every sample of callgraph-fp, with its chain.
        assert_eq!(keyed, [279, 648, 0, 141, 0, 255]);
    }
}
