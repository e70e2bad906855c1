//! A workload model, deterministic from a seed: processes with threads, DSOs with
//! functions and a call tree, and samples spread over threads and functions by weight,
//! with callchains up the tree and timestamps in order across CPUs.
//!
//! By default the DSOs are paths that do not exist (`/synth/libsynthK.so`): perf
//! attributes each sample to the DSO whose mapping holds its ip and shows the DSO's
//! name, but finds no symbols in it, so a profile's shape is exact per command, thread
//! and DSO (what `perf report --sort comm,pid,dso` shows). With
//! [`WorkloadSpec::dso_dir`] the DSOs are real ELF files written there (see
//! [`super::elf`]) and perf resolves every sample to its function too.

use std::path::PathBuf;

use super::cells::{apportion, Alias, Cells};
use super::dso::{Dso, Function};
use super::elf::{dso_elf, function_name, TEXT_OFFSET};
use super::event::EventSpec;
use super::rng::Rng;
use super::writer::{Mapping, SampleSpec, SynthTarget, SynthWriter};
use perfdata_write::error::{Result, WriteError};
use perfdata_write::output::AtomicOutput;

/// Where the kernel's text is mapped (x86-64 without KASLR).
pub const KERNEL_TEXT: u64 = 0xffff_ffff_8100_0000;
/// The first DSO's load address; DSO k is `DSO_STRIDE` bytes further per index.
const DSO_BASE: u64 = 0x5555_0000_0000;
const DSO_STRIDE: u64 = 0x1000_0000;
/// The most cells (sampling events x threads x functions) a workload may have: their
/// counts are the model's only memory that grows with the spec.
const MAX_CELLS: u64 = 1 << 21;
/// When the first record happens (ns of the recording clock).
pub const START_NS: u64 = 1_000_000_000;

/// How samples pick their cell (event, thread, function).
enum Draw {
    /// Without replacement from exact counts.
    Exact(Cells),
    /// With replacement, by weight.
    ByWeight(Alias),
}

/// When to stop sampling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Exactly this many samples, split over threads and functions by weight.
    Samples(u64),
    /// Samples drawn by weight until the records made reach this many bytes (before
    /// compression).
    Bytes(u64),
}

/// What the workload looks like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadSpec {
    /// Seed of the random choices.
    pub seed: u64,
    /// Number of processes.
    pub processes: u32,
    /// Threads of each process.
    pub threads_per_process: u32,
    /// DSOs mapped into every process.
    pub dsos: u32,
    /// Functions of each DSO.
    pub functions_per_dso: u32,
    /// When to stop writing samples.
    pub stop: Stop,
    /// Frames per callchain (the sampled function and its callers up the call tree,
    /// fewer when the tree's root is reached first); used by events with CALLCHAIN.
    pub callchain_depth: u32,
    /// Mean time between samples on one CPU, in ns.
    pub interval_ns: u64,
    /// At most this many distinct sampled addresses per function, evenly spaced from
    /// its start (a hot loop's few instructions, as real profiles have them), so that a
    /// recording of any size has at most `dsos x functions_per_dso x N` distinct
    /// stacks (each function's callchain is fixed by the call tree); `None` samples any
    /// byte of the function, nearly a stack per sample in a small trace.
    pub ips_per_function: Option<u32>,
    /// Whether MMAP2 records carry build ids (and the file lists them in BUILD_ID).
    pub build_ids: bool,
    /// The less common records too: a CGROUP and a BPF KSYMBOL at the start, NAMESPACES
    /// per process, SWITCH in and out per thread around the samples, and LOST,
    /// LOST_SAMPLES, THROTTLE and UNTHROTTLE halfway (give the first event
    /// [`super::EXTRA_RECORD_FLAGS`], as perf would).
    pub extras: bool,
    /// A weight per thread (process-major order); `None` draws them from the seed.
    pub thread_weights: Option<Vec<u64>>,
    /// A weight per function (DSO-major order); `None` draws them from the seed.
    pub function_weights: Option<Vec<u64>>,
    /// Write the DSOs as ELF shared objects with a symbol table into this directory
    /// (made absolute) and map them by those paths, so that perf names the function of
    /// every sample; `None` maps paths that do not exist (`/synth/libsynthK.so`).
    pub dso_dir: Option<PathBuf>,
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            seed: 1,
            processes: 2,
            threads_per_process: 2,
            dsos: 3,
            functions_per_dso: 8,
            stop: Stop::Samples(1000),
            callchain_depth: 4,
            interval_ns: 100_000,
            ips_per_function: None,
            build_ids: true,
            extras: false,
            thread_weights: None,
            function_weights: None,
            dso_dir: None,
        }
    }
}

/// A thread of the workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// Its command name (COMM).
    pub comm: String,
    /// Its relative share of the samples.
    pub weight: u64,
}

/// The workload laid out from its spec.
#[derive(Debug, Clone)]
pub struct Workload {
    /// What the workload was made from.
    pub spec: WorkloadSpec,
    /// Every thread, process by process.
    pub threads: Vec<Thread>,
    /// Every DSO.
    pub dsos: Vec<Dso>,
    /// Every function, DSO by DSO.
    pub functions: Vec<Function>,
}

/// Samples planned for one event, thread and DSO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// Index of the event.
    pub event: usize,
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// The thread's command name.
    pub comm: String,
    /// The DSO's path.
    pub dso: String,
    /// The function's symbol name ([`Workload::planned_functions`]); `None` when the
    /// counts are per DSO ([`Workload::planned`]).
    pub function: Option<String>,
    /// Number of samples planned.
    pub samples: u64,
}

fn bad(what: String) -> WriteError {
    WriteError::unsupported(None, what)
}

impl Workload {
    /// Lay out threads, DSOs, functions and the call tree from the spec's seed.
    pub fn new(spec: WorkloadSpec) -> Result<Self> {
        if spec.processes == 0 || spec.threads_per_process == 0 {
            return Err(bad(
                "a workload needs at least one process and thread".into()
            ));
        }
        if spec.dsos == 0 || spec.functions_per_dso == 0 {
            return Err(bad("a workload needs at least one DSO and function".into()));
        }
        let nthreads = u64::from(spec.processes) * u64::from(spec.threads_per_process);
        let nfuncs = u64::from(spec.dsos) * u64::from(spec.functions_per_dso);
        if nthreads > 1 << 20 || nfuncs > 1 << 20 || spec.dsos > 1 << 16 {
            return Err(bad(format!(
                "{nthreads} threads, {} DSOs and {nfuncs} functions: too many",
                spec.dsos
            )));
        }
        let dso_dir = match &spec.dso_dir {
            Some(dir) => Some(std::path::absolute(dir).map_err(|e| {
                WriteError::io(format!("cannot make {} absolute", dir.display()), e)
            })?),
            None => None,
        };
        let mut rng = Rng::new(spec.seed, 1);
        let weights = |given: &Option<Vec<u64>>, n: u64, rng: &mut Rng, what: &str, hi| match given
        {
            Some(w) if w.len() as u64 != n => {
                Err(bad(format!("{} {what} weights for {n} {what}s", w.len())))
            }
            Some(w) => Ok(w.clone()),
            None => Ok((0..n).map(|_| rng.range(1, hi)).collect::<Vec<u64>>()),
        };
        let tw = weights(&spec.thread_weights, nthreads, &mut rng, "thread", 10)?;
        let fw = weights(&spec.function_weights, nfuncs, &mut rng, "function", 100)?;
        let stride = spec.threads_per_process as i32;
        let threads = (0..spec.processes as i32)
            .flat_map(|p| {
                (0..stride).map(move |t| (p, 10_000 + p * stride, 10_000 + p * stride + t))
            })
            .zip(tw)
            .map(|((p, pid, tid), weight)| Thread {
                pid,
                tid,
                comm: format!("synth{p}"),
                weight,
            })
            .collect();
        let mut dsos = Vec::with_capacity(spec.dsos as usize);
        let mut functions = Vec::with_capacity(nfuncs as usize);
        let mut fw = fw.into_iter();
        for k in 0..spec.dsos {
            let addr = DSO_BASE + u64::from(k) * DSO_STRIDE;
            let mut at = addr;
            for _ in 0..spec.functions_per_dso {
                let size = rng.range(1, 256) * 16;
                let g = functions.len() as u64;
                functions.push(Function {
                    dso: k,
                    start: at,
                    size,
                    parent: (g > 0).then(|| rng.below(g) as u32),
                    weight: fw.next().expect("one weight per function"),
                });
                at += size;
            }
            let mut build_id = [0u8; 20];
            for chunk in build_id.chunks_mut(8) {
                let bits = rng.next_u64().to_le_bytes();
                chunk.copy_from_slice(&bits[..chunk.len()]);
            }
            let name = format!("libsynth{k}.so");
            let (path, pgoff) = match &dso_dir {
                Some(dir) => (dir.join(&name).to_string_lossy().into_owned(), TEXT_OFFSET),
                None => (format!("/synth/{name}"), 0),
            };
            dsos.push(Dso {
                path,
                addr,
                len: (at - addr).div_ceil(4096) * 4096,
                pgoff,
                build_id,
            });
        }
        Ok(Workload {
            spec,
            threads,
            dsos,
            functions,
        })
    }

    /// The weight of every cell: events (that sample) x threads x functions.
    fn cell_weights(&self, sampling: &[usize]) -> Result<Vec<u64>> {
        let n = sampling.len() as u64 * self.threads.len() as u64 * self.functions.len() as u64;
        if n > MAX_CELLS {
            return Err(bad(format!(
                "{n} cells (sampling events x threads x functions); at most {MAX_CELLS}"
            )));
        }
        let mut w = Vec::with_capacity(n as usize);
        for _ in sampling {
            for t in &self.threads {
                w.extend(self.functions.iter().map(|f| t.weight * f.weight));
            }
        }
        Ok(w)
    }

    fn sampling(events: &[EventSpec]) -> Vec<usize> {
        (0..events.len()).filter(|&i| events[i].samples()).collect()
    }

    /// With [`Stop::Samples`], the samples the trace will hold per event, thread and
    /// DSO (in that order, cells with none left out).
    pub fn planned(&self, events: &[EventSpec]) -> Result<Vec<Planned>> {
        self.plan(events, false)
    }

    /// With [`Stop::Samples`], the samples the trace will hold per event, thread and
    /// function (in that order, cells with none left out), each naming its DSO and
    /// the function's symbol.
    pub fn planned_functions(&self, events: &[EventSpec]) -> Result<Vec<Planned>> {
        self.plan(events, true)
    }

    /// The symbol name of function `g` (global index), as the DSO files name it.
    pub fn function_name(&self, g: usize) -> String {
        let f = &self.functions[g];
        let first = f.dso as usize * self.spec.functions_per_dso as usize;
        function_name(f.dso, (g - first) as u32)
    }

    fn plan(&self, events: &[EventSpec], per_function: bool) -> Result<Vec<Planned>> {
        let Stop::Samples(total) = self.spec.stop else {
            return Err(bad("only a sample count plans exact counts".into()));
        };
        let sampling = Self::sampling(events);
        let counts = apportion(total, &self.cell_weights(&sampling)?);
        let mut out = Vec::new();
        let nf = self.functions.len();
        let per_event = self.threads.len() * nf;
        for (ei, &event) in sampling.iter().enumerate() {
            for (ti, t) in self.threads.iter().enumerate() {
                let base = ei * per_event + ti * nf;
                // Per function, or summed per DSO (keyed by the DSO's first function).
                let mut sums = vec![0u64; nf];
                for (fi, f) in self.functions.iter().enumerate() {
                    let key = if per_function {
                        fi
                    } else {
                        f.dso as usize * self.spec.functions_per_dso as usize
                    };
                    sums[key] += counts[base + fi];
                }
                for (fi, n) in sums.into_iter().enumerate().filter(|(_, n)| *n > 0) {
                    out.push(Planned {
                        event,
                        pid: t.pid,
                        tid: t.tid,
                        comm: t.comm.clone(),
                        dso: self.dsos[self.functions[fi].dso as usize].path.clone(),
                        function: per_function.then(|| self.function_name(fi)),
                        samples: n,
                    });
                }
            }
        }
        Ok(out)
    }

    /// With [`WorkloadSpec::dso_dir`], write every DSO's ELF file there (each through
    /// a temp file renamed into place); without, nothing. Returns the paths written.
    pub fn write_dso_files(&self) -> Result<Vec<PathBuf>> {
        if self.spec.dso_dir.is_none() {
            return Ok(Vec::new());
        }
        let per_dso = self.spec.functions_per_dso as usize;
        let mut written = Vec::with_capacity(self.dsos.len());
        for (k, (d, funcs)) in self
            .dsos
            .iter()
            .zip(self.functions.chunks(per_dso))
            .enumerate()
        {
            let path = PathBuf::from(&d.path);
            let mut out = AtomicOutput::create(&path)?;
            {
                use std::io::Write;
                let mut w = out.writer();
                w.write_all(&dso_elf(d, k as u32, funcs))
                    .and_then(|()| w.flush())
                    .map_err(|e| WriteError::io(format!("writing {}", path.display()), e))?;
            }
            out.commit(None)?;
            written.push(path);
        }
        Ok(written)
    }

    /// Write the whole workload: the DSO files (with [`WorkloadSpec::dso_dir`]), then
    /// the kernel map, each process's FORK, COMM and MMAP2s, its threads, the samples,
    /// and every thread's EXIT. Returns the samples written.
    pub fn write<T: SynthTarget>(&self, w: &mut SynthWriter<T>) -> Result<u64> {
        self.write_dso_files()?;
        // Setup records 1 µs apart, before the first sample.
        let mut time = START_NS;
        let mut tick = || {
            time += 1000;
            time
        };
        w.kernel_mmap(KERNEL_TEXT, 0x100_0000, tick())?;
        if self.spec.extras {
            w.cgroup(1, "/synth", tick())?;
            w.ksymbol(0xffff_ffff_c000_0000, 0x100, "bpf_prog_synth", tick())?;
        }
        for main in self.threads.iter().filter(|t| t.pid == t.tid) {
            w.fork(main.pid, 1, main.tid, 1, tick())?;
            w.comm(main.pid, main.tid, &main.comm, true, tick())?;
            if self.spec.extras {
                w.namespaces(main.pid, main.tid, 0xf000_0000, tick())?;
            }
            for d in &self.dsos {
                let m = Mapping {
                    pid: main.pid,
                    tid: main.tid,
                    addr: d.addr,
                    len: d.len,
                    pgoff: d.pgoff,
                    path: d.path.clone(),
                    build_id: self.spec.build_ids.then_some(d.build_id),
                };
                w.mmap2(&m, tick())?;
            }
            for t in self
                .threads
                .iter()
                .filter(|t| t.pid == main.pid && t.tid != main.tid)
            {
                w.fork(t.pid, t.pid, t.tid, t.pid, tick())?;
                w.comm(t.pid, t.tid, &t.comm, false, tick())?;
            }
        }
        if self.spec.extras {
            for t in &self.threads {
                w.switch(t.pid, t.tid, false, tick(), 0)?;
            }
        }
        let (samples, mut time) = self.write_samples(w, tick())?;
        for t in self.threads.iter().filter(|_| self.spec.extras) {
            time += 1000;
            w.switch(t.pid, t.tid, true, time, 0)?;
        }
        for t in &self.threads {
            time += 1000;
            w.exit(t.pid, t.pid, t.tid, t.pid, time)?;
        }
        Ok(samples)
    }

    /// A sampled address's offset in `f`: any byte, or one of
    /// [`WorkloadSpec::ips_per_function`] evenly spaced ones (one draw either way).
    fn offset_in(&self, f: &Function, rng: &mut Rng) -> u64 {
        match self.spec.ips_per_function {
            None => rng.below(f.size),
            Some(n) => {
                let n = u64::from(n).clamp(1, f.size);
                rng.below(n) * (f.size / n)
            }
        }
    }

    fn write_samples<T: SynthTarget>(
        &self,
        w: &mut SynthWriter<T>,
        start: u64,
    ) -> Result<(u64, u64)> {
        let sampling = Self::sampling(w.events().0);
        if sampling.is_empty() {
            return Ok((0, start));
        }
        let weights = self.cell_weights(&sampling)?;
        // Exact counts are drawn without replacement; a size is filled by weight.
        let (mut draw, limit) = match self.spec.stop {
            Stop::Samples(n) => (Draw::Exact(Cells::new(&apportion(n, &weights))), u64::MAX),
            Stop::Bytes(b) => {
                let alias = Alias::new(&weights)
                    .ok_or_else(|| bad("the weights are all zero or too large".into()))?;
                (Draw::ByWeight(alias), b)
            }
        };
        drop(weights);
        let mut rng = Rng::new(self.spec.seed, 2);
        let nr_cpus = u64::from(w.host().nr_cpus.max(1));
        // Samples on all CPUs together come nr_cpus times as often as on one.
        let step = (self.spec.interval_ns / nr_cpus).max(1);
        let nf = self.functions.len();
        let per_event = self.threads.len() * nf;
        let mut callers = Vec::with_capacity(self.spec.callchain_depth as usize);
        let mut time = start;
        let mut n = 0u64;
        let halfway = match self.spec.stop {
            Stop::Samples(n) => (n / 2, u64::MAX),
            Stop::Bytes(b) => (u64::MAX, b / 2),
        };
        let mut extras_due = self.spec.extras;
        while w.record_bytes() < limit {
            if extras_due && (n >= halfway.0 || w.record_bytes() >= halfway.1) {
                extras_due = false;
                w.lost(3, time, 0)?;
                w.lost_samples(2, time, 0)?;
                w.throttle(false, time, 0)?;
                w.throttle(true, time + 1, 0)?;
            }
            let cell = match &mut draw {
                Draw::Exact(cells) => match cells.draw(&mut rng, true) {
                    Some(cell) => cell,
                    None => break,
                },
                Draw::ByWeight(alias) => alias.draw(&mut rng),
            };
            // Cells are event-major, then thread, then function (two divisions).
            let (ei, rest) = (cell / per_event, cell % per_event);
            let (ti, fi) = (rest / nf, rest % nf);
            let (event, thread, f) = (sampling[ei], &self.threads[ti], &self.functions[fi]);
            time += 1 + rng.below(2 * step);
            callers.clear();
            let mut at = f.parent;
            while let Some(p) =
                at.filter(|_| callers.len() + 1 < self.spec.callchain_depth as usize)
            {
                let caller = &self.functions[p as usize];
                // The return address: just after a call in the middle of the caller.
                callers.push(caller.start + caller.size / 2);
                at = caller.parent;
            }
            w.sample(&SampleSpec {
                event,
                pid: thread.pid,
                tid: thread.tid,
                time,
                cpu: rng.below(nr_cpus) as u32,
                ip: f.start + self.offset_in(f, &mut rng),
                period: None,
                callers: &callers,
                addr: 0x7ffd_0000_0000 + rng.below(1 << 20) * 8,
                weight: f.weight,
            })?;
            n += 1;
        }
        Ok((n, time))
    }
}
