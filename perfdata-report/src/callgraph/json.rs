//! An entry's call tree as JSON: the root's nodes, each `{frames, period, samples,
//! percent, self_period, self_samples, children}`, children by period, largest first,
//! every node kept (the threshold and print limit are the text's).

use serde_json::{json, Value};

use super::tree::{CallNode, CallTree};

/// The nodes under the root of `tree`; percentages of `total` (the event's period).
pub fn tree(tree: &CallTree, total: u64) -> Value {
    nodes(tree.root(), total)
}

fn nodes(parent: CallNode, total: u64) -> Value {
    let mut kids: Vec<CallNode> = parent.children(0).collect();
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
                    "frames": n.frames().collect::<Vec<_>>(),
                    "period": n.cumul_hit(),
                    "samples": n.cumul_count(),
                    "percent": percent,
                    "self_period": n.hit(),
                    "self_samples": n.count(),
                    "children": nodes(n, total),
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::callgraph::tree::{Forest, FrameKey};

    /// Chains a-b (period 6) and a-c (period 2) under one entry, of an event of period
    /// 10: one node a of 80%, its children by period, b first.
    #[test]
    fn nodes_carry_periods_percentages_and_children_by_period() {
        let key = |value| FrameKey {
            inline: 0,
            dso: 1,
            sym: true,
            value,
        };
        let keys = vec![key(1), key(2), key(3)];
        let mut f = Forest::default();
        f.append(0, 0, [0, 2].into_iter(), 2, 1);
        f.append(0, 0, [0, 1].into_iter(), 6, 3);
        let places: Vec<_> = keys.iter().map(FrameKey::own_place).collect();
        let trees = f.trees(
            keys,
            ["a", "b", "c"].map(String::from).to_vec(),
            &places,
            &mut Vec::new(),
        );
        let v = tree(&trees[&(0, 0)], 10);
        assert_eq!(v[0]["frames"], json!(["a"]));
        assert_eq!(
            (v[0]["period"].as_u64(), v[0]["samples"].as_u64()),
            (Some(8), Some(4))
        );
        assert_eq!(v[0]["percent"], json!(80.0));
        assert_eq!(v[0]["self_period"], json!(0));
        let kids = &v[0]["children"];
        assert_eq!(kids[0]["frames"], json!(["b"]));
        assert_eq!(
            (kids[0]["period"].as_u64(), kids[0]["self_samples"].as_u64()),
            (Some(6), Some(3))
        );
        assert_eq!(kids[1]["frames"], json!(["c"]));
        assert_eq!(kids[1]["percent"], json!(20.0));
    }
}
