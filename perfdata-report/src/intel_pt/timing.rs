//! The decoder's clock, as perf 6.1's intel-pt-decoder.c keeps it: TSC packets give the
//! time (`intel_pt_calc_tsc_timestamp`), TMA ties the CTC (the crystal clock MTC counts)
//! to it (`intel_pt_calc_tma`), each MTC then advances it by CTC periods
//! (`intel_pt_calc_mtc_timestamp`), CYC by core cycles scaled by the CBR ratio
//! (`intel_pt_calc_cyc_timestamp`). Times are TSC ticks; [`TscConversion`] turns them into
//! perf's nanoseconds (util/tsc.c).

/// perf's `multdiv`: `t * n / d` without overflowing the product.
fn multdiv(t: u64, n: u32, d: u32) -> u64 {
    if d == 0 {
        return 0;
    }
    let (n, d) = (u64::from(n), u64::from(d));
    (t / d)
        .wrapping_mul(n)
        .wrapping_add(((t % d).wrapping_mul(n)) / d)
}

/// The parameters the clock needs, from AUXTRACE_INFO and the event's config.
#[derive(Debug, Clone, Copy, Default)]
pub struct TimingParams {
    /// MTC period: CTC ticks per MTC are `1 << mtc_shift`.
    pub mtc_shift: u32,
    /// TSC:CTC ratio numerator.
    pub tsc_ctc_ratio_n: u32,
    /// TSC:CTC ratio denominator.
    pub tsc_ctc_ratio_d: u32,
    /// The processor's maximum non-turbo ratio (the CBR of TSC frequency).
    pub max_non_turbo_ratio: u32,
}

/// The clock's state: perf's decoder fields of the same names.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    params: TimingParams,
    tsc_ctc_mult: u32,
    ctc_rem_mask: u32,
    /// perf's `tsc_slip`: how far back a TSC may go and be taken as slippage.
    tsc_slip: u64,
    /// The current time (TSC ticks), 0 before any.
    pub timestamp: u64,
    /// The time of the last TSC packet.
    pub tsc_timestamp: u64,
    /// The buffer's reference TSC, used (once) to complete the first TSC's 8th byte.
    pub ref_timestamp: u64,
    /// The reference TSC of the current buffer.
    pub buf_timestamp: u64,
    /// Whether a TMA has tied CTC to TSC since the last TSC.
    pub have_tma: bool,
    ctc_timestamp: u64,
    ctc_delta: u64,
    last_mtc: u32,
    last_ctc: u32,
    fixup_last_mtc: bool,
    /// The current core:bus ratio (CBR), 0 before any.
    pub cbr: u32,
    /// The last CBR packet's payload.
    pub cbr_payload: u64,
    cbr_cyc_to_tsc: f64,
    cycle_cnt: u64,
    cyc_ref_timestamp: u64,
    /// Instructions since the timestamp was set (perf's `timestamp_insn_cnt`).
    pub timestamp_insn_cnt: u64,
}

impl Clock {
    /// A clock with `params` (perf's `intel_pt_decoder_new`).
    pub fn new(params: TimingParams) -> Clock {
        let mut p = params;
        // The config's MTC period field is 4 bits; a damaged one must not overflow the
        // shifts (perf's C would shift by it regardless).
        p.mtc_shift = p.mtc_shift.min(15);
        if p.tsc_ctc_ratio_n == 0 {
            p.tsc_ctc_ratio_d = 0;
        }
        let tsc_ctc_mult =
            if p.tsc_ctc_ratio_d != 0 && p.tsc_ctc_ratio_n.is_multiple_of(p.tsc_ctc_ratio_d) {
                p.tsc_ctc_ratio_n / p.tsc_ctc_ratio_d
            } else {
                0
            };
        Clock {
            params: p,
            tsc_ctc_mult,
            ctc_rem_mask: (1u32 << p.mtc_shift) - 1,
            // perf: "A TSC packet can slip past MTC packets ... accept slippage an order
            // of magnitude more to be on the safe side."
            tsc_slip: 0x10000,
            ..Clock::default()
        }
    }

    fn ctc_to_tsc(&self, ctc: u64) -> u64 {
        if self.tsc_ctc_mult != 0 {
            ctc.wrapping_mul(u64::from(self.tsc_ctc_mult))
        } else {
            multdiv(
                ctc,
                self.params.tsc_ctc_ratio_n,
                self.params.tsc_ctc_ratio_d,
            )
        }
    }

    /// perf's `intel_pt_reposition` (the clock's part): a new, not consecutive, buffer.
    pub fn reposition(&mut self, ref_timestamp: u64) {
        self.timestamp = 0;
        self.have_tma = false;
        self.ref_timestamp = ref_timestamp;
    }

    /// `intel_pt_calc_tsc_timestamp` for a TSC packet's `payload` (7 bytes).
    /// `last_was_cyc`: the packet before was a CYC.
    pub fn tsc(&mut self, payload: u64, last_was_cyc: bool) {
        self.have_tma = false;
        if self.ref_timestamp != 0 {
            let t = eight_byte_tsc(payload, self.ref_timestamp);
            self.tsc_timestamp = t;
            self.timestamp = t;
            self.ref_timestamp = 0;
            self.timestamp_insn_cnt = 0;
        } else if self.timestamp != 0 {
            let mut t = payload | (self.timestamp & (0xff << 56));
            self.tsc_timestamp = t;
            if t < self.timestamp && self.timestamp - t < self.tsc_slip {
                // Suppressing backwards timestamp.
                t = self.timestamp;
            }
            if t < self.timestamp {
                if self.buf_timestamp == 0 || t.wrapping_add(1 << 56) < self.buf_timestamp {
                    t = t.wrapping_add(1 << 56);
                    self.tsc_timestamp = t;
                } else {
                    t = self.timestamp;
                }
            }
            self.timestamp = t;
            self.timestamp_insn_cnt = 0;
        }
        if last_was_cyc {
            self.cyc_ref_timestamp = self.timestamp;
            self.cycle_cnt = 0;
        }
    }

    /// `intel_pt_calc_tma` for a TMA packet: `ctc` (its payload) and `fc` (its count).
    pub fn tma(&mut self, ctc: u64, fc: u32) {
        let ctc = ctc as u32;
        let ctc_rem = ctc & self.ctc_rem_mask;
        if self.params.tsc_ctc_ratio_d == 0 {
            return;
        }
        self.last_mtc = (ctc >> self.params.mtc_shift) & 0xff;
        self.last_ctc = ctc - ctc_rem;
        self.ctc_timestamp = self
            .tsc_timestamp
            .wrapping_sub(u64::from(fc))
            .wrapping_sub(self.ctc_to_tsc(u64::from(ctc_rem)));
        self.ctc_delta = 0;
        self.have_tma = true;
        self.fixup_last_mtc = true;
    }

    /// `intel_pt_calc_mtc_timestamp` for an MTC packet's `payload`.
    pub fn mtc(&mut self, payload: u64, last_was_cyc: bool) {
        if !self.have_tma {
            return;
        }
        let mtc = payload as u32;
        if self.params.mtc_shift > 8 && self.fixup_last_mtc {
            self.fixup_last_mtc = false;
            fixup_last_mtc(mtc, self.params.mtc_shift, &mut self.last_mtc);
        }
        let mtc_delta = if mtc > self.last_mtc {
            mtc - self.last_mtc
        } else {
            mtc + 256 - self.last_mtc
        };
        self.ctc_delta = self
            .ctc_delta
            .wrapping_add(u64::from(mtc_delta) << self.params.mtc_shift);
        let t = self
            .ctc_timestamp
            .wrapping_add(self.ctc_to_tsc(self.ctc_delta));
        // perf suppresses an MTC time less than the current one.
        if t >= self.timestamp {
            self.timestamp = t;
        }
        self.timestamp_insn_cnt = 0;
        self.last_mtc = mtc;
        if last_was_cyc {
            self.cyc_ref_timestamp = self.timestamp;
            self.cycle_cnt = 0;
        }
    }

    /// `intel_pt_calc_cbr` for a CBR packet's `payload`.
    pub fn cbr(&mut self, payload: u64) {
        let cbr = (payload & 0xff) as u32;
        self.cbr_payload = payload;
        if self.cbr == cbr {
            return;
        }
        self.cbr = cbr;
        self.cbr_cyc_to_tsc = f64::from(self.params.max_non_turbo_ratio) / f64::from(cbr);
    }

    /// `intel_pt_calc_cyc_timestamp` for a CYC packet's `payload`, with the CBR-based
    /// ratio (perf refines it by looking ahead to the next MTC when a CYC precedes an MTC;
    /// that refinement is not ported: the recordings read here have no CYC).
    pub fn cyc(&mut self, payload: u64) {
        self.cycle_cnt = self.cycle_cnt.wrapping_add(payload);
        if self.cyc_ref_timestamp == 0 || self.cbr == 0 {
            return;
        }
        let t = self
            .cyc_ref_timestamp
            .wrapping_add((self.cycle_cnt as f64 * self.cbr_cyc_to_tsc) as u64);
        if t >= self.timestamp {
            self.timestamp = t;
        }
        self.timestamp_insn_cnt = 0;
    }

    /// `intel_pt_est_timestamp`: the sample time plus 2 ticks per instruction scaled by
    /// the CBR.
    pub fn estimate(&self, sample_timestamp: u64, sample_insn_cnt: u64) -> u64 {
        let mut est = sample_insn_cnt << 1;
        if self.cbr != 0 && self.params.max_non_turbo_ratio != 0 {
            est =
                est.wrapping_mul(u64::from(self.params.max_non_turbo_ratio)) / u64::from(self.cbr);
        }
        sample_timestamp.wrapping_add(est)
    }
}

/// `intel_pt_8b_tsc`: a 7-byte TSC completed with the 8th byte of `ref_timestamp`,
/// nearest to it.
pub(super) fn eight_byte_tsc(timestamp: u64, ref_timestamp: u64) -> u64 {
    let mut t = timestamp | (ref_timestamp & (0xff << 56));
    if t < ref_timestamp {
        if ref_timestamp - t > (1 << 55) {
            t = t.wrapping_add(1 << 56);
        }
    } else if t - ref_timestamp > (1 << 55) {
        t = t.wrapping_sub(1 << 56);
    }
    t
}

/// `intel_pt_fixup_last_mtc`: MTC bits the TMA's 16-bit CTC lacks when mtc_shift > 8.
fn fixup_last_mtc(mtc: u32, mtc_shift: u32, last_mtc: &mut u32) {
    let first_missing_bit = 1u32 << (16 - mtc_shift.min(16));
    let mask = !(first_missing_bit - 1);
    *last_mtc |= mtc & mask;
    if *last_mtc >= mtc {
        *last_mtc = last_mtc.wrapping_sub(first_missing_bit) & 0xff;
    }
}

/// perf's `struct perf_tsc_conversion` and `tsc_to_perf_time` (util/tsc.c): TSC ticks to
/// perf's nanoseconds, from TIME_CONV (or AUXTRACE_INFO's copy of it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TscConversion {
    /// Shift of the multiplication.
    pub time_shift: u16,
    /// Multiplier.
    pub time_mult: u32,
    /// Nanoseconds at TSC 0.
    pub time_zero: u64,
    /// The TSC value at time_zero (cap_user_time_short).
    pub time_cycles: u64,
    /// Mask of the TSC bits counted (cap_user_time_short).
    pub time_mask: u64,
    /// Whether time_zero is valid.
    pub cap_user_time_zero: bool,
    /// Whether the counter is short.
    pub cap_user_time_short: bool,
}

impl TscConversion {
    /// `tsc_to_perf_time`.
    pub fn to_perf_time(&self, cyc: u64) -> u64 {
        let cyc = if self.cap_user_time_short {
            self.time_cycles
                .wrapping_add(cyc.wrapping_sub(self.time_cycles) & self.time_mask)
        } else {
            cyc
        };
        let shift = u32::from(self.time_shift).min(63);
        let mult = u64::from(self.time_mult);
        let quot = cyc >> shift;
        let rem = cyc & ((1u64 << shift) - 1);
        self.time_zero
            .wrapping_add(quot.wrapping_mul(mult))
            .wrapping_add(rem.wrapping_mul(mult) >> shift)
    }

    /// `perf_time_to_tsc`: perf's nanoseconds back to TSC ticks.
    pub fn to_tsc(&self, ns: u64) -> u64 {
        let shift = u32::from(self.time_shift).min(63);
        let mult = u64::from(self.time_mult).max(1);
        let t = ns.wrapping_sub(self.time_zero);
        let quot = t / mult;
        let rem = t % mult;
        (quot << shift).wrapping_add((rem << shift) / mult)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_parameters_do_not_overflow() {
        let mut clock = Clock::new(TimingParams {
            mtc_shift: u32::MAX,
            tsc_ctc_ratio_n: u32::MAX,
            tsc_ctc_ratio_d: 1,
            max_non_turbo_ratio: u32::MAX,
        });
        clock.reposition(u64::MAX);
        clock.tsc(u64::MAX >> 8, false);
        clock.tma(0xffff, 0x1ff);
        clock.mtc(0xff, true);
        clock.cbr(1);
        clock.cyc(u64::MAX);
        let _ = clock.estimate(u64::MAX, u64::MAX);
        let tc = TscConversion {
            time_shift: u16::MAX,
            time_mult: u32::MAX,
            time_zero: u64::MAX,
            ..TscConversion::default()
        };
        let _ = tc.to_perf_time(u64::MAX);
        let _ = tc.to_tsc(0);
    }

    #[test]
    fn tsc_to_perf_time_as_perf() {
        // The corpus recording's TIME_CONV; its first PSB's TSC and perf's time of it.
        let tc = TscConversion {
            time_shift: 31,
            time_mult: 1_789_569_706,
            time_zero: 18_446_744_041_015_200_657,
            ..TscConversion::default()
        };
        let ns = tc.to_perf_time(0x00bc_4cd2_cfe8);
        assert_eq!(ns / 1000, 641_257_928);
        // perf_time_to_tsc rounds down: back within a tick.
        assert!(tc.to_tsc(ns).abs_diff(0x00bc_4cd2_cfe8) <= 1);
    }
}
