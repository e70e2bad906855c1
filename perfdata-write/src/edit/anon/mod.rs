//! [`Anonymize`]: replace the names a recording holds with stable pseudonyms (see
//! [`Pseudonyms`]) so that it can be shared (`perfdata anonymize`), writing only what it
//! understood and rewrote.
//!
//! Every record type and every feature has its entry in an allow list (`records`,
//! `sample`, `features`): each field is renamed (comms, file paths, cgroup paths, the
//! hostname, command-line words, BPF program names, tracepoint string arguments), kept
//! because it cannot carry a name or user data (numbers the kernel or the hardware
//! wrote: ids, times, addresses, counts; and perf's and the kernel's own vocabulary:
//! event, PMU and CPU names, each checked to be text of its kind), or zeroed or dropped.
//! What the list does not name (record types past perf's, simpleperf's features, a new
//! variant of the models) falls through to "drop", never to "keep". So do records and
//! features whose bytes do not fit their layout or run past it, records whose id
//! matches no attr or whose numbers no kernel gives (`checks`: the numbers of a record
//! whose type was changed are the bytes of another), and the features of a file whose
//! feature index does not add up. Each is counted and named in
//! [`AnonymizeCounts::warnings`]; with [`Anonymize::strict`] the first of them that is
//! not a choice of this list but damage (anything but BPF_BTF and BPF_METADATA, which
//! are left out by choice) fails the run instead, and so does anything the reader left
//! out (a record cut short, the features of a file cut short: its warnings).
//!
//! Zeroed, their sizes kept so that every record keeps its layout: user stacks,
//! registers, AUX samples, AUXTRACE trace data and TEXT_POKE bytes (memory of the
//! program, and what decodes its trace), RAW payloads past what their tracepoint format
//! vouches for (`raw`), callchain entries that are no code address (`sample`), the
//! padding after a string's NUL, AUXTRACE_ERROR messages, an Intel PT address filter,
//! BPF programs' instructions (`bpf`) and the tracing data's kallsyms (`tracing`). With
//! `keep_raw` the memory of the program (the first group) is kept as it is.

mod bpf;
mod checks;
mod counts;
mod features;
mod raw;
mod records;
mod sample;
mod text;
mod tracing;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use perfdata_core::record::{Record, RecordType};
use perfdata_core::{Metadata, RecordRef, Warning};

use super::pseudonym::Pseudonyms;
use super::{Action, RecordEdit};
use crate::error::{Result, WriteError};
pub use counts::AnonymizeCounts;
use raw::RawFormats;
use sample::ExecRanges;

/// What becomes of a record or a feature the allow list was shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Fate {
    /// Written, as rewritten (or as it was, where nothing needed to change).
    Write,
    /// Left out by choice: understood, and not to be shared; why.
    Withhold(&'static str),
    /// Left out: not understood (damage, or a layout this list does not know); why.
    Unvouched(String),
}

impl Fate {
    fn unvouched(why: &str) -> Self {
        Fate::Unvouched(why.to_string())
    }
}

/// The anonymise edit. See the module documentation.
pub struct Anonymize {
    names: Pseudonyms,
    keep_raw: bool,
    strict: bool,
    raw: RawFormats,
    exec: ExecRanges,
    /// Whether the output's metadata went through the allow list (and was counted).
    meta_seen: Cell<bool>,
    /// The bit of the stream's last HEADER_FEATURE written.
    last_feature: Option<u32>,
    counts: Rc<RefCell<AnonymizeCounts>>,
}

impl Anonymize {
    /// With `keep_raw`, RAW payloads, user stacks, registers and AUX data are kept as
    /// they are (see the module docs).
    pub fn new(names: Pseudonyms, keep_raw: bool) -> Self {
        Anonymize {
            names,
            keep_raw,
            strict: false,
            raw: RawFormats::default(),
            exec: ExecRanges::default(),
            meta_seen: Cell::new(false),
            last_feature: None,
            counts: Rc::default(),
        }
    }

    /// Fail on the first record or feature this cannot vouch for, or that the reader
    /// could not read (an input cut short), instead of leaving it out with a warning.
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// What the edit did so far; readable after the run.
    pub fn counts(&self) -> Rc<RefCell<AnonymizeCounts>> {
        self.counts.clone()
    }

    /// Leave a record out: by choice (`Withhold`), or because it is not understood,
    /// which fails a strict run.
    fn leave_out(&self, item: &RecordRef<'_>, fate: Fate) -> Result<Action> {
        let ty = item.raw.record_type().name();
        let why = match fate {
            Fate::Write => return Ok(Action::Keep),
            Fate::Withhold(why) => why.to_string(),
            Fate::Unvouched(why) if self.strict => {
                return Err(WriteError::unsupported(
                    Some(item.raw.offset),
                    format!("anonymize --strict: record {ty}: {why}"),
                ))
            }
            Fate::Unvouched(why) => why,
        };
        self.counts.borrow_mut().drop_record(&ty, &why);
        Ok(Action::Drop)
    }

    /// Strict: the reader left nothing out. Each of its warnings says it dropped or
    /// could not read something (a record cut short, features lost with the end of a
    /// file, a feature or a record kept as bytes, junk skipped): not understood, and
    /// written by no allow list. Checked when the edit starts (what the header said)
    /// and at the end of the input (what the records said).
    fn reader_dropped_nothing(&self, meta: &Metadata) -> Result<()> {
        match meta.warnings.iter().find(|w| !loses_nothing(w)) {
            Some(w) if self.strict => Err(WriteError::unsupported(
                w.offset,
                format!("anonymize --strict: the input is not whole: {}", w.message),
            )),
            _ => Ok(()),
        }
    }

    /// Write `record` (decoded from `item`, then rewritten): the input's bytes when it
    /// encodes to them, else the new bytes. Bytes past its layout may be padding (perf
    /// sizes some records for the largest of their kinds), zero, or the sample_id perf
    /// 6.1 writes right after the body of the BPF_EVENT records it synthesizes; any other
    /// byte there says the record is not laid out as its type says (a type changed, a
    /// size grown over the next record): it is left out.
    fn write(&self, item: &RecordRef<'_>, record: Record) -> Result<Action> {
        if record.extra.iter().any(|&b| b != 0) && !checks::misplaced_trailer(item, &record.extra) {
            return self.leave_out(item, Fate::unvouched("bytes past its layout"));
        }
        let bytes = record.encode(item.meta.endian)?;
        let size = perfdata_core::raw::header_of(&bytes, item.meta.endian).size as usize;
        let (head, payload) = bytes.split_at(size.min(bytes.len()));
        if head == item.raw.bytes && payload == item.raw.payload {
            return Ok(Action::Keep);
        }
        let mut rec = Action::record_like(&item.raw, head.to_vec());
        rec.payload = payload.to_vec();
        Ok(Action::Replace(vec![rec]))
    }
}

/// Whether a reader's warning is a note on something read whole: an attr whose size
/// field says less than the room the file gives it (simpleperf writes 120 in room for
/// 128; one that says more is refused by `checks::attr_ok`). Every other warning says
/// something was left out.
fn loses_nothing(w: &Warning) -> bool {
    w.message.starts_with("attr ") && w.message.contains(" says its size is ")
}

impl RecordEdit for Anonymize {
    fn start(&mut self, meta: &Metadata) -> Result<()> {
        self.raw = RawFormats::new(meta, &self.names);
        self.reader_dropped_nothing(meta)
    }

    fn record(&mut self, item: &RecordRef<'_>) -> Result<Action> {
        match item.raw.record_type() {
            RecordType::Sample => self.sample(item),
            RecordType::HeaderFeature => self.feature_record(item),
            _ => self.other_record(item),
        }
    }

    fn edit_meta(&self, meta: &mut Metadata) -> Result<()> {
        self.features(meta)
    }

    fn finish(&mut self, meta: &Metadata) -> Result<()> {
        self.reader_dropped_nothing(meta)
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_damage;
#[cfg(test)]
mod tests_raw;
