//! Any bytes as one `--call-graph dwarf` sample (its user registers and stack copy)
//! walked against a small set of modules the bytes also make: ELF files holding the
//! bytes' `.text`, `.eh_frame` and `.eh_frame_hdr` (hostile CFI), and this machine's libc
//! (real CFI and the sigreturn trampoline), each mapped where the bytes say. The unwinder
//! must not panic (debug assertions on: no overflow either), must end (at most
//! `MAX_FRAMES` frames) and must count the sample once.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use perfdata_core::record::{Mmap, PaddedString};
use perfdata_report::process::{MapProt, Machine};
use perfdata_report::unwind::{Arch, UnwindOptions, Unwinder, UserState, MAX_FRAMES};

/// The real binary the bytes may map, when this machine has it.
const LIBC: &str = "/lib/x86_64-linux-gnu/libc.so.6";

/// Map starts are one of a few (so that stack words the fuzzer finds hit them).
const REGION: u64 = 0x1000_0000;

/// The fuzz input read front to back; past its end every read is 0.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        head
    }
    fn u64(&mut self, bytes: usize) -> u64 {
        let mut b = [0u8; 8];
        let head = self.take(bytes.min(8));
        b[..head.len()].copy_from_slice(head);
        u64::from_le_bytes(b)
    }
    fn u8(&mut self) -> u8 {
        self.u64(1) as u8
    }
}

/// A small ELF (ET_DYN, one PT_LOAD of the whole file at 0, so addresses are offsets)
/// with `.text`, `.eh_frame_hdr` and `.eh_frame` holding the given bytes.
fn elf(machine: u16, sections: [&[u8]; 3]) -> Vec<u8> {
    let names = b"\0.text\0.eh_frame_hdr\0.eh_frame\0.shstrtab\0";
    let name_at = [1u32, 7, 21, 31];
    let mut body = vec![0u8; 64 + 56];
    let mut placed = Vec::new();
    for s in sections.iter().copied().chain([&names[..]]) {
        while body.len() % 8 != 0 {
            body.push(0);
        }
        placed.push((body.len() as u64, s.len() as u64));
        body.extend_from_slice(s);
    }
    while body.len() % 8 != 0 {
        body.push(0);
    }
    let shoff = body.len() as u64;
    let total = shoff + 64 * 5;
    let mut h = Vec::with_capacity(64 + 56);
    h.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    h.extend_from_slice(&3u16.to_le_bytes()); // ET_DYN
    h.extend_from_slice(&machine.to_le_bytes());
    h.extend_from_slice(&1u32.to_le_bytes());
    h.extend_from_slice(&0u64.to_le_bytes()); // entry
    h.extend_from_slice(&64u64.to_le_bytes()); // phoff
    h.extend_from_slice(&shoff.to_le_bytes());
    h.extend_from_slice(&0u32.to_le_bytes()); // flags
    for v in [64u16, 56, 1, 64, 5, 4] {
        h.extend_from_slice(&v.to_le_bytes());
    }
    // PT_LOAD, R+X, offset 0 at vaddr 0.
    h.extend_from_slice(&1u32.to_le_bytes());
    h.extend_from_slice(&5u32.to_le_bytes());
    for v in [0u64, 0, 0, total, total, 0x1000] {
        h.extend_from_slice(&v.to_le_bytes());
    }
    body[..h.len()].copy_from_slice(&h);
    body.extend_from_slice(&[0u8; 64]); // the null section
    // (type, flags): .text PROGBITS ALLOC|EXEC, the CFI PROGBITS ALLOC, names STRTAB.
    let kinds = [(1u32, 6u64), (1, 2), (1, 2), (3, 0)];
    for ((&(offset, size), (kind, flags)), name) in placed.iter().zip(kinds).zip(name_at) {
        let addr = if kind == 3 { 0 } else { offset };
        body.extend_from_slice(&name.to_le_bytes());
        body.extend_from_slice(&kind.to_le_bytes());
        for v in [flags, addr, offset, size] {
            body.extend_from_slice(&v.to_le_bytes());
        }
        body.extend_from_slice(&[0u8; 8]); // link, info
        body.extend_from_slice(&1u64.to_le_bytes()); // align
        body.extend_from_slice(&0u64.to_le_bytes()); // entsize
    }
    body
}

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("perfdata-fuzz-unwind-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let arch = match input.u8() & 1 {
        0 => Arch::X86_64,
        _ => Arch::Aarch64,
    };
    let (pid, tid) = (100, 100);
    let mut machine = Machine::new();
    let mut starts = Vec::new();
    for i in 0..input.u8() % 4 {
        let kind = input.u8();
        let start = REGION * (1 + u64::from(input.u8() % 4)) + (input.u64(1) << 12);
        let len = (input.u64(2) + 1) << 12;
        let pgoff = input.u64(1) << 12;
        let path = if kind & 1 == 0 && std::path::Path::new(LIBC).exists() {
            LIBC.to_string()
        } else {
            let mut lens = [0usize; 3];
            for l in &mut lens {
                *l = input.u64(2) as usize % 4096;
            }
            let text = input.take(lens[0]).to_vec();
            let hdr = input.take(lens[1]).to_vec();
            let eh = input.take(lens[2]).to_vec();
            let machine_id = if kind & 2 == 0 { 62 } else { 183 };
            let path = dir().join(format!("m{i}"));
            std::fs::write(&path, elf(machine_id, [&text, &hdr, &eh])).expect("module written");
            path.to_string_lossy().into_owned()
        };
        let mmap = Mmap {
            pid,
            tid,
            addr: start,
            len,
            pgoff,
            filename: PaddedString::new(&path),
        };
        machine.process_mmap(&mmap, MapProt::EXEC, false, None);
        starts.push(start);
    }
    let thread = machine.findnew_thread(pid, tid);
    let base = match starts.len() {
        0 => 0,
        n => starts[usize::from(input.u8()) % n],
    };
    let ip = base.wrapping_add(input.u64(3));
    let sp = 0x7ffc_0000_0000 + (input.u64(2) << 3);
    let (fp, lr) = (input.u64(8), base.wrapping_add(input.u64(3)));
    // perf's register numbers: x86 BP 6, SP 7, IP 8; arm64 x29, LR 30, SP 31, PC 32.
    let (mask, regs) = match (arch, input.u8() % 8) {
        (_, 0) => {
            let mask = input.u64(8);
            let regs = (0..mask.count_ones()).map(|_| input.u64(8)).collect();
            (mask, regs)
        }
        (Arch::X86_64, _) => (0b111 << 6, vec![fp, sp, ip]),
        (Arch::Aarch64, _) => (0b1111 << 29, vec![fp, lr, sp, ip]),
    };
    let abi = match input.u8() % 8 {
        0 => 1,
        1 => 0,
        _ => 2,
    };
    let stack = input.0.to_vec();
    let user = UserState {
        abi,
        mask,
        regs,
        stack_size: stack.len() as u64,
        stack,
    };
    let mut unwinder = Unwinder::new(Some(arch), &UnwindOptions::default());
    let frames = unwinder.unwind(&machine, thread, &user);
    assert!(frames.len() <= MAX_FRAMES, "{} frames", frames.len());
    let s = unwinder.stats();
    assert_eq!(s.whole + s.cut + s.not_unwound, 1, "{s:?}");
});
