//! The documentation holds together: every relative link in a Markdown file of the
//! repository names a file that exists (and, with `#anchor`, a heading of it); no text file
//! points to notes outside the repository; README stays a short door with the demo and the
//! test command that `.ci/run` runs.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Pages other branches add and the docs index already links (they arrive when those
/// branches merge). A page listed here that exists is an error: take it off the list.
const PENDING: [&str; 0] = [];

/// Files of the repository with one of `exts` (and the scripts in `.ci`), outside build
/// output, fuzzing corpora, test fixtures, the shipped data and hidden folders.
fn files(exts: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with('.') && name != ".ci" {
                continue;
            }
            if path.is_dir() {
                let top_data = name == "data" && dir == root().as_path();
                let skip = matches!(
                    name.as_str(),
                    "target" | "corpus" | "artifacts" | "fixtures"
                );
                if !skip && !top_data {
                    walk(&path, exts, out);
                }
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| exts.contains(&e))
                || dir.file_name() == Some(std::ffi::OsStr::new(".ci"))
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), exts, &mut out);
    out.sort();
    out
}

/// The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> Vec<String> {
    let mut in_code = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            out.push(slug(line.trim_start_matches('#')));
        }
    }
    out
}

/// The targets of inline links `[text](target)` outside code.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_code = false;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push((i + 1, after[..end].to_string()));
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn relative_links_in_markdown_resolve() {
    let root = root().canonicalize().unwrap();
    let mut broken = Vec::new();
    let mut checked = 0;
    for md in files(&["md"]) {
        let text = std::fs::read_to_string(&md).unwrap();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                md.clone()
            } else {
                md.parent().unwrap().join(path)
            };
            let shown = format!("{}:{line}: {target}", md.display());
            let Ok(file) = file.canonicalize() else {
                let rel = normalize(&md.parent().unwrap().join(path));
                let pending = PENDING
                    .iter()
                    .any(|p| normalize(&self::root().join(p)) == rel);
                if !pending {
                    broken.push(format!("{shown} (no such file)"));
                }
                continue;
            };
            if !file.starts_with(&root) {
                broken.push(format!("{shown} (outside the repository)"));
                continue;
            }
            if let Some(anchor) = anchor {
                let text = std::fs::read_to_string(&file).unwrap_or_default();
                if !anchors(&text).iter().any(|a| a == anchor) {
                    broken.push(format!("{shown} (no heading with that anchor)"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(
        checked > 30,
        "only {checked} links found: is the walk right?"
    );
    for p in PENDING {
        assert!(
            !root.join(p).exists(),
            "{p} exists now: take it off PENDING"
        );
    }
}

/// `a/b/../c` as `a/c`, without touching the file system (for files that do not exist).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn nothing_points_to_notes_outside_the_repository() {
    // Built from pieces so this file does not match itself.
    let outside = [
        format!("{}/{}", "..", "shared"),
        format!("{}.md", "FORMULAS"),
        format!("{}.md", "PARSING"),
        format!("{}.md", "DESIGN"),
    ];
    let mut found = Vec::new();
    for f in files(&["md", "rs", "py", "toml", "sh", "txt"]) {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            for o in &outside {
                if line.contains(o.as_str()) {
                    found.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn readme_is_a_short_door_with_the_two_commands() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 300, "README.md has {lines} lines (at most 300)");
    let first_run = readme
        .lines()
        .find(|l| l.contains("cargo run"))
        .expect("a cargo run line");
    assert_eq!(first_run.trim(), "cargo run --release -- demo");
    let test = "cargo test --workspace";
    assert!(readme.lines().any(|l| l.trim() == test), "README: {test}");
    // CI runs it as it is, or through its timing helper `step`.
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.lines()
            .any(|l| l.trim() == test || l.trim() == format!("step {test}")),
        ".ci/run: {test}"
    );
}

/// ARCHITECTURE's recipe for a new learner names files that exist: every backquoted path
/// (with a `/`) in the section "Adding a learner" (under
/// `crates/multikernel/src/` unless it starts with `crates/` or `python/`; `solver/NAME/`
/// stands for the new folder and is checked as `solver/`, `estimator/spec/NAME.rs` for the
/// new file and is checked as `estimator/spec/`).
#[test]
fn the_learner_recipe_names_existing_files() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = text
        .find("## Adding a learner")
        .expect("the recipe's section");
    let section = &text[start..];
    let end = section[3..].find("\n## ").map_or(section.len(), |i| i + 3);
    let section = &section[..end];
    let mut checked = 0;
    for (i, piece) in section.split('`').enumerate() {
        if i % 2 == 0 || piece.contains(' ') || !piece.contains('/') {
            continue;
        }
        let rel = piece.replace("NAME/", "").replace("/NAME.rs", "/");
        let path = if rel.starts_with("crates/") || rel.starts_with("python/") {
            root().join(&rel)
        } else {
            root().join("crates/multikernel/src").join(&rel)
        };
        assert!(
            path.exists(),
            "ARCHITECTURE.md names {piece}, which does not exist"
        );
        checked += 1;
    }
    assert!(
        checked >= 10,
        "the recipe lists its files ({checked} found)"
    );
}

/// The recipe is complete: a source file that names every learner family (its
/// `LearnerKind`) or every `Model` variant enumerates them, so a new learner touches it,
/// and the recipe must list it.
#[test]
fn the_learner_recipe_lists_every_file_that_enumerates_the_learners() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let start = text.find("## Adding a learner").unwrap();
    let section = &text[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let listed: Vec<String> = section
        .split('`')
        .enumerate()
        .filter(|(i, p)| i % 2 == 1 && !p.contains(' ') && p.contains('/'))
        .map(|(_, p)| {
            if p.starts_with("crates/") || p.starts_with("python/") {
                p.to_string()
            } else {
                format!("crates/multikernel/src/{p}")
            }
        })
        .collect();
    let kinds = [
        "Gomp",
        "LpMkl",
        "MirrorDescent",
        "Ucd",
        "Mtl",
        "SimpleMkl",
        "GaussSeidel",
    ];
    let models = [
        "KernelMachine",
        "Gomp",
        "LpMkl",
        "PolyMkl",
        "Parser",
        "Tagger",
        "Wrapper",
    ];
    let word = |text: &str, w: &str| {
        text.match_indices(w).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + w.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    };
    let mut files = Vec::new();
    for dir in [
        "crates/multikernel/src",
        "crates/multikernel-cli/src",
        "crates/multikernel-py/src",
    ] {
        collect_files(&root().join(dir), &mut files);
    }
    let mut missing = Vec::new();
    let mut found = 0;
    for f in files {
        let rel = f
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel.contains("/fuzzing/") {
            continue; // fuzz bodies name learners, they do not dispatch
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let all_kinds = kinds.iter().all(|k| word(&text, k));
        let all_models = models.iter().all(|m| text.contains(&format!("Model::{m}")));
        if all_kinds || all_models {
            found += 1;
            if !listed.contains(&rel) {
                missing.push(rel);
            }
        }
    }
    assert!(found >= 4, "{found} files enumerate the learners");
    assert!(
        missing.is_empty(),
        "ARCHITECTURE's recipe for a new learner misses {missing:?}"
    );
}

fn collect_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}
