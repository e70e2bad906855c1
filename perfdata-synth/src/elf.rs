//! The workload's DSOs as real files: minimal ELF64 x86-64 shared objects (`ET_DYN`)
//! with a `.text` of the model's size, a `.symtab` with one `STT_FUNC` symbol per
//! function and a GNU build-id note equal to the build id the MMAP2 records carry, so
//! that perf resolves every sample to the function the model placed it in.
//!
//! Layout (little-endian, as the x86-64 machine that would have run them):
//!
//! | offset | what |
//! |---|---|
//! | 0 | ELF header |
//! | 0x40 | program headers: a PT_LOAD (R+X) from offset 0 to the end of `.text`, vaddr = offset; a PT_NOTE |
//! | 0xb0 | `.note.gnu.build-id` |
//! | [`TEXT_OFFSET`] | `.text`: the functions one after the other, `ret` bytes |
//! | then | `.symtab`, `.strtab`, `.shstrtab`, the section headers |
//!
//! Because the PT_LOAD's vaddr equals its file offset, perf's symbol addresses are file
//! offsets, and a sample at `ip` in a mapping at `addr` with `pgoff` = [`TEXT_OFFSET`]
//! lands on `ip - addr + TEXT_OFFSET`, the function's symbol.

use super::dso::{Dso, Function};

/// Where `.text` starts in the file (and in the object's address space): the MMAP2
/// records of DSO files map from this page on.
pub const TEXT_OFFSET: u64 = 0x1000;

const EHDR_SIZE: u64 = 64;
const PHDR_SIZE: u64 = 56;
const SHDR_SIZE: u64 = 64;
const SYM_SIZE: u64 = 24;
const NOTE_OFFSET: u64 = EHDR_SIZE + 2 * PHDR_SIZE;
/// namesz, descsz, type, "GNU\0", 20 bytes of build id.
const NOTE_SIZE: u64 = 12 + 4 + 20;
const NT_GNU_BUILD_ID: u32 = 3;

// Section indices, in the order the headers are written.
const SHN_TEXT: u16 = 2;
const SHN_STRTAB: u32 = 4;
const SHN_SHSTRTAB: u16 = 5;
const SHNUM: u16 = 6;

// perf's names for them, offsets into .shstrtab.
const SHSTRTAB: &[u8] = b"\0.note.gnu.build-id\0.text\0.symtab\0.strtab\0.shstrtab\0";
const NAME_NOTE: u32 = 1;
const NAME_TEXT: u32 = 20;
const NAME_SYMTAB: u32 = 26;
const NAME_STRTAB: u32 = 34;
const NAME_SHSTRTAB: u32 = 42;

/// The symbol name of function `index` (its place in its DSO) of DSO `dso`.
pub fn function_name(dso: u32, index: u32) -> String {
    format!("synth{dso}_fn{index}")
}

/// Little-endian field writers over a growing buffer.
struct Out(Vec<u8>);

impl Out {
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn pad_to(&mut self, at: u64, byte: u8) {
        debug_assert!(self.0.len() as u64 <= at);
        self.0.resize(at as usize, byte);
    }
    fn align(&mut self, to: u64) {
        let at = (self.0.len() as u64).div_ceil(to) * to;
        self.pad_to(at, 0);
    }
    fn at(&self) -> u64 {
        self.0.len() as u64
    }
    #[allow(clippy::too_many_arguments)]
    fn shdr(
        &mut self,
        name: u32,
        ty: u32,
        flags: u64,
        addr: u64,
        range: (u64, u64),
        link: u32,
        info: u32,
        align: u64,
        entsize: u64,
    ) {
        self.u32(name);
        self.u32(ty);
        self.u64(flags);
        self.u64(addr);
        self.u64(range.0);
        self.u64(range.1);
        self.u32(link);
        self.u32(info);
        self.u64(align);
        self.u64(entsize);
    }
    fn phdr(&mut self, ty: u32, flags: u32, offset: u64, size: u64, align: u64) {
        self.u32(ty);
        self.u32(flags);
        self.u64(offset);
        self.u64(offset); // vaddr
        self.u64(offset); // paddr
        self.u64(size); // filesz
        self.u64(size); // memsz
        self.u64(align);
    }
}

/// The ELF file of `dso`, whose functions are `functions` (in address order, the
/// first at the mapping's start). The same DSO gives the same bytes.
pub fn dso_elf(dso: &Dso, dso_index: u32, functions: &[Function]) -> Vec<u8> {
    let text_size = functions.last().map_or(0, |f| f.start + f.size - dso.addr);
    let text_end = TEXT_OFFSET + text_size;
    // .strtab: a leading NUL, then each name.
    let mut strtab = vec![0u8];
    let mut name_at = Vec::with_capacity(functions.len());
    for j in 0..functions.len() {
        name_at.push(strtab.len() as u32);
        strtab.extend_from_slice(function_name(dso_index, j as u32).as_bytes());
        strtab.push(0);
    }

    let mut o = Out(Vec::with_capacity((text_end + 4096) as usize));
    // ELF header: 64-bit, little-endian, version 1, System V ABI.
    o.0.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
    o.pad_to(16, 0);
    o.u16(3); // ET_DYN
    o.u16(62); // EM_X86_64
    o.u32(1); // EV_CURRENT
    o.u64(0); // e_entry
    o.u64(EHDR_SIZE); // e_phoff
    let shoff_at = o.at();
    o.u64(0); // e_shoff, set below
    o.u32(0); // e_flags
    o.u16(EHDR_SIZE as u16);
    o.u16(PHDR_SIZE as u16);
    o.u16(2);
    o.u16(SHDR_SIZE as u16);
    o.u16(SHNUM);
    o.u16(SHN_SHSTRTAB);
    // PT_LOAD (R+X) of everything up to the end of .text; PT_NOTE (R).
    o.phdr(1, 5, 0, text_end, 0x1000);
    o.phdr(4, 4, NOTE_OFFSET, NOTE_SIZE, 4);
    o.u32(4);
    o.u32(20);
    o.u32(NT_GNU_BUILD_ID);
    o.0.extend_from_slice(b"GNU\0");
    o.0.extend_from_slice(&dso.build_id);
    o.pad_to(TEXT_OFFSET, 0);
    o.pad_to(text_end, 0xc3); // ret
    o.align(8);
    let symtab_at = o.at();
    o.0.extend_from_slice(&[0; SYM_SIZE as usize]); // the null symbol
    for (f, &name) in functions.iter().zip(&name_at) {
        o.u32(name);
        o.0.push(0x12); // STB_GLOBAL << 4 | STT_FUNC
        o.0.push(0); // STV_DEFAULT
        o.u16(SHN_TEXT);
        o.u64(TEXT_OFFSET + f.start - dso.addr);
        o.u64(f.size);
    }
    let symtab = (symtab_at, o.at() - symtab_at);
    let strtab_at = o.at();
    o.0.extend_from_slice(&strtab);
    let shstrtab_at = o.at();
    o.0.extend_from_slice(SHSTRTAB);
    o.align(8);
    let shoff = o.at();
    o.0[shoff_at as usize..shoff_at as usize + 8].copy_from_slice(&shoff.to_le_bytes());
    o.0.extend_from_slice(&[0; SHDR_SIZE as usize]); // SHN_UNDEF
    let note = (NOTE_OFFSET, NOTE_SIZE);
    o.shdr(NAME_NOTE, 7, 2, NOTE_OFFSET, note, 0, 0, 4, 0); // SHT_NOTE, SHF_ALLOC
    let text = (TEXT_OFFSET, text_size);
    o.shdr(NAME_TEXT, 1, 6, TEXT_OFFSET, text, 0, 0, 16, 0); // PROGBITS, ALLOC|EXEC
                                                             // SHT_SYMTAB: sh_link is .strtab, sh_info the first global symbol.
    o.shdr(NAME_SYMTAB, 2, 0, 0, symtab, SHN_STRTAB, 1, 8, SYM_SIZE);
    let strtab = (strtab_at, strtab.len() as u64);
    o.shdr(NAME_STRTAB, 3, 0, 0, strtab, 0, 0, 1, 0);
    let shstrtab = (shstrtab_at, SHSTRTAB.len() as u64);
    o.shdr(NAME_SHSTRTAB, 3, 0, 0, shstrtab, 0, 0, 1, 0);
    o.0
}

#[cfg(test)]
mod tests {
    use super::super::workload::{Workload, WorkloadSpec};
    use super::*;

    fn u16_at(b: &[u8], at: usize) -> u16 {
        u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
    }
    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }
    fn u64_at(b: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
    }
    fn cstr(b: &[u8], at: usize) -> &str {
        let end = b[at..].iter().position(|&c| c == 0).unwrap();
        std::str::from_utf8(&b[at..at + end]).unwrap()
    }

    /// Read the file back by the ELF64 spec's offsets: the section named `.symtab`
    /// lists every function at TEXT_OFFSET plus its offset in the mapping, with its
    /// size and name; the build-id note holds the DSO's build id.
    #[test]
    fn symbols_and_build_id_read_back() {
        let w = Workload::new(WorkloadSpec {
            seed: 5,
            dsos: 2,
            functions_per_dso: 3,
            ..Default::default()
        })
        .unwrap();
        let d = &w.dsos[1];
        let funcs = &w.functions[3..6];
        let b = dso_elf(d, 1, funcs);
        assert_eq!(&b[..6], &[0x7f, b'E', b'L', b'F', 2, 1]);
        assert_eq!((u16_at(&b, 16), u16_at(&b, 18)), (3, 62));
        let shoff = u64_at(&b, 40) as usize;
        let (shnum, shstrndx) = (u16_at(&b, 60) as usize, u16_at(&b, 62) as usize);
        assert_eq!(b.len(), shoff + shnum * 64);
        let sh = |i: usize| shoff + i * 64;
        let shstr = u64_at(&b, sh(shstrndx) + 24) as usize;
        let named = |name: &str| {
            (0..shnum)
                .find(|&i| cstr(&b, shstr + u32_at(&b, sh(i)) as usize) == name)
                .unwrap()
        };
        let text = named(".text");
        assert_eq!(u64_at(&b, sh(text) + 16), 0x1000);
        let end = funcs[2].start + funcs[2].size - d.addr;
        assert_eq!(u64_at(&b, sh(text) + 32), end);
        assert!(b[0x1000..0x1000 + end as usize].iter().all(|&c| c == 0xc3));
        // PT_LOAD covers the headers and .text at vaddr = offset.
        assert_eq!(u32_at(&b, 64), 1);
        assert_eq!((u64_at(&b, 64 + 8), u64_at(&b, 64 + 16)), (0, 0));
        assert_eq!(u64_at(&b, 64 + 32), 0x1000 + end);
        let symtab = named(".symtab");
        assert_eq!(u32_at(&b, sh(symtab) + 4), 2);
        let strtab = u32_at(&b, sh(symtab) + 40) as usize;
        let str_at = u64_at(&b, sh(strtab) + 24) as usize;
        let (sym_at, sym_size) = (
            u64_at(&b, sh(symtab) + 24) as usize,
            u64_at(&b, sh(symtab) + 32) as usize,
        );
        assert_eq!(sym_size, 4 * 24);
        let mut got = Vec::new();
        for s in (sym_at + 24..sym_at + sym_size).step_by(24) {
            assert_eq!((b[s + 4], u16_at(&b, s + 6) as usize), (0x12, text));
            let name = cstr(&b, str_at + u32_at(&b, s) as usize).to_string();
            got.push((name, u64_at(&b, s + 8), u64_at(&b, s + 16)));
        }
        let want: Vec<_> = funcs
            .iter()
            .enumerate()
            .map(|(j, f)| (format!("synth1_fn{j}"), 0x1000 + f.start - d.addr, f.size))
            .collect();
        assert_eq!(got, want);
        let note = named(".note.gnu.build-id");
        let n = u64_at(&b, sh(note) + 24) as usize;
        assert_eq!(
            (u32_at(&b, n), u32_at(&b, n + 4), u32_at(&b, n + 8)),
            (4, 20, 3)
        );
        assert_eq!(&b[n + 12..n + 16], b"GNU\0");
        assert_eq!(&b[n + 16..n + 36], &d.build_id);
    }

    #[test]
    fn dso_files_are_written_with_the_same_bytes_per_seed() {
        let dir = tempfile::tempdir().unwrap();
        let spec = |seed, sub: &str| WorkloadSpec {
            seed,
            dso_dir: Some(dir.path().join(sub)),
            ..Default::default()
        };
        let mut bytes = Vec::new();
        for (seed, sub) in [(4, "a"), (4, "b"), (5, "c")] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
            let w = Workload::new(spec(seed, sub)).unwrap();
            assert_eq!(w.dsos[2].pgoff, TEXT_OFFSET);
            let paths = w.write_dso_files().unwrap();
            assert_eq!(paths.len(), 3);
            assert_eq!(paths[2], dir.path().join(sub).join("libsynth2.so"));
            bytes.push(
                paths
                    .iter()
                    .map(|p| std::fs::read(p).unwrap())
                    .collect::<Vec<_>>(),
            );
        }
        assert_eq!(bytes[0], bytes[1]);
        assert_ne!(bytes[0], bytes[2]);
        // Without a directory nothing is written and the paths do not exist.
        let w = Workload::new(WorkloadSpec::default()).unwrap();
        assert!(w.write_dso_files().unwrap().is_empty());
        assert_eq!(
            (w.dsos[0].path.as_str(), w.dsos[0].pgoff),
            ("/synth/libsynth0.so", 0)
        );
    }
}
