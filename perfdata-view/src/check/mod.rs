//! Validate a recording fully and report every problem, not only the first: what a user
//! runs when perf says "failed to process type". The reader's own checks (header and
//! section bounds, record framing, compressed payloads, pipe junk) stop reading or become
//! warnings; on top of them every record and feature is decoded and the recording's
//! cross-references are checked: sample ids against the attrs, each CPU's sample times
//! within a stream, the AUXTRACE index against the AUXTRACE records, SAMPLE_TIME against
//! the samples.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Serialize;

use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::raw::Origin;
use perfdata_core::record::RecordType;
use perfdata_core::{ContainerKind, Error, PerfReader, ReadOptions};

mod ordered;

/// One problem: where, in what, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// Byte offset in the input (of the record, section or field), when there is one.
    pub offset: Option<u64>,
    /// What was being read: "record SAMPLE", "feature SAMPLE_TIME", "header".
    pub context: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(o) = self.offset {
            write!(f, "at byte offset {o} ({o:#x}), ")?;
        }
        write!(f, "{}: {}", self.context, self.message)
    }
}

/// The outcome of checking one recording.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Records read (those inside compressed records included).
    pub records: u64,
    /// Every problem, in the order met.
    pub problems: Vec<Problem>,
    /// Reading stopped before the end (framing lost, or the file could not be opened):
    /// what follows that point was not checked.
    pub stopped: bool,
    /// The recording could not be opened at all (no header to read).
    pub unreadable: bool,
}

impl Report {
    /// Nothing wrong was found.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }

    /// `perfdata check --json`'s line for `file`: `{"file", "records", "problems":
    /// [{offset, context, message}], "stopped", "unreadable"}`, numbers exact
    /// ([`crate::json::write_line`] makes them safe).
    pub fn to_json(&self, file: &str) -> serde_json::Value {
        let mut v = serde_json::json!({ "file": file });
        if let (Some(m), Ok(serde_json::Value::Object(fields))) =
            (v.as_object_mut(), crate::json::exact_value(self))
        {
            m.extend(fields);
        }
        v
    }
}

/// At most this many problems of one kind are listed, so that a file with a million bad
/// records gives a readable report in bounded memory; the count of the rest is said.
const PER_KIND: usize = 100;

/// Check the recording at `path` (a file, a directory, or `-`).
pub fn check(path: impl AsRef<Path>) -> Report {
    check_opened(PerfReader::open(path))
}

/// Check what [`PerfReader::open`] (or another constructor) gave: a reader opened by
/// the caller, who may watch its [`PerfReader::progress`], or the error opening it
/// (reported as the header's problem, the file unreadable).
pub fn check_reader(opened: perfdata_core::Result<PerfReader>) -> Report {
    check_opened(opened)
}

/// Check a recording held in memory.
pub fn check_bytes(bytes: Vec<u8>) -> Report {
    check_opened(PerfReader::from_vec(bytes, ReadOptions::default()))
}

fn check_opened(opened: perfdata_core::Result<PerfReader>) -> Report {
    let mut c = Checker::default();
    let mut reader = match opened {
        Ok(r) => r,
        Err(e) => {
            c.error("header", &e);
            c.report.unreadable = true;
            c.report.stopped = true;
            return c.finish();
        }
    };
    loop {
        match reader.next_record() {
            Ok(Some(item)) => c.record(&item),
            Ok(None) => break,
            Err(e) => {
                c.error("record", &e);
                c.report.stopped = true;
                break;
            }
        }
    }
    let meta = reader.meta();
    for w in &meta.warnings {
        c.push(w.offset, "reading".into(), w.message.clone());
    }
    c.features(meta);
    c.finish()
}

#[derive(Default)]
struct Checker {
    report: Report,
    /// How many problems of each context were found (listed or not).
    per_kind: HashMap<String, usize>,
    /// perf's ordered events, to find the records it would count out of order.
    ordered: ordered::OrderedEvents,
    /// The offset of the last FINISHED_ROUND.
    last_round: Option<u64>,
    /// The records perf would count out of order.
    late: Late,
    /// The offset of the first compressed record found without a COMPRESSED feature.
    compressed_unannounced: Option<u64>,
    sample_times: Option<(u64, u64)>,
    /// AUXTRACE records met in the file's own bytes: offset -> header size.
    auxtrace: BTreeMap<u64, u64>,
}

/// The records perf would count out of order: how many, and the first [`PER_KIND`]
/// (offset, type, time, the time perf had delivered, the FINISHED_ROUND that did).
#[derive(Default)]
struct Late {
    count: u64,
    listed: Vec<(u64, RecordType, u64, u64, u64)>,
}

impl Checker {
    fn push(&mut self, offset: Option<u64>, context: String, message: String) {
        let n = self.per_kind.entry(context.clone()).or_default();
        *n += 1;
        if *n <= PER_KIND {
            self.report.problems.push(Problem {
                offset,
                context,
                message,
            });
        }
    }

    /// A reading error, its offset, context and problem as the error names them.
    fn error(&mut self, fallback_context: &str, e: &Error) {
        match e {
            Error::Format {
                offset,
                context,
                problem,
            } => self.push(Some(*offset), context.clone(), problem.to_string()),
            other => self.push(None, fallback_context.into(), other.to_string()),
        }
    }

    fn record(&mut self, item: &perfdata_core::RecordRef<'_>) {
        self.report.records += 1;
        let raw = &item.raw;
        let ty = raw.record_type();
        if let Err(e) = item.decode() {
            self.error(&format!("record {ty}"), &e);
            return;
        }
        self.compression(item);
        let at = item.locate();
        // A directory's streams have no rounds (perf record --threads writes none, and
        // perf reads the streams side by side), so their order is perf's to sort.
        if item.meta.container != ContainerKind::Directory {
            if ty == RecordType::FinishedRound {
                self.ordered.round();
                self.last_round = Some(raw.offset);
            } else if let (true, Some(t)) = (ty.is_kernel(), at.time) {
                if let Some(delivered) = self.ordered.queue(t) {
                    self.late.count += 1;
                    if self.late.listed.len() < PER_KIND {
                        let round = self.last_round.unwrap_or_default();
                        self.late.listed.push((raw.offset, ty, t, delivered, round));
                    }
                }
            }
        }
        // A record that names an id must name one of an attr (with one attr every
        // record is that attr's, id or not).
        // (perf counts such samples as "unknown id" and skips them; the reader files
        // them under the first event, so look the id up here.)
        let unknown = |id: u64| id != 0 && item.meta.events().event_of_id(id).is_none();
        if let (Some(id), true) = (at.id, item.meta.attrs().len() > 1) {
            if !unknown(id) {
                return self.times_and_places(raw, ty, at);
            }
            self.push(
                Some(raw.offset),
                format!("record {ty}"),
                format!("sample id {id} belongs to no attr"),
            );
            return;
        }
        self.times_and_places(raw, ty, at);
    }

    /// A record that came out of a compressed record needs the COMPRESSED feature (in a
    /// pipe: its HEADER_FEATURE before it): perf sizes its decompression buffer from it,
    /// and without it cannot decompress, which is why convert refuses to write it.
    fn compression(&mut self, item: &perfdata_core::RecordRef<'_>) {
        if self.compressed_unannounced.is_some()
            || !matches!(item.raw.origin, Origin::Decompressed { .. })
            || item.meta.feature(FeatureId::Compressed).is_some()
        {
            return;
        }
        let at = item.raw.offset;
        self.compressed_unannounced = Some(at);
        let missing = match item.meta.container {
            ContainerKind::Pipe => "no COMPRESSED feature came before it",
            _ => "the recording has no COMPRESSED feature",
        };
        self.push(
            Some(at),
            "compressed record".into(),
            format!(
                "{missing}: perf cannot decompress it (\"Couldn't decompress data\") and \
                 convert refuses to write it"
            ),
        );
    }

    /// Sample times (their range) and AUXTRACE records' places.
    fn times_and_places(
        &mut self,
        raw: &perfdata_core::raw::RawRecord<'_>,
        ty: RecordType,
        at: &perfdata_core::raw::Located,
    ) {
        if ty == RecordType::Sample {
            if let Some(t) = at.time {
                self.sample_times = Some(match self.sample_times {
                    Some((a, b)) => (a.min(t), b.max(t)),
                    None => (t, t),
                });
            }
        }
        if ty == RecordType::Auxtrace && raw.origin == Origin::Top && raw.stream == 0 {
            self.auxtrace.insert(raw.offset, raw.header.size as u64);
        }
    }

    /// What perf 6.1 refuses when it opens a file (`perf_open`); of a pipe, which it
    /// opens without those checks, tracing data its `trace_report` cannot read (perf
    /// script then stops: "tracing data size mismatch").
    fn perf_opens(&mut self, meta: &perfdata_core::Metadata) {
        let tracing = perfdata_core::tracing::tracing_blob(meta);
        let why = if meta.container == ContainerKind::Pipe {
            tracing
                .and_then(perfdata_core::tracing::unreadable)
                .map(|why| format!("perf 6.1 cannot read it: {why}"))
        } else {
            let attrs: Vec<_> = meta.attrs().iter().map(|a| &a.attr).collect();
            let stat = meta.feature(FeatureId::Stat).is_some();
            perfdata_core::perf_open::refusal(&attrs, stat, tracing)
        };
        if let Some(why) = why {
            let context = match meta.container {
                ContainerKind::Pipe => "tracing data",
                _ => "events",
            };
            self.push(None, context.into(), why);
        }
    }

    /// The records perf's ordered events count out of order, each a problem, unless an
    /// event writes its ring buffer backward: perf then says nothing
    /// (`perf_session__warn_order`).
    fn out_of_order(&mut self, meta: &perfdata_core::Metadata) {
        let backward = meta.attrs().iter().any(|a| {
            a.attr
                .flags
                .contains(perfdata_core::attr::AttrFlags::WRITE_BACKWARD)
        });
        let late = std::mem::take(&mut self.late);
        if backward || late.count == 0 {
            return;
        }
        let n = late.count;
        for (offset, ty, t, delivered, round) in late.listed {
            self.push(
                Some(offset),
                "ordered events".into(),
                format!(
                    "record {ty} of time {t} comes after perf delivered time {delivered} at \
                     the FINISHED_ROUND at {round}: perf 6.1 reads it out of time order, one \
                     of its \"{n} out of order events recorded\""
                ),
            );
        }
        // The rest are counted, and `finish` says how many were not listed.
        self.per_kind.insert("ordered events".into(), n as usize);
    }

    /// Every feature decodes; the AUXTRACE index and SAMPLE_TIME agree with the records.
    fn features(&mut self, meta: &perfdata_core::Metadata) {
        self.out_of_order(meta);
        self.perf_opens(meta);
        for section in meta.features.values() {
            let context = format!("feature {}", section.id);
            if matches!(section.feature, Feature::Raw(_))
                && !matches!(section.id, FeatureId::Unknown(_))
            {
                // The reader warned already, with the offset and the reason.
                continue;
            }
            if let Err(e) = section.encode(meta.endian) {
                self.push(None, context, format!("does not encode back: {e}"));
            }
        }
        if meta.container == ContainerKind::File {
            if let Some(Feature::AuxTrace(index)) = meta.feature(FeatureId::AuxTrace) {
                for e in &index.entries {
                    match self.auxtrace.get(&e.file_offset) {
                        Some(&size) if size == e.size => {}
                        Some(&size) => self.push(
                            Some(e.file_offset),
                            "feature AUXTRACE".into(),
                            format!(
                                "indexes an AUXTRACE record of size {} here, which is {size}",
                                e.size
                            ),
                        ),
                        None => self.push(
                            Some(e.file_offset),
                            "feature AUXTRACE".into(),
                            "indexes an AUXTRACE record here, and there is none".into(),
                        ),
                    }
                }
                if index.entries.len() < self.auxtrace.len() {
                    self.push(
                        None,
                        "feature AUXTRACE".into(),
                        format!(
                            "indexes {} AUXTRACE records of the {} in the data",
                            index.entries.len(),
                            self.auxtrace.len()
                        ),
                    );
                }
            }
        }
        // SAMPLE_TIME must cover the samples. Zeros mean "not recorded" (perf record -z
        // and every pipe stream write them): perf report --time cannot use them, but they
        // claim nothing false.
        if let (Some(Feature::SampleTime(st)), Some((first, last))) =
            (meta.feature(FeatureId::SampleTime), self.sample_times)
        {
            let recorded = st.first != 0 || st.last != 0;
            if recorded
                && meta.container != ContainerKind::Pipe
                && (first < st.first || last > st.last)
            {
                self.push(
                    None,
                    "feature SAMPLE_TIME".into(),
                    format!(
                        "says first {}, last {}, but the samples run from {first} to {last}",
                        st.first, st.last
                    ),
                );
            }
        }
    }

    fn finish(mut self) -> Report {
        let mut more: Vec<(String, usize)> = self
            .per_kind
            .iter()
            .filter(|(_, n)| **n > PER_KIND)
            .map(|(k, n)| (k.clone(), n - PER_KIND))
            .collect();
        more.sort();
        for (context, n) in more {
            self.report.problems.push(Problem {
                offset: None,
                context,
                message: format!("{n} more problems of this kind not listed"),
            });
        }
        self.report
    }
}
