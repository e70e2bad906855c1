//! DWARF unwinding of `perf record --call-graph dwarf` samples: each sample's user
//! registers (REGS_USER) and stack copy (STACK_USER) are walked with the CFI of the
//! binaries its process had mapped at that moment (framehop, over `.eh_frame`,
//! `.eh_frame_hdr` and `.debug_frame`; x86_64 and arm64), giving the user frames perf's
//! own unwinder (libunwind, in perf 6.1) gives: the sampled ip, then each return address
//! less one (perf's `--ips[i]` for frames that are not signal frames, so that a call at
//! a function's end is named after its caller).
//!
//! Binaries are found as symbolisation finds them ([`crate::symbolize`]: path,
//! `--symfs`, debuglink, build-id cache, `/usr/lib/debug`, the vDSO from the build-id
//! cache). What is kept is bounded by what is distinct: the unwind tables once per DSO,
//! an address space per process (at most [`MAX_SPACES`], rebuilt when its maps change),
//! and framehop's fixed-size rule cache; a sample's stack copy is let go once walked.

use std::collections::HashMap;
use std::sync::Arc;

use framehop::aarch64::{CacheAarch64, UnwindRegsAarch64, UnwinderAarch64};
use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{FrameAddress, Module, Unwinder as _};

use crate::process::{DsoId, Machine, Maps, ThreadId};
use crate::symbolize::SymbolOptions;

mod edit;
mod frame_chain;
mod memory;
mod module;
mod regs;
mod row;
mod signal;
pub(crate) mod stats;
mod walk;

pub use edit::UnwindEdit;
use memory::{Files, Memory};
use module::{Bytes, DsoUnwind, Missing, SectionInfo};
use regs::AllRegs;
pub use regs::{Arch, UserState};
pub use stats::{Cut, Idle, UnwindStats};
use walk::{End, Step};

/// Address spaces (processes) kept built at once; past it they are dropped and rebuilt
/// when next sampled.
pub const MAX_SPACES: usize = 256;

/// perf's default most frames of a callchain (`sysctl kernel.perf_event_max_stack`).
pub const MAX_FRAMES: usize = 127;

/// Where binaries are looked for (as [`SymbolOptions`] says for symbols).
#[derive(Debug, Clone, Default)]
pub struct UnwindOptions {
    /// perf's `--symfs`.
    pub symfs: Option<std::path::PathBuf>,
    /// The build-id cache directory (None: `$HOME/.debug`).
    pub buildid_dir: Option<std::path::PathBuf>,
}

/// Where each DSO of a process is taken to be loaded (its base avma), by DSO.
///
/// perf 6.1 places a DSO's `.eh_frame_hdr` by the lowest map of that DSO among the
/// thread's maps (`read_unwind_spec_eh_frame` in util/unwind-libunwind-local.c), and a
/// process keeps across exec the maps it had: where the image before an exec had the
/// DSO mapped lower (ld.so, libc), perf looks the new image's FDEs up at the old base
/// (perf's stale maps). Each DSO is placed here by its lowest map too, so its frames are
/// walked as perf walks them (a right base wherever no stale map lies lower).
type Bases = HashMap<DsoId, u64>;

/// One process's address space as framehop sees it.
enum Space {
    X86(UnwinderX86_64<Bytes>),
    Arm(UnwinderAarch64<Bytes>),
}

/// Unwinds the samples of one recording.
pub struct Unwinder {
    arch: Option<Arch>,
    opts: SymbolOptions,
    dsos: HashMap<DsoId, Result<Arc<DsoUnwind>, Missing>>,
    /// Per map group: the maps' generation it was built from, and the space.
    spaces: HashMap<usize, (u64, Space, bool, Bases)>,
    x86_cache: CacheX86_64,
    arm_cache: CacheAarch64,
    stats: UnwindStats,
    /// The files of DSOs a walk read words of beyond a stack copy ([`memory`]).
    files: Files,
}

impl std::fmt::Debug for Unwinder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unwinder")
            .field("arch", &self.arch)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl Unwinder {
    /// An unwinder for samples of `arch` (None: every sample counts as not unwound).
    pub fn new(arch: Option<Arch>, opts: &UnwindOptions) -> Unwinder {
        Unwinder {
            arch,
            opts: SymbolOptions {
                symfs: opts.symfs.clone(),
                kallsyms: None,
                buildid_dir: opts.buildid_dir.clone(),
            },
            dsos: HashMap::new(),
            spaces: HashMap::new(),
            x86_cache: CacheX86_64::new(),
            arm_cache: CacheAarch64::new(),
            stats: UnwindStats::default(),
            files: Files::new(),
        }
    }

    /// What became of the samples so far.
    pub fn stats(&self) -> &UnwindStats {
        &self.stats
    }

    /// The user frames of a sample of thread `thread`: its ip first, then the return
    /// addresses less one, outermost last; empty (counted as not unwound) where the
    /// sample recorded no user state.
    pub fn unwind(&mut self, machine: &Machine, thread: ThreadId, user: &UserState) -> Vec<u64> {
        let Some(arch) = self.arch else {
            self.stats.idle(Idle::UnknownArch);
            return Vec::new();
        };
        let (ip, sp, fp, lr) = match arch {
            Arch::X86_64 => (regs::X86_IP, regs::X86_SP, regs::X86_BP, None),
            Arch::Aarch64 => (
                regs::ARM64_PC,
                regs::ARM64_SP,
                regs::ARM64_FP,
                Some(regs::ARM64_LR),
            ),
        };
        let (Some(ip), Some(sp), Some(fp)) = (user.reg(ip), user.reg(sp), user.reg(fp)) else {
            self.stats.idle(match user.abi {
                regs::ABI_NONE => Idle::NoUserRegisters,
                regs::ABI_64 => Idle::RegisterNotSampled,
                _ => Idle::Abi32,
            });
            return Vec::new();
        };
        // perf 6.1 does not unwind a sample whose copy is empty (`user_stack.size` is
        // the dynamic size): not even its ip is a user frame then. Counted all the same.
        if user.stack.is_empty() {
            self.stats.idle(Idle::EmptyStackCopy);
            return Vec::new();
        }
        let lr = lr.and_then(|r| user.reg(r)).unwrap_or(0);
        let group = machine.threads[thread].maps;
        let maps = machine.maps_of(thread);
        self.ensure_space(machine, group, maps, arch);
        let (_, space, known, bases) = &self.spaces[&group];
        // perf 6.1 sets a process up for unwinding when a map of a binary it can open
        // joins its maps (`unwind__prepare_access`: the binary's type decides the
        // unwinder); a process of missing binaries alone is not unwound at all.
        if !known {
            self.stats.idle(Idle::NoBinaryOfProcess);
            // Said all the same: the binary the sample is in, when it is missing (perf
            // says nothing; a user should learn why there are no user frames).
            let missing = maps
                .find(ip)
                .filter(|m| !m.identity)
                .filter(|m| matches!(self.dsos.get(&m.dso), Some(Err(Missing::Binary))));
            if let Some(map) = missing {
                let name = machine.dsos[map.dso].long_name.clone();
                *self.stats.missing_binaries.entry(name).or_default() += 1;
            }
            return Vec::new();
        }
        let memory = Memory::new(sp, &user.stack, maps, &machine.dsos, &self.opts);
        let files = &mut self.files;
        let mut read = |addr: u64| memory.read(addr, files);
        let past_end = || memory.reads_past_end();
        let mut frames = Vec::new();
        let mut frame = |address: FrameAddress| -> Step {
            let at = address.address_for_lookup();
            frames.push(at);
            // A frame in a binary without tables ends the walk there, as perf's does:
            // framehop would guess on with frame pointers the code does not keep.
            let Some(map) = maps.find(at).filter(|m| !m.identity) else {
                return Step::End(End::Cut(Cut::NoCfi, None));
            };
            match self.dsos.get(&map.dso) {
                Some(Err(Missing::Binary)) => {
                    Step::End(End::Cut(Cut::BinaryMissing, Some(map.dso)))
                }
                Some(Err(Missing::BuildIdDiffers)) => {
                    Step::End(End::Cut(Cut::BuildIdDiffers, Some(map.dso)))
                }
                Some(Err(Missing::NoCfi)) | None => Step::End(End::Cut(Cut::NoCfi, None)),
                Some(Ok(_)) if frames.len() >= MAX_FRAMES => Step::End(End::Whole),
                Some(Ok(dso)) => {
                    // The trampoline is looked for at the return address itself (the
                    // frame is named by it less one, as perf names it).
                    let sampled = !address.is_return_address();
                    let base = bases.get(&map.dso).copied().unwrap_or(dso.base_avma(map));
                    let svma = address.address().wrapping_sub(base);
                    if dso.in_trampoline(svma, sampled, arch) {
                        return Step::Signal;
                    }
                    // Code its binary's table has no FDE for (node's builtins; ld.so's
                    // `_start`, rbp 0 as exec leaves it) is walked by libunwind's
                    // frame-pointer guess, not framehop's (which takes the word at sp
                    // for a sampled frame's return address, and believes any rbp).
                    let covered = dso.has_fde(at.wrapping_sub(base));
                    if arch == Arch::X86_64 && !covered {
                        return Step::FrameChain;
                    }
                    // On arm64 only its first case: the sampled instruction in code
                    // without CFI and no frame pointer ends the stack there.
                    if frames.len() == 1 && sampled && fp == 0 && !covered {
                        return Step::End(End::Cut(Cut::NoCfi, None));
                    }
                    match dso.untracked_row(at.wrapping_sub(base)) {
                        Some(row) => Step::Row(row),
                        None => Step::Go,
                    }
                }
            }
        };
        let all = AllRegs::from_user(arch, user);
        let dsos = &self.dsos;
        let mut full_row = |address: FrameAddress| {
            let at = address.address_for_lookup();
            let (dso, svma) = tables_at(dsos, bases, maps, at)?;
            dso.full_row(svma)
        };
        let rows = &mut full_row;
        let end = match space {
            Space::X86(u) => {
                let regs = UnwindRegsX86_64::new(ip, sp, fp);
                let cache = &mut self.x86_cache;
                walk::walk(
                    u, ip, regs, all, cache, &mut read, &mut frame, rows, &past_end,
                )
            }
            Space::Arm(u) => {
                let regs = UnwindRegsAarch64::new(lr, sp, fp);
                let cache = &mut self.arm_cache;
                walk::walk(
                    u, ip, regs, all, cache, &mut read, &mut frame, rows, &past_end,
                )
            }
        };
        // A walk that stops at `_start` for want of CFI (ld.so's has none; a program's
        // may not mark its return address undefined) reached the process's first frame:
        // whole, as perf's walk is (the frames are the same either way).
        let end = match end {
            End::Cut(Cut::NoCfi, None) if self.at_entry_code(bases, maps, frames.last()) => {
                End::Whole
            }
            end => end,
        };
        // perf's frame for a return address of 0: 0 less one, as its other return
        // addresses (its callchain holds it; it is no context marker there).
        let end = match end {
            End::ZeroReturn => {
                if frames.len() < MAX_FRAMES {
                    frames.push(u64::MAX);
                }
                match memory.reads_past_end() {
                    0 => End::Whole,
                    _ => End::Cut(Cut::StackTooShort, None),
                }
            }
            end => end,
        };
        match end {
            End::ZeroReturn | End::Whole => self.stats.whole += 1,
            End::Cut(why, dso) => {
                self.stats.cut += 1;
                *self.stats.cut_by.entry(why).or_default() += 1;
                if let Some(d) = dso {
                    let name = machine.dsos[d].long_name.clone();
                    let named = match why {
                        Cut::BuildIdDiffers => &mut self.stats.other_build_id,
                        _ => &mut self.stats.missing_binaries,
                    };
                    *named.entry(name).or_default() += 1;
                }
            }
        }
        // perf 6.1 gives no entry for a frame of address 0 (`ips[j] ? entry(..) : 0` in
        // unwind-libunwind-local.c's get_entries): a return address of 1, read where a
        // guess left the walk in the wrong place (libunwind's frame-chain sp past
        // `.fini`, into `__run_exit_handlers`), is walked, but not printed.
        frames.retain(|&at| at != 0);
        frames
    }

    /// Whether the frame at `at` (a lookup address) is in its binary's entry code.
    fn at_entry_code(&self, bases: &Bases, maps: &Maps, at: Option<&u64>) -> bool {
        at.and_then(|&at| tables_at(&self.dsos, bases, maps, at))
            .is_some_and(|(dso, svma)| dso.is_entry_code(svma))
    }

    /// Build (or rebuild, when its maps changed) the address space of map group `group`.
    fn ensure_space(&mut self, machine: &Machine, group: usize, maps: &Maps, arch: Arch) {
        if self
            .spaces
            .get(&group)
            .is_some_and(|(g, _, _, _)| *g == maps.generation())
        {
            return;
        }
        if self.spaces.len() >= MAX_SPACES {
            self.spaces.clear();
        }
        let mut space = match arch {
            Arch::X86_64 => Space::X86(UnwinderX86_64::new()),
            Arch::Aarch64 => Space::Arm(UnwinderAarch64::new()),
        };
        let mut known = false;
        let mut bases = Bases::new();
        for map in maps.iter().filter(|m| !m.identity) {
            let opts = &self.opts;
            let data = self
                .dsos
                .entry(map.dso)
                .or_insert_with(|| DsoUnwind::load(&machine.dsos[map.dso], opts).map(Arc::new));
            // perf copies this machine's vdso to a file for a `[vdso]` the recording
            // gives no build id of: that map, too, sets the process up.
            let dso = &machine.dsos[map.dso];
            known |= !matches!(data, Err(Missing::Binary))
                || (dso.long_name == "[vdso]" && dso.build_id.is_none());
            let Ok(data) = data else { continue };
            // Maps come lowest first: the first of a DSO places it.
            let base = *bases.entry(map.dso).or_insert_with(|| data.base_avma(map));
            let module = Module::new(
                machine.dsos[map.dso].long_name.clone(),
                map.start..map.end,
                base,
                SectionInfo(data.clone()),
            );
            match &mut space {
                Space::X86(u) => u.add_module(module),
                Space::Arm(u) => u.add_module(module),
            }
        }
        self.spaces
            .insert(group, (maps.generation(), space, known, bases));
    }
}

/// The unwind tables of the binary mapped at `at` (a lookup address) and `at` as its
/// address (svma), where its tables were loaded.
fn tables_at<'a>(
    dsos: &'a HashMap<DsoId, Result<Arc<DsoUnwind>, Missing>>,
    bases: &Bases,
    maps: &Maps,
    at: u64,
) -> Option<(&'a DsoUnwind, u64)> {
    let map = maps.find(at).filter(|m| !m.identity)?;
    let dso = dsos.get(&map.dso)?.as_ref().ok()?;
    let base = bases.get(&map.dso).copied().unwrap_or(dso.base_avma(map));
    Some((dso, at.wrapping_sub(base)))
}
