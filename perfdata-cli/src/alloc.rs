//! The allocator's habits for `report` and `export`, whose memory is tables that grow
//! with the distinct stacks and symbols and are let go of in turn (the replay's indexes,
//! then each DSO's symbols).

/// Serve every allocation of 256 KiB or more by its own mapping, returned to the system
/// when freed. glibc raises this threshold as large blocks are freed (up to 32 MiB), and
/// blocks below it come from heaps that keep freed memory: the indexes dropped after the
/// replay then stayed resident while the symbols were loaded (384 MiB against 260 MiB
/// with the threshold fixed, exporting a 388 MB system-wide recording).
pub fn return_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt sets a tunable of glibc's allocator; it takes the allocator's
    // locks and is called before these commands start their threads.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 << 10);
    }
}
