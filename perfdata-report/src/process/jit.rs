//! JIT code a jitdump names ([`crate::jitdump`]), mapped as `perf inject --jit` maps it.

use super::{user_short_name, Machine, Map};
use crate::jitdump::{JitCode, TEXT_OFFSET};

impl Machine {
    /// A function a jitdump loaded or moved: a map of `code.dso` at its address, as the
    /// MMAP2 perf inject writes for it (pgoff at the generated ELF's text), the DSO's one
    /// symbol the function, demangled as perf demangles the ELF's symbols. perf would
    /// read the symbol from that ELF file; here none is written or needed.
    pub fn process_jit_code(&mut self, code: &JitCode) {
        if code.len == 0 {
            return;
        }
        let short = user_short_name(&code.dso);
        let dso = self.dso(&code.dso, &short, false, None);
        let symbols = &mut self.dsos[dso].ksymbols;
        if !symbols.iter().any(|s| s.0 == TEXT_OFFSET) {
            let name = crate::symtab::demangle(&code.name);
            symbols.push((TEXT_OFFSET, code.code_size, name));
        }
        let t = self.findnew_thread(code.pid, code.tid);
        let group = self.threads[t].maps;
        self.map_groups[group].insert(Map {
            start: code.start,
            end: code.start.saturating_add(code.len),
            pgoff: TEXT_OFFSET,
            dso,
            identity: false,
        });
    }
}
