//! The Rust version the workspace declares (`rust-version`, which clippy's
//! `incompatible_msrv` lint holds our own code to) is at least what every locked
//! dependency declares, dev-dependencies included: a fresh machine with that Rust builds
//! and tests the workspace.

use std::process::Command;

fn version(v: &str) -> Vec<u64> {
    v.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

/// The host's target triple, from `rustc -vV`.
fn host() -> String {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_string()
}

#[test]
fn declared_rust_version_covers_every_locked_dependency() {
    // The dependencies built on this platform: offline, cargo has the manifests of
    // those only (not of Windows-only crates a fresh machine never downloaded).
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &host()])
        .current_dir(perfdata_tests::workspace_root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let members: Vec<&serde_json::Value> = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    let packages = meta["packages"].as_array().unwrap();
    let declared: Vec<Vec<u64>> = packages
        .iter()
        .filter(|p| members.contains(&&p["id"]))
        .map(|p| {
            version(
                p["rust_version"]
                    .as_str()
                    .expect("every member declares rust-version"),
            )
        })
        .collect();
    assert!(!declared.is_empty());
    let ours = declared.iter().min().unwrap().clone();
    let in_graph: Vec<&serde_json::Value> = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &n["id"])
        .collect();
    let too_new: Vec<String> = packages
        .iter()
        .filter(|p| in_graph.contains(&&p["id"]))
        .filter_map(|p| {
            let v = p["rust_version"].as_str()?;
            (version(v) > ours).then(|| format!("{} {} needs {v}", p["name"], p["version"]))
        })
        .collect();
    assert!(
        too_new.is_empty(),
        "rust-version {ours:?} is older than: {too_new:?}"
    );
}
