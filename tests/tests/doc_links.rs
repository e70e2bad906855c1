//! Every relative link and every repository path that README.md and docs/*.md name
//! exists, and every `#anchor` a link names is a heading of its target, as GitHub makes
//! anchors. Paths are Markdown links, code spans that start with one of the repository's
//! top-level directories (`perfdata-cli/tests/x.rs`, `bench/x.sh`, `fixtures/...`;
//! `*` globs must match something) and such words in fenced shell blocks.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use perfdata_tests::workspace_root;

/// The Markdown files checked: the README, everything in docs/, and the README of each
/// top-level directory (fixtures/, fuzz/: they name paths and link too).
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut docs = vec![root.join("README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    more.extend(
        top_dirs(root)
            .iter()
            .map(|d| root.join(d).join("README.md"))
            .filter(|p| p.is_file()),
    );
    more.sort();
    docs.extend(more);
    docs
}

/// The repository's top-level directories a path in the text may start with (build
/// output and hidden directories other than `.ci` are no repository paths).
fn top_dirs(root: &Path) -> BTreeSet<String> {
    std::fs::read_dir(root)
        .expect("workspace root")
        .map(|e| e.expect("root entry"))
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "target" && (!n.starts_with('.') || n == ".ci"))
        .collect()
}

/// GitHub's anchor of a heading: lowercase, everything but letters, digits, `-`, `_`
/// and spaces dropped, spaces made `-`; a repeated anchor gets `-1`, `-2`, ...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let Some(title) = line.strip_prefix('#') else {
            continue;
        };
        let title = title.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut anchor = slug.clone();
        let mut n = 0;
        while !seen.insert(anchor.clone()) {
            n += 1;
            anchor = format!("{slug}-{n}");
        }
    }
    seen
}

/// The lines outside fenced code blocks, with their line numbers.
fn prose_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut fenced = false;
    text.lines().enumerate().filter_map(move |(n, line)| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return None;
        }
        (!fenced).then_some((n + 1, line))
    })
}

/// The lines inside fenced code blocks.
fn fenced_lines(text: &str) -> Vec<&str> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if fenced {
            out.push(line);
        }
    }
    out
}

/// The targets of the inline links `[text](target)` in a line, and of a reference
/// link's definition (`[label]: target`).
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((label, target)) = line.trim_start().split_once("]: ") {
        if label.starts_with('[') && !label.contains(']') {
            out.extend(target.split_whitespace().next().map(str::to_string));
            return out;
        }
    }
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].split_whitespace().next().unwrap_or("");
        out.push(target.to_string());
        rest = &after[end..];
    }
    out
}

/// The code spans of a line.
fn code_spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// Whether `word` names a repository path: it starts with a top-level directory.
fn is_repo_path(word: &str, tops: &BTreeSet<String>) -> bool {
    !word.contains(char::is_whitespace)
        && word
            .split_once('/')
            .is_some_and(|(first, _)| tops.contains(first))
}

/// Whether a repository path exists; a `*` in its last component is a glob.
fn path_exists(root: &Path, path: &str) -> bool {
    let path = path.trim_end_matches('/');
    let full = root.join(path);
    let name = full
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !name.contains('*') {
        return full.exists();
    }
    let (prefix, suffix) = name.split_once('*').expect("a *");
    let Ok(entries) = std::fs::read_dir(full.parent().expect("a parent")) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|e| {
        let n = e.file_name().to_string_lossy().into_owned();
        n.starts_with(prefix) && n.ends_with(suffix.trim_start_matches('*'))
    })
}

/// Every problem of one document: missing link targets, anchors and paths.
fn problems(root: &Path, doc: &Path, tops: &BTreeSet<String>) -> Vec<String> {
    let text = std::fs::read_to_string(doc).expect("document readable");
    let name = doc.strip_prefix(root).unwrap_or(doc).display().to_string();
    let dir = doc.parent().expect("in a directory");
    let mut found = Vec::new();
    for (n, line) in prose_lines(&text) {
        for target in link_targets(line) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let file = if file.is_empty() {
                doc.to_path_buf()
            } else {
                dir.join(file)
            };
            if !file.exists() {
                found.push(format!("{name}:{n}: link to missing {target}"));
                continue;
            }
            if let Some(anchor) = anchor {
                let body = std::fs::read_to_string(&file).unwrap_or_default();
                if !anchors(&body).contains(anchor) {
                    found.push(format!("{name}:{n}: no #{anchor} in {target}"));
                }
            }
        }
        for span in code_spans(line) {
            if is_repo_path(span, tops) && !path_exists(root, span) {
                found.push(format!("{name}:{n}: no path {span}"));
            }
        }
    }
    for line in fenced_lines(&text) {
        for word in line.split_whitespace() {
            if is_repo_path(word, tops) && !path_exists(root, word) {
                found.push(format!("{name} (code block): no path {word}"));
            }
        }
    }
    found
}

#[test]
fn every_link_path_and_anchor_in_the_docs_exists() {
    let root = workspace_root();
    let tops = top_dirs(&root);
    let docs = documents(&root);
    assert!(docs.len() > 1, "docs/ holds the README's sections");
    let found: Vec<String> = docs
        .iter()
        .flat_map(|doc| problems(&root, doc, &tops))
        .collect();
    assert!(
        found.is_empty(),
        "broken links and paths:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checker_finds_what_is_broken() {
    // GitHub's anchors: punctuation goes, repeats are numbered.
    let text = "# Edits in perf's time order\n## `readperf`'s tables\n## A\n## A\n```sh\n# not a heading\n```\n";
    let got = anchors(text);
    let want: BTreeSet<String> = ["edits-in-perfs-time-order", "readperfs-tables", "a", "a-1"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        link_targets("see [x](docs/a.md#b) and [y](#c \"title\")"),
        vec!["docs/a.md#b".to_string(), "#c".to_string()]
    );
    // A reference link's definition is a link too.
    assert_eq!(
        link_targets("[guide]: docs/guide.md \"title\""),
        vec!["docs/guide.md".to_string()]
    );
    let root = workspace_root();
    // The READMEs beside the code are read as docs/ is.
    let docs = documents(&root);
    for readme in ["fixtures/README.md", "fuzz/README.md"] {
        assert!(docs.contains(&root.join(readme)), "{readme} is checked");
    }
    let tops = top_dirs(&root);
    assert!(is_repo_path("tests/mapped_walk.rs", &tops));
    assert!(!path_exists(&root, "tests/mapped_walk.rs"));
    assert!(path_exists(&root, "tests/tests/mapped_walk.rs"));
    assert!(path_exists(&root, "schemas/*.schema.json"));
    assert!(!path_exists(&root, "schemas/*.nothing"));
    assert!(!is_repo_path("record/registry.rs", &tops));
}
