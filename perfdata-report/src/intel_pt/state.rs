//! What the Intel PT decoder reports and needs: perf 6.1's `struct intel_pt_state` (the
//! fields used), its sample types, flags and error codes (intel-pt-decoder.h), and the
//! instruction walker the decoder calls (perf's `walk_insn` callback).

use super::timing::TimingParams;

/// perf's `enum intel_pt_sample_type` bits of [`State::kind`].
pub mod kind {
    /// A branch.
    pub const BRANCH: u32 = 1 << 0;
    /// An instruction sample.
    pub const INSTRUCTION: u32 = 1 << 1;
    /// The core:bus ratio changed.
    pub const CBR_CHG: u32 = 1 << 8;
    /// Tracing began (TIP.PGE).
    pub const TRACE_BEGIN: u32 = 1 << 9;
    /// Tracing ended (TIP.PGD).
    pub const TRACE_END: u32 = 1 << 10;
    /// A PSB (synchronization point).
    pub const PSB_EVT: u32 = 1 << 12;
}

/// perf's state flags ([`State::flags`]).
pub mod flags {
    /// In a transaction.
    pub const IN_TX: u32 = 1 << 0;
    /// A transaction aborted.
    pub const ABORT_TX: u32 = 1 << 1;
    /// An asynchronous branch (interrupt, exception).
    pub const ASYNC: u32 = 1 << 2;
}

/// perf's `INTEL_PT_ERR_*`: the codes of the error lines ("code 5: Failed to get
/// instruction").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// INTEL_PT_ERR_INTERN (2).
    Internal,
    /// INTEL_PT_ERR_BADPKT (3).
    BadPacket,
    /// INTEL_PT_ERR_NODATA (4): the end of the trace.
    NoData,
    /// INTEL_PT_ERR_NOINSN (5).
    NoInstruction,
    /// INTEL_PT_ERR_MISMAT (6).
    Mismatch,
    /// INTEL_PT_ERR_OVR (7).
    Overflow,
    /// INTEL_PT_ERR_UNK (9).
    Unknown,
}

impl DecodeError {
    /// perf's error code.
    pub fn code(self) -> u32 {
        match self {
            DecodeError::Internal => 2,
            DecodeError::BadPacket => 3,
            DecodeError::NoData => 4,
            DecodeError::NoInstruction => 5,
            DecodeError::Mismatch => 6,
            DecodeError::Overflow => 7,
            DecodeError::Unknown => 9,
        }
    }

    /// perf's `intel_pt_err_msgs[]`.
    pub fn message(self) -> &'static str {
        match self {
            DecodeError::Internal => "Internal error",
            DecodeError::BadPacket => "Bad packet",
            DecodeError::NoData => "No more data",
            DecodeError::NoInstruction => "Failed to get instruction",
            DecodeError::Mismatch => "Trace doesn't match instruction",
            DecodeError::Overflow => "Overflow packet",
            DecodeError::Unknown => "Unknown error!",
        }
    }
}

/// Why a walk of instructions failed (perf's `walk_insn` callback's errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkError {
    /// -EINVAL: no map, no DSO, or its code unreadable: reported.
    Unreadable,
    /// -ENOENT: the DSO's data is known bad and was seen before: not reported.
    KnownBad,
}

/// What walks instructions from an ip (perf's `intel_pt_walk_next_insn`).
pub trait InsnWalker {
    /// Walk from `ip` towards `to_ip` (0: to the next branch). `Ok(())` only when
    /// `to_ip` is non-zero and `ip == to_ip` (nothing to walk): decoding instructions is
    /// outside this port.
    fn walk(&mut self, ip: u64, to_ip: u64, nr: bool) -> Result<(), WalkError>;
}

/// One result of [`Decoder::decode`](super::decoder::Decoder::decode): perf's `struct intel_pt_state`, the fields used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct State {
    /// [`kind`] bits.
    pub kind: u32,
    /// [`flags`] bits.
    pub flags: u32,
    /// The ip the state comes from.
    pub from_ip: u64,
    /// The ip it goes to (0: none).
    pub to_ip: u64,
    /// The sample time, TSC ticks.
    pub timestamp: u64,
    /// The error, if the decoder reports one.
    pub err: Option<DecodeError>,
    /// Offset of the last PSB in the trace.
    pub psb_offset: u64,
    /// The core:bus ratio, when [`kind::CBR_CHG`].
    pub cbr: u32,
    /// The CBR packet's payload.
    pub cbr_payload: u64,
    /// Which trace (buffer) the decoder is in, counted from 1 at each reposition.
    pub trace_nr: u64,
}

/// The decoder's parameters (perf's `struct intel_pt_params`, the fields used).
#[derive(Debug, Clone, Copy, Default)]
pub struct DecoderParams {
    /// The clock's parameters.
    pub timing: TimingParams,
    /// RET compression is on (the NoRETComp bit is clear).
    pub return_compression: bool,
    /// Branch tracing is on (BranchEn).
    pub branch_enable: bool,
}

/// The walker perf has when the traced binaries are not on the machine: every walk that
/// has instructions to read fails to read them (-EINVAL, "Failed to get instruction").
#[derive(Debug, Clone, Copy, Default)]
pub struct NoCode;

impl InsnWalker for NoCode {
    fn walk(&mut self, ip: u64, to_ip: u64, _nr: bool) -> Result<(), WalkError> {
        if to_ip != 0 && ip == to_ip {
            Ok(())
        } else {
            Err(WalkError::Unreadable)
        }
    }
}
