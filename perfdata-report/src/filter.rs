//! perf report's sample filters (`--pid`, `--tid`, `--comms`, `--cpu`) and the percent
//! base they leave (`--percentage`), plus `--event`, which perf 6.1's report does not
//! have: a report of one event is that event's table of the unfiltered report. The
//! tests are the selectors of [`perfdata_core::select`], which strip and dump use: id
//! lists, and comm names exact or globs.

use std::str::FromStr;

use perfdata_core::select::{comm_matches, in_list, parse_id_list};
use perfdata_core::{Error, Result};

use crate::model::{ResolvedSample, SortKey};
use crate::process::Machine;

/// What a report's percentages are relative to when samples are filtered out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Percentage {
    /// The event's samples before filtering: perf 6.1's default (`--percentage
    /// absolute`); the header keeps the unfiltered totals.
    #[default]
    Absolute,
    /// The samples left by the filters (`--percentage relative`): rows add up to 100%.
    Relative,
}

impl FromStr for Percentage {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "absolute" => Ok(Percentage::Absolute),
            "relative" => Ok(Percentage::Relative),
            _ => Err(format!("--percentage {s:?}: absolute or relative")),
        }
    }
}

/// Which samples a report counts; every selector given must match (an empty one is
/// not given). Id lists are inclusive ranges, as perf's `1,3-5`.
#[derive(Debug, Clone, Default)]
pub struct SampleFilter {
    /// Process ids (perf's `--pid`).
    pub pids: Vec<(u64, u64)>,
    /// Thread ids (perf's `--tid`).
    pub tids: Vec<(u64, u64)>,
    /// Thread names at the sample, exact (perf's `--comms`) or globs with `*` and `?`.
    pub comms: Vec<String>,
    /// CPUs (perf's `--cpu`); a sample without a CPU does not match.
    pub cpus: Vec<(u64, u64)>,
    /// Event names as perf report's tables name them (not a perf report option).
    pub events: Vec<String>,
    /// DSOs the sampled address must be in, by short or long name (perf's `--dsos`).
    pub dsos: Vec<String>,
    /// Functions the sampled address must be in, by name (perf's `--symbols`; decided
    /// once the recording is read and its addresses named). An entry that reads whole
    /// as a hexadecimal number is an address the sample's ip must be instead (see
    /// [`SampleFilter::symbol_names`]).
    pub symbols: Vec<String>,
    /// The percent base.
    pub percentage: Percentage,
}

/// `entry` as perf's `setup_addrlist` reads a `--symbols` entry: `strtoul(entry, 16)`
/// (leading white space, a sign, `0x` or `0X`, hex digits) that read some digits, did
/// not overflow and left nothing but white space after them.
fn symbol_address(entry: &str) -> Option<u64> {
    let s = entry.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (negative, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let digits_of = |s: &str| s.len() - s.trim_start_matches(|c: char| c.is_ascii_hexdigit()).len();
    // strtoul takes "0x" only before a hex digit ("0x" alone reads as 0, then "x").
    let s = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(rest) if digits_of(rest) > 0 => rest,
        _ => s,
    };
    let n = digits_of(s);
    if n == 0 || !s[n..].bytes().all(|c| c.is_ascii_whitespace()) {
        return None;
    }
    let v = u64::from_str_radix(&s[..n], 16).ok()?;
    Some(if negative { v.wrapping_neg() } else { v })
}

/// Whether the id `n` is in `list`; a negative id is in none.
fn id_in(list: &[(u64, u64)], n: i64) -> bool {
    u64::try_from(n).is_ok_and(|n| in_list(list, n))
}

impl SampleFilter {
    /// The filters of perf report's options as given on a command line: id lists in perf's
    /// syntax (`1,3-5`), comm names comma-separated, events by name, and the percent base
    /// (`absolute` or `relative`). A list that does not parse is an [`Error::Select`].
    pub fn parse(
        pids: Option<&str>,
        tids: Option<&str>,
        cpus: Option<&str>,
        comms: Option<&str>,
        events: &[String],
        percentage: &str,
    ) -> Result<SampleFilter> {
        let ids = |list: Option<&str>, what: &str| {
            list.map_or(Ok(Vec::new()), |s| parse_id_list(s, what))
        };
        Ok(SampleFilter {
            pids: ids(pids, "pid list")?,
            tids: ids(tids, "tid list")?,
            cpus: ids(cpus, "cpu list")?,
            comms: comms
                .map(|c| c.split(',').map(str::to_string).collect())
                .unwrap_or_default(),
            events: events.to_vec(),
            dsos: Vec::new(),
            symbols: Vec::new(),
            percentage: percentage.parse::<Percentage>().map_err(Error::Select)?,
        })
    }

    /// Whether any selector is given.
    pub fn is_active(&self) -> bool {
        !(self.pids.is_empty()
            && self.tids.is_empty()
            && self.comms.is_empty()
            && self.cpus.is_empty()
            && self.events.is_empty()
            && self.dsos.is_empty()
            && self.symbols.is_empty())
    }

    /// The `--symbols` entries that are names: perf 6.1's `setup_addrlist` takes every
    /// entry that reads whole as a hexadecimal number (as `strtoul(s, 16)` reads it:
    /// `0x` optional, so `b` and `add` too) out of the name list into an address list.
    /// A function named `b` is thus never selected by name, and `--symbols b` of one
    /// entry leaves no name to say above the table.
    pub fn symbol_names(&self) -> impl Iterator<Item = &str> {
        self.symbols
            .iter()
            .map(String::as_str)
            .filter(|s| symbol_address(s).is_none())
    }

    /// The one name a command, DSO or symbol (by name: perf counts the names its
    /// address list left) is filtered to, if one: perf's `sort__setup_elide` says it
    /// once above the table instead of in a column.
    pub fn single(&self, key: SortKey) -> Option<&str> {
        fn one(names: Vec<&str>) -> Option<&str> {
            match names[..] {
                [one] => Some(one),
                _ => None,
            }
        }
        match key {
            SortKey::Comm => one(self.comms.iter().map(String::as_str).collect()),
            SortKey::Dso => one(self.dsos.iter().map(String::as_str).collect()),
            SortKey::Sym => one(self.symbol_names().collect()),
            _ => None,
        }
    }

    /// The sort keys of `keys` perf elides ([`SampleFilter::single`]), none where that
    /// would be every key (perf's `sort__setup_elide`): perf neither prints nor sorts
    /// by them.
    pub fn elided(&self, keys: &[SortKey]) -> Vec<SortKey> {
        let one = |k: &SortKey| self.single(*k).is_some();
        if keys.iter().all(one) {
            return Vec::new();
        }
        keys.iter().copied().filter(one).collect()
    }

    /// The `--symbols` entries that are addresses (see [`SampleFilter::symbol_names`]):
    /// a sample whose ip is one of them, in a map, is selected whatever its function.
    pub fn symbol_addresses(&self) -> Vec<u64> {
        self.symbols
            .iter()
            .filter_map(|s| symbol_address(s))
            .collect()
    }

    /// Whether the sample's CPU is wanted: perf report drops other CPUs' samples
    /// before counting anything, so they are in no total either.
    pub fn keeps_cpu(&self, s: &ResolvedSample) -> bool {
        self.cpus.is_empty() || s.cpu.is_some_and(|c| id_in(&self.cpus, c.into()))
    }

    /// Whether a side-band record of CPU `cpu` is wanted (perf script's `filter_cpu`:
    /// a record of no CPU, -1, is).
    pub fn keeps_record_cpu(&self, cpu: u32) -> bool {
        self.cpus.is_empty() || cpu == u32::MAX || id_in(&self.cpus, cpu.into())
    }

    /// Whether the sample's thread is wanted (perf's `thread__is_filtered`, the comm
    /// being the thread's name at the sample). perf counts a filtered sample in the
    /// totals and marks the row it creates as filtered; see [`crate::table::Tally`].
    pub fn keeps_thread(&self, m: &Machine, s: &ResolvedSample) -> bool {
        self.keeps_dso(m, s)
            && (self.pids.is_empty() || id_in(&self.pids, s.pid.into()))
            && (self.tids.is_empty() || id_in(&self.tids, s.tid.into()))
            && (self.comms.is_empty()
                || m.comms
                    .get(s.ip.comm)
                    .is_some_and(|c| comm_matches(&self.comms, c.as_bytes())))
    }

    /// Whether the sampled address is in one of the DSOs asked for (perf's `--dsos`,
    /// which marks the sample's entries filtered as a thread filter does; an address in
    /// no map is in none).
    pub fn keeps_dso(&self, m: &Machine, s: &ResolvedSample) -> bool {
        if self.dsos.is_empty() {
            return true;
        }
        let Some(dso) = s.ip.dso.and_then(|d| m.dsos.get(d)) else {
            return false;
        };
        self.dsos
            .iter()
            .any(|n| *n == dso.short_name || *n == dso.long_name)
    }

    /// Whether the event's table is shown (checked after counting).
    pub fn keeps_event(&self, name: &str) -> bool {
        self.events.is_empty() || self.events.iter().any(|e| e == name)
    }

    /// The events asked for that `names` (the recording's) does not have.
    pub fn unknown_events<'a>(&'a self, names: &[String]) -> Vec<&'a str> {
        self.events
            .iter()
            .filter(|e| !names.contains(e))
            .map(String::as_str)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_that_read_as_hex_are_addresses_as_perfs_setup_addrlist_reads_them() {
        for (entry, addr) in [
            ("b", Some(0xb)),
            ("add", Some(0xadd)),
            ("0x1139", Some(0x1139)),
            ("0X1f ", Some(0x1f)),
            (" ee", Some(0xee)),
            ("-1", Some(u64::MAX)),
            ("0x", None),
            ("main", None),
            ("b2c_x", None),
            ("", None),
            ("fffffffffffffffff", None),
        ] {
            assert_eq!(symbol_address(entry), addr, "{entry:?}");
        }
        let f = SampleFilter {
            symbols: vec!["a".into(), "main".into(), "0x10".into()],
            ..SampleFilter::default()
        };
        assert_eq!(f.symbol_names().collect::<Vec<_>>(), ["main"]);
        assert_eq!(f.symbol_addresses(), [0xa, 0x10]);
    }

    #[test]
    fn ids_are_inclusive_ranges_and_negative_ids_match_nothing() {
        let list = [(1, 1), (3, 5)];
        assert!(id_in(&list, 1) && id_in(&list, 4) && id_in(&list, 5));
        assert!(!id_in(&list, 2) && !id_in(&list, 6) && !id_in(&list, -1));
    }

    #[test]
    fn percentage_by_perfs_names() {
        assert_eq!("absolute".parse(), Ok(Percentage::Absolute));
        assert_eq!("relative".parse(), Ok(Percentage::Relative));
        assert!("total".parse::<Percentage>().is_err());
    }
}
