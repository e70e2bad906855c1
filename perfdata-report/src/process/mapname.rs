//! The DSO name perf 6.1 gives a user-space mapping (`map__new` in
//! tools/perf/util/map.c): anonymous and DSO-less memory keeps its recorded name unless
//! it is executable, when it is named after the map file a JIT would write,
//! `/tmp/perf-PID.map`.

/// `PROT_EXEC` of mmap(2).
const PROT_EXEC: u32 = 4;
/// `MAP_HUGETLB` of mmap(2) (x86, arm64): perf counts such memory as anonymous.
const MAP_HUGETLB: u32 = 0x40000;

/// The protection and flags of a mapping, as perf 6.1 passes them to `map__new`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapProt {
    /// PROT_* bits.
    pub prot: u32,
    /// MAP_* bits.
    pub flags: u32,
}

impl MapProt {
    /// Executable, no flags: an MMAP of code, or a mapping made up for a test or a tool.
    pub const EXEC: MapProt = MapProt {
        prot: PROT_EXEC,
        flags: 0,
    };

    /// An MMAP's (it carries neither field): executable unless misc has
    /// `PERF_RECORD_MISC_MMAP_DATA`, no flags (`machine__process_mmap_event`).
    pub fn of_mmap(misc: u16) -> MapProt {
        let data = misc & perfdata_core::record::misc::MMAP_DATA != 0;
        MapProt {
            prot: if data { 0 } else { PROT_EXEC },
            flags: 0,
        }
    }

    /// An MMAP2's, as recorded.
    pub fn of_mmap2(prot: u32, flags: u32) -> MapProt {
        MapProt { prot, flags }
    }
}

/// The DSO's long name for user-space mapping `filename` of process `pid`, and whether
/// its addresses are not file offsets (perf's anonymous or DSO-less memory, mapped by
/// identity).
pub(super) fn user_map_name(filename: &str, pid: i32, prot: MapProt) -> (String, bool) {
    // perf's is_anon_memory (with MAP_HUGETLB) and is_no_dso_memory.
    let anon = filename == "//anon"
        || filename.starts_with("/dev/zero")
        || filename.starts_with("/anon_hugepage")
        || prot.flags & MAP_HUGETLB != 0;
    let no_dso =
        filename.starts_with("[stack") || filename.starts_with("/SYSV") || filename == "[heap]";
    let identity = anon || no_dso;
    let name = if identity && prot.prot & PROT_EXEC != 0 {
        format!("/tmp/perf-{pid}.map")
    } else {
        filename.to_string()
    };
    (name, identity)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RW: MapProt = MapProt { prot: 3, flags: 0 };
    const RWX: MapProt = MapProt { prot: 7, flags: 0 };

    #[test]
    fn only_executable_anonymous_memory_is_named_after_the_jit_map() {
        assert_eq!(user_map_name("//anon", 42, RW), ("//anon".into(), true));
        assert_eq!(
            user_map_name("//anon", 42, RWX),
            ("/tmp/perf-42.map".into(), true)
        );
        assert_eq!(
            user_map_name("/dev/zero (deleted)", 42, RW),
            ("/dev/zero (deleted)".into(), true)
        );
        assert_eq!(
            user_map_name("[heap]", 42, RWX),
            ("/tmp/perf-42.map".into(), true)
        );
        assert_eq!(user_map_name("[stack]", 42, RW), ("[stack]".into(), true));
        // A huge page mapping is anonymous whatever its name.
        let huge = MapProt {
            prot: 7,
            flags: MAP_HUGETLB,
        };
        assert_eq!(
            user_map_name("/memfd:x (deleted)", 42, huge),
            ("/tmp/perf-42.map".into(), true)
        );
        // A file, executable or not, keeps its name and its file offsets.
        assert_eq!(
            user_map_name("/usr/lib/libc.so.6", 42, RWX),
            ("/usr/lib/libc.so.6".into(), false)
        );
        // perf 6.1 compares `//anon` whole.
        assert_eq!(user_map_name("//anonx", 42, RWX), ("//anonx".into(), false));
    }

    #[test]
    fn an_mmap_is_executable_unless_marked_data() {
        assert_eq!(MapProt::of_mmap(2), MapProt::EXEC);
        let data = MapProt::of_mmap(2 | perfdata_core::record::misc::MMAP_DATA);
        assert_eq!(user_map_name("//anon", 7, data).0, "//anon");
        assert_eq!(
            user_map_name("//anon", 7, MapProt::of_mmap(2)).0,
            "/tmp/perf-7.map"
        );
    }

    /// Through the machine: a sample in a writable anonymous map is in `//anon`
    /// (`anon` in perf report's column), one in an executable map in the JIT's map file.
    #[test]
    fn the_machine_names_anonymous_maps_by_their_protection() {
        use crate::process::Machine;
        use perfdata_core::record::{Mmap, PaddedString};
        let mut m = Machine::new();
        let map = |addr| Mmap {
            pid: 9,
            tid: 9,
            addr,
            len: 0x1000,
            pgoff: 0,
            filename: PaddedString::new("//anon"),
        };
        m.process_mmap(&map(0x10000), RW, false, None);
        m.process_mmap(&map(0x20000), RWX, false, None);
        let dso_of = |m: &mut Machine, ip| {
            let thread = m.findnew_thread(9, 9);
            let map = m.maps_of(thread).find(ip).copied().expect("mapped");
            let d = &m.dsos[map.dso];
            (d.long_name.clone(), d.short_name.clone(), map.map_ip(ip))
        };
        assert_eq!(
            dso_of(&mut m, 0x10010),
            ("//anon".into(), "anon".into(), 0x10010)
        );
        assert_eq!(
            dso_of(&mut m, 0x20010),
            ("/tmp/perf-9.map".into(), "[JIT] tid 9".into(), 0x20010)
        );
    }
}
