//! [`PerfReader::for_each`]: every record and streamed payload handed to a closure, the
//! kernel's records of a mapped file through a fast lane.
//!
//! A walk by [`PerfReader::next_record`] goes through every layer per record (sources,
//! decompressor, framing with payloads, metadata). Most records of a recording are the
//! kernel's (SAMPLE above all): no payload, no metadata, never compressed where no
//! COMPRESSED record came before. Those are framed in a tight loop over the mapping
//! ([`crate::raw::SliceRecords::kernel_records`]); anything else goes the general way,
//! so both walks give the same records (a test compares them on every fixture and
//! corpus file).

use super::{PerfReader, RecordRef};
use crate::error::Error;

/// What [`PerfReader::for_each`] hands on.
pub enum Piece<'i, 'm> {
    /// A record (with as much of its payload as the reader holds).
    Record(&'i RecordRef<'m>),
    /// More of the payload of the last record, when its closure asked for it.
    Payload(&'i [u8]),
}

impl PerfReader {
    /// Hand every (remaining) record to `f` in order, as [`Piece::Record`]; when `f`
    /// returns `true` for a record whose payload is larger than the reader holds
    /// ([`RawRecord::rest`](crate::raw::RawRecord::rest)), the rest of it follows as
    /// [`Piece::Payload`]s. The same records as a loop over
    /// [`PerfReader::next_record`], faster: the way to walk a whole recording.
    ///
    /// ```
    /// # fn main() -> Result<(), perfdata_core::Error> {
    /// use perfdata_core::{Piece, PerfReader};
    /// use perfdata_core::record::RecordType;
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-cpu-clock.data");
    /// let mut reader = PerfReader::open(path)?;
    /// let mut samples = 0;
    /// reader.for_each(|piece| {
    ///     if let Piece::Record(item) = piece {
    ///         samples += u64::from(item.raw.record_type() == RecordType::Sample);
    ///     }
    ///     Ok::<_, perfdata_core::Error>(false)
    /// })?;
    /// assert!(samples > 0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn for_each<E: From<Error>>(
        &mut self,
        mut f: impl FnMut(Piece<'_, '_>) -> Result<bool, E>,
    ) -> Result<(), E> {
        loop {
            if self.fast_lane_open() {
                let cur = self.current;
                let meta = &self.meta;
                let source = &mut self.sources[cur];
                let mut reached = 0;
                let n = source.top.kernel_records(|raw| {
                    reached = raw.offset + raw.bytes.len() as u64;
                    f(Piece::Record(&RecordRef::new(raw, meta)))?;
                    Ok::<_, E>(true)
                })?;
                if n > 0 {
                    self.note_progress(reached);
                    // The records have no payload: nothing for payload_chunk.
                    self.last = Some((cur, false));
                    continue;
                }
            }
            let Some(item) = self.next_record()? else {
                return Ok(());
            };
            if f(Piece::Record(&item))? {
                while let Some(chunk) = self.payload_chunk()? {
                    f(Piece::Payload(chunk))?;
                }
            }
        }
    }

    /// Whether the next records may come from the fast lane: the current source's
    /// top-level records, with no decompressor whose records would come first.
    fn fast_lane_open(&self) -> bool {
        !self.failed
            && self
                .sources
                .get(self.current)
                .is_some_and(|s| s.decomp.is_none())
    }
}
