//! What edits need to know of a record type's fields, stated in its catalogue row
//! (see the registry): which fields name the task the record is about, which carry
//! strings and what those name, which hold addresses, and whether that list is the
//! whole of what is not a number. Selectors (`task_of`), strip and anonymize read these
//! facts instead of keeping their own lists of record types, so a type the catalogue
//! gains is described to all of them by its row, and a row cannot be written without
//! them (the catalogue's macro has no form without a facts group).

use binrw::Endian;

use crate::codec::u32_at;

/// Whether a side-band record belongs to a thread or to its process (MMAP and MMAP2:
/// a process's threads share its maps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskScope {
    /// The thread's own (COMM, FORK, EXIT, SWITCH, ...).
    Thread,
    /// Its process's (MMAP, MMAP2).
    Process,
}

/// Which fields name the task a record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskFacts {
    /// None: it is about no task (samples, counts, perf's own records, the kernel's
    /// KSYMBOL, BPF_EVENT, TEXT_POKE).
    None,
    /// Its own pid and tid fields (i32), at these offsets from the record's start.
    Fields {
        /// Offset of the pid.
        pid: usize,
        /// Offset of the tid.
        tid: usize,
        /// The thread's record or its process's.
        scope: TaskScope,
    },
    /// The task its sample_id trailer names (SWITCH, CGROUP, AUX, ...): a thread's.
    Trailer,
}

/// What a string field names, which says how an edit that renames treats it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StringKind {
    /// A command (a thread's name).
    Comm,
    /// A file's path.
    Path,
    /// A cgroup's path.
    Cgroup,
    /// A kernel symbol's name (BPF programs' names among them).
    Symbol,
}

/// A string field: a NUL-terminated, NUL-padded string that fills the rest of the
/// record's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StringField {
    /// Its offset from the record's start.
    pub at: usize,
    /// What it names.
    pub kind: StringKind,
}

/// Whether the facts list everything in the record that is not a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// Every field is a number the kernel or perf gives (ids, times, counts, flags,
    /// addresses), except the strings listed.
    Listed,
    /// It holds more than that (payloads, nested names, user memory, reserved bytes,
    /// perf's metadata): an edit that promises privacy handles it by name, or leaves
    /// it out.
    Other,
}

/// The facts of one record type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// The task it is about.
    pub task: TaskFacts,
    /// Its strings.
    pub strings: &'static [StringField],
    /// Offsets of its u64 fields that hold addresses (start, length or file offset
    /// of a mapping; a symbol's address), from the record's start.
    pub addresses: &'static [usize],
    /// Whether that is all that is not a number.
    pub content: Content,
}

impl Facts {
    /// The facts of a type no row describes (an unknown number).
    pub const OTHER: Facts = Facts {
        task: TaskFacts::None,
        strings: &[],
        addresses: &[],
        content: Content::Other,
    };

    /// The pid and tid of a record (header included) whose task its own fields name;
    /// `None` for other records and for one too short to hold them.
    pub fn task_fields(&self, bytes: &[u8], endian: Endian) -> Option<(i32, i32, TaskScope)> {
        match self.task {
            TaskFacts::Fields { pid, tid, scope } => Some((
                u32_at(bytes, pid, endian)? as i32,
                u32_at(bytes, tid, endian)? as i32,
                scope,
            )),
            _ => None,
        }
    }
}
