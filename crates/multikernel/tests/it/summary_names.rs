//! A model summary names a learner's settings by their registry names
//! (`estimator::registry::SETTINGS`: the Python keyword, the name in error messages), so
//! the same setting reads the same in `inspect`, in Python's `settings_` and on the
//! command line; every other entry is a fact of the fitted model, listed here.

use multikernel::estimator::registry::SETTINGS;
use multikernel::model::Model;
use std::path::Path;

/// Summary entries that are not learner settings: the shared spec fields (`C`, `seed`,
/// ...) and what the fit found or used.
const FACTS: &[&str] = &[
    "C",
    "lambda",
    "seed",
    "bias",
    "standardize",
    "outputs",
    "training points",
    "projection_radius",
    "learner",
    "labels",
    "weights",
    "observation_columns",
    "min_count",
    "relations",
    "wrapper",
    "inner_solves",
    "status",
    "sampling",
    "iterations",
    "features",
    "trees",
    "support",
    "loss",
    "dictionary",
    "inner_epochs",
    "outer_iterations",
];

#[test]
fn summary_settings_use_registry_names() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models-v2");
    let mut seen = 0;
    let mut wrong = Vec::new();
    let mut facts_seen = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "model") {
            continue;
        }
        let model = Model::load(&path).unwrap();
        seen += 1;
        for (name, _) in model.summary().settings {
            let registered = SETTINGS.iter().any(|s| s.name == name);
            if !registered && !FACTS.contains(&name.as_str()) {
                wrong.push(format!("{}: {name}", path.display()));
            }
            facts_seen.push(name);
        }
    }
    assert!(seen >= 10, "{seen} fixture models");
    let unused: Vec<&&str> = FACTS
        .iter()
        // A tagger shows its count cutoff only when it is above 1.
        .filter(|f| **f != "min_count" && !facts_seen.iter().any(|n| n == *f))
        .collect();
    assert!(unused.is_empty(), "facts no fixture shows: {unused:?}");
    assert!(
        wrong.is_empty(),
        "summary entries that are neither registry settings nor facts:\n{}",
        wrong.join("\n")
    );
}
