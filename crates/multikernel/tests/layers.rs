//! The library's modules form layers without cycles (ARCHITECTURE.md): a module may use
//! modules of lower layers only. This test reads every source file and checks each
//! `crate::MODULE` path (and `super::` paths that climb out of a top-level module) against
//! the table below, so a new cycle fails here with the file and line that made it.

use std::path::{Path, PathBuf};

/// Layer of each top-level module, lowest first.
const LAYERS: &[(&str, u32)] = &[
    ("error", 0),
    ("plot", 0),
    ("run", 1),
    ("io", 1),
    ("multiset", 1),
    ("data", 2),
    ("metrics", 3),
    ("select", 3),
    ("linalg", 3),
    ("features", 3),
    ("kernel", 4),
    ("prox", 4),
    ("params", 5),
    ("task", 6),
    ("solver", 7),
    ("model", 8),
    ("estimator", 9),
    ("prelude", 10),
    ("reproduce", 10),
    ("fuzzing", 10),
];

fn layer(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source directory") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a source file belongs to (`src/kernel/gram.rs` -> `kernel`).
fn owner(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    Some(first.trim_end_matches(".rs").to_string())
}

/// Every `crate::NAME` in a line, outside comments.
fn crate_refs(line: &str) -> Vec<String> {
    let code = match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    };
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.push(name);
        }
        rest = after;
    }
    out
}

#[test]
fn modules_only_use_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut violations = Vec::new();
    for file in &files {
        let Some(module) = owner(&src, file) else {
            continue;
        };
        if module == "lib" {
            continue;
        }
        let Some(own) = layer(&module) else {
            violations.push(format!(
                "{}: module `{module}` has no layer",
                file.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(file).expect("readable source file");
        for (n, line) in text.lines().enumerate() {
            for used in crate_refs(line) {
                if used == module || matches!(used.as_str(), "Error" | "Result") {
                    continue;
                }
                match layer(&used) {
                    Some(l) if l < own => {}
                    Some(l) => violations.push(format!(
                        "{}:{}: `{module}` (layer {own}) uses `crate::{used}` (layer {l})",
                        file.display(),
                        n + 1
                    )),
                    None => violations.push(format!(
                        "{}:{}: `crate::{used}` is not in the layer table",
                        file.display(),
                        n + 1
                    )),
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "layering violations:\n{}",
        violations.join("\n")
    );
}

/// The checker itself sees what it must see.
#[test]
fn finds_crate_paths_outside_comments() {
    assert_eq!(
        crate_refs("use crate::kernel::{Gram}; let x = crate::data::Matrix::zeros(1, 1);"),
        vec!["kernel", "data"]
    );
    assert!(crate_refs("// see crate::solver").is_empty());
    assert!(layer("kernel") < layer("solver"));
}
