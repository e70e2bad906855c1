//! Gathering the samples as the replay hands them out ([`StackCollector`]).

use std::io;

use rustc_hash::FxHashMap;

use super::frames::{pack, FrameTable, LocKey};
use super::samples::{HAS_TIME, NO_CPU, ROW};
use super::{Detail, RawTrack, Sources, StackId, Stacks, Track, TrackSum, When, HAS_CPU, ROOT};
use crate::intern::{Chunked, Interner};
use crate::model::{Replay, ResolvedSample};
use crate::process::{CommId, Machine};
use crate::same_names::SettledComms;
use crate::spool::Spool;
use crate::symbolize::Symbolizer;

/// The samples of a recording, gathered one at a time as the replay hands them out:
/// [`StackCollector::add`] each (from [`crate::replay::replay`]'s callback), then
/// [`StackCollector::finish`] once the replay is done.
///
/// ```
/// use perfdata_report::{replay, folded, stacks::{Detail, Sources, StackCollector}};
/// use perfdata_report::symbolize::{SymbolOptions, Symbolizer};
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-callgraph-fp.data");
/// let mut collector = StackCollector::new(Detail::Stacks)?;
/// let reader = perfdata_core::PerfReader::open(std::path::Path::new(path))?;
/// let r = replay::replay(reader, &Default::default(), |m, d| {
///     d.sample().inspect(|s| collector.add(m, s));
/// })?;
/// let stacks = collector.finish(&r, &mut Symbolizer::new(SymbolOptions::default()), Sources::Off)?;
/// let mut out = Vec::new();
/// folded::write_folded(&mut out, &folded::lines(&stacks)?)?;
/// let counted: u64 = String::from_utf8(out)?
///     .lines()
///     .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
///     .sum();
/// assert_eq!(counted, stacks.samples());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct StackCollector {
    detail: Detail,
    locs: Interner<LocKey>,
    /// (parent stack or ROOT, location), numbered as stacks.
    nodes: Interner<(u32, u32)>,
    /// The comm entry each sample is counted under.
    comms: SettledComms,
    tracks: FxHashMap<RawTrack, u32>,
    sums: Vec<(RawTrack, TrackSum)>,
    /// (track, CPU, stack) -> its samples and their period (saturating), in `values`.
    counts: Interner<[u32; 3]>,
    values: Chunked<(u64, u64)>,
    /// Samples added so far.
    seq: u64,
    spool: Option<Spool>,
    /// The first error writing the spool (reported by `finish`).
    error: Option<io::Error>,
}

impl StackCollector {
    /// An empty collector that counts samples by what `detail` says.
    pub fn new(detail: Detail) -> io::Result<StackCollector> {
        Ok(StackCollector {
            detail,
            locs: Interner::default(),
            nodes: Interner::default(),
            comms: SettledComms::default(),
            tracks: FxHashMap::default(),
            sums: Vec::new(),
            counts: Interner::default(),
            values: Chunked::default(),
            seq: 0,
            spool: match detail {
                Detail::Samples => Some(Spool::new()?),
                _ => None,
            },
            error: None,
        })
    }

    /// The stack of `s`: its callchain, or without one its ip alone, interned root first
    /// (locations are numbered in the order they are first seen, as their frames will
    /// be).
    fn intern_stack(&mut self, s: &ResolvedSample) -> StackId {
        let chain = if s.callchain.is_empty() {
            std::slice::from_ref(&s.ip)
        } else {
            &s.callchain[..]
        };
        let mut node = ROOT;
        for at in chain.iter().rev() {
            let (loc, _) = self.locs.intern(pack(at.dso, at.addr, at.kernel));
            node = self.nodes.intern((node, loc)).0;
        }
        node
    }

    /// Count one sample, replayed on `m` (and spool it, if collecting every sample).
    pub fn add(&mut self, m: &Machine, s: &ResolvedSample) {
        let n = self.seq;
        self.seq += 1;
        let stack = self.intern_stack(s);
        let when = s.time.map_or(When::Nth(n), When::Time);
        let comm = self.comms.of(m, &s.ip);
        let key: RawTrack = match self.detail {
            Detail::Stacks => (s.event, 0, 0, comm),
            Detail::Labels | Detail::Samples => (s.event, s.pid, s.tid, comm),
        };
        let track = *self.tracks.entry(key).or_insert_with(|| {
            self.sums.push((
                key,
                TrackSum {
                    first: (n, when),
                    period: 0,
                    samples: 0,
                    times: None,
                },
            ));
            (self.sums.len() - 1) as u32
        });
        let sum = &mut self.sums[track as usize].1;
        sum.period = sum.period.wrapping_add(s.period);
        sum.samples += 1;
        if let Some(t) = s.time {
            sum.times = Some(sum.times.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
        }
        let count_key = match (self.detail, s.cpu) {
            (Detail::Labels, Some(cpu)) => [track | HAS_CPU, cpu, stack],
            _ => [track, 0, stack],
        };
        let (i, new) = self.counts.intern(count_key);
        if new {
            self.values.push((0, 0));
        }
        let v = self.values.get_mut(i as usize);
        v.0 += 1;
        v.1 = v.1.saturating_add(s.period);
        if let Some(spool) = &mut self.spool {
            let (flag, t) = match when {
                When::Time(t) => (HAS_TIME, t),
                When::Nth(i) => (0, i),
            };
            let mut row = [0u8; ROW];
            row[..4].copy_from_slice(&(track | flag).to_le_bytes());
            row[4..8].copy_from_slice(&stack.to_le_bytes());
            row[8..16].copy_from_slice(&t.to_le_bytes());
            row[16..24].copy_from_slice(&s.period.to_le_bytes());
            row[24..].copy_from_slice(&s.cpu.unwrap_or(NO_CPU).to_le_bytes());
            if self.error.is_none() {
                if let Err(e) = spool.push(&row) {
                    self.error = Some(e);
                }
            }
        }
    }

    /// Name every location seen as `perf script` names it, against the machine as the
    /// replay left it, with what DWARF says of each as `sources` asks: with
    /// [`Sources::Inlines`], each address in code inlined from other functions is
    /// followed by a frame per inlined function, as perf's `--inline` shows them. An
    /// error is the spool's (a full disk, say).
    pub fn finish(
        self,
        replay: &Replay,
        symbols: &mut Symbolizer,
        sources: Sources,
    ) -> io::Result<Stacks> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let samples = match self.spool {
            Some(s) => Some(s.finish()?),
            None => None,
        };
        // The indexes go first: only the keys are needed from here on.
        let nodes = self.nodes.into_keys();
        let counts = self.counts.into_keys();
        let frames = FrameTable::name(self.locs.into_keys(), replay, symbols, sources);
        // Tracks whose comm entries end with one name are one track.
        let comm = |c: CommId| replay.machine.comms.get(c).cloned().unwrap_or_default();
        let mut first_of: FxHashMap<Track, u32> = FxHashMap::default();
        let mut canon = Vec::with_capacity(self.sums.len());
        let mut tracks: Vec<(Track, TrackSum)> = Vec::with_capacity(self.sums.len());
        for (i, ((event, pid, tid, c), sum)) in self.sums.into_iter().enumerate() {
            let track = Track {
                event,
                pid,
                tid,
                comm: comm(c),
            };
            let to = *first_of.entry(track.clone()).or_insert(i as u32);
            canon.push(to);
            if to as usize != i {
                tracks[to as usize].1.absorb(&sum);
            }
            tracks.push((track, sum));
        }
        drop(first_of);
        let (counts, values) = merge_counts(counts, self.values, &canon);
        Ok(Stacks {
            event_names: replay.event_names.clone(),
            detail: self.detail,
            sources,
            frames,
            nodes,
            tracks,
            canon,
            counts,
            values,
            kept: vec![true; replay.event_names.len()],
            samples: samples.into(),
        })
    }
}

/// The counts with each track replaced by its first track of the same name (`canon`),
/// those of one key added up, in the order each first came (the old ones freed as they
/// are read).
fn merge_counts(
    keys: Chunked<[u32; 3]>,
    values: Chunked<(u64, u64)>,
    canon: &[u32],
) -> (Chunked<[u32; 3]>, Chunked<(u64, u64)>) {
    let merged = |t: u32| canon[(t & !HAS_CPU) as usize] != t & !HAS_CPU;
    if !keys.iter().any(|k| merged(k[0])) {
        return (keys, values);
    }
    let mut out = Interner::default();
    let mut sums: Chunked<(u64, u64)> = Chunked::default();
    for (k, v) in keys.into_iter().zip(values.into_iter()) {
        let t = canon[(k[0] & !HAS_CPU) as usize] | (k[0] & HAS_CPU);
        let (i, new) = out.intern([t, k[1], k[2]]);
        if new {
            sums.push((0, 0));
        }
        let s = sums.get_mut(i as usize);
        s.0 += v.0;
        s.1 = s.1.saturating_add(v.1);
    }
    (out.into_keys(), sums)
}
