//! Compressed records copied as they are (not expanded and re-encoded) are still
//! decompressed, to check them: a damaged zstd payload, or one whose records do not
//! frame, would make the output as unreadable as the input while the conversion said
//! it succeeded. What was decompressed is dropped; the original bytes are written.
//!
//! A damaged one fails the conversion, as it does where records are expanded (from
//! stdin, `--decompress`): perf ("Couldn't decompress data") and perfdata's reader
//! reject a file that holds one, and a writer never emits what they reject. (Until
//! issue #24 `--keep-damaged` copied it with a warning, from a file only.)

use perfdata_core::raw::{Decompressor, RawRecord, RecordSource};
use perfdata_core::Endian;

use crate::error::{Result, WriteError};

/// The check of one stream's passed-through compressed records.
pub(super) struct Verifier {
    decomp: Option<Decompressor>,
    endian: Endian,
}

impl Verifier {
    pub(super) fn new(endian: Endian) -> Self {
        Verifier {
            decomp: None,
            endian,
        }
    }

    /// Check a compressed record about to be copied: an error when it is damaged.
    pub(super) fn check(&mut self, raw: &RawRecord<'_>) -> Result<()> {
        self.feed(raw).map_err(WriteError::Read)
    }

    fn feed(&mut self, raw: &RawRecord<'_>) -> perfdata_core::Result<()> {
        if self.decomp.is_none() {
            self.decomp = Some(Decompressor::new(self.endian, 0)?);
        }
        let d = self.decomp.as_mut().expect("just made");
        d.feed(raw.bytes, raw.offset)?;
        while d.advance()?.is_some() {}
        Ok(())
    }

    /// At the end of the input: the decompressed stream must end with a whole record.
    pub(super) fn finish(&mut self) -> Result<()> {
        match self.decomp.as_ref() {
            Some(d) if d.pending() > 0 || d.payload_left() > 0 => {
                Err(WriteError::Read(d.cut_record_error(None)))
            }
            _ => Ok(()),
        }
    }
}
