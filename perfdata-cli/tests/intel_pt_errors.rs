//! The Intel PT error lines perf 6.1's `perf script` prints for the corpus recording,
//! exactly, from the decoder (perfdata-report/src/intel_pt) and perf's rule of which
//! failed walks it reports (intel_pt/dso_data.rs). The recorded events are replayed in
//! time order as perf interleaves them with the decoding (intel-pt.c
//! `intel_pt_process_queues`: each queue is decoded up to the next event's time before
//! the event is processed), since three of them change what is reported: a printed
//! sample (perf script fetches the instruction at its ip), an MMAP2 (a map to look ips
//! up in) and a `[vdso]` MMAP2 (perf reads the type of the thread's DSOs). A model of
//! perf's session, reduced to what this recording needs: user ips are looked up in the
//! maps of the traced process (every error line perf prints names it), queues do not
//! overlap in time.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use perfdata_core::record::RecordBody;
use perfdata_report::intel_pt::decoder::Decoder;
use perfdata_report::intel_pt::dso_data::{DsoData, UnreadableDsos};
use perfdata_report::intel_pt::queues::{Output, Queues};
use perfdata_report::intel_pt::state::{flags, kind, State};
use perfdata_tests::{corpus_dir, perf_available};

use crate::intel_pt_oracle::{error_lines, perf_script_text};

/// A record that matters here, at its perf time.
enum Event {
    /// A map: pid (-1: the kernel's), start, length, DSO.
    Map(i32, u64, u64, String),
    /// A recorded sample perf script prints, at ip.
    Sample(u64),
}

/// Maps by pid, then by start: (end, DSO).
type Maps = BTreeMap<i32, BTreeMap<u64, (u64, String)>>;

fn lookup(maps: &Maps, pid: i32, ip: u64) -> Option<String> {
    let m = maps.get(&pid)?;
    let (_, (end, dso)) = m.range(..=ip).next_back()?;
    (ip < *end).then(|| dso.clone())
}

/// perf script prints the state's sample (psb, cbr, or a branch its default `--itrace`
/// keeps) and so fetches the instruction at its ip.
fn printed_ip(s: &State) -> Option<u64> {
    let shown = s.kind & (kind::PSB_EVT | kind::CBR_CHG) != 0
        || (s.kind & kind::BRANCH != 0
            && (s.flags & flags::ASYNC != 0 || s.kind & kind::TRACE_END != 0));
    (shown && s.from_ip != 0).then_some(s.from_ip)
}

/// perf script's time column: seconds and microseconds, cut.
fn micros(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000)
}

/// The error lines (time, cpu, ip, code) and the order of everything perf script prints
/// (recorded samples, synthesized samples, errors), as keys.
fn simulate(path: &std::path::Path) -> (Vec<String>, Vec<String>) {
    let reader = perfdata_core::PerfReader::open(path).expect("recording opens");
    let trace = perfdata_report::intel_pt::read_trace(reader).expect("trace read");
    let info = trace.info.expect("Intel PT info");
    let mut reader = perfdata_core::PerfReader::open(path).expect("recording opens");
    let mut events: Vec<(u64, Event)> = Vec::new();
    let mut traced_pid = 0;
    while let Some(item) = reader.next_record().expect("record") {
        let r = item.decode().expect("decodes");
        let time = r.sample_id.as_ref().and_then(|s| s.time).unwrap_or(0);
        match &r.body {
            RecordBody::Mmap(m) => {
                let name = m.filename.as_str_lossy();
                let name = name.strip_suffix("_text").unwrap_or(&name).to_string();
                events.push((time, Event::Map(m.pid, m.addr, m.len, name)));
            }
            RecordBody::Mmap2(m) => {
                traced_pid = m.pid;
                events.push((
                    time,
                    Event::Map(m.pid, m.addr, m.len, m.filename.as_str_lossy()),
                ));
            }
            RecordBody::Sample(s) => {
                if let (Some(t), Some(ip)) = (s.time, s.ip) {
                    events.push((t, Event::Sample(ip)));
                }
            }
            _ => {}
        }
    }
    events.sort_by_key(|e| e.0);
    let kernel_start = 0xffff_ffff_b960_0000u64;
    let maps: Rc<RefCell<Maps>> = Rc::default();
    let data: Rc<RefCell<DsoData>> = Rc::default();
    let mut lines = Vec::new();
    let mut order = Vec::new();
    let dso_of = move |maps: &Maps, ip: u64| {
        if ip >= kernel_start {
            lookup(maps, -1, ip)
        } else {
            lookup(maps, traced_pid, ip)
        }
    };
    let queue_cpu: BTreeMap<u32, i32> = trace.buffers.iter().map(|b| (b.idx, b.cpu)).collect();
    let mut queues = Queues::new(
        trace
            .queue_indexes()
            .into_iter()
            .map(|q| {
                let (maps, data) = (maps.clone(), data.clone());
                let walker = UnreadableDsos {
                    data,
                    dso_of: move |ip| dso_of(&maps.borrow(), ip),
                };
                (q, Decoder::new(trace.params, trace.queue(q), walker))
            })
            .collect(),
    );
    let end = (u64::MAX, Event::Sample(0));
    for (time, event) in events.iter().chain(std::iter::once(&end)) {
        // perf decodes before the events that have a time.
        if *time != 0 {
            let tsc = if *time == u64::MAX {
                u64::MAX
            } else {
                info.tc.to_tsc(*time)
            };
            queues.process(tsc, &mut |o| match o {
                Output::Sample { state, time, .. } => {
                    let us = micros(info.tc.to_perf_time(time));
                    if state.kind & kind::PSB_EVT != 0 {
                        // C's %#llx: "0" for zero.
                        let offs = match state.psb_offset {
                            0 => "0".to_string(),
                            o => format!("{o:#x}"),
                        };
                        order.push(format!("{us} psb {offs}"));
                    }
                    if state.kind & kind::CBR_CHG != 0 {
                        order.push(format!("{us} cbr {}", state.cbr));
                    }
                    if state.kind & kind::BRANCH != 0
                        && (state.flags & flags::ASYNC != 0 || state.kind & kind::TRACE_END != 0)
                    {
                        order.push(format!(
                            "{us} branches {:x} => {:x}",
                            state.from_ip, state.to_ip
                        ));
                    }
                    if let Some(d) = printed_ip(&state).and_then(|ip| dso_of(&maps.borrow(), ip)) {
                        data.borrow_mut().failed_read(&d);
                    }
                }
                Output::Error { queue, state, time } => {
                    let ns = info.tc.to_perf_time(time);
                    let e = state.err.expect("an error");
                    order.push(format!(
                        "error {}.{:09} {:#x}",
                        ns / 1_000_000_000,
                        ns % 1_000_000_000,
                        state.from_ip
                    ));
                    lines.push(format!(
                        "{}.{:09} cpu {} ip {:#x} code {}: {}",
                        ns / 1_000_000_000,
                        ns % 1_000_000_000,
                        queue_cpu[&queue],
                        state.from_ip,
                        e.code(),
                        e.message()
                    ));
                }
            });
        }
        match event {
            Event::Map(pid, start, len, dso) => {
                let mut maps = maps.borrow_mut();
                if dso == "[vdso]" {
                    // perf reads the ELF type of the thread's `/` DSOs, none readable.
                    let names: Vec<String> = maps
                        .get(pid)
                        .map(|m| {
                            m.values()
                                .map(|(_, d)| d.clone())
                                .filter(|d| d.starts_with('/'))
                                .collect()
                        })
                        .unwrap_or_default();
                    for d in names {
                        data.borrow_mut().failed_read(&d);
                    }
                }
                maps.entry(*pid)
                    .or_default()
                    .insert(*start, (start + len, dso.clone()));
            }
            Event::Sample(ip) => {
                if *time != u64::MAX {
                    order.push(format!("{} cycles {ip:x}", micros(*time)));
                }
                if let Some(d) = dso_of(&maps.borrow(), *ip) {
                    data.borrow_mut().failed_read(&d);
                }
            }
        }
    }
    (lines, order)
}

/// The order keys of a `perf script` listing (recorded samples, synthesized samples,
/// errors), as [`simulate`] makes them.
fn keys(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            if let Some(e) = l.strip_prefix(" instruction trace error type 1 time ") {
                let f: Vec<&str> = e.split(' ').collect();
                return Some(format!("error {} {}", f[0], f[8]));
            }
            let f: Vec<&str> = l.split_whitespace().collect();
            let at = |name: &str| f.iter().position(|w| *w == name);
            let time = f
                .iter()
                .find(|w| w.ends_with(':') && w.contains('.'))?
                .trim_end_matches(':');
            if let Some(i) = at("cycles:") {
                Some(format!("{time} cycles {}", f[i + 1]))
            } else if let Some(i) = at("psb:") {
                Some(format!("{time} psb {}", f[i + 3]))
            } else if let Some(i) = at("cbr:") {
                Some(format!("{time} cbr {}", f[i + 2]))
            } else {
                at("branches:").map(|i| {
                    let to = f.iter().position(|w| *w == "=>").unwrap();
                    format!("{time} branches {} => {}", f[i + 1], f[to + 1])
                })
            }
        })
        .collect()
}

/// `perfdata script` prints the decoding in the model's order, every line of it (146),
/// and says on stderr how many errors it printed, as perf does.
#[perfdata_oracle::needs(corpus)]
#[test]
fn script_prints_the_decoding() {
    let path = corpus_dir()
        .expect("corpus")
        .join("google-perf.data.intel_pt-4.14");
    let (_, order) = simulate(&path);
    let out = perfdata_tests::run_perfdata(
        env!("CARGO_BIN_EXE_perfdata"),
        &["script".as_ref(), "-i".as_ref(), path.as_os_str()],
        None,
    );
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), 146);
    assert_eq!(keys(&text), order);
    // perf pads every event name to the widest of the events, synthesized ones
    // included (`transactions`).
    assert_eq!(
        text.lines().next(),
        Some(
            "            perf  3174   641.256820:          1       cycles:  \
             ffffffffb96071f4 [unknown] ([kernel.kallsyms])"
        )
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("114 instruction trace errors"));
}

#[perfdata_oracle::needs(corpus)]
#[test]
fn error_lines_are_perfs() {
    let path = corpus_dir()
        .expect("corpus")
        .join("google-perf.data.intel_pt-4.14");
    let (ours, order) = simulate(&path);
    assert_eq!(
        ours.len(),
        114,
        "perf prints 114 errors (its stderr's warning says so)"
    );
    assert_eq!(
        ours[..3],
        [
            "641.256845844 cpu 3 ip 0xffffffffb960d302 code 5: Failed to get instruction",
            "641.256915789 cpu 3 ip 0x7fb36d08bd60 code 5: Failed to get instruction",
            "641.256922789 cpu 3 ip 0xfffffe000008a000 code 5: Failed to get instruction",
        ]
    );
    if perf_available() {
        let text = perf_script_text(&path);
        assert_eq!(ours, error_lines(&text));
        // Everything perf prints, in its order: the decoding interleaved with the
        // recorded samples as perf runs it.
        let perf_order = keys(&text);
        assert_eq!(order.len(), 146, "perf script prints 146 lines");
        assert_eq!(order, perf_order);
    }
}
