//! What became of the samples an unwinder saw: a report's and an edit's summary of
//! the unwinding (apart from the unwinder, which the report model need not import).

use std::collections::BTreeMap;

/// Why a sample's user stack ends before its outermost frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cut {
    /// A frame is in a binary that was not found.
    BinaryMissing,
    /// A frame is in a binary whose build id is not the recording's.
    BuildIdDiffers,
    /// No CFI covers a frame's address (or it led nowhere: no map, a loop).
    NoCfi,
    /// The walk needed stack beyond the copy the sample holds.
    StackTooShort,
    /// A signal handler's frame was reached, but the registers the kernel saved for the
    /// code it interrupted lie beyond the stack copy.
    SignalFrameOutsideCopy,
    /// A frame's CFI keeps its return address (or its CFA) in a register the walk does
    /// not know at that frame: one other than ip, sp and the frame pointer that the
    /// sample did not record, or that no CFI row restores on the way from the sampled
    /// frame (or a frame a signal interrupted), whose registers are all known.
    UntrackedRegister,
}

impl Cut {
    /// How the summary names it.
    pub fn describe(self) -> &'static str {
        match self {
            Cut::BinaryMissing => "binary missing",
            Cut::BuildIdDiffers => "build id differs",
            Cut::NoCfi => "no CFI for the address",
            Cut::StackTooShort => "stack copy too short",
            Cut::SignalFrameOutsideCopy => "signal frame outside the stack copy",
            Cut::UntrackedRegister => "return address in a register the walk does not track",
        }
    }
}

/// Why a sample that carried a stack copy was not unwound at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Idle {
    /// The recording's architecture is not one the unwinder knows.
    UnknownArch,
    /// The sample has no user registers (PERF_SAMPLE_REGS_ABI_NONE: a kernel thread,
    /// or a sample taken where the kernel had none to give).
    NoUserRegisters,
    /// A 32-bit process's registers (PERF_SAMPLE_REGS_ABI_32), another architecture's.
    Abi32,
    /// The ip, stack or frame pointer register is not among those sampled.
    RegisterNotSampled,
    /// The stack copy is empty (its dynamic size 0, as at a process's exit).
    EmptyStackCopy,
    /// None of the process's binaries was found (perf 6.1 then sets up no unwinding
    /// for the process).
    NoBinaryOfProcess,
}

impl Idle {
    /// How the summary names it.
    pub fn describe(self) -> &'static str {
        match self {
            Idle::UnknownArch => "architecture not unwound",
            Idle::NoUserRegisters => "no user registers",
            Idle::Abi32 => "32-bit process",
            Idle::RegisterNotSampled => "ip, sp or fp not sampled",
            Idle::EmptyStackCopy => "empty stack copy",
            Idle::NoBinaryOfProcess => "no binary of the process found",
        }
    }
}

/// `why: N, ...` of counts by reason.
fn counts<K: Copy>(by: &BTreeMap<K, u64>, describe: impl Fn(K) -> &'static str) -> String {
    let why: Vec<String> = by
        .iter()
        .map(|(c, n)| format!("{}: {n}", describe(*c)))
        .collect();
    why.join(", ")
}

/// What became of the samples that carried a user stack copy.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct UnwindStats {
    /// Unwound to their outermost frame.
    pub whole: u64,
    /// Unwound in part: the frames up to the cut are kept.
    pub cut: u64,
    /// Not unwound: no user registers or stack in the sample (a kernel thread), or an
    /// architecture this unwinder does not know.
    pub not_unwound: u64,
    /// The samples not unwound, by why.
    pub not_unwound_by: BTreeMap<Idle, u64>,
    /// The cut samples by why.
    pub cut_by: BTreeMap<Cut, u64>,
    /// Binaries missing, each with the samples it cut.
    pub missing_binaries: BTreeMap<String, u64>,
    /// Binaries whose file is not of the recording's build id, each with the samples it
    /// cut.
    pub other_build_id: BTreeMap<String, u64>,
}

impl UnwindStats {
    /// Whether any sample carried a stack copy.
    pub fn any(&self) -> bool {
        self.whole + self.cut + self.not_unwound > 0
    }

    /// The one-line summary (`-v`, or a warning when frames were cut).
    pub fn summary(&self) -> String {
        let mut s = format!(
            "unwound {} samples whole, {} cut, {} not unwound",
            self.whole, self.cut, self.not_unwound
        );
        if !self.cut_by.is_empty() {
            s.push_str(&format!(" ({})", counts(&self.cut_by, |c| c.describe())));
        }
        if !self.not_unwound_by.is_empty() {
            let why = counts(&self.not_unwound_by, |c| c.describe());
            s.push_str(&format!("; not unwound: {why}"));
        }
        s
    }

    /// Count a sample not unwound, for `why`.
    pub fn idle(&mut self, why: Idle) {
        self.not_unwound += 1;
        *self.not_unwound_by.entry(why).or_default() += 1;
    }

    /// One line per missing binary (or binary of another build id): its name and the
    /// samples it cut.
    pub fn missing_lines(&self) -> Vec<String> {
        let line = |why: &'static str| {
            move |(name, n): (&String, &u64)| {
                format!("{name}: {why}, {n} samples' stacks cut there")
            }
        };
        let missing = self.missing_binaries.iter().map(line("not found"));
        let other = self
            .other_build_id
            .iter()
            .map(line("not of the recorded build id"));
        missing.chain(other).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_says_why_samples_were_cut_and_not_unwound() {
        let mut s = UnwindStats {
            whole: 7,
            cut: 1,
            ..UnwindStats::default()
        };
        s.cut_by.insert(Cut::NoCfi, 1);
        s.idle(Idle::EmptyStackCopy);
        s.idle(Idle::NoUserRegisters);
        s.idle(Idle::EmptyStackCopy);
        assert_eq!(
            s.summary(),
            "unwound 7 samples whole, 1 cut, 3 not unwound (no CFI for the address: 1); \
             not unwound: no user registers: 1, empty stack copy: 2"
        );
    }
}
