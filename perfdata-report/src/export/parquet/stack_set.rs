//! The stacks of an export, each written once, in flat memory: every recording's
//! distinct stacks are spooled to disk with their frames as they come, and at the end
//! sorted by id (an external merge sort) and walked beside the sorted ids already in the
//! directory, so that a stack is written only the first time its id comes and only if
//! no earlier export wrote it. Memory holds a sort run and the read buffers, whatever
//! the number of stacks (synthetic recordings, whose stacks are random, have nearly one
//! per sample).

use std::io;

use crate::spool::{Records, Spool};

/// An id as a sort key: ids are compared as unsigned.
fn key(record: &[u8]) -> (u64, u64) {
    let id = u64::from_le_bytes(record[..8].try_into().expect("an 8-byte id"));
    (id, 0)
}

/// A frame as it is spooled: symbol, DSO, address.
pub type FrameText<'a> = (&'a str, &'a str, u64);

/// The export's stacks, spooled.
pub struct StackSet {
    spool: Spool,
    record: Vec<u8>,
}

impl StackSet {
    /// An empty set.
    pub fn new() -> io::Result<StackSet> {
        Ok(StackSet {
            spool: Spool::new()?,
            record: Vec::new(),
        })
    }

    /// Add a stack (its id, its frames leaf first); one already added is dropped at
    /// the end.
    pub fn push<'a>(
        &mut self,
        id: i64,
        frames: impl Iterator<Item = FrameText<'a>>,
    ) -> io::Result<()> {
        let r = &mut self.record;
        r.clear();
        r.extend_from_slice(&id.to_le_bytes());
        for (symbol, dso, addr) in frames {
            for text in [symbol, dso] {
                let n = u32::try_from(text.len()).map_err(|_| io::Error::other("a 4 GiB name"))?;
                r.extend_from_slice(&n.to_le_bytes());
                r.extend_from_slice(text.as_bytes());
            }
            r.extend_from_slice(&addr.to_le_bytes());
        }
        self.spool.push(r)
    }

    /// Call `each` with every stack added whose id is not in `existing`, once per id, in
    /// the order of the ids as unsigned numbers.
    pub fn finish(
        self,
        existing: Records,
        mut each: impl FnMut(i64, &mut dyn Iterator<Item = FrameText<'_>>) -> io::Result<()>,
    ) -> io::Result<()> {
        let stacks = self.spool.finish()?.sorted(key)?;
        let existing = existing.sorted(key)?;
        let mut old = existing.read_all();
        let mut next_old = old.next_record()?.map(key);
        let mut last: Option<u64> = None;
        let mut reader = stacks.read_all();
        while let Some(r) = reader.next_record()? {
            let (id, _) = key(r);
            if last == Some(id) {
                continue;
            }
            last = Some(id);
            while next_old.is_some_and(|(o, _)| o < id) {
                next_old = old.next_record()?.map(key);
            }
            if next_old.is_some_and(|(o, _)| o == id) {
                continue;
            }
            let mut frames = Frames { rest: &r[8..] };
            each(id as i64, &mut frames)?;
            if !frames.rest.is_empty() {
                return Err(io::Error::other("a spooled stack's frames are cut"));
            }
        }
        Ok(())
    }
}

/// Ids as [`StackSet::finish`] takes them: 8 bytes each, any order.
pub struct IdSpool(Spool);

impl IdSpool {
    /// No ids.
    pub fn new() -> io::Result<IdSpool> {
        Ok(IdSpool(Spool::new()?))
    }

    /// Add one.
    pub fn push(&mut self, id: i64) -> io::Result<()> {
        self.0.push(&id.to_le_bytes())
    }

    /// The ids added.
    pub fn finish(self) -> io::Result<Records> {
        self.0.finish()
    }
}

/// The frames of a spooled stack, read in turn (None once a frame is cut short).
struct Frames<'a> {
    rest: &'a [u8],
}

impl<'a> Frames<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let rest = self.rest;
        if rest.len() < n {
            return None;
        }
        let (head, tail) = rest.split_at(n);
        self.rest = tail;
        Some(head)
    }

    fn text(&mut self) -> Option<&'a str> {
        let n = u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize;
        std::str::from_utf8(self.take(n)?).ok()
    }
}

impl<'a> Iterator for Frames<'a> {
    type Item = FrameText<'a>;

    fn next(&mut self) -> Option<FrameText<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        let symbol = self.text()?;
        let dso = self.text()?;
        let addr = u64::from_le_bytes(self.take(8)?.try_into().ok()?);
        Some((symbol, dso, addr))
    }
}

#[cfg(test)]
mod tests {
    use super::{IdSpool, StackSet};

    #[test]
    fn each_stack_once_and_none_already_there() {
        let mut set = StackSet::new().unwrap();
        let frames = |s: &'static str| vec![(s, "a.so", 1u64), ("main", "a", 2)].into_iter();
        set.push(5, frames("f")).unwrap();
        set.push(-1, frames("g")).unwrap();
        set.push(5, frames("f")).unwrap();
        set.push(7, frames("h")).unwrap();
        let mut old = IdSpool::new().unwrap();
        old.push(7).unwrap();
        let mut seen = Vec::new();
        set.finish(old.finish().unwrap(), |id, f| {
            seen.push((id, f.map(|x| x.0.to_string()).collect::<Vec<_>>()));
            Ok(())
        })
        .unwrap();
        let main = |s: &str| vec![s.to_string(), "main".to_string()];
        // Unsigned order: -1 is the largest.
        assert_eq!(seen, vec![(5, main("f")), (-1, main("g"))]);
    }
}
