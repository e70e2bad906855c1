//! [`Comms`]: each thread's command as of the current record, as perf's
//! `thread__comm_str` gives it: COMM names a thread, FORK gives the child its parent's.

use std::borrow::Cow;
use std::collections::HashMap;

use binrw::Endian;
use perfdata_core::record::RecordType;
use perfdata_core::u32_at;

/// Commands by tid, followed record by record.
#[derive(Debug, Clone, Default)]
pub(crate) struct Comms(HashMap<u32, Vec<u8>>);

impl Comms {
    /// Follow a record of type `ty` (COMM and FORK change commands).
    pub fn track(&mut self, ty: RecordType, bytes: &[u8], endian: Endian) {
        match ty {
            RecordType::Comm => {
                if let Some(tid) = u32_at(bytes, 12, endian) {
                    let name = &bytes[16.min(bytes.len())..];
                    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                    self.0.insert(tid, name[..end].to_vec());
                }
            }
            RecordType::Fork => {
                if let (Some(tid), Some(ptid)) =
                    (u32_at(bytes, 16, endian), u32_at(bytes, 20, endian))
                {
                    if let Some(c) = self.0.get(&ptid).cloned() {
                        self.0.insert(tid, c);
                    }
                }
            }
            _ => {}
        }
    }

    /// The thread's command, if a record named it.
    pub fn get(&self, tid: u32) -> Option<&[u8]> {
        self.0.get(&tid).map(Vec::as_slice)
    }

    /// The thread's command; perf shows `:TID` for a thread it has no COMM of.
    pub fn of(&self, tid: u32) -> Cow<'_, [u8]> {
        match self.get(tid) {
            Some(c) => Cow::Borrowed(c),
            None => Cow::Owned(format!(":{tid}").into_bytes()),
        }
    }
}
