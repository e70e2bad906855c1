//! Every sample spooled to disk ([`super::Detail::Samples`]), read back per track.

use std::io::{self, Write};

use super::{Detail, StackId, Stacks, Track, When};
use crate::spool::{Reader, Records};

/// The size of one spooled sample: raw track, stack, time or number, period, CPU.
pub(super) const ROW: usize = 4 + 4 + 8 + 8 + 4;
/// The bit of a row's track that says its third field is a time.
pub(super) const HAS_TIME: u32 = 1 << 31;
/// A row's CPU field when the sample has none.
pub(super) const NO_CPU: u32 = u32::MAX;

/// One spooled sample, as [`TrackRows`] reads it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleRow {
    /// Its stack.
    pub stack: StackId,
    /// When it was taken.
    pub when: When,
    /// Its period.
    pub period: u64,
    /// Its CPU, if sampled.
    pub cpu: Option<u32>,
}

impl SampleRow {
    fn decode(r: &[u8]) -> (u32, SampleRow) {
        let word = |a: usize| u64::from_le_bytes(r[a..a + 8].try_into().expect("8 bytes"));
        let track = u32::from_le_bytes(r[..4].try_into().expect("4 bytes"));
        let t = word(8);
        let row = SampleRow {
            stack: u32::from_le_bytes(r[4..8].try_into().expect("4 bytes")),
            when: if track & HAS_TIME != 0 {
                When::Time(t)
            } else {
                When::Nth(t)
            },
            period: word(16),
            cpu: Some(u32::from_le_bytes(r[24..28].try_into().expect("4 bytes")))
                .filter(|&c| c != NO_CPU),
        };
        (track & !HAS_TIME, row)
    }
}

impl Stacks {
    /// Every kept sample, read back from the spool, grouped by track in the order of
    /// `tracks` (from [`Stacks::tracks`]) and within a track in the order `when_key`
    /// gives (equal keys in the recording's order; a key of 0 throughout keeps it). The
    /// spool is read once, and freed as it is sorted: a second call is an error, as is
    /// one on samples not collected for [`Detail::Samples`].
    pub fn track_samples(
        &self,
        tracks: &[TrackInfo<'_>],
        when_key: impl Fn(When) -> u64,
    ) -> io::Result<TrackSamples> {
        self.require(Detail::Samples, "a list of every sample")?;
        let spool = self
            .samples
            .borrow_mut()
            .take()
            .ok_or_else(|| io::Error::other("the spooled samples were read already"))?;
        // Each raw track's rank: its track's place in `tracks`; others go last.
        let mut place = vec![u64::MAX; self.tracks.len()];
        for (i, t) in tracks.iter().enumerate() {
            place[t.raw as usize] = i as u64;
        }
        let rank: Vec<u64> = self.canon.iter().map(|&c| place[c as usize]).collect();
        let mut ranges = Vec::with_capacity(tracks.len());
        let mut at = 0u64;
        for t in tracks {
            let bytes = t.samples * (4 + ROW as u64);
            ranges.push((at, at + bytes));
            at += bytes;
        }
        let sorted = spool.sorted(|r| {
            let (track, row) = SampleRow::decode(r);
            (rank[track as usize], when_key(row.when))
        })?;
        Ok(TrackSamples {
            records: sorted,
            ranges,
        })
    }
}

impl Stacks {
    /// Call `each` with every kept sample's track and row, in the order the samples
    /// came (the recording's), read once from the spool: a second call is an error, as
    /// is one on samples not collected for [`Detail::Samples`].
    pub fn each_sample(
        &self,
        mut each: impl FnMut(&Track, SampleRow) -> io::Result<()>,
    ) -> io::Result<()> {
        self.require(Detail::Samples, "every sample in order")?;
        let spool = self
            .samples
            .borrow_mut()
            .take()
            .ok_or_else(|| io::Error::other("the spooled samples were read already"))?;
        let mut reader = spool.read_all();
        while let Some(r) = reader.next_record()? {
            let (raw, row) = SampleRow::decode(r);
            let track = &self.tracks[self.canon[raw as usize] as usize].0;
            if self.kept(track.event) {
                each(track, row)?;
            }
        }
        Ok(())
    }
}

/// A track, as [`Stacks::tracks`] lists it.
#[derive(Debug, Clone)]
pub struct TrackInfo<'a> {
    /// The track.
    pub track: &'a Track,
    /// Its samples.
    pub samples: u64,
    /// The sum of their periods (wrapping).
    pub period: u64,
    /// When its first sample (in the recording's order) was taken.
    pub first: When,
    /// Its first raw track.
    pub(super) raw: u32,
}

/// The spooled samples sorted by track ([`Stacks::track_samples`]).
pub struct TrackSamples {
    records: Records,
    /// Per track: its rows' byte range.
    ranges: Vec<(u64, u64)>,
}

impl TrackSamples {
    /// The samples of track number `track` (its place in the list given to
    /// [`Stacks::track_samples`]), in order.
    pub fn rows(&self, track: usize) -> TrackRows<'_> {
        let (start, end) = self.ranges[track];
        TrackRows {
            reader: self.records.read(start, end),
        }
    }

    /// Write each sample of track number `track` with `cell`, comma-separated (the
    /// inside of a JSON array).
    pub fn write_column(
        &self,
        out: &mut dyn Write,
        track: usize,
        mut cell: impl FnMut(&mut dyn Write, SampleRow) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut rows = self.rows(track);
        let mut first = true;
        while let Some(row) = rows.next_row()? {
            if !first {
                out.write_all(b",")?;
            }
            first = false;
            cell(out, row)?;
        }
        Ok(())
    }
}

/// The samples of one track ([`TrackSamples::rows`]).
pub struct TrackRows<'a> {
    reader: Reader<'a>,
}

impl TrackRows<'_> {
    /// The next sample, None after the last.
    pub fn next_row(&mut self) -> io::Result<Option<SampleRow>> {
        Ok(self.reader.next_record()?.map(|r| SampleRow::decode(r).1))
    }
}
