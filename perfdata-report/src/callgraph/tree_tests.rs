//! The trie of frame keys and the call trees made of it.

use super::*;

fn key(value: u64) -> FrameKey {
    FrameKey {
        inline: 0,
        dso: 1,
        sym: true,
        value,
    }
}

/// Chains a-b-c, a-b and a-d: perf's nodes are [a] with [b] (hit) under it and [c]
/// under that, and [d]; a run that neither parts nor ends is one node.
#[test]
fn runs_are_nodes_split_where_chains_part_or_end() {
    let keys = vec![key(10), key(20), key(30), key(40), key(50)];
    let names = (0..5).map(|k| format!("f{k}")).collect();
    let mut f = Forest::default();
    f.append(0, 7, [0, 1, 2].into_iter(), 5, 1);
    f.append(0, 7, [0, 1].into_iter(), 3, 2);
    f.append(0, 7, [0, 3].into_iter(), 2, 1);
    f.append(0, 8, [4, 0].into_iter(), 1, 1);
    f.append(0, 9, std::iter::empty(), 1, 1);
    let places: Vec<FramePlace> = keys.iter().map(FrameKey::own_place).collect();
    let trees = f.trees(keys, names, &places, &mut Vec::new());
    assert_eq!(trees.len(), 2, "an empty chain makes no tree");
    let t = &trees[&(0, 7)];
    let root = t.root();
    assert_eq!(root.frames().count(), 0);
    assert_eq!((root.children_hit(), root.children_count()), (10, 4));
    let [a] = root.children(0).collect::<Vec<_>>()[..] else {
        panic!()
    };
    assert_eq!(a.frames().collect::<Vec<_>>(), ["f0"]);
    assert_eq!((a.hit(), a.children_hit()), (0, 10));
    // Siblings by address, largest first: d (40) before b (20).
    let kids: Vec<_> = a.children(0).collect();
    let names: Vec<Vec<&str>> = kids.iter().map(|c| c.frames().collect()).collect();
    assert_eq!(names, [["f3"], ["f1"]]);
    let b = kids[1];
    assert_eq!(
        (b.hit(), b.count(), b.children_hit(), b.cumul_hit()),
        (3, 2, 5, 8)
    );
    let [c] = b.children(0).collect::<Vec<_>>()[..] else {
        panic!()
    };
    assert_eq!(c.frames().collect::<Vec<_>>(), ["f2"]);
    // Children under the least period asked for are left out.
    assert_eq!(a.children(3).count(), 1);
    let t = &trees[&(0, 8)];
    let [top] = t.root().children(0).collect::<Vec<_>>()[..] else {
        panic!()
    };
    assert_eq!(top.frames().collect::<Vec<_>>(), ["f4", "f0"]);
}

/// Siblings of inlined functions are in perf's rb-tree order, by name (largest
/// first), whatever order their chains came in, and a function beside them is
/// placed by its name too: met in the order get, dl, zzz, perf's tree holds zzz,
/// get, dl (from 6.1's match_chain; the old order by DSO had the inlined first, by
/// when they were met: dl, get, zzz).
#[test]
fn inlined_siblings_are_in_perfs_order_by_name() {
    let inlined = |value| FrameKey {
        inline: 0,
        dso: INLINED_DSO,
        sym: true,
        value,
    };
    let keys = vec![key(5), inlined(0), inlined(1), key(10)];
    let names = [
        "top",
        "get_extended_indices (inlined)",
        "dl_init_cacheinfo (inlined)",
        "zzz",
    ]
    .map(String::from)
    .to_vec();
    let mut f = Forest::default();
    for k in 1..=3 {
        f.append(0, 1, [0, k].into_iter(), 1, 1);
    }
    let places: Vec<FramePlace> = keys.iter().map(FrameKey::own_place).collect();
    let trees = f.trees(keys, names, &places, &mut Vec::new());
    let [top] = trees[&(0, 1)].root().children(0).collect::<Vec<_>>()[..] else {
        panic!()
    };
    let order: Vec<&str> = top.children(0).flat_map(|c| c.frames()).collect();
    assert_eq!(
        order,
        [
            "zzz",
            "get_extended_indices (inlined)",
            "dl_init_cacheinfo (inlined)"
        ]
    );
}

/// An inlined function and a frame of no symbol are compared by DSO and ip (perf's
/// `match_chain` fallback): met as foo, 0x1225, qux, 0x1245, of one period, perf
/// prints the addresses (largest first) then qux, foo (by name).
#[test]
fn inlined_siblings_of_frames_without_a_symbol_are_placed_by_ip() {
    let inlined = |value| FrameKey {
        inline: 0,
        dso: INLINED_DSO,
        sym: true,
        value,
    };
    let bare = |value| FrameKey {
        inline: 0,
        dso: 1,
        sym: false,
        value,
    };
    let keys = vec![key(5), inlined(0), bare(0x1225), inlined(1), bare(0x1245)];
    let names = ["w", "foo (inlined)", "0x1225", "qux (inlined)", "0x1245"];
    let names = names.map(String::from).to_vec();
    let places = [(1, 5), (1, 0x1190), (1, 0x1225), (1, 0x1180), (1, 0x1245)];
    let mut f = Forest::default();
    for k in 1..=4 {
        f.append(0, 1, [0, k].into_iter(), 1, 1);
    }
    let trees = f.trees(keys, names, &places, &mut Vec::new());
    let [top] = trees[&(0, 1)].root().children(0).collect::<Vec<_>>()[..] else {
        panic!()
    };
    let order: Vec<&str> = top.children(0).flat_map(|c| c.frames()).collect();
    let want = ["0x1245", "0x1225", "qux (inlined)", "foo (inlined)"];
    assert_eq!(order, want);
}

/// A node of many children (past the count from which they are found through the
/// hash table) keeps each once, whatever order chains come in: each child's period
/// summed, the children in perf's order.
#[test]
fn many_children_are_each_one_node() {
    let keys: Vec<FrameKey> = (0..=40).map(|k| key(10 * k)).collect();
    let names = (0..=40).map(|k| format!("f{k}")).collect();
    let mut f = Forest::default();
    for k in (1..=40).chain((1..=40).rev()).chain((1..=40).step_by(3)) {
        f.append(0, 1, [0, k].into_iter(), k.into(), 1);
    }
    let places: Vec<FramePlace> = keys.iter().map(FrameKey::own_place).collect();
    let trees = f.trees(keys, names, &places, &mut Vec::new());
    let [a] = trees[&(0, 1)].root().children(0).collect::<Vec<_>>()[..] else {
        panic!()
    };
    let kids: Vec<_> = a.children(0).collect();
    assert_eq!(kids.len(), 40);
    for (c, k) in kids.iter().zip((1..=40u64).rev()) {
        assert_eq!(c.frames().collect::<Vec<_>>(), [format!("f{k}")]);
        let times = if (k - 1) % 3 == 0 { 3 } else { 2 };
        assert_eq!((c.hit(), c.count()), (k * times, times));
    }
    assert_eq!(a.cumul_count(), 80 + 14);
}

/// A chain met again after the children's rb-tree rotated can land elsewhere than the
/// first time, as perf appends it sample by sample: under `main`, zzz, mmm inlined,
/// then aaa to fff (out of line, addresses above zzz's) and mmm again. mmm goes right
/// of zzz (by name); six functions on zzz's left (by address) rotate the root to bbb,
/// and the second mmm, compared by name, goes left all the way: a second node, first
/// in order (tests/callgraph/same_names.c's shape, as perf 6.1 prints it). The samples
/// come one by one, but for a run of three of the second mmm (the first walks and
/// makes the node, the two others count into it). Each chain once with its whole
/// period, as it first came, is one node.
#[test]
fn a_chain_met_again_after_a_rotation_is_a_second_node() {
    use crate::callgraph::appends::Appends;
    let inlined = FrameKey {
        inline: 0,
        dso: INLINED_DSO,
        sym: true,
        value: 0,
    };
    let mut keys = vec![key(0x10), key(0x50), inlined];
    keys.extend((0..6).map(|i| key(0x100 + 0x10 * i)));
    let names = [
        "main",
        "zzz",
        "mmm (inlined)",
        "aaa",
        "bbb",
        "ccc",
        "ddd",
        "eee",
        "fff",
    ];
    let names: Vec<String> = names.map(String::from).to_vec();
    let places: Vec<FramePlace> = keys.iter().map(FrameKey::own_place).collect();
    // Frame key k is walk k - 1: the samples' walks, in order.
    let order = [1, 2, 3, 4, 5, 6, 7, 8, 2, 2, 2];
    // By sample; each chain once; by sample, but the spool lost the order.
    #[derive(PartialEq)]
    enum Kept {
        BySample,
        Once,
        Lost,
    }
    let mut warnings = Vec::new();
    let mut shown = |kept: Kept| {
        let mut f = Forest::default();
        // Each distinct chain once, with its samples and period, as the report counts.
        let mut ends = Vec::new();
        for k in 1..=8u32 {
            let times = order.iter().filter(|&&o| o == k).count() as u64;
            ends.extend(f.append(0, 0, [0, k].into_iter(), times, times));
        }
        if kept != Kept::Once {
            // Lost: no byte in memory, and a TMPDIR where no file can be made.
            let nowhere = std::env::temp_dir().join("perfdata-no-such-dir/below");
            let mut a = match kept {
                Kept::Lost => Appends::with_memory(0),
                _ => Appends::new(),
            };
            crate::spool::testing::TEMP_DIR.with(|d| *d.borrow_mut() = Some(nowhere));
            for &k in &order {
                a.push(k - 1, 1);
            }
            let finished = a.finish();
            crate::spool::testing::TEMP_DIR.with(|d| *d.borrow_mut() = None);
            match (kept, finished) {
                (Kept::Lost, Err(e)) => f.order_lost(e),
                (Kept::BySample, Ok(o)) => f.appended_in(o, (0..=8).collect(), ends),
                (_, r) => panic!("the spool: {r:?}"),
            }
        }
        let trees = f.trees(keys.clone(), names.clone(), &places, &mut warnings);
        let [main] = trees[&(0, 0)].root().children(0).collect::<Vec<_>>()[..] else {
            panic!()
        };
        main.children(0)
            .map(|c| (c.frames().collect::<Vec<_>>().join(";"), c.hit()))
            .collect::<Vec<_>>()
    };
    let by_sample = shown(Kept::BySample);
    let want = [
        ("mmm (inlined)", 3),
        ("fff", 1),
        ("eee", 1),
        ("ddd", 1),
        ("ccc", 1),
        ("bbb", 1),
        ("aaa", 1),
        ("zzz", 1),
        ("mmm (inlined)", 1),
    ];
    let want: Vec<(String, u64)> = want.iter().map(|&(n, h)| (n.to_string(), h)).collect();
    assert_eq!(by_sample, want);
    let once = shown(Kept::Once);
    assert_eq!(once.len(), 8, "{once:?}");
    assert_eq!(once.last(), Some(&("mmm (inlined)".to_string(), 4)));
    // Without the order the graph is the distinct chains', said once, with why.
    let lost = shown(Kept::Lost);
    assert_eq!(lost, once);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("could not be kept")
            && warnings[0].contains("No such file or directory")
            && warnings[0].contains("may differ from perf's"),
        "{}",
        warnings[0]
    );
}

/// An entry the collapse pass merged into another (`part` 1) has a graph of its own,
/// merged into the first's as perf's `callchain_merge` merges it: with `m` inlined
/// (before `z` by name, after `a`) and `z` (0x100) after `a` (0x300) by address, the
/// second entry's `z` and `a` met before the first's `m` go in after it (z, m, a),
/// where appending every chain to one graph in that order gives a, z, m.
#[test]
fn a_merged_entrys_graph_is_merged_into_the_firsts() {
    let inlined = FrameKey {
        inline: 0,
        dso: INLINED_DSO,
        sym: true,
        value: 0,
    };
    let keys = vec![key(0x10), inlined, key(0x100), key(0x300)];
    let names: Vec<String> = ["main", "m (inlined)", "z", "a"].map(String::from).to_vec();
    let places: Vec<FramePlace> = keys.iter().map(FrameKey::own_place).collect();
    let kids = |parts: [u32; 3]| {
        let mut f = Forest::default();
        for (k, part) in [2u32, 3, 1].into_iter().zip(parts) {
            f.append_to((0, 4, part), [0, k].into_iter(), u64::from(k), 1);
        }
        let trees = f.trees(keys.clone(), names.clone(), &places, &mut Vec::new());
        assert_eq!(trees.len(), 1, "the merged entry's graph is the first's");
        let [main] = trees[&(0, 4)].root().children(0).collect::<Vec<_>>()[..] else {
            panic!()
        };
        main.children(0)
            .map(|c| (c.frames().collect::<Vec<_>>().join(";"), c.hit()))
            .collect::<Vec<_>>()
    };
    let merged = kids([1, 1, 0]);
    let want = [("z", 2), ("m (inlined)", 1), ("a", 3)];
    let want: Vec<(String, u64)> = want.iter().map(|&(n, h)| (n.to_string(), h)).collect();
    assert_eq!(merged, want);
    let one = kids([0, 0, 0]);
    let names: Vec<&str> = one.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["a", "z", "m (inlined)"]);
}
