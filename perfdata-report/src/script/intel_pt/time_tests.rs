//! perf's bounds of a --time window in TSC (`intel_pt_setup_time_ranges`): the first
//! TSC at or after the start, the last at or before the end. The windows of the corpus
//! recording (intel_pt_time) rarely put a record on the one TSC an off-by-one moves.

use super::{tsc_end, tsc_start};
use crate::intel_pt::info::IntelPtInfo;

/// The AUXTRACE_INFO of the corpus's google-perf.data.intel_pt-4.14 (its TSC
/// conversion: time_shift 31, time_mult 1789569706, time_zero as recorded).
fn info() -> IntelPtInfo {
    let words = [
        6,
        31,
        1789569706,
        18446744041015200657,
        1,
        1024,
        2048,
        3,
        0,
        1,
        512,
        245760,
        100,
        2,
        2,
        12,
        0,
    ];
    IntelPtInfo::from_priv(&words).expect("Intel PT's AUXTRACE_INFO")
}

#[test]
fn a_window_is_the_tscs_whose_times_are_in_it() {
    let info = info();
    let tc = &info.tc;
    for ns in [
        641_256_820_000u64,
        641_256_845_123,
        641_300_000_001,
        1_000_000_007,
    ] {
        let start = tsc_start(&info, ns);
        assert!(tc.to_perf_time(start) >= ns && tc.to_perf_time(start - 1) < ns);
        let end = tsc_end(&info, ns);
        assert!(tc.to_perf_time(end) <= ns && tc.to_perf_time(end + 1) > ns);
    }
}
