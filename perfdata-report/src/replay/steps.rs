//! The replaying thread's half of [`super::replay`]: the records the reading thread
//! put in perf's order and handed over, applied to the machine and delivered.

use std::sync::mpsc::Receiver;

use super::event::PendingSample;
use super::keys::EVENT;
use super::*;

/// Replay the records from `rx`, in perf's order already, onto `machine`, unwinding the
/// samples' user stacks with `unwinder` if given, the samples handed over as keys read
/// from `mapped`; each emptied batch goes `back`.
pub(super) fn replay_steps(
    mut machine: Machine,
    mut unwinder: Option<Unwinder>,
    rx: Receiver<Batch>,
    back: std::sync::mpsc::Sender<Batch>,
    mapped: Option<&Mapped>,
    mut on_sample: impl FnMut(&Machine, Delivered<'_>),
) -> (Machine, Option<Unwinder>) {
    let mut counters = Counters::default();
    let mut plain = SampleExtra::default();
    let mut spare = Spare::default();
    // The callchain of the sample read from the file last.
    let mut words = Vec::new();
    // The file's bytes before this were given back (`Mapped::release_before`).
    let mut released = 0;
    for mut batch in rx {
        let chains = &batch.chains;
        let mut events = batch.events.drain(..);
        // With keys, they give the order (`super::keys`); without, the events do.
        let keyed = mapped.filter(|_| !batch.keys.is_empty());
        let mut at = 0;
        loop {
            let word = match keyed {
                None => EVENT,
                Some(mapped) => {
                    let Some(&word) = batch.keys.get(at) else {
                        break;
                    };
                    // The samples are read in time order, not file order: a few
                    // places at a time, each a cache miss without this.
                    if let Some(&ahead) = batch.keys.get(at + PREFETCH) {
                        mapped.prefetch(ahead);
                    }
                    at += 1;
                    word
                }
            };
            if word == EVENT {
                let Some(ev) = events.next() else {
                    if keyed.is_none() {
                        break;
                    }
                    continue;
                };
                apply(
                    &mut machine,
                    ev,
                    &mut counters,
                    &mut plain,
                    &mut spare,
                    chains,
                    unwinder.as_mut(),
                    &mut on_sample,
                );
            } else if let Some(p) = keyed.and_then(|m| m.sample(word, &mut words)) {
                replay_sample(
                    &mut machine,
                    p,
                    &mut counters,
                    &mut plain,
                    &mut spare,
                    &words,
                    unwinder.as_mut(),
                    &mut on_sample,
                );
            }
        }
        drop(events);
        if let Some(mapped) = keyed {
            mapped.release_before(&batch.keys, &mut released);
        }
        batch.keys.clear();
        batch.chains.clear();
        spare.hand_back_users(&mut batch.users, SPARE_USERS);
        // The reading thread may be gone (an error): the batch is dropped then.
        let _ = back.send(batch);
    }
    (machine, unwinder)
}

/// How many keys ahead of the one replayed a sample's bytes are fetched into the cache.
const PREFETCH: usize = 8;

/// Replay one record; `plain` is what a sample without extra fields is handed with: no
/// fields, and the metadata as of now when kept ([`SampleExtra::meta`]). Shared by
/// reference, not cloned per sample: an Arc's count touched twice a sample was 4% of
/// `perfdata script`'s cycles. `spare` has the vectors of samples gone before; `chains`
/// the callchain words of the batch the record came in ([`chain_words`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn apply(
    machine: &mut Machine,
    ev: Event,
    counters: &mut Counters,
    plain: &mut SampleExtra,
    spare: &mut Spare,
    chains: &[u64],
    unwinder: Option<&mut Unwinder>,
    on_sample: &mut impl FnMut(&Machine, Delivered<'_>),
) {
    match ev {
        Event::Comm {
            pid,
            tid,
            name,
            exec,
        } => machine.process_comm(pid, tid, &name, exec),
        Event::Fork(f, clone_maps) => machine.process_fork(&f, clone_maps),
        Event::Exit(f) => machine.process_exit(f.pid, f.tid, f.time),
        Event::Mmap(mm) => {
            let (mm, prot, kernel, build_id) = *mm;
            machine.process_mmap(&mm, prot, kernel, build_id)
        }
        Event::Meta(m) => plain.meta = Some(m),
        // Read from the file before it is replayed (`replay_steps`): never here.
        Event::At(_) => {}
        Event::BuildId {
            filename,
            build_id,
            cpumode,
        } => machine.add_build_id(&filename, &build_id, cpumode),
        Event::Ksymbol(k) => machine.process_ksymbol(&k),
        Event::JitCode(code) => machine.process_jit_code(&code),
        Event::Shown(shown) => {
            let (mut record, effect) = *shown;
            record.meta = plain.meta.clone();
            on_sample(machine, Delivered::Due(&record));
            let first = record.printed_first();
            if first {
                record.find_thread(machine);
                on_sample(machine, Delivered::Record(&record));
            }
            if let Some(ev) = effect {
                apply(machine, ev, counters, plain, spare, &[], None, on_sample);
            }
            if !first {
                record.find_thread(machine);
                on_sample(machine, Delivered::Record(&record));
            }
        }
        Event::Sample(p) => {
            let chain = chain_words(chains, p.chain);
            replay_sample(
                machine, p, counters, plain, spare, chain, unwinder, on_sample,
            )
        }
    }
}

/// [`apply`] of a sample (its callchain's entries `recorded`): made whole in `spare`'s,
/// resolved, and delivered. Inlined where a sample read from the file is made
/// (`super::mapped`), so that its fields go from the bytes to the sample delivered in
/// registers: a sample returned through memory and moved into an event stalled on its
/// stores (a tenth of script's cycles).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn replay_sample(
    machine: &mut Machine,
    mut p: PendingSample,
    counters: &mut Counters,
    plain: &mut SampleExtra,
    spare: &mut Spare,
    recorded: &[u64],
    unwinder: Option<&mut Unwinder>,
    on_sample: &mut impl FnMut(&Machine, Delivered<'_>),
) {
    let mut rare = p.rare.take().map_or_else(Default::default, |r| *r);
    let mut unwound = 0;
    let with_frames;
    let mut chain = recorded;
    if let (Some(unwinder), Some(user)) = (unwinder, rare.user.take()) {
        let thread = machine.findnew_thread(p.pid, p.tid);
        let frames = unwinder.unwind(machine, thread, &user);
        spare.keep_user(user);
        with_frames = with_user_frames(chain, &frames);
        chain = &with_frames;
        unwound = frames.len();
    }
    // The sample is made in the one kept from the sample before, field by
    // field, its ip resolved in place (Machine::resolve_into), then its chain:
    // a sample made whole and then moved, or a location returned and then
    // copied, stalled on the stores just made (a third of this function's
    // cycles).
    let sample = &mut spare.sample;
    sample.event = p.event as usize;
    sample.pid = p.pid;
    sample.tid = p.tid;
    sample.cpu = p.cpu();
    sample.time = p.time();
    sample.period = p.period;
    sample.unwound = unwound;
    sample.lbr = p.lbr;
    machine.resolve_into((p.pid, p.tid), p.ip, p.kernel, &mut sample.ip);
    resolve_chain(machine, p.pid, p.tid, chain, unwound, &mut sample.callchain);
    // A chain perf discards (a bad marker) has no frames, unwound or not.
    if sample.callchain.len() < unwound {
        sample.unwound = 0;
    }
    let own;
    let extra = match rare.extra {
        None => &*plain,
        Some(mut e) => {
            e.meta = plain.meta.clone();
            own = e;
            &own
        }
    };
    match rare.read {
        None => on_sample(machine, Delivered::Sample(sample, extra)),
        Some(values) => {
            let sample = sample.clone();
            deliver_read(machine, sample, &values, counters, &mut |m, mut s| {
                on_sample(m, Delivered::Sample(&mut s, extra))
            })
        }
    }
}
