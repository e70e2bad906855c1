//! What the kernel-symbol oracles share: a HOME whose build-id cache holds a kernel's
//! kallsyms, the check that the kernel named is not the running one (perf would read
//! /proc/kallsyms then), and a synthetic recording of such a kernel.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

use perfdata_synth::{EventSpec, HostInfo, SynthWriter, TraceSpec};
use perfdata_write::FileWriter;

/// Lower-case hex of `bytes` (a build id as perf writes it).
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Write `text` at `relative` under `home`'s `.debug/[kernel.kallsyms]/` (perf's
/// build-id cache; `<build id>/kallsyms` for the current layout).
pub fn plant_kallsyms(home: &Path, relative: &str, text: &str) {
    let path = home.join(".debug/[kernel.kallsyms]").join(relative);
    std::fs::create_dir_all(path.parent().expect("a file under the cache")).unwrap();
    std::fs::write(&path, text).unwrap();
}

/// Fail where one of `build_ids` (hex) is the running kernel's: perf and perfdata would
/// read /proc/kallsyms for it, not the planted cache.
pub fn assert_not_running(build_ids: &[&str]) {
    let notes = hex(&std::fs::read("/sys/kernel/notes").unwrap_or_default());
    for k in build_ids {
        assert!(!notes.contains(k), "kernel {k} is running here");
    }
}

/// The host and kernel of a synthetic recording.
pub struct SynthKernel<'a> {
    /// HOSTNAME feature.
    pub hostname: &'a str,
    /// OSRELEASE feature.
    pub os_release: &'a str,
    /// The kernel's build id (BUILD_ID feature).
    pub build_id: &'a [u8; 20],
    /// `_text`, where the kernel MMAP starts.
    pub text: u64,
    /// The kernel MMAP's length.
    pub len: u64,
    /// The one process's name (pid and tid 500, forked from 1).
    pub comm: &'a str,
}

/// A cpu-clock recording into `path` of `kernel`, its kernel MMAP and one process
/// already written; the caller adds maps and samples, then finishes it.
pub fn kernel_recording(
    path: &Path,
    kernel: &SynthKernel<'_>,
) -> SynthWriter<FileWriter<BufWriter<File>>> {
    let host = HostInfo {
        hostname: kernel.hostname.into(),
        os_release: kernel.os_release.into(),
        ..HostInfo::default()
    };
    let trace = TraceSpec {
        events: vec![EventSpec::cpu_clock(1000)],
        host,
        opts: Default::default(),
    };
    let file = File::create(path).unwrap();
    let mut w = SynthWriter::file(BufWriter::new(file), trace).unwrap();
    w.kernel_build_id(kernel.build_id);
    w.kernel_mmap(kernel.text, kernel.len, 1).unwrap();
    w.fork(500, 1, 500, 1, 10).unwrap();
    w.comm(500, 500, kernel.comm, true, 11).unwrap();
    w
}
