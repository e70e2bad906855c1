//! Fixed-layout features: NRCPUS, SAMPLE_TIME, COMPRESSED, CLOCK_DATA.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use binrw::binrw;
use serde::Serialize;

/// NRCPUS: CPUs the system has (available) and had online while recording.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct NrCpus {
    /// CPUs the system has.
    pub nr_cpus_available: u32,
    /// CPUs online when recording.
    pub nr_cpus_online: u32,
}

/// SAMPLE_TIME: the first and last sample time. Edits that drop samples should update it.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SampleTime {
    /// Time of the first sample (ns).
    pub first: u64,
    /// Time of the last sample (ns).
    pub last: u64,
}

/// COMPRESSED: how the COMPRESSED records of the data were made.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Compressed {
    /// Format version (0).
    pub version: u32,
    /// 1 = zstd.
    #[serde(rename = "type")]
    pub type_: u32,
    /// zstd compression level.
    pub level: u32,
    /// Bytes in per byte out, rounded.
    pub ratio: u32,
    /// The largest decompressed size of one compressed record.
    pub mmap_len: u32,
}

impl Compressed {
    /// The feature perf writes for zstd at `level` (version 0, type 1).
    pub fn zstd(level: u32, ratio: u32, mmap_len: u32) -> Self {
        Compressed {
            version: 0,
            type_: 1,
            level,
            ratio,
            mmap_len,
        }
    }
}

/// CLOCK_DATA: a reference point between the wall clock and the recording clock.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ClockData {
    /// Format version (1).
    pub version: u32,
    /// The clock sample times come from.
    pub clockid: u32,
    /// Wall-clock time when recording began (ns since the epoch).
    pub wall_clock_ns: u64,
    /// The same moment on the sampling clock (ns).
    pub clockid_time_ns: u64,
}
