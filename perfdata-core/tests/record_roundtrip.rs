//! Every record of every fixture (and of the public corpus named by `$PERFDATA_CORPUS`)
//! decodes into its typed model and encodes back to the same bytes, and no record of a
//! type perf defines falls back to `RecordBody::Raw`.
//!
//! The walk below is deliberately small and self-contained (file, pipe and directory
//! mode, COMPRESSED/COMPRESSED2 expansion); a reader API will replace it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use perfdata_core::attr::FileAttr;
use perfdata_core::codec::u64_at;
use perfdata_core::header::{probe, read_file_header, Container};
use perfdata_core::raw::{plausible_header, Decompressor, RawRecord, SliceRecords};
use perfdata_core::record::{DecodeContext, EventIndex, Record, RecordBody, RecordType};
use perfdata_core::Endian;

/// A record whose bytes did not fit its type's layout.
#[derive(Debug)]
struct Misfit {
    offset: u64,
    type_: u32,
    why: String,
}

/// What walking one input found.
#[derive(Debug, Default)]
struct Walk {
    /// Records per type number (inner records of compressed ones included).
    counts: BTreeMap<u32, usize>,
    /// Records that did not round-trip byte for byte: (offset, type, what differed).
    mismatches: Vec<(u64, u32, String)>,
    misfits: Vec<Misfit>,
    /// Where and why the walk stopped early (a framing error, junk at the end of a
    /// stream).
    stopped: Option<(u64, String)>,
}

impl Walk {
    fn total(&self) -> usize {
        self.counts.values().sum()
    }
}

fn is_perf_defined(ty: u32) -> bool {
    (1..=22).contains(&ty) || (64..=86).contains(&ty)
}

/// Decode, check the round trip, count; HEADER_ATTR records feed the event index when
/// `pipe` (perf's pipe mode takes its attrs from them).
fn check_record(
    raw: &RawRecord<'_>,
    endian: Endian,
    events: &mut EventIndex,
    pipe: bool,
    walk: &mut Walk,
) {
    let ty = raw.header.type_;
    *walk.counts.entry(ty).or_default() += 1;
    let ctx = DecodeContext {
        endian,
        events: &*events,
    };
    let (record, err) = Record::decode_or_raw(raw.bytes, raw.payload, raw.offset, &ctx);
    if let Some(e) = err {
        walk.misfits.push(Misfit {
            offset: raw.offset,
            type_: ty,
            why: e.to_string(),
        });
    } else if is_perf_defined(ty) && matches!(record.body, RecordBody::Raw(_)) {
        walk.misfits.push(Misfit {
            offset: raw.offset,
            type_: ty,
            why: "decoded as Raw".into(),
        });
    } else if is_perf_defined(ty) && record.extra.iter().any(|&b| b != 0) {
        // Bytes past a layout are padding or unused room, which perf zeroes: anything
        // else means the layout is shorter than what the writer wrote.
        walk.misfits.push(Misfit {
            offset: raw.offset,
            type_: ty,
            why: format!("{} bytes past the layout, not all zero", record.extra.len()),
        });
    }
    match record.encode(endian) {
        Ok(out) => {
            let n = raw.bytes.len();
            if out.len() != n + raw.payload.len()
                || out[..n] != *raw.bytes
                || out[n..] != *raw.payload
            {
                let first = out
                    .iter()
                    .zip(raw.bytes.iter().chain(raw.payload))
                    .position(|(a, b)| a != b);
                walk.mismatches.push((
                    raw.offset,
                    ty,
                    format!(
                        "encoded {} bytes for {}+{}, first difference at {first:?}",
                        out.len(),
                        n,
                        raw.payload.len()
                    ),
                ));
            }
        }
        Err(e) => walk
            .mismatches
            .push((raw.offset, ty, format!("encode failed: {e}"))),
    }
    if pipe {
        if let RecordBody::HeaderAttr(a) = &record.body {
            events.push(&a.attr, &a.ids);
        }
    }
}

/// Walk the records of `data` (a data section or headerless stream starting at file
/// offset `base`), expanding compressed records with one decompressor for the stream.
fn walk_stream(
    data: &[u8],
    base: u64,
    endian: Endian,
    stream: usize,
    events: &mut EventIndex,
    pipe: bool,
    walk: &mut Walk,
) {
    let mut decomp: Option<Decompressor> = None;
    let mut records = SliceRecords::new(data, base, endian, stream);
    loop {
        let at = records.offset();
        let rest = records.remaining();
        let raw = match records.next() {
            None => break,
            Some(Ok(raw)) => raw,
            Some(Err(e)) => {
                let kind = if plausible_header(rest, endian) {
                    "framing error"
                } else {
                    "junk after the last record"
                };
                walk.stopped = Some((at, format!("{kind} ({} bytes left): {e}", rest.len())));
                return;
            }
        };
        check_record(&raw, endian, events, pipe, walk);
        if !raw.is_compressed() {
            continue;
        }
        let d = decomp.get_or_insert_with(|| Decompressor::new(endian, stream).unwrap());
        if let Err(e) = d.feed(raw.bytes, raw.offset) {
            walk.stopped = Some((raw.offset, format!("decompression failed: {e}")));
            return;
        }
        loop {
            match d.advance() {
                Ok(Some(span)) => {
                    let inner = span.record(d.buffer(), endian);
                    check_record(&inner, endian, events, pipe, walk);
                }
                Ok(None) => break,
                Err(e) => {
                    let why = format!("framing error inside compressed data: {e}");
                    walk.stopped = Some((raw.offset, why));
                    return;
                }
            }
        }
    }
    if let Some(d) = &decomp {
        if d.pending() != 0 {
            let why = format!("{} decompressed bytes left over at the end", d.pending());
            walk.stopped = Some((base + data.len() as u64, why));
        }
    }
}

/// The events of a file-mode header: its attrs section and each attr's ids.
fn file_events(bytes: &[u8], endian: Endian) -> Result<EventIndex, String> {
    let (_, header) = read_file_header(bytes).map_err(|e| e.to_string())?;
    let mut events = EventIndex::new();
    let entry = header.attr_size as usize;
    if entry <= 16 {
        return Err(format!("attr_size {entry} too small"));
    }
    let start = header.attrs.offset as usize;
    let end = start + header.attrs.size as usize;
    let section = bytes
        .get(start..end)
        .ok_or("attrs section past the end of the file")?;
    for chunk in section.chunks_exact(entry) {
        let mut cursor = std::io::Cursor::new(chunk);
        let fa: FileAttr = binrw::BinRead::read_options(&mut cursor, endian, (entry - 16,))
            .map_err(|e| e.to_string())?;
        let ids_start = fa.ids.offset as usize;
        let ids_bytes = bytes
            .get(ids_start..ids_start + fa.ids.size as usize)
            .ok_or("ids past the end of the file")?;
        let ids: Vec<u64> = (0..ids_bytes.len() / 8)
            .map(|i| u64_at(ids_bytes, i * 8, endian).unwrap())
            .collect();
        events.push(&fa.attr, &ids);
    }
    Ok(events)
}

/// Walk a perf.data file (file or pipe mode), plus the `data.N` streams beside it when
/// it is the `data` of a directory.
fn walk_file(path: &Path, streams: &[PathBuf]) -> Result<Walk, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let p = probe(&bytes).map_err(|e| e.to_string())?;
    let mut walk = Walk::default();
    match p.container {
        Container::Pipe => {
            let mut events = EventIndex::new();
            walk_stream(&bytes[16..], 16, p.endian, 0, &mut events, true, &mut walk);
        }
        Container::File => {
            let (_, header) = read_file_header(&bytes).map_err(|e| e.to_string())?;
            let mut events = file_events(&bytes, p.endian)?;
            let start = header.data.offset as usize;
            let end = (start + header.data.size as usize).min(bytes.len());
            let data = bytes.get(start..end).ok_or("data section past the end")?;
            walk_stream(
                data,
                start as u64,
                p.endian,
                0,
                &mut events,
                false,
                &mut walk,
            );
            for (n, s) in streams.iter().enumerate() {
                let sb = std::fs::read(s).map_err(|e| format!("{}: {e}", s.display()))?;
                let mut w = Walk::default();
                walk_stream(&sb, 0, p.endian, n + 1, &mut events, false, &mut w);
                for (t, c) in w.counts {
                    *walk.counts.entry(t).or_default() += c;
                }
                walk.mismatches.extend(w.mismatches);
                walk.misfits.extend(w.misfits);
                if let Some((at, why)) = w.stopped {
                    walk.stopped = Some((at, format!("{}: {why}", s.display())));
                }
            }
        }
    }
    Ok(walk)
}

fn type_name(ty: u32) -> String {
    RecordType::from_u32(ty).name()
}

fn report(name: &str, walk: &Walk) {
    let counts: Vec<String> = walk
        .counts
        .iter()
        .map(|(t, c)| format!("{} {c}", type_name(*t)))
        .collect();
    println!("{name}: {} records: {}", walk.total(), counts.join(", "));
    if let Some((at, why)) = &walk.stopped {
        println!("  stopped at {at}: {why}");
    }
    for m in &walk.misfits {
        println!(
            "  MISFIT at {} ({:#x}) {}: {}",
            m.offset,
            m.offset,
            type_name(m.type_),
            m.why
        );
    }
    for (off, ty, why) in &walk.mismatches {
        println!("  MISMATCH at {off} {}: {why}", type_name(*ty));
    }
}

/// The inputs of a fixtures-style directory: `*.data` files, and `*.data/` directories
/// (their `data` plus `data.N` streams in order).
fn inputs(dir: &Path) -> Vec<(PathBuf, Vec<PathBuf>)> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            let mut streams: Vec<(usize, PathBuf)> = std::fs::read_dir(&p)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter_map(|s| {
                    let n = s
                        .file_name()?
                        .to_str()?
                        .strip_prefix("data.")?
                        .parse()
                        .ok()?;
                    Some((n, s))
                })
                .collect();
            streams.sort();
            out.push((
                p.join("data"),
                streams.into_iter().map(|(_, s)| s).collect(),
            ));
        } else {
            out.push((p, Vec::new()));
        }
    }
    out
}

/// Totals over several inputs.
fn add(total: &mut BTreeMap<u32, usize>, walk: &Walk) {
    for (t, c) in &walk.counts {
        *total.entry(*t).or_default() += c;
    }
}

fn print_totals(what: &str, total: &BTreeMap<u32, usize>) {
    println!("{what} totals:");
    for (t, c) in total {
        println!("  {:>5} {:<18} {c}", t, type_name(*t));
    }
}

#[test]
fn fixtures_round_trip_every_record() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let mut total = BTreeMap::new();
    let mut failures = Vec::new();
    for (path, streams) in inputs(&dir) {
        if !path.to_string_lossy().ends_with(".data") && streams.is_empty() {
            continue;
        }
        let name = path
            .strip_prefix(&dir)
            .unwrap_or(&path)
            .display()
            .to_string();
        let walk = walk_file(&path, &streams).unwrap_or_else(|e| panic!("{name}: {e}"));
        report(&name, &walk);
        add(&mut total, &walk);
        if walk.stopped.is_some() || !walk.mismatches.is_empty() || !walk.misfits.is_empty() {
            failures.push(name);
        }
    }
    print_totals("fixtures", &total);
    assert!(
        total.values().sum::<usize>() > 1000,
        "fixtures hold few records"
    );
    assert!(
        failures.is_empty(),
        "fixtures that did not round-trip: {failures:?}"
    );
}

/// Corpus records known not to fit their type's layout, as (file, offset, type). None:
/// every record of a type perf defines fits (simpleperf's own types, 32768 and up, stay
/// `Raw` and are not listed).
const EXPECTED_MISFITS: &[(&str, u64, u32)] = &[];

/// Corpus files whose walk stops before the end, and where.
const EXPECTED_STOPS: &[(&str, u64)] = &[
    // Corrupt on purpose: a record of size 0.
    (
        "google-perf.data.piped.corrupted.zero_size_sample-3.2",
        49104,
    ),
    // perf's own stderr text after the last record of the pipe stream.
    ("mstange-sleep.compressed2.pipe.data", 31808),
];

#[test]
fn corpus_round_trips_every_record() {
    let Some(dir) = std::env::var_os("PERFDATA_CORPUS") else {
        println!("SKIPPED: set PERFDATA_CORPUS to the corpus directory (e.g. /work/shared/corpus) to run the corpus round trip");
        return;
    };
    let dir = PathBuf::from(dir);
    let mut total = BTreeMap::new();
    let mut mismatches = Vec::new();
    let mut misfits = Vec::new();
    let mut stops = Vec::new();
    for (path, streams) in inputs(&dir) {
        let name = path
            .strip_prefix(&dir)
            .unwrap_or(&path)
            .display()
            .to_string();
        let head = std::fs::read(&path).map(|b| b.len() >= 16 && probe(&b).is_ok());
        if !matches!(head, Ok(true)) {
            println!("{name}: not a perf.data file, skipped");
            continue;
        }
        let walk = walk_file(&path, &streams).unwrap_or_else(|e| panic!("{name}: {e}"));
        report(&name, &walk);
        add(&mut total, &walk);
        for (off, ty, why) in &walk.mismatches {
            mismatches.push(format!("{name} at {off} {}: {why}", type_name(*ty)));
        }
        for m in &walk.misfits {
            misfits.push((name.clone(), m.offset, m.type_));
        }
        if let Some((at, _)) = &walk.stopped {
            stops.push((name.clone(), *at));
        }
    }
    print_totals("corpus", &total);
    assert!(
        mismatches.is_empty(),
        "records that did not round-trip: {mismatches:#?}"
    );
    let expected: Vec<(String, u64, u32)> = EXPECTED_MISFITS
        .iter()
        .map(|(f, o, t)| (f.to_string(), *o, *t))
        .collect();
    assert_eq!(misfits, expected, "records that do not fit their layout");
    let expected: Vec<(String, u64)> = EXPECTED_STOPS
        .iter()
        .map(|(f, o)| (f.to_string(), *o))
        .collect();
    assert_eq!(stops, expected, "walks that stopped before the end");
}
