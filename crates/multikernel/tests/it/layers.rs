//! The library's modules form layers without cycles (ARCHITECTURE.md): a module may use
//! modules of lower layers only, inside `solver` an engine folder may use only the folders
//! below it (AdaGrad and mirror descent sit above the engines they borrow from; no two
//! engine folders of one layer use each other), and inside `pipeline` an input kind's folder
//! only the folders below it (sequences above tables; no other pipeline uses another).
//!
//! This test tokenizes every source file (comments dropped, strings kept apart) and resolves
//! every path that leaves its module to an absolute one: `crate::a::b`, grouped imports
//! (`use crate::{a::b, c::{d, e}}`), `super::` chains (inline `mod` blocks counted), paths
//! inside macro calls, and string paths in attributes (`#[serde(with = "crate::a::b")]`).
//! Each is checked against the tables below, so a new cycle fails here with the file and line
//! that made it.
//!
//! Inside every folder of `src`, the files use each other one way only
//! (`no_folder_has_a_cycle_among_its_files`): the same paths draw the arrows among the
//! folder's children (a file `a.rs` and a folder `a/` are one node `a`; the folder's own
//! module file and unit tests are no nodes), and a cycle fails with the file and line of each
//! of its arrows.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Layer of each top-level module, lowest first.
const LAYERS: &[(&str, u32)] = &[
    ("error", 0),
    ("run", 1),
    ("io", 1),
    ("multiset", 1),
    ("data", 2),
    ("checkpoint", 2),
    ("metrics", 3),
    ("select", 3),
    ("linalg", 3),
    ("features", 3),
    ("kernel", 4),
    ("prox", 4),
    ("params", 5),
    ("task", 6),
    ("trained", 7),
    ("solver", 8),
    ("pipeline", 9),
    ("model", 10),
    ("estimator", 11),
    ("prelude", 12),
    ("engine", 12),
    ("fuzzing", 12),
];

/// Layer of each folder (or file) of `solver`, lowest first: shared solvers, then the engine
/// families, then the engines built on other families' parts.
const SOLVER_LAYERS: &[(&str, u32)] = &[
    ("check", 0),
    ("ridge", 0),
    ("batch", 0),
    ("smo", 0),
    ("cutting_plane", 0),
    ("online", 1),
    ("gomp", 1),
    ("lp_mkl", 1),
    ("wrapper", 1),
    ("mirror_descent", 2),
    ("adagrad", 2),
];

/// Layer of each folder of `pipeline` (one per input kind), lowest first: the sequence model
/// stores its settings through the table model's `as_text`.
const PIPELINE_LAYERS: &[(&str, u32)] = &[
    ("table", 0),
    ("columns", 0),
    ("treebank", 0),
    ("sequence", 1),
];

/// Items re-exported at the crate root, usable from every layer.
const ROOT_ITEMS: &[&str] = &["Error", "Result"];

/// The layer table that orders the children of the module at `parent`, if any.
fn table(parent: &[String]) -> Option<&'static [(&'static str, u32)]> {
    match parent {
        [] => Some(LAYERS),
        [s] if s == "solver" => Some(SOLVER_LAYERS),
        [s] if s == "pipeline" => Some(PIPELINE_LAYERS),
        _ => None,
    }
}

fn layer(table: &[(&str, u32)], module: &str) -> Option<u32> {
    table.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
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

/// The module path of a source file (`src/kernel/gram.rs` -> `kernel::gram`,
/// `src/solver/online/mod.rs` -> `solver::online`, `src/lib.rs` -> the root).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("file under src");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib") {
        parts.push(stem.to_string());
    }
    parts
}

/// A path that leaves its module, resolved from the crate root, with its line and the module
/// it is written in (the file's, or an inline `mod` block's inside it).
#[derive(Debug, PartialEq)]
struct Use {
    path: Vec<String>,
    line: usize,
    from: Vec<String>,
}

fn is_path_sep(tokens: &[TokenTree], i: usize) -> bool {
    matches!(
        (tokens.get(i), tokens.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

/// Reads the path continuing at `tokens[i]` (just after a `::`) onto `prefix`, expanding
/// `{a::b, c::{d, e}}` groups; pushes every full path with the line of its last segment and
/// `from`, the module it is written in.
fn read_tail(
    tokens: &[TokenTree],
    mut i: usize,
    mut prefix: Vec<String>,
    mut line: usize,
    from: &[String],
    out: &mut Vec<Use>,
) {
    loop {
        match tokens.get(i) {
            Some(TokenTree::Ident(id)) => {
                line = id.span().start().line;
                let name = id.to_string();
                if name != "self" {
                    prefix.push(name);
                }
                if is_path_sep(tokens, i + 1) {
                    i += 3;
                    continue;
                }
            }
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => {
                let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                for item in inner.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','))
                {
                    if !item.is_empty() {
                        read_tail(item, 0, prefix.clone(), line, from, out);
                    }
                }
                return;
            }
            _ => {}
        }
        out.push(Use {
            path: prefix,
            line,
            from: from.to_vec(),
        });
        return;
    }
}

/// Every path in `tokens` that starts at `crate::` or climbs with `super::`, resolved against
/// `module` (the module the tokens are in); inline `mod NAME { .. }` blocks extend it.
fn collect(tokens: &[TokenTree], module: &[String], out: &mut Vec<Use>) {
    let mut i = 0;
    while i < tokens.len() {
        let preceded_by_sep = i >= 2 && is_path_sep(tokens, i - 2);
        match &tokens[i] {
            TokenTree::Ident(id)
                if *id == "crate" && is_path_sep(tokens, i + 1) && !preceded_by_sep =>
            {
                read_tail(
                    tokens,
                    i + 3,
                    Vec::new(),
                    id.span().start().line,
                    module,
                    out,
                );
            }
            TokenTree::Ident(id)
                if *id == "super" && is_path_sep(tokens, i + 1) && !preceded_by_sep =>
            {
                let line = id.span().start().line;
                let mut base = module.to_vec();
                let mut j = i;
                while matches!(&tokens.get(j), Some(TokenTree::Ident(s)) if *s == "super")
                    && is_path_sep(tokens, j + 1)
                {
                    base.pop();
                    j += 3;
                }
                read_tail(tokens, j, base, line, module, out);
                i = j;
                continue;
            }
            TokenTree::Ident(id) if *id == "mod" => {
                if let (Some(TokenTree::Ident(name)), Some(TokenTree::Group(g))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                {
                    if g.delimiter() == Delimiter::Brace {
                        let mut inner = module.to_vec();
                        inner.push(name.to_string());
                        let body: Vec<TokenTree> = g.stream().into_iter().collect();
                        collect(&body, &inner, out);
                        i += 3;
                        continue;
                    }
                }
            }
            TokenTree::Group(g) => {
                let body: Vec<TokenTree> = g.stream().into_iter().collect();
                collect(&body, module, out);
            }
            TokenTree::Literal(lit) => {
                // A path written as a string (`#[serde(with = "crate::a::b")]`).
                let text = lit.to_string();
                if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                    let is_path = (inner.starts_with("crate::") || inner.starts_with("super::"))
                        && inner
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
                    if is_path {
                        let line = lit.span().start().line;
                        let mut found = Vec::new();
                        let stream = TokenStream::from_str(inner).expect("a path parses");
                        collect(&stream.into_iter().collect::<Vec<_>>(), module, &mut found);
                        out.extend(found.into_iter().map(|u| Use { line, ..u }));
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// The paths of a source text that leave their module (see [`collect`]).
fn uses(text: &str, module: &[String]) -> Vec<Use> {
    let stream = TokenStream::from_str(text).expect("a source file tokenizes");
    let tokens: Vec<TokenTree> = stream.into_iter().collect();
    let mut out = Vec::new();
    collect(&tokens, module, &mut out);
    out
}

/// Why `own` may not use `used`, if it may not: the first segment where the two paths part
/// names two siblings; when their parent has a layer table, the used one must be lower.
fn violation(own: &[String], used: &[String]) -> Option<String> {
    let common = own.iter().zip(used).take_while(|(a, b)| a == b).count();
    if common == own.len() || common == used.len() {
        return None; // a descendant or an ancestor
    }
    let parent = &own[..common];
    let table = table(parent)?;
    let (mine, theirs) = (&own[common], &used[common]);
    if parent.is_empty() && ROOT_ITEMS.contains(&theirs.as_str()) {
        return None;
    }
    let scope = |m: &str| {
        let mut p = parent.to_vec();
        p.push(m.to_string());
        p.join("::")
    };
    let Some(l_own) = layer(table, mine) else {
        return Some(format!("module `{}` has no layer", scope(mine)));
    };
    match layer(table, theirs) {
        Some(l) if l < l_own => None,
        Some(l) => Some(format!(
            "`{}` (layer {l_own}) uses `crate::{}` (layer {l})",
            scope(mine),
            used.join("::")
        )),
        None => Some(format!(
            "`crate::{}` is not in the layer table",
            scope(theirs)
        )),
    }
}

#[test]
fn modules_only_use_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut violations = Vec::new();
    for file in &files {
        let module = module_path(&src, file);
        if module.first().is_some_and(|m| layer(LAYERS, m).is_none()) {
            violations.push(format!(
                "{}: module `{}` has no layer",
                file.display(),
                module[0]
            ));
            continue;
        }
        let text = std::fs::read_to_string(file).expect("readable source file");
        for u in uses(&text, &module) {
            if let Some(why) = violation(&module, &u.path) {
                violations.push(format!("{}:{}: {why}", file.display(), u.line));
            }
        }
    }
    violations.dedup();
    assert!(
        violations.is_empty(),
        "layering violations:\n{}",
        violations.join("\n")
    );
}

fn path(p: &str) -> Vec<String> {
    p.split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// The checker itself sees what it must see.
#[test]
fn finds_crate_paths_outside_comments() {
    let found: Vec<Vec<String>> = uses(
        "use crate::kernel::{Gram}; let x = crate::data::Matrix::zeros(1, 1);\n// crate::solver",
        &path("model"),
    )
    .into_iter()
    .map(|u| u.path)
    .collect();
    assert_eq!(
        found,
        vec![path("kernel::Gram"), path("data::Matrix::zeros")]
    );
}

#[test]
fn expands_grouped_imports_over_lines() {
    let text = "use crate::{\n    kernel::Gram,\n    solver::{online::X, wrapper::{self, Y}},\n};";
    let found = uses(text, &path("model"));
    let paths: Vec<_> = found.iter().map(|u| u.path.join("::")).collect();
    assert_eq!(
        paths,
        [
            "kernel::Gram",
            "solver::online::X",
            "solver::wrapper",
            "solver::wrapper::Y"
        ]
    );
    assert_eq!(
        found.iter().map(|u| u.line).collect::<Vec<_>>(),
        [2, 3, 3, 3]
    );
}

#[test]
fn resolves_super_paths_and_inline_modules() {
    let module = path("solver::online::engine");
    let text = "use super::super::wrapper::{Z, W};\npub(super) fn f() {}\n\
                mod tests { use super::*; use super::super::super::sequence::S; }\n\
                #[serde(with = \"super::super::smo::as_text\")] struct A;";
    let paths: Vec<_> = uses(text, &module)
        .into_iter()
        .map(|u| (u.path.join("::"), u.line))
        .collect();
    assert_eq!(
        paths,
        [
            ("solver::wrapper::Z".to_string(), 1),
            ("solver::wrapper::W".to_string(), 1),
            ("solver::online::engine".to_string(), 3),
            ("solver::sequence::S".to_string(), 3),
            ("solver::smo::as_text".to_string(), 4),
        ]
    );
}

#[test]
fn orders_top_level_modules_and_learner_folders() {
    let engine = path("solver::online::engine");
    assert!(violation(&engine, &path("solver::wrapper::WrapperMethod")).is_some());
    assert!(violation(&engine, &path("pipeline::sequence::SequenceModel")).is_some());
    assert!(violation(&engine, &path("solver::adagrad::AdagradLearner")).is_some());
    assert!(violation(&engine, &path("model::Model")).is_some());
    assert!(violation(&engine, &path("solver::online::params::OnlineParams")).is_none());
    assert!(violation(&engine, &path("solver::cutting_plane::Cut")).is_none());
    assert!(violation(&engine, &path("kernel::Gram")).is_none());
    assert!(violation(&engine, &path("Result")).is_none());
    let wrapper = path("pipeline::sequence::wrapper");
    assert!(violation(&wrapper, &path("solver::online::OnlineLearner")).is_none());
    assert!(violation(&wrapper, &path("solver::wrapper::simplemkl")).is_none());
    assert!(violation(&wrapper, &path("pipeline::table::vector_model::as_text")).is_none());
    assert!(violation(&wrapper, &path("model::Model")).is_some());
    let parser = path("pipeline::treebank::parser");
    assert!(violation(&parser, &path("solver::cutting_plane::Cut")).is_none());
    assert!(violation(&parser, &path("pipeline::table::vector::fit_vector")).is_some());
    assert!(violation(
        &path("pipeline::table::vector"),
        &path("pipeline::sequence::X")
    )
    .is_some());
    assert!(violation(&path("solver::adagrad"), &path("solver::online::engine::X")).is_none());
    assert!(violation(&path("model"), &path("pipeline::columns::tagging::X")).is_none());
    assert!(violation(&path("solver::wrapper::grams"), &path("solver::online::X")).is_some());
    assert!(violation(&path("solver::brand_new"), &path("solver::smo::X")).is_some());
}

/// Whether `module` is unit-test code: a `tests` module (`tests.rs`, a `tests/` folder or an
/// inline `mod tests { .. }`) or inside one.
fn is_test_module(module: &[String]) -> bool {
    module.iter().any(|m| m == "tests")
}

/// One source file as the folder check reads it: its module path, its name for messages and
/// its text.
struct Source {
    module: Vec<String>,
    name: String,
    text: String,
}

/// An arrow between two siblings of a folder: something in `from` uses a path into `to`; `at`
/// is the first place that does (`file:line`).
#[derive(Debug, Clone, PartialEq)]
struct Edge {
    from: String,
    to: String,
    at: String,
}

/// The arrows among the siblings of every folder, keyed by the folder's module path. A file
/// `a.rs` and a folder `a/` (its own module file and everything under it) are one node `a` of
/// their parent; the folder's own module file is not a node among its children, so re-exports
/// from `mod.rs` are no arrows. Unit tests (`tests.rs`, `tests/`, inline `mod tests`) are no
/// nodes and draw no arrows.
fn sibling_edges(sources: &[Source]) -> BTreeMap<Vec<String>, Vec<Edge>> {
    let sources: Vec<&Source> = sources
        .iter()
        .filter(|s| !is_test_module(&s.module))
        .collect();
    // The nodes of each folder: the children of its module that have a file.
    let mut nodes: BTreeMap<&[String], BTreeSet<&str>> = BTreeMap::new();
    for s in &sources {
        for depth in 0..s.module.len() {
            nodes
                .entry(&s.module[..depth])
                .or_default()
                .insert(&s.module[depth]);
        }
    }
    let mut first: BTreeMap<(Vec<String>, String, String), String> = BTreeMap::new();
    for s in &sources {
        for u in uses(&s.text, &s.module) {
            if is_test_module(&u.from) {
                continue;
            }
            // Every folder above the file, down to its own: the file is inside the node
            // `s.module[depth]` of the folder `s.module[..depth]`.
            for depth in 0..s.module.len() {
                let folder = &s.module[..depth];
                if u.path.len() <= depth || u.path[..depth] != *folder {
                    continue;
                }
                let (mine, theirs) = (&s.module[depth], &u.path[depth]);
                if mine != theirs && nodes[folder].contains(theirs.as_str()) {
                    first
                        .entry((folder.to_vec(), mine.clone(), theirs.clone()))
                        .or_insert_with(|| format!("{}:{}", s.name, u.line));
                }
            }
        }
    }
    let mut edges: BTreeMap<Vec<String>, Vec<Edge>> = BTreeMap::new();
    for ((folder, from, to), at) in first {
        edges.entry(folder).or_default().push(Edge { from, to, at });
    }
    edges
}

/// The shortest cycle of `edges` through `start`, its arrows in order, if there is one.
fn shortest_cycle<'a>(edges: &'a [Edge], start: &str) -> Option<Vec<&'a Edge>> {
    let mut reached_by: BTreeMap<&str, &Edge> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for e in edges.iter().filter(|e| e.from == node) {
            if e.to == start {
                let mut cycle = vec![e];
                let mut at = node;
                while at != start {
                    let back = reached_by[at];
                    cycle.push(back);
                    at = &back.from;
                }
                cycle.reverse();
                return Some(cycle);
            }
            if !reached_by.contains_key(e.to.as_str()) {
                reached_by.insert(&e.to, e);
                queue.push_back(&e.to);
            }
        }
    }
    None
}

/// The cycles of `edges`: for each node, in name order, not already on a cycle found, the
/// shortest cycle through it. Empty when the arrows go one way.
fn cycles(edges: &[Edge]) -> Vec<Vec<&Edge>> {
    let nodes: BTreeSet<&str> = edges.iter().map(|e| e.from.as_str()).collect();
    let mut on_a_cycle: BTreeSet<&str> = BTreeSet::new();
    let mut found = Vec::new();
    for node in nodes {
        if on_a_cycle.contains(node) {
            continue;
        }
        if let Some(cycle) = shortest_cycle(edges, node) {
            on_a_cycle.extend(cycle.iter().map(|e| e.from.as_str()));
            found.push(cycle);
        }
    }
    found
}

/// A cycle spelled out: `a -> b -> a`, then where each arrow is drawn.
fn describe(folder: &[String], cycle: &[&Edge]) -> String {
    let folder = if folder.is_empty() {
        "src".to_string()
    } else {
        format!("src/{}", folder.join("/"))
    };
    let mut names: Vec<&str> = cycle.iter().map(|e| e.from.as_str()).collect();
    names.push(&cycle[0].from);
    let mut text = format!("{folder}: {}", names.join(" -> "));
    for e in cycle {
        text.push_str(&format!("\n    {} -> {} at {}", e.from, e.to, e.at));
    }
    text
}

/// Inside every folder the files use each other one way only: no file reaches back, directly
/// or through a chain of its siblings, to a file that uses it (ARCHITECTURE.md).
#[test]
fn no_folder_has_a_cycle_among_its_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let sources: Vec<Source> = files
        .iter()
        .map(|file| Source {
            module: module_path(&src, file),
            name: file
                .strip_prefix(&src)
                .expect("file under src")
                .display()
                .to_string(),
            text: std::fs::read_to_string(file).expect("readable source file"),
        })
        .collect();
    let mut found = Vec::new();
    for (folder, edges) in sibling_edges(&sources) {
        for cycle in cycles(&edges) {
            found.push(describe(&folder, &cycle));
        }
    }
    assert!(
        found.is_empty(),
        "cycles among the files of a folder:\n{}",
        found.join("\n")
    );
}

fn edge(from: &str, to: &str) -> Edge {
    Edge {
        from: from.to_string(),
        to: to.to_string(),
        at: format!("{from}.rs:1"),
    }
}

#[test]
fn finds_cycles_and_passes_one_way_graphs() {
    let dag = [
        edge("read", "csv"),
        edge("read", "libsvm"),
        edge("csv", "text"),
        edge("libsvm", "text"),
    ];
    assert!(cycles(&dag).is_empty());
    let looped = [
        edge("read", "csv"),
        edge("csv", "text"),
        edge("text", "read"),
        edge("libsvm", "text"),
        edge("engine", "state"),
        edge("state", "engine"),
    ];
    let found: Vec<String> = cycles(&looped)
        .iter()
        .map(|c| describe(&path("data"), c))
        .collect();
    assert_eq!(
        found,
        [
            "src/data: csv -> text -> read -> csv\n    csv -> text at csv.rs:1\n    \
             text -> read at text.rs:1\n    read -> csv at read.rs:1",
            "src/data: engine -> state -> engine\n    engine -> state at engine.rs:1\n    \
             state -> engine at state.rs:1",
        ]
    );
}

#[test]
fn draws_arrows_between_siblings_only() {
    let source = |module: &str, text: &str| Source {
        module: path(module),
        name: format!("{}.rs", module.replace("::", "/")),
        text: text.to_string(),
    };
    let sources = [
        // The folder's own module uses its children: no node, no arrow.
        source(
            "data",
            "pub use read::Dataset; use crate::data::csv::parse;",
        ),
        source("data::read", "fn f() { super::csv::parse(); }"),
        // A path into the parent (`super::Dataset`) is no arrow; unit tests draw none.
        source(
            "data::csv",
            "use super::Dataset;\nmod tests { use crate::data::read::f; }",
        ),
        source("data::tests", "use super::csv::parse; use super::read::f;"),
        source(
            "pipeline::sequence::wrapper::engine",
            "use crate::data::csv::parse;",
        ),
        source("pipeline::sequence::wrapper", "use super::model::M;"),
        source(
            "pipeline::sequence::model",
            "use super::wrapper::engine::T;",
        ),
    ];
    let edges = sibling_edges(&sources);
    let listed: Vec<String> = edges
        .iter()
        .flat_map(|(folder, edges)| {
            edges
                .iter()
                .map(move |e| format!("{}: {} -> {} at {}", folder.join("::"), e.from, e.to, e.at))
        })
        .collect();
    assert_eq!(
        listed,
        [
            ": pipeline -> data at pipeline/sequence/wrapper/engine.rs:1",
            "data: read -> csv at data/read.rs:1",
            "pipeline::sequence: model -> wrapper at pipeline/sequence/model.rs:1",
            "pipeline::sequence: wrapper -> model at pipeline/sequence/wrapper.rs:1",
        ]
    );
}

/// Every path of `tokens` that starts at the crate `root` (`multikernel::a::b`, grouped
/// imports expanded), as the shells write them.
fn crate_paths(tokens: &[TokenTree], root: &str, out: &mut Vec<Use>) {
    for (i, t) in tokens.iter().enumerate() {
        match t {
            TokenTree::Ident(id)
                if *id == root
                    && is_path_sep(tokens, i + 1)
                    && !(i >= 2 && is_path_sep(tokens, i - 2)) =>
            {
                read_tail(tokens, i + 3, Vec::new(), id.span().start().line, &[], out);
            }
            TokenTree::Group(g) => {
                let body: Vec<TokenTree> = g.stream().into_iter().collect();
                crate_paths(&body, root, out);
            }
            _ => {}
        }
    }
}

/// The modules of the library a shell may not use: the engines (private, and lent to the
/// project's tools through `engine`) are reached through `estimator` (specs, fits, the
/// re-exported settings types) and `model`.
const SHELL_FORBIDDEN: &[&str] = &["solver", "engine"];

/// Why the shell source `text` breaks the rule above, one line per path.
fn shell_violations(text: &str) -> Vec<String> {
    let stream = TokenStream::from_str(text).expect("a source file tokenizes");
    let tokens: Vec<TokenTree> = stream.into_iter().collect();
    let mut found = Vec::new();
    crate_paths(&tokens, "multikernel", &mut found);
    found
        .into_iter()
        .filter(|u| {
            u.path
                .first()
                .is_some_and(|m| SHELL_FORBIDDEN.contains(&m.as_str()))
        })
        .map(|u| format!("{}: multikernel::{}", u.line, u.path.join("::")))
        .collect()
}

/// The command-line tool and the Python binding use the library's front door
/// (`estimator`, `model`, `data`, ...), never `multikernel::solver` (ARCHITECTURE.md).
#[test]
fn the_shells_do_not_import_the_solvers() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut violations = Vec::new();
    for shell in ["multikernel-cli", "multikernel-py"] {
        let src = crates.join(shell).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        assert!(!files.is_empty(), "{} has no sources", src.display());
        for file in files {
            let text = std::fs::read_to_string(&file).expect("readable source file");
            for v in shell_violations(&text) {
                violations.push(format!("{}:{v}", file.display()));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "a shell imports the solvers:\n{}",
        violations.join("\n")
    );
}

#[test]
fn finds_solver_imports_in_shell_code() {
    let text = "use multikernel::{estimator::fit, solver::{online::X, smo}};\n\
                let p = multikernel::solver::lp_mkl::parse_p(s);\n\
                // multikernel::solver::in_a_comment\n\
                use multikernel::estimator::smo::svc; let s = \"multikernel::solver\";";
    assert_eq!(
        shell_violations(text),
        [
            "1: multikernel::solver::online::X",
            "1: multikernel::solver::smo",
            "2: multikernel::solver::lp_mkl::parse_p",
        ]
    );
}

/// The most lines the command-line tool's sources may have: flags, printing and the wording
/// of errors. What a Rust program needs to do what a command does (specs, fits over a data
/// source) is the library's, the reproductions and their options the experiments crate's
/// (ARCHITECTURE.md). 1,490 lines
/// since issue 47 moved the shell's unit tests into its integration tests.
const CLI_MAX_LINES: usize = 1_600;

#[test]
fn the_command_line_tool_stays_a_thin_shell() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../multikernel-cli/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(!files.is_empty(), "{} has no sources", src.display());
    let counts: Vec<(PathBuf, usize)> = files
        .into_iter()
        .map(|f| {
            let lines = std::fs::read_to_string(&f)
                .expect("readable")
                .lines()
                .count();
            (f, lines)
        })
        .collect();
    let total: usize = counts.iter().map(|(_, n)| n).sum();
    let listing: Vec<String> = counts
        .iter()
        .map(|(f, n)| format!("{n:>6} {}", f.display()))
        .collect();
    assert!(
        total <= CLI_MAX_LINES,
        "the command-line tool has {total} lines, more than {CLI_MAX_LINES}: move what is \
         not flags or printing into the library\n{}",
        listing.join("\n")
    );
}

/// The most items the library may declare `pub` (issue 48's count: lines that start with
/// `pub fn`, `pub struct`, `pub enum`, `pub trait`, `pub type` or `pub const`, in every
/// source file but the unit tests). `#![warn(unreachable_pub)]` makes each of them reachable
/// from outside: the front door, the types its signatures carry, and what `engine` lends
/// the project's own tools. 997 after the first cut (issue 48; 1,676 before it); 998 with
/// the three ways to train, the `OnlineSteps` and `TrainedModel` seams; 699 after the
/// learner seam (goal 700); 704 with the structured selection (its plan, candidate type,
/// candidates, rule and request); 706 with the tagger's named weights (`state_features`,
/// `transition_features`: the Python package's `state_features_` and
/// `transition_features_` need the model's weights by attribute and label, which only the
/// library can name); 710 with row weights (`TableRef::with_weights`, the door of
/// `sample_weight`; `data::weights::ClassWeight` and `FileSource::read_weighted_table`, which read
/// `--weight-column` and apply `--class-weight` for the command line, kept a thin shell;
/// `fuzzing::csv_weights`, the body of the weight column reader's fuzz target); 747 with
/// a tagger's training over parts of its sentences (`estimator::tagger::parts`, the door of
/// `multikernel.dask.fit_dask` for taggers: the parts' keys, counts, featurizer, compiled
/// sentences, the loop's steps and state, the point's replica on the workers, the sums
/// and `fit_parts`, each with the bytes or fields that cross the network; the tagger's
/// state features over attributes gathered from the parts; `fuzzing::tagger_parts`); 749
/// with a replica that holds only the weights its worker's parts read (`PointReplica::widen`
/// for a part that joins a worker, `CompiledPart::weights_read` for the Python package's
/// report of a worker's share); 778 with a parser's training over parts of its sentences
/// (`estimator::parser::parts`, the door of `multikernel.dask.fit_dask` for parsers: the
/// parts' attribute values and feature keys, the featurizer, the gold arcs of the labeler,
/// each with its bytes, and `fit_parser_parts`; the loop's messages and the point's replica
/// moved to `estimator::parts`, shared with the tagger's, over a `PartLayout`;
/// `fuzzing::parser_parts`); 779 with `PartSums::merged_exactly` (a Dask worker sends one
/// sum for all its partitions when their sums are integers: the same cut, fewer bytes); 790
/// with the online learner over parts by iterative parameter mixing
/// (`estimator::parts::online`, the door of `fit_dask` for `learner="online"`: the plan
/// and its bytes, each part's `L(0)` and pass, the passes' callable type, the tagger's
/// `fit_passes` and the parser's `fit_parser_passes`; the state and the passes travel as
/// bytes, so their types stay in the crate; `fuzzing::online_parts`); 795 with the batch CRF
/// as a learner (`LbfgsSpec`) and over parts (`estimator::parts::batch`: a part's gradient,
/// the callable's type, `CompiledPart::crf_gradient`, the tagger's `fit_lbfgs_parts`).
const PUBLIC_ITEMS_MAX: usize = 795;

/// Whether a line declares a public item, by the count's rule.
fn declares_public_item(line: &str) -> bool {
    let rest = line.trim_start();
    ["fn", "struct", "enum", "trait", "type", "const"]
        .iter()
        .any(|kind| rest.starts_with(&format!("pub {kind} ")))
}

/// Whether a source file is a unit-test file (`tests.rs` or a file under a `tests/` folder).
fn is_test_file(src: &Path, file: &Path) -> bool {
    let rel = file.strip_prefix(src).unwrap_or(file);
    rel.file_name().is_some_and(|n| n == "tests.rs")
        || rel.components().any(|c| c.as_os_str() == "tests")
}

#[test]
fn the_public_face_stays_small() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut per_file: Vec<(usize, PathBuf)> = files
        .into_iter()
        .filter(|f| !is_test_file(&src, f))
        .map(|f| {
            let text = std::fs::read_to_string(&f).expect("readable source file");
            (text.lines().filter(|l| declares_public_item(l)).count(), f)
        })
        .collect();
    let total: usize = per_file.iter().map(|(n, _)| n).sum();
    per_file.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
    let top: Vec<String> = per_file
        .iter()
        .take(15)
        .map(|(n, f)| format!("{n:>5} {}", f.display()))
        .collect();
    assert!(
        total <= PUBLIC_ITEMS_MAX,
        "the library declares {total} public items, more than {PUBLIC_ITEMS_MAX}: make what \
         only the crate uses pub(crate), and lend what the experiments need through `engine` \
         (ARCHITECTURE.md, \"Where things go\"); the most:\n{}",
        top.join("\n")
    );
}

#[test]
fn counts_public_items_by_the_declaration() {
    assert!(declares_public_item("    pub fn fit(&self) {"));
    assert!(declares_public_item("pub const MAX: usize = 1;"));
    assert!(!declares_public_item("    pub(crate) fn fit(&self) {"));
    assert!(!declares_public_item("pub use crate::a::B;"));
    assert!(!declares_public_item("    pub name: String,"));
    assert!(!declares_public_item("// pub fn in a comment"));
    let src = Path::new("/s");
    assert!(is_test_file(src, Path::new("/s/solver/tests.rs")));
    assert!(is_test_file(src, Path::new("/s/solver/tests/online.rs")));
    assert!(!is_test_file(src, Path::new("/s/solver/online/engine.rs")));
}
