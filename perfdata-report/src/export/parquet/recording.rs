//! What the recordings table says of a recording, and its id: read from the header and
//! features before the samples are.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;

use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::Metadata;
use sha1::{Digest, Sha1};

/// Bytes hashed from the start of an input whose features are not in a file's feature
/// sections (pipe mode).
const HEAD_BYTES: u64 = 1 << 20;

/// A recording's header facts, as the recordings table and the partitions name them.
#[derive(Debug, Clone)]
pub struct RecordingInfo {
    /// 16 hex digits: the first 64 bits of the SHA-1 of the file header and feature
    /// sections as stored ([`recording_id`]).
    pub id: String,
    /// The HOSTNAME feature.
    pub hostname: Option<String>,
    /// The OSRELEASE feature.
    pub os_release: Option<String>,
    /// The CMDLINE feature, its words joined by spaces (as `perf report --header`).
    pub cmdline: Option<String>,
    /// The VERSION feature: the perf that recorded.
    pub perf_version: Option<String>,
    /// Days since 1970-01-01 (UTC) of when recording began: from CLOCK_DATA where the
    /// recording has it, else the input's modification time (when perf finished it).
    pub date: Option<i32>,
    /// (DSO, build id in hex), as BUILD_ID lists them.
    pub build_ids: Vec<(String, String)>,
}

impl RecordingInfo {
    /// The facts of the recording at `path` whose metadata is `meta` (read before its
    /// records: a pipe-mode recording's features come among its records, and those
    /// it has are not known here).
    pub fn read(path: &Path, meta: &Metadata) -> std::io::Result<RecordingInfo> {
        let string = |id| match meta.feature(id) {
            Some(Feature::Hostname(s))
            | Some(Feature::OsRelease(s))
            | Some(Feature::Version(s)) => Some(s.as_str_lossy()),
            _ => None,
        };
        let cmdline = match meta.feature(FeatureId::Cmdline) {
            Some(Feature::Cmdline(l)) => Some(l.to_strings().join(" ")),
            _ => None,
        };
        let build_ids = match meta.feature(FeatureId::BuildId) {
            Some(Feature::BuildId(list)) => list
                .entries
                .iter()
                .map(|e| (e.filename_str(), hex(e.build_id())))
                .collect(),
            _ => Vec::new(),
        };
        let date = match meta.feature(FeatureId::ClockData) {
            Some(Feature::ClockData(c)) if c.wall_clock_ns > 0 => {
                Some((c.wall_clock_ns / 1_000_000_000 / 86_400) as i32)
            }
            _ => modified_day(path),
        };
        Ok(RecordingInfo {
            id: recording_id(path, meta)?,
            hostname: string(FeatureId::Hostname),
            os_release: string(FeatureId::OsRelease),
            cmdline,
            perf_version: string(FeatureId::Version),
            date,
            build_ids,
        })
    }
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The day (since the epoch) `path` (or a perf.data directory's `data`) was last
/// modified.
fn modified_day(path: &Path) -> Option<i32> {
    let m = std::fs::metadata(path).ok()?.modified().ok()?;
    let secs = m.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
    Some((secs / 86_400) as i32)
}

/// The file holding a recording's header: the file itself, or a perf.data directory's
/// `data` (perf record --threads).
fn header_file(path: &Path) -> std::io::Result<File> {
    if path.is_dir() {
        File::open(path.join("data"))
    } else {
        File::open(path)
    }
}

/// A recording's id: the first 64 bits of the SHA-1 of its file header and of its
/// feature sections as stored (a file's), which name the data section's size, the
/// host, the command line, the build ids and the first and last sample times, so that
/// two recordings differ and the same recording exported again has the same id. A
/// recording without feature sections (pipe mode) hashes its first MiB and its length
/// instead.
pub fn recording_id(path: &Path, meta: &Metadata) -> std::io::Result<String> {
    let file = header_file(path)?;
    let mut h = Sha1::new();
    let read = |at: u64, len: u64, h: &mut Sha1| -> std::io::Result<()> {
        let mut buf = vec![0u8; len.min(HEAD_BYTES) as usize];
        file.read_exact_at(&mut buf, at)?;
        h.update(&buf);
        Ok(())
    };
    match &meta.header {
        Some(header) if !meta.feature_sections.is_empty() => {
            read(0, header.size, &mut h)?;
            // Each section whole: BUILD_ID lists can exceed a MiB.
            for s in meta.feature_sections.values() {
                let mut left = s.size;
                let mut at = s.offset;
                while left > 0 {
                    let n = left.min(HEAD_BYTES);
                    read(at, n, &mut h)?;
                    at += n;
                    left -= n;
                }
            }
        }
        _ => {
            let len = file.metadata()?.len();
            let mut head = Vec::new();
            (&file).take(HEAD_BYTES).read_to_end(&mut head)?;
            h.update(&head);
            h.update(len.to_le_bytes());
        }
    }
    Ok(hex(&h.finalize()[..8]))
}

/// `days` since 1970-01-01 as `YYYY-MM-DD` (the proleptic Gregorian calendar, as
/// Parquet's DATE is).
pub fn date_text(days: i32) -> String {
    // Howard Hinnant's civil_from_days.
    let z = i64::from(days) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::date_text;

    #[test]
    fn dates_are_the_calendars() {
        assert_eq!(date_text(0), "1970-01-01");
        assert_eq!(date_text(59), "1970-03-01");
        assert_eq!(date_text(11_016), "2000-02-29");
        assert_eq!(date_text(20_783), "2026-11-26");
        assert_eq!(date_text(-1), "1969-12-31");
    }
}
