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

/// Resolve a callchain as perf's `thread__resolve_callchain_sample` does: entries start
/// in user mode, a PERF_CONTEXT_KERNEL marker switches to kernel mode, any other marker
/// (USER, HV, guest) to user mode; markers are not frames.
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
            kernel = ip == PERF_CONTEXT_KERNEL;
            continue;
        }
        frames.push(machine.resolve(pid, tid, ip, kernel));
    }
    frames
}
