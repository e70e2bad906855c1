//! `RecordRef::locate` (fields read from fixed offsets, without decoding) gives the id,
//! time, pid, tid and cpu the full decode gives, for every record of every fixture and
//! corpus file, little- and big-endian: filters, strip and the report select records by
//! what it returns.

use perfdata_core::raw::Located;
use perfdata_core::record::RecordBody;
use std::io::Cursor;

use perfdata_core::{Endian, PerfReader, Piece, ReadOptions, RecordRef};
use perfdata_tests::{all_inputs, fixture_files, name};
use perfdata_write::convert::ConvertOptions;
use perfdata_write::{Conversion, Input, Sink};

/// The fields as the decoded record has them; `None` when the record does not decode.
fn decoded(item: &RecordRef<'_>) -> Option<Located> {
    let record = item.decode().ok()?;
    let (id, time, tid, cpu) = match &record.body {
        RecordBody::Sample(s) => (s.identifier.or(s.id), s.time, s.tid, s.cpu),
        _ => match &record.sample_id {
            Some(t) => (t.identifier.or(t.id), t.time, t.tid, t.cpu),
            None => (None, None, None, None),
        },
    };
    Some(Located {
        event: None,
        id,
        time,
        pid: tid.map(|t| t.pid),
        tid: tid.map(|t| t.tid),
        cpu: cpu.map(|c| c.cpu),
    })
}

/// What the checks saw: records compared, those with fields, those big-endian.
#[derive(Default)]
struct Counts {
    checked: u64,
    with_fields: u64,
    big_endian: u64,
}

/// Compare every record of `reader` (named `file`).
fn check(reader: &mut PerfReader, file: &str, n: &mut Counts) {
    let big = reader.meta().endian == Endian::Big;
    // Files cut short on purpose end with an error after their whole records.
    let _ = reader.for_each(|piece| {
        let Piece::Record(item) = piece else {
            return Ok(true);
        };
        let Some(want) = decoded(item) else {
            return Ok(true);
        };
        let got = item.locate();
        let fields = Located {
            event: None,
            ..*got
        };
        assert_eq!(fields, want, "{file}: record at {}", item.raw.offset);
        if let (Some(id), Some(event)) = (got.id, got.event) {
            // With several events, the id names the event.
            let by_id = item.meta.events().event_of_id(id);
            if item.meta.attrs().len() > 1 && by_id.is_some() {
                assert_eq!(by_id, Some(event), "{file}: record at {}", item.raw.offset);
            }
        }
        n.checked += 1;
        n.with_fields += u64::from(want.time.is_some() || want.tid.is_some());
        n.big_endian += u64::from(big && want.tid.is_some());
        Ok::<_, perfdata_core::Error>(true)
    });
}

#[test]
fn located_fields_equal_the_decoded_ones() {
    let mut n = Counts::default();
    for path in all_inputs() {
        let Ok(mut reader) = PerfReader::open(&path) else {
            continue; // the corpus's corrupt file
        };
        check(&mut reader, &name(&path), &mut n);
    }
    // The corpus has no big-endian recording: the fixtures written big-endian.
    let big = ConvertOptions {
        endian: Some(Endian::Big),
        ..Default::default()
    };
    for path in fixture_files() {
        let Ok(input) = Input::open(&path) else {
            continue;
        };
        let mut out = Cursor::new(Vec::new());
        let written = Conversion::new(input)
            .options(big)
            .write(Sink::seekable(&mut out, None));
        if written.is_err() {
            continue; // a recording that cannot be byte-swapped
        }
        let mut reader = PerfReader::from_vec(out.into_inner(), ReadOptions::Contents)
            .expect("our big-endian output reads");
        check(
            &mut reader,
            &format!("{} (big-endian)", name(&path)),
            &mut n,
        );
    }
    let Counts {
        checked,
        with_fields,
        big_endian,
    } = n;
    eprintln!("{checked} records, {with_fields} with fields, {big_endian} big-endian");
    assert!(
        checked > 10_000 && with_fields > 10_000,
        "{checked}, {with_fields}"
    );
    assert!(
        big_endian > 1_000,
        "{big_endian} big-endian records with fields"
    );
}
