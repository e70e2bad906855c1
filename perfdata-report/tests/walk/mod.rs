//! What the fixture-binary unwinding tests share: a process with one executable map
//! of a fixture binary, and perfdata's walk of one sample on it.

use perfdata_core::record::{Mmap, PaddedString};
use perfdata_report::process::{Machine, MapProt};
use perfdata_report::unwind::{Arch, UnwindOptions, Unwinder, UserState};

/// perfdata's user frames of `user` in a process with `fixture` (a path under
/// fixtures/) mapped executable at `base` for `len` bytes from offset 0, unwound for
/// `arch`; and whether the walk ended whole.
pub fn unwind(
    fixture: &str,
    base: u64,
    len: u64,
    arch: Arch,
    user: &UserState,
) -> (Vec<u64>, bool) {
    let binary = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(fixture)
        .canonicalize()
        .expect("the fixture");
    let cache = tempfile::tempdir().expect("temp dir");
    let mut machine = Machine::new();
    let thread = machine.findnew_thread(100, 100);
    let map = Mmap {
        pid: 100,
        tid: 100,
        addr: base,
        len,
        pgoff: 0,
        filename: PaddedString::new(binary.to_str().expect("utf-8 path")),
    };
    machine.process_mmap(&map, MapProt::EXEC, false, None);
    let opts = UnwindOptions {
        symfs: None,
        buildid_dir: Some(cache.path().to_path_buf()),
    };
    let mut unwinder = Unwinder::new(Some(arch), &opts);
    let frames = unwinder.unwind(&machine, thread, user);
    let stats = unwinder.stats();
    assert_eq!(stats.whole + stats.cut, 1, "{stats:?}");
    (frames, stats.whole == 1)
}
