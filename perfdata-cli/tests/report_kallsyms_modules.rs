//! Kernel modules' symbols from kallsyms, as perf 6.1 names and places them.

use std::path::Path;
use std::process::Command;

use perfdata_synth::{EventSpec, HostInfo, SampleSpec, SynthWriter, TraceSpec};

/// The recording's kernel: build id (not the running kernel's), `_text`.
const KERNEL: [u8; 20] = [0x6b; 20];
const TEXT: u64 = 0xffff_ffff_8100_0000;
/// Where perf record's kernel map ends: the first module.
const MODULES: u64 = 0xffff_ffff_c000_0000;
const FOO: u64 = MODULES;
const BAR: u64 = MODULES + 0x1_0000;
const BAZ: u64 = MODULES + 0x2_0000;

fn kallsyms() -> String {
    [
        format!("{TEXT:016x} T _text"),
        format!("{:016x} T k_sched", TEXT + 0x1000),
        format!("{:016x} t k_idle", TEXT + 0x2000),
        format!("{:016x} t foo_read\t[foo]", FOO + 0x100),
        format!("{:016x} T foo_write\t[foo]", FOO + 0x400),
        format!("{:016x} t bar_probe\t[bar_drv]", BAR),
        format!("{:016x} t bar_irq\t[bar_drv]", BAR + 0x800),
        format!("{:016x} t baz_poll\t[baz]", BAZ),
        format!("{:016x} t baz_exit\t[baz]", BAZ + 0x200),
    ]
    .join("\n")
        + "\n"
}

fn recording(path: &Path, ips: &[(u64, usize)]) {
    let host = HostInfo {
        hostname: "modhost".into(),
        os_release: "6.1.0-synth".into(),
        ..HostInfo::default()
    };
    let trace = TraceSpec {
        events: vec![EventSpec::cpu_clock(1000)],
        host,
        opts: Default::default(),
    };
    let file = std::fs::File::create(path).unwrap();
    let mut w = SynthWriter::file(std::io::BufWriter::new(file), trace).unwrap();
    w.kernel_build_id(&KERNEL);
    w.kernel_mmap(TEXT, MODULES - TEXT, 1).unwrap();
    w.module_mmap(FOO, 0x5000, "/lib/modules/6.1.0-synth/kernel/fs/foo/foo.ko", 1)
        .unwrap();
    w.module_mmap(BAR, 0x4000, "/lib/modules/6.1.0-synth/kernel/drivers/bar-drv.ko", 1)
        .unwrap();
    w.fork(500, 1, 500, 1, 10).unwrap();
    w.comm(500, 500, "kworker", true, 11).unwrap();
    let mut time = 100;
    for &(ip, n) in ips {
        for _ in 0..n {
            time += 1000;
            w.sample(&SampleSpec {
                pid: 500,
                tid: 500,
                time,
                ip,
                ..Default::default()
            })
            .unwrap();
        }
    }
    w.finish().unwrap();
}

fn samples() -> Vec<(u64, usize)> {
    vec![
        (TEXT + 0x1010, 3),
        (TEXT + 0x2800, 1),
        (TEXT + 0x4000, 1),
        (FOO + 0x108, 4),
        (FOO + 0x10, 1),
        (FOO + 0x1400, 2),
        (BAR + 0x810, 2),
        (MODULES + 0x8000, 1),
        (BAZ + 0x10, 1),
    ]
}

#[test]
fn dump() {
    let dir = Path::new("/tmp/kallmod");
    let home = dir.join("home");
    let d = home.join(".debug/[kernel.kallsyms]").join("6b".repeat(20));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("kallsyms"), kallsyms()).unwrap();
    recording(&dir.join("a.data"), &samples());
    let mut s = samples();
    s.rotate_left(3);
    recording(&dir.join("b.data"), &s);
    let _ = Command::new("true").status();
}
