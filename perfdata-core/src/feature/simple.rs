//! Fixed-layout features: NRCPUS, SAMPLE_TIME, COMPRESSED, CLOCK_DATA.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.
#![allow(missing_docs)]

use binrw::binrw;
use serde::Serialize;

/// NRCPUS: CPUs the system has (available) and had online while recording.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct NrCpus {
    pub nr_cpus_available: u32,
    pub nr_cpus_online: u32,
}

/// SAMPLE_TIME: the first and last sample time. Edits that drop samples should update it.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SampleTime {
    pub first: u64,
    pub last: u64,
}

/// COMPRESSED: how the COMPRESSED records of the data were made.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Compressed {
    pub version: u32,
    /// 1 = zstd.
    #[serde(rename = "type")]
    pub type_: u32,
    pub level: u32,
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
    pub version: u32,
    pub clockid: u32,
    pub wall_clock_ns: u64,
    pub clockid_time_ns: u64,
}
