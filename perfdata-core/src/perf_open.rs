//! What perf 6.1 refuses when it opens a file, beyond the file's layout.
//!
//! `perf_session__read_header` (util/header.c) gives every tracepoint event its format
//! from the tracing data, and fails when there is none ("broken or missing trace
//! data": no TRACING_DATA, or one its `trace_report` cannot read) or none with the
//! event's id ("cannot find event format for N"). Then `perf_session__open`
//! (util/session.c), unless the file is `perf stat record`'s (the STAT feature), wants
//! with more than one event the sample id at one place in every event's samples and
//! records ("non matching sample_type"), sample_id_all the same for all ("non matching
//! sample_id_all"), and the first event's samples, when they read counters, to read
//! their ids ("non matching read_format").
//!
//! A pipe stream escapes these checks: perf reads one whose events disagree, or whose
//! tracing data it cannot use, as far as `perf report --stats` goes, but not the file
//! made from it. A file writer asks [`refusal`] before it writes the header.

use crate::attr::{PerfEventAttr, ReadFormat, SampleType};

/// `PERF_TYPE_TRACEPOINT`.
const TRACEPOINT: u32 = 2;

/// Why perf 6.1 refuses to open a file of these events (in file order), with the STAT
/// feature or not, and this TRACING_DATA (if any); `None` when it opens it.
pub fn refusal(attrs: &[&PerfEventAttr], stat: bool, tracing: Option<&[u8]>) -> Option<String> {
    tracepoints(attrs, tracing).or_else(|| if stat { None } else { agreement(attrs) })
}

/// Every tracepoint event needs its format.
fn tracepoints(attrs: &[&PerfEventAttr], tracing: Option<&[u8]>) -> Option<String> {
    let (i, first) = attrs
        .iter()
        .enumerate()
        .find(|(_, a)| a.type_ == TRACEPOINT)?;
    let why = match tracing {
        None => "there is no tracing data".to_string(),
        Some(blob) => match crate::tracing::unreadable(blob) {
            Some(why) => format!("the tracing data does not read ({why})"),
            None => {
                let ids: Vec<u64> = crate::tracing::tracepoints(blob)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(_, _, id)| id)
                    .collect();
                let (i, a) = attrs
                    .iter()
                    .enumerate()
                    .find(|(_, a)| a.type_ == TRACEPOINT && !ids.contains(&a.config))?;
                return Some(format!(
                    "event {i} is the tracepoint of id {}, and the tracing data has no \
                     format of that id: perf 6.1 refuses the file (\"cannot find event \
                     format for {}\")",
                    a.config, a.config
                ));
            }
        },
    };
    Some(format!(
        "event {i} is a tracepoint (id {}) and {why}: perf 6.1 refuses the file (\"broken \
         or missing trace data\")",
        first.config
    ))
}

/// perf's `evsel__calc_id_pos`: where the id is in a SAMPLE, in u64s from its start.
fn id_pos(t: SampleType) -> Option<u32> {
    if t.contains(SampleType::IDENTIFIER) {
        return Some(0);
    }
    t.contains(SampleType::ID).then(|| {
        [
            SampleType::IP,
            SampleType::TID,
            SampleType::TIME,
            SampleType::ADDR,
        ]
        .into_iter()
        .filter(|&f| t.contains(f))
        .count() as u32
    })
}

/// perf's `evsel__calc_is_pos`: where the id is in a record's sample_id trailer, in u64s
/// from its end.
fn is_pos(t: SampleType) -> Option<u32> {
    if t.contains(SampleType::IDENTIFIER) {
        return Some(1);
    }
    t.contains(SampleType::ID).then(|| {
        1 + [SampleType::CPU, SampleType::STREAM_ID]
            .into_iter()
            .filter(|&f| t.contains(f))
            .count() as u32
    })
}

/// The events agree on where their ids are, on sample_id_all, and the first one's
/// samples read their ids.
fn agreement(attrs: &[&PerfEventAttr]) -> Option<String> {
    let first = attrs.first()?;
    if attrs.len() > 1 {
        let pos = |a: &PerfEventAttr| (id_pos(a.sample_type), is_pos(a.sample_type));
        let want = pos(first);
        if want.0.is_none() {
            return Some(format!(
                "event 0's samples carry no id (its sample_type is {}) and there are {} \
                 events: perf 6.1 refuses the file (\"non matching sample_type\")",
                names(first.sample_type),
                attrs.len()
            ));
        }
        let odd = attrs.iter().enumerate().find(|(_, a)| pos(a) != want);
        if let Some((i, a)) = odd {
            return Some(format!(
                "event {i}'s sample_type ({}) does not put the sample id where event 0's \
                 ({}) does: perf 6.1 refuses the file (\"non matching sample_type\")",
                names(a.sample_type),
                names(first.sample_type)
            ));
        }
        if let Some(i) = attrs
            .iter()
            .position(|a| a.sample_id_all() != first.sample_id_all())
        {
            return Some(format!(
                "event {i} and event 0 differ in sample_id_all: perf 6.1 refuses the file \
                 (\"non matching sample_id_all\")"
            ));
        }
    }
    if first.sample_type.contains(SampleType::READ) && !first.read_format.contains(ReadFormat::ID) {
        return Some(
            "event 0's samples read counters without their ids (READ without the ID \
             read_format): perf 6.1 refuses the file (\"non matching read_format\")"
                .into(),
        );
    }
    None
}

fn names(t: SampleType) -> String {
    let v: Vec<&str> = t.iter_names().map(|(n, _)| n).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join("|")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::AttrFlags;

    fn attr(type_: u32, config: u64, t: SampleType) -> PerfEventAttr {
        PerfEventAttr {
            type_,
            config,
            sample_type: t,
            flags: AttrFlags::SAMPLE_ID_ALL,
            ..Default::default()
        }
    }

    #[test]
    fn events_must_agree_where_the_id_is() {
        let s = SampleType::IP | SampleType::TID | SampleType::TIME;
        let a = attr(1, 0, s | SampleType::IDENTIFIER);
        let b = attr(
            1,
            1,
            s | SampleType::ID | SampleType::IDENTIFIER | SampleType::CPU,
        );
        assert_eq!(refusal(&[&a, &b], false, None), None);
        // ID after IP, TID, TIME: position 3, not 0.
        let c = attr(1, 1, s | SampleType::ID);
        let why = refusal(&[&a, &c], false, None).unwrap();
        assert!(
            why.contains("event 1's sample_type")
                && why.ends_with("(\"non matching sample_type\")")
        );
        // One event alone, or `perf stat record`'s file: no such check.
        assert_eq!(refusal(&[&c], false, None), None);
        assert_eq!(refusal(&[&a, &c], true, None), None);
        // Without any id, two events cannot be told apart.
        let d = attr(1, 0, s);
        assert!(refusal(&[&d, &d], false, None).is_some());
        let mut e = a.clone();
        e.flags = AttrFlags::empty();
        let why = refusal(&[&a, &e], false, None).unwrap();
        assert!(why.ends_with("(\"non matching sample_id_all\")"), "{why}");
        let f = attr(1, 0, s | SampleType::READ);
        let why = refusal(&[&f], false, None).unwrap();
        assert!(why.ends_with("(\"non matching read_format\")"), "{why}");
    }

    #[test]
    fn tracepoints_need_their_formats() {
        let t = attr(TRACEPOINT, 316, SampleType::IP);
        let why = refusal(&[&t], true, None).unwrap();
        assert!(why.contains("there is no tracing data"), "{why}");
        let why = refusal(&[&t], false, Some(b"junk")).unwrap();
        assert!(why.contains("the tracing data does not read"), "{why}");
    }
}
