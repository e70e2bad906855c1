//! perf report's call graphs: how they are asked for (`-g/--call-graph` in perf's syntax,
//! [`CallGraph`]), the tree of callchains under each entry built from the distinct
//! stacks the report counted ([`tree`]), and the tree drawn as `perf report --stdio`
//! draws it ([`draw`]).

use std::str::FromStr;

mod append;
pub(crate) mod appends;
pub mod draw;
pub(crate) mod frames;
pub mod json;
mod merge;
pub(crate) mod rbtree;
pub mod tree;

pub use tree::{CallNode, CallTree};

/// How the tree under an entry is printed (perf's `print_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrintType {
    /// The tree, percentages of the event's total (perf's `graph`, CHAIN_GRAPH_ABS).
    #[default]
    Graph,
    /// The tree, percentages of the parent's (perf's `fractal`, CHAIN_GRAPH_REL).
    Fractal,
    /// Every chain from its root, one block each (perf's `flat`).
    Flat,
    /// Every chain on one line, `;`-separated (perf's `folded`).
    Folded,
}

/// Which end of a chain is printed first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// From the outermost caller (perf's `caller`; its default with `--children`).
    Caller,
    /// From the sampled function (perf's `callee`; its default without `--children`).
    Callee,
}

/// What tells two frames of a chain apart (perf's `sort_key`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChainKey {
    /// The function (perf's `function`): frames in one function are one node.
    #[default]
    Function,
    /// The address (perf's `address`): each address a node, printed with its source
    /// line.
    Address,
}

/// What the tree's numbers are (perf's `value`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChainValue {
    /// Percent of the total (perf's `percent`).
    #[default]
    Percent,
    /// The period (perf's `period`).
    Period,
    /// The number of samples (perf's `count`).
    Count,
}

/// perf report's call graph parameters (`callchain_param`): perf's default is
/// `graph,0.5,caller,function,percent` with `--children` and the same but `callee`
/// without.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallGraph {
    /// How the tree is printed.
    pub print: PrintType,
    /// Nodes under this percent are not printed (perf's `threshold`, 0.5).
    pub threshold: f64,
    /// At most this many children per node (perf's `print_limit`; 0: all).
    pub print_limit: u32,
    /// The order asked for; None: perf's default for the view (caller with
    /// `--children`, callee without).
    pub order: Option<Order>,
    /// What a node is.
    pub key: ChainKey,
    /// What the numbers are.
    pub value: ChainValue,
    /// perf's `--max-stack`: at most this many frames of each callchain, counted from
    /// where the order starts (None: all).
    pub max_stack: Option<usize>,
}

impl Default for CallGraph {
    fn default() -> Self {
        CallGraph {
            print: PrintType::Graph,
            threshold: 0.5,
            print_limit: 0,
            order: None,
            key: ChainKey::Function,
            value: ChainValue::Percent,
            max_stack: None,
        }
    }
}

/// perf's `-g` with no argument: `graph,0.5,caller,function,percent`.
pub const PERF_DEFAULT: &str = "graph,0.5,caller,function,percent";

/// Whether `tok` is a prefix of `word` (perf compares with `strncmp(word, tok,
/// strlen(tok))`, so `cal` is `caller`).
fn abbreviates(tok: &str, word: &str) -> bool {
    word.starts_with(tok)
}

impl CallGraph {
    /// The order the chains are walked in, for a view with or without `--children`.
    pub fn order_for(&self, children: bool) -> Order {
        self.order.unwrap_or(if children {
            Order::Caller
        } else {
            Order::Callee
        })
    }

    /// Apply perf report's `-g` argument (`__parse_callchain_report_opt`) onto these
    /// parameters: comma-separated print type, order, sort key and value by name (or
    /// a prefix of it), then the threshold and the print limit as numbers. `none` turns
    /// the graph off (Ok(None)).
    pub fn parse_onto(mut self, arg: &str) -> Result<Option<CallGraph>, String> {
        let mut threshold_set = false;
        for tok in arg.split(',').filter(|t| !t.is_empty()) {
            if abbreviates(tok, "none") {
                return Ok(None);
            }
            let print = [
                ("graph", PrintType::Graph),
                ("flat", PrintType::Flat),
                ("fractal", PrintType::Fractal),
                ("folded", PrintType::Folded),
            ];
            if let Some(&(_, p)) = print.iter().find(|(w, _)| abbreviates(tok, w)) {
                self.print = p;
                continue;
            }
            let order = [("caller", Order::Caller), ("callee", Order::Callee)];
            if let Some(&(_, o)) = order.iter().find(|(w, _)| abbreviates(tok, w)) {
                self.order = Some(o);
                continue;
            }
            let key = [
                ("function", ChainKey::Function),
                ("address", ChainKey::Address),
            ];
            if let Some(&(_, k)) = key.iter().find(|(w, _)| abbreviates(tok, w)) {
                self.key = k;
                continue;
            }
            let value = [
                ("percent", ChainValue::Percent),
                ("period", ChainValue::Period),
                ("count", ChainValue::Count),
            ];
            if let Some(&(_, v)) = value.iter().find(|(w, _)| abbreviates(tok, w)) {
                self.value = v;
                continue;
            }
            if !threshold_set {
                self.threshold = leading_f64(tok)
                    .ok_or_else(|| format!("-g {arg}: {tok:?} is not a threshold"))?;
                threshold_set = true;
            } else {
                self.print_limit = leading_u32(tok)
                    .ok_or_else(|| format!("-g {arg}: {tok:?} is not a print limit"))?;
            }
        }
        Ok(Some(self))
    }
}

impl FromStr for CallGraph {
    type Err = String;
    /// perf's `-g` argument onto perf's defaults; `none` is an error here (see
    /// [`CallGraph::parse_onto`]).
    fn from_str(s: &str) -> Result<Self, String> {
        CallGraph::default()
            .parse_onto(s)?
            .ok_or_else(|| "-g none: no call graph".to_string())
    }
}

/// C's `strtod`: the longest leading number (None if there is none).
fn leading_f64(s: &str) -> Option<f64> {
    (1..=s.len())
        .rev()
        .filter(|&n| s.is_char_boundary(n))
        .find_map(|n| s[..n].parse::<f64>().ok())
        .filter(|v| v.is_finite())
}

/// C's `strtoul(s, _, 0)`: the leading number (decimal, or hex after `0x`).
fn leading_u32(s: &str) -> Option<u32> {
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (s, 10),
    };
    let end = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    u32::from_str_radix(&digits[..end], radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfs_syntax_in_any_order_and_by_prefix() {
        let g: CallGraph = "fractal,2,callee,address,count".parse().unwrap();
        assert_eq!(g.print, PrintType::Fractal);
        assert_eq!(g.threshold, 2.0);
        assert_eq!(g.order, Some(Order::Callee));
        assert_eq!(g.key, ChainKey::Address);
        assert_eq!(g.value, ChainValue::Count);
        let g: CallGraph = "fol,cal,0.25,7".parse().unwrap();
        assert_eq!(g.print, PrintType::Folded);
        assert_eq!(g.order, Some(Order::Caller));
        assert_eq!((g.threshold, g.print_limit), (0.25, 7));
        // "f" is flat, the first print type it abbreviates, as in perf.
        assert_eq!("f".parse::<CallGraph>().unwrap().print, PrintType::Flat);
        assert_eq!(CallGraph::default().parse_onto("none"), Ok(None));
        assert!("graph,x".parse::<CallGraph>().is_err());
        let d: CallGraph = PERF_DEFAULT.parse().unwrap();
        assert_eq!(d.order_for(false), Order::Caller);
        assert_eq!(CallGraph::default().order_for(false), Order::Callee);
        assert_eq!(CallGraph::default().order_for(true), Order::Caller);
    }
}
