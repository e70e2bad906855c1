//! Callchains of `--call-graph lbr` samples as perf 6.1 builds them (util/machine.c,
//! `resolve_lbr_callchain_sample`): for an event whose branch stack is recorded in
//! call-stack mode (PERF_SAMPLE_BRANCH_CALL_STACK), the recorded callchain's kernel part
//! up to PERF_CONTEXT_USER, then the user part read from the branch stack instead of
//! the recorded user frames. perf's `--stitch-lbr` (off by default) is not done.
//!
//! perf resolves the entries in the order its call graph is printed in (`-g caller` or
//! `callee`), and the context markers switch the mode of the entries walked after them,
//! so the order changes frames: walked from the caller end, the recorded kernel
//! entries come after PERF_CONTEXT_USER and are looked up as user addresses. The chain
//! is therefore built here as words (markers and addresses, leaf first, as a recorded
//! callchain is laid out) that [`super::chain::resolve_chain`] resolves into the very
//! frames perf's walk makes.

use perfdata_core::record::SampleView;
use perfdata_core::Endian;

use super::chain::{PERF_CONTEXT_HV, PERF_CONTEXT_KERNEL, PERF_CONTEXT_MAX, PERF_CONTEXT_USER};
use crate::callgraph::Order;
use crate::unwind::MAX_FRAMES;

/// Write into `out` (emptied first) the callchain perf 6.1 resolves for a sample of an
/// LBR call-stack event, walked in `order`: `chain` is the recorded callchain, `from` and
/// `to` the branch stack's entries (most recent first), `past` what perf reads as
/// `entries[0].to` when there are no entries (the 8 bytes 8 past where the entries
/// would start, which perf's callee walk reads all the same).
///
/// False, `out` left empty, where perf resolves the recorded chain instead: no
/// PERF_CONTEXT_USER among its first `max_stack` entries (perf's `--max-stack`, 127 by
/// default; it cuts nothing else of the chain made here), or an
/// address of the walk is a context marker perf rejects (its LBR walk gives up then).
pub(crate) fn lbr_callchain(
    chain: &[u64],
    branches: &[(u64, u64)],
    past: u64,
    order: Order,
    max_stack: usize,
    out: &mut Vec<u64>,
) -> bool {
    out.clear();
    let Some(user_at) = chain
        .iter()
        .take(max_stack)
        .position(|&e| e == PERF_CONTEXT_USER)
    else {
        return false;
    };
    // The kernel part, the PERF_CONTEXT_USER marker included: walked first (callee)
    // or last and backwards (caller), it leaves the mode at user for the branches in
    // the one order and looks its own entries up in user mode in the other.
    let kernel = &chain[..=user_at];
    let froms = branches.iter().map(|b| b.0);
    let first_to = branches.first().map_or(past, |b| b.1);
    let mut frames = Vec::with_capacity(kernel.len() + branches.len() + 1);
    let walked = match order {
        // lbr_callchain_add_kernel_ip, then lbr_callchain_add_lbr_ip: entries[0].to
        // (read even when there are no entries), then every from.
        Order::Callee => walk(
            kernel
                .iter()
                .copied()
                .chain(std::iter::once(first_to))
                .chain(froms),
            &mut frames,
        ),
        // The same backwards, except that entries[0].to is read only when there is an
        // entry.
        Order::Caller => walk(
            froms
                .rev()
                .chain(branches.first().map(|b| b.1))
                .chain(kernel.iter().rev().copied()),
            &mut frames,
        ),
    };
    if !walked {
        return false;
    }
    if order == Order::Caller {
        frames.reverse();
    }
    // Leaf first, a marker wherever the mode changes (resolve_chain starts in user
    // mode, as perf's walk does).
    let mut kernel_mode = false;
    for (ip, k) in frames {
        if k != kernel_mode {
            out.push(if k {
                PERF_CONTEXT_KERNEL
            } else {
                PERF_CONTEXT_USER
            });
            kernel_mode = k;
        }
        out.push(ip);
    }
    true
}

/// The frames of perf's walk `entries` (add_callchain_ip with a cpumode starting at
/// user): each address with whether it is looked up in kernel mode; markers switch the
/// mode. False at a marker perf rejects ("invalid callchain context").
fn walk(entries: impl Iterator<Item = u64>, frames: &mut Vec<(u64, bool)>) -> bool {
    let mut kernel = false;
    for ip in entries {
        if ip >= PERF_CONTEXT_MAX {
            match ip {
                PERF_CONTEXT_KERNEL => kernel = true,
                PERF_CONTEXT_USER | PERF_CONTEXT_HV => kernel = false,
                _ => return false,
            }
            continue;
        }
        frames.push((ip, kernel));
    }
    true
}

/// What the reading thread keeps for the samples of LBR call-stack events: the order
/// perf walks their chains in, and the sample waiting for the bytes after it.
pub(super) struct CallStacks {
    order: Order,
    /// perf's `--max-stack` ([`lbr_callchain`]).
    max_stack: usize,
    waiting: Option<Beyond>,
    words: Vec<u64>,
    branches: Vec<(u64, u64)>,
}

impl CallStacks {
    /// Chains walked in `order` (perf's `callchain_param.order`).
    pub(super) fn new(order: Order, max_stack: Option<usize>) -> Self {
        CallStacks {
            order,
            max_stack: max_stack.unwrap_or(MAX_FRAMES),
            waiting: None,
            words: Vec::new(),
            branches: Vec::new(),
        }
    }

    /// The chain words perf resolves for sample `s` of an event recorded with
    /// `attr`, read from `record` (its bytes, header included) of data stream `stream`;
    /// None where that is the recorded callchain as it is. With them, the sample's
    /// [`Beyond`] when a word lies past its record ([`CallStacks::wait`]).
    pub(super) fn words(
        &mut self,
        attr: &perfdata_core::attr::PerfEventAttr,
        s: &SampleView<'_>,
        record: &[u8],
        stream: usize,
        endian: Endian,
    ) -> Option<(&[u64], Option<Beyond>)> {
        use perfdata_core::attr::BranchSampleType;
        if !attr
            .branch_sample_type
            .contains(BranchSampleType::CALL_STACK)
        {
            return None;
        }
        let (chain, b) = (s.callchain?, s.branch_stack?);
        let chain: Vec<u64> = chain.iter().collect();
        self.branches.clear();
        self.branches.extend(b.entries().map(|e| (e.from, e.to)));
        let mut beyond = None;
        let past = match self.branches.first() {
            Some(_) => 0,
            // Only the callee walk reads entries[0].to of an empty stack.
            None if self.order == Order::Callee => {
                let at =
                    (b.entries_bytes().as_ptr() as usize).saturating_sub(record.as_ptr() as usize);
                Beyond::first_to(record, at, endian, &chain, stream).unwrap_or_else(|b| {
                    beyond = Some(b);
                    0
                })
            }
            None => 0,
        };
        lbr_callchain(
            &chain,
            &self.branches,
            past,
            self.order,
            self.max_stack,
            &mut self.words,
        )
        .then_some((&self.words[..], beyond))
    }

    /// Let `b` wait for the bytes of the records after its sample, whose held chain
    /// words `held` names (a sample queued, not handed over at once).
    pub(super) fn wait(&mut self, mut b: Beyond, held: u32) {
        b.held = held;
        self.waiting = Some(b);
    }

    /// Take in the bytes of the next record of data stream `stream`: the waiting
    /// sample's held name and chain words, once they are known.
    pub(super) fn feed(&mut self, bytes: &[u8], stream: usize) -> Option<(u32, Vec<u64>)> {
        let b = self.waiting.as_mut()?;
        if b.stream != stream {
            self.waiting = None;
            return None;
        }
        let words = b.feed(bytes, self.order, self.max_stack)?;
        let held = b.held;
        self.waiting = None;
        Some((held, words))
    }

    /// Whether a queued sample's chain waits for the bytes of the records after it.
    pub(super) fn is_waiting(&self) -> bool {
        self.waiting.is_some()
    }

    /// A round lets queued samples out: the waiting one may be gone, its word stays 0
    /// (perf reads on into the record after the round's, which has not been read).
    pub(super) fn round(&mut self) {
        self.waiting = None;
    }
}

/// A sample of an LBR call-stack event with no branch entries, whose callchain (walked
/// callee first) needs the word perf 6.1 reads as `entries[0].to` past its record: in
/// a file perf maps, the bytes of the records that follow it there. Its chain waits
/// held (with 0 for that word) until the bytes have been read.
pub(super) struct Beyond {
    /// The name of the sample's held chain words.
    pub(super) held: u32,
    /// The recorded callchain.
    chain: Vec<u64>,
    /// Bytes of the following records still to pass before the word.
    skip: usize,
    /// The word's bytes read so far.
    got: Vec<u8>,
    endian: Endian,
    /// The data stream the sample came from (a directory's files are apart in memory).
    pub(super) stream: usize,
}

impl Beyond {
    /// The word perf reads as `entries[0].to` of an empty branch stack whose entries
    /// would start `at` bytes into `record` (header included): from the record where it
    /// lies inside, else a [`Beyond`] waiting for the following bytes (its `held` to be
    /// set).
    pub(super) fn first_to(
        record: &[u8],
        at: usize,
        endian: Endian,
        chain: &[u64],
        stream: usize,
    ) -> Result<u64, Beyond> {
        let want = at + 8;
        let inside = record.get(want.min(record.len())..(want + 8).min(record.len()));
        let got = inside.unwrap_or_default().to_vec();
        let b = Beyond {
            held: 0,
            chain: chain.to_vec(),
            skip: want.saturating_sub(record.len()),
            got,
            endian,
            stream,
        };
        b.word().ok_or(b)
    }

    /// Take in the bytes of the next record in the file; the sample's chain words, once
    /// the word is whole (with it).
    pub(super) fn feed(
        &mut self,
        bytes: &[u8],
        order: Order,
        max_stack: usize,
    ) -> Option<Vec<u64>> {
        let pass = self.skip.min(bytes.len());
        self.skip -= pass;
        let need = 8 - self.got.len();
        let rest = &bytes[pass..];
        self.got.extend_from_slice(&rest[..need.min(rest.len())]);
        let to = self.word()?;
        Some(self.words(to, order, max_stack))
    }

    /// The sample's chain words with `to` as `entries[0].to` (the recorded chain where
    /// perf falls back to it).
    pub(super) fn words(&self, to: u64, order: Order, max_stack: usize) -> Vec<u64> {
        let mut out = Vec::new();
        if !lbr_callchain(&self.chain, &[], to, order, max_stack, &mut out) {
            out = self.chain.clone();
        }
        out
    }

    /// The word, once its 8 bytes are in.
    fn word(&self) -> Option<u64> {
        let b: [u8; 8] = self.got.as_slice().try_into().ok()?;
        Some(match self.endian {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        })
    }
}

#[cfg(test)]
mod tests;
