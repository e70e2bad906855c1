//! The Rust version the workspace declares (`rust-version`, which clippy's
//! `incompatible_msrv` lint holds our own code to) is at least what every locked
//! dependency declares, dev-dependencies included: a fresh machine with that Rust builds
//! and tests the workspace.

use std::process::Command;

fn version(v: &str) -> Vec<u64> {
    v.split('.').map(|p| p.parse().unwrap_or(0)).collect()
}

#[test]
fn declared_rust_version_covers_every_locked_dependency() {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
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
