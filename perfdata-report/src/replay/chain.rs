//! Callchains as perf reads them: context markers, the user frames an unwinding adds,
//! and each entry resolved in the mode its markers say.

use crate::process::{Location, Machine};

/// PERF_CONTEXT_MAX: callchain entries at or above it are context markers.
pub(super) const PERF_CONTEXT_MAX: u64 = -4095i64 as u64;
/// PERF_CONTEXT_KERNEL: the entries that follow are kernel addresses.
pub(super) const PERF_CONTEXT_KERNEL: u64 = -128i64 as u64;
/// PERF_CONTEXT_USER: the entries that follow are user addresses.
pub(super) const PERF_CONTEXT_USER: u64 = -512i64 as u64;

/// A recorded callchain with unwound user frames: its kernel part as recorded (up to a
/// PERF_CONTEXT_USER marker, if the kernel wrote one), then PERF_CONTEXT_USER and the
/// frames, as a frame-pointer callchain is laid out. Without frames, the chain as it was.
pub(crate) fn with_user_frames(chain: &[u64], frames: &[u64]) -> Vec<u64> {
    if frames.is_empty() {
        return chain.to_vec();
    }
    let kernel = chain
        .iter()
        .position(|&e| e == PERF_CONTEXT_USER)
        .unwrap_or(chain.len());
    let mut out = Vec::with_capacity(kernel + 1 + frames.len());
    out.extend_from_slice(&chain[..kernel]);
    out.push(PERF_CONTEXT_USER);
    out.extend_from_slice(frames);
    out
}

/// PERF_CONTEXT_HV: the entries that follow are hypervisor addresses.
pub(super) const PERF_CONTEXT_HV: u64 = -32i64 as u64;

/// Resolve a callchain as perf 6.1's `thread__resolve_callchain_sample` does: entries
/// start in user mode, a PERF_CONTEXT_KERNEL marker switches to kernel mode, USER and HV
/// to user mode; markers are not frames. Any other marker (a guest's, or -1 where the
/// kernel's walk went wrong) makes perf discard the whole chain ("invalid callchain
/// context"), and so it is discarded here: the sample has no frames. The last `unwound`
/// entries are user frames an unwinding gave ([`with_user_frames`]), taken as they are:
/// perf appends those to its cursor without looking for markers, and one of them may be
/// perf's `0xffffffffffffffff`, the frame of a return address read as 0.
/// The frames go into `frames`, emptied first.
pub(super) fn resolve_chain(
    machine: &mut Machine,
    pid: i32,
    tid: i32,
    chain: &[u64],
    unwound: usize,
    frames: &mut Vec<Location>,
) {
    frames.clear();
    let mut kernel = false;
    // The thread, found at the first frame (not once a frame).
    let mut thread = None;
    let marked = chain.len().saturating_sub(unwound);
    for (i, &ip) in chain.iter().enumerate() {
        if ip >= PERF_CONTEXT_MAX && i < marked {
            match ip {
                PERF_CONTEXT_KERNEL => kernel = true,
                PERF_CONTEXT_USER | PERF_CONTEXT_HV => kernel = false,
                _ => return frames.clear(),
            }
            continue;
        }
        let t = *thread.get_or_insert_with(|| machine.findnew_thread(pid, tid));
        frames.push(machine.resolve_in(t, ip, kernel));
    }
}

/// What samples gone before leave, to be filled again: a `-g` sample's chain words,
/// held while it waits in the time-order queue (on the reading thread), and the
/// resolved sample with its frames (on the replaying thread); a vector of each made
/// and freed per sample were 10% of a `-g` listing's cycles in malloc and free. Holds
/// at most [`SPARE_WORDS`] words.
#[derive(Default)]
pub(super) struct Spare {
    words: Vec<Vec<u64>>,
    /// The words the vectors of `words` have room for.
    room: usize,
    /// The sample handed over last, made again in place for the next.
    pub(super) sample: crate::model::ResolvedSample,
    /// The chains of samples waiting for their turn, each named in its sample by its
    /// place here plus one ([`Spare::hold`]): a vector in every queued sample made the
    /// queue's items 16 bytes larger, and moving them through the queue's slots is a
    /// cache miss a line.
    waiting: Vec<Vec<u64>>,
    /// Places of `waiting` let go of, to be filled again (so they never outnumber the
    /// samples that waited at once).
    emptied: Vec<u32>,
    /// Samples' user states unwound, to go back to the reading thread (boxed as the
    /// samples hold them: unboxing and boxing again is an allocation per sample).
    #[allow(clippy::vec_box)]
    users: Vec<Box<crate::unwind::UserState>>,
}

/// The most words [`Spare`] keeps room for (8 MiB): about two rounds of `-g` samples
/// wait at once, each with a few dozen words.
const SPARE_WORDS: usize = 1 << 20;

impl Spare {
    /// Keep a sample's user state, unwound, for [`Spare::hand_back_users`].
    pub(super) fn keep_user(&mut self, user: Box<crate::unwind::UserState>) {
        self.users.push(user);
    }

    /// Move the user states kept into `to`, up to `most` there; the others go.
    #[allow(clippy::vec_box)]
    pub(super) fn hand_back_users(
        &mut self,
        to: &mut Vec<Box<crate::unwind::UserState>>,
        most: usize,
    ) {
        let n = most.saturating_sub(to.len()).min(self.users.len());
        to.extend(self.users.drain(..n));
        self.users.clear();
    }

    /// A vector holding `from`.
    pub(super) fn words(&mut self, from: impl IntoIterator<Item = u64>) -> Vec<u64> {
        let mut v = self.words.pop().unwrap_or_default();
        self.room -= v.capacity();
        v.clear();
        v.extend(from);
        v
    }

    /// Hold a vector holding `from` while its sample waits; its name (never 0) for
    /// [`Spare::release`].
    pub(super) fn hold(&mut self, from: impl IntoIterator<Item = u64>) -> u32 {
        let v = self.words(from);
        match self.emptied.pop() {
            Some(at) => {
                self.waiting[at as usize] = v;
                at + 1
            }
            None => {
                self.waiting.push(v);
                u32::try_from(self.waiting.len()).expect("fewer than 2^32 samples wait")
            }
        }
    }

    /// Hold `v` instead of what `id` names ([`Spare::hold`]; a sample still waiting).
    pub(super) fn replace(&mut self, id: u32, v: Vec<u64>) {
        if let Some(at) = id.checked_sub(1) {
            let old = std::mem::replace(&mut self.waiting[at as usize], v);
            self.keep_words(old);
        }
    }

    /// The words `id` names ([`Spare::hold`]), still held; none for 0.
    pub(super) fn waiting(&self, id: u32) -> &[u64] {
        id.checked_sub(1)
            .and_then(|at| self.waiting.get(at as usize))
            .map_or(&[], Vec::as_slice)
    }

    /// How many words `id` names ([`Spare::waiting`]).
    #[inline]
    pub(super) fn len_of(&self, id: u32) -> usize {
        self.waiting(id).len()
    }

    /// The vector `id` names ([`Spare::hold`]), let go of here; empty for 0.
    pub(super) fn release(&mut self, id: u32) -> Vec<u64> {
        let Some(at) = id.checked_sub(1) else {
            return Vec::new();
        };
        self.emptied.push(at);
        std::mem::take(&mut self.waiting[at as usize])
    }

    /// Keep `v`, done with, for [`Spare::words`].
    pub(super) fn keep_words(&mut self, v: Vec<u64>) {
        if v.capacity() > 0 && self.room + v.capacity() <= SPARE_WORDS {
            self.room += v.capacity();
            self.words.push(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spare_vectors_are_given_back_filled_as_asked_and_bounded() {
        let mut spare = Spare::default();
        let a = spare.words([1, 2, 3]);
        assert_eq!(a, [1, 2, 3]);
        spare.keep_words(a);
        // The kept vector comes back holding only what is asked now.
        assert_eq!(spare.words([7]), [7]);
        // No more room kept than SPARE_WORDS words, however many are given back.
        for _ in 0..3 {
            spare.keep_words(Vec::with_capacity(SPARE_WORDS / 2));
        }
        assert!(spare.room <= SPARE_WORDS, "{}", spare.room);
        assert_eq!(spare.words.len(), 2);
        // Held chains come back by name, each its own, and their places are used again.
        let (x, y) = (spare.hold([1, 2]), spare.hold([3]));
        assert!(x != 0 && y != 0 && x != y);
        assert_eq!(spare.release(y), [3]);
        assert_eq!(spare.release(0), [0u64; 0]);
        let z = spare.hold([4, 5, 6]);
        assert_eq!(z, y);
        assert_eq!(spare.release(x), [1, 2]);
        assert_eq!(spare.release(z), [4, 5, 6]);
        assert_eq!(spare.waiting.len(), 2);
    }

    #[test]
    fn an_unknown_context_marker_discards_the_chain_as_perf_does() {
        let mut m = Machine::new();
        // A user frame, then the kernel's -1 (seen in a `-g` recording of xz): perf
        // 6.1 prints the sample with no frames.
        let bad = [PERF_CONTEXT_USER, 0x7f94_81aa_3dd0, u64::MAX, 0];
        let mut frames = Vec::new();
        resolve_chain(&mut m, 1, 1, &bad, 0, &mut frames);
        assert!(frames.is_empty());
        let good = [
            PERF_CONTEXT_KERNEL,
            0xffff_ffff_8100_0000,
            PERF_CONTEXT_USER,
            0x1000,
        ];
        resolve_chain(&mut m, 1, 1, &good, 0, &mut frames);
        assert_eq!(
            frames.iter().map(|f| (f.ip, f.kernel)).collect::<Vec<_>>(),
            [(0xffff_ffff_8100_0000, true), (0x1000, false)]
        );
        // Unwound frames are frames, perf's -1 among them.
        let unwound = with_user_frames(&good[..2], &[0x1000, u64::MAX]);
        resolve_chain(&mut m, 1, 1, &unwound, 2, &mut frames);
        assert_eq!(
            frames.iter().map(|f| (f.ip, f.kernel)).collect::<Vec<_>>(),
            [
                (0xffff_ffff_8100_0000, true),
                (0x1000, false),
                (u64::MAX, false)
            ]
        );
    }
}
