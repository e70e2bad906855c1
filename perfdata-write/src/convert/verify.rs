//! Compressed records copied as they are (not expanded and re-encoded) are still
//! decompressed, to check them: a damaged zstd payload, or one whose records do not
//! frame, would make the output as unreadable as the input while the conversion said
//! it succeeded. What was decompressed is dropped; the original bytes are written.

use perfdata_core::raw::{Decompressor, RawRecord, RecordSource};
use perfdata_core::Endian;

use crate::error::{Result, WriteError};

/// The check of one stream's passed-through compressed records.
pub(super) struct Verifier {
    decomp: Option<Decompressor>,
    endian: Endian,
    /// Copy damaged records with a warning instead of failing.
    keep_damaged: bool,
    /// A damaged record was copied: the zstd stream after it cannot be checked.
    gave_up: bool,
}

impl Verifier {
    pub(super) fn new(endian: Endian, keep_damaged: bool) -> Self {
        Verifier {
            decomp: None,
            endian,
            keep_damaged,
            gave_up: false,
        }
    }

    /// Check a compressed record about to be copied. `Ok(Some(warning))` when it is
    /// damaged and damaged records are kept.
    pub(super) fn check(&mut self, raw: &RawRecord<'_>) -> Result<Option<String>> {
        if self.gave_up {
            return Ok(None);
        }
        let checked = self.feed(raw);
        self.judge(checked)
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
    pub(super) fn finish(&mut self) -> Result<Option<String>> {
        let Some(d) = self.decomp.as_ref().filter(|_| !self.gave_up) else {
            return Ok(None);
        };
        if d.pending() == 0 && d.payload_left() == 0 {
            return Ok(None);
        }
        self.judge(Err(d.cut_record_error(None)))
    }

    fn judge(&mut self, checked: perfdata_core::Result<()>) -> Result<Option<String>> {
        match checked {
            Ok(()) => Ok(None),
            Err(e) if self.keep_damaged => {
                self.gave_up = true;
                Ok(Some(format!(
                    "{e}; the damaged compressed records are copied as they are \
                     (--keep-damaged), and those after it are not checked"
                )))
            }
            Err(e) => Err(WriteError::Read(e)),
        }
    }
}
