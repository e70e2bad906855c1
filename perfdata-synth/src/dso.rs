//! A DSO of the workload and its functions: what the workload lays out, the records
//! map and the ELF builder writes.

/// A function: an address range of a DSO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Function {
    /// Index of its DSO.
    pub dso: u32,
    /// Its first address, relative to the DSO's start.
    pub start: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Its caller in the call tree (global function index); `None` for the root.
    pub parent: Option<u32>,
    /// Its relative share of the samples.
    pub weight: u64,
}

/// A DSO: its path, load address, size, the file offset mapped there and build id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dso {
    /// The file's path (MMAP2 filename).
    pub path: String,
    /// Where it is mapped.
    pub addr: u64,
    /// Bytes mapped.
    pub len: u64,
    /// 0 for a path that does not exist; where `.text` starts in a written ELF file.
    pub pgoff: u64,
    /// Its build id.
    pub build_id: [u8; 20],
}
