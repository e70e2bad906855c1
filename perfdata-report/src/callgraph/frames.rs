//! The callchain frames named as perf's `callchain_list__sym_name` names them, and keyed
//! as its `match_chain` tells them apart, one DSO at a time (while the report's keys of
//! that DSO are named, so that its symbols are loaded once).

use rustc_hash::FxHashMap;

use super::tree::{FrameKey, FramePlace, INLINED_DSO};
use super::ChainKey;
use crate::intern::Chunked;
use crate::model::Replay;
use crate::symbolize::{SymbolName, Symbolizer};

/// Where a callchain frame is, for its call graph node: the DSO (+1, 0 for none), the
/// DSO-relative address its symbol is looked up by, and the ip as sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ChainLoc {
    pub(crate) dso: u32,
    pub(crate) addr: u64,
    pub(crate) ip: u64,
    /// The entry's number among those perf lists at an unwound frame (innermost 1; 0:
    /// the frame as it is), see [`crate::inlines`].
    pub(crate) inline: u16,
}

/// Frame keys and names for every location of the report's callchains.
#[derive(Debug)]
pub(crate) struct FrameNamer {
    key: ChainKey,
    /// DSO + 1 (0: none) -> the locations in it.
    by_dso: FxHashMap<u32, Vec<u32>>,
    locs: Chunked<ChainLoc>,
    /// Per location, its frame key's number.
    pub(crate) frame_of: Vec<u32>,
    /// The frame keys, numbered as first met.
    pub(crate) keys: Vec<FrameKey>,
    /// Each frame key's name: that of its first location, as perf's node keeps the
    /// first chain's entry.
    pub(crate) names: Vec<String>,
    /// Each frame key's place, for perf's comparison with a frame that has no symbol:
    /// that of its first location.
    pub(crate) places: Vec<FramePlace>,
    index: FxHashMap<FrameKey, u32>,
    /// The names of inlined functions met, numbered (their frame keys' values).
    inlined: FxHashMap<String, u64>,
}

impl FrameNamer {
    /// A namer of `locs` for the sort key `key`.
    pub(crate) fn new(locs: Chunked<ChainLoc>, key: ChainKey) -> FrameNamer {
        let mut by_dso: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        for (i, l) in locs.iter().enumerate() {
            by_dso.entry(l.dso).or_default().push(i as u32);
        }
        FrameNamer {
            key,
            by_dso,
            frame_of: vec![0; locs.len()],
            locs,
            keys: Vec::new(),
            names: Vec::new(),
            places: Vec::new(),
            index: FxHashMap::default(),
            inlined: FxHashMap::default(),
        }
    }

    /// The DSOs (+1, 0 for none) the locations are in.
    pub(crate) fn dsos(&self) -> impl Iterator<Item = u32> + '_ {
        self.by_dso.keys().copied()
    }

    /// Name the locations of DSO `dso` (+1, 0 for none).
    pub(crate) fn name_dso(&mut self, dso: u32, replay: &Replay, symbols: &mut Symbolizer) {
        let Some(locs) = self.by_dso.remove(&dso) else {
            return;
        };
        for i in locs {
            let l = *self.locs.get(i as usize);
            let found = dso
                .checked_sub(1)
                .map(|d| d as usize)
                .and_then(|d| Some((d, replay.machine.dsos.get(d)?)));
            let name = match found {
                Some((d, info)) if l.inline > 0 => {
                    crate::inlines::entry_name(symbols, d, info, l.addr, l.inline)
                }
                Some((d, info)) => symbols.name(d, info, l.addr),
                None => SymbolName::Address(l.addr),
            };
            // perf's match_chain tells inlined functions apart by name alone.
            let inlined = match &name {
                SymbolName::Function { name, .. } if l.inline > 0 => name
                    .strip_suffix(crate::inlines::INLINED)
                    .map(str::to_string),
                _ => None,
            };
            let (key, shown) = match name {
                SymbolName::Function { name, .. } if inlined.is_some() => match self.key {
                    ChainKey::Function => {
                        let next = self.inlined.len() as u64;
                        let id = *self
                            .inlined
                            .entry(inlined.unwrap_or_default())
                            .or_insert(next);
                        (
                            FrameKey {
                                inline: 0,
                                dso: INLINED_DSO,
                                sym: true,
                                value: id,
                            },
                            name,
                        )
                    }
                    ChainKey::Address => {
                        let line = crate::inlines::entry_srcline(symbols, found, l.addr, l.inline);
                        let bare = name.strip_suffix(crate::inlines::INLINED).unwrap_or(&name);
                        (
                            FrameKey {
                                inline: l.inline,
                                dso,
                                sym: false,
                                value: l.ip,
                            },
                            format!("{bare} {line}{}", crate::inlines::INLINED),
                        )
                    }
                },
                SymbolName::Function { start, name } => match self.key {
                    ChainKey::Function => (
                        FrameKey {
                            inline: 0,
                            dso,
                            sym: true,
                            value: start,
                        },
                        name,
                    ),
                    ChainKey::Address => {
                        // The outermost of an unwound frame's entries is the frame's own
                        // function, at the line of the call its inlined ones were made
                        // from: its entry's srcline, not the innermost line.
                        let line = match l.inline {
                            0 => symbols.graph_srcline(found, l.addr),
                            j => crate::inlines::entry_srcline(symbols, found, l.addr, j),
                        };
                        (
                            FrameKey {
                                inline: l.inline,
                                dso,
                                sym: false,
                                value: l.ip,
                            },
                            format!("{name} {line}"),
                        )
                    }
                },
                // perf's "%#" PRIx64 of the ip as sampled ("0" for 0).
                SymbolName::Address(_) => (
                    FrameKey {
                        inline: 0,
                        dso,
                        sym: false,
                        value: l.ip,
                    },
                    if l.ip == 0 {
                        "0".to_string()
                    } else {
                        format!("{:#x}", l.ip)
                    },
                ),
            };
            let next = self.keys.len() as u32;
            let id = *self.index.entry(key).or_insert(next);
            if id == next {
                self.keys.push(key);
                self.names.push(shown);
                self.places.push(match key.dso {
                    INLINED_DSO => (dso, l.ip),
                    _ => key.own_place(),
                });
            }
            self.frame_of[i as usize] = id;
        }
    }
}
