//! The process model, replayed from the side-band records in time order as perf's
//! machine/thread/map code does (tools/perf/util/machine.c, thread.c, maps.c of perf 6.1):
//! which thread a sample ran on, what it was called then, and which mapping its ip hit.

use std::collections::HashMap;

use perfdata_core::record::{ForkExit, Ksymbol, Mmap};

/// Index of a [`Dso`] in [`Machine::dsos`].
pub type DsoId = usize;
/// Index of a [`Thread`] in [`Machine::threads`].
pub type ThreadId = usize;
/// Index of a comm string in [`Machine::comms`]. A thread's first COMM overrides its
/// default `:tid` entry in place (perf's `comm__override`), so samples taken before it
/// show the name it got later, as in perf.
pub type CommId = usize;

/// A shared object (or the kernel) that maps point into, named by the file it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dso {
    /// The name it was made with (perf's `dso->name`, what perf script's dso field
    /// prints): the long name, but `[name]` for a kernel module its MMAP made (see
    /// process/kmod.rs).
    pub name: String,
    /// The file name as recorded (`/usr/lib/libc.so.6`, `[kernel.kallsyms]`).
    pub long_name: String,
    /// What perf's "Shared Object" column shows: the base name, `[kernel.kallsyms]`.
    pub short_name: String,
    /// Kernel space (the kernel image or a module): symbols come from kallsyms.
    pub kernel: bool,
    /// The build id the recording gives for this file (BUILD_ID feature or records, MMAP2).
    pub build_id: Option<Vec<u8>>,
    /// Symbols the recording itself names (KSYMBOL: a BPF program is a DSO of its own
    /// name with one symbol; a jitdump's function, see [`crate::jitdump`]): (start,
    /// length, name), DSO-relative. A DSO with any is symbolized from them alone, as
    /// perf does.
    pub ksymbols: Vec<(u64, u64, String)>,
    /// A kernel module's load address (the start of its MMAP): its addresses are
    /// relative to it, as perf's module maps are, where kallsyms lists the module's
    /// symbols at absolute addresses (perf's `maps__split_kallsyms` moves them by it).
    pub module_start: Option<u64>,
}

mod jit;
mod kmod;

/// Whether a kernel DSO named `name` is a kernel module's, as perf's
/// `kmod_path__parse_name` tells (`[name]` other than the kernel's and the vDSO's, or a
/// path whose extension starts with `.ko`).
pub(crate) fn is_kmod(name: &str) -> bool {
    kmod::parse_kmod_path(name).kmod
}
mod mapname;
mod maps;
pub use mapname::MapProt;
pub use maps::{Map, Maps};

/// One thread, as perf knows it.
#[derive(Debug, Clone)]
pub struct Thread {
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// Index of its process's map group in the machine (shared by the process's threads).
    pub maps: usize,
    /// Its current name.
    pub comm: CommId,
    comm_set: bool,
    /// Time of its FORK record, if one was seen.
    pub fork_time: Option<u64>,
    /// Time of its EXIT record, if one was seen.
    pub exit_time: Option<u64>,
}

/// Where a sample's ip landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Location {
    /// The thread that sampled.
    pub thread: ThreadId,
    /// The thread's name at the time of the sample.
    pub comm: CommId,
    /// The DSO the address is in, when a map holds it.
    pub dso: Option<DsoId>,
    /// The DSO-relative address (`map_ip`), or the ip itself when no map holds it.
    pub addr: u64,
    /// The address as sampled.
    pub ip: u64,
    /// The ip was in kernel mode (perf's `[k]` level; `[.]` otherwise).
    pub kernel: bool,
}

/// The machine: its threads (live and dead), their maps, the kernel's maps and the DSOs.
#[derive(Debug, Clone)]
pub struct Machine {
    /// Every thread seen, live and dead, indexed by [`ThreadId`].
    pub threads: Vec<Thread>,
    /// The thread now holding each tid (a later FORK of the same tid replaces it);
    /// Fx-hashed, as it is looked up for every frame of every sample.
    by_tid: rustc_hash::FxHashMap<i32, ThreadId>,
    /// The tids found last and their threads, the latest first: the frames of a sample
    /// are one thread's, and samples in time order alternate between the CPUs' threads.
    /// Forgotten whenever `by_tid` changes.
    last: [Option<(i32, ThreadId)>; 2],
    map_groups: Vec<Maps>,
    kernel_maps: Maps,
    /// The map found last in user space and in the kernel (by [`Maps::generation`],
    /// which changes with every change of any set): a sample's frames and the samples
    /// that follow it mostly fall in the same few maps, and a walk of the map tree per
    /// frame was 2.4% of a `-g` listing's cycles. Two of each, the latest first, as
    /// samples in time order alternate between the CPUs' processes.
    found: [[Option<(u64, Map)>; 2]; 2],
    /// Every DSO named by a map, indexed by [`DsoId`].
    pub dsos: Vec<Dso>,
    dso_by_name: HashMap<String, DsoId>,
    /// Every command name seen, indexed by [`CommId`].
    pub comms: Vec<String>,
    /// The kernel image's reference symbol and its address when recorded (the MMAP of
    /// `[kernel.kallsyms]_text` names `_text` and gives its address as pgoff): a kallsyms
    /// file whose `_text` lies elsewhere is moved by the difference, as perf does.
    pub kernel_ref_reloc: Option<(String, u64)>,
}

impl Default for Machine {
    fn default() -> Self {
        Self::new()
    }
}

impl Machine {
    /// A machine with perf's idle thread: pid 0 is `swapper`.
    pub fn new() -> Self {
        let mut m = Machine {
            threads: Vec::new(),
            by_tid: Default::default(),
            last: [None; 2],
            map_groups: Vec::new(),
            kernel_maps: Maps::default(),
            found: [[None; 2]; 2],
            dsos: Vec::new(),
            dso_by_name: HashMap::new(),
            comms: Vec::new(),
            kernel_ref_reloc: None,
        };
        let idle = m.findnew_thread(0, 0);
        m.set_comm(idle, "swapper");
        m
    }

    /// The thread now holding `tid`, if known (perf's `machine__find_thread` by tid).
    pub fn thread_of(&self, tid: i32) -> Option<ThreadId> {
        self.by_tid.get(&tid).copied()
    }

    /// The thread with `tid`, created if unknown (perf's `machine__findnew_thread`): a
    /// non-leader thread shares its leader's maps; a new thread is named `:tid`.
    pub fn findnew_thread(&mut self, pid: i32, tid: i32) -> ThreadId {
        let known = match self.last {
            [Some((t, id)), _] | [_, Some((t, id))] if t == tid => Some(id),
            _ => self.by_tid.get(&tid).copied(),
        };
        if let Some(id) = known {
            if self.last[0].is_none_or(|(t, _)| t != tid) {
                self.last = [Some((tid, id)), self.last[0]];
            }
            if self.threads[id].pid == -1 && pid != -1 {
                self.threads[id].pid = pid;
            }
            return id;
        }
        let maps = if pid == tid || pid == -1 {
            self.map_groups.push(Maps::default());
            self.map_groups.len() - 1
        } else {
            let leader = self.findnew_thread(pid, pid);
            self.threads[leader].maps
        };
        self.comms.push(format!(":{tid}"));
        let id = self.threads.len();
        self.threads.push(Thread {
            pid,
            tid,
            maps,
            comm: self.comms.len() - 1,
            comm_set: false,
            fork_time: None,
            exit_time: None,
        });
        self.by_tid.insert(tid, id);
        id
    }

    /// Whether thread `t` has been named: its comm entries then keep their strings (a
    /// later name starts a new entry), where an unnamed thread's `:tid` entry is
    /// overridden in place by its first name.
    pub fn named(&self, t: ThreadId) -> bool {
        self.threads[t].comm_set
    }

    /// Name a thread: the first name overrides the default in place; later ones (exec or
    /// prctl rename alike) start a new entry, so earlier samples keep the old name.
    pub fn set_comm(&mut self, thread: ThreadId, name: &str) {
        let t = &mut self.threads[thread];
        if t.comm_set {
            self.comms.push(name.to_string());
            t.comm = self.comms.len() - 1;
        } else {
            self.comms[t.comm] = name.to_string();
            t.comm_set = true;
        }
    }

    /// COMM: `exec` (misc COMM_EXEC) or a rename; both give the thread its new name.
    pub fn process_comm(&mut self, pid: i32, tid: i32, name: &str, _exec: bool) {
        let t = self.findnew_thread(pid, tid);
        self.set_comm(t, name);
    }

    /// FORK: a thread replaces any older thread of its tid; a new process copies its
    /// parent's maps, a new thread shares them. Synthesized FORKs (`clone_maps` false,
    /// perf's MISC_FORK_EXEC) copy nothing: MMAP records for the process follow.
    pub fn process_fork(&mut self, f: &ForkExit, clone_maps: bool) {
        let ForkExit {
            pid,
            ppid,
            tid,
            ptid,
            time,
        } = *f;
        let mut parent = self.findnew_thread(ppid, ptid);
        if self.threads[parent].pid != ppid {
            // A stale thread holds the parent's tid: start the parent afresh.
            self.by_tid.remove(&ptid);
            self.last = [None; 2];
            parent = self.findnew_thread(ppid, ptid);
        }
        self.by_tid.remove(&tid);
        self.last = [None; 2];
        let child = self.findnew_thread(pid, tid);
        self.threads[child].fork_time = Some(time);
        if self.threads[parent].comm_set {
            let name = self.comms[self.threads[parent].comm].clone();
            self.set_comm(child, &name);
        }
        let (child_maps, parent_maps) = (self.threads[child].maps, self.threads[parent].maps);
        if self.threads[child].pid != self.threads[parent].pid
            && child_maps != parent_maps
            && clone_maps
        {
            self.map_groups[child_maps] = self.map_groups[parent_maps].clone();
        }
    }

    /// EXIT: the thread is dead but stays known (samples may still name it).
    pub fn process_exit(&mut self, pid: i32, tid: i32, time: u64) {
        if let Some(&t) = self.by_tid.get(&tid) {
            if self.threads[t].pid == pid || self.threads[t].pid == -1 {
                self.threads[t].exit_time = Some(time);
            }
        }
    }

    /// MMAP/MMAP2. `kernel` (cpumode KERNEL, as perf decides) puts the map in the
    /// kernel's maps: `[kernel.kallsyms]_text` is the kernel image, a path a module.
    /// `prot` names executable anonymous memory after a JIT's map file.
    pub fn process_mmap(
        &mut self,
        m: &Mmap,
        prot: MapProt,
        kernel: bool,
        build_id: Option<Vec<u8>>,
    ) {
        let (pid, tid, start, len, pgoff) = (m.pid, m.tid, m.addr, m.len, m.pgoff);
        let filename = m.filename.as_str_lossy();
        let filename = filename.as_str();
        let end = start.saturating_add(len);
        if kernel {
            let (long, short, end) = match filename.strip_prefix("[kernel.kallsyms]") {
                // perf 6.1's machine__process_kernel_mmap_event: a path, or a `[name]`
                // other than the kernel's, is a module.
                None if filename.starts_with('/') || filename.starts_with('[') => {
                    self.add_module_map(start, end, filename, build_id);
                    return;
                }
                // Neither (an extra kernel map, perf's entry trampolines): kept as a DSO
                // of its own, named as a module would be.
                None => {
                    let stem = filename.split(".ko").next().unwrap_or(filename);
                    (filename, format!("[{}]", stem.replace('-', "_")), end)
                }
                Some(sym) => {
                    if !sym.is_empty() {
                        self.kernel_ref_reloc = Some((sym.to_string(), pgoff));
                    }
                    // perf 6.1's __machine__create_kernel_maps: the kernel image's map
                    // is renewed, the one before removed (modules stay). A merge of
                    // several kernels' recordings keeps the one read last.
                    let before: Vec<u64> = self
                        .kernel_maps
                        .iter()
                        .filter(|m| self.dsos[m.dso].long_name == "[kernel.kallsyms]")
                        .map(|m| m.start)
                        .collect();
                    for start in before {
                        self.kernel_maps.remove(start);
                    }
                    // Some recordings give the kernel's MMAP no length: it then runs to
                    // the end.
                    let end = if end == start { u64::MAX } else { end };
                    ("[kernel.kallsyms]", "[kernel.kallsyms]".to_string(), end)
                }
            };
            let dso = self.dso(long, &short, true, build_id);
            self.kernel_maps.insert(Map {
                start,
                end,
                pgoff,
                dso,
                identity: true,
            });
            return;
        }
        if len == 0 {
            return;
        }
        let t = self.findnew_thread(pid, tid);
        let (long, identity) = mapname::user_map_name(filename, pid, prot);
        let short = user_short_name(&long);
        let dso = self.dso(&long, &short, false, build_id);
        let group = self.threads[t].maps;
        self.map_groups[group].insert(Map {
            start,
            end,
            pgoff,
            dso,
            identity,
        });
    }

    /// KSYMBOL, as perf 6.1's `machine__process_ksymbol`: a registered symbol where no
    /// kernel map is gets a map and a DSO of its own name (a BPF program:
    /// `bpf_prog_<tag>_<name>`), holding the symbol; where a map is, the symbol joins that
    /// map's DSO at the map's start. Unregistered (flag 1): the map goes.
    pub fn process_ksymbol(&mut self, k: &Ksymbol) {
        const UNREGISTER: u16 = 1;
        let name = k.name.as_str_lossy();
        let found = self.kernel_maps.find(k.addr).copied();
        // In the kernel image's map (a recording whose kernel map runs to the end of the
        // address space), kallsyms names the address: it lists BPF programs too.
        if found.is_some_and(|map| self.dsos[map.dso].long_name == "[kernel.kallsyms]") {
            return;
        }
        if k.flags & UNREGISTER != 0 {
            if let Some(map) = found {
                self.kernel_maps.remove(map.start);
            }
            return;
        }
        let map = match found {
            Some(map) => map,
            None => {
                let dso = self.dso(&name, &name, true, None);
                let map = Map {
                    start: k.addr,
                    end: k.addr.saturating_add(u64::from(k.len)),
                    pgoff: 0,
                    dso,
                    identity: true,
                };
                self.kernel_maps.insert(map);
                map
            }
        };
        let start = map.map_ip(map.start);
        let symbols = &mut self.dsos[map.dso].ksymbols;
        if !symbols.iter().any(|s| s.0 == start) {
            symbols.push((start, u64::from(k.len), name));
        }
    }

    fn dso(&mut self, long: &str, short: &str, kernel: bool, build_id: Option<Vec<u8>>) -> DsoId {
        if let Some(&d) = self.dso_by_name.get(long) {
            if build_id.is_some() {
                self.dsos[d].build_id = build_id;
            }
            return d;
        }
        self.dsos.push(Dso {
            name: long.to_string(),
            long_name: long.to_string(),
            short_name: short.to_string(),
            kernel,
            build_id,
            ksymbols: Vec::new(),
            module_start: None,
        });
        self.dso_by_name
            .insert(long.to_string(), self.dsos.len() - 1);
        self.dsos.len() - 1
    }

    /// Resolve `ip` of thread (`pid`, `tid`) in `kernel` mode or user mode (perf's
    /// `thread__find_map`): kernel ips in the kernel's maps, user ips in the process's.
    pub fn resolve(&mut self, pid: i32, tid: i32, ip: u64, kernel: bool) -> Location {
        let thread = self.findnew_thread(pid, tid);
        self.resolve_in(thread, ip, kernel)
    }

    /// [`Machine::resolve`], written into `at`. Not inlined, so that the fields are
    /// stored where the caller keeps them (a sample's ip): a location returned and then
    /// copied whole stalled on the stores just made (a quarter of the replay's per-sample
    /// step, `replay::steps::apply`).
    #[inline(never)]
    pub(crate) fn resolve_into(
        &mut self,
        (pid, tid): (i32, i32),
        ip: u64,
        kernel: bool,
        at: &mut Location,
    ) {
        let thread = self.findnew_thread(pid, tid);
        self.resolve_at(thread, ip, kernel, at);
    }

    /// [`Machine::resolve`] of thread `thread`, found already.
    pub(crate) fn resolve_in(&mut self, thread: ThreadId, ip: u64, kernel: bool) -> Location {
        let mut at = Location::default();
        self.resolve_at(thread, ip, kernel, &mut at);
        at
    }

    /// [`Machine::resolve_in`], written into `at`.
    #[inline(always)]
    fn resolve_at(&mut self, thread: ThreadId, ip: u64, kernel: bool, at: &mut Location) {
        let maps = if kernel {
            &self.kernel_maps
        } else {
            &self.map_groups[self.threads[thread].maps]
        };
        let generation = maps.generation();
        let found = &mut self.found[usize::from(kernel)];
        let holds = |kept: Option<(u64, Map)>| {
            kept.filter(|&(g, m)| g == generation && m.start <= ip && ip < m.end)
                .map(|(_, m)| m)
        };
        let map = if let Some(m) = holds(found[0]) {
            Some(m)
        } else if let Some(m) = holds(found[1]) {
            found.swap(0, 1);
            Some(m)
        } else {
            let map = maps.find(ip).copied();
            if let Some(m) = map {
                *found = [Some((generation, m)), found[0]];
            }
            map
        };
        *at = Location {
            thread,
            comm: self.threads[thread].comm,
            dso: map.map(|m| m.dso),
            addr: map.map_or(ip, |m| m.map_ip(ip)),
            ip,
            kernel,
        };
    }

    /// The address perf script prints for callchain frame `at` (`sample__fprintf_callchain`
    /// of perf 6.1): the DSO-relative address in a user-space DSO ("binary offset"), the
    /// ip itself in a kernel DSO (a module's map is not the identity) or outside any map.
    pub fn chain_ip(&self, at: &Location) -> u64 {
        match at.dso {
            Some(d) if !self.dsos[d].kernel => at.addr,
            _ => at.ip,
        }
    }

    /// The maps of thread `t`'s process.
    pub fn maps_of(&self, t: ThreadId) -> &Maps {
        &self.map_groups[self.threads[t].maps]
    }

    /// The kernel's maps.
    pub fn kernel_maps(&self) -> &Maps {
        &self.kernel_maps
    }
}

/// The pid of a JIT's symbol map file, `/tmp/perf-PID.map`, as perf 6.1 tells one
/// (`sscanf(name, "/tmp/perf-%d.map", &pid) == 1`: the pid is enough).
pub(crate) fn perf_map_pid(long_name: &str) -> Option<i32> {
    let rest = long_name.strip_prefix("/tmp/perf-")?;
    let end = rest
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+'))))
        .map_or(rest.len(), |(i, _)| i);
    rest[..end].parse().ok()
}

/// perf's short name of a user-space DSO (`dso__set_basename`): a JIT's map file
/// `/tmp/perf-PID.map` is `[JIT] tid PID`, any other file its base name.
pub(crate) fn user_short_name(long: &str) -> String {
    match perf_map_pid(long) {
        Some(pid) => format!("[JIT] tid {pid}"),
        None => long.rsplit('/').next().unwrap_or(long).to_string(),
    }
}

#[cfg(test)]
mod tests;
