//! What perf 6.1's `perf script` synthesizes from the decoder's states by default, and
//! the text of the synthesized events' payloads.
//!
//! perf script's default `--itrace` (auxtrace.c `itrace_synth_opts__set_default` with
//! `default_no_sample`) keeps, among the branches, calls only: the `branches` samples are
//! filtered by PERF_IP_FLAG_CALL | ASYNC | TRACE_END (intel-pt.c `branches_filter`). With
//! no instruction decoded, the branches that pass are the asynchronous ones (a FUP and
//! its TIP: an interrupt or a syscall) and the trace ends (TIP.PGD). `psb` and `cbr`
//! come with the other and power events (`intel_pt_synth_psb_sample`,
//! `intel_pt_synth_cbr_sample`), in that order, before the branch.

use super::state::{flags, kind, State};

/// One synthesized sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Synth {
    /// `psb`: the PSB's offset in the trace, at the state's ip (0 when PSB+ had no FUP).
    Psb {
        /// Offset of the PSB.
        offset: u64,
        /// The sample's ip.
        ip: u64,
    },
    /// `cbr`: the new core:bus ratio, at the state's ip.
    Cbr {
        /// The ratio.
        cbr: u32,
        /// The sample's ip.
        ip: u64,
    },
    /// `branches`: a branch from `from` to `to` (0: tracing stopped).
    Branch {
        /// The branch's source (the sample's ip).
        from: u64,
        /// Its target (the sample's addr).
        to: u64,
    },
}

/// The samples perf script synthesizes for `state` (none for an error).
pub fn samples(state: &State) -> Vec<Synth> {
    let mut out = Vec::new();
    if state.err.is_some() {
        return out;
    }
    if state.kind & kind::PSB_EVT != 0 {
        out.push(Synth::Psb {
            offset: state.psb_offset,
            ip: state.from_ip,
        });
    }
    if state.kind & kind::CBR_CHG != 0 {
        out.push(Synth::Cbr {
            cbr: state.cbr,
            ip: state.from_ip,
        });
    }
    if state.kind & kind::BRANCH != 0
        && (state.flags & flags::ASYNC != 0 || state.kind & kind::TRACE_END != 0)
    {
        out.push(Synth::Branch {
            from: state.from_ip,
            to: state.to_ip,
        });
    }
    out
}

/// perf script's `perf_sample__fprintf_pt_spacing`: the synth field padded to 34
/// columns (the ip column follows).
fn pad(mut s: String) -> String {
    const SPACING: usize = 34;
    if !s.is_empty() && s.len() < SPACING {
        s.push_str(&" ".repeat(SPACING - s.len()));
    }
    s
}

/// C's `%#llx`: "0" for zero.
fn alt_hex(v: u64) -> String {
    if v == 0 {
        "0".to_string()
    } else {
        format!("{v:#x}")
    }
}

/// The synth field perf script prints for a `psb` or `cbr` sample
/// (`perf_sample__fprintf_synth_psb`, `_cbr`): `khz_per_cbr` is perf's `cbr2khz` (TSC
/// kHz over the maximum non-turbo ratio), `max_non_turbo` the ratio (0: no percentage).
/// `None` for a branch, which perf prints as `ip => addr`.
pub fn synth_field(s: &Synth, khz_per_cbr: u64, max_non_turbo: u32) -> Option<String> {
    match s {
        Synth::Psb { offset, .. } => Some(pad(format!(" psb offs: {}", alt_hex(*offset)))),
        Synth::Cbr { cbr, .. } => {
            // perf's u64 arithmetic wraps: a damaged TSC frequency must not panic.
            let freq_mhz = u64::from(*cbr).wrapping_mul(khz_per_cbr) / 1000;
            let mut text = format!(" cbr: {cbr:2} freq: {freq_mhz:4} MHz ");
            if max_non_turbo != 0 {
                let percent = (5 + (1000 * u64::from(*cbr)) / u64::from(max_non_turbo)) / 10;
                text.push_str(&format!("({percent:3}%) "));
            }
            Some(pad(text))
        }
        Synth::Branch { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_as_perf_prints_them() {
        // From `perf script` of google-perf.data.intel_pt-4.14 (TSC 1.2 GHz, max
        // non-turbo ratio 12): the text between the event name and the ip, whose
        // column starts with a space.
        let psb0 = Synth::Psb { offset: 0, ip: 1 };
        let psb = Synth::Psb {
            offset: 0x4258,
            ip: 0,
        };
        let cbr = Synth::Cbr { cbr: 29, ip: 1 };
        assert_eq!(
            synth_field(&psb0, 100_000, 12).unwrap() + " ",
            " psb offs: 0                       "
        );
        assert_eq!(
            synth_field(&psb, 100_000, 12).unwrap(),
            " psb offs: 0x4258                 "
        );
        assert_eq!(
            synth_field(&cbr, 100_000, 12).unwrap() + " ",
            " cbr: 29 freq: 2900 MHz (242%)     "
        );
        assert_eq!(synth_field(&Synth::Branch { from: 1, to: 2 }, 1, 1), None);
    }

    #[test]
    fn calls_async_and_trace_ends_only() {
        let mut s = State {
            kind: kind::BRANCH,
            from_ip: 1,
            to_ip: 2,
            ..State::default()
        };
        assert_eq!(samples(&s), []);
        s.flags = flags::ASYNC;
        assert_eq!(samples(&s), [Synth::Branch { from: 1, to: 2 }]);
        s.flags = 0;
        s.kind |= kind::TRACE_END | kind::PSB_EVT | kind::CBR_CHG;
        s.cbr = 29;
        assert_eq!(
            samples(&s),
            [
                Synth::Psb { offset: 0, ip: 1 },
                Synth::Cbr { cbr: 29, ip: 1 },
                Synth::Branch { from: 1, to: 2 }
            ]
        );
        s.err = Some(super::super::state::DecodeError::NoInstruction);
        assert_eq!(samples(&s), []);
    }

    /// A damaged TSC frequency (AUXTRACE_INFO is the file's) gives a wrapped figure,
    /// never a panic in a debug build.
    #[test]
    fn a_huge_frequency_wraps() {
        let s = Synth::Cbr { cbr: 255, ip: 0 };
        let text = synth_field(&s, u64::MAX / 100, 1).unwrap();
        let wrapped = 255u64.wrapping_mul(u64::MAX / 100) / 1000;
        assert!(text.contains(&format!("freq: {wrapped:4} MHz")), "{text}");
    }
}
