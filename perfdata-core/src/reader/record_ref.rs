//! [`RecordRef`]: one record as the reader hands it out, with the metadata as of it.

use crate::error::{Error, Problem, Result};
use crate::meta::Metadata;
use crate::raw::{locate, Located, RawRecord};
use crate::record::{DecodeContext, Record, RecordView};

/// One record of the input, borrowed from the reader, with the metadata as of that
/// record: its raw bytes for the fast path (counting, filtering, copying), `locate` for
/// the fields records are sorted and filtered by, `decode` for the typed model.
///
/// ```
/// use perfdata_core::record::{RecordBody, RecordType};
///
/// let mut reader = perfdata_core::PerfReader::open(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-cpu-clock.data"))?;
/// while let Some(item) = reader.next_record()? {
///     if item.raw.record_type() != RecordType::Sample {
///         continue;
///     }
///     // Cheap: fields at fixed offsets, no decoding.
///     let at = item.locate();
///     // Whole: the typed model.
///     let RecordBody::Sample(sample) = item.decode()?.body else { unreachable!() };
///     assert_eq!(sample.time, at.time);
///     assert_eq!(sample.tid.map(|t| t.pid), at.pid);
/// }
/// # Ok::<(), perfdata_core::Error>(())
/// ```
pub struct RecordRef<'a> {
    /// The record's bytes and where it was.
    pub raw: RawRecord<'a>,
    /// The metadata as of the record (attrs and features seen so far in a pipe).
    pub meta: &'a Metadata,
    /// What [`RecordRef::locate`] found, once asked: a filter and the writer behind it
    /// both ask for every sample.
    located: std::cell::OnceCell<Located>,
}

impl<'a> RecordRef<'a> {
    /// The record `raw` read with `meta`.
    #[inline]
    pub fn new(raw: RawRecord<'a>, meta: &'a Metadata) -> Self {
        RecordRef {
            raw,
            meta,
            located: std::cell::OnceCell::new(),
        }
    }

    /// [`RecordRef::new`] of a record located before: `at` is what
    /// [`RecordRef::locate`] found for it (a record held and seen again).
    #[inline]
    pub fn located(raw: RawRecord<'a>, meta: &'a Metadata, at: Located) -> Self {
        RecordRef {
            raw,
            meta,
            located: std::cell::OnceCell::from(at),
        }
    }
}

impl<'a> RecordRef<'a> {
    fn context(&self) -> DecodeContext<'_> {
        DecodeContext {
            endian: self.meta.endian,
            events: self.meta.events(),
        }
    }

    /// A borrowed view of the record's fixed fields (see [`crate::record::RecordView`]): an
    /// error naming the record's offset when it is not of the view's types or too short.
    pub fn view<V: RecordView<'a>>(&self) -> Result<V> {
        V::new(self.raw.bytes, self.meta.endian, self.raw.offset)
    }

    /// The typed record.
    pub fn decode(&self) -> Result<Record> {
        Record::decode(
            self.raw.bytes,
            self.raw.payload,
            self.raw.offset,
            &self.context(),
        )
    }

    /// The typed record, or the raw bytes with the reason they did not decode.
    pub fn decode_or_raw(&self) -> (Record, Option<Error>) {
        Record::decode_or_raw(
            self.raw.bytes,
            self.raw.payload,
            self.raw.offset,
            &self.context(),
        )
    }

    /// A SAMPLE's fields borrowed from its bytes (`None` for other records): the fast
    /// typed path, no allocation. An error names the field that does not fit, as
    /// [`RecordRef::decode`] would.
    pub fn sample(&self) -> Result<Option<crate::record::SampleView<'a>>> {
        if self.raw.record_type() != crate::record::RecordType::Sample {
            return Ok(None);
        }
        let bytes = self.raw.bytes;
        let endian = self.meta.endian;
        let events = self.meta.events();
        let layout = events
            .event_of(bytes, true, endian)
            .and_then(|i| events.layout(i))
            .ok_or_else(|| {
                Error::format(
                    self.raw.offset,
                    "record SAMPLE",
                    Problem::Invalid("no attr describes this record's layout".into()),
                )
            })?;
        let Some(body) = bytes.get(8..) else {
            return Err(Error::format(
                self.raw.offset,
                "record SAMPLE",
                Problem::RecordTooSmall {
                    size: bytes.len() as u64,
                    min: 8,
                },
            ));
        };
        crate::record::SampleView::parse(body, layout, endian, self.raw.offset + 8).map(Some)
    }

    /// Event, id, time, pid, tid and cpu, from fixed offsets.
    ///
    /// A reference into the record's cache: read the fields you need. (A copy of the
    /// whole value made right after it was found stalls the CPU: its fields were
    /// just stored one by one, and a wide load over several pending stores waits for
    /// them all; a profile of `strip` had a quarter of its time there.)
    #[inline]
    pub fn locate(&self) -> &Located {
        self.located
            .get_or_init(|| locate(&self.raw, self.meta.events(), self.meta.endian))
    }
}
