//! Merges of the fixtures, read back: every record's id is one its event lists, no id
//! is two events', samples per event are the inputs' added up, and the records come in
//! time order.

use std::collections::{BTreeMap, HashSet};
use std::io::Cursor;

use perfdata_core::record::RecordType;
use perfdata_core::{PerfReader, ReadOptions};

use super::{Align, Merge, MergeOptions};
use crate::convert::{ConvertOptions, Target};
use crate::{Conversion, Sink};

fn fixture(name: &str) -> String {
    format!("{}/../fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Samples per event name, and the sample times in the order read.
fn samples(bytes: Vec<u8>) -> (BTreeMap<String, u64>, Vec<u64>) {
    let (n, times, _) = samples_ids(bytes);
    (n, times)
}

/// [`samples`], and the ids the samples carry.
fn samples_ids(bytes: Vec<u8>) -> (BTreeMap<String, u64>, Vec<u64>, HashSet<u64>) {
    let mut r = PerfReader::from_vec(bytes, ReadOptions::Contents).unwrap();
    let mut n = BTreeMap::new();
    let mut times = Vec::new();
    let mut seen = HashSet::new();
    while let Some(item) = r.next_record().unwrap() {
        if item.raw.record_type() != RecordType::Sample {
            continue;
        }
        let at = item.locate();
        if item.meta.attrs().len() > 1 {
            // perf finds the event by the id: it must be listed, and be that event's.
            let id = at.id.expect("several events: every sample has its id");
            assert_eq!(item.meta.events().event_of_id(id), at.event, "id {id}");
        }
        seen.extend(at.id);
        let name = item.meta.event_name(at.event.unwrap());
        *n.entry(name).or_default() += 1;
        times.push(at.time.unwrap());
    }
    let ids: Vec<u64> = r
        .meta()
        .attrs()
        .iter()
        .flat_map(|a| a.ids.clone())
        .collect();
    let unique: HashSet<_> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "no id is listed twice");
    (n, times, seen)
}

fn merged(inputs: &[&str], opts: &MergeOptions, target: Target) -> Vec<u8> {
    let paths: Vec<String> = inputs.iter().map(|f| fixture(f)).collect();
    let merge = Merge::open(&paths, opts).unwrap();
    let mut out = Cursor::new(Vec::new());
    let convert = ConvertOptions {
        target: Some(target),
        ..Default::default()
    };
    Conversion::new(merge)
        .options(convert)
        .write(Sink::seekable(&mut out, None))
        .unwrap();
    out.into_inner()
}

fn alone(name: &str) -> BTreeMap<String, u64> {
    samples(std::fs::read(fixture(name)).unwrap()).0
}

#[test]
fn different_events_stay_apart_and_ids_tell_them_apart() {
    // cpu-clock alone (no id in its records) and three events with IDENTIFIER.
    for target in [Target::File, Target::Pipe] {
        let out = merged(
            &["file-cpu-clock.data", "file-multi-event.data"],
            &MergeOptions::default(),
            target,
        );
        let (got, times) = samples(out);
        let mut want = alone("file-cpu-clock.data");
        for (k, v) in alone("file-multi-event.data") {
            *want.entry(k).or_default() += v;
        }
        assert_eq!(got, want, "{target:?}");
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "time order");
    }
}

#[test]
fn a_recording_twice_has_its_ids_remapped_and_counts_twice() {
    let opts = MergeOptions {
        allow_duplicates: true,
        ..Default::default()
    };
    let name = "file-multi-event.data";
    let (got, times, ids) = samples_ids(merged(&[name, name], &opts, Target::File));
    let want: BTreeMap<_, _> = alone(name).into_iter().map(|(k, v)| (k, 2 * v)).collect();
    assert_eq!(got, want);
    // The second copy's samples carry its new ids: twice the ids, none shared.
    let (_, _, one) = samples_ids(std::fs::read(fixture(name)).unwrap());
    assert!(!one.is_empty());
    assert_eq!(ids.len(), 2 * one.len());
    // Each time twice, in order.
    let one = samples(std::fs::read(fixture(name)).unwrap()).1;
    let mut twice: Vec<u64> = one.iter().flat_map(|&t| [t, t]).collect();
    twice.sort();
    assert_eq!(times, twice);
    // Refused without the flag.
    let paths = [fixture(name), fixture(name)];
    let err = Merge::open(&paths, &MergeOptions::default()).err().unwrap();
    assert!(err.to_string().contains("same recording"), "{err}");
}

#[test]
fn align_start_shifts_the_second_input_to_the_first_ones_start() {
    let opts = MergeOptions {
        align: Align::Start,
        allow_duplicates: true,
        ..Default::default()
    };
    let merge = Merge::open(
        &[
            fixture("file-cpu-clock.data"),
            fixture("file-multi-event.data"),
        ],
        &opts,
    )
    .unwrap();
    let delta = merge.inputs()[1].time_delta;
    assert_ne!(delta, 0);
    let out = merged(
        &["file-cpu-clock.data", "file-multi-event.data"],
        &opts,
        Target::File,
    );
    let (_, times) = samples(out);
    let first_a = samples(std::fs::read(fixture("file-cpu-clock.data")).unwrap()).1[0];
    let first_b = samples(std::fs::read(fixture("file-multi-event.data")).unwrap()).1[0];
    assert_eq!(first_b as i64 + delta, first_a as i64);
    assert_eq!(times[0], first_a);
    assert_eq!(times.iter().filter(|&&t| t == first_a).count(), 2);
}

#[test]
fn compressed_inputs_merge_into_a_file_or_a_stream() {
    // The records come out of their compressed containers and are rewritten: whatever
    // the options keep, they are the merge's records, compressed only when asked.
    let inputs = ["file-compressed.data", "pipe-compressed.data"];
    let mut want = BTreeMap::new();
    for name in inputs {
        for (k, v) in alone(name) {
            *want.entry(k).or_default() += v;
        }
    }
    let opts = MergeOptions {
        allow_duplicates: true,
        ..Default::default()
    };
    for target in [Target::File, Target::Pipe] {
        let (got, times) = samples(merged(&inputs, &opts, target));
        assert_eq!(got, want, "{target:?}");
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "time order");
    }
}

/// A NUMA node's free memory differs between any two recordings of one machine: not a
/// difference worth a warning; its CPUs or total memory are.
#[test]
fn numa_free_memory_is_not_a_difference() {
    use perfdata_core::feature::{Feature, FeatureId, FeatureSection, NumaTopology};
    let reader = PerfReader::open(fixture("file-cpu-clock.data")).unwrap();
    let a = reader.meta().clone();
    let Some(Feature::NumaTopology(numa)) = a.feature(FeatureId::NumaTopology) else {
        panic!("the fixture has NUMA_TOPOLOGY");
    };
    let with = |change: &dyn Fn(&mut NumaTopology)| {
        let mut t = numa.clone();
        change(&mut t);
        let mut b = a.clone();
        let f = FeatureSection::new(FeatureId::NumaTopology, Feature::NumaTopology(t));
        b.features.insert(FeatureId::NumaTopology, f);
        super::features::same_machine(FeatureId::NumaTopology, &a, &b)
    };
    assert!(with(&|t| t.nodes[0].mem_free += 4096));
    assert!(!with(&|t| t.nodes[0].mem_total += 4096));
    assert!(!with(
        &|t| t.nodes[0].cpus = perfdata_core::feature::PerfString::new("0")
    ));
}

/// An input without HOSTNAME (a damaged file, a stream cut before its features) is
/// taken as another host: its pids move, and a warning says so and how to keep them.
#[test]
fn an_input_without_hostname_is_said_to_be_moved() {
    use crate::convert::Source;
    use perfdata_core::feature::FeatureId;
    let dir = tempfile::tempdir().unwrap();
    let first = fixture("file-cpu-clock.data");
    let mut tree = perfdata_core::PerfData::read_with(&first, ReadOptions::Contents).unwrap();
    assert!(tree
        .meta
        .features
        .shift_remove(&FeatureId::Hostname)
        .is_some());
    let nameless = dir.path().join("nameless.data");
    Conversion::new(crate::TreeSource::new(&tree))
        .write(Sink::path(&nameless).unwrap())
        .unwrap();
    let merge = Merge::open(
        &[first, nameless.display().to_string()],
        &MergeOptions {
            allow_duplicates: true,
            ..Default::default()
        },
    )
    .unwrap();
    let said: Vec<String> = merge
        .meta()
        .warnings
        .iter()
        .map(|w| w.to_string())
        .collect();
    let want = format!(
        "{}: no HOSTNAME feature: taken as another host",
        nameless.display()
    );
    assert!(said.iter().any(|w| w.contains(&want)), "{said:?}");
}

/// The pids LOST, SWITCH_CPU_WIDE and ID_INDEX carry in their bodies, and ID_INDEX's
/// ids and event indexes, as the merge rewrites them: a second host's switches name its
/// moved tasks, and every ID_INDEX entry names an id an event lists, its ring buffer
/// index (perf's sid->idx, not an event's place) and cpu kept, its tid moved.
#[test]
fn switches_and_id_index_of_a_moved_host_are_rewritten() {
    // Context switches system-wide (every ID_INDEX tid -1), and one thread's events.
    moved_host_rewritten("file-system-wide.data", true);
    moved_host_rewritten("file-cpu-clock.data", false);
}

fn moved_host_rewritten(name: &str, switching: bool) {
    use perfdata_core::feature::{Feature, FeatureId, FeatureSection, PerfString};
    use perfdata_core::record::RecordBody;
    const OFFSET: u32 = 1_000_000;
    let dir = tempfile::tempdir().unwrap();
    let first = fixture(name);
    let mut tree = perfdata_core::PerfData::read_with(&first, ReadOptions::Contents).unwrap();
    let host = Feature::Hostname(PerfString::new("elsewhere"));
    tree.meta.features.insert(
        FeatureId::Hostname,
        FeatureSection::new(FeatureId::Hostname, host),
    );
    let other = dir.path().join("other.data");
    Conversion::new(crate::TreeSource::new(&tree))
        .write(Sink::path(&other).unwrap())
        .unwrap();

    // (next_prev_pid, next_prev_tid) of each switch, and each ID_INDEX entry's tid.
    let read = |bytes: Vec<u8>| {
        let mut r = PerfReader::from_vec(bytes, ReadOptions::Contents).unwrap();
        let (mut switches, mut tids, mut ids) = (Vec::new(), Vec::new(), Vec::new());
        while let Some(item) = r.next_record().unwrap() {
            match item.decode().unwrap().body {
                RecordBody::SwitchCpuWide(s) => switches.push((s.next_prev_pid, s.next_prev_tid)),
                RecordBody::IdIndex(ix) => {
                    for e in &ix.entries {
                        let event = item.meta.events().event_of_id(e.id);
                        assert!(event.is_some(), "entry {e:?}: its id is an event's");
                        tids.push((e.idx, e.cpu, e.tid));
                        ids.push(e.id);
                    }
                }
                _ => {}
            }
        }
        // Each id an entry, once: the attrs' ids.
        let listed: HashSet<u64> = r
            .meta()
            .attrs()
            .iter()
            .flat_map(|a| a.ids.clone())
            .collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "an id in two ID_INDEX entries");
        assert_eq!(ids.into_iter().collect::<HashSet<_>>(), listed);
        switches.sort();
        tids.sort();
        (switches, tids)
    };
    let (switches, tids) = read(std::fs::read(&first).unwrap());
    assert_eq!(
        switches.iter().any(|&(p, _)| p > 0),
        switching,
        "{name} switches"
    );
    assert_eq!(
        !tids.iter().any(|&(_, _, t)| t != u64::MAX),
        switching,
        "{name}'s tids"
    );
    let moved = |v: i32| if v <= 0 { v } else { v + OFFSET as i32 };
    let mut want_switches = switches.clone();
    want_switches.extend(switches.iter().map(|&(p, t)| (moved(p), moved(t))));
    want_switches.sort();
    let mut want_tids = tids.clone();
    want_tids.extend(tids.iter().map(|&(idx, cpu, t)| match t {
        0 | u64::MAX => (idx, cpu, t),
        t => (idx, cpu, t + u64::from(OFFSET)),
    }));
    want_tids.sort();

    let opts = MergeOptions {
        pid_offset: Some(OFFSET),
        ..Default::default()
    };
    let paths = [first, other.display().to_string()];
    let merge = Merge::open(&paths, &opts).unwrap();
    assert_eq!(merge.inputs()[1].pid_offset, OFFSET);
    let mut out = Cursor::new(Vec::new());
    Conversion::new(merge)
        .write(Sink::seekable(&mut out, None))
        .unwrap();
    let (got_switches, got_tids) = read(out.into_inner());
    assert_eq!(got_switches, want_switches);
    assert_eq!(got_tids, want_tids);
}

/// One host's clock in one boot is told from another boot's by the references' origins
/// (wall time minus clock time): a later boot's origin is past the earlier reference's
/// wall time, so the origins differ by at least the earlier clock time there.
#[test]
fn one_clock_is_one_host_clockid_and_boot() {
    use super::clock::Clock;
    // Monotonic, 600 s after boot; wall time 1,800,000,000 s.
    let wall = 1_800_000_000_000_000_000i128;
    let clock = |host: &str, clockid: u32, origin_off: i128, at: u64| Clock {
        host: Some(host.to_string()),
        clockid: (Some(clockid as i32), clockid),
        origin: wall - 600_000_000_000 + origin_off,
        at,
    };
    let a = clock("h", 1, 0, 600_000_000_000);
    // A recording of the same boot an hour later, its reference 1,073 ns off.
    assert!(a.same_as(&clock("h", 1, -1_073, 4_200_000_000_000)));
    // A second boot, 5 s after a: its clock at 2 s then.
    let reboot = clock("h", 1, 600_000_000_000 + 3_000_000_000, 2_000_000_000);
    assert!(!a.same_as(&reboot));
    assert!(!reboot.same_as(&a));
    // Another host or clockid is another clock, however close.
    assert!(!a.same_as(&clock("g", 1, 0, 600_000_000_000)));
    assert!(!a.same_as(&clock("h", 4, 0, 600_000_000_000)));
    // Without a hostname nothing is known to be one machine.
    let mut anon = a.clone();
    anon.host = None;
    assert!(!anon.same_as(&anon.clone()));
}
