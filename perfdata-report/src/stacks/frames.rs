//! The frames of every location, named once the recording is read.

use std::hash::BuildHasher;

use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::FxHashMap;

use crate::intern::Chunked;
use crate::model::Replay;
use crate::process::DsoId;
use crate::srcline::SourceFrame;
use crate::symbolize::Symbolizer;

use super::Sources;

/// A location as the replay resolved it, packed: DSO + 1 (0 for none) with the kernel
/// mode in the top bit, and the DSO-relative address in two halves.
pub(super) type LocKey = [u32; 3];

pub(super) const KERNEL: u32 = 1 << 31;
/// No DSO, function, frame (the `u32` fields of [`FrameData`]).
pub(super) const NONE: u32 = u32::MAX;

pub(super) fn pack(dso: Option<DsoId>, addr: u64, kernel: bool) -> LocKey {
    let d = dso.map_or(0, |d| u32::try_from(d + 1).expect("fewer than 2^31 DSOs"));
    [
        d | if kernel { KERNEL } else { 0 },
        addr as u32,
        (addr >> 32) as u32,
    ]
}

pub(super) fn unpack(k: LocKey) -> (Option<DsoId>, u64, bool) {
    let d = k[0] & !KERNEL;
    let dso = (d != 0).then(|| d as usize - 1);
    (
        dso,
        u64::from(k[1]) | u64::from(k[2]) << 32,
        k[0] & KERNEL != 0,
    )
}

/// A frame as kept: its name in the table of names, DSO + 1 with the kernel mode in the
/// top bit ([`pack`]'s), the frame it is inlined in, its source file (in the table of
/// names), line and the line its function starts at, and the address.
#[derive(Debug, Clone, Copy)]
pub(super) struct FrameData {
    pub(super) addr: u64,
    pub(super) name: u32,
    pub(super) dso: u32,
    pub(super) inlined_in: u32,
    pub(super) line: u32,
    pub(super) file: u32,
    pub(super) start_line: u32,
}

/// What DWARF says of a frame: its function's name (NONE for the address's own, named
/// by the symbol table), source file (NONE if unknown), line and start line.
type Dwarf = (u32, u32, u32, u32);

/// The frames of every location, named.
#[derive(Debug, Default)]
pub(super) struct FrameTable {
    pub(super) frames: Vec<FrameData>,
    /// Distinct function names and source files.
    pub(super) names: Vec<String>,
    /// Per location, its first frame; its frames run to the next location's first.
    pub(super) first: Vec<u32>,
}

impl FrameTable {
    /// Name each location. Frames are numbered in the order the locations were first
    /// seen, but the locations are named one DSO after the other, each DSO's symbols
    /// and DWARF let go of once its locations are named.
    pub(super) fn name(
        locs: Chunked<LocKey>,
        replay: &Replay,
        symbols: &mut Symbolizer,
        sources: Sources,
    ) -> FrameTable {
        let keys: Vec<LocKey> = locs.into_iter().collect();
        let mut t = FrameTable {
            frames: Vec::with_capacity(keys.len()),
            names: Vec::new(),
            first: Vec::with_capacity(keys.len() + 1),
        };
        // Per location: its function's name, and what DWARF says of it, if asked: with
        // inlines, the functions inlined there (innermost first, the last the function
        // itself), else the function itself alone.
        let mut named: Vec<u32> = vec![NONE; keys.len()];
        let mut dwarf_of: FxHashMap<u32, Vec<Dwarf>> = FxHashMap::default();
        let mut by_dso: Vec<u32> = (0..keys.len() as u32).collect();
        by_dso.sort_by_key(|&i| keys[i as usize][0] & !KERNEL);
        let mut names = Names::default();
        for group in
            by_dso.chunk_by(|&a, &b| keys[a as usize][0] & !KERNEL == keys[b as usize][0] & !KERNEL)
        {
            let (Some(id), _, _) = unpack(keys[group[0] as usize]) else {
                continue;
            };
            let dso = &replay.machine.dsos[id];
            for &i in group {
                let (_, addr, _) = unpack(keys[i as usize]);
                let Some((_, name)) = symbols.function(id, dso, addr) else {
                    continue;
                };
                named[i as usize] = names.id(name);
                if sources == Sources::Off {
                    continue;
                }
                let frames = symbols.source_frames(id, dso, addr);
                let mut dwarf = |f: &SourceFrame, inlined: bool| -> Dwarf {
                    let name = match (inlined, f.function.as_deref()) {
                        (false, _) => NONE,
                        (true, name) => names.id(name.unwrap_or("[unknown]")),
                    };
                    let file = f.file.as_deref().map_or(NONE, |p| names.id(p));
                    (name, file, f.line, f.start_line)
                };
                if sources == Sources::Inlines && frames.len() > 1 {
                    let inner = frames.iter().map(|f| dwarf(f, true)).collect();
                    dwarf_of.insert(i, inner);
                } else if let Some(f) = frames.last() {
                    dwarf_of.insert(i, vec![dwarf(f, false)]);
                }
            }
            symbols.forget(id);
        }
        drop(by_dso);
        for (i, key) in keys.iter().enumerate() {
            let (_, addr, _) = unpack(*key);
            let base = t.frames.len() as u32;
            t.first.push(base);
            let dwarf = dwarf_of.remove(&(i as u32)).unwrap_or_default();
            let (_, file, line, start_line) = dwarf.last().copied().unwrap_or((NONE, NONE, 0, 0));
            t.frames.push(FrameData {
                addr,
                name: named[i],
                dso: key[0],
                inlined_in: NONE,
                line,
                file,
                start_line,
            });
            for &(name, file, line, start_line) in dwarf.iter().rev().skip(1) {
                t.frames.push(FrameData {
                    addr,
                    name,
                    dso: key[0],
                    inlined_in: base,
                    line,
                    file,
                    start_line,
                });
            }
        }
        t.first.push(t.frames.len() as u32);
        t.frames.shrink_to_fit();
        t.names = names.into_names();
        t
    }
}

/// Distinct function names, numbered as first seen.
#[derive(Default)]
struct Names {
    names: Vec<String>,
    index: HashTable<u32>,
}

impl Names {
    fn id(&mut self, name: &str) -> u32 {
        let hash = |s: &str| rustc_hash::FxBuildHasher.hash_one(s);
        let names = &self.names;
        let entry = self.index.entry(
            hash(name),
            |&i| names[i as usize] == name,
            |&i| hash(&names[i as usize]),
        );
        match entry {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(v) => {
                let id = self.names.len() as u32;
                v.insert(id);
                self.names.push(name.to_string());
                id
            }
        }
    }

    fn into_names(mut self) -> Vec<String> {
        self.names.shrink_to_fit();
        self.names
    }
}
