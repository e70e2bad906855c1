//! `perfdata report --max-stack N` on `--call-graph dwarf` recordings made here, against
//! perf 6.1's `perf report --stdio` live, compared as report_graph_oracle compares (its
//! [`differs`]): the unwound user frames and the recorded kernel frames are cut apart,
//! and the inlined functions perf lists at the unwound frames it keeps are listed.

use perfdata_tests::perf_available;

use crate::report_graph_oracle::{compile, differs, PAGE_FAULTS_DWARF};
use crate::workload;

/// `--max-stack` on `--call-graph dwarf` chains: perf's unwinding has a bound of its own
/// and stops that many frames from the sample in either order (caller order reverses
/// the frames it kept), the inlined functions listed at them not counted; the recorded
/// kernel frames are cut apart. perfdata kept the N outermost frames in caller order
/// (the Children view and `-g caller`: every line of the graph differed).
#[perfdata_oracle::needs(perf)]
#[test]
fn dwarf_chains_under_max_stack_are_cut_from_the_sample_as_perf_cuts_them() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = compile(
        dir.path(),
        "same_names",
        &["-O2", "-g", "-fno-optimize-sibling-calls"],
    );
    let exe = exe.to_str().expect("utf-8 path");
    let args = PAGE_FAULTS_DWARF;
    let input = workload::record(dir.path(), "stack.data", &args, &[exe, "8"]);
    let views: [&[&str]; 4] = [
        &["--dsos", "same_names", "--max-stack", "3"],
        &["--dsos", "same_names", "--max-stack", "1"],
        &[
            "--dsos",
            "same_names",
            "--no-children",
            "-g",
            "caller",
            "--max-stack",
            "2",
        ],
        &["--no-children", "--max-stack", "2"],
    ];
    let problems: Vec<String> = views
        .iter()
        .filter_map(|view| differs(&input, view, view))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A sample's recorded kernel frames cut by `--max-stack` (page faults the kernel takes
/// inside read's system call, tests/callgraph/kernel_faults.c) leave the unwound user
/// frames that follow them listed with their inlined functions (`fill (inlined)` above
/// `reader`), as perf lists them. perfdata counted the unwound frames from the uncut
/// chain's kernel part, found none among the frames kept in callee order, and printed
/// `reader` alone (on a `dd` recording: `read` where perf prints
/// `__GI___libc_read (inlined)`, 16 lines).
#[perfdata_oracle::needs(perf)]
#[test]
fn unwound_frames_after_cut_kernel_frames_keep_their_inlined_functions() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let input = kernel_faults(dir.path());
    // The case this test is for is in the recording: `fill (inlined)` under the kernel.
    let full = crate::report_text::perfdata_report(&input, &["--no-children"]);
    assert!(full.contains("fill (inlined)"), "{full}");
    let views: [&[&str]; 4] = [
        &["--no-children", "--max-stack", "2"],
        &["--no-children", "--max-stack", "3", "-G"],
        &["--max-stack", "2"],
        &["--no-children", "--max-stack", "1"],
    ];
    let problems: Vec<String> = views
        .iter()
        .filter_map(|view| differs(&input, view, view))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// tests/callgraph/kernel_faults.c compiled into `dir` and its page faults recorded
/// one by one with dwarf stacks (16 rounds): the recording's path.
pub(crate) fn kernel_faults(dir: &std::path::Path) -> std::path::PathBuf {
    let flags = ["-O2", "-g", "-fno-optimize-sibling-calls"];
    let exe = compile(dir, "kernel_faults", &flags);
    let exe = exe.to_str().expect("utf-8 path");
    workload::record(dir, "kernel.data", &PAGE_FAULTS_DWARF, &[exe, "16"])
}
