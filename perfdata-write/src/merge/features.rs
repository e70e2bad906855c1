//! The merged recording's features: BUILD_ID the union of the inputs'; HOSTNAME and
//! CMDLINE the first input's, the others that differ said in a warning; EVENT_DESC
//! made for the merged events; SAMPLE_TIME left to the conversion, which derives it
//! from the samples written; TRACING_DATA the first input's that has one; the rest the
//! first input's, with a warning for each that
//! another input has otherwise and that cannot be merged.

use perfdata_core::feature::{
    BuildIdEntry, BuildIdList, EventDesc, EventDescEntry, Feature, FeatureId, FeatureSection,
    PerfString,
};
use perfdata_core::Metadata;

use super::events::EventMap;
use super::rewrite::Shift;

/// Features derived from what the merge writes, or about one input's container.
const DERIVED: [FeatureId; 5] = [
    FeatureId::SampleTime,
    FeatureId::Compressed,
    FeatureId::DirFormat,
    FeatureId::AuxTrace,
    FeatureId::EventDesc,
];

/// Features made from every input.
const MERGED: [FeatureId; 3] = [FeatureId::BuildId, FeatureId::Hostname, FeatureId::Cmdline];

/// Features taken from the first input that has one when the first input has none: the
/// tracepoint formats a later input's tracepoint events need.
const FIRST_FOUND: [FeatureId; 1] = [FeatureId::TracingData];

/// Whether feature `id` of two inputs differs only in what changes while a machine
/// runs: a NUMA node's free memory (always, between two recordings), or CLOCK_DATA
/// (each recording takes its own reference point; inputs on other clocks are said
/// apart, in the merge's clock warning, which names the remedy).
pub(super) fn same_machine(id: FeatureId, a: &Metadata, b: &Metadata) -> bool {
    match (a.feature(id), b.feature(id)) {
        (Some(Feature::NumaTopology(x)), Some(Feature::NumaTopology(y))) => {
            let fixed = |t: &perfdata_core::feature::NumaTopology| -> Vec<_> {
                t.nodes
                    .iter()
                    .map(|n| (n.node, n.mem_total, n.cpus.clone()))
                    .collect()
            };
            fixed(x) == fixed(y)
        }
        (Some(Feature::ClockData(_)), Some(Feature::ClockData(_))) => true,
        _ => false,
    }
}

/// A feature as text for a warning (the strings ones), else its name.
fn text(f: &Feature) -> String {
    match f {
        Feature::Hostname(s) => format!("{:?}", s.as_str_lossy()),
        Feature::Cmdline(l) => format!("{:?}", l.to_strings().join(" ")),
        _ => String::new(),
    }
}

/// The merged features, set in `meta` (a copy of the first input's metadata), and the
/// warnings about what could not be merged.
pub(super) fn merge(
    meta: &mut Metadata,
    inputs: &[&Metadata],
    names: &[String],
    map: &EventMap,
    shifts: &[Shift],
) -> Vec<String> {
    let first = inputs[0];
    let mut warnings = Vec::new();
    let out = &mut meta.features;
    out.retain(|id, _| !DERIVED.contains(id));
    // HOSTNAME, CMDLINE: the first's; the others that differ named.
    for id in [FeatureId::Hostname, FeatureId::Cmdline] {
        let mine = first.feature(id);
        let others: Vec<String> = inputs
            .iter()
            .zip(names)
            .skip(1)
            .filter(|(m, _)| m.feature(id) != mine)
            .map(|(m, n)| format!("{n}: {}", m.feature(id).map(text).unwrap_or("none".into())))
            .collect();
        if !others.is_empty() {
            warnings.push(format!(
                "feature {id} is the first input's ({}: {}); the others differ: {}",
                names[0],
                mine.map(text).unwrap_or("none".into()),
                others.join(", ")
            ));
        }
    }
    if let Some(section) = build_ids(inputs, shifts) {
        out.insert(FeatureId::BuildId, section);
    }
    // EVENT_DESC: the merged events, their names and ids.
    if inputs
        .iter()
        .any(|m| m.features.contains_key(&FeatureId::EventDesc))
    {
        let size = map
            .attrs
            .iter()
            .map(|a| a.attr.encoded_len)
            .max()
            .unwrap_or(0);
        let events = map
            .attrs
            .iter()
            .map(|a| {
                let mut attr = a.attr.clone();
                attr.set_encoded_len(size);
                attr.size = size as u32;
                let name = PerfString::new(a.name.as_deref().unwrap_or(""));
                EventDescEntry::new(attr, name, a.ids.clone())
            })
            .collect();
        let desc = Feature::EventDesc(EventDesc::new(size as u32, events));
        out.insert(
            FeatureId::EventDesc,
            FeatureSection::new(FeatureId::EventDesc, desc),
        );
    }
    let mut from = vec![0; FIRST_FOUND.len()];
    for (k, id) in FIRST_FOUND.iter().enumerate() {
        if let Some(i) = inputs.iter().position(|m| m.features.contains_key(id)) {
            from[k] = i;
            out.insert(*id, inputs[i].features[id].clone());
        }
    }
    // The rest: the first input's; another input's that differs is said.
    for (i, (meta, name)) in inputs.iter().zip(names).enumerate().skip(1) {
        for (id, section) in &meta.features {
            if DERIVED.contains(id) || MERGED.contains(id) {
                continue;
            }
            // Where the feature is taken from: the first input, or the first to have it.
            let source = FIRST_FOUND
                .iter()
                .position(|f| f == id)
                .map_or(0, |k| from[k]);
            if source == i {
                continue;
            }
            match inputs[source].features.get(id) {
                Some(mine) if mine == section => {}
                Some(_) if same_machine(*id, inputs[source], meta) => {}
                Some(_) => warnings.push(format!(
                    "feature {id} of {name} differs from {}'s, which is kept",
                    names[source]
                )),
                None => warnings.push(format!(
                    "feature {id} of {name} is not in the first input ({}) and is left out",
                    names[0]
                )),
            }
        }
    }
    out.sort_by_key(|id, _| id.bit());
    warnings
}

/// BUILD_ID: every input's entries once, pids moved as the records' are (`None` when no
/// input has any).
pub(super) fn build_ids(inputs: &[&Metadata], shifts: &[Shift]) -> Option<FeatureSection> {
    let mut entries: Vec<BuildIdEntry> = Vec::new();
    for (meta, shift) in inputs.iter().zip(shifts) {
        if let Some(Feature::BuildId(list)) = meta.feature(FeatureId::BuildId) {
            for e in &list.entries {
                let mut e = e.clone();
                if e.pid > 0 {
                    e.pid = e.pid.wrapping_add(shift.pid_offset as i32);
                }
                let same = |o: &BuildIdEntry| {
                    (o.pid, o.build_id_padded, o.size, &o.filename)
                        == (e.pid, e.build_id_padded, e.size, &e.filename)
                };
                if !entries.iter().any(same) {
                    entries.push(e);
                }
            }
        }
    }
    (!entries.is_empty()).then(|| {
        let list = Feature::BuildId(BuildIdList::new(entries));
        FeatureSection::new(FeatureId::BuildId, list)
    })
}
