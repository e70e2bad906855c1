//! `#[perfdata_oracle::needs(perf)]`, `#[needs(corpus)]`, `#[needs(perf, corpus)]`,
//! `#[needs(perf, go)]`: written before `#[test]`, it marks the test `#[ignore]`, with
//! the reason, when `perf` (or `go`, for `go tool pprof`) cannot run or `PERFDATA_CORPUS`
//! is unset where the test is compiled, so that cargo
//! reports it as ignored instead of letting it pass while checking nothing.
//!
//! It does for perfdata-cli's tests what `tests/oracle_cfg.rs` does for the tests crate,
//! without a build script on the package that ships the `perfdata` binary (a build
//! script's cfg would rebuild the binary whenever PATH changes). The expansion names
//! `PATH` and `PERFDATA_CORPUS` with `option_env!`, so rustc records them as inputs and
//! cargo recompiles the test when either changes (installing perf, setting the corpus).

use std::sync::OnceLock;

use proc_macro::TokenStream;

/// Mark the test that follows ignored when what it needs is missing (see the crate's
/// documentation): `perf`, `go`, `corpus`, or several (the first missing one's reason).
#[proc_macro_attribute]
pub fn needs(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut reason = None;
    for want in attr.to_string().split(',').map(str::trim) {
        let missing = match want {
            "perf" => (!perf_runs()).then_some("perf is not installed"),
            "go" => (!runs("go", "version")).then_some("go is not installed"),
            "corpus" => std::env::var_os("PERFDATA_CORPUS")
                .is_none()
                .then_some("PERFDATA_CORPUS is not set"),
            other => {
                let msg = format!("needs: {other:?} is not perf, go or corpus");
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
    if let Some(why) = reason {
        out.extend(
            format!("#[ignore = {why:?}]")
                .parse::<TokenStream>()
                .unwrap(),
        );
    }
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
