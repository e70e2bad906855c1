//! The replaying thread's half of [`super::replay`]: the records the reading thread
//! handed over, in perf's order, applied to the machine and delivered.

use std::sync::mpsc::Receiver;

use super::*;

/// Replay the records from `rx` in perf's order, onto `machine`, unwinding the samples'
/// user stacks with `unwinder` if given.
pub(super) fn replay_steps(
    mut machine: Machine,
    mut unwinder: Option<Unwinder>,
    rx: Receiver<Batch>,
    back: std::sync::mpsc::Sender<Batch>,
    rounds: bool,
    mut on_sample: impl FnMut(&Machine, Delivered<'_>),
) -> (Machine, Option<Unwinder>) {
    // Records waiting for their turn, in perf's order (see the module's comment).
    let mut queue = OrderedQueue::new();
    let mut counters = Counters::default();
    let mut plain = SampleExtra::default();
    let mut spare = Spare::default();
    let mut apply = |machine: &mut Machine, spare: &mut Spare, ev| {
        apply(
            machine,
            ev,
            &mut counters,
            &mut plain,
            spare,
            unwinder.as_mut(),
            &mut on_sample,
        )
    };
    for mut batch in rx {
        let chains = &batch.chains;
        for step in batch.steps.drain(..) {
            match step {
                Step::Round if rounds => {
                    for ev in queue.round() {
                        apply(&mut machine, &mut spare, ev);
                    }
                }
                Step::Round => {}
                Step::Now(ev) => apply(&mut machine, &mut spare, ev),
                Step::Queued(t, ev) => queue.push(t, ev),
                Step::Chained(time, mut p, (start, len)) => {
                    let (start, len) = (start as usize, len as usize);
                    p.chain = spare.hold(&chains[start..start + len]);
                    match time {
                        Some(t) => queue.push(t, Event::Sample(p)),
                        None => apply(&mut machine, &mut spare, Event::Sample(p)),
                    }
                }
            }
        }
        batch.chains.clear();
        spare.hand_back_users(&mut batch.users, SPARE_USERS);
        // The reading thread may be gone (an error): the batch is dropped then.
        let _ = back.send(batch);
    }
    for ev in queue.drain() {
        apply(&mut machine, &mut spare, ev);
    }
    (machine, unwinder)
}

/// Replay one record; `plain` is what a sample without extra fields is handed with: no
/// fields, and the metadata as of now when kept ([`SampleExtra::meta`]). Shared by
/// reference, not cloned per sample: an Arc's count touched twice a sample was 4% of
/// `perfdata script`'s cycles. `spare` has the vectors of samples gone before.
pub(super) fn apply(
    machine: &mut Machine,
    ev: Event,
    counters: &mut Counters,
    plain: &mut SampleExtra,
    spare: &mut Spare,
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
        Event::BuildId { filename, build_id } => machine.add_build_id(&filename, &build_id),
        Event::Ksymbol(k) => machine.process_ksymbol(&k),
        Event::JitCode(code) => machine.process_jit_code(&code),
        Event::Shown(shown) => {
            let (mut record, effect) = *shown;
            record.meta = plain.meta.clone();
            let first = record.printed_first();
            if first {
                record.find_thread(machine);
                on_sample(machine, Delivered::Record(&record));
            }
            if let Some(ev) = effect {
                apply(machine, ev, counters, plain, spare, None, on_sample);
            }
            if !first {
                record.find_thread(machine);
                on_sample(machine, Delivered::Record(&record));
            }
        }
        Event::Sample(mut p) => {
            let mut rare = p.rare.take().map_or_else(Default::default, |r| *r);
            let mut unwound = 0;
            let mut chain = spare.release(p.chain);
            if let (Some(unwinder), Some(user)) = (unwinder, rare.user.take()) {
                let thread = machine.findnew_thread(p.pid, p.tid);
                let frames = unwinder.unwind(machine, thread, &user);
                spare.keep_user(user);
                chain = with_user_frames(&chain, &frames);
                unwound = frames.len();
            }
            let ip = machine.resolve(p.pid, p.tid, p.ip, p.kernel);
            let mut callchain = spare.frames();
            resolve_chain(machine, p.pid, p.tid, &chain, &mut callchain);
            spare.keep_words(chain);
            // A chain perf discards (a bad marker) has no frames, unwound or not.
            let unwound = if callchain.len() >= unwound {
                unwound
            } else {
                0
            };
            let mut sample = ResolvedSample {
                event: p.event as usize,
                pid: p.pid,
                tid: p.tid,
                cpu: p.cpu(),
                time: p.time(),
                period: p.period,
                ip,
                callchain,
                unwound,
            };
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
                None => {
                    on_sample(machine, Delivered::Sample(&mut sample, extra));
                    spare.keep_frames(sample.callchain);
                }
                Some(values) => {
                    deliver_read(machine, sample, &values, counters, &mut |m, mut s| {
                        on_sample(m, Delivered::Sample(&mut s, extra))
                    })
                }
            }
        }
    }
}
