//! A process's maps (perf's `struct maps`): non-overlapping mappings keyed by start
//! address, a new one cutting what it overlaps out of older ones.

use std::collections::BTreeMap;

use super::DsoId;

/// One mapping: `[start, end)` of a process's address space backed by `dso` at `pgoff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Map {
    /// First address of the mapping.
    pub start: u64,
    /// One past its last address.
    pub end: u64,
    /// File offset the mapping starts at (MMAP's pgoff).
    pub pgoff: u64,
    /// The DSO that backs it.
    pub dso: DsoId,
    /// Anonymous, heap, stack and kernel maps: addresses are not file offsets (perf's
    /// `identity__map_ip`).
    pub identity: bool,
}

impl Map {
    /// The DSO-relative address of `ip` (perf's `map->map_ip`): a file offset for files.
    pub fn map_ip(&self, ip: u64) -> u64 {
        if self.identity {
            ip
        } else {
            ip.wrapping_sub(self.start).wrapping_add(self.pgoff)
        }
    }
}

/// A set of non-overlapping maps keyed by start address.
#[derive(Debug, Clone, Default)]
pub struct Maps {
    by_start: BTreeMap<u64, Map>,
    /// Changed with every insert or removal, unique across all sets (see
    /// [`Maps::generation`]).
    generation: u64,
}

/// The last generation given to a set of maps.
static GENERATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl Maps {
    /// A number that changes whenever the maps do, never given to two changes (of any
    /// set): what is built from a set of maps (an unwinder's address space) is rebuilt
    /// when it differs.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    fn changed(&mut self) {
        self.generation = GENERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    }

    /// The maps, lowest address first.
    pub fn iter(&self) -> impl Iterator<Item = &Map> {
        self.by_start.values()
    }

    /// Insert `new`, cutting the parts of older maps it overlaps away (perf's
    /// `maps__fixup_overlappings`): what lies before or after it survives, the part after
    /// with its pgoff moved on.
    pub fn insert(&mut self, new: Map) {
        let overlapping: Vec<u64> = self
            .by_start
            .range(..new.end)
            .rev()
            .take_while(|(_, m)| m.end > new.start)
            .map(|(&s, _)| s)
            .collect();
        for start in overlapping {
            let old = self.by_start.remove(&start).expect("key just listed");
            if old.start < new.start {
                let before = Map {
                    end: new.start,
                    ..old
                };
                self.by_start.insert(before.start, before);
            }
            if old.end > new.end {
                let after = Map {
                    start: new.end,
                    pgoff: if old.identity {
                        old.pgoff
                    } else {
                        old.pgoff.wrapping_add(new.end - old.start)
                    },
                    ..old
                };
                self.by_start.insert(after.start, after);
            }
        }
        self.by_start.insert(new.start, new);
        self.changed();
    }

    /// The map containing `ip`.
    pub fn find(&self, ip: u64) -> Option<&Map> {
        self.by_start
            .range(..=ip)
            .next_back()
            .map(|(_, m)| m)
            .filter(|m| ip < m.end)
    }

    /// Remove the map starting at `start`, if any.
    pub fn remove(&mut self, start: u64) -> Option<Map> {
        let gone = self.by_start.remove(&start);
        self.changed();
        gone
    }

    /// Number of maps.
    pub fn len(&self) -> usize {
        self.by_start.len()
    }

    /// Whether there are no maps.
    pub fn is_empty(&self) -> bool {
        self.by_start.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_change_gets_a_generation_of_its_own() {
        let map = |start| Map {
            start,
            end: start + 0x1000,
            pgoff: 0,
            dso: 0,
            identity: false,
        };
        let mut a = Maps::default();
        a.insert(map(0x1000));
        let (first, mut b) = (a.generation(), a.clone());
        assert_eq!(b.generation(), first, "a copy is the same maps");
        a.insert(map(0x3000));
        b.insert(map(0x3000));
        // The same change to two sets: two generations (an address space built from
        // one is not taken for the other's).
        assert!(a.generation() != first && b.generation() != first);
        assert_ne!(a.generation(), b.generation());
        let before = a.generation();
        a.remove(0x1000);
        assert_ne!(a.generation(), before);
    }
}
