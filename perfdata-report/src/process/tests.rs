//! The process model against perf's rules.

use super::*;
use perfdata_core::record::PaddedString;

fn mmap(pid: i32, addr: u64, len: u64, name: &str) -> Mmap {
    Mmap {
        pid,
        tid: pid,
        addr,
        len,
        pgoff: 0,
        filename: PaddedString::new(name),
    }
}

fn fork(pid: i32, ppid: i32, tid: i32) -> ForkExit {
    ForkExit {
        pid,
        ppid,
        tid,
        ptid: ppid,
        time: 5,
    }
}

fn map(start: u64, end: u64, pgoff: u64) -> Map {
    Map {
        start,
        end,
        pgoff,
        dso: 0,
        identity: false,
    }
}

#[test]
fn new_map_splits_the_one_it_overlaps() {
    let mut maps = Maps::default();
    maps.insert(map(0x1000, 0x5000, 0));
    maps.insert(map(0x2000, 0x3000, 0x100));
    assert_eq!(maps.len(), 3);
    assert_eq!(maps.find(0x1800), Some(&map(0x1000, 0x2000, 0)));
    assert_eq!(maps.find(0x2800), Some(&map(0x2000, 0x3000, 0x100)));
    assert_eq!(maps.find(0x4000), Some(&map(0x3000, 0x5000, 0x2000)));
    assert_eq!(maps.find(0x5000), None);
    // A map covering everything replaces all three.
    maps.insert(map(0, 0x10000, 0));
    assert_eq!(maps.len(), 1);
}

#[test]
fn the_map_found_last_is_not_kept_past_a_change_of_the_maps() {
    let mut m = Machine::new();
    m.process_mmap(
        &mmap(10, 0x1000, 0x4000, "/bin/old"),
        MapProt::EXEC,
        false,
        None,
    );
    m.process_mmap(
        &mmap(20, 0x1000, 0x4000, "/bin/other"),
        MapProt::EXEC,
        false,
        None,
    );
    let name = |m: &mut Machine, pid, ip| {
        let at = m.resolve(pid, pid, ip, false);
        at.dso.map(|d| (m.dsos[d].short_name.clone(), at.addr))
    };
    assert_eq!(name(&mut m, 10, 0x1010), Some(("old".into(), 0x10)));
    // Another process's maps at the same address: its own map.
    assert_eq!(name(&mut m, 20, 0x1010), Some(("other".into(), 0x10)));
    assert_eq!(name(&mut m, 10, 0x2010), Some(("old".into(), 0x1010)));
    // A new map over the middle of the one found last: the new one, then what is
    // left of the old one after it, with its offset moved on.
    m.process_mmap(
        &mmap(10, 0x2000, 0x1000, "/bin/new"),
        MapProt::EXEC,
        false,
        None,
    );
    assert_eq!(name(&mut m, 10, 0x2010), Some(("new".into(), 0x10)));
    assert_eq!(name(&mut m, 10, 0x3010), Some(("old".into(), 0x2010)));
    assert_eq!(name(&mut m, 10, 0x1010), Some(("old".into(), 0x10)));
    assert_eq!(name(&mut m, 10, 0x5010), None);
    // Alternating between the two processes (two maps are kept, the latest first),
    // each finds its own, its tid its own thread.
    for _ in 0..2 {
        assert_eq!(name(&mut m, 20, 0x2010), Some(("other".into(), 0x1010)));
        assert_eq!(name(&mut m, 10, 0x2010), Some(("new".into(), 0x10)));
        assert_eq!(name(&mut m, 10, 0x1010), Some(("old".into(), 0x10)));
        let (a, b) = (m.findnew_thread(10, 10), m.findnew_thread(20, 20));
        assert_eq!((m.threads[a].tid, m.threads[b].tid), (10, 20));
    }
}

#[test]
fn threads_share_maps_forked_processes_copy_them() {
    let mut m = Machine::new();
    m.process_comm(10, 10, "parent", true);
    m.process_mmap(
        &mmap(10, 0x1000, 0x1000, "/bin/p"),
        MapProt::EXEC,
        false,
        None,
    );
    // A thread of process 10 shares its maps, including later ones.
    m.process_fork(&fork(10, 10, 11), true);
    m.process_mmap(
        &mmap(10, 0x8000, 0x1000, "/lib/l.so"),
        MapProt::EXEC,
        false,
        None,
    );
    let thread = m.resolve(10, 11, 0x8010, false);
    assert_eq!(m.dsos[thread.dso.unwrap()].short_name, "l.so");
    assert_eq!(thread.addr, 0x10);
    assert_eq!(m.comms[thread.comm], "parent");
    // A forked process copies the maps as they are at the fork, then goes its own way.
    m.process_fork(&fork(20, 10, 20), true);
    m.process_mmap(
        &mmap(10, 0x9000, 0x1000, "/lib/late.so"),
        MapProt::EXEC,
        false,
        None,
    );
    assert!(m.resolve(20, 20, 0x1010, false).dso.is_some());
    assert!(m.resolve(20, 20, 0x9010, false).dso.is_none());
    // exec renames the child; samples before it keep the inherited name.
    let before = m.resolve(20, 20, 0x1010, false).comm;
    m.process_comm(20, 20, "child", true);
    let after = m.resolve(20, 20, 0x1010, false).comm;
    assert_eq!(
        (m.comms[before].as_str(), m.comms[after].as_str()),
        ("parent", "child")
    );
}

#[test]
fn first_comm_overrides_the_default_name() {
    let mut m = Machine::new();
    let early = m.resolve(7, 7, 0, false).comm;
    assert_eq!(m.comms[early], ":7");
    m.process_comm(7, 7, "late", false);
    assert_eq!(m.comms[early], "late");
}

/// The kernel image's MMAP (`[kernel.kallsyms]_text`) at `addr`, 16 MiB long.
fn map_kernel(m: &mut Machine, addr: u64) {
    let kernel = mmap(-1, addr, 0x100_0000, "[kernel.kallsyms]_text");
    m.process_mmap(&kernel, MapProt::EXEC, true, None);
}

#[test]
fn a_second_kernel_mmap_renews_the_image_and_keeps_the_modules() {
    let mut m = Machine::new();
    map_kernel(&mut m, 0xffff_ffff_8100_0000);
    let module = mmap(
        -1,
        0xffff_ffff_c000_0000,
        0x1000,
        "/lib/modules/x/kvm-amd.ko",
    );
    m.process_mmap(&module, MapProt::EXEC, true, None);
    // Another host's kernel, read later (a merged file): perf keeps the last image.
    map_kernel(&mut m, 0xffff_ffff_a000_0000);
    assert_eq!(m.resolve(5, 5, 0xffff_ffff_8100_0010, true).dso, None);
    let k = m.resolve(5, 5, 0xffff_ffff_a000_0010, true);
    assert_eq!(m.dsos[k.dso.unwrap()].short_name, "[kernel.kallsyms]");
    let md = m.resolve(5, 5, 0xffff_ffff_c000_0010, true);
    assert_eq!(m.dsos[md.dso.unwrap()].short_name, "[kvm_amd]");
}

#[test]
fn kernel_maps_and_modules() {
    let mut m = Machine::new();
    map_kernel(&mut m, 0xffff_ffff_8100_0000);
    let module = mmap(
        -1,
        0xffff_ffff_c000_0000,
        0x1000,
        "/lib/modules/x/kvm-amd.ko",
    );
    m.process_mmap(&module, MapProt::EXEC, true, None);
    let k = m.resolve(5, 5, 0xffff_ffff_8100_0010, true);
    assert_eq!(m.dsos[k.dso.unwrap()].short_name, "[kernel.kallsyms]");
    assert_eq!(k.addr, 0xffff_ffff_8100_0010);
    let md = m.resolve(5, 5, 0xffff_ffff_c000_0010, true);
    assert_eq!(m.dsos[md.dso.unwrap()].short_name, "[kvm_amd]");
    // The same address in user mode is not the kernel's.
    assert_eq!(m.resolve(5, 5, 0xffff_ffff_8100_0010, false).dso, None);
}

#[test]
fn a_ksymbol_is_a_dso_of_its_own_until_unregistered() {
    let mut m = Machine::new();
    map_kernel(&mut m, 0xffff_ffff_8100_0000);
    let prog = |addr: u64, flags: u16, name: &str| Ksymbol {
        addr,
        len: 0x100,
        ksym_type: 1,
        flags,
        name: PaddedString::new(name),
    };
    m.process_ksymbol(&prog(0xffff_ffff_c002_0000, 0, "bpf_prog_ab_hot"));
    let at = m.resolve(5, 5, 0xffff_ffff_c002_0010, true);
    let dso = &m.dsos[at.dso.expect("a map")];
    assert_eq!(dso.short_name, "bpf_prog_ab_hot");
    assert!(dso.kernel);
    assert_eq!(
        dso.ksymbols,
        vec![(0xffff_ffff_c002_0000, 0x100, "bpf_prog_ab_hot".to_string())]
    );
    assert_eq!(
        m.resolve(5, 5, 0xffff_ffff_c002_0100, true).dso,
        None,
        "past its end"
    );
    // In the kernel image's map: kallsyms names it, no DSO is made.
    m.process_ksymbol(&prog(0xffff_ffff_8100_0100, 0, "bpf_prog_cd_in_text"));
    assert_eq!(m.dsos.iter().filter(|d| !d.ksymbols.is_empty()).count(), 1);
    m.process_ksymbol(&prog(0xffff_ffff_c002_0000, 1, "bpf_prog_ab_hot"));
    assert_eq!(
        m.resolve(5, 5, 0xffff_ffff_c002_0010, true).dso,
        None,
        "unregistered"
    );
}
