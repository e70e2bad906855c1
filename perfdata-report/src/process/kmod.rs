//! Kernel modules as perf 6.1 names them (tools/perf/util/dso.c `kmod_path__parse_name`,
//! machine.c `machine__addnew_module_map`, header.c `__event_process_build_id`).
//!
//! A module's DSO is found by its short name, `[name]`, not by its path: a kernel MMAP of
//! `/lib/modules/.../honeevent.ko` takes the DSO whose short name is `[honeevent]`, else
//! makes one (named `[honeevent]`, long name the path). A BUILD_ID entry in kernel mode
//! (misc 1) makes a DSO by the path and gives it the module's short name, so the MMAP
//! finds it (and perf script, printing `dso->name`, shows the path); one in user mode
//! (misc 2) keeps the file's base name, so the MMAP makes a DSO of its own, printed
//! `[honeevent]` everywhere.

use super::{Dso, Machine, Map};

/// What perf reads from a kernel module's file name (`struct kmod_path`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KmodPath {
    /// `[name]` of a module (the base name without `.ko` and compression suffix), else
    /// the base name; `-` read as `_` either way.
    pub name: String,
    /// Whether the name is a kernel module's.
    pub kmod: bool,
}

/// perf 6.1's `kmod_path__parse_name`: a `[...]` name is a module unless it is the
/// kernel's, the vDSO's or the vsyscall page's; a path is a module when its extension
/// (before a `.gz` or `.xz` compression suffix) starts with `.ko`.
pub(crate) fn parse_kmod_path(path: &str) -> KmodPath {
    let base = path.rfind('/').map_or(path, |i| &path[i + 1..]);
    if base.starts_with('[') {
        const NOT_MODULES: [&str; 6] = [
            "[kernel.kallsyms]",
            "[guest.kernel.kallsyms",
            "[vdso]",
            "[vdso32]",
            "[vdsox32]",
            "[vsyscall]",
        ];
        let kmod = !NOT_MODULES.iter().any(|p| base.starts_with(p));
        // perf returns the simple name as it is: no `-` to `_` on this path.
        return KmodPath {
            name: base.to_string(),
            kmod,
        };
    }
    // perf's `ext` is the last `.` of the whole path, which may lie before the base name.
    let Some(mut ext) = path.rfind('.') else {
        return KmodPath {
            name: base.to_string(),
            kmod: false,
        };
    };
    let name_at = path.len() - base.len();
    // The compressions perf 6.1 is built with (gzip, lzma): `.ko.gz` and `.ko.xz`.
    if matches!(&path[ext + 1..], "gz" | "xz") {
        ext = ext.saturating_sub(3);
    }
    let kmod = ext > name_at && path[ext..].starts_with(".ko");
    let name = if kmod {
        format!("[{}]", &path[name_at..ext])
    } else {
        base.to_string()
    };
    KmodPath {
        name: name.replace('-', "_"),
        kmod,
    }
}

impl Machine {
    /// A kernel MMAP of a module (`machine__addnew_module_map`): the DSO whose short name
    /// is the module's, else a new one named so, whose long name is the path; mapped at
    /// `start` with file offset 0, its addresses relative to `start` (`map__new2`).
    pub(super) fn add_module_map(
        &mut self,
        start: u64,
        end: u64,
        filename: &str,
        build_id: Option<Vec<u8>>,
    ) {
        let m = parse_kmod_path(filename);
        // perf's `__dsos__find(.., cmp_short = true)`: the first DSO made of that short
        // name, whatever made it.
        let dso = match self.dsos.iter().position(|d| d.short_name == m.name) {
            Some(d) => d,
            None => {
                self.dsos.push(Dso {
                    name: m.name.clone(),
                    long_name: filename.to_string(),
                    short_name: m.name.clone(),
                    kernel: true,
                    build_id: None,
                    ksymbols: Vec::new(),
                    module_start: None,
                });
                let d = self.dsos.len() - 1;
                // A DSO of that path made before (a BUILD_ID entry of user mode) keeps
                // answering to the path.
                self.dso_by_name.entry(filename.to_string()).or_insert(d);
                d
            }
        };
        let d = &mut self.dsos[dso];
        if build_id.is_some() {
            d.build_id = build_id;
        }
        d.module_start = Some(start);
        self.kernel_maps.insert(Map {
            start,
            end,
            pgoff: 0,
            dso,
            identity: false,
        });
    }

    /// The build id a BUILD_ID feature entry or HEADER_BUILD_ID record gives for file
    /// `name` in `cpumode` (`__event_process_build_id`): the DSO of that path, made if
    /// new; in kernel mode (host or guest) a kernel DSO, named `[name]` if a module;
    /// entries of other modes are ignored, as perf ignores them.
    pub fn add_build_id(&mut self, name: &str, build_id: &[u8], cpumode: u16) {
        use perfdata_core::record::misc::{KERNEL, USER};
        // PERF_RECORD_MISC_GUEST_KERNEL and _GUEST_USER.
        const GUEST_KERNEL: u16 = 4;
        const GUEST_USER: u16 = 5;
        let kernel = match cpumode {
            KERNEL | GUEST_KERNEL => true,
            USER | GUEST_USER => false,
            _ => return,
        };
        let long = if name.starts_with("[kernel.kallsyms]") {
            "[kernel.kallsyms]"
        } else {
            name
        };
        let short = super::user_short_name(long);
        let d = self.dso(long, &short, false, Some(build_id.to_vec()));
        if kernel {
            let m = parse_kmod_path(name);
            let dso = &mut self.dsos[d];
            if m.kmod {
                dso.short_name = m.name;
            }
            dso.kernel = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfdata_core::record::{misc, Mmap, PaddedString};

    const PATH: &str = "/lib/modules/3.13.0-93-generic/updates/dkms/honeevent.ko";
    const START: u64 = 0xffff_ffff_a063_d000;
    const IP: u64 = START + 0xbd0;
    const BUILD_ID: [u8; 20] = [0x62; 20];

    /// A machine that read a BUILD_ID entry for the module in `cpumode` (none: no
    /// entry), then the kernel's MMAP of it; and the DSO that sample `IP` lands in.
    fn module_sample(cpumode: Option<u16>) -> (Machine, crate::process::Location) {
        let mut m = Machine::new();
        if let Some(cpumode) = cpumode {
            m.add_build_id(PATH, &BUILD_ID, cpumode);
        }
        let mmap = Mmap {
            pid: -1,
            tid: 0,
            addr: START,
            len: 0xa67000,
            pgoff: 0,
            filename: PaddedString::new(PATH),
        };
        m.process_mmap(&mmap, crate::process::MapProt::EXEC, true, None);
        let at = m.resolve(7, 7, IP, true);
        (m, at)
    }

    /// (dso->name, long name, short name, build id) of the sample's DSO.
    fn names(m: &Machine, at: &crate::process::Location) -> (String, String, String, bool) {
        let d = &m.dsos[at.dso.expect("the module's map holds the ip")];
        assert!(d.kernel, "a module's DSO is the kernel's");
        let names = (d.name.clone(), d.long_name.clone(), d.short_name.clone());
        (names.0, names.1, names.2, d.build_id.is_some())
    }

    /// The names perf 6.1 gives (`__event_process_build_id`, then
    /// `machine__findnew_module_dso`): a user-mode entry makes a DSO of the path whose
    /// short name, `honeevent.ko`, the MMAP's look-up of `[honeevent]` does not find, so
    /// the MMAP makes its own `[honeevent]` (no build id: the entry's is the other
    /// DSO's); a kernel-mode entry's DSO is renamed `[honeevent]` and found.
    #[test]
    fn a_module_is_named_by_its_build_id_entrys_mode() {
        let module = |name: &str, bid| {
            (
                name.to_string(),
                PATH.to_string(),
                "[honeevent]".to_string(),
                bid,
            )
        };
        let (m, at) = module_sample(Some(misc::USER));
        assert_eq!(names(&m, &at), module("[honeevent]", false));
        let entry = m.dsos.iter().find(|d| d.build_id.is_some()).expect("entry");
        assert_eq!(entry.short_name, "honeevent.ko");
        assert!(!entry.kernel);
        let (m, at) = module_sample(Some(misc::KERNEL));
        assert_eq!(names(&m, &at), module(PATH, true));
        let (m, at) = module_sample(None);
        assert_eq!(names(&m, &at), module("[honeevent]", false));
        // Entries of no known mode are ignored, as perf ignores them.
        let (m, at) = module_sample(Some(0));
        assert_eq!(names(&m, &at), module("[honeevent]", false));
        // A module's map is relative to its start (`map__new2`): report's unresolved
        // address is 0xbd0; script's callchain prints a kernel DSO's ip as it is.
        assert_eq!(at.addr, 0xbd0);
        assert_eq!(m.chain_ip(&at), IP);
    }

    /// A module's symbols from kallsyms, which lists them at absolute addresses: found
    /// at its relative addresses, their starts relative too (perf's
    /// `maps__split_kallsyms`).
    #[test]
    fn a_modules_kallsyms_symbols_are_relative_to_its_start() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("kallsyms");
        let text = format!(
            "ffffffff81000000 T _text\n{:016x} t honee_read\t[honeevent]\n{:016x} t honee_poll\t[honeevent]\n",
            START + 0xb00,
            START + 0xc00
        );
        std::fs::write(&file, text).expect("written");
        let (m, at) = module_sample(Some(misc::USER));
        let opts = crate::symbolize::SymbolOptions {
            kallsyms: Some(crate::model::Kallsyms {
                file,
                ref_reloc: None,
            }),
            ..Default::default()
        };
        let mut symbols = crate::symbolize::Symbolizer::new(opts);
        let d = at.dso.expect("mapped");
        let (start, name) = symbols
            .function(d, &m.dsos[d], at.addr)
            .expect("a symbol holds it");
        // The module column is not part of the name (perf cuts it at the tab).
        assert_eq!((start, name), (0xb00, "honee_read"));
    }

    fn parsed(path: &str) -> (String, bool) {
        let m = parse_kmod_path(path);
        (m.name, m.kmod)
    }

    /// Names as perf 6.1's `kmod_path__parse_name` gives them (its own test,
    /// tools/perf/tests/kmod-path.c, lists the same cases).
    #[test]
    fn module_paths_are_named_as_perf_names_them() {
        assert_eq!(
            parsed("/lib/modules/3.13.0-93-generic/updates/dkms/honeevent.ko"),
            ("[honeevent]".into(), true)
        );
        assert_eq!(parsed("/xxxx/xxxx/x-x.ko"), ("[x_x]".into(), true));
        assert_eq!(parsed("/xxxx/xxxx/x-x.ko.gz"), ("[x_x]".into(), true));
        assert_eq!(parsed("/xxxx/xxxx/x.ko.xz"), ("[x]".into(), true));
        assert_eq!(parsed("/xxxx/xxxx/x.gz"), ("x.gz".into(), false));
        assert_eq!(parsed("/xxxx/xxxx/x"), ("x".into(), false));
        assert_eq!(parsed("/xxxx/xx.x/x"), ("x".into(), false));
        assert_eq!(parsed("[test_module]"), ("[test_module]".into(), true));
        assert_eq!(parsed("[test.module]"), ("[test.module]".into(), true));
        assert_eq!(parsed("[vdso]"), ("[vdso]".into(), false));
        assert_eq!(
            parsed("[kernel.kallsyms]"),
            ("[kernel.kallsyms]".into(), false)
        );
        assert_eq!(parsed("/lib/libc-2.31.so"), ("libc_2.31.so".into(), false));
    }
}
