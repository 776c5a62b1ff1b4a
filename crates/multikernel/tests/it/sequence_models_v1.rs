//! Version-1 sequence model files (written by commit 3b69a82, tests/fixtures/models-v1) load
//! into today's `SequenceModel`, pass `validate`, and predict the words and the accuracy that
//! `predict` and `eval` printed then. Mangled copies fail `validate` (and prediction returns
//! the error instead of panicking).

use multikernel::data::ocr::read_ocr;
use multikernel::engine::pipeline::sequence::SequenceModel;
use multikernel::kernel::MemoryLimit;
use multikernel::Error;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models-v1")
}

/// The `model` field of a version-1 envelope `{"format", "version", "kind", "model"}`.
fn load(name: &str) -> SequenceModel {
    let text = std::fs::read_to_string(fixtures().join(format!("{name}.model"))).unwrap();
    let env: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(env["format"], "multikernel-model");
    assert_eq!(env["version"], 1);
    assert_eq!(env["kind"], "sequence");
    serde_json::from_value(env["model"].clone()).unwrap()
}

#[test]
fn version_1_sequence_models_predict_as_before() {
    let test = read_ocr(&fixtures().join("ocr-test.data.gz")).unwrap();
    let limit = MemoryLimit::default();
    for name in ["sequence", "sequence-crf"] {
        let m = load(name);
        m.validate().unwrap();
        assert!(m.feature_names.is_empty(), "a field version 1 did not have");
        let words: Vec<String> = m
            .predict_names(&test.x, &test.spans, &limit)
            .unwrap()
            .iter()
            .map(|w| w.concat())
            .collect();
        let want = std::fs::read_to_string(fixtures().join(format!("{name}.predict.txt"))).unwrap();
        assert_eq!(words, want.lines().collect::<Vec<_>>(), "{name}");
        let eval = std::fs::read_to_string(fixtures().join(format!("{name}.eval.txt"))).unwrap();
        let acc = m.token_accuracy(&test, &limit).unwrap();
        assert!(
            eval.contains(&format!("char_accuracy {acc:.4}")),
            "{name}: {acc} vs {eval}"
        );
        // Round trip through today's serde shape.
        let back: SequenceModel =
            serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
    }
}

#[test]
fn mangled_models_fail_validation_instead_of_panicking() {
    let good = load("sequence-crf");
    let test = read_ocr(&fixtures().join("ocr-test.data.gz")).unwrap();
    let limit = MemoryLimit::default();
    type Mangle = fn(&mut SequenceModel);
    let cases: Vec<(&str, Mangle)> = vec![
        ("coef", |m| {
            m.coef[0].pop();
        }),
        ("coefficient blocks", |m| {
            m.coef.pop();
        }),
        ("support row indices", |m| {
            m.support_rows.pop();
        }),
        ("support values", |m| {
            m.support.data.pop();
        }),
        ("support columns", |m| {
            m.support.cols -= 1;
            m.support.data.truncate(m.support.rows * m.support.cols);
        }),
        ("kernel", |m| m.groups[1].components[0].0 = 7),
        ("label-pair", |m| {
            m.transitions.pop();
        }),
        ("labels", |m| {
            m.labels.pop();
        }),
        ("kernel weights", |m| {
            m.weights.pop();
        }),
        ("group norms", |m| {
            m.group_norms.push(1.0);
        }),
        ("no labels", |m| m.labels.clear()),
        ("feature names", |m| m.feature_names = vec!["p".into()]),
    ];
    for (what, mangle) in cases {
        let mut m = good.clone();
        mangle(&mut m);
        let err = m.validate().unwrap_err();
        assert!(
            matches!(err, Error::ShapeMismatch { .. } | Error::Model { .. }),
            "{what}: {err}"
        );
        assert!(
            m.predict(&test.x, &test.spans, &limit).is_err(),
            "{what}: predicted"
        );
    }
    // Wrong input width: an error, not a panic.
    let narrow = test.x.select_cols(&(0..100).collect::<Vec<_>>());
    assert!(matches!(
        good.predict(&narrow, &test.spans, &limit),
        Err(Error::ShapeMismatch {
            expected: 128,
            found: 100,
            ..
        })
    ));
}
