//! Symbol tables: kallsyms, perf maps, PLT entries and demangled names.

use super::*;

#[test]
fn perf_map_lines_read_as_perf_reads_them() {
    let text = "\
7fa0d0006180 30c JS:*hotLoopJs /tmp/jit/hot.js:1:19
7fa0d00064c0 1a0 JS:~old name
7fa0d00064c0 1a0 JS:*hotLoopJs again
18c4000 0 Builtin:Empty
0x1000 10 prefixed
1000 10
2000 10 ab
";
    let t = SymbolTable::from_perf_map(text).unwrap();
    let name = |a| t.find(a).map(|s| s.name());
    // The name is the rest of the line, spaces and all, not demangled.
    assert_eq!(
        name(0x7fa0d0006180),
        Some("JS:*hotLoopJs /tmp/jit/hot.js:1:19")
    );
    assert_eq!(
        name(0x7fa0d000648b),
        Some("JS:*hotLoopJs /tmp/jit/hot.js:1:19")
    );
    assert_eq!(name(0x7fa0d000648c), None);
    // Of two entries at one start, the one perf's walk meets first: the third insert
    // rotated the old name to the root, above the new one (checked against perf 6.1 on
    // map files written over a node recording's: it named some addresses after the
    // first entry at a start and others after the second, as the tree has them).
    assert_eq!(name(0x7fa0d00064c0), Some("JS:~old name"));
    // Size 0 holds its start alone (no end is fixed in a map); `0x1000 10 x` reads as perf's hex2u64 reads it: start 0
    // (the digits before `x`), the `x` skipped as a separator, size 0x1000, name
    // `10 prefixed`; a line without a name, or a two-byte one, is skipped.
    assert_eq!(name(0x18c4000), Some("Builtin:Empty"));
    assert_eq!(name(0x18c4001), None);
    assert_eq!(name(0xfff), Some("10 prefixed"));
    assert_eq!(name(0x1000), None);
    assert_eq!(name(0x2000), None);
    assert_eq!(t.len(), 5);
}

/// A map file with bytes that are not UTF-8 (read lossily: `\xff` becomes a two-byte
/// `ÿ`-like character) or multi-byte characters where the numbers are looked for: the
/// lines around are read, the odd ones skipped, nothing panics (the hex digits were
/// sliced out of the line as a `str`, inside a character).
#[test]
fn perf_map_lines_with_multibyte_characters_are_read_or_skipped() {
    let text = String::from_utf8_lossy(
        b"1000 10 before\n\xff\xfe not utf8\n\xc3\xa9 10 accent\n2000 \xc3\xa910 after\n3000 10 after\n",
    );
    let t = SymbolTable::from_perf_map(&text).unwrap();
    let name = |a| t.find(a).map(|s| s.name());
    assert_eq!(name(0x100f), Some("before"));
    assert_eq!(name(0x3000), Some("after"));
    // `2000 é10 after`: the size is the digits after the space, none (perf's hex2u64),
    // and the name would start inside the `é`: skipped.
    assert_eq!(name(0x2000), None);
    // `é 10 accent`: start and size 0 (no digits), the name after the `é`'s byte.
    assert_eq!(name(0), Some(" 10 accent"));
    assert_eq!(t.len(), 3);
}

/// The kernel-shaped reading of a line gives what splitting it at whitespace gives,
/// or leaves the line to that general way: on odd lines, and on every line of this
/// machine's /proc/kallsyms.
#[test]
fn kallsyms_lines_read_in_the_kernels_shape_as_split() {
    let odd = [
        "ffffffff81000000 T _stext",
        "ffffffffc0a01000 t nf_hook\t[nf_tables]",
        "ffffffffc0a01000 t nf_hook\t[nf_tables] extra",
        "ffffffffc0a01000 t nf_hook\t",
        "ffffffffc0a01000 t nf_hook \t[m]",
        "ffffffffc0a01000 t nf_hook [m]",
        "FFFFFFFF81000000 W Upper",
        "0 T zero",
        "00000000000000000001 T seventeen_or_more_digits",
        "fffffffff81000000 T overflows",
        "ffffffff81000000  T two_spaces",
        " ffffffff81000000 T leading_space",
        "ffffffff81000000 T name\r",
        "ffffffff81000000 Tx long_type",
        "ffffffff81000000 é accent",
        "ffffffff81000000 T",
        "ffffffff81000000 T ",
        "+ff T plus",
        "xyz T not_hex",
        "",
    ];
    let live = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
    let mut shaped = 0;
    for line in odd.into_iter().chain(live.lines()) {
        if let Some(fast) = kernel_shaped(line) {
            assert_eq!(Some(fast), split_kallsyms_line(line), "{line:?}");
            shaped += 1;
        }
    }
    // The kernel's own lines take the quick way; the odd ones their own.
    assert!(shaped >= 3 + live.lines().count(), "{shaped}");
    assert_eq!(
        kernel_shaped("ffffffff81000000 T _stext"),
        Some((0xffffffff81000000, b'T', "_stext", None))
    );
    assert_eq!(
        kernel_shaped("ffffffffc0a01000 t nf_hook\t[nf_tables]"),
        Some((0xffffffffc0a01000, b't', "nf_hook", Some("[nf_tables]")))
    );
    assert_eq!(kernel_shaped("ffffffff81000000 T name\r"), None);
    assert_eq!(
        split_kallsyms_line("ffffffff81000000 T name\r"),
        Some((0xffffffff81000000, b'T', "name", None))
    );
    // A table read from text mixing both ways: the module's symbol keeps its
    // module after a tab (as perf's kallsyms__parse), the odd lines count as the
    // general way reads them.
    let t = SymbolTable::from_kallsyms(
        "ffffffff81000000 T a\n ffffffff81000100  t b\r\nffffffffc0000000 t m\t[mod]\n",
    )
    .unwrap();
    assert_eq!(t.find(0xffffffff81000010).unwrap().name(), "a");
    assert_eq!(t.find(0xffffffff81000110).unwrap().name(), "b");
    assert_eq!(t.find(0xffffffffc0000010).unwrap().name(), "m\t[mod]");
}

/// perf 6.1's `maps__split_kallsyms`: the module column cut off, each module's symbols
/// apart, at the addresses and with the ends fixed over the whole file (the kernel's
/// last symbol a page past its start, as the next is a module's; a module's last
/// reaching the next module's first).
#[test]
fn kallsyms_modules_are_split_off() {
    let text = "\
ffffffff81000000 T _text
ffffffff81000100 t k_last
ffffffffc0000100 t foo_a\t[foo]
ffffffffc0000400 T foo_b\t[foo]
ffffffffc0010000 t bar_a\t[bar_drv]
";
    let split = SymbolTable::from_kallsyms(text).unwrap().split_modules();
    let k = &split.kernel;
    assert_eq!(k.len(), 2);
    let last = k.find(0xffffffff81000200).unwrap();
    assert_eq!((last.name(), last.end), ("k_last", 0xffffffff81002000));
    assert!(k.find(0xffffffffc0000100).is_none());
    let mut names: Vec<_> = split.modules.keys().cloned().collect();
    names.sort();
    assert_eq!(names, ["[bar_drv]", "[foo]"]);
    let foo_b = split.modules["[foo]"].find(0xffffffffc0000500).unwrap();
    assert_eq!(
        (foo_b.name(), foo_b.start, foo_b.end),
        ("foo_b", 0xffffffffc0000400, 0xffffffffc0010000)
    );
    let bar = &split.modules["[bar_drv]"];
    assert_eq!(bar.find(0xffffffffc0010010).unwrap().name(), "bar_a");
}

#[test]
fn kallsyms_duplicates_and_ends() {
    let text = "\
ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81000000 t srso_alias
ffffffff81000080 T memcpy
ffffffff81000080 T __pi_memcpy
ffffffff81000100 W weak_fn
ffffffff81000100 T strong_fn
ffffffff81000200 r rodata_sym
ffffffff81000300 T last_fn
";
    let t = SymbolTable::from_kallsyms(text).unwrap();
    // Ends are fixed before aliases go: the last alias at an address has the size,
    // and a sized symbol beats any empty one (perf names this __pi_memcpy).
    assert_eq!(t.find(0xffffffff81000010).unwrap().name(), "srso_alias");
    assert_eq!(t.find(0xffffffff81000090).unwrap().name(), "__pi_memcpy");
    assert_eq!(t.find(0xffffffff81000150).unwrap().name(), "strong_fn");
    // rodata is not kept: strong_fn reaches last_fn.
    assert_eq!(t.find(0xffffffff81000250).unwrap().name(), "strong_fn");
    let last = t.find(0xffffffff81000300).unwrap();
    assert_eq!(last.end, 0xffffffff81001000 + 4096);
    assert!(t.find(0xffffffff80000000).is_none());
    assert!(SymbolTable::from_kallsyms("0000000000000000 T x\n").is_none());
}

#[test]
fn rust_names_lose_their_hash() {
    assert_eq!(
        demangle("_ZN4core3fmt5write17h0123456789abcdefE"),
        "core::fmt::write"
    );
    assert_eq!(demangle("main"), "main");
    // A local copy's `.N` suffix and LLVM's `.llvm.N` go, as libiberty drops them
    // (`c++filt -p -i`, which perf's demangling is).
    assert_eq!(
        demangle("_ZN11colorchoice4USER17h8db879209a7d0594E.0"),
        "colorchoice::USER"
    );
    assert_eq!(
        demangle("_ZN4core3ptr13drop_in_place17h0123456789abcdefE.2983"),
        "core::ptr::drop_in_place"
    );
    assert_eq!(
        demangle("_ZN4core3fmt5write17h0123456789abcdefE.llvm.1234567"),
        "core::fmt::write"
    );
    // v0 names lose every `.suffix` as well (`c++filt -p -i` on librustc_driver's
    // BOLT-split `.warm` and `.cold` copies, as perf prints them).
    let v0 = "_RNvCshdGNPcDhtub_18rustc_ast_lowering12lower_to_hir";
    for suffix in ["", ".warm", ".cold", ".llvm.4058416311363000190.warm"] {
        assert_eq!(
            demangle(&format!("{v0}{suffix}")),
            "rustc_ast_lowering::lower_to_hir"
        );
    }
    // C++ as perf 6.1 prints it (perf report of a g++ build: tests/report_oracle_cpp).
    assert_eq!(
        demangle("_ZN4busy5MixerImE4stepEmi"),
        "busy::Mixer<unsigned long>::step"
    );
    assert_eq!(demangle("_Znot_mangled"), "_Znot_mangled");
}

/// /usr/bin/dash (Debian's /bin/sh) calls libc through a lazy PLT: its entry `i`
/// follows the 16-byte header, named after `.rela.plt` entry `i`, as readelf lists them.
#[test]
fn plt_entries_named_after_their_relocations() {
    let data = std::fs::read("/usr/bin/dash").expect("/usr/bin/dash");
    let file = object::File::parse(&*data).expect("ELF");
    let table = SymbolTable::from_elf(&file, &file).expect("symbols");
    let out = std::process::Command::new("readelf")
        .args(["-SrW", "/usr/bin/dash"])
        .output()
        .expect("readelf runs");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let plt_offset = text
        .lines()
        .find(|l| l.contains(" .plt ") && !l.contains(".plt."))
        .and_then(|l| l.split_whitespace().nth(4))
        .and_then(|o| u64::from_str_radix(o, 16).ok())
        .expect(".plt offset");
    let slots: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("JUMP_SLOT"))
        .filter_map(|l| l.split_whitespace().nth(4))
        .map(|n| n.split('@').next().unwrap_or(n))
        .collect();
    assert!(slots.len() > 10);
    for (i, name) in slots.iter().enumerate() {
        let at = plt_offset + 16 * (i as u64 + 1);
        assert_eq!(table.find(at + 5).unwrap().name(), format!("{name}@plt"));
    }
}

/// A lookup's span: the addresses that find the same answer, the function's own or
/// the gap after it up to the next start, and nothing past either.
#[test]
fn a_lookup_spans_the_addresses_with_its_answer() {
    let text = "\
1000 100 fun_f
1200 80 fun_g
1280 10 fun_h
";
    let t = SymbolTable::from_perf_map(text).unwrap();
    let span = |a| {
        let (found, span) = t.find_span(a);
        (found.map(|s| s.name()), span)
    };
    assert_eq!(span(0x10), (None, 0..0x1000));
    assert_eq!(span(0x1000), (Some("fun_f"), 0x1000..0x1100));
    assert_eq!(span(0x10ff), (Some("fun_f"), 0x1000..0x1100));
    assert_eq!(span(0x1100), (None, 0x1100..0x1200));
    assert_eq!(span(0x127f), (Some("fun_g"), 0x1200..0x1280));
    assert_eq!(span(0x1290), (None, 0x1290..u64::MAX));
    // Every address of every span finds what the span says.
    for a in 0..0x1400u64 {
        let (found, s) = span(a);
        assert!(s.contains(&a), "{a:x}");
        for b in [s.start, s.end - 1] {
            assert_eq!(t.find(b).map(|s| s.name()), found, "{a:x} {b:x}");
        }
    }
}
