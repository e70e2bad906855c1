//! perf's `--max-stack N` (report's and script's): the frames of a sample's callchain
//! perf's `thread__resolve_callchain` keeps, counted from where its cursor starts. Its
//! `thread__resolve_callchain_sample` keeps N entries of the recorded chain (the sample
//! end in callee order, the root end in caller order); the unwinding of a
//! `--call-graph dwarf` stack copy (`thread__resolve_callchain_unwind`) has a bound of
//! its own and stops N frames from the sample whatever the order, the inlined functions
//! perf lists at those frames not counted.

use std::borrow::Cow;

use crate::callgraph::Order;
use crate::process::Location;

/// The callchain of a sample (leaf first) cut to `--max-stack` frames, counted from
/// where perf's cursor starts: the root in caller order, the sample in callee order;
/// with the number of its last frames that are unwound ones. The `unwound` last frames
/// (`--call-graph dwarf`) are perf's unwinding's, which has a bound of its own and
/// always stops that many frames from the sample (in caller order too, the frames then
/// reversed); the recorded (kernel) frames before them are cut as a recorded chain is.
/// The count kept says which frames perf lists inlined functions at: counted from the
/// uncut chain's recorded part, a cut recorded part made it too small, and a kept
/// unwound frame was taken for a recorded one (`read` where perf lists
/// `__GI___libc_read (inlined)`).
pub(crate) fn cut_chain(
    chain: &[Location],
    max: Option<usize>,
    order: Order,
    unwound: usize,
) -> (Cow<'_, [Location]>, usize) {
    let unwound = unwound.min(chain.len());
    if unwound == 0 || max.is_none_or(|n| n >= chain.len()) {
        return (Cow::Borrowed(cut_recorded(chain, max, order)), unwound);
    }
    let (recorded, user) = chain.split_at(chain.len() - unwound);
    let n = max.unwrap_or(usize::MAX);
    if recorded.len() <= n && user.len() <= n {
        return (Cow::Borrowed(chain), unwound);
    }
    let user = &user[..user.len().min(n)];
    let recorded = cut_recorded(recorded, max, order);
    if recorded.is_empty() {
        return (Cow::Borrowed(user), user.len());
    }
    (Cow::Owned([recorded, user].concat()), user.len())
}

/// A recorded callchain cut to `--max-stack` frames (see [`cut_chain`]).
fn cut_recorded(chain: &[Location], max: Option<usize>, order: Order) -> &[Location] {
    match max {
        Some(n) if n < chain.len() => match order {
            Order::Caller => &chain[chain.len() - n..],
            Order::Callee => &chain[..n],
        },
        _ => chain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain of `recorded` recorded frames then `unwound` unwound ones, leaf first,
    /// each frame's ip its index.
    fn chain(recorded: usize, unwound: usize) -> Vec<Location> {
        (0..(recorded + unwound) as u64)
            .map(|ip| Location {
                ip,
                kernel: ip < recorded as u64,
                ..Location::default()
            })
            .collect()
    }

    fn ips(c: &[Location]) -> Vec<u64> {
        c.iter().map(|l| l.ip).collect()
    }

    #[test]
    fn a_recorded_chain_keeps_the_end_its_order_starts_at() {
        let c = chain(5, 0);
        let (callee, u) = cut_chain(&c, Some(2), Order::Callee, 0);
        assert_eq!((ips(&callee), u), (vec![0, 1], 0));
        let (caller, u) = cut_chain(&c, Some(2), Order::Caller, 0);
        assert_eq!((ips(&caller), u), (vec![3, 4], 0));
        let (none, _) = cut_chain(&c, Some(0), Order::Callee, 0);
        assert!(none.is_empty());
    }

    /// Kernel frames and unwound frames are cut apart, the unwound ones from the sample
    /// in either order, and the count of unwound frames kept is what is left of them.
    #[test]
    fn unwound_frames_are_cut_apart_and_counted_as_kept() {
        let c = chain(5, 4);
        let (callee, u) = cut_chain(&c, Some(2), Order::Callee, 4);
        assert_eq!((ips(&callee), u), (vec![0, 1, 5, 6], 2));
        let (caller, u) = cut_chain(&c, Some(2), Order::Caller, 4);
        assert_eq!((ips(&caller), u), (vec![3, 4, 5, 6], 2));
        // Both parts within the bound: the chain as it is.
        let (whole, u) = cut_chain(&c, Some(5), Order::Callee, 4);
        assert_eq!((whole.len(), u), (9, 4));
        // A user-only chain (a page fault taken in user mode).
        let user = chain(0, 4);
        let (cut, u) = cut_chain(&user, Some(3), Order::Callee, 4);
        assert_eq!((ips(&cut), u), (vec![0, 1, 2], 3));
    }
}
