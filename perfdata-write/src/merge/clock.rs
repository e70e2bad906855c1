//! The inputs' clocks: which are one clock (`--align clock` shifts them alike) and
//! the warning for inputs kept on clocks that do not compare.

use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::Metadata;

use super::feed::Feed;
use super::{Align, MergedInput};
use crate::error::{Result, WriteError};

/// An input's sampling clock, as CLOCK_DATA describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Clock {
    /// The host (HOSTNAME).
    pub(super) host: Option<String>,
    /// The events' clock ([`sample_clock`]) and CLOCK_DATA's clockid.
    pub(super) clockid: (Option<i32>, u32),
    /// Wall-clock time minus the clock's time at one moment, in ns.
    pub(super) origin: i128,
    /// The clock's time at that moment.
    pub(super) at: u64,
}

impl Clock {
    pub(super) fn of(feed: &Feed, host: Option<String>) -> Result<Clock> {
        match feed.meta().feature(FeatureId::ClockData) {
            Some(Feature::ClockData(c)) => Ok(Clock {
                host,
                clockid: (sample_clock(feed.meta()), c.clockid),
                origin: i128::from(c.wall_clock_ns) - i128::from(c.clockid_time_ns),
                at: c.clockid_time_ns,
            }),
            _ => Err(WriteError::unsupported(
                None,
                format!(
                    "{}: no CLOCK_DATA feature to align its clock by (perf record writes \
                     one with --clockid, e.g. --clockid monotonic; --align start needs none)",
                    feed.name
                ),
            )),
        }
    }

    /// Whether `other` is this very clock: one host's same clockid, in one boot. Boots
    /// are told apart by the origins: a later boot's clock started after the earlier
    /// recording's reference moment, so their origins differ by at least the earlier
    /// one's clock time then (`at`); one boot's differ by CLOCK_DATA's error (its wall
    /// time is gettimeofday's, in microseconds) and by steps of the wall clock.
    pub(super) fn same_as(&self, other: &Clock) -> bool {
        self.host.is_some()
            && (&self.host, self.clockid) == (&other.host, other.clockid)
            && (self.origin - other.origin).unsigned_abs() < u128::from(self.at.min(other.at))
    }
}

/// The clock an input's sample times come from: `None` for perf's own (the kernel's
/// local clock), else the clockid.
fn sample_clock(meta: &Metadata) -> Option<i32> {
    use perfdata_core::attr::AttrFlags;
    let attr = &meta.attrs().first()?.attr;
    attr.flags
        .contains(AttrFlags::USE_CLOCKID)
        .then_some(attr.clockid)
}

/// A warning when inputs whose times cannot be compared keep their clocks: their
/// records are merged by numbers that do not mean the same moment.
pub(super) fn clock_warning(
    feeds: &[Feed],
    inputs: &[MergedInput],
    align: Align,
) -> Option<String> {
    if align != Align::Keep {
        return None;
    }
    let first = sample_clock(feeds[0].meta());
    let apart: Vec<String> = feeds
        .iter()
        .zip(inputs)
        .skip(1)
        .filter_map(|(f, i)| {
            if i.hostname != inputs[0].hostname {
                Some(format!("{} (another host)", f.name))
            } else if sample_clock(f.meta()) != first {
                Some(format!("{} (another clock)", f.name))
            } else {
                None
            }
        })
        .collect();
    (!apart.is_empty()).then(|| {
        format!(
            "the times of {} are not on {}'s clock and are kept as they are: --align \
             clock puts them on it (by CLOCK_DATA, perf record --clockid), --align start \
             lines up the first samples",
            apart.join(", "),
            feeds[0].name
        )
    })
}
