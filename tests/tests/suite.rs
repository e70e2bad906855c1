//! The tests crate's integration tests, one test binary: each file beside this one is a
//! module here, loaded by its path (its own `mod layout;` finds the module beside it as
//! when it was a binary). One binary links once where 16 linked each, and its tests run
//! on every core together (docs/testing.md#ci-time). `every_test_file_is_run` fails on a
//! file in tests/ this list does not name (autotests is off).

#[path = "bad_input.rs"]
mod bad_input;
#[path = "compress_rounds.rs"]
mod compress_rounds;
#[path = "corpus.rs"]
mod corpus;
#[path = "doc_links.rs"]
mod doc_links;
#[path = "examples.rs"]
mod examples;
#[path = "fuzz_regressions.rs"]
mod fuzz_regressions;
#[path = "locate_fields.rs"]
mod locate_fields;
#[path = "mapped_walk.rs"]
mod mapped_walk;
#[path = "pipe_refusals.rs"]
mod pipe_refusals;
#[path = "rewrite.rs"]
mod rewrite;
#[path = "sample_view.rs"]
mod sample_view;
#[path = "toolchain.rs"]
mod toolchain;
#[path = "tree.rs"]
mod tree;
#[path = "tree_edits.rs"]
mod tree_edits;
#[path = "tree_write.rs"]
mod tree_write;
#[path = "walks.rs"]
mod walks;

/// Every test file of tests/ is a module of this binary: a file added and not named here
/// would never run, autotests being off.
#[test]
fn every_test_file_is_run() {
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let (missing, seen) = perfdata_tests::test_files_run_by_no_target(crate_dir);
    assert!(
        missing.is_empty(),
        "test files run by no target: {missing:?}"
    );
    assert!(seen > 10, "only {seen} test files found");
}
