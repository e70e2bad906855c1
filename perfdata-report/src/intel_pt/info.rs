//! Intel PT's AUXTRACE_INFO (perf 6.1's intel-pt.h `INTEL_PT_*` priv words) and the
//! decoder parameters perf derives from it and from the intel_pt event's config
//! (intel-pt.c: `intel_pt_process_auxtrace_info`, `intel_pt_mtc_period`,
//! `intel_pt_return_compression`, `intel_pt_branch_enable`).

use perfdata_core::EventAttr;

use super::state::DecoderParams;
use super::timing::{TimingParams, TscConversion};

/// PERF_AUXTRACE_INTEL_PT.
pub const AUXTRACE_TYPE: u32 = 1;

/// The Intel PT PMU's BranchEn bit of the event config (perf's INTEL_PT_CFG_BRANCH_EN).
const BRANCH_ENABLE: u64 = 1 << 13;
/// perf's INTEL_PT_CFG_PASS_THRU: the config is passed to the MSR as is.
const PASS_THRU: u64 = 1;

/// AUXTRACE_INFO's words for Intel PT, by perf's names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IntelPtInfo {
    /// The intel_pt PMU's type.
    pub pmu_type: u32,
    /// The TSC conversion (TIME_SHIFT, TIME_MULT, TIME_ZERO, CAP_USER_TIME_ZERO).
    pub tc: TscConversion,
    /// Config bit of TSC packets.
    pub tsc_bit: u64,
    /// Config bit that turns RET compression off.
    pub noretcomp_bit: u64,
    /// Whether context switches were recorded (1: sched_switch, 2/3: switch events).
    pub have_sched_switch: u64,
    /// Snapshot mode.
    pub snapshot_mode: bool,
    /// Per-CPU mmaps.
    pub per_cpu_mmaps: bool,
    /// Config bit of MTC packets.
    pub mtc_bit: u64,
    /// Config bits of the MTC period.
    pub mtc_freq_bits: u64,
    /// TSC:CTC ratio numerator.
    pub tsc_ctc_ratio_n: u32,
    /// TSC:CTC ratio denominator.
    pub tsc_ctc_ratio_d: u32,
    /// Config bit of CYC packets.
    pub cyc_bit: u64,
    /// Maximum non-turbo ratio.
    pub max_non_turbo_ratio: u32,
}

impl IntelPtInfo {
    /// The words of an AUXTRACE_INFO record of type 1; `None` when too few (perf
    /// refuses those: `intel_pt_process_auxtrace_info` wants up to
    /// INTEL_PT_PER_CPU_MMAPS, the later words are optional).
    pub fn from_priv(words: &[u64]) -> Option<IntelPtInfo> {
        if words.len() < 10 {
            return None;
        }
        let w = |i: usize| words.get(i).copied().unwrap_or(0);
        Some(IntelPtInfo {
            pmu_type: w(0) as u32,
            tc: TscConversion {
                time_shift: w(1) as u16,
                time_mult: w(2) as u32,
                time_zero: w(3),
                cap_user_time_zero: w(4) != 0,
                ..TscConversion::default()
            },
            tsc_bit: w(5),
            noretcomp_bit: w(6),
            have_sched_switch: w(7),
            snapshot_mode: w(8) != 0,
            per_cpu_mmaps: w(9) != 0,
            mtc_bit: w(10),
            mtc_freq_bits: w(11),
            tsc_ctc_ratio_n: w(12) as u32,
            tsc_ctc_ratio_d: w(13) as u32,
            cyc_bit: w(14),
            max_non_turbo_ratio: w(15) as u32,
        })
    }

    /// The config of the first intel_pt event (perf's `intel_pt_get_config`).
    pub fn config(&self, attrs: &[EventAttr]) -> Option<u64> {
        attrs
            .iter()
            .find(|a| a.attr.type_ == self.pmu_type)
            .map(|a| a.attr.config)
    }

    /// The decoder's parameters for an event `config`.
    pub fn decoder_params(&self, config: u64) -> DecoderParams {
        let mtc_shift = if self.mtc_freq_bits == 0 {
            0
        } else {
            let shift = self.mtc_freq_bits.trailing_zeros();
            ((config & self.mtc_freq_bits) >> shift) as u32
        };
        DecoderParams {
            timing: TimingParams {
                mtc_shift,
                tsc_ctc_ratio_n: self.tsc_ctc_ratio_n,
                tsc_ctc_ratio_d: self.tsc_ctc_ratio_d,
                max_non_turbo_ratio: self.max_non_turbo_ratio,
            },
            return_compression: self.noretcomp_bit == 0 || config & self.noretcomp_bit == 0,
            // Branches are traced unless a pass-through config leaves BranchEn out.
            branch_enable: config & PASS_THRU == 0 || config & BRANCH_ENABLE != 0,
        }
    }
}
