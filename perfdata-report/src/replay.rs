//! Reading a recording into the process model: the side-band records and samples are put
//! in time order as perf's ordered events put them and replayed, each sample resolved as
//! it comes, against the maps and names of that moment. Records are queued by time (equal
//! times keep file order); a FINISHED_ROUND record lets out the queued records no later
//! than the latest time seen before the previous one, as perf 6.1 does; records without a
//! time (or of time 0) go through at once. perf holds the queued records (about two
//! rounds) in memory whatever their size; here past [`ReplayOptions::queue_bytes`] they
//! wait on disk and come back merged in the same order (`replay/spill.rs`). A regular
//! file's samples wait as keys, their time and place in the file (`replay/keys.rs`).

use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::record::LostSamplesView;
use perfdata_core::record::{Mmap, RecordType, SampleView};
use perfdata_core::{Metadata, PerfReader, Piece, Result};

use crate::jitdump::{self, JitCode};
use crate::model::{EventGroup, Replay, ResolvedSample};
use crate::process::Machine;
use crate::sample_read::{deliver_read, Counters};
use crate::unwind::{Arch, UnwindOptions, Unwinder};

mod chain;
mod event;
mod keys;
mod lbr;
mod mapped;
mod order;
mod queue_bytes;
mod shown;
mod spill;
mod steps;
mod user;
pub(crate) use chain::with_user_frames;
use chain::{resolve_chain, Spare};
use event::{event_of, sample_event, Event};
use lbr::CallStacks;
use mapped::Mapped;
use order::{chain_words, Batch, Ordering, Step, SPARE_USERS};
pub use shown::ShownRecord;
use steps::{apply, replay_steps};
pub(crate) use user::user_state;
use user::user_state_in;

/// How a recording is replayed.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Unwind the user stack copies of `--call-graph dwarf` samples into their
    /// callchains, finding binaries so (None: their callchains are the recorded ones,
    /// the kernel part alone). On by default, as in perf.
    pub unwind: Option<UnwindOptions>,
    /// Where a jitdump named by the recording is looked for first (perf's `--symfs`);
    /// else at its path.
    pub symfs: Option<std::path::PathBuf>,
    /// Keep what perf script prints beyond [`ResolvedSample`] ([`SampleExtra`]: the
    /// tracepoint payload, the data address). Off by default.
    pub extra: bool,
    /// The side-band record types handed over among the samples, in perf's order
    /// ([`Delivered::Record`], perf script's `--show-*-events`). None by default.
    pub shown: Vec<RecordType>,
    /// The order perf walks callchains in (its `callchain_param.order`: perf report's
    /// `-g caller`/`callee`), which changes the frames of samples whose callchain comes
    /// from an LBR call stack (see `replay/lbr.rs`). Callee by default, as in perf script.
    pub callchain_order: crate::callgraph::Order,
    /// perf's `--max-stack` (None: its default, 127): an LBR call stack is used only
    /// where PERF_CONTEXT_USER is among that many entries of the recorded callchain.
    pub max_stack: Option<usize>,
    /// Bytes the time-order queue holds in memory before it goes to disk (perf holds a
    /// whole round, whatever its size): [`QUEUE_BYTES`] by default, or the
    /// `PERFDATA_QUEUE_BYTES` environment variable's number (for tests and the
    /// curious; the order is the same at any budget).
    pub queue_bytes: usize,
}

/// Bytes the time-order queue holds in memory by default ([`ReplayOptions::queue_bytes`]).
pub const QUEUE_BYTES: usize = 32 << 20;

pub use queue_bytes::queue_bytes_env;

/// [`ReplayOptions::queue_bytes`]'s default: `PERFDATA_QUEUE_BYTES`, else [`QUEUE_BYTES`]
/// (also where the variable is not a number: [`queue_bytes_env`] tells a caller that can
/// refuse it).
fn default_queue_bytes() -> usize {
    queue_bytes_env().ok().flatten().unwrap_or(QUEUE_BYTES)
}

/// What [`replay`] hands over, one at a time, in perf's order.
#[derive(Debug)]
pub enum Delivered<'a> {
    /// A sample, resolved, with what it carries beyond. Lent: what the callback leaves
    /// of it (its callchain's vector) is reused for the next sample.
    Sample(&'a mut ResolvedSample, &'a SampleExtra),
    /// A side-band record of a type [`ReplayOptions::shown`] lists, as its turn comes
    /// (after it changed the machine, or before for an EXIT, as perf script prints).
    Record(&'a ShownRecord),
    /// A side-band record of a type [`ReplayOptions::shown`] lists, before it changes
    /// the machine (and before its [`Delivered::Record`]): where perf hands each event
    /// to an AUX area trace's decoder first (`perf_session__deliver_event`).
    Due(&'a ShownRecord),
}

impl Delivered<'_> {
    /// The sample, when this is one.
    pub fn sample(&self) -> Option<&ResolvedSample> {
        match self {
            Delivered::Sample(s, _) => Some(s),
            Delivered::Record(_) | Delivered::Due(_) => None,
        }
    }
}

/// What a sample carries beyond [`ResolvedSample`], kept when [`ReplayOptions::extra`]
/// asks for it ([`replay`]); empty otherwise.
#[derive(Debug, Clone, Default)]
pub struct SampleExtra {
    /// The RAW payload (a tracepoint's fields), when the sample has one.
    pub raw: Option<Vec<u8>>,
    /// PERF_SAMPLE_ADDR's address, when the sample has one.
    pub addr: Option<u64>,
    /// PERF_SAMPLE_DATA_SRC, when the sample has one.
    pub data_src: Option<u64>,
    /// PERF_SAMPLE_WEIGHT or WEIGHT_STRUCT as read (one u64), when the sample has one.
    pub weight: Option<u64>,
    /// The recording's metadata as of the sample (in a pipe, attrs and features arrive
    /// as records): shared, copied again only when its attrs or features changed.
    pub meta: Option<std::sync::Arc<Metadata>>,
}

impl ReplayOptions {
    /// Unwinding `on` or off, binaries looked for under `symfs` as symbols are.
    pub fn unwinding(on: bool, symfs: Option<std::path::PathBuf>) -> Self {
        ReplayOptions {
            unwind: on.then_some(UnwindOptions {
                symfs: symfs.clone(),
                buildid_dir: None,
            }),
            extra: false,
            shown: Vec::new(),
            symfs,
            callchain_order: crate::callgraph::Order::Callee,
            max_stack: None,
            queue_bytes: default_queue_bytes(),
        }
    }
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            unwind: Some(UnwindOptions::default()),
            extra: false,
            shown: Vec::new(),
            symfs: None,
            callchain_order: crate::callgraph::Order::Callee,
            max_stack: None,
            queue_bytes: default_queue_bytes(),
        }
    }
}

/// Replay the recording `reader` reads (opened with [`PerfReader::open`]: compressed
/// records expanded), handing each sample, resolved, to `on` with the machine of that
/// moment instead of keeping it ([`Delivered::sample`]), with its [`SampleExtra`] (empty
/// unless [`ReplayOptions::extra`] is set), and among them the records of the types
/// [`ReplayOptions::shown`] lists. The caller may watch the reading's progress
/// ([`PerfReader::progress`]). Records are read and put in order on this thread and
/// replayed on another; a regular file's samples are queued as keys and read from the
/// mapping there (`replay/keys.rs`). How (unwinding on or off, where binaries are) is
/// `opts`.
pub fn replay(
    mut reader: PerfReader,
    opts: &ReplayOptions,
    on_sample: impl FnMut(&Machine, Delivered<'_>) + Send,
) -> Result<Replay> {
    let mut machine = Machine::new();
    let unwinder = opts
        .unwind
        .as_ref()
        .map(|o| Unwinder::new(arch_of(reader.meta()), o));
    let unwind = unwinder.is_some();
    add_feature_build_ids(reader.meta(), &mut machine);
    // A directory's data files are read one after the other, so their rounds do not
    // bound the times still to come: everything waits for the end.
    let rounds = reader.meta().container != perfdata_core::ContainerKind::Directory;
    let mut warnings = Vec::new();
    let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(4);
    // Batches handed back, emptied, to be filled again: no more are ever made than are
    // in flight at once.
    let (back, spare) = std::sync::mpsc::channel::<Batch>();
    // A regular file's samples wait as keys, read on the replaying thread.
    let mapped = Mapped::new(&reader, opts.extra);
    let mapped = mapped.as_ref();
    let ((machine, unwinder), lost_samples) =
        std::thread::scope(|scope| -> Result<((Machine, Option<Unwinder>), u64)> {
            let worker =
                scope.spawn(move || replay_steps(machine, unwinder, rx, back, mapped, on_sample));
            let order = Ordering::new(&tx, &spare, rounds, opts.queue_bytes);
            let order = if mapped.is_some() {
                order.with_keys()
            } else {
                order
            };
            let read = read_steps(&mut reader, order, (unwind, mapped), opts, &mut warnings);
            // The replay ends when the reading does, with or without an error.
            drop(tx);
            let machine = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            read.map(|lost| (machine, lost))
        })?;
    let meta = reader.meta();
    let string_feature = |id| match meta.feature(id) {
        Some(Feature::Hostname(s)) | Some(Feature::OsRelease(s)) => Some(s.to_string()),
        _ => None,
    };
    Ok(Replay {
        event_names: (0..meta.attrs().len())
            .map(|i| meta.event_name(i))
            .collect(),
        event_ids: meta
            .attrs()
            .iter()
            .map(|e| (e.attr.type_, e.attr.config))
            .collect(),
        hostname: string_feature(FeatureId::Hostname),
        osrelease: string_feature(FeatureId::OsRelease),
        groups: EventGroup::from_meta(meta),
        machine,
        lost_samples,
        unwind: unwinder.map(|u| u.stats().clone()).unwrap_or_default(),
        // The reader's first (a recording cut short: the whole records before the cut
        // were read), then the replay's own.
        warnings: meta
            .warnings
            .iter()
            .map(ToString::to_string)
            .chain(warnings)
            .collect(),
    })
}

/// Read every record the replay uses and hand them over in perf's order, in batches
/// (`order`), as `opts` asks, a sample `mapped` reads again queued as its key; returns
/// the samples LOST_SAMPLES records say were lost. After an error nothing more is
/// handed over.
fn read_steps(
    reader: &mut PerfReader,
    mut order: Ordering<'_>,
    (unwind, mapped): (bool, Option<&Mapped>),
    opts: &ReplayOptions,
    warnings: &mut Vec<String>,
) -> Result<u64> {
    let (extra, shown, symfs) = (opts.extra, &opts.shown[..], opts.symfs.as_deref());
    let mut lbr = CallStacks::new(opts.callchain_order, opts.max_stack);
    let mut lost = 0u64;
    // The metadata the samples are handed with, and what it was copied at.
    let mut meta: Option<(std::sync::Arc<Metadata>, (usize, usize))> = None;
    // The kernel's records of a mapped file come through the reader's fast lane.
    let walked = reader.for_each(|piece| {
        let Piece::Record(item) = piece else {
            return Ok(false);
        };
        if order.out.gone {
            return Err(Halt::Gone);
        }
        let kind = item.raw.record_type();
        // A sample before read past its record: these bytes are what perf read there.
        if let Some((held, words)) = lbr.feed(item.raw.bytes, item.raw.stream) {
            order.out.held.replace(held, words);
        }
        if !lbr.is_waiting() {
            order.spill_if_full().map_err(spill_error)?;
        }
        if kind == RecordType::FinishedRound {
            lbr.round();
        }
        if kind == RecordType::LostSamples {
            let n = item.view::<LostSamplesView>().map_or(0, |v| v.lost());
            lost = lost.saturating_add(n);
            return Ok(false);
        }
        if let Some((time, word)) = mapped
            .filter(|_| kind == RecordType::Sample)
            .and_then(|m| m.key_of(item))
        {
            if let Some(m) = meta_changed(&mut meta, item.meta).filter(|_| extra) {
                order.out.emit(Event::Meta(m));
            }
            match time {
                Some(t) => order.push_at(t, word),
                None => order.out.emit_at(word),
            }
            return Ok(false);
        }
        // Only the records the process model or the tables use are decoded.
        let step = match kind {
            RecordType::FinishedRound => Step::Round,
            k if shown.contains(&k) => {
                let at = *item.locate();
                let record = item.decode()?;
                let id_all = item
                    .meta
                    .attrs()
                    .get(at.event.unwrap_or(0))
                    .is_some_and(|a| a.attr.sample_id_all());
                let effect = if is_sideband(k) {
                    event_of(record.clone())
                } else {
                    None
                };
                let own = k.facts().task_fields(item.raw.bytes, item.meta.endian);
                let own = own.map(|(pid, tid, _)| (pid, tid));
                let shown = ShownRecord::new(record, item.raw.offset, &at, id_all, own);
                if let Some(m) = meta_changed(&mut meta, item.meta) {
                    order.out.emit(Event::Meta(m));
                }
                let ev = Event::Shown(Box::new((shown, effect)));
                match at.time {
                    Some(t) if t != 0 => Step::Queued(t, ev),
                    _ => Step::Now(ev),
                }
            }
            k if k == RecordType::Sample || is_sideband(k) => {
                // A SAMPLE is read through the borrowed view (the full decode builds
                // every field, most of the cost of a large report); it accepts exactly
                // the bytes the decode does, so a sample it refuses fails the decode too.
                // Its step is pushed where it is made, as below.
                if kind == RecordType::Sample
                    && push_sample(item, &mut order, &mut meta, (extra, unwind), &mut lbr)?
                {
                    return Ok(false);
                }
                // A side-band record, or a sample no event describes (its decode
                // fails, or gives nothing to replay).
                let Some(ev) = event_of(item.decode()?) else {
                    return Ok(false);
                };
                // perf delivers a record without a time (or of time 0) at once.
                match item.locate().time.filter(|&t| t != 0) {
                    Some(t) => Step::Queued(t, ev),
                    None => Step::Now(ev),
                }
            }
            _ => return Ok(false),
        };
        let jit = match &step {
            Step::Queued(_, ev) | Step::Now(ev) => match user_mmap(ev) {
                Some(mm) => jit_codes(mm, symfs, warnings),
                None => Vec::new(),
            },
            Step::Round => Vec::new(),
        };
        order.step(step).map_err(spill_error)?;
        for c in jit {
            order.push(c.time, Event::JitCode(Box::new(c)));
        }
        Ok(false)
    });
    match walked {
        Ok(()) => {}
        Err(Halt::Gone) => return Ok(lost),
        Err(Halt::Failed(e)) => return Err(e),
    }
    if let Some(why) = order.finish().map_err(spill_error)? {
        warnings.push(format!(
            "the time-order queue passed {} bytes and stayed in memory: no temporary file ({why})",
            opts.queue_bytes
        ));
    }
    Ok(lost)
}

/// Why [`read_steps`]'s walk stops before the end.
enum Halt {
    Failed(perfdata_core::Error),
    /// The replaying thread is gone (it panicked, which its join reports).
    Gone,
}

impl From<perfdata_core::Error> for Halt {
    fn from(e: perfdata_core::Error) -> Self {
        Halt::Failed(e)
    }
}

/// An error of the time-order queue's temporary file. Its making failing leaves the
/// queue in memory (`Ordering::spill_if_full`); this is a write or read failing later
/// (a `TMPDIR` that fills), where the records written cannot be had again: the error
/// names the directory, and the variable that keeps more of the queue in memory.
fn spill_error(e: std::io::Error) -> perfdata_core::Error {
    perfdata_core::Error::io(
        format!(
            "keeping the queued records in a temporary file in {} \
             (PERFDATA_QUEUE_BYTES sets the bytes held in memory before it)",
            crate::spool::temp_dir_named()
        ),
        e,
    )
}

/// Queue (or hand over) SAMPLE `item` in `order`, its fields read through the borrowed
/// view of its event's layout; false (nothing pushed) when no event describes it. `meta`,
/// `extra` and `unwind` are [`read_steps`]'s; `lbr` makes the chains of LBR call-stack
/// samples.
///
/// The step is made and stored in one place, and the sample's time and event are the
/// view's, not found again by `RecordRef::locate`: a step built up through several
/// values, each copied whole right after its fields were stored, stalled on those
/// stores (two fifths of the reading loop's cycles).
#[inline(always)]
fn push_sample(
    item: &perfdata_core::RecordRef<'_>,
    order: &mut Ordering<'_>,
    meta: &mut Option<(std::sync::Arc<Metadata>, (usize, usize))>,
    (extra, unwind): (bool, bool),
    lbr: &mut CallStacks,
) -> Result<bool> {
    let events = item.meta.events();
    let endian = item.meta.endian;
    let bytes = item.raw.bytes;
    let Some((e, layout)) = events
        .event_of(bytes, true, endian)
        .and_then(|e| Some((e, events.layout(e)?)))
    else {
        return Ok(false);
    };
    let body = bytes.get(8..).unwrap_or_default();
    let s = SampleView::parse_inlined(body, layout, endian, item.raw.offset + 8)?;
    let attr = &item.meta.attrs()[e].attr;
    let mut p = sample_event(&s, e, attr.sample_period, item.raw.header.misc, events);
    // The chain waits apart from the sample, named by it: the recorded one, or the
    // one perf makes of an LBR call stack.
    let mut beyond = None;
    if let Some(c) = s.callchain.filter(|c| !c.is_empty()) {
        p.chain = match lbr.words(attr, &s, bytes, item.raw.stream, endian) {
            Some((words, b)) => {
                beyond = b;
                p.lbr = true;
                order.out.held.hold(words.iter().copied())
            }
            None => order.out.held.hold(c.iter()),
        };
    }
    if extra {
        if let Some(m) = meta_changed(meta, item.meta) {
            order.out.emit(Event::Meta(m));
        }
        // Boxed only when there is something to keep: an allocation per sample was 5%
        // of script's cycles.
        if s.raw.is_some() || s.addr.is_some() || s.data_src.is_some() || s.weight.is_some() {
            p.rare().extra = Some(SampleExtra {
                raw: s.raw.map(<[u8]>::to_vec),
                addr: s.addr,
                data_src: s.data_src,
                weight: s.weight,
                meta: None,
            });
        }
    }
    use perfdata_core::attr::SampleType;
    if unwind
        && attr
            .sample_type
            .contains(SampleType::REGS_USER | SampleType::STACK_USER)
    {
        // A user state the replay is done with, filled again ([`order::Batch::users`]).
        let reuse = order.out.batch.users.pop();
        if let Some(user) = user_state_in(item, reuse) {
            p.rare().user = Some(user);
        }
    }
    // perf delivers a record without a time (or of time 0) at once (and a chain
    // handed over cannot wait for the bytes after its record: that word stays 0).
    match s.time.filter(|&t| t != 0) {
        Some(t) => {
            if let Some(b) = beyond {
                lbr.wait(b, p.chain);
            }
            order.push(t, Event::Sample(p))
        }
        None => order.out.emit(Event::Sample(p)),
    }
    Ok(true)
}

/// The metadata as of now, when its attrs or features changed (in a pipe, they arrive
/// as records) since `meta` was copied: copied again, and shared.
#[inline(always)]
fn meta_changed(
    meta: &mut Option<(std::sync::Arc<Metadata>, (usize, usize))>,
    now: &Metadata,
) -> Option<std::sync::Arc<Metadata>> {
    let size = (now.attrs().len(), now.features.len());
    if meta.as_ref().is_some_and(|(_, at)| *at == size) {
        return None;
    }
    meta_copied(meta, now, size)
}

/// [`meta_changed`]'s copy, made once in a file, out of the reading loop.
#[cold]
#[inline(never)]
fn meta_copied(
    meta: &mut Option<(std::sync::Arc<Metadata>, (usize, usize))>,
    now: &Metadata,
    size: (usize, usize),
) -> Option<std::sync::Arc<Metadata>> {
    let m = std::sync::Arc::new(now.clone());
    *meta = Some((m.clone(), size));
    Some(m)
}

/// The user-space MMAP (or MMAP2) a record to replay is, shown or not.
fn user_mmap(ev: &Event) -> Option<&Mmap> {
    match ev {
        Event::Mmap(mm) if !mm.2 => Some(&mm.0),
        Event::Shown(shown) => shown.1.as_ref().and_then(user_mmap),
        _ => None,
    }
}

/// The functions of the jitdump `mm` maps, when it is a jitdump marker (perf inject
/// --jit's `jit_detect`); what went wrong reading it joins `warnings`.
fn jit_codes(
    mm: &Mmap,
    symfs: Option<&std::path::Path>,
    warnings: &mut Vec<String>,
) -> Vec<JitCode> {
    let filename = mm.filename.as_str_lossy();
    if jitdump::marker_pid(&filename, mm.pid).is_none() {
        return Vec::new();
    }
    let path = jitdump::locate(&filename, symfs);
    let (codes, problem) = jitdump::read(&path, &filename, mm.pid);
    warnings.extend(problem);
    codes
}

/// The architecture of the recording's samples: the ARCH feature's, else (a pipe stream
/// without it) this machine's.
pub(crate) fn arch_of(meta: &Metadata) -> Option<Arch> {
    match meta.feature(FeatureId::Arch) {
        Some(Feature::Arch(a)) => Arch::from_uname(&a.to_string()),
        _ => Arch::host(),
    }
}

/// The side-band records the process model follows.
fn is_sideband(kind: RecordType) -> bool {
    matches!(
        kind,
        RecordType::Comm
            | RecordType::Fork
            | RecordType::Exit
            | RecordType::Mmap
            | RecordType::Mmap2
            | RecordType::HeaderBuildId
            | RecordType::Ksymbol
    )
}

/// Replay one side-band record (COMM, FORK, EXIT, MMAP, MMAP2, BUILD_ID, KSYMBOL) onto
/// `machine` at once, as its turn has come (the caller keeps perf's order); other
/// records are left alone.
pub(crate) fn replay_sideband(
    machine: &mut Machine,
    item: &perfdata_core::RecordRef<'_>,
) -> Result<()> {
    if !is_sideband(item.raw.record_type()) {
        return Ok(());
    }
    if let Some(ev) = event_of(item.decode()?) {
        apply(
            machine,
            ev,
            &mut Counters::default(),
            &mut SampleExtra::default(),
            &mut Spare::default(),
            &[],
            None,
            &mut |_, _| {},
        );
    }
    Ok(())
}

/// The BUILD_ID feature's entries, known before any record.
pub(crate) fn add_feature_build_ids(meta: &Metadata, machine: &mut Machine) {
    if let Some(Feature::BuildId(list)) = meta.feature(FeatureId::BuildId) {
        for e in &list.entries {
            machine.add_build_id(&e.filename_str(), e.build_id(), e.cpumode());
        }
    }
}
