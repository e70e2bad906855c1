//! What a report is made of, shared by the replay, the tables and the exports: a sample
//! as the replay resolves it, the replay's result, the recording's event groups, perf's
//! sort keys and the tables' rows. Types only (and the facts they know of themselves):
//! the algorithms that make and use them import this module, never each other's types.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::Metadata;
use serde::Serialize;

use crate::process::{Location, Machine};

/// The running kernel's symbols.
pub const PROC_KALLSYMS: &str = "/proc/kallsyms";

/// A kallsyms file and how its addresses are moved onto the recording's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kallsyms {
    /// `/proc/kallsyms` ([`PROC_KALLSYMS`]) or a copy in the build-id cache.
    pub file: PathBuf,
    /// For a copy: the recording's reference symbol and its address
    /// ([`Machine::kernel_ref_reloc`]). perf 6.1's `kallsyms__delta`
    /// moves every symbol by the difference between the file's address of that symbol
    /// and this one, and loads nothing from a file that lacks it.
    pub ref_reloc: Option<(String, u64)>,
}

/// Whether the event perf names `name` is a software clock (`cpu-clock`, `task-clock`,
/// with any modifiers: plain `perf record` names its event `cpu-clock:ppp` where there is
/// no PMU): its periods are nanoseconds.
pub fn is_clock(name: &str) -> bool {
    matches!(name.split(':').next(), Some("cpu-clock" | "task-clock"))
}

/// One sample, resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolvedSample {
    /// Index of the event (attr).
    pub event: usize,
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// CPU, when the sample carries it.
    pub cpu: Option<u32>,
    /// Time (ns), when the sample carries it.
    pub time: Option<u64>,
    /// The sample's period, or the attr's fixed one when samples do not carry it.
    pub period: u64,
    /// Where the ip was.
    pub ip: Location,
    /// The callchain's frames, leaf first, PERF_CONTEXT_* markers applied and dropped
    /// (empty without PERF_SAMPLE_CALLCHAIN).
    pub callchain: Vec<Location>,
    /// How many of the callchain's last frames an unwinding of the user stack copy
    /// (`--call-graph dwarf`) added: perf 6.1 lists the functions inlined at those
    /// frames ([`crate::inlines`]), not at recorded ones.
    pub unwound: usize,
    /// The callchain is the one perf 6.1 builds from an LBR call stack
    /// (`resolve_lbr_callchain_sample`): perf's `--max-stack` does not cut it (it only
    /// bounds where PERF_CONTEXT_USER is looked for, [`crate::replay::ReplayOptions::max_stack`]).
    pub lbr: bool,
}

/// A recording replayed: the machine as it ended. The samples went, resolved, to the
/// callback of [`crate::replay::replay`] as they came: none is kept.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The machine as the last record left it.
    pub machine: Machine,
    /// perf's name of each event, by index.
    pub event_names: Vec<String>,
    /// Each event's attr type and config, by index (what perf diff matches events of
    /// two recordings by: `evsel__match2`).
    pub event_ids: Vec<(u32, u64)>,
    /// The recording's HOSTNAME and OSRELEASE features.
    pub hostname: Option<String>,
    /// The OSRELEASE feature.
    pub osrelease: Option<String>,
    /// Samples the kernel said it lost (the sum of LOST_SAMPLES records' counts): perf
    /// report's "Total Lost Samples".
    pub lost_samples: u64,
    /// The recording's event groups (GROUP_DESC).
    pub groups: Vec<EventGroup>,
    /// What became of the samples with user stack copies (`--call-graph dwarf`); all
    /// zero when none had one or unwinding was off.
    pub unwind: crate::unwind::stats::UnwindStats,
    /// What the reading found odd (a recording cut short) and what the replay could not
    /// use (a jitdump it could not read), said once each.
    pub warnings: Vec<String>,
}

impl Replay {
    /// The kallsyms file of the recording's kernel, as perf 6.1's `dso__find_kallsyms`
    /// picks it (vmlinux files and kcore copies aside): /proc/kallsyms when the recording
    /// names no kernel build id or that of the running kernel; else the copy in the
    /// build-id cache (`dir`, else `$HOME/.debug`):
    /// `[kernel.kallsyms]/<build id>/kallsyms`, or the older `[kernel.kallsyms]/<build
    /// id>` file; else none. Where /sys/kernel/notes cannot be read and no copy is
    /// cached, /proc/kallsyms if the recording's hostname and kernel release are this
    /// machine's.
    pub fn kallsyms(&self, dir: Option<&Path>) -> Option<Kallsyms> {
        // perf moves the running kernel's symbols onto the recorded kernel's addresses
        // too (a recording of another boot: KASLR put `_text` elsewhere).
        let running = || Kallsyms {
            file: PathBuf::from(PROC_KALLSYMS),
            ref_reloc: self.machine.kernel_ref_reloc.clone(),
        };
        let recorded = self
            .machine
            .dsos
            .iter()
            .find(|d| d.kernel && d.long_name == "[kernel.kallsyms]")
            .and_then(|d| d.build_id.clone());
        let Some(recorded) = recorded else {
            return Some(running());
        };
        let notes = std::fs::read("/sys/kernel/notes").ok();
        if notes
            .as_deref()
            .and_then(gnu_build_id)
            .is_some_and(|b| same_build_id(b, &recorded))
        {
            return Some(running());
        }
        let hex: String = trim_build_id(&recorded)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let dir = buildid_dir(dir)?.join("[kernel.kallsyms]").join(hex);
        // perf's build_id_cache__kallsyms_path: access(F_OK), the new name, then the old.
        let cached = [dir.join("kallsyms"), dir]
            .into_iter()
            .find(|p| std::fs::symlink_metadata(p).is_ok());
        match cached {
            Some(file) => Some(Kallsyms {
                file,
                ref_reloc: self.machine.kernel_ref_reloc.clone(),
            }),
            None if notes.is_none() && self.recorded_here() => Some(running()),
            None => None,
        }
    }

    /// Whether the recording's hostname and kernel release are this machine's.
    pub fn recorded_here(&self) -> bool {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
        };
        let here = (
            read("/proc/sys/kernel/hostname"),
            read("/proc/sys/kernel/osrelease"),
        );
        self.hostname.is_some() && (self.hostname.clone(), self.osrelease.clone()) == here
    }
}

/// The build-id cache (perf's `buildid_dir`): `dir` when given, else `$HOME/.debug`.
/// perf 6.1 sets `PERF_BUILDID_DIR` for the commands it runs but does not read it.
pub(crate) fn buildid_dir(dir: Option<&Path>) -> Option<PathBuf> {
    dir.map(Path::to_path_buf)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".debug")))
}

/// Build ids are 20 bytes in the records; shorter ones (MD5, 16) are zero padded.
pub(crate) fn trim_build_id(id: &[u8]) -> &[u8] {
    let mut end = id.len();
    while end > 16 && id[end - 1] == 0 {
        end -= 1;
    }
    &id[..end]
}

/// Build ids compare without the zero padding records give them.
pub fn same_build_id(a: &[u8], b: &[u8]) -> bool {
    let trim = |x: &[u8]| -> usize { x.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1) };
    a[..trim(a)] == b[..trim(b)]
}

/// The NT_GNU_BUILD_ID descriptor of a run of native-endian ELF notes.
fn gnu_build_id(mut notes: &[u8]) -> Option<&[u8]> {
    let word = |b: &[u8], i: usize| -> Option<usize> {
        Some(u32::from_ne_bytes(b.get(i..i + 4)?.try_into().ok()?) as usize)
    };
    while notes.len() >= 12 {
        let (namesz, descsz, kind) = (word(notes, 0)?, word(notes, 4)?, word(notes, 8)?);
        let desc_at = 12 + namesz.div_ceil(4) * 4;
        let next = desc_at + descsz.div_ceil(4) * 4;
        let name = notes.get(12..12 + namesz)?;
        if kind == 3 && name == b"GNU\0" {
            return notes.get(desc_at..desc_at + descsz);
        }
        notes = notes.get(next..)?;
    }
    None
}

/// perf's name for a group the recording did not name (GROUP_DESC says `{anon_group}`).
const ANON_GROUP: &str = "{anon_group}";

/// One event group: consecutive events, the first its leader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventGroup {
    /// Index of the leader among the recording's events.
    pub leader: usize,
    /// Events in the group, the leader included (perf's `nr_members`).
    pub size: usize,
    /// The group's name, when the recording gave it one.
    pub name: Option<String>,
    /// perf's forced leader (`--group` on a recording without groups): the description
    /// lists the events without a group name around them.
    pub forced: bool,
}

impl EventGroup {
    /// The groups of the GROUP_DESC feature with more than one event, as perf's
    /// `process_group_desc` rebuilds them.
    pub fn from_meta(meta: &Metadata) -> Vec<EventGroup> {
        let Some(Feature::GroupDesc(desc)) = meta.feature(FeatureId::GroupDesc) else {
            return Vec::new();
        };
        desc.groups
            .iter()
            .filter(|g| g.nr_members > 1)
            .map(|g| {
                let name = g.name.as_str_lossy();
                EventGroup {
                    leader: g.leader_idx as usize,
                    size: g.nr_members as usize,
                    name: (name != ANON_GROUP).then_some(name),
                    forced: false,
                }
            })
            .collect()
    }

    /// perf's forced group of all `events` events (none for fewer than two).
    pub fn forced(events: usize) -> Option<EventGroup> {
        (events > 1).then_some(EventGroup {
            leader: 0,
            size: events,
            name: None,
            forced: true,
        })
    }

    /// The events of the group, the leader first.
    pub fn events(&self) -> std::ops::Range<usize> {
        self.leader..self.leader + self.size
    }

    /// perf's `evsel__group_desc`: `anon group { a, b }`, or `a, b` when forced.
    pub fn describe(&self, event_names: &[String]) -> String {
        let names: Vec<&str> = self
            .events()
            .map(|e| event_names.get(e).map_or("?", String::as_str))
            .collect();
        if self.forced {
            return names.join(", ");
        }
        let name = self.name.as_deref().unwrap_or("anon group");
        format!("{name} {{ {} }}", names.join(", "))
    }
}

/// A sort key, by perf's name for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SortKey {
    /// The thread's name at the sample ("Command").
    Comm,
    /// perf's `pid` key: the thread, shown `tid:comm` ("Pid:Command").
    Pid,
    /// The thread id alone ("Tid"; perf 6.1 has no such key).
    Tid,
    /// The DSO's short name ("Shared Object").
    Dso,
    /// `[k]`/`[.]` and the function, or the DSO-relative address ("Symbol").
    Sym,
    /// The source line of the sample's address from DWARF, `file.c:LINE`, else
    /// `symbol+offset` as perf's srcline ("Source:Line").
    Srcline,
    /// The CPU ("CPU").
    Cpu,
    /// The event's name ("Event").
    Event,
    /// A tracepoint sample's fields as perf prints them (`tep_print_event`'s info,
    /// perf script's text), "N/A" for a sample of another event ("Trace output"); perf's
    /// default key where every event of the recording is a tracepoint.
    Trace,
}

impl SortKey {
    /// The column header perf prints.
    pub fn header(self) -> &'static str {
        match self {
            SortKey::Comm => "Command",
            SortKey::Pid => "    Pid:Command",
            SortKey::Tid => "Tid",
            SortKey::Dso => "Shared Object",
            SortKey::Sym => "Symbol",
            SortKey::Srcline => "Source:Line",
            SortKey::Cpu => "CPU",
            SortKey::Event => "Event",
            SortKey::Trace => "Trace output",
        }
    }

    /// Parse perf's comma-separated list (`comm,dso,sym`). A key named again is
    /// dropped, as perf's `sort_dimension__add` skips a dimension already taken
    /// (`sym,dso,sym` is `sym,dso`).
    pub fn parse_list(s: &str) -> Result<Vec<SortKey>, String> {
        let mut keys: Vec<SortKey> = Vec::new();
        for k in s.split(',') {
            let k: SortKey = k.trim().parse()?;
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        Ok(keys)
    }
}

impl FromStr for SortKey {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "comm" => SortKey::Comm,
            "pid" => SortKey::Pid,
            "tid" => SortKey::Tid,
            "dso" => SortKey::Dso,
            "sym" | "symbol" => SortKey::Sym,
            "srcline" => SortKey::Srcline,
            "cpu" => SortKey::Cpu,
            "event" => SortKey::Event,
            "trace" => SortKey::Trace,
            _ => {
                return Err(format!(
                    "unknown sort key {s:?} (comm, pid, tid, dso, sym, srcline, cpu, event, trace)"
                ))
            }
        })
    }
}

/// An entry's call-graph depth, as perf orders entries of equal Children by it
/// (`__hpp__sort_acc`: of two entries of one thread, the caller above the callee).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainDepth {
    /// The thread of the sample that made the entry (perf compares only entries of one
    /// thread).
    pub thread: usize,
    /// The most frames of a callchain appended to the entry (perf's
    /// `callchain_root.max_depth`), negated where the chains are walked from the sample
    /// (callee order): of two entries, the larger rank comes first.
    pub rank: i64,
}

/// One row: a distinct combination of key values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// One cell per sort key, as perf prints it.
    pub cells: Vec<String>,
    /// Samples in the row.
    pub samples: u64,
    /// Sum of their periods.
    pub period: u64,
    /// Percent of the event's total period.
    pub percent: f64,
    /// With `--children`: the period of the samples whose callchain passes through the
    /// row (its own included), and its percent of the event's total period.
    pub children: Option<(u64, f64)>,
    /// The callchains under the entry (perf's call graph), when asked for; not part of
    /// the JSON as a field (the JSON writes it as `callchain`, see
    /// [`crate::text::write_json`]).
    #[serde(skip)]
    pub callchain: Option<crate::callgraph::CallTree>,
    /// In a group's table ([`crate::group::group_view`]): the other members' counts of
    /// the row, in the group's order; empty otherwise.
    pub members: Vec<MemberCount>,
    /// perf's `thread__comm_len` of the thread whose sample made the row: the length of
    /// that thread's last name, which is what sets the Command column's width in perf
    /// (`hists__calc_col_len`), a longer name of the row's own (`perf-exec` before the
    /// exec to `spin`) being cut to the width. Not part of the JSON.
    #[serde(skip)]
    pub comm_len: usize,
    /// When perf made the entry: the number of its first sample and the position of
    /// the entry's frame in that sample's walk (perf prints entries of equal overhead in that order). Not part of
    /// the JSON.
    #[serde(skip)]
    pub created: (u64, u32),
    /// With Children and call graphs drawn: what perf's `__hpp__sort_acc` orders
    /// entries of equal Children by. Not part of the JSON.
    #[serde(skip)]
    pub depth: Option<ChainDepth>,
    /// What `perf report -v` prints before the entry's Symbol cell, when asked for
    /// ([`crate::report::Report::verbose`]). Not part of the JSON.
    #[serde(skip)]
    pub verbose: Option<Box<VerboseCells>>,
}

/// What `perf report -v` prints of an entry beyond its cells (sort.c's
/// `_hist_entry__sym_snprintf` under `verbose`; its DSO cell is the DSO's long name,
/// which the rows are sorted by, see `verbose.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerboseCells {
    /// The entry's address (perf's `he->ip`: the sample's DSO-relative address, a
    /// callchain frame's ip as sampled) and the letter of the kind of file its DSO's
    /// symbols came from, as `%-#18llx %c `
    /// ([`crate::symbolize::Symbolizer::symtab_origin`]).
    pub sym_prefix: String,
}

/// A group member's count of a row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberCount {
    /// Samples.
    pub samples: u64,
    /// Sum of their periods.
    pub period: u64,
    /// Percent of the member's total period.
    pub percent: f64,
    /// With `--children`: children period and percent, as [`Row::children`].
    pub children: Option<(u64, f64)>,
}

/// The rows of one event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventTable {
    /// The event's name (a group's description for a group's table).
    pub event: String,
    /// The event's index (the leader's for a group's table).
    pub index: usize,
    /// perf's `nr_members` of the event: the size of the group it leads, else 1.
    pub group_size: usize,
    /// A group's table: the names of the members after the leader, whose counts the
    /// rows' `members` hold; empty otherwise.
    pub members: Vec<String>,
    /// Samples of the event.
    pub samples: u64,
    /// Sum of their periods.
    pub period: u64,
    /// By period (children period first with `--children`), largest first.
    pub rows: Vec<Row>,
    /// The entries a filter hides (perf's filtered hist entries), unordered: kept only
    /// when asked ([`crate::report::Report::keep_filtered`]), for perf diff, which pairs
    /// them with other recordings' entries and prints none.
    pub filtered: Vec<Row>,
    /// The period of the samples no filter hid, summed sample by sample (perf's
    /// `total_non_filtered_period` as its diff counts it; `period`, with relative
    /// percentages, sums the entries shown, each with all its samples).
    pub unfiltered_period: u64,
    /// Whether rows have children periods.
    pub children: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_gnu_build_id_note() {
        let mut notes = Vec::new();
        // A "Linux" note first, then the GNU build id.
        for (name, kind, desc) in [
            (&b"Linux\0"[..], 6u32, &[1u8, 1, 0, 0][..]),
            (&b"GNU\0"[..], 3, &[0xab; 20][..]),
        ] {
            notes.extend((name.len() as u32).to_ne_bytes());
            notes.extend((desc.len() as u32).to_ne_bytes());
            notes.extend(kind.to_ne_bytes());
            notes.extend(name);
            notes.resize(notes.len().div_ceil(4) * 4, 0);
            notes.extend(desc);
        }
        assert_eq!(gnu_build_id(&notes), Some(&[0xab; 20][..]));
        assert!(same_build_id(&[1, 2, 0, 0], &[1, 2]));
        assert!(!same_build_id(&[1, 2], &[1, 3]));
    }
}
