//! The allow list of features: per feature, what is renamed, what is kept (numbers, and
//! strings of perf's and the kernel's vocabulary, each checked to be text of its kind:
//! a hostname read from the wrong section is no kernel release) and what is dropped.
//! A feature not listed (simpleperf's, bits perf does not define), one whose bytes do
//! not fit its layout, and, in a file, every feature when the feature index does not
//! add up (see [`index_is_sound`]), are left out. Bytes past a feature's layout are
//! left out too.

use perfdata_core::feature::{BuildIdEntry, Feature, FeatureId, FeatureSection, PerfString};
use perfdata_core::record::{misc, PaddedString, RecordBody};
use perfdata_core::{ContainerKind, Metadata, RecordRef};

use super::super::pseudonym::Pseudonyms;
use super::checks;
use super::text::{self, keep_string, keep_strings, rename};
use super::{Anonymize, Fate};
use crate::edit::Action;
use crate::error::{Result, WriteError};

/// Pad a file name as perf pads it in build id entries: 64 bytes past its NUL.
fn build_id_name(path: String) -> PaddedString {
    let mut name = path.into_bytes();
    name.resize((name.len() + 1).div_ceil(64) * 64, 0);
    PaddedString { bytes: name }
}

/// A BUILD_ID entry with its file name renamed (whether it was); the build id is a hash
/// of the binary, kept (past its size, when the entry gives one, zeroed). The entry
/// must be one perf writes, a cpumode and a pid before the hash and a path or a kernel
/// name after it: of other bytes read as an entry (a record whose type was changed to
/// HEADER_BUILD_ID), the "hash" would be whatever they held.
pub(super) fn build_id_entry(
    names: &Pseudonyms,
    e: &mut BuildIdEntry,
) -> std::result::Result<bool, Fate> {
    e.reserved = [0; 3];
    if e.header.misc & misc::BUILD_ID_SIZE != 0 {
        let n = usize::from(e.size).min(e.build_id_padded.len());
        e.build_id_padded[n..].fill(0);
    }
    let refused = || Err(Fate::unvouched("bytes that are no build id entry"));
    let cpumode = e.header.misc & misc::CPUMODE_MASK;
    if !(1..=5).contains(&cpumode) || !super::checks::pid_ok(e.pid) {
        return refused();
    }
    let Some(text) = text::c_text(&e.filename.bytes) else {
        return refused();
    };
    if !text::path_like(text) {
        return refused();
    }
    match names.path(text) {
        Some(p) => {
            e.filename = build_id_name(p);
            Ok(true)
        }
        None => {
            rename(&mut e.filename, |_| None)?;
            Ok(false)
        }
    }
}

/// Whether a file's feature index adds up as perf lays it out: every section lies past
/// the index (which follows the data section) and within the file, no two overlap, the
/// room perf left between the index and the first section holds only empty entries, and
/// perf's sections follow each other in the order of their bits (simpleperf, whose
/// features have bits from 128, orders them otherwise). A changed bitmap (a bit cleared
/// or set) hands each section to another feature, entries swapped hand two, and a wrong
/// data size reads the index from elsewhere: each breaks one of these.
fn index_is_sound(meta: &Metadata) -> bool {
    let Some(header) = &meta.header else {
        return true;
    };
    let bitmap = header.feature_bits(meta.endian);
    let simpleperf = bitmap.iter().any(|b| b >= 128);
    // In bit order, as the index lists them.
    let offsets: Vec<u64> = meta.feature_sections.values().map(|s| s.offset).collect();
    if !simpleperf && offsets.windows(2).any(|w| w[0] > w[1]) {
        return false;
    }
    let bits = u64::from(bitmap.count());
    let index_end = header.feature_index_offset().saturating_add(bits * 16);
    let mut sections: Vec<(u64, u64)> = meta
        .feature_sections
        .values()
        .map(|s| (s.offset, s.end()))
        .collect();
    sections.sort_unstable();
    let mut end = index_end;
    for (start, stop) in sections {
        if start < end {
            return false;
        }
        end = stop;
    }
    // perf reserves an entry for each feature it means to write and, for one it then
    // does not (build ids of a compressed recording), clears its bit and leaves the
    // entry with a size of 0: after the index, as many entries as bits were cleared.
    let slack = &meta.feature_index_slack;
    slack.len().is_multiple_of(16) && slack.chunks(16).all(|e| e[8..].iter().all(|&b| b == 0))
}

impl Anonymize {
    /// The allow list: what becomes of one feature section.
    pub(super) fn section(&self, s: &mut FeatureSection, endian: binrw::Endian) -> Fate {
        if !checks::feature_numbers_ok(&s.feature) {
            return Fate::unvouched("numbers perf does not write");
        }
        let names = &self.names;
        let mut c = self.counts.borrow_mut();
        let fate = match &mut s.feature {
            Feature::Hostname(h) => {
                *h = PerfString::new(&names.word(text::c_text(&h.bytes).unwrap_or(&h.bytes)));
                c.rewrote(FeatureId::Hostname);
                Fate::Write
            }
            Feature::Cmdline(list) => {
                for s in &mut list.strings {
                    *s = PerfString::new(&names.word(text::c_text(&s.bytes).unwrap_or(&s.bytes)));
                }
                c.rewrote(FeatureId::Cmdline);
                Fate::Write
            }
            Feature::BuildId(list) => {
                drop(c);
                for e in &mut list.entries {
                    if let Err(fate) = build_id_entry(names, e) {
                        return fate;
                    }
                }
                self.counts.borrow_mut().rewrote(FeatureId::BuildId);
                return Fate::Write;
            }
            Feature::TracingData(blob) => {
                drop(c);
                return match self.tracing_blob(blob) {
                    Some(new) => {
                        *blob = new;
                        self.counts.borrow_mut().rewrote(FeatureId::TracingData);
                        Fate::Write
                    }
                    None => Fate::unvouched("its bytes do not parse as tracing data"),
                };
            }
            Feature::BpfProgInfo(info) => {
                let mut zeroed = 0;
                for p in &mut info.programs {
                    match super::bpf::program(p, endian, names) {
                        Some(n) => zeroed += n,
                        None => return Fate::unvouched("a program's info that is not laid out as perf writes it"),
                    }
                }
                c.zero("bytes of BPF programs' instructions (BPF_PROG_INFO)", zeroed);
                c.rewrote(FeatureId::BpfProgInfo);
                Fate::Write
            }
            // The BTF of BPF programs holds their source file paths, source lines and
            // type names.
            Feature::BpfBtf(b) if !b.btfs.is_empty() => {
                Fate::Withhold("BPF programs' BTF: their source paths, source lines and type names")
            }
            Feature::BpfBtf(_) => Fate::Write,
            // The machine, as the kernel and perf name it.
            Feature::OsRelease(s) | Feature::Version(s) => keep_string(s, text::release),
            Feature::Arch(s) => keep_string(s, text::arch),
            Feature::CpuDesc(s) => keep_string(s, text::any),
            Feature::CpuId(s) => keep_string(s, text::cpuid),
            Feature::EventDesc(d) => {
                for e in &mut d.events {
                    e.attr.tail.fill(0);
                    if !checks::attr_ok(&e.attr) || !checks::attr_ids_ok(&e.ids) {
                        return Fate::unvouched("an attr perf does not write");
                    }
                }
                keep_strings(d.events.iter_mut().map(|e| &mut e.name), text::any)
            }
            Feature::GroupDesc(g) => keep_strings(g.groups.iter_mut().map(|g| &mut g.name), text::any),
            Feature::PmuMappings(m) => keep_strings(m.pmus.iter_mut().map(|p| &mut p.name), text::any),
            Feature::CpuTopology(t) => {
                let mut strings: Vec<&mut PerfString> = t.cores.strings.iter_mut().collect();
                strings.extend(t.threads.strings.iter_mut());
                if let Some(d) = &mut t.dies {
                    strings.extend(d.dies.strings.iter_mut());
                }
                keep_strings(strings, text::cpu_list)
            }
            Feature::NumaTopology(n) => keep_strings(n.nodes.iter_mut().map(|n| &mut n.cpus), text::cpu_list),
            Feature::Cache(cache) => {
                let mut fate = Fate::Write;
                for l in &mut cache.levels {
                    for (s, valid) in [
                        (&mut l.type_, text::any as fn(&[u8]) -> bool),
                        (&mut l.size, text::any),
                        (&mut l.map, text::cpu_list),
                    ] {
                        if fate == Fate::Write {
                            fate = keep_string(s, valid);
                        }
                    }
                }
                fate
            }
            Feature::CpuPmuCaps(caps) => keep_strings(
                caps.caps.iter_mut().flat_map(|c| [&mut c.name, &mut c.value]),
                text::any,
            ),
            Feature::PmuCaps(p) => {
                let mut strings: Vec<&mut PerfString> = Vec::new();
                for e in &mut p.pmus {
                    strings.push(&mut e.pmu_name);
                    strings.extend(e.caps.caps.iter_mut().flat_map(|c| [&mut c.name, &mut c.value]));
                }
                keep_strings(strings, text::any)
            }
            Feature::HybridTopology(h) => {
                let mut fate = Fate::Write;
                for n in &mut h.nodes {
                    if fate == Fate::Write {
                        fate = keep_string(&mut n.pmu_name, text::any);
                    }
                    if fate == Fate::Write {
                        fate = keep_string(&mut n.cpus, text::cpu_list);
                    }
                }
                fate
            }
            Feature::CpuDomainInfo(d) => {
                let mut fate = Fate::Write;
                for dom in d.cpus.iter_mut().flat_map(|c| c.domains.iter_mut()) {
                    for (s, valid) in [
                        (dom.name.as_mut(), text::any as fn(&[u8]) -> bool),
                        (Some(&mut dom.cpumask), text::cpu_mask),
                        (Some(&mut dom.cpulist), text::cpu_list),
                    ] {
                        if let (Some(s), Fate::Write) = (s, &fate) {
                            fate = keep_string(s, valid);
                        }
                    }
                }
                fate
            }
            // Numbers, and flags whose presence is the information.
            Feature::NrCpus(_)
            | Feature::TotalMem(_)
            | Feature::BranchStack
            | Feature::AuxTrace(_)
            | Feature::Stat
            | Feature::SampleTime(_)
            | Feature::MemTopology(_)
            | Feature::ClockId(_)
            | Feature::DirFormat(_)
            | Feature::Compressed(_)
            | Feature::ClockData(_) => Fate::Write,
            // Raw: a feature perf does not define, or bytes that did not fit its layout;
            // and any variant added to the models after this list.
            _ if matches!(s.id, FeatureId::Unknown(_)) => Fate::unvouched(
                "a feature perf does not define (simpleperf's from bit 128): its layout is not known",
            ),
            _ => Fate::unvouched("its bytes do not fit its layout"),
        };
        fate
    }

    /// A section through [`Anonymize::section`], then its bytes past the layout: zero
    /// ones (padding) kept, others dropped (an error when strict); `None` when the
    /// section is left out, with why.
    fn section_fate(
        &self,
        s: &mut FeatureSection,
        endian: binrw::Endian,
        at: Option<u64>,
    ) -> Result<Fate> {
        let fate = self.section(s, endian);
        if fate == Fate::Write && s.trailing.iter().any(|&b| b != 0) {
            if self.strict {
                return Err(WriteError::unsupported(
                    at,
                    format!(
                        "anonymize --strict: feature {}: bytes past its layout",
                        s.id
                    ),
                ));
            }
            s.trailing.clear();
            self.counts
                .borrow_mut()
                .unvouched(&format!("the bytes past the layout of feature {}", s.id));
        }
        Ok(fate)
    }

    /// Leave feature `id` out for `fate`'s reason (an error when strict and not a
    /// choice).
    fn drop_feature(&self, id: FeatureId, fate: Fate, at: Option<u64>) -> Result<()> {
        let why = match fate {
            Fate::Write => return Ok(()),
            Fate::Withhold(why) => why.to_string(),
            Fate::Unvouched(why) if self.strict => {
                return Err(WriteError::unsupported(
                    at,
                    format!("anonymize --strict: feature {id}: {why}"),
                ))
            }
            Fate::Unvouched(why) => why,
        };
        self.counts.borrow_mut().drop_feature(id, &why);
        Ok(())
    }

    /// The features of the output's metadata through the allow list (the attrs' and
    /// event types' bytes past what is known zeroed too). A stream's features are
    /// written from its HEADER_FEATURE records, which [`Anonymize::feature_record`]
    /// sees; this only counts what a file's header will hold.
    pub(super) fn features(&self, meta: &mut Metadata) -> Result<()> {
        meta.edit_attrs(|attrs| {
            for (i, ev) in attrs.iter_mut().enumerate() {
                // An attr cannot be left out without its samples; one that is not an
                // attr (its section read from the wrong offset) fails the run.
                if !checks::attr_ok(&ev.attr) || !checks::attr_ids_ok(&ev.ids) {
                    return Err(WriteError::unsupported(
                        None,
                        format!(
                            "anonymize: attr {i} is not an attr perf writes, or its ids \
                             are not ids"
                        ),
                    ));
                }
                ev.attr.tail.fill(0);
            }
            Ok(())
        })?;
        // Old perf's event_types: a tracepoint's config and name, for the attrs'.
        let configs: Vec<u64> = meta.attrs().iter().map(|a| a.attr.config).collect();
        let before = meta.event_types.len();
        meta.event_types.retain_mut(|et| {
            text::zero_padding(&mut et.name);
            let name = text::c_text(&et.name).unwrap_or(&et.name);
            configs.contains(&et.event_id) && text::printable(name)
        });
        if meta.event_types.len() < before {
            if self.strict {
                return Err(WriteError::unsupported(
                    meta.header.as_ref().map(|h| h.event_types.offset),
                    "anonymize --strict: event_types entries that name no event",
                ));
            }
            self.counts
                .borrow_mut()
                .unvouched("event_types entries that name no event");
        }
        // The conversion asks for the output's metadata more than once; a stream's
        // features are counted as records.
        let first = !self.meta_seen.replace(true);
        let saved = (!first || meta.container == ContainerKind::Pipe).then(|| self.counts.take());
        if !index_is_sound(meta) {
            let ids: Vec<FeatureId> = meta.features.keys().copied().collect();
            for id in ids {
                let at = meta.feature_sections.get(&id).map(|s| s.offset);
                self.drop_feature(id, Fate::unvouched("the feature index does not add up"), at)?;
            }
            meta.features.clear();
            meta.feature_sections.clear();
        }
        meta.feature_index_slack.fill(0);
        let endian = meta.endian;
        let ids: Vec<FeatureId> = meta.features.keys().copied().collect();
        for id in ids {
            let at = meta.feature_sections.get(&id).map(|s| s.offset);
            let section = meta.features.get_mut(&id).expect("listed above");
            let fate = self.section_fate(section, endian, at)?;
            if fate != Fate::Write {
                meta.features.shift_remove(&id);
                self.drop_feature(id, fate, at)?;
            }
        }
        if let Some(saved) = saved {
            self.counts.replace(saved);
        }
        Ok(())
    }

    /// A stream's HEADER_FEATURE record through the allow list.
    pub(super) fn feature_record(&mut self, item: &RecordRef<'_>) -> Result<Action> {
        let mut record = match item.decode() {
            Ok(r) => r,
            Err(_) => {
                return self.leave_out(item, Fate::unvouched("its bytes do not fit its layout"))
            }
        };
        let RecordBody::HeaderFeature(hf) = &mut record.body else {
            return self.leave_out(item, Fate::unvouched("its bytes do not fit its layout"));
        };
        let Ok(bit) = u32::try_from(hf.feat_id) else {
            return self.leave_out(item, Fate::unvouched("a feature id past perf's"));
        };
        if hf.data.is_empty() && bit == FeatureId::PERF_6_1_LAST {
            return self.write(item, record); // the end of the features
        }
        // perf sends its features in the order of their bits, as a file holds them; a
        // stream compressed by perfdata has COMPRESSED last.
        if bit != FeatureId::Compressed.bit() {
            if self.last_feature.is_some_and(|last| bit <= last) {
                let fate = Fate::unvouched("a feature out of the order perf sends them in");
                return self.leave_out(item, fate);
            }
            self.last_feature = Some(bit);
        }
        let id = FeatureId::from_bit(bit);
        let ctx = item.meta.feature_context();
        let at = item.raw.offset + 16;
        let Ok(mut section) = FeatureSection::decode(id, &hf.data, &ctx, at) else {
            let fate = Fate::unvouched("its bytes do not fit the feature's layout");
            self.drop_feature(id, fate.clone(), Some(at))?;
            return self.leave_out(item, fate);
        };
        let fate = self.section_fate(&mut section, item.meta.endian, Some(at))?;
        if fate != Fate::Write {
            self.drop_feature(id, fate.clone(), Some(at))?;
            return self.leave_out(item, fate);
        }
        hf.data = section.encode(item.meta.endian)?;
        self.write(item, record)
    }
}
