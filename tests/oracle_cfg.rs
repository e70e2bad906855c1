// Build script of the tests crate, whose tests use the perf oracle or the corpus (the
// CLI's tests use `#[perfdata_oracle::needs(perf)]` instead: no build script on the
// package that ships the binary). It sets
// `cfg(perf_missing)` when `perf` cannot run and `cfg(no_corpus)` when PERFDATA_CORPUS is
// unset, so that tests needing them are reported by cargo as ignored, with the reason,
// instead of passing while checking nothing.

fn main() {
    println!("cargo:rerun-if-env-changed=PATH");
    println!("cargo:rerun-if-env-changed=PERFDATA_CORPUS");
    println!("cargo:rustc-check-cfg=cfg(perf_missing)");
    println!("cargo:rustc-check-cfg=cfg(no_corpus)");
    let perf = std::process::Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !perf {
        println!("cargo:rustc-cfg=perf_missing");
    }
    if std::env::var_os("PERFDATA_CORPUS").is_none() {
        println!("cargo:rustc-cfg=no_corpus");
    }
}
