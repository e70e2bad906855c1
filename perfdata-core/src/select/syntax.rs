//! The syntax of selectors, as perf spells them: id lists (`1,3-5`), comm globs, and
//! `--time` ranges (`START,END` in seconds, percent slices `10%-20%`, `10%/2`).

use std::cell::Cell;

use crate::error::{Error, Result};

fn bad(what: &str, text: &str, why: impl std::fmt::Display) -> Error {
    Error::Select(format!("{what} {text:?}: {why}"))
}

/// A list of numbers and inclusive ranges, perf's `1,3-5` (cpus, pids, tids).
pub fn parse_id_list(text: &str, what: &str) -> Result<Vec<(u64, u64)>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let num = |s: &str| {
            s.trim()
                .parse::<u64>()
                .map_err(|e| bad(what, text, format!("{s:?} is not a number ({e})")))
        };
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let n = num(part)?;
                (n, n)
            }
        };
        if lo > hi {
            return Err(bad(what, text, format!("range {lo}-{hi} runs backwards")));
        }
        out.push((lo, hi));
    }
    Ok(out)
}

/// A cpu list (`0,2-3`).
pub fn parse_cpu_list(text: &str) -> Result<Vec<(u64, u64)>> {
    parse_id_list(text, "cpu list")
}

/// Whether `n` is in a parsed id list.
pub fn in_list(list: &[(u64, u64)], n: u64) -> bool {
    list.iter().any(|&(lo, hi)| lo <= n && n <= hi)
}

/// An id list sorted and merged, for the test every sample of a strip makes: a binary
/// search rather than a scan of every range given.
#[derive(Debug, Clone, Default)]
pub struct IdRanges(Vec<(u64, u64)>, Cell<Option<(u64, bool)>>);

impl IdRanges {
    /// The ranges of `list`, overlapping and adjacent ones merged.
    pub fn new(list: &[(u64, u64)]) -> Self {
        let mut ranges = list.to_vec();
        ranges.sort_unstable();
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
        for (lo, hi) in ranges {
            match out.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
        IdRanges(out, Cell::new(None))
    }

    /// Whether `n` is in one of the ranges.
    #[inline]
    pub fn contains(&self, n: u64) -> bool {
        // Samples come in runs of one thread (a CPU's ring buffer at a time): the last
        // answer is usually the one.
        if let Some((last, answer)) = self.1.get() {
            if last == n {
                return answer;
            }
        }
        let answer = if self.0.len() <= 8 {
            self.0.iter().any(|&(lo, hi)| lo <= n && n <= hi)
        } else {
            // The first range that ends at or after n is the only one that can hold it.
            let i = self.0.partition_point(|&(_, hi)| hi < n);
            self.0.get(i).is_some_and(|&(lo, _)| lo <= n)
        };
        self.1.set(Some((n, answer)));
        answer
    }
}

/// A comm pattern: exact, or a glob with `*` (any run) and `?` (one character).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob(pub String);

impl Glob {
    /// Whether `name` matches the glob (`*` any run of bytes, `?` one byte).
    pub fn matches(&self, name: &[u8]) -> bool {
        glob_match(self.0.as_bytes(), name)
    }
}

impl AsRef<str> for Glob {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Whether `name` matches any of `patterns`, each exact or a glob as [`Glob`] takes it.
pub fn comm_matches<P: AsRef<str>>(patterns: &[P], name: &[u8]) -> bool {
    patterns
        .iter()
        .any(|p| glob_match(p.as_ref().as_bytes(), name))
}

fn glob_match(pat: &[u8], s: &[u8]) -> bool {
    // Iterative matching with one backtrack point for the last `*`.
    let (mut p, mut i) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if p < pat.len() && (pat[p] == b'?' || pat[p] == s[i]) {
            p += 1;
            i += 1;
        } else if p < pat.len() && pat[p] == b'*' {
            star = Some((p, i));
            p += 1;
        } else if let Some((sp, si)) = star {
            p = sp + 1;
            i = si + 1;
            star = Some((sp, si + 1));
        } else {
            return false;
        }
    }
    pat[p..].iter().all(|&c| c == b'*')
}

/// An inclusive time range in ns; 0 leaves that end open, as in perf.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimeRange {
    /// First time (ns) in the range.
    pub start: u64,
    /// Last time (ns) in the range.
    pub end: u64,
}

/// A `--time` argument before the recording's first and last sample times are known.
#[derive(Debug, Clone, PartialEq)]
pub enum TimeSpec {
    /// `START,END` in seconds (`sec.nsec`, either may be empty).
    Absolute(TimeRange),
    /// Percent slices of the recording's sample time span, as fractions (0 to 1).
    Percent(Vec<(f64, f64)>),
}

/// perf's `parse_nsec_time`: `sec[.frac]`, at most 9 fraction digits.
fn parse_seconds(s: &str, text: &str) -> Result<u64> {
    if s.is_empty() {
        return Ok(0);
    }
    let (sec, frac) = s.split_once('.').unwrap_or((s, ""));
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if !digits(sec) || (!frac.is_empty() && !digits(frac)) || frac.len() > 9 {
        return Err(bad("time range", text, format!("{s:?} is not sec[.nsec]")));
    }
    let ns: u64 = format!("{frac:0<9}").parse().expect("nine digits");
    sec.parse::<u64>()
        .ok()
        .and_then(|s| s.checked_mul(1_000_000_000))
        .and_then(|s| s.checked_add(ns))
        .ok_or_else(|| bad("time range", text, "too large"))
}

fn parse_percent(s: &str, text: &str) -> Result<f64> {
    let num = s
        .strip_suffix('%')
        .ok_or_else(|| bad("time range", text, format!("{s:?} lacks its %")))?;
    let v: f64 = num
        .parse()
        .map_err(|_| bad("time range", text, format!("{s:?} is not a percentage")))?;
    if !(0.0..=100.0).contains(&v) {
        return Err(bad("time range", text, "percentages run from 0% to 100%"));
    }
    Ok(v / 100.0)
}

/// Parse perf's `--time` syntax: `START,END`, `A%-B%[,C%-D%...]`, `P%/N[,P%/M...]` or
/// `P%` (the first slice, `P%/1`).
pub fn parse_time_ranges(text: &str) -> Result<TimeSpec> {
    if !text.contains('%') {
        let (a, b) = text
            .split_once(',')
            .ok_or_else(|| bad("time range", text, "expected START,END"))?;
        let range = TimeRange {
            start: parse_seconds(a.trim(), text)?,
            end: parse_seconds(b.trim(), text)?,
        };
        if range.start != 0 && range.end != 0 && range.start > range.end {
            return Err(bad("time range", text, "it ends before it starts"));
        }
        if range.start == 0 && range.end == 0 {
            return Err(bad("time range", text, "both ends are open"));
        }
        return Ok(TimeSpec::Absolute(range));
    }
    // perf's `one_percent_convert`: a lone `P%` is its first slice, `P%/1`.
    if !text.contains(['/', '-', ',']) {
        let lo_hi = (0.0, parse_percent(text, text)?);
        if lo_hi.1 <= 0.0 {
            return Err(bad("time range", text, "no such slice"));
        }
        return Ok(TimeSpec::Percent(vec![lo_hi]));
    }
    let mut out: Vec<(f64, f64)> = Vec::new();
    for part in text.split(',') {
        let (lo, hi) = if let Some((p, n)) = part.split_once('/') {
            let pcnt = parse_percent(p, text)?;
            let n: u32 = n
                .parse()
                .map_err(|_| bad("time range", text, format!("{n:?} is not a slice number")))?;
            if pcnt <= 0.0 || n == 0 {
                return Err(bad("time range", text, "no such slice"));
            }
            (pcnt * f64::from(n - 1), pcnt * f64::from(n))
        } else if let Some((a, b)) = part.split_once('-') {
            (parse_percent(a, text)?, parse_percent(b, text)?)
        } else {
            return Err(bad("time range", text, "expected A%-B% or P%/N"));
        };
        if lo > hi || hi > 1.0 {
            return Err(bad(
                "time range",
                text,
                "a slice runs backwards or past 100%",
            ));
        }
        if out.last().is_some_and(|&(_, prev)| lo < prev) {
            return Err(bad("time range", text, "slices overlap"));
        }
        out.push((lo, hi));
    }
    Ok(TimeSpec::Percent(out))
}

impl TimeSpec {
    /// The ranges in ns, given the recording's first and last sample times (perf's
    /// `set_percent_time`: rounded, the end one ns short unless it is 100%).
    pub fn resolve(&self, first: u64, last: u64) -> Vec<TimeRange> {
        match self {
            TimeSpec::Absolute(r) => vec![*r],
            TimeSpec::Percent(slices) => {
                let total = last.saturating_sub(first) as f64;
                slices
                    .iter()
                    .map(|&(lo, hi)| {
                        let start = first + (lo * total).round() as u64;
                        let mut end = first + (hi * total).round() as u64;
                        if end > start && hi != 1.0 {
                            end -= 1;
                        }
                        TimeRange { start, end }
                    })
                    .collect()
            }
        }
    }

    /// Whether the ranges need the recording's sample time span.
    pub fn is_percent(&self) -> bool {
        matches!(self, TimeSpec::Percent(_))
    }
}

/// `spec` resolved against the recording's first and last sample times (its
/// SAMPLE_TIME feature), which percent slices need.
pub fn resolve_time(spec: &TimeSpec, meta: &crate::Metadata) -> Result<Vec<TimeRange>> {
    use crate::feature::{Feature, FeatureId};
    match meta.feature(FeatureId::SampleTime) {
        // perf's perf_time__parse_for_ranges takes first and last times of 0 (a pipe's
        // SAMPLE_TIME record, written before any sample) as none.
        Some(Feature::SampleTime(t)) if !(spec.is_percent() && t.first == 0 && t.last == 0) => {
            Ok(spec.resolve(t.first, t.last))
        }
        _ if spec.is_percent() => Err(Error::Select(
            "a percent time range needs the SAMPLE_TIME feature (first and last sample time), \
             which this recording lacks"
                .into(),
        )),
        _ => Ok(spec.resolve(0, 0)),
    }
}

/// Whether a sample at `t` is in `ranges`, as perf's `perf_time__ranges_skip_sample`
/// decides (a time of 0, and any time when there are no ranges, is in every range).
pub fn in_ranges(ranges: &[TimeRange], t: u64) -> bool {
    if t == 0 || ranges.is_empty() {
        return true;
    }
    if let [r] = ranges {
        return !((r.start != 0 && t < r.start) || (r.end != 0 && t > r.end));
    }
    ranges
        .iter()
        .any(|r| t >= r.start && (t <= r.end || r.end == 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_lists() {
        assert_eq!(parse_cpu_list("1,3-5").unwrap(), vec![(1, 1), (3, 5)]);
        assert!(parse_cpu_list("5-3").is_err());
        assert!(parse_cpu_list("1,,2").is_err());
        assert!(parse_cpu_list("x").is_err());
        let l = parse_cpu_list("0,2-3").unwrap();
        assert!(in_list(&l, 0) && in_list(&l, 3) && !in_list(&l, 1) && !in_list(&l, 4));
    }

    #[test]
    fn id_ranges_merge_and_find() {
        let list = parse_id_list("40-45,3,10-20,1,2,15-30,46", "pids").unwrap();
        let r = IdRanges::new(&list);
        assert_eq!(r.0, vec![(1, 3), (10, 30), (40, 46)]);
        for n in 0..60 {
            assert_eq!(r.contains(n), in_list(&list, n), "{n}");
        }
        assert!(!IdRanges::new(&[]).contains(0));
        // More ranges than a scan takes: the search.
        let many: Vec<(u64, u64)> = (0..40).map(|i| (i * 10, i * 10 + 4)).collect();
        let r = IdRanges::new(&many);
        for n in 0..420 {
            assert_eq!(r.contains(n), in_list(&many, n), "{n}");
        }
        let edge = IdRanges::new(&[(u64::MAX, u64::MAX), (0, 0)]);
        assert!(edge.contains(u64::MAX) && edge.contains(0) && !edge.contains(1));
    }

    #[test]
    fn globs() {
        let g = |p: &str, s: &str| Glob(p.into()).matches(s.as_bytes());
        assert!(g("perfdata-spin", "perfdata-spin"));
        assert!(!g("perfdata", "perfdata-spin"));
        assert!(g("perf*", "perfdata-spin"));
        assert!(g("*spin", "perfdata-spin"));
        assert!(g("p?rf*-s*n", "perfdata-spin"));
        assert!(!g("*x*", "perfdata-spin"));
        assert!(g("*", ""));
    }

    #[test]
    fn absolute_times() {
        let r = |s: &str| match parse_time_ranges(s).unwrap() {
            TimeSpec::Absolute(r) => (r.start, r.end),
            other => panic!("{other:?}"),
        };
        assert_eq!(r("1.5,2"), (1_500_000_000, 2_000_000_000));
        assert_eq!(r("10.000000001,"), (10_000_000_001, 0));
        assert_eq!(r(",3.25"), (0, 3_250_000_000));
        for bad in ["2,1", "1.0123456789,2", "a,b", "1", ","] {
            assert!(parse_time_ranges(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn percent_slices() {
        // 1000 ns span from 1000: 10%-20% is [1100, 1199], 90%-100% ends at 2000.
        let spec = parse_time_ranges("10%-20%,90%-100%").unwrap();
        let ranges = spec.resolve(1000, 2000);
        assert_eq!(
            ranges,
            vec![
                TimeRange {
                    start: 1100,
                    end: 1199
                },
                TimeRange {
                    start: 1900,
                    end: 2000
                }
            ]
        );
        assert!(in_ranges(&ranges, 1100) && !in_ranges(&ranges, 1200));
        assert!(in_ranges(&ranges, 2000));
        let slice = parse_time_ranges("25%/2").unwrap().resolve(0, 400);
        assert_eq!(
            slice,
            vec![TimeRange {
                start: 100,
                end: 199
            }]
        );
        // A lone percent is its first slice (perf's `10%` is `10%/1`).
        let lone = parse_time_ranges("10%").unwrap().resolve(0, 400);
        assert_eq!(lone, vec![TimeRange { start: 0, end: 39 }]);
        for bad in [
            "20%-10%",
            "10%-120%",
            "10-20%",
            "10%/0",
            "0%-50%,40%-60%",
            "0%",
            "10%,20%",
        ] {
            assert!(parse_time_ranges(bad).is_err(), "{bad}");
        }
    }
}
