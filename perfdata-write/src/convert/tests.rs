//! The builder's shapes: a source of two inputs merged by time (the shape of a later
//! `merge` command) and a cancelled conversion.

use std::io::Cursor;

use perfdata_core::raw::OwnedRecord;
use perfdata_core::record::RecordType;
use perfdata_core::{Metadata, PerfReader, ReadOptions, RecordRef};

use super::{Conversion, Input, Needs, Sink, Source};
use crate::edit::{Action, FnEdit};
use crate::error::{Result, WriteError};
use crate::Cancel;

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(name)
}

/// Two sources merged by time, pulling from each with `next_record`: a record without a
/// time keeps its place after its input's previous one, ties go to the first input.
struct TwoMerged<A, B> {
    a: A,
    b: B,
    /// The next record of each input and the time it is merged by.
    heads: [Option<(u64, OwnedRecord)>; 2],
    last_times: [u64; 2],
    /// The input whose head was handed out last (refilled on the next pull).
    taken: Option<usize>,
    current: Option<OwnedRecord>,
}

fn head<S: Source>(s: &mut S, last: &mut u64) -> Result<Option<(u64, OwnedRecord)>> {
    let Some(item) = s.next_record()? else {
        return Ok(None);
    };
    if let Some(t) = item.locate().time {
        *last = t;
    }
    Ok(Some((*last, item.raw.to_owned_record())))
}

impl<A: Source, B: Source> TwoMerged<A, B> {
    fn new(a: A, b: B) -> Self {
        TwoMerged {
            a,
            b,
            heads: [None, None],
            last_times: [0; 2],
            taken: None,
            current: None,
        }
    }

    fn refill(&mut self, i: usize) -> Result<()> {
        self.heads[i] = match i {
            0 => head(&mut self.a, &mut self.last_times[0])?,
            _ => head(&mut self.b, &mut self.last_times[1])?,
        };
        Ok(())
    }
}

impl<A: Source, B: Source> Source for TwoMerged<A, B> {
    /// The inputs are recordings of the same events: the first one's metadata.
    fn meta(&self) -> &Metadata {
        self.a.meta()
    }

    fn prepare(&mut self, needs: Needs) -> Result<()> {
        self.a.prepare(needs)?;
        self.b.prepare(needs)?;
        if self.heads.iter().all(Option::is_none) && self.taken.is_none() {
            self.refill(0)?;
            self.refill(1)?;
        }
        Ok(())
    }

    fn next_record(&mut self) -> Result<Option<RecordRef<'_>>> {
        if let Some(i) = self.taken.take() {
            self.refill(i)?;
        }
        let earliest = (0..2)
            .filter_map(|i| self.heads[i].as_ref().map(|h| (h.0, i)))
            .min()
            .map(|(_, i)| i);
        let Some(i) = earliest else {
            return Ok(None);
        };
        let (_, record) = self.heads[i].take().expect("chosen head exists");
        self.taken = Some(i);
        let meta = self.a.meta();
        let current = self.current.insert(record);
        Ok(Some(RecordRef::new(current.as_raw(meta.endian), meta)))
    }

    fn payload_chunk(&mut self) -> Result<Option<&[u8]>> {
        match self.taken {
            Some(0) => self.a.payload_chunk(),
            Some(_) => self.b.payload_chunk(),
            None => Ok(None),
        }
    }
}

/// The SAMPLE times of a file-mode recording, in file order.
fn sample_times(bytes: Vec<u8>) -> Vec<u64> {
    let mut r = PerfReader::from_vec(bytes, ReadOptions::Contents).unwrap();
    let mut times = Vec::new();
    while let Some(item) = r.next_record().unwrap() {
        if item.raw.record_type() == RecordType::Sample {
            times.push(item.locate().time.unwrap());
        }
    }
    times
}

#[test]
fn a_source_of_two_inputs_merges_them_by_time() {
    let path = fixture("file-cpu-clock.data");
    let one = sample_times(std::fs::read(&path).unwrap());
    assert!(one.len() > 100);
    let merged = TwoMerged::new(Input::open(&path).unwrap(), Input::open(&path).unwrap());
    let mut out = Cursor::new(Vec::new());
    let report = Conversion::new(merged)
        .write(Sink::seekable(&mut out, None))
        .unwrap();
    let times = sample_times(out.into_inner());
    // Each sample of both inputs once, in time order: each time of the input twice.
    let mut expected: Vec<u64> = one.iter().flat_map(|&t| [t, t]).collect();
    expected.sort();
    assert_eq!(times, expected);
    assert_eq!(report.records_in, report.records_out);
}

#[test]
fn a_cancelled_conversion_leaves_the_old_target_and_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.data");
    std::fs::write(&target, b"the old target").unwrap();
    let cancel = Cancel::new();
    let flag = cancel.clone();
    let mut seen = 0;
    // Cancelled at the 100th record, as an interrupt would (the conversion checks the
    // flag before each record).
    let at_100 = FnEdit(move |_: &RecordRef<'_>| {
        seen += 1;
        if seen == 100 {
            flag.cancel();
        }
        Ok(Action::Keep)
    });
    let err = Conversion::new(Input::open(fixture("file-cpu-clock.data")).unwrap())
        .edit(at_100)
        .cancel(cancel)
        .write(Sink::path(&target).unwrap())
        .expect_err("cancelled");
    assert!(matches!(err, WriteError::Cancelled), "{err}");
    assert_eq!(std::fs::read(&target).unwrap(), b"the old target");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["out.data"]);
}
