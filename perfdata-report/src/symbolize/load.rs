//! Where a DSO's symbols and source lines are read from: the files perf 6.1's
//! `dso__load` tries, in its order (see [`super`]), the JIT's map file, and kallsyms.

use std::path::{Path, PathBuf};

use object::{Object, ObjectSection};

use super::{debuglink, SymbolOptions};
use crate::model::{buildid_dir, trim_build_id, Kallsyms};
use crate::process::{perf_map_pid, Dso};
use crate::srcline::SourceLines;
use crate::symtab::{KernelSymbols, SymbolTable};

/// perf's `kallsyms__get_function_start`: the address of the first line of `file` naming
/// `name` (any type), read no further than that line (`_text` is near the top).
pub(super) fn kallsyms_start(file: &Path, name: &str) -> Option<u64> {
    use std::io::BufRead;
    let f = std::io::BufReader::new(std::fs::File::open(file).ok()?);
    f.lines().map_while(|l| l.ok()).find_map(|line| {
        let mut parts = line.split_whitespace();
        let (addr, _, sym) = (parts.next()?, parts.next()?, parts.next()?);
        (sym == name).then(|| u64::from_str_radix(addr, 16).ok())?
    })
}

/// A JIT's symbols from its map file (`START SIZE NAME` lines, hex, perf's
/// `dso__load_perf_map`): the file named, or its copy under `--symfs` when there is one
/// (perf reads only the file named: the recording's machine is where it ran).
pub(super) fn load_perf_map(dso: &Dso, opts: &SymbolOptions) -> Option<SymbolTable> {
    let path = crate::files::locate(&dso.long_name, opts.symfs.as_deref());
    let mut text = Vec::new();
    let mut file = crate::files::open_regular(&path)?;
    std::io::Read::read_to_end(&mut file, &mut text).ok()?;
    SymbolTable::from_perf_map(&String::from_utf8_lossy(&text))
}

/// A binary's LOAD segments: (virtual address, size, file offset).
pub(super) type Segments = Vec<(u64, u64, u64)>;

/// The file perf 6.1 runs addr2line on for `dso` (srcline.c's `dso__name`): the file its
/// symbols came from, the first candidate with a .symtab (`symsrc_filename`); where none
/// had one, the DSO's path as recorded: not under --symfs and not checked against the
/// build id (perf runs addr2line on whatever file is there, as on a binary rebuilt since
/// the recording). With its LOAD segments (those of the runtime image among the
/// candidates, or the file's own), to turn DSO offsets into its addresses.
pub(super) fn addr2line_file(dso: &Dso, opts: &SymbolOptions) -> Option<(memmap2::Mmap, Segments)> {
    let files = read_candidates(dso, opts);
    let parsed = parse_all(&files);
    if let Some(at) = parsed.iter().position(has_symtab) {
        let loads = crate::srcline::load_segments(runtime_image(&parsed)?);
        drop(parsed);
        return Some((files.into_iter().nth(at)?, loads));
    }
    drop(parsed);
    let path = Path::new(&dso.long_name);
    if !path.is_absolute() || perf_map_pid(&dso.long_name).is_some() {
        return None;
    }
    let data = map_file(path)?;
    let loads = crate::srcline::load_segments(&object::File::parse(&*data).ok()?);
    Some((data, loads))
}

/// The DWARF perf 6.1 reads `dso`'s source lines from: that of the file it runs addr2line
/// on ([`addr2line_file`]), or, where the file has none, binutils' separate debug file of
/// it: by its own build id under /usr/lib/debug, then by its .gnu_debuglink.
pub(super) fn load_lines(dso: &Dso, opts: &SymbolOptions) -> Option<SourceLines> {
    let (data, loads) = addr2line_file(dso, opts)?;
    let file = object::File::parse(&*data).ok()?;
    if crate::srcline::has_dwarf(&file) {
        drop(file);
        return SourceLines::load(data, loads);
    }
    let by_id = file.build_id().ok().flatten().map(|id| {
        let h = hex(id);
        let cut = 2.min(h.len());
        PathBuf::from(format!(
            "/usr/lib/debug/.build-id/{}/{}.debug",
            &h[..cut],
            &h[cut..]
        ))
    });
    drop(file);
    let path = Path::new(&dso.long_name);
    by_id
        .into_iter()
        .chain(path.is_absolute().then(|| debuglink::find(path)).flatten())
        .filter_map(|p| map_file(&p))
        .find_map(|debug| SourceLines::load(debug, loads.clone()))
}

/// The kernel's symbols from `k.file`, moved onto the recording's addresses.
pub(super) fn load_kallsyms(k: &Kallsyms) -> Option<KernelSymbols> {
    let text = std::fs::read_to_string(&k.file).ok()?;
    let table = SymbolTable::from_kallsyms(&text)?;
    let Some((name, recorded)) = &k.ref_reloc else {
        return Some(split_kallsyms(table, 0));
    };
    // perf's kallsyms__get_function_start: the first line naming the symbol, any type.
    let at = text.lines().find_map(|line| {
        let mut parts = line.split_whitespace();
        let (addr, _, sym) = (parts.next()?, parts.next()?, parts.next()?);
        (sym == name).then(|| u64::from_str_radix(addr, 16).ok())?
    })?;
    Some(split_kallsyms(table, at.wrapping_sub(*recorded)))
}

/// A kallsyms table split into the kernel's and each module's symbols, the kernel's
/// moved `delta` down onto the recorded kernel's addresses: perf 6.1's
/// `maps__split_kallsyms` moves only symbols without a module by the relocation delta,
/// a module's are placed by its map alone.
pub(super) fn split_kallsyms(table: SymbolTable, delta: u64) -> KernelSymbols {
    let mut split = table.split_modules();
    split.kernel = std::mem::take(&mut split.kernel).moved_down(delta);
    split
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The files that may hold `dso`'s symbols, in perf's order, each with the letter perf's
/// `dso__symtab_origin` gives its kind (`DSO_BINARY_TYPE__*`): `l` DEBUGLINK, `B`
/// BUILD_ID_CACHE, `D` BUILD_ID_CACHE_DEBUGINFO, `f` FEDORA_DEBUGINFO (by path under
/// /usr/lib/debug), `b` BUILDID_DEBUGINFO, `d` SYSTEM_PATH_DSO (the file itself).
fn candidates(dso: &Dso, opts: &SymbolOptions) -> Vec<(PathBuf, char)> {
    let under = |p: &Path| match &opts.symfs {
        Some(root) => root.join(p.strip_prefix("/").unwrap_or(p)),
        None => p.to_path_buf(),
    };
    let mut out = Vec::new();
    let path = Path::new(&dso.long_name);
    // DEBUGLINK comes first in perf 6.1's list, before the build-id cache: a binary that
    // names its debug file gets that file's symbols even when the cache has the binary.
    if path.is_absolute() {
        out.extend(debuglink::find(&under(path)).map(|p| (p, 'l')));
    }
    if let Some(id) = dso.build_id.as_deref().filter(|b| b.len() > 1) {
        let h = hex(trim_build_id(id));
        // perf 6.1's symbol__config_symfs: under a symfs the cache is the symfs's own
        // `.debug`, never $HOME's.
        let cache = match (&opts.buildid_dir, &opts.symfs) {
            (None, Some(symfs)) => Some(symfs.join(".debug")),
            (dir, _) => buildid_dir(dir.as_deref()),
        };
        if let Some(cache) = cache {
            let dir = cache.join(".build-id").join(&h[..2]).join(&h[2..]);
            // BUILD_ID_CACHE (`elf`) before BUILD_ID_CACHE_DEBUGINFO (`debug`), as in
            // perf 6.1's list: with both in the cache, perf 6.1 takes the elf's symbols.
            // perf's build_id_cache__basename: the vDSO perf record saved is `vdso`.
            let base = if dso.long_name == "[vdso]" {
                "vdso"
            } else {
                "elf"
            };
            out.push((dir.join(base), 'B'));
            out.push((dir.join("debug"), 'D'));
        }
        let debug = format!("/usr/lib/debug{}.debug", path.display());
        out.push((under(Path::new(&debug)), 'f'));
        let by_id = format!("/usr/lib/debug/.build-id/{}/{}.debug", &h[..2], &h[2..]);
        out.push((under(Path::new(&by_id)), 'b'));
    } else if path.is_absolute() {
        let debug = format!("/usr/lib/debug{}.debug", path.display());
        out.push((under(Path::new(&debug)), 'f'));
    }
    if path.is_absolute() {
        out.push((under(path), 'd'));
    }
    out
}

/// `path` mapped into memory, if it is a regular file that can be. Parsing a binary
/// touches its headers and symbol tables, not its code: mapped, only those pages are
/// read and resident, and they go when the map is dropped (a 200 MB library read whole
/// was that much memory while its symbols were loaded).
fn map_file(path: &Path) -> Option<memmap2::Mmap> {
    let file = crate::files::open_regular(path)?;
    // SAFETY: the map is only read, while this process holds it. A binary is replaced
    // by a new file (package managers and linkers write anew and rename), which leaves
    // the mapped one as it was; one cut short in place while mapped would fault, as
    // the recording's own map would (perfdata_core::input).
    unsafe { memmap2::Mmap::map(&file) }.ok()
}

/// Where `dso`'s own file is (under `--symfs` when given), for a DSO named by a path.
pub(crate) fn on_disk(dso: &Dso, opts: &SymbolOptions) -> Option<PathBuf> {
    let path = Path::new(&dso.long_name);
    if !path.is_absolute() {
        return None;
    }
    Some(match &opts.symfs {
        Some(root) => root.join(path.strip_prefix("/").unwrap_or(path)),
        None => path.to_path_buf(),
    })
}

/// The candidate files of `dso` that exist and have its build id, mapped once each
/// (symbols and unwind tables are looked for in the same files).
pub(crate) fn read_candidates(dso: &Dso, opts: &SymbolOptions) -> Vec<memmap2::Mmap> {
    read_candidates_of_origin(dso, opts)
        .into_iter()
        .map(|(data, _)| data)
        .collect()
}

/// [`read_candidates`], each with its kind's letter (see [`candidates`]).
fn read_candidates_of_origin(dso: &Dso, opts: &SymbolOptions) -> Vec<(memmap2::Mmap, char)> {
    // Without a build id from the recording, perf takes the one of the file on disk, so
    // that its debug files are found by build id too.
    let from_disk;
    let dso = if dso.build_id.is_none() {
        from_disk = Dso {
            build_id: on_disk(dso, opts)
                .and_then(|p| map_file(&p))
                .and_then(|data| {
                    let file = object::File::parse(&*data).ok()?;
                    file.build_id().ok().flatten().map(<[u8]>::to_vec)
                }),
            ..dso.clone()
        };
        &from_disk
    } else {
        dso
    };
    candidates(dso, opts)
        .iter()
        .filter_map(|(p, origin)| Some((map_file(p)?, *origin)))
        .filter(|(data, _)| {
            object::File::parse(&**data).is_ok_and(|f| {
                match (dso.build_id.as_deref(), f.build_id()) {
                    (Some(want), Ok(Some(have))) => trim_build_id(want) == trim_build_id(have),
                    _ => true,
                }
            })
        })
        .collect()
}

/// perf's runtime image among parsed candidates: the first file whose .dynsym has
/// contents (a debug file's is NOBITS); its program headers map addresses to file
/// offsets.
fn runtime_image<'a, 'd>(parsed: &'a [object::File<'d>]) -> Option<&'a object::File<'d>> {
    parsed
        .iter()
        .find(|f| {
            f.section_by_name(".dynsym")
                .is_some_and(|s| s.file_range().is_some())
        })
        .or(parsed.first())
}

/// Whether `f` has a symbol table with symbols in it (perf's `symsrc__has_symtab`).
fn has_symtab(f: &object::File<'_>) -> bool {
    f.symbol_table()
        .is_some_and(|t| object::ObjectSymbolTable::symbols(&t).next().is_some())
}

fn parse_all(files: &[memmap2::Mmap]) -> Vec<object::File<'_>> {
    files
        .iter()
        .filter_map(|d| object::File::parse(&**d).ok())
        .collect()
}

/// `dso`'s symbols, with the letter of the kind of file they came from (perf's
/// `dso__symtab_origin` of the DSO, see [`candidates`]): the first candidate with a
/// .symtab, else the runtime image.
pub(super) fn load_elf(dso: &Dso, opts: &SymbolOptions) -> Option<(SymbolTable, char)> {
    let files = read_candidates_of_origin(dso, opts);
    let (parsed, origins): (Vec<object::File<'_>>, Vec<char>) = files
        .iter()
        .filter_map(|(d, o)| Some((object::File::parse(&**d).ok()?, *o)))
        .unzip();
    let runtime = runtime_image(&parsed)?;
    let origin_of = |f: &object::File<'_>| {
        parsed
            .iter()
            .position(|p| std::ptr::eq(p, f))
            .map_or('!', |i| origins[i])
    };
    let with_symtab = parsed.iter().find(|f| has_symtab(f));
    with_symtab
        .and_then(|f| Some((SymbolTable::from_elf(f, runtime)?, origin_of(f))))
        .or_else(|| Some((SymbolTable::from_elf(runtime, runtime)?, origin_of(runtime))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_follow_perfs_order_under_symfs() {
        let dso = Dso {
            name: "/usr/lib/libx.so".into(),
            long_name: "/usr/lib/libx.so".into(),
            short_name: "libx.so".into(),
            kernel: false,
            build_id: Some(vec![
                0xab, 0xcd, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
            ]),
            ksymbols: Vec::new(),
            module_start: None,
        };
        let opts = SymbolOptions {
            symfs: Some("/sysroot".into()),
            kallsyms: None,
            buildid_dir: Some("/cache".into()),
        };
        let got: Vec<String> = candidates(&dso, &opts)
            .iter()
            .map(|(p, o)| format!("{o} {}", p.display()))
            .collect();
        let id = "abcdef0102030405060708090a0b0c0d0e0f1011";
        assert_eq!(
            got,
            [
                format!("B /cache/.build-id/ab/{}/elf", &id[2..]),
                format!("D /cache/.build-id/ab/{}/debug", &id[2..]),
                "f /sysroot/usr/lib/debug/usr/lib/libx.so.debug".to_string(),
                format!("b /sysroot/usr/lib/debug/.build-id/ab/{}.debug", &id[2..]),
                "d /sysroot/usr/lib/libx.so".to_string(),
            ]
        );
    }
}
