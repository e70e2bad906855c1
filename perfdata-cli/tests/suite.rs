//! perfdata-cli's integration tests, one test binary: each file beside this one (and
//! each directory's `main.rs`) is a module here. One binary links once where 76 linked
//! each, and cargo runs its tests on every core together, where it ran 76 binaries one
//! after another, most of them one long test with the other cores idle (the CI's test
//! run, docs/testing.md#ci-time). Each is loaded by its path (as a directory
//! module, so that its own modules are found beside it); the modules they share are
//! declared once here.
//! `report_oracle_debuglink` stays its own binary: it sets HOME for the whole process. `every_test_file_is_run` fails on a file in tests/
//! that neither this list nor Cargo.toml's `[[test]]` names (autotests is off).
//!
//! One file's tests: `cargo test -p perfdata-cli --test suite script_oracle::`.

// The modules the test files share, loaded once (each file names them `use crate::M`).
mod common;
mod exports;
mod json_support;
mod parquet_support;
mod report_rows;
mod report_text;
mod synth_support;
mod unwind;
mod unwind_compare;
mod workload;

// The test files.
#[path = "anon_mutants/main.rs"]
mod anon_mutants;
#[path = "anonymize_oracle/main.rs"]
mod anonymize_oracle;
#[path = "buildid_oracle.rs"]
mod buildid_oracle;
#[path = "check.rs"]
mod check;
#[path = "check_oracle.rs"]
mod check_oracle;
#[path = "cli.rs"]
mod cli;
#[path = "compressed_bombs.rs"]
mod compressed_bombs;
#[path = "convert_cases.rs"]
mod convert_cases;
#[path = "convert_oracle/main.rs"]
mod convert_oracle;
#[path = "convert_outputs.rs"]
mod convert_outputs;
#[path = "demangle_oracle.rs"]
mod demangle_oracle;
#[path = "diff_oracle.rs"]
mod diff_oracle;
#[path = "docs.rs"]
mod docs;
#[path = "dump_filters.rs"]
mod dump_filters;
#[path = "error_offsets.rs"]
mod error_offsets;
#[path = "exit_status_oracle.rs"]
mod exit_status_oracle;
#[path = "export_clock_oracle.rs"]
mod export_clock_oracle;
#[path = "export_escaping.rs"]
mod export_escaping;
#[path = "export_folded.rs"]
mod export_folded;
#[path = "export_inline_oracle.rs"]
mod export_inline_oracle;
#[path = "exports_oracle.rs"]
mod exports_oracle;
#[path = "fields_oracle.rs"]
mod fields_oracle;
#[path = "flamegraph_cmd.rs"]
mod flamegraph_cmd;
#[path = "fleet_kernels.rs"]
mod fleet_kernels;
#[path = "hostile_binaries.rs"]
mod hostile_binaries;
#[path = "info_oracle.rs"]
mod info_oracle;
#[path = "inline_first_name_oracle.rs"]
mod inline_first_name_oracle;
#[path = "inline_oracle.rs"]
mod inline_oracle;
#[path = "input_names.rs"]
mod input_names;
#[path = "intel_pt_errors.rs"]
mod intel_pt_errors;
#[path = "intel_pt_oracle.rs"]
mod intel_pt_oracle;
#[path = "intel_pt_time.rs"]
mod intel_pt_time;
#[path = "interrupt.rs"]
mod interrupt;
#[path = "json_help.rs"]
mod json_help;
#[path = "json_outputs.rs"]
mod json_outputs;
#[path = "killed_compressed.rs"]
mod killed_compressed;
#[path = "large_payload.rs"]
mod large_payload;
#[path = "memory_flat.rs"]
mod memory_flat;
#[path = "merge_oracle.rs"]
mod merge_oracle;
#[path = "order_oracle.rs"]
mod order_oracle;
#[path = "output_files.rs"]
mod output_files;
#[path = "output_guard.rs"]
mod output_guard;
#[path = "output_nodes.rs"]
mod output_nodes;
#[path = "parquet_caveats.rs"]
mod parquet_caveats;
#[path = "parquet_datafusion.rs"]
mod parquet_datafusion;
#[path = "parquet_engines.rs"]
mod parquet_engines;
#[path = "parquet_folders.rs"]
mod parquet_folders;
#[path = "parquet_recordings.rs"]
mod parquet_recordings;
#[path = "perf_habits.rs"]
mod perf_habits;
#[path = "perf_oracle.rs"]
mod perf_oracle;
#[path = "pipe_mutants.rs"]
mod pipe_mutants;
#[path = "progress.rs"]
mod progress;
#[path = "queue_disk.rs"]
mod queue_disk;
#[path = "quiet.rs"]
mod quiet;
#[path = "report_dsos_oracle.rs"]
mod report_dsos_oracle;
#[path = "report_fields_oracle.rs"]
mod report_fields_oracle;
#[path = "report_graph_inlined_oracle.rs"]
mod report_graph_inlined_oracle;
#[path = "report_graph_oracle.rs"]
mod report_graph_oracle;
#[path = "report_hist_split_oracle.rs"]
mod report_hist_split_oracle;
#[path = "report_kallsyms_cache.rs"]
mod report_kallsyms_cache;
#[path = "report_kallsyms_modules.rs"]
mod report_kallsyms_modules;
#[path = "report_long_names_oracle.rs"]
mod report_long_names_oracle;
#[path = "report_max_stack_oracle.rs"]
mod report_max_stack_oracle;
#[path = "report_oracle.rs"]
mod report_oracle;
#[path = "report_oracle_children.rs"]
mod report_oracle_children;
#[path = "report_oracle_cpp.rs"]
mod report_oracle_cpp;
#[path = "report_oracle_filters.rs"]
mod report_oracle_filters;
#[path = "report_oracle_jit.rs"]
mod report_oracle_jit;
#[path = "report_oracle_ksymbol.rs"]
mod report_oracle_ksymbol;
#[path = "report_oracle_srcline.rs"]
mod report_oracle_srcline;
#[path = "report_plt_oracle.rs"]
mod report_plt_oracle;
#[path = "report_quiet_oracle.rs"]
mod report_quiet_oracle;
#[path = "report_rotation_oracle.rs"]
mod report_rotation_oracle;
#[path = "report_text_oracle.rs"]
mod report_text_oracle;
#[path = "report_ties_oracle.rs"]
mod report_ties_oracle;
#[path = "report_trace_oracle.rs"]
mod report_trace_oracle;
#[path = "report_verbose_oracle.rs"]
mod report_verbose_oracle;
#[path = "script_anon_oracle.rs"]
mod script_anon_oracle;
#[path = "script_max_stack_oracle.rs"]
mod script_max_stack_oracle;
#[path = "script_oracle.rs"]
mod script_oracle;
#[path = "script_stat_oracle.rs"]
mod script_stat_oracle;
#[path = "strip_drop_tid.rs"]
mod strip_drop_tid;
#[path = "strip_oracle.rs"]
mod strip_oracle;
#[path = "symfs_buildid_cache.rs"]
mod symfs_buildid_cache;
#[path = "synth_cli.rs"]
mod synth_cli;
#[path = "synth_oracle.rs"]
mod synth_oracle;
#[path = "synth_symbols.rs"]
mod synth_symbols;
#[path = "trace_oracle.rs"]
mod trace_oracle;
#[path = "truncated.rs"]
mod truncated;
#[path = "unwind_cuts.rs"]
mod unwind_cuts;
#[path = "unwind_fork_oracle.rs"]
mod unwind_fork_oracle;
#[path = "unwind_jit_oracle.rs"]
mod unwind_jit_oracle;
#[path = "unwind_kept.rs"]
mod unwind_kept;
#[path = "unwind_oracle.rs"]
mod unwind_oracle;
#[path = "unwind_short_copy_oracle.rs"]
mod unwind_short_copy_oracle;
#[path = "unwind_write_oracle.rs"]
mod unwind_write_oracle;

/// The test files of tests/ (files, and directories with a `main.rs`), each a module
/// of this binary or a `[[test]]` target of its own: a file added to tests/ and not
/// named here would never run, autotests being off.
#[test]
fn every_test_file_is_run() {
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let (missing, seen) = perfdata_tests::test_files_run_by_no_target(crate_dir);
    assert!(
        missing.is_empty(),
        "test files run by no target: {missing:?}"
    );
    assert!(seen > 70, "only {seen} test files found");
}
