//! BPF programs' names and what the BPF_PROG_INFO feature says of them. The kernel names
//! a program's symbol `bpf_prog_<tag>_<name>`: the tag is a hash of its instructions,
//! the name its author's choice (`zqxbpfsecret`), renamed as a word. Of a program's
//! `bpf_prog_info` the numbers are kept (ids, lengths, load time, counts, the addresses
//! and lengths of its functions, BTF ids, line numbers' offsets, tags); the name is
//! renamed alike, so that perf matches the two; the instructions (jited and
//! translated), in which the program's constants stand, and every byte no array of
//! numbers covers are zeroed.

use binrw::Endian;
use perfdata_core::feature::BpfProgram;

use super::super::pseudonym::Pseudonyms;

/// The kernel's own out-of-line code symbols: BPF trampolines and dispatchers, named
/// from numbers and the kernel's names.
const KERNEL_SYMBOLS: &[&str] = &["bpf_trampoline_", "bpf_dispatcher_"];

/// A KSYMBOL name's replacement (`None`: kept). A BPF program keeps `bpf_prog_<tag>`
/// and gets its name's pseudonym; the kernel's trampolines and dispatchers keep theirs;
/// any other name is renamed whole.
pub(super) fn ksymbol(names: &Pseudonyms, name: &[u8]) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    let plain = |rest: &[u8]| rest.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_');
    if let Some(rest) = name.strip_prefix(b"bpf_prog_") {
        let (tag, prog) = rest.split_at(rest.len().min(16));
        if tag.len() == 16 && tag.iter().all(u8::is_ascii_hexdigit) {
            let tag = String::from_utf8_lossy(tag);
            return match prog.strip_prefix(b"_") {
                None if prog.is_empty() => None,
                Some(prog) if !prog.is_empty() => {
                    Some(format!("bpf_prog_{tag}_{}", names.word(prog)))
                }
                _ => Some(names.word(name)),
            };
        }
    }
    for k in KERNEL_SYMBOLS {
        if let Some(rest) = name.strip_prefix(k.as_bytes()) {
            if !rest.is_empty() && plain(rest) {
                return None;
            }
        }
    }
    Some(names.word(name))
}

/// Field offsets in `struct bpf_prog_info` (uapi/linux/bpf.h), and the arrays perf
/// copies after it, each `(bit in arrays, offset field, count field, element size or
/// the field holding it)`.
mod info {
    pub const NAME: usize = 64;
    pub const NAME_LEN: usize = 16;
    /// Bytes of the struct as of Linux 6.x (through attach_btf_id); later fields are
    /// not known here.
    pub const KNOWN: usize = 228;
    pub enum Size {
        Fixed(usize),
        Field(usize),
    }
    pub const ARRAYS: &[(u32, usize, usize, Size)] = &[
        (0, 24, 16, Size::Fixed(1)),     // jited_prog_insns, jited_prog_len bytes
        (1, 32, 20, Size::Fixed(1)),     // xlated_prog_insns, xlated_prog_len bytes
        (2, 56, 52, Size::Fixed(4)),     // map_ids
        (3, 112, 104, Size::Fixed(8)),   // jited_ksyms
        (4, 120, 108, Size::Fixed(4)),   // jited_func_lens
        (5, 136, 144, Size::Field(132)), // func_info
        (6, 152, 148, Size::Field(172)), // line_info
        (7, 160, 168, Size::Field(176)), // jited_line_info
        (8, 184, 180, Size::Fixed(8)),   // prog_tags
    ];
    /// The arrays of numbers, kept (the instructions, bits 0 and 1, are not).
    pub const NUMBERS: u32 = !0b11;
}

/// A program's info rewritten (see the module docs); the bytes zeroed. `None` when it
/// is not laid out as perf writes it: a name without its NUL or not text, an array that
/// is not within the data, or the place of one perf did not ask for not 0 (bytes
/// deleted or shifted put other bytes, the name among them, in these fields).
pub(super) fn program(p: &mut BpfProgram, endian: Endian, names: &Pseudonyms) -> Option<u64> {
    // A field the info is too short for reads as 0, as the kernel's own info does.
    let view = p.view(endian);
    let field = |at: usize, n: usize| -> u64 {
        match n {
            8 => view.u64(at),
            _ => u64::from(view.u32(at)),
        }
    };
    let name = p
        .info
        .get(info::NAME..info::NAME + info::NAME_LEN)
        .unwrap_or_default();
    if !super::text::c_text(name).is_some_and(super::text::printable) {
        return None;
    }
    let mut keep = vec![false; p.data.len()];
    for (bit, off_field, nr_field, size) in info::ARRAYS {
        let start = usize::try_from(field(*off_field, 8)).ok()?;
        if p.arrays & (1 << bit) == 0 {
            if start != 0 {
                return None;
            }
            continue;
        }
        let size = match size {
            info::Size::Fixed(n) => *n as u64,
            info::Size::Field(f) => field(*f, 4),
        };
        let len = usize::try_from(field(*nr_field, 4).checked_mul(size)?).ok()?;
        let range = keep.get_mut(start..start.checked_add(len)?)?;
        if info::NUMBERS & (1 << bit) != 0 {
            range.fill(true);
        }
    }
    let mut zeroed = 0u64;
    for (b, k) in p.data.iter_mut().zip(&keep) {
        if !k && *b != 0 {
            *b = 0;
            zeroed += 1;
        }
    }
    if let Some(tail) = p.info.get_mut(info::KNOWN..) {
        zeroed += tail.iter().filter(|&&b| b != 0).count() as u64;
        tail.fill(0);
    }
    if let Some(name) = p.info.get_mut(info::NAME..info::NAME + info::NAME_LEN) {
        super::text::rename_fixed(name, |n| (!n.is_empty()).then(|| names.word(n)));
    }
    Some(zeroed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_names_are_renamed_and_kernel_symbols_kept() {
        let names = Pseudonyms::new("s1", Vec::new(), Vec::new()).unwrap();
        let word = names.word(b"zqxbpfsecret");
        assert_eq!(
            ksymbol(&names, b"bpf_prog_59f4a931744dcdc6_zqxbpfsecret"),
            Some(format!("bpf_prog_59f4a931744dcdc6_{word}"))
        );
        assert_eq!(ksymbol(&names, b"bpf_prog_59f4a931744dcdc6"), None);
        assert_eq!(ksymbol(&names, b"bpf_trampoline_6442"), None);
        assert_eq!(ksymbol(&names, b"bpf_dispatcher_xdp"), None);
        assert_eq!(ksymbol(&names, b"zqxjit"), Some(names.word(b"zqxjit")));
        assert_eq!(
            ksymbol(&names, b"bpf_prog_zzzz"),
            Some(names.word(b"bpf_prog_zzzz"))
        );
    }
}
