//! The text perf script prints after a frame's address (` sym+0xoff (dso)`), kept per
//! (DSO, address, fields) in a table of fixed size: a listing names the same few
//! thousand addresses over and over, and finding the symbol (a table per DSO, a binary
//! search) and writing its name and offset were 12% of the cycles. A slot holds the last
//! address that fell in it, so memory is bounded whatever the recording.

use crate::process::DsoId;

/// Slots in the table (a power of two).
const SLOTS: usize = 1 << 14;

/// One remembered frame text.
#[derive(Default)]
struct Slot {
    key: Option<(DsoId, u64, u32)>,
    text: Vec<u8>,
}

/// Frame texts by (DSO, DSO-relative address, field bits).
pub(super) struct FrameNames {
    slots: Vec<Slot>,
}

impl FrameNames {
    pub(super) fn new() -> Self {
        FrameNames {
            slots: std::iter::repeat_with(Slot::default).take(SLOTS).collect(),
        }
    }

    fn index(dso: DsoId, addr: u64, fields: u32) -> usize {
        let h = (addr ^ ((dso as u64) << 40) ^ (u64::from(fields) << 20))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> (64 - SLOTS.trailing_zeros())) as usize
    }

    /// The text remembered for the key, if its slot holds it.
    pub(super) fn get(&self, dso: DsoId, addr: u64, fields: u32) -> Option<&[u8]> {
        let slot = &self.slots[Self::index(dso, addr, fields)];
        (slot.key == Some((dso, addr, fields))).then_some(slot.text.as_slice())
    }

    /// Remember `text` for the key, in place of what its slot held.
    pub(super) fn put(&mut self, dso: DsoId, addr: u64, fields: u32, text: &[u8]) {
        let slot = &mut self.slots[Self::index(dso, addr, fields)];
        slot.key = Some((dso, addr, fields));
        slot.text.clear();
        slot.text.extend_from_slice(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_gives_back_only_its_own_key() {
        let mut names = FrameNames::new();
        assert_eq!(names.get(1, 0x1000, 3), None);
        names.put(1, 0x1000, 3, b" main+0x10 (/bin/x)");
        assert_eq!(names.get(1, 0x1000, 3), Some(&b" main+0x10 (/bin/x)"[..]));
        assert_eq!(names.get(2, 0x1000, 3), None);
        assert_eq!(names.get(1, 0x1001, 3), None);
        assert_eq!(names.get(1, 0x1000, 1), None);
        // Many keys: each slot keeps the last of those that fell in it, and no key is
        // answered with another's text.
        for a in 0..(4 * SLOTS as u64) {
            names.put(7, a, 3, &a.to_le_bytes());
        }
        let mut held = 0;
        for a in 0..(4 * SLOTS as u64) {
            if let Some(t) = names.get(7, a, 3) {
                assert_eq!(t, a.to_le_bytes());
                held += 1;
            }
        }
        assert!(held > SLOTS / 2 && held <= SLOTS, "{held}");
    }
}
