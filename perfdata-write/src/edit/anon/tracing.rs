//! The tracing data (TRACING_DATA feature, HEADER_TRACING_DATA payload) rewritten from
//! a parse of all of it: the kernel's text (header_page, header_event, the ftrace and
//! event formats, printk formats) is kept, as perf's trace-event-info.c writes it;
//! kallsyms, which old perf filled with /proc/kallsyms (BPF programs' names among the
//! kernel's symbols) and perf since 4.x leaves empty, is emptied; saved_cmdlines, the
//! `pid comm` of the tasks ftrace saw, is renamed. A blob that does not parse to its end
//! (zero padding aside) is not tracing data: refused.

use perfdata_core::record::HeaderTracingData;
use perfdata_core::tracing::blob_tail;

use super::super::pseudonym::Pseudonyms;
use super::{Anonymize, Fate};

/// What [`rewrite`] made of a blob.
pub(super) struct Rewritten {
    pub blob: Vec<u8>,
    /// The kallsyms it had (emptied).
    pub kallsyms: bool,
}

/// The blob rewritten (see the module docs); `None` when it does not parse.
pub(super) fn rewrite(blob: &[u8], names: &Pseudonyms) -> Option<Rewritten> {
    let tail = blob_tail(blob)?;
    // perf pads the record's payload to 8 bytes.
    if blob[tail.end..].iter().any(|&b| b != 0) {
        return None;
    }
    let mut out = blob[..tail.kallsyms.start].to_vec();
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&blob[tail.printk.clone()]);
    if let Some(s) = &tail.saved_cmdlines {
        let lines = saved_cmdlines(&blob[s.text.clone()], names);
        let size = lines.len() as u64;
        out.extend_from_slice(&if s.big {
            size.to_be_bytes()
        } else {
            size.to_le_bytes()
        });
        out.extend_from_slice(lines.as_bytes());
    }
    Some(Rewritten {
        blob: out,
        kallsyms: tail.kallsyms.len() > 4,
    })
}

/// saved_cmdlines' `pid comm` lines with the comms renamed.
fn saved_cmdlines(text: &[u8], names: &Pseudonyms) -> String {
    let text = String::from_utf8_lossy(text);
    let mut lines = String::new();
    for line in text.lines() {
        match line.split_once(' ') {
            Some((pid, comm)) if pid.bytes().all(|b| b.is_ascii_digit()) => {
                let comm = names
                    .comm(comm.as_bytes())
                    .unwrap_or_else(|| comm.to_string());
                lines.push_str(&format!("{pid} {comm}\n"));
            }
            _ if line.is_empty() => {}
            _ => lines.push_str(&format!("{}\n", names.word(line.as_bytes()))),
        }
    }
    lines
}

impl Anonymize {
    /// A blob through [`rewrite`], counted.
    pub(super) fn tracing_blob(&self, blob: &[u8]) -> Option<Vec<u8>> {
        let r = rewrite(blob, &self.names)?;
        if r.kallsyms {
            self.counts
                .borrow_mut()
                .zero("kallsyms lists of the tracing data", 1);
        }
        Some(r.blob)
    }

    /// HEADER_TRACING_DATA: perf's blob follows the record (`payload`), simpleperf's
    /// is inside it, after `size`.
    pub(super) fn tracing_record(&self, t: &mut HeaderTracingData, payload: &mut Vec<u8>) -> Fate {
        let inline = t.inline_data().is_some();
        let blob = match inline {
            true => t.inline_data().unwrap_or_default().to_vec(),
            false => std::mem::take(payload),
        };
        let Some(new) = self.tracing_blob(&blob) else {
            return Fate::unvouched("its tracing data does not parse");
        };
        // perf pads the data to 8 bytes and says so in `size`; simpleperf's `size` is
        // the data's own.
        let len = new.len();
        let mut padded = new;
        padded.resize(len.div_ceil(8) * 8, 0);
        let size = if inline { len } else { padded.len() };
        let Ok(size) = u32::try_from(size) else {
            return Fate::unvouched("its tracing data does not parse");
        };
        t.size = size;
        if inline {
            t.rest = padded;
        } else {
            // After `size`, perf's record has a pad word.
            t.rest.fill(0);
            *payload = padded;
        }
        self.counts
            .borrow_mut()
            .rewrote(perfdata_core::feature::FeatureId::TracingData);
        Fate::Write
    }
}
