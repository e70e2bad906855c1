//! /proc/kallsyms read into a symbol table ([`kallsyms_in_background`]), the reading of
//! the text and its parsing overlapped.

use std::path::Path;

use crate::model::PROC_KALLSYMS;
use crate::symtab::{KallsymsLines, SymbolTable};

/// /proc/kallsyms read into a symbol table on another thread, to be handed to
/// [`super::Symbolizer::with_kallsyms`]: reading it is about a fifth of a large report's time,
/// and it can go on while the recording is read.
pub fn kallsyms_in_background() -> std::thread::JoinHandle<Option<SymbolTable>> {
    std::thread::spawn(|| read_kallsyms(Path::new(PROC_KALLSYMS)))
}

/// Bytes of /proc/kallsyms read at a time by [`read_kallsyms`]: 22 blocks of its 5 MB
/// (at 64 KiB, waking the parsing thread for each of 83 blocks cost as much as the
/// overlap saved).
const KALLSYMS_BLOCK: usize = 1 << 18;

/// The table of the kallsyms file at `path` ([`SymbolTable::from_kallsyms`] of its
/// text; None if it cannot be read or is not UTF-8), read on another thread a block of
/// whole lines at a time and parsed here as the blocks come: most of the time goes to
/// the kernel making the text of /proc/kallsyms, and the parsing (a fifth) now overlaps
/// it rather than following. The blocks are reused (a 5 MB text read whole was
/// faulted in page by page as it grew).
fn read_kallsyms(path: &Path) -> Option<SymbolTable> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(4);
    let (back, spare) = std::sync::mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || -> std::io::Result<()> {
        // The start of a line the block before ended in.
        let mut carry = Vec::new();
        loop {
            let mut block = spare
                .try_recv()
                .unwrap_or_else(|_| Vec::with_capacity(KALLSYMS_BLOCK * 2));
            block.clear();
            block.append(&mut carry);
            let n = file
                .by_ref()
                .take(KALLSYMS_BLOCK as u64)
                .read_to_end(&mut block)?;
            if n == 0 {
                // The end: what is left is a last line without its newline.
                if !block.is_empty() {
                    let _ = tx.send(block);
                }
                return Ok(());
            }
            match memchr::memrchr(b'\n', &block) {
                Some(end) => carry.extend_from_slice(&block[end + 1..]),
                None => {
                    carry = block;
                    continue;
                }
            }
            block.truncate(block.len() - carry.len());
            if tx.send(block).is_err() {
                return Ok(());
            }
        }
    });
    let mut lines = KallsymsLines::default();
    let mut utf8 = true;
    for block in rx {
        match std::str::from_utf8(&block) {
            Ok(text) if utf8 => lines.add(text),
            _ => utf8 = false,
        }
        let _ = back.send(block);
    }
    let read = reader.join().ok()?;
    (read.is_ok() && utf8).then(|| lines.table()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kallsyms_read_in_blocks_is_the_whole_texts_table() {
        // Lines of many lengths, so that blocks end inside lines, a module's symbols,
        // and a last line without its newline.
        let mut text = String::new();
        for i in 0..20_000u64 {
            let name = "f".repeat(1 + (i as usize * 7) % 90);
            let module = if i % 5000 == 4999 { "\t[m]" } else { "" };
            let t = ['T', 't', 'W', 'r', 'b'][i as usize % 5];
            text.push_str(&format!(
                "{:016x} {t} {name}{i}{module}\n",
                0xffff_ffff_8100_0000 + i * 16
            ));
        }
        text.push_str("ffffffff81100000 T last");
        assert!(text.len() > 4 * KALLSYMS_BLOCK);
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &text).unwrap();
        let blocks = read_kallsyms(file.path()).unwrap();
        let whole = SymbolTable::from_kallsyms(&text).unwrap();
        assert_eq!(blocks.len(), whole.len());
        for i in 0..=0x10000u64 {
            let at = 0xffff_ffff_8100_0000 + i * 16 + i % 16;
            let (a, b) = (blocks.find(at), whole.find(at));
            assert_eq!(
                a.map(|s| (s.start, s.end, s.name())),
                b.map(|s| (s.start, s.end, s.name())),
                "{at:x}"
            );
        }
        assert_eq!(blocks.find(0xffff_ffff_8110_0000).unwrap().name(), "last");
        assert_eq!(
            blocks
                .find(0xffff_ffff_8100_0000 + 4999 * 16)
                .unwrap()
                .name(),
            format!("{}4999\t[m]", "f".repeat(1 + (4999 * 7) % 90))
        );
        // Not UTF-8: no table, as reading the text whole gives none.
        std::fs::write(file.path(), b"ffffffff81000000 T a\xff\n").unwrap();
        assert!(read_kallsyms(file.path()).is_none());
        assert!(read_kallsyms(Path::new("/nonexistent/kallsyms")).is_none());
    }
}
