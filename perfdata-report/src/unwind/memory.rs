//! A sample's memory as perf 6.1's unwinding reads it (`access_mem` in
//! util/unwind-libunwind-local.c): the stack copy, and what perf makes of a word beyond it.
//!
//! perf takes a word as in the copy only if it ends before the copy's last byte
//! (`addr + sizeof(unw_word_t) >= end` is outside), so the copy's last word is never read
//! from it. A word outside is looked for in the thread's maps (`access_dso_mem`): in no
//! map, the read fails and libunwind's step with it; in a map, perf reads the word from
//! the map's file, and where that fails (the `[stack]`, an anonymous map, a file too
//! short) `access_dso_mem` returns 1, which libunwind, checking for a negative error,
//! takes for success: the word is 0. So a walk that needs a return address beyond a
//! short copy reads 0 there, and perf's stack ends with a frame of address 0 less one,
//! printed `ffffffffffffffff [unknown] ([unknown])`.
//!
//! One departure, kept on purpose: below the stack pointer, in the map that holds it, a
//! read fails here (perf reads 0), so that a register popped in the sampled frame is
//! taken as sampled ([`super::row`]; framehop does the same for the frame pointer).

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

use crate::process::{Dso, DsoId, Maps};
use crate::symbolize::{self, SymbolOptions};

/// The files of the DSOs whose words a walk read beyond a stack copy, mapped once each
/// (None: not found).
pub(super) type Files = HashMap<DsoId, Option<Arc<memmap2::Mmap>>>;

/// One sample's memory, as perf reads it.
pub(super) struct Memory<'a> {
    /// The stack pointer: where the copy starts.
    pub sp: u64,
    /// The copy.
    pub stack: &'a [u8],
    /// The thread's maps at the sample.
    pub maps: &'a Maps,
    /// The machine's DSOs (by the maps' ids).
    pub dsos: &'a [Dso],
    /// Where binaries are looked for.
    pub opts: &'a SymbolOptions,
    /// The words read at or past the copy's last (the copy too short).
    past_end: Cell<u32>,
}

impl<'a> Memory<'a> {
    /// The memory of a sample of stack pointer `sp` and stack copy `stack`.
    pub(super) fn new(
        sp: u64,
        stack: &'a [u8],
        maps: &'a Maps,
        dsos: &'a [Dso],
        opts: &'a SymbolOptions,
    ) -> Memory<'a> {
        Memory {
            sp,
            stack,
            maps,
            dsos,
            opts,
            past_end: Cell::new(0),
        }
    }

    /// How many words at or past the copy's last were read (as perf, from outside the
    /// copy).
    pub(super) fn reads_past_end(&self) -> u32 {
        self.past_end.get()
    }

    /// The word at `addr`, as perf's `access_mem` gives it (`files` keeps the files read).
    pub(super) fn read(&self, addr: u64, files: &mut Files) -> Result<u64, ()> {
        let end = self.sp.saturating_add(self.stack.len() as u64);
        let Some(last) = addr.checked_add(8) else {
            return Err(());
        };
        if addr >= self.sp && last < end {
            let at = (addr - self.sp) as usize;
            let word = self.stack.get(at..at + 8).ok_or(())?;
            return Ok(u64::from_le_bytes(word.try_into().map_err(|_| ())?));
        }
        let map = self.maps.find(addr).ok_or(())?;
        if addr < self.sp
            && self
                .maps
                .find(self.sp)
                .is_some_and(|m| m.start == map.start)
        {
            return Err(());
        }
        if addr >= self.sp {
            self.past_end.set(self.past_end.get().saturating_add(1));
        }
        if map.identity {
            return Ok(0);
        }
        let file = files.entry(map.dso).or_insert_with(|| {
            let dso = self.dsos.get(map.dso)?;
            let path = symbolize::on_disk(dso, self.opts)?;
            let file = std::fs::File::open(path).ok()?;
            // SAFETY: the binary is only read; one changed under us gives wrong words,
            // as it would give perf.
            unsafe { memmap2::Mmap::map(&file) }.ok().map(Arc::new)
        });
        let offset = usize::try_from(map.map_ip(addr)).map_err(|_| ())?;
        let word = file
            .as_ref()
            .and_then(|f| f.get(offset..offset.checked_add(8)?))
            .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
        Ok(word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::Map;

    fn maps(list: &[(u64, u64, bool)]) -> Maps {
        let mut m = Maps::default();
        for &(start, end, identity) in list {
            m.insert(Map {
                start,
                end,
                pgoff: 0,
                dso: 0,
                identity,
            });
        }
        m
    }

    #[test]
    fn the_copy_s_last_word_and_beyond_read_as_perf_reads_them() {
        let stack: Vec<u8> = (1u64..=4).flat_map(|w| w.to_le_bytes()).collect();
        let m = maps(&[(0x1000, 0x3000, true)]);
        let opts = SymbolOptions::default();
        let mem = Memory::new(0x2000, &stack, &m, &[], &opts);
        let mut files = Files::new();
        assert_eq!(mem.read(0x2000, &mut files), Ok(1));
        assert_eq!(mem.read(0x2010, &mut files), Ok(3));
        assert_eq!(mem.reads_past_end(), 0);
        // The last word is outside for perf: in the stack's map, 0.
        assert_eq!(mem.read(0x2018, &mut files), Ok(0));
        assert_eq!(mem.reads_past_end(), 1);
        assert_eq!(mem.read(0x2800, &mut files), Ok(0));
        // In no map: the read fails.
        assert_eq!(mem.read(0x3000, &mut files), Err(()));
        // Below the stack pointer in the stack's own map: fails (perfdata's rule).
        assert_eq!(mem.read(0x1ff8, &mut files), Err(()));
    }
}
