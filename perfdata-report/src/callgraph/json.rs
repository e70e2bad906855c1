//! An entry's call tree as JSON: the root's nodes, each `{frames, period, samples,
//! percent, self_period, self_samples, children}`, children by period, largest first,
//! every node kept (the threshold and print limit are the text's).

use serde_json::{json, Value};

use super::tree::{CallNode, CallTree};

/// The nodes under the root of `tree`; percentages of `total` (the event's period).
pub fn tree(tree: &CallTree, total: u64) -> Value {
    nodes(tree, tree.root(), total)
}

fn nodes(tree: &CallTree, parent: &CallNode, total: u64) -> Value {
    let mut kids: Vec<&CallNode> = parent.children.iter().map(|&c| tree.node(c)).collect();
    kids.sort_by_key(|c| std::cmp::Reverse(c.cumul_hit()));
    Value::Array(
        kids.into_iter()
            .map(|n| {
                let percent = if total == 0 {
                    0.0
                } else {
                    n.cumul_hit() as f64 * 100.0 / total as f64
                };
                json!({
                    "frames": n.frames,
                    "period": n.cumul_hit(),
                    "samples": n.cumul_count(),
                    "percent": percent,
                    "self_period": n.hit,
                    "self_samples": n.count,
                    "children": nodes(tree, n, total),
                })
            })
            .collect(),
    )
}
