//! Callchains as perf reads them: context markers, the user frames an unwinding adds,
//! and each entry resolved in the mode its markers say.

use crate::process::{Location, Machine};

/// PERF_CONTEXT_MAX: callchain entries at or above it are context markers.
const PERF_CONTEXT_MAX: u64 = -4095i64 as u64;
/// PERF_CONTEXT_KERNEL: the entries that follow are kernel addresses.
const PERF_CONTEXT_KERNEL: u64 = -128i64 as u64;
/// PERF_CONTEXT_USER: the entries that follow are user addresses.
const PERF_CONTEXT_USER: u64 = -512i64 as u64;

/// A recorded callchain with unwound user frames: its kernel part as recorded (up to a
/// PERF_CONTEXT_USER marker, if the kernel wrote one), then PERF_CONTEXT_USER and the
/// frames, as a frame-pointer callchain is laid out. Without frames, the chain as it was.
pub(crate) fn with_user_frames(chain: &[u64], frames: &[u64]) -> Vec<u64> {
    if frames.is_empty() {
        return chain.to_vec();
    }
    let kernel = chain
        .iter()
        .position(|&e| e == PERF_CONTEXT_USER)
        .unwrap_or(chain.len());
    let mut out = Vec::with_capacity(kernel + 1 + frames.len());
    out.extend_from_slice(&chain[..kernel]);
    out.push(PERF_CONTEXT_USER);
    out.extend_from_slice(frames);
    out
}

/// PERF_CONTEXT_HV: the entries that follow are hypervisor addresses.
const PERF_CONTEXT_HV: u64 = -32i64 as u64;

/// Resolve a callchain as perf 6.1's `thread__resolve_callchain_sample` does: entries
/// start in user mode, a PERF_CONTEXT_KERNEL marker switches to kernel mode, USER and HV
/// to user mode; markers are not frames. Any other marker (a guest's, or -1 where the
/// kernel's walk went wrong) makes perf discard the whole chain ("invalid callchain
/// context"), and so it is discarded here: the sample has no frames.
pub(super) fn resolve_chain(
    machine: &mut Machine,
    pid: i32,
    tid: i32,
    chain: &[u64],
) -> Vec<Location> {
    let mut kernel = false;
    let mut frames = Vec::with_capacity(chain.len());
    for &ip in chain {
        if ip >= PERF_CONTEXT_MAX {
            match ip {
                PERF_CONTEXT_KERNEL => kernel = true,
                PERF_CONTEXT_USER | PERF_CONTEXT_HV => kernel = false,
                _ => return Vec::new(),
            }
            continue;
        }
        frames.push(machine.resolve(pid, tid, ip, kernel));
    }
    frames
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_context_marker_discards_the_chain_as_perf_does() {
        let mut m = Machine::new();
        // A user frame, then the kernel's -1 (seen in a `-g` recording of xz): perf
        // 6.1 prints the sample with no frames.
        let bad = [PERF_CONTEXT_USER, 0x7f94_81aa_3dd0, u64::MAX, 0];
        assert!(resolve_chain(&mut m, 1, 1, &bad).is_empty());
        let good = [
            PERF_CONTEXT_KERNEL,
            0xffff_ffff_8100_0000,
            PERF_CONTEXT_USER,
            0x1000,
        ];
        let frames = resolve_chain(&mut m, 1, 1, &good);
        assert_eq!(
            frames.iter().map(|f| (f.ip, f.kernel)).collect::<Vec<_>>(),
            [(0xffff_ffff_8100_0000, true), (0x1000, false)]
        );
    }
}
