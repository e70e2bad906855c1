//! The merged event set: events with equal attrs (type, config, and every field that
//! shapes their records) become one event, the others stay separate with their names;
//! the inputs' sample ids are remapped so that none clash, and where the output has
//! several events whose records perf could not tell apart, IDENTIFIER is added.

use std::collections::{HashMap, HashSet};

use perfdata_core::attr::{PerfEventAttr, ReadFormat, SampleType};
use perfdata_core::record::EventFormat;
use perfdata_core::{EventAttr, Metadata};

use crate::error::{Result, WriteError};

/// How each input's events and ids map onto the output's.
#[derive(Debug, Clone)]
pub(super) struct EventMap {
    /// The output's events.
    pub attrs: Vec<EventAttr>,
    /// Per input, per input event: the output event.
    pub to_out: Vec<Vec<usize>>,
    /// Per input: its ids that changed, old to new (an id not listed is kept).
    pub ids: Vec<HashMap<u64, u64>>,
    /// Per output event: the id written into a record that had none, or whose id its
    /// input did not list.
    pub first_id: Vec<u64>,
}

/// Whether records of `a` and `b` are the same event, laid out the same: perf counts
/// their samples as one event.
fn same_event(a: &PerfEventAttr, b: &PerfEventAttr) -> bool {
    (a.type_, a.config, a.config1, a.config2, a.config3)
        == (b.type_, b.config, b.config1, b.config2, b.config3)
        && EventFormat::from_attr(a) == EventFormat::from_attr(b)
}

impl EventMap {
    /// The event map of `inputs` (their metadata, in order; `names` for messages).
    pub fn new(inputs: &[&Metadata], names: &[String]) -> Result<Self> {
        let mut attrs: Vec<EventAttr> = Vec::new();
        let mut to_out = Vec::with_capacity(inputs.len());
        // The output event's attr as its input had it, for matching.
        let mut originals: Vec<PerfEventAttr> = Vec::new();
        for meta in inputs {
            let mut mine = Vec::with_capacity(meta.attrs().len());
            let mut taken = HashSet::new();
            for ev in meta.attrs() {
                // Two events of one input stay two (`-e cycles -e cycles`).
                let found = (0..attrs.len())
                    .find(|&o| !taken.contains(&o) && same_event(&originals[o], &ev.attr));
                let o = match found {
                    Some(o) => o,
                    None => {
                        attrs.push(EventAttr {
                            attr: ev.attr.clone(),
                            ids: Vec::new(),
                            ids_section: None,
                            name: ev.name.clone(),
                        });
                        originals.push(ev.attr.clone());
                        attrs.len() - 1
                    }
                };
                taken.insert(o);
                mine.push(o);
            }
            to_out.push(mine);
        }
        // Ids: the first input's kept, a later input's kept unless taken, else the next
        // above every id of every input.
        let mut used: HashSet<u64> = HashSet::new();
        let mut next = inputs
            .iter()
            .flat_map(|m| m.attrs().iter().flat_map(|a| a.ids.iter().copied()))
            .max()
            .unwrap_or(0)
            + 1;
        let mut ids = Vec::with_capacity(inputs.len());
        for (i, meta) in inputs.iter().enumerate() {
            let mut changed = HashMap::new();
            for (e, ev) in meta.attrs().iter().enumerate() {
                let o = to_out[i][e];
                for &id in &ev.ids {
                    let new = match changed.get(&id) {
                        Some(&new) => new,
                        None if used.insert(id) => id,
                        None => {
                            let new = next;
                            next += 1;
                            used.insert(new);
                            changed.insert(id, new);
                            new
                        }
                    };
                    attrs[o].ids.push(new);
                }
            }
            ids.push(changed);
        }
        // An event without ids gets one, for records that must carry it.
        let mut first_id = Vec::with_capacity(attrs.len());
        for a in &mut attrs {
            if a.ids.is_empty() {
                a.ids.push(next);
                next += 1;
            }
            first_id.push(a.ids[0]);
        }
        let mut map = EventMap {
            attrs,
            to_out,
            ids,
            first_id,
        };
        map.tell_apart(names)?;
        map.check_read_ids(inputs, names)?;
        Ok(map)
    }

    /// perf finds a record's event by its id at the first event's position
    /// (`evlist__valid_sample_type`): with several events, every event must carry it
    /// at the same place, and sample_id_all must be the same for all. IDENTIFIER (the
    /// first word of a SAMPLE, the last of a trailer) is added where it is not.
    fn tell_apart(&mut self, names: &[String]) -> Result<()> {
        if self.attrs.len() < 2 {
            return Ok(());
        }
        let formats: Vec<EventFormat> = self
            .attrs
            .iter()
            .map(|a| EventFormat::from_attr(&a.attr))
            .collect();
        if formats
            .iter()
            .any(|f| f.sample_id_all != formats[0].sample_id_all)
        {
            return Err(WriteError::unsupported(
                None,
                format!(
                    "the inputs ({}) have events with and without sample_id_all: perf \
                     cannot read them as one recording",
                    names.join(", ")
                ),
            ));
        }
        let positions = |f: &EventFormat| (f.id_pos(), f.is_pos());
        let first = positions(&formats[0]);
        let apart = first.0.is_some()
            && (!formats[0].sample_id_all || first.1.is_some())
            && formats.iter().all(|f| positions(f) == first);
        if !apart {
            for a in &mut self.attrs {
                a.attr.sample_type |= SampleType::IDENTIFIER;
            }
        }
        Ok(())
    }

    /// Ids inside a SAMPLE's READ values (SAMPLE_READ with PERF_FORMAT_ID) are not
    /// rewritten: an input whose ids change may not have them (READ records are
    /// refused as they come, by the feed).
    fn check_read_ids(&self, inputs: &[&Metadata], names: &[String]) -> Result<()> {
        for (i, meta) in inputs.iter().enumerate() {
            if self.ids[i].is_empty() {
                continue;
            }
            if let Some(ev) = meta.attrs().iter().find(|ev| {
                ev.attr.read_format.contains(ReadFormat::ID)
                    && ev.attr.sample_type.contains(SampleType::READ)
            }) {
                return Err(WriteError::unsupported(
                    None,
                    format!(
                        "{}: event {} samples counter values with their ids (SAMPLE_READ, \
                         read_format ID), and its ids clash with an earlier input's: ids inside read values \
                         are not remapped",
                        names[i],
                        ev.name.as_deref().unwrap_or("?")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The new id of input `input`'s id `id` of its event `event`: remapped, kept, or
    /// (0 aside: perf's synthesized records) the output event's first id for an id the
    /// input did not list.
    #[inline]
    pub fn id(&self, input: usize, out_event: usize, id: Option<u64>, listed: bool) -> u64 {
        match id {
            Some(0) => 0,
            Some(id) if listed => self.ids[input].get(&id).copied().unwrap_or(id),
            _ => self.first_id[out_event],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta_of(name: &str) -> Metadata {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures")
            .join(name);
        perfdata_core::PerfReader::open(path)
            .unwrap()
            .meta()
            .clone()
    }

    #[test]
    fn equal_events_merge_and_clashing_ids_move_above_every_id() {
        let a = meta_of("file-multi-event.data");
        let names = vec!["a".to_string(), "b".to_string()];
        let map = EventMap::new(&[&a, &a], &names).unwrap();
        let n = a.attrs().len();
        assert_eq!(map.attrs.len(), n);
        assert_eq!(map.to_out[1], (0..n).collect::<Vec<_>>());
        let max = a.attrs().iter().flat_map(|e| e.ids.clone()).max().unwrap();
        // The first input keeps its ids; the second's all clash and move above max.
        assert!(map.ids[0].is_empty());
        let total: usize = a.attrs().iter().map(|e| e.ids.len()).sum();
        assert_eq!(map.ids[1].len(), total);
        assert!(map.ids[1].values().all(|&v| v > max));
        for (o, ev) in map.attrs.iter().enumerate() {
            assert_eq!(ev.ids.len(), 2 * a.attrs()[o].ids.len());
            let unique: HashSet<_> = ev.ids.iter().collect();
            assert_eq!(unique.len(), ev.ids.len());
        }
    }
}
