//! `#[perfdata_oracle::needs(perf)]`, `#[needs(corpus)]`, `#[needs(perf, corpus)]`,
//! `#[needs(perf, go)]`, `#[needs(python_duckdb)]`, `#[needs(python_pyarrow)]`,
//! `#[needs(python_datafusion)]`, `#[needs(parquet)]`: written
//! before `#[test]`, it marks the test `#[ignore]`, with the reason, when `perf` (or
//! `go`, for `go tool pprof`) cannot run, `PERFDATA_CORPUS` is unset or `python3` cannot
//! import the module where the test is
//! compiled, or (`parquet`) the package is built without its cargo feature `parquet`, so
//! that cargo reports it as ignored instead of letting it pass while
//! checking nothing. (A Python module installed after the test was compiled is seen once
//! PATH or the test's source changes.)
//!
//! It does for perfdata-cli's tests what `tests/oracle_cfg.rs` does for the tests crate,
//! without a build script on the package that ships the `perfdata` binary (a build
//! script's cfg would rebuild the binary whenever PATH changes). The expansion names
//! `PATH` and `PERFDATA_CORPUS` with `option_env!`, so rustc records them as inputs and
//! cargo recompiles the test when either changes (installing perf, setting the corpus).

use std::sync::OnceLock;

use proc_macro::TokenStream;

/// Mark the test that follows ignored when what it needs is missing (see the crate's
/// documentation): `perf`, `go`, `corpus`, `python_duckdb`, `python_pyarrow`,
/// `python_datafusion`, `node`, `gxx` (g++), `addr2line`, `cxxfilt` (`c++filt`) and `nm`
/// (binutils'), `parquet`, or several (the first missing one's reason).
#[proc_macro_attribute]
pub fn needs(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut reason = None;
    // The feature is the test's package's, known only where the test is compiled.
    let mut feature = None;
    for want in attr.to_string().split(',').map(str::trim) {
        let missing = match want {
            "parquet" => {
                feature = Some("parquet");
                None
            }
            "perf" => (!perf_runs()).then_some("perf is not installed"),
            "go" => (!runs("go", "version")).then_some("go is not installed"),
            "node" => (!runs("node", "--version")).then_some("node is not installed"),
            "gxx" => (!runs("g++", "--version")).then_some("g++ is not installed"),
            "cxxfilt" => {
                (!runs("c++filt", "--version")).then_some("binutils' c++filt is not installed")
            }
            "nm" => (!runs("nm", "--version")).then_some("binutils' nm is not installed"),
            "addr2line" => {
                (!runs("addr2line", "--version")).then_some("binutils' addr2line is not installed")
            }
            "corpus" => std::env::var_os("PERFDATA_CORPUS")
                .is_none()
                .then_some("PERFDATA_CORPUS is not set"),
            "python_duckdb" => (!python_imports("duckdb"))
                .then_some("python3 cannot import duckdb (pip install duckdb)"),
            "python_pyarrow" => (!python_imports("pyarrow"))
                .then_some("python3 cannot import pyarrow (pip install pyarrow)"),
            "python_datafusion" => (!python_imports("datafusion"))
                .then_some("python3 cannot import datafusion (pip install datafusion)"),
            other => {
                let msg = format!(
                    "needs: {other:?} is not perf, go, node, gxx, addr2line, cxxfilt, nm, corpus, \
                     python_duckdb, python_pyarrow, python_datafusion or parquet"
                );
                return format!("compile_error!({msg:?});").parse().unwrap();
            }
        };
        reason = reason.or(missing);
    }
    let mut out: TokenStream = concat!(
        "const _: () = {",
        " let _ = option_env!(\"PATH\");",
        " let _ = option_env!(\"PERFDATA_CORPUS\");",
        " };"
    )
    .parse()
    .unwrap();
    let ignore = match (reason, feature) {
        (Some(why), _) => format!("#[ignore = {why:?}]"),
        (None, Some(f)) => format!(
            "#[cfg_attr(not(feature = {f:?}), ignore = {:?})]",
            format!("built without the cargo feature `{f}` (cargo test --all-features)")
        ),
        (None, None) => String::new(),
    };
    out.extend(ignore.parse::<TokenStream>().unwrap());
    // The item keeps its own spans: a failing assertion names its own line.
    out.extend(item);
    out
}

/// Whether `perf --version` runs, asked once per compilation.
fn perf_runs() -> bool {
    static RUNS: OnceLock<bool> = OnceLock::new();
    *RUNS.get_or_init(|| runs("perf", "--version"))
}

/// Whether `program arg` runs and succeeds.
fn runs(program: &str, arg: &str) -> bool {
    std::process::Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether `python3 -c "import MODULE"` succeeds.
fn python_imports(module: &str) -> bool {
    std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}
