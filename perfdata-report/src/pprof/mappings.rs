//! pprof's mappings: per sampled DSO, its maps as the first process whose samples hit it
//! had them when the recording ended (one DSO is one mapping per map: the same library
//! mapped elsewhere by another process is not told apart, as the locations are shared),
//! so that a location's address is a real address of that process and pprof's
//! `address - memory_start + file_offset` is the file offset perf's `map_ip` gave. The
//! main binary goes first: `go tool pprof` headlines the profile with mapping 1's file
//! and takes it for the program, as its own profiles list it.

use std::collections::{HashMap, HashSet};

use super::{proto, Strings};
use crate::process::{Dso, DsoId, Machine, Map};
use crate::stacks::{Frame, Sources, Stacks};

/// The mappings of a profile, in id order (id = index + 1).
pub(super) struct Mappings {
    /// Each mapping's DSO and map; no map for the DSO's relative addresses from 0 on,
    /// where no map of the DSO holds an address.
    entries: Vec<(DsoId, Option<Map>)>,
    /// Per DSO: the indexes of its entries.
    of_dso: HashMap<DsoId, Vec<usize>>,
    /// The DSOs whose frames have source files and lines (DWARF).
    with_lines: HashSet<DsoId>,
    /// Whether inlined functions were asked for.
    inlines: bool,
}

impl Mappings {
    /// The mappings of the DSOs that `stacks`' kept samples hit, in `machine`'s maps.
    pub(super) fn new(stacks: &Stacks, machine: &Machine) -> Mappings {
        // Per DSO: the first process whose sample had it in its stack, and how many
        // samples had it; DSOs in the order first seen.
        let mut first_pid: HashMap<DsoId, (i32, u64)> = HashMap::new();
        let mut order = Vec::new();
        let mut seen = Vec::new();
        for c in stacks.counts() {
            seen.clear();
            for f in stacks.frames_of(c.stack) {
                let frame = stacks.frame(f);
                match frame.dso {
                    Some(d) if frame.inlined_in.is_none() && !seen.contains(&d) => seen.push(d),
                    _ => {}
                }
            }
            for &d in &seen {
                let e = first_pid.entry(d).or_insert_with(|| {
                    order.push(d);
                    (c.track.pid, 0)
                });
                e.1 += c.samples;
            }
        }
        // The main binary first: the most sampled DSO that pprof itself would take for
        // one (neither a library nor a `[...]` name).
        let main = order
            .iter()
            .enumerate()
            .filter(|&(_, &d)| main_like(&machine.dsos[d]))
            .max_by_key(|&(i, &d)| (first_pid[&d].1, std::cmp::Reverse(i)));
        if let Some((i, _)) = main {
            let d = order.remove(i);
            order.insert(0, d);
        }
        let mut m = Mappings {
            entries: Vec::new(),
            of_dso: HashMap::new(),
            with_lines: HashSet::new(),
            inlines: stacks.sources() == Sources::Inlines,
        };
        for d in order {
            let maps = maps_of(machine, d, first_pid[&d].0);
            let ids = (m.entries.len()..m.entries.len() + maps.len().max(1)).collect();
            if maps.is_empty() {
                m.entries.push((d, None));
            }
            m.entries.extend(maps.into_iter().map(|map| (d, Some(map))));
            m.of_dso.insert(d, ids);
        }
        // An address no map holds (a map since replaced) gets the DSO's relative one.
        let mut lost = Vec::new();
        for f in stacks.frames() {
            let Some(d) = f.dso else { continue };
            if f.file.is_some() {
                m.with_lines.insert(d);
            }
            if m.of_dso.contains_key(&d) && m.locate(&f).0 == 0 && !lost.contains(&d) {
                lost.push(d);
            }
        }
        for d in lost {
            m.of_dso.get_mut(&d).expect("listed").push(m.entries.len());
            m.entries.push((d, None));
        }
        m
    }

    /// The mappings as profile.proto has them.
    pub(super) fn protos(&self, strings: &mut Strings, dsos: &[Dso]) -> Vec<proto::Mapping> {
        self.entries
            .iter()
            .enumerate()
            .map(|(i, &(d, map))| {
                let dso = &dsos[d];
                let (memory_start, memory_limit, file_offset) =
                    map.map_or((0, u64::MAX, 0), |m| (m.start, m.end, m.pgoff));
                let lines = self.with_lines.contains(&d);
                proto::Mapping {
                    id: i as u64 + 1,
                    memory_start,
                    memory_limit,
                    file_offset,
                    filename: strings.id(&dso.long_name),
                    build_id: dso.build_id.as_deref().map_or(0, |b| strings.id(&hex(b))),
                    has_functions: true,
                    has_filenames: lines,
                    has_line_numbers: lines,
                    has_inline_frames: lines && self.inlines,
                }
            })
            .collect()
    }

    /// A frame's mapping id (0 for none) and its address in that mapping: the map
    /// holding its DSO-relative address (a file offset, or the address itself for the
    /// kernel's and anonymous maps).
    pub(super) fn locate(&self, f: &Frame<'_>) -> (u64, u64) {
        let Some(ids) = f.dso.and_then(|d| self.of_dso.get(&d)) else {
            return (0, f.addr);
        };
        let a = f.addr;
        for &i in ids {
            let at = match self.entries[i].1 {
                None => Some(a),
                Some(m) if m.identity => (m.start <= a && a < m.end).then_some(a),
                Some(m) => {
                    (a >= m.pgoff && a - m.pgoff < m.end - m.start).then(|| a - m.pgoff + m.start)
                }
            };
            if let Some(at) = at {
                return (i as u64 + 1, at);
            }
        }
        (0, a)
    }
}

/// The maps of DSO `d`: the kernel's, or those of process `pid` (its leader's), else of
/// the first thread whose process maps it; lowest address first.
fn maps_of(machine: &Machine, d: DsoId, pid: i32) -> Vec<Map> {
    let pick = |maps: &crate::process::Maps| -> Vec<Map> {
        maps.iter().filter(|m| m.dso == d).copied().collect()
    };
    if machine.dsos[d].kernel {
        return pick(machine.kernel_maps());
    }
    let threads = &machine.threads;
    let leader = threads
        .iter()
        .rposition(|t| t.pid == pid && t.tid == pid)
        .or_else(|| threads.iter().rposition(|t| t.pid == pid));
    leader
        .into_iter()
        .chain(0..threads.len())
        .map(|t| pick(machine.maps_of(t)))
        .find(|maps| !maps.is_empty())
        .unwrap_or_default()
}

/// Whether pprof would take the file for a program's (its `massageMappings`): a name,
/// not `[...]`, not a library (`.so` at the end or followed by `.N`/`_N`).
fn main_like(dso: &Dso) -> bool {
    let name = dso.long_name.trim();
    let library = name.ends_with(".so")
        || name.match_indices(".so").any(|(i, _)| {
            let rest = &name.as_bytes()[i + 3..];
            matches!(rest.first(), Some(b'.' | b'_')) && rest.get(1).is_some_and(u8::is_ascii_digit)
        });
    !dso.kernel && !name.is_empty() && !name.starts_with('[') && !name.starts_with("//") && !library
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dso(name: &str) -> Dso {
        Dso {
            name: name.into(),
            long_name: name.into(),
            short_name: name.into(),
            kernel: false,
            build_id: None,
            ksymbols: Vec::new(),
            module_start: None,
        }
    }

    #[test]
    fn programs_are_told_from_libraries_as_pprof_tells_them() {
        for name in ["/usr/bin/hot", "/tmp/x/hot-O2", "/opt/a.solver"] {
            assert!(main_like(&dso(name)), "{name}");
        }
        for name in [
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
            "/usr/lib/libfoo.so",
            "/usr/lib/libbar.so_1",
            "[vdso]",
            "[kernel.kallsyms]",
            "//anon",
            "",
        ] {
            assert!(!main_like(&dso(name)), "{name}");
        }
    }
}
