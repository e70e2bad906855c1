//! What a recording says about itself: attrs, ids, features, old event types.
//!
//! In file mode all of it is in the header and its sections; in pipe mode it arrives as
//! records (HEADER_ATTR, HEADER_FEATURE, HEADER_TRACING_DATA, HEADER_EVENT_TYPE,
//! HEADER_BUILD_ID) and is folded into the same structure as the records go by.

use binrw::Endian;
use indexmap::IndexMap;
use serde::Serialize;

use crate::attr::{FileAttr, PerfEventAttr};
use crate::codec;
use crate::error::{Error, Problem, Result};
use crate::feature::{BuildIdEntry, BuildIdList};
use crate::feature::{Feature, FeatureContext, FeatureId, FeatureSection};
use crate::header::{EventType, FileHeader, FileSection, Magic, Probe};
use crate::raw::RawRecord;
use crate::record::{
    EventIndex, EventUpdate, EventUpdateData, HeaderAttr, HeaderEventType, HeaderFeature,
    HeaderTracingData, RecordHeader, RecordType,
};
use crate::record::{FeatureRecordView, RecordView};

/// Which container the data came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ContainerKind {
    /// File mode: a header with sections and features at its end.
    File,
    /// Pipe mode: a 16-byte header, then records only (attrs and features included).
    Pipe,
    /// A perf.data directory (`perf record --threads`): `data` plus `data.N` streams.
    Directory,
}

/// An event: its attr, its ids, and where they were.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventAttr {
    /// The attr.
    pub attr: PerfEventAttr,
    /// The sample ids of the event's attr (one per CPU or thread opened).
    pub ids: Vec<u64>,
    /// File mode: the ids section the attr entry points at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ids_section: Option<FileSection>,
    /// The event's name, from EVENT_DESC or EVENT_UPDATE when the recording has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Something odd that did not stop reading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// Where in the input, when a place is known.
    pub offset: Option<u64>,
    /// What was odd.
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.offset {
            Some(o) => write!(f, "at byte offset {o} ({o:#x}): {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// The metadata of a recording.
///
/// ```
/// use perfdata_core::feature::{Feature, FeatureId};
///
/// let reader = perfdata_core::PerfReader::open(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-multi-event.data"))?;
/// let meta = reader.meta();
/// assert_eq!(meta.attrs().len(), 3);
/// assert_eq!(meta.event_name(2), "page-faults/period=4/");
/// assert!(matches!(meta.feature(FeatureId::SampleTime), Some(Feature::SampleTime(_))));
/// # Ok::<(), perfdata_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Metadata {
    /// File, pipe or directory.
    pub container: ContainerKind,
    /// Byte order of the recording.
    pub endian: Endian,
    /// The magic it starts with.
    pub magic: Magic,
    /// File mode: the file header (of `data` in a directory).
    pub header: Option<FileHeader>,
    /// The events, in the order of the attrs section or ATTR records: read with
    /// [`Metadata::attrs`], changed with [`Metadata::edit_attrs`], which keeps `events`
    /// true.
    attrs: Vec<EventAttr>,
    /// Finds each record's attr; always the index of `attrs` (derived, never set).
    events: EventIndex,
    /// Features in the order they were found (bit order in file mode).
    pub features: IndexMap<FeatureId, FeatureSection>,
    /// File mode: where each feature section was.
    pub feature_sections: IndexMap<FeatureId, FileSection>,
    /// File mode: bytes between the feature index and the first feature payload. perf
    /// reserves an index entry per feature bit and leaves a zero entry for each feature
    /// it then fails to write; kept so that a rewrite reproduces the file.
    pub feature_index_slack: Vec<u8>,
    /// Old files (perf 3.x): the event_types section or HEADER_EVENT_TYPE records.
    pub event_types: Vec<EventType>,
    /// Pipe mode: whether the end-of-features marker (an empty HEADER_FEATURE) was seen.
    pub saw_feature_end_marker: bool,
    /// The type of the last compressed container expanded (COMPRESSED or COMPRESSED2).
    pub compression_record: Option<RecordType>,
    /// File mode: `perf record` never finished (the header's data size is 0) or the file
    /// was cut short: the data section runs to the end of the file, and the features
    /// were never written or are (partly) lost, so the derived ones are recomputed.
    pub unfinished: bool,
    /// What was odd but did not stop reading, in reading order.
    pub warnings: Vec<Warning>,
}

impl Metadata {
    /// Empty metadata for a stream whose records will fill it.
    pub fn new(container: ContainerKind, probe: &Probe) -> Self {
        Metadata {
            container,
            endian: probe.endian,
            magic: probe.magic,
            header: None,
            attrs: Vec::new(),
            events: EventIndex::new(),
            features: IndexMap::new(),
            feature_sections: IndexMap::new(),
            feature_index_slack: Vec::new(),
            event_types: Vec::new(),
            saw_feature_end_marker: false,
            compression_record: None,
            unfinished: false,
            warnings: Vec::new(),
        }
    }

    /// The events, in the order of the attrs section or ATTR records.
    pub fn attrs(&self) -> &[EventAttr] {
        &self.attrs
    }

    /// Finds each record's attr: the index of [`Metadata::attrs`], kept true by every
    /// change of them.
    pub fn events(&self) -> &EventIndex {
        &self.events
    }

    /// Change the attrs (remove events, change an attr's sample_type or ids, name
    /// them); the event index is rebuilt from them afterwards, so that it describes
    /// what the attrs say. Returns what `f` returns.
    ///
    /// ```
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-multi-event.data");
    /// let mut meta = perfdata_core::PerfReader::open(path)?.meta().clone();
    /// let first_id = meta.attrs()[0].ids[0];
    /// let last = meta.attrs().len() - 1;
    /// let last_id = meta.attrs()[last].ids[0];
    /// assert_eq!(meta.events().event_of_id(last_id), Some(last));
    /// let gone = meta.edit_attrs(|attrs| attrs.remove(0));
    /// assert_eq!(gone.ids[0], first_id);
    /// // The index follows: the removed event's ids find nothing, the others moved up.
    /// assert_eq!(meta.events().len(), meta.attrs().len());
    /// assert_eq!(meta.events().event_of_id(first_id), None);
    /// assert_eq!(meta.events().event_of_id(last_id), Some(last - 1));
    /// # Ok::<(), perfdata_core::Error>(())
    /// ```
    pub fn edit_attrs<T>(&mut self, f: impl FnOnce(&mut Vec<EventAttr>) -> T) -> T {
        let out = f(&mut self.attrs);
        self.events = EventIndex::of(self.attrs.iter().map(|a| (&a.attr, a.ids.as_slice())));
        out
    }

    /// Replace the attrs (and so the event index) by `attrs`.
    pub fn set_attrs(&mut self, attrs: Vec<EventAttr>) {
        self.edit_attrs(|a| *a = attrs);
    }

    /// Note something odd at `offset` (see [`Warning`]).
    pub fn warn(&mut self, offset: Option<u64>, message: impl Into<String>) {
        self.warnings.push(Warning {
            offset,
            message: message.into(),
        });
    }

    /// A feature, if the recording has it.
    pub fn feature(&self, id: FeatureId) -> Option<&Feature> {
        self.features.get(&id).map(|s| &s.feature)
    }

    /// What decoding a feature section of this recording needs (NRCPUS for
    /// CPU_TOPOLOGY).
    pub fn feature_context(&self) -> FeatureContext {
        let mut ctx = FeatureContext::new(self.endian);
        if let Some(Feature::NrCpus(n)) = self.feature(FeatureId::NrCpus) {
            ctx.nr_cpus_avail = Some(n.nr_cpus_available);
        }
        ctx
    }

    fn add_attr(&mut self, attr: PerfEventAttr, ids: Vec<u64>, ids_section: Option<FileSection>) {
        self.events.push(&attr, &ids);
        self.attrs.push(EventAttr {
            attr,
            ids,
            ids_section,
            name: None,
        });
    }

    /// Record a feature section, warning when its bytes do not fit the layout.
    pub fn add_feature(&mut self, id: FeatureId, bytes: &[u8], offset: u64) {
        let ctx = self.feature_context();
        let (section, err) = FeatureSection::decode_or_raw(id, bytes, &ctx, offset);
        if let Some(err) = err {
            self.warn(
                err.offset(),
                format!("feature {id} kept as raw bytes: {err}"),
            );
        }
        self.features.insert(id, section);
        if id == FeatureId::EventDesc {
            self.apply_event_desc();
        }
    }

    /// Name events from EVENT_DESC, by position, where they have no name yet (perf's
    /// `evlist__set_event_name`).
    fn apply_event_desc(&mut self) {
        let Some(Feature::EventDesc(desc)) =
            self.features.get(&FeatureId::EventDesc).map(|s| &s.feature)
        else {
            return;
        };
        let names: Vec<String> = desc.events.iter().map(|e| e.name.as_str_lossy()).collect();
        for (attr, name) in self.attrs.iter_mut().zip(names) {
            if attr.name.is_none() && !name.is_empty() {
                attr.name = Some(name);
            }
        }
    }

    /// Load the attrs, ids, event types and features of a file-mode file.
    pub fn load_file(
        bytes: &[u8],
        probe: &Probe,
        header: FileHeader,
        container: ContainerKind,
    ) -> Result<Self> {
        let mut meta = Metadata::new(container, probe);
        let endian = probe.endian;
        let len = bytes.len() as u64;
        // The header's section fields: attrs at 24, data at 40, event_types at 56.
        check_section(&header.attrs, len, "attrs section", 24)?;
        check_section(&header.data, len, "data section", 40)?;
        check_section(&header.event_types, len, "event_types section", 56)?;

        if header.attrs.size > 0 {
            if header.attr_size < 16 + crate::attr::ATTR_SIZE_VER0 as u64 {
                return Err(Error::format(
                    16,
                    "file header attr_size",
                    Problem::Invalid(format!(
                        "attr_size {} is smaller than a perf_event_attr and its ids section",
                        header.attr_size
                    )),
                ));
            }
            let nr = header.attrs.size / header.attr_size;
            let attr_len = (header.attr_size - 16) as usize;
            for i in 0..nr {
                let at = header.attrs.offset + i * header.attr_size;
                let entry = &bytes[at as usize..(at + header.attr_size) as usize];
                let context = format!("attr {i}");
                let file_attr: FileAttr = codec::decode(entry, endian, (attr_len,), at, &context)?;
                let ids_field = at + attr_len as u64;
                check_section(
                    &file_attr.ids,
                    len,
                    &format!("ids section of attr {i}"),
                    ids_field,
                )?;
                let ids_bytes = &bytes[file_attr.ids.offset as usize..file_attr.ids.end() as usize];
                let ids = ids_bytes
                    .chunks_exact(8)
                    .map(|c| codec::u64_at(c, 0, endian).expect("8-byte chunk"))
                    .collect();
                let declared = file_attr.attr.size as usize;
                if declared != 0 && declared != attr_len {
                    meta.warn(
                        Some(at + 4),
                        format!(
                            "attr {i} says its size is {declared} but attr_size gives {attr_len}"
                        ),
                    );
                }
                meta.add_attr(file_attr.attr, ids, Some(file_attr.ids));
            }
        }

        let section = header.event_types;
        for i in 0..section.size / EventType::SIZE {
            let at = section.offset + i * EventType::SIZE;
            let entry = &bytes[at as usize..(at + EventType::SIZE) as usize];
            meta.event_types
                .push(codec::decode(entry, endian, (), at, "event_types entry")?);
        }

        let bits = header.feature_bits(endian);
        let index_at = header.feature_index_offset();
        let index_len = bits.count() as u64 * 16;
        // The index follows the data section: the header's data field says where. A
        // file cut short after its data keeps its records; what is cut off is lost.
        let index = FileSection {
            offset: index_at,
            size: index_len,
        };
        let index_what = "feature index (after the data section)";
        if let Some(lost) = section_lost(&index, len, index_what) {
            let n = bits.count();
            meta.warn(
                Some(40),
                format!("{lost}: the file was cut short; its {n} features are lost"),
            );
            meta.unfinished = true;
        } else {
            for (i, bit) in bits.iter().enumerate() {
                let at = index_at + i as u64 * 16;
                let sec: FileSection = codec::decode(
                    &bytes[at as usize..at as usize + 16],
                    endian,
                    (),
                    at,
                    "feature index entry",
                )?;
                let id = FeatureId::from_bit(bit);
                if let Some(lost) = section_lost(&sec, len, &format!("feature {id}")) {
                    meta.warn(Some(at), format!("{lost}: the feature is lost"));
                    meta.unfinished = true;
                    continue;
                }
                meta.add_feature(
                    id,
                    &bytes[sec.offset as usize..sec.end() as usize],
                    sec.offset,
                );
                meta.feature_sections.insert(id, sec);
            }
        }
        meta.apply_event_desc();
        // The slack: from the end of the index to the first payload, when the payloads
        // follow the index (perf's layout) and the gap is a few index entries.
        let index_end = index_at + index_len;
        if let Some(first) = meta.feature_sections.values().map(|s| s.offset).min() {
            if first >= index_end && first - index_end <= 16 * 256 {
                meta.feature_index_slack = bytes[index_end as usize..first as usize].to_vec();
            }
        }
        meta.header = Some(header);
        Ok(meta)
    }

    /// Fold a metadata record met in the stream. In pipe mode these records are the
    /// metadata; in a file (perf inject leaves HEADER_BUILD_ID records in the data,
    /// simpleperf a HEADER_TRACING_DATA record) the header's own sections win, and a
    /// record only fills in a feature the header does not have.
    pub fn fold(&mut self, raw: &RawRecord<'_>) -> Result<()> {
        // The kernel's records (below 64) carry no metadata: the per-record fast path.
        if raw.header.type_ < RecordType::USER_TYPE_START {
            return Ok(());
        }
        if self.header.is_some() {
            let has = |id| self.feature_sections.contains_key(&id);
            let shadowed = match raw.record_type() {
                RecordType::HeaderBuildId => has(FeatureId::BuildId),
                RecordType::HeaderTracingData => has(FeatureId::TracingData),
                RecordType::HeaderFeature => FeatureRecordView::new(raw.bytes, self.endian, 0)
                    .ok()
                    .and_then(|v| u32::try_from(v.feat_id()).ok())
                    .is_some_and(|b| has(FeatureId::from_bit(b))),
                _ => false,
            };
            if shadowed {
                return Ok(());
            }
        }
        let endian = self.endian;
        let context = || format!("record {}", raw.record_type());
        let body = &raw.bytes[RecordHeader::SIZE..];
        let body_offset = raw.offset + RecordHeader::SIZE as u64;
        match raw.record_type() {
            RecordType::HeaderAttr => {
                let attr_len = HeaderAttr::attr_len(body, endian);
                let header_attr: HeaderAttr =
                    codec::decode(body, endian, (attr_len,), body_offset, &context())?;
                self.add_attr(header_attr.attr, header_attr.ids, None);
            }
            RecordType::HeaderFeature => {
                let feature_record: HeaderFeature =
                    codec::decode(body, endian, (), body_offset, &context())?;
                let Ok(bit) = u32::try_from(feature_record.feat_id) else {
                    self.warn(
                        Some(raw.offset),
                        format!("HEADER_FEATURE with feature id {}", feature_record.feat_id),
                    );
                    return Ok(());
                };
                if feature_record.data.is_empty() && bit == FeatureId::PERF_6_1_LAST {
                    self.saw_feature_end_marker = true;
                    return Ok(());
                }
                self.add_feature(
                    FeatureId::from_bit(bit),
                    &feature_record.data,
                    body_offset + 8,
                );
            }
            RecordType::HeaderTracingData => {
                // perf's blob follows the record; simpleperf's is inside it.
                let tracing: HeaderTracingData =
                    codec::decode(body, endian, (), body_offset, &context())?;
                if raw.rest > 0 {
                    // Streamed past, not held: the feature stays unknown.
                    self.warn(
                        Some(raw.offset),
                        format!(
                            "HEADER_TRACING_DATA of {} bytes is larger than the {} bytes \
                             a record may hold in memory; its data is not read",
                            raw.payload_len(),
                            crate::raw::MAX_BUFFERED
                        ),
                    );
                    return Ok(());
                }
                let blob = tracing.inline_data().unwrap_or(raw.payload);
                self.add_feature(FeatureId::TracingData, blob, body_offset + 8);
            }
            RecordType::HeaderBuildId => {
                // The same model as a BUILD_ID feature entry, which perf writes with
                // type 0.
                let mut entry: BuildIdEntry =
                    codec::decode(raw.bytes, endian, (false, None), raw.offset, &context())?;
                entry.header.type_ = 0;
                let section = self.features.entry(FeatureId::BuildId).or_insert_with(|| {
                    let empty = Feature::BuildId(BuildIdList::new(Vec::new()));
                    FeatureSection::new(FeatureId::BuildId, empty)
                });
                if let Feature::BuildId(list) = &mut section.feature {
                    list.entries.push(entry);
                }
            }
            RecordType::EventUpdate => {
                let update: EventUpdate = codec::decode(body, endian, (), body_offset, &context())?;
                if let EventUpdateData::Name(name) = update.data {
                    if let Some(i) = self.events.event_of_id(update.id) {
                        self.attrs[i].name = Some(name.as_str_lossy());
                    }
                }
            }
            RecordType::HeaderEventType => {
                let event_type: HeaderEventType =
                    codec::decode(body, endian, (), body_offset, &context())?;
                self.event_types.push(event_type.to_event_type());
            }
            // Every other type, listed rather than `_`: a new row in the record registry
            // does not compile until it is decided here whether it folds into metadata.
            RecordType::Mmap
            | RecordType::Lost
            | RecordType::Comm
            | RecordType::Exit
            | RecordType::Throttle
            | RecordType::Unthrottle
            | RecordType::Fork
            | RecordType::Read
            | RecordType::Sample
            | RecordType::Mmap2
            | RecordType::Aux
            | RecordType::ItraceStart
            | RecordType::LostSamples
            | RecordType::Switch
            | RecordType::SwitchCpuWide
            | RecordType::Namespaces
            | RecordType::Ksymbol
            | RecordType::BpfEvent
            | RecordType::Cgroup
            | RecordType::TextPoke
            | RecordType::AuxOutputHwId
            | RecordType::CallchainDeferred
            | RecordType::FinishedRound
            | RecordType::IdIndex
            | RecordType::AuxtraceInfo
            | RecordType::Auxtrace
            | RecordType::AuxtraceError
            | RecordType::ThreadMap
            | RecordType::CpuMap
            | RecordType::StatConfig
            | RecordType::Stat
            | RecordType::StatRound
            | RecordType::TimeConv
            | RecordType::Compressed
            | RecordType::FinishedInit
            | RecordType::Compressed2
            | RecordType::BpfMetadata
            | RecordType::SchedstatCpu
            | RecordType::SchedstatDomain
            | RecordType::Unknown(_) => {}
            #[cfg(any(test, feature = "test-row"))]
            RecordType::TestOnly => {}
        }
        Ok(())
    }
}

/// Check that `sec` lies within the file. The error names `field_at`, where the
/// offset/size pair that says so is, and what it points at.
fn check_section(sec: &FileSection, file_len: u64, what: &str, field_at: u64) -> Result<()> {
    match past_end(sec, file_len, what) {
        None => Ok(()),
        Some((context, problem)) => Err(Error::format(field_at, context, problem)),
    }
}

/// What is lost when `sec` runs past the end of the file, in a PastEnd error's words;
/// `None` when it lies within the file.
fn section_lost(sec: &FileSection, file_len: u64, what: &str) -> Option<String> {
    past_end(sec, file_len, what).map(|(context, problem)| format!("{context}: {problem}"))
}

/// The context and problem of a section that runs past the end of the file.
fn past_end(sec: &FileSection, file_len: u64, what: &str) -> Option<(String, Problem)> {
    match sec.offset.checked_add(sec.size) {
        Some(end) if end <= file_len => None,
        end => Some((
            format!(
                "{what} (said to be {} bytes at offset {})",
                sec.size, sec.offset
            ),
            Problem::PastEnd {
                end: end.unwrap_or(u64::MAX),
                limit: file_len,
            },
        )),
    }
}
