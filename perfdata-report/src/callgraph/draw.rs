//! An entry's call tree printed as perf 6.1's `--stdio` prints it (ui/stdio/hist.c):
//! the graph with its `|`, `---` and `--N.NN%--` lines, flat chains, or folded lines;
//! the nodes under the threshold left out as perf's `sort_chain_*` leave them out.

use std::io::{self, Write};

use super::tree::{CallNode, CallTree};
use super::{CallGraph, ChainValue, PrintType};

/// What the drawing of one entry's tree needs besides the tree.
#[derive(Debug, Clone, Copy)]
pub struct Totals {
    /// The event's total period (perf's `hists->stats.total_period`): the base of
    /// `graph` percentages, and what the threshold is a percent of
    /// (`callchain_period`).
    pub total: u64,
    /// The entry's period (its children period with `--children`): the base of
    /// `fractal` percentages at the top.
    pub entry: u64,
    /// Whether the first sort key is `sym`: a lone first node's first frame is then the
    /// entry's own symbol and is not printed again (perf checks the `--sort` it was
    /// given for a `sym` prefix).
    pub sym_first: bool,
}

/// Print `tree` under its entry's line.
pub fn write_tree(
    out: &mut dyn Write,
    tree: &CallTree,
    params: &CallGraph,
    totals: Totals,
) -> io::Result<()> {
    let min_hit = (totals.total as f64 * (params.threshold / 100.0)) as u64;
    let d = Drawer {
        tree,
        params,
        min_hit,
    };
    match params.print {
        PrintType::Graph | PrintType::Fractal => d.graph(out, totals),
        PrintType::Flat => d.flat(out, totals.total, false),
        PrintType::Folded => d.flat(out, totals.total, true),
    }
}

struct Drawer<'a> {
    tree: &'a CallTree,
    params: &'a CallGraph,
    /// The least cumulative period shown (`graph`, `flat`, `folded`).
    min_hit: u64,
}

/// perf's `callchain__fprintf_left_margin`.
fn margin(out: &mut Vec<u8>, left: usize) {
    out.extend(std::iter::repeat_n(b' ', 12 + left));
}

/// perf's depth mask bit, as x86 shifts an int (the count taken modulo 32).
fn bit(i: usize) -> u32 {
    1u32.wrapping_shl(i as u32)
}

impl Drawer<'_> {
    fn fractal(&self) -> bool {
        self.params.print == PrintType::Fractal
    }

    /// The children of `node` perf keeps after `sort_chain_*`, by cumulative period,
    /// largest first (ties in their tree order).
    fn sorted<'t>(&self, node: CallNode<'t>) -> Vec<CallNode<'t>> {
        let min_hit = if self.fractal() {
            (node.children_hit() as f64 * (self.params.threshold / 100.0)).ceil() as u64
        } else {
            self.min_hit
        };
        let mut kids: Vec<CallNode> = node.children(min_hit).collect();
        kids.sort_by_key(|c| std::cmp::Reverse(c.cumul_hit()));
        kids
    }

    /// perf's `callchain_node__fprintf_value`: cumulative (or, folded, own) period,
    /// samples or percent of `total`.
    fn value(&self, out: &mut Vec<u8>, period: u64, count: u64, total: u64) {
        let _ = match self.params.value {
            ChainValue::Period => write!(out, "{period}"),
            ChainValue::Count => write!(out, "{count}"),
            ChainValue::Percent => {
                let pct = if total == 0 {
                    0.0
                } else {
                    period as f64 * 100.0 / total as f64
                };
                write!(out, "{pct:.2}%")
            }
        };
    }

    /// perf's `callchain__fprintf_graph`.
    fn graph(&self, out: &mut dyn Write, totals: Totals) -> io::Result<()> {
        let mut buf = Vec::new();
        let mut left = 0;
        let mut top = self.tree.root();
        let kids = self.sorted(top);
        // One root of the entry's whole period: its frames without a percentage.
        if let [only] = kids[..] {
            if only.cumul_hit() == totals.entry {
                let mut printed = 0u32;
                for (i, f) in only.frames().enumerate() {
                    if i == 0 && totals.sym_first {
                        continue;
                    }
                    if printed == 0 {
                        margin(&mut buf, left);
                        buf.extend_from_slice(b"|\n");
                        margin(&mut buf, left);
                        buf.extend_from_slice(b"---");
                        left += 3;
                    } else {
                        margin(&mut buf, left);
                    }
                    buf.extend_from_slice(f.as_bytes());
                    buf.push(b'\n');
                    printed += 1;
                    if printed == self.params.print_limit {
                        break;
                    }
                }
                top = only;
            }
        }
        let total = if self.fractal() {
            totals.entry
        } else {
            totals.total
        };
        self.graph_level(&mut buf, top, total, 1, 1, left);
        if !buf.is_empty() {
            buf.push(b'\n');
        }
        out.write_all(&buf)
    }

    /// perf's `__callchain__fprintf_graph`: the children of `parent` at `depth`.
    fn graph_level(
        &self,
        out: &mut Vec<u8>,
        parent: CallNode,
        total: u64,
        depth: usize,
        mask: u32,
        left: usize,
    ) {
        let mut remaining = total;
        let mut new_mask = mask;
        let mut shown = 0u32;
        let mut cumul_count = 0u64;
        let kids = self.sorted(parent);
        for (i, child) in kids.iter().enumerate() {
            let cumul = child.cumul_hit();
            remaining = remaining.wrapping_sub(cumul);
            cumul_count += child.cumul_count();
            // The last child drops its level's pipe, unless fractal's "[...]" of the
            // hidden rest follows.
            if i + 1 == kids.len() && (!self.fractal() || remaining == 0) {
                new_mask &= !bit(depth - 1);
            }
            // The separator keeps the level's pipe.
            margin(out, left);
            for d in 0..depth {
                out.extend_from_slice(if mask & bit(d) != 0 {
                    b"|          "
                } else {
                    b"           "
                });
            }
            out.push(b'\n');
            for (j, f) in child.frames().enumerate() {
                self.frame_line(
                    out,
                    child.cumul_hit(),
                    child.cumul_count(),
                    f,
                    depth,
                    new_mask,
                    j,
                    total,
                    left,
                );
            }
            let below = if self.fractal() {
                child.children_hit()
            } else {
                total
            };
            self.graph_level(out, *child, below, depth + 1, new_mask | bit(depth), left);
            shown += 1;
            if shown == self.params.print_limit {
                break;
            }
        }
        if self.fractal() && remaining != 0 && remaining != total {
            let mut count = 0;
            if self.params.value == ChainValue::Count && !kids.is_empty() {
                let rest = parent.children_count() as i64 - cumul_count as i64;
                if rest <= 0 {
                    return;
                }
                count = rest as u64;
            }
            new_mask &= !bit(depth - 1);
            self.frame_line(
                out, remaining, count, "[...]", depth, new_mask, 0, total, left,
            );
        }
    }

    /// perf's `ipchain__fprintf_graph`: one frame of a node; the first has the node's
    /// value.
    #[allow(clippy::too_many_arguments)]
    fn frame_line(
        &self,
        out: &mut Vec<u8>,
        hit: u64,
        count: u64,
        frame: &str,
        depth: usize,
        mask: u32,
        period: usize,
        total: u64,
        left: usize,
    ) {
        margin(out, left);
        for d in 0..depth {
            out.push(if mask & bit(d) != 0 { b'|' } else { b' ' });
            if period == 0 && d == depth - 1 {
                out.extend_from_slice(b"--");
                self.value(out, hit, count, total);
                out.extend_from_slice(b"--");
            } else {
                out.extend_from_slice(b"          ");
            }
        }
        out.extend_from_slice(frame.as_bytes());
        out.push(b'\n');
    }

    /// perf's `callchain__fprintf_flat` and `callchain__fprintf_folded`: every node
    /// where chains end, by its own period, largest first (ties in the order perf's
    /// `__sort_chain_flat` meets them, children before their parent).
    fn flat(&self, out: &mut dyn Write, total: u64, folded: bool) -> io::Result<()> {
        let mut ends: Vec<(CallNode, Vec<CallNode>)> = Vec::new();
        let mut path = Vec::new();
        self.collect_ends(self.tree.root(), true, &mut path, &mut ends);
        ends.sort_by_key(|(n, _)| std::cmp::Reverse(n.hit()));
        let mut buf = Vec::new();
        for (shown, (node, path)) in ends.iter().enumerate() {
            let frames = path.iter().flat_map(|p| p.frames());
            if folded {
                self.value(&mut buf, node.hit(), node.count(), total);
                buf.push(b' ');
                for (i, f) in frames.enumerate() {
                    if i > 0 {
                        buf.push(b';');
                    }
                    buf.extend_from_slice(f.as_bytes());
                }
                buf.push(b'\n');
            } else {
                buf.extend_from_slice(b"           ");
                self.value(&mut buf, node.cumul_hit(), node.cumul_count(), total);
                buf.push(b'\n');
                for f in frames {
                    buf.extend_from_slice(b"                ");
                    buf.extend_from_slice(f.as_bytes());
                    buf.push(b'\n');
                }
                buf.push(b'\n');
            }
            if shown as u32 + 1 == self.params.print_limit {
                break;
            }
        }
        out.write_all(&buf)
    }

    /// The nodes under `n` where chains end with at least the least period, children
    /// first, each with its path from the root.
    fn collect_ends<'t>(
        &self,
        node: CallNode<'t>,
        root: bool,
        path: &mut Vec<CallNode<'t>>,
        ends: &mut Vec<(CallNode<'t>, Vec<CallNode<'t>>)>,
    ) {
        // A node's hit is at most its cumulative period: below the least, none under
        // it is shown.
        for c in node.children(self.min_hit) {
            path.push(c);
            self.collect_ends(c, false, path, ends);
            path.pop();
        }
        if !root && node.hit() != 0 && node.hit() >= self.min_hit {
            ends.push((node, path.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tree::{Forest, FrameKey};
    use super::*;

    /// The tree of chains f0-f1 of period `total - 1` and f0-f2 of period 1, drawn as
    /// `print` with the default threshold (0.5%).
    fn drawn(total: u64, print: PrintType) -> String {
        let keys: Vec<FrameKey> = [10, 20, 30]
            .map(|value| FrameKey {
                inline: 0,
                dso: 1,
                sym: true,
                value,
            })
            .to_vec();
        let mut f = Forest::default();
        f.append(0, 7, [0, 1].into_iter(), total - 1, total - 1);
        f.append(0, 7, [0, 2].into_iter(), 1, 1);
        let names = (0..keys.len()).map(|k| format!("f{k}")).collect();
        let places: Vec<_> = keys.iter().map(FrameKey::own_place).collect();
        let trees = f.trees(keys, names, &places, &mut Vec::new());
        let totals = Totals {
            total,
            entry: total,
            sym_first: false,
        };
        let params = CallGraph {
            print,
            ..CallGraph::default()
        };
        let mut out = Vec::new();
        write_tree(&mut out, &trees[&(0, 7)], &params, totals).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// fractal's minimum is a percent of the parent's children, rounded up (perf's
    /// `__sort_chain_graph_rel`: `ceil(children_hit * min_percent)`): 0.5% of 300 is
    /// 1.5, so a branch of 1 is left out there, while graph's minimum (of the total,
    /// truncated: 1) keeps it.
    #[test]
    fn fractals_minimum_is_rounded_up() {
        let fractal = drawn(300, PrintType::Fractal);
        assert!(
            fractal.contains("f1") && !fractal.contains("f2"),
            "{fractal}"
        );
        assert!(drawn(300, PrintType::Graph).contains("f2"));
    }

    /// A branch whose cumulative period is the threshold exactly is printed: perf's
    /// `__sort_chain_graph_abs` keeps a child with `callchain_cumul_hits(child) >=
    /// min_hit`. 200 periods at 0.5% make a minimum of 1, the period of `f2`'s branch.
    #[test]
    fn a_branch_at_the_threshold_exactly_is_printed() {
        for print in [PrintType::Graph, PrintType::Fractal] {
            let text = drawn(200, print);
            assert!(text.contains("f1"), "{print:?}:\n{text}");
            assert!(text.contains("--0.50%--f2"), "{print:?}:\n{text}");
        }
    }
}
