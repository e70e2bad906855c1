//! Tests of the children walks: chain keys, pending inlined entries.

use super::*;
use crate::process::Machine;

/// A sample of three frames, the root two unwound, the middle one with two entries
/// perf lists (an inlined function and its own symbol): its keys root first, the
/// middle frame's outermost entry (2) first, whatever the order the chain is walked
/// in; the recorded leaf and the root without entries as they are.
#[test]
fn unwound_frames_expand_into_their_entries_outermost_first() {
    let mut m = Machine::new();
    let mut s = crate::stacks::testing::sample(&mut m, 1, None, 1, 3);
    s.unwound = 2;
    let own = raw_key(&[SortKey::Sym], &s, &s.ip, 0);
    let middle = s.callchain[1].addr;
    for order in [Order::Caller, Order::Callee] {
        let mut asked = Vec::new();
        let mut inlines = |at: &Location| {
            asked.push(at.addr);
            if at.addr == middle {
                2
            } else {
                0
            }
        };
        let walk = chain_keys(
            &[SortKey::Sym],
            &s,
            &s.callchain,
            s.unwound,
            own,
            0,
            order,
            &mut inlines,
        );
        let got: Vec<(u64, u16)> = walk[1..].iter().map(|(_, l)| (l.addr, l.inline)).collect();
        let (leaf, root) = (s.callchain[0].addr, s.callchain[2].addr);
        assert_eq!(
            got,
            [(root, 0), (middle, 2), (middle, 1), (leaf, 0)],
            "{order:?}"
        );
        // Only the unwound frames are asked about.
        asked.sort_unstable();
        assert_eq!(asked, [middle, root], "{order:?}");
    }
}

/// Frames counted pending, their entries made after the counting
/// ([`Children::keys`]), give the keys, locations and walks that counting each
/// frame's entries as the samples came gives: the same numbering (the naming and
/// perf's first-chain names go by it) and the same frames, each walk once with its
/// period.
#[test]
fn pending_entries_are_made_as_if_counted_as_they_came() {
    let mut m = Machine::new();
    let mut short = crate::stacks::testing::sample(&mut m, 1, None, 3, 3);
    short.unwound = 2;
    let mut long = crate::stacks::testing::sample(&mut m, 1, None, 5, 4);
    long.unwound = 3;
    // Entries perf lists per frame address: 0 (as it is), 2 and 3.
    let entries = |addr: u64| match addr {
        0x1010 => 2,
        0x1030 => 3,
        _ => 0,
    };
    let count = |pending: bool| {
        let mut c = Children::default();
        for (n, s) in [&short, &long, &short].into_iter().enumerate() {
            let own = raw_key(&[SortKey::Sym], s, &s.ip, 0);
            let mut at = |l: &Location| if pending { PENDING } else { entries(l.addr) };
            let walk = chain_keys(
                &[SortKey::Sym],
                s,
                &s.callchain,
                s.unwound,
                own,
                0,
                Order::Caller,
                &mut at,
            );
            c.add(walk, s.period, 0, n as u64, false);
        }
        c.keys(|_, addr| entries(addr))
    };
    let walks = |named: &Named| {
        let mut out = Vec::new();
        named.each(|w| out.push((w.frames.to_vec(), w.period, w.samples, w.first)));
        out
    };
    let (keys, locs, named) = count(false);
    let (p_keys, p_locs, p_named) = count(true);
    let all = |c: &Chunked<RawKey>| c.iter().copied().collect::<Vec<_>>();
    assert_eq!(all(&p_keys), all(&keys));
    let all = |c: &Chunked<ChainLoc>| c.iter().copied().collect::<Vec<_>>();
    assert_eq!(all(&p_locs), all(&locs));
    // The short chain's root (0x1020) as it is, 0x1010 as its two entries, the
    // leaf as recorded; twice.
    let got = walks(&p_named);
    assert_eq!(got, walks(&named));
    assert_eq!(got.len(), 2);
    let inline = |f: &[(u32, u32)]| {
        f[1..]
            .iter()
            .map(|&(_, l)| (locs.get(l as usize).addr, locs.get(l as usize).inline))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        inline(&got[0].0),
        [(0x1020, 0), (0x1010, 2), (0x1010, 1), (0x1000, 0)]
    );
    assert_eq!((got[0].1, got[0].2, got[0].3), (6, 2, 0));
    assert_eq!(
        inline(&got[1].0),
        [
            (0x1030, 3),
            (0x1030, 2),
            (0x1030, 1),
            (0x1020, 0),
            (0x1010, 2),
            (0x1010, 1),
            (0x1000, 0)
        ]
    );
}
