//! libunwind's frame-chain guess on x86_64, where a binary's `.eh_frame_hdr` has no FDE
//! for a frame's address (node's embedded builtins, `Builtins_*` in its `.text`; code
//! written in assembly without CFI).
//!
//! perf 6.1 unwinds with libunwind (1.6.2 here). Its `find_proc_info` callback gives
//! libunwind `-UNW_ENOINFO` for such an address (the binary's table was searched and has
//! no entry), and libunwind's x86_64 `unw_step` (src/x86_64/Gstep.c) then falls back to
//! the frame pointer: rbp 0 ends the stack; else the return address is at `[rbp + 8]`
//! and the caller's rbp at `[rbp]`, unless rbp lies below the frame's CFA (its stack
//! pointer, as libunwind knows it) or more than 0x4000 bytes above it, or `[rbp]` cannot
//! be read, where the stack ends. The caller's stack pointer is not taken from rbp:
//! libunwind 1.6.2 adds 16 to the CFA it had (`c->dwarf.cfa += 16`) and reads rsp as
//! that CFA from then on, so a chain of such frames believes each next rbp less and less
//! (ending the stack sooner than the frame pointers would), and a caller with CFI that
//! finds its CFA from rsp finds it there. Every other register is lost past such a
//! frame. An address in no binary (JIT code: the anonymous maps a `/tmp/perf-PID.map`
//! names) or in one without unwind tables is not this case: perf's callback fails with
//! `-EINVAL` there, and libunwind stops without guessing. (libunwind 1.6.2 first reads
//! the word at the frame's ip and, where that fails, takes the word at rsp instead; perf
//! reads any address in a mapped binary from its file, so for code in a binary the read
//! succeeds and that branch is never taken.)

/// How far above the stack pointer libunwind still believes a frame pointer.
const MAX_FRAME: u64 = 0x4000;

/// The caller of a frame unwound by its frame pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Caller {
    /// The return address.
    pub ra: u64,
    /// The caller's stack pointer, as libunwind has it (the frame's plus 16).
    pub sp: u64,
    /// The caller's frame pointer (the word saved at the frame pointer).
    pub bp: u64,
}

/// Why the frame chain gave no caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    /// libunwind's guess ends the stack here (rbp 0, or not believed).
    Ends,
    /// A word it needs, the saved rbp or the return address, at `.0`, could not be read
    /// (the stack ends there too).
    Unread(u64),
}

/// The caller of the frame whose stack and frame pointers are `sp` and `bp`, as
/// libunwind 1.6.2's x86_64 frame-chain fallback finds it.
pub(super) fn caller(
    sp: u64,
    bp: u64,
    read: &mut impl FnMut(u64) -> Result<u64, ()>,
) -> Result<Caller, Stop> {
    // rbp 0 is the x86_64 ABI's end of the chain; a frame pointer below the stack
    // pointer or far above it is not believed (libunwind's "incorrect guess").
    if bp == 0 || bp < sp || bp - sp > MAX_FRAME {
        return Err(Stop::Ends);
    }
    let saved_bp = read(bp).map_err(|_| Stop::Unread(bp))?;
    let at = bp.checked_add(8).ok_or(Stop::Ends)?;
    let ra = read(at).map_err(|_| Stop::Unread(at))?;
    Ok(Caller {
        ra,
        sp: sp.checked_add(16).ok_or(Stop::Ends)?,
        bp: saved_bp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stack of words from `base`.
    fn stack(base: u64, words: &[u64]) -> impl FnMut(u64) -> Result<u64, ()> + '_ {
        move |addr| {
            let i = addr.checked_sub(base).ok_or(())? / 8;
            words.get(i as usize).copied().ok_or(())
        }
    }

    #[test]
    fn the_caller_is_found_at_the_frame_pointer() {
        let mut read = stack(0x1000, &[7, 7, 0x2000, 0x40_1234, 9]);
        let got = caller(0x1000, 0x1010, &mut read);
        assert_eq!(
            got,
            Ok(Caller {
                ra: 0x40_1234,
                sp: 0x1010,
                bp: 0x2000
            })
        );
    }

    #[test]
    fn an_implausible_frame_pointer_ends_the_stack() {
        let mut read = stack(0x1000, &[0; 8]);
        assert_eq!(caller(0x1000, 0, &mut read), Err(Stop::Ends));
        assert_eq!(caller(0x1008, 0x1000, &mut read), Err(Stop::Ends));
        assert_eq!(caller(0x1000, 0x1000 + 0x4008, &mut read), Err(Stop::Ends));
        // Just within libunwind's bound, but not in the stack copy.
        assert_eq!(caller(0x1000, 0x5000, &mut read), Err(Stop::Unread(0x5000)));
        // The saved rbp read, the return address not.
        let mut short = stack(0x1000, &[0, 0x3000]);
        assert_eq!(
            caller(0x1000, 0x1008, &mut short),
            Err(Stop::Unread(0x1010))
        );
    }
}
