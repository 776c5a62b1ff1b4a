//! The parser end to end through the `multikernel` binary on the shipped Turkish Web
//! Treebank: `train --task parsing` on folds (hinge and `--loss crf`), `eval` (counts, then LAS, UAS without `ig`,
//! UAS last), `predict` (CoNLL-U with HEAD and DEPREL filled), `inspect` (templates and
//! their norms), and bad treebanks and template files that must give a one-line error with
//! the file and line and a non-zero exit.

use std::path::PathBuf;

use crate::common::*;

fn treebank() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/treebank/tr-web.conllu.gz")
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
#[ignore = "full tier: a parser trained on TWT, 7 s"]
fn train_eval_predict_inspect() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("web.model");
    let m = model.to_str().unwrap();
    let tb = treebank();
    ok(&[
        "train",
        "--select",
        "none",
        "--task",
        "parsing",
        "--data",
        &tb,
        "--train-folds",
        "0-3",
        "--validation-folds",
        "8",
        "--epochs",
        "3",
        "--lambda",
        "1e-3",
        "--out",
        m,
    ]);
    let out = ok(&["eval", "--model", m, "--data", &tb, "--test-folds", "9"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "sentences 254");
    assert_eq!(lines[1], "tokens 3256");
    assert!(lines[2].starts_with("scored "));
    assert!(lines[3].starts_with("las "));
    assert!(lines[4].starts_with("uas_no_ig "));
    let uas: f64 = lines[5].strip_prefix("uas ").unwrap().parse().unwrap();
    // Half the training folds, three epochs: far above the right-attach floor (54.0).
    assert!(uas > 80.0, "{out}");
    // predict: the same tokens, every HEAD and DEPREL filled, a tree per sentence.
    let pred = dir.path().join("pred.conllu");
    ok(&[
        "predict",
        "--model",
        m,
        "--data",
        &tb,
        "--test-folds",
        "9",
        "--out",
        pred.to_str().unwrap(),
    ]);
    let again = ok(&["eval", "--model", m, "--data", pred.to_str().unwrap()]);
    // Parsing the parser's own output gives its own trees back: UAS and LAS 100.
    assert!(again.ends_with("uas 100.00\n"), "{again}");
    assert!(again.contains("las 100.00\n"), "{again}");
    let inspect = ok(&["inspect", "--model", m, "--all"]);
    assert!(inspect.contains("h.upos b.upos d.upos"), "{inspect}");
    assert!(inspect.contains("templates kept"), "{inspect}");
    // Dependent-only templates cannot tell one head from another: never updated.
    assert!(inspect.contains("d.upos (pruned)"), "{inspect}");
}

/// `--loss crf` trains a parser (it was refused before issue 29), non-projective and
/// projective, and the model parses with the usual decoders.
#[test]
#[ignore = "full tier: CRF parsers trained on TWT, 7 s"]
fn crf_loss_trains_a_parser() {
    let dir = tempfile::tempdir().unwrap();
    let tb = treebank();
    for projective in [false, true] {
        let model = dir.path().join(format!("crf-{projective}.model"));
        let m = model.to_str().unwrap();
        let mut args = vec![
            "train",
            "--select",
            "none",
            "--task",
            "parsing",
            "--loss",
            "crf",
            "--data",
            &tb,
            "--train-folds",
            "0-1",
            "--epochs",
            "2",
            "--lambda",
            "1e-3",
            "--out",
            m,
        ];
        if projective {
            args.push("--projective");
        }
        ok(&args);
        let out = ok(&["eval", "--model", m, "--data", &tb, "--test-folds", "9"]);
        let uas: f64 = out
            .lines()
            .last()
            .and_then(|l| l.strip_prefix("uas "))
            .unwrap()
            .parse()
            .unwrap();
        assert!(uas > 75.0, "projective {projective}: {out}");
    }
}

#[test]
fn bad_treebanks_and_templates_are_refused_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m");
    let o = out.to_str().unwrap();
    let t = "\t";
    let cases = [
        (format!("1{t}a{t}a{t}X{t}X{t}_{t}0{t}root{t}_\n"), ":1: expected 10 tab-separated columns"),
        (
            format!("1{t}a{t}a{t}X{t}X{t}_{t}0{t}root{t}_{t}_\n2{t}b{t}b{t}X{t}X{t}_{t}7{t}dep{t}_{t}_\n"),
            ":2: HEAD 7 is out of range",
        ),
        (
            format!("1{t}a{t}a{t}X{t}X{t}_{t}2{t}d{t}_{t}_\n2{t}b{t}b{t}X{t}X{t}_{t}1{t}d{t}_{t}_\n"),
            ":1: no token is attached to the root",
        ),
        (
            format!("1{t}a{t}a{t}X{t}X{t}_{t}0{t}d{t}_{t}_\n2{t}b{t}b{t}X{t}X{t}_{t}3{t}d{t}_{t}_\n3{t}c{t}c{t}X{t}X{t}_{t}2{t}d{t}_{t}_\n"),
            "form a cycle",
        ),
        (format!("1{t}a{t}a{t}X{t}X{t}_{t}x{t}d{t}_{t}_\n"), ":1: HEAD 'x' is not a token number"),
    ];
    for (k, (text, needle)) in cases.iter().enumerate() {
        let p = dir.path().join(format!("bad{k}.conllu"));
        std::fs::write(&p, text).unwrap();
        let r = run(&[
            "train",
            "--select",
            "none",
            "--task",
            "parsing",
            "--data",
            p.to_str().unwrap(),
            "--out",
            o,
        ]);
        assert_clean_error(&r, &[&format!("bad{k}.conllu"), needle]);
        assert!(!out.exists(), "no model is written on bad input");
    }
    let tpl = dir.path().join("t.templates");
    std::fs::write(&tpl, "h.form\nh.colour d.upos\n").unwrap();
    let r = run(&[
        "train",
        "--select",
        "none",
        "--task",
        "parsing",
        "--data",
        &treebank(),
        "--templates",
        tpl.to_str().unwrap(),
        "--out",
        o,
    ]);
    assert_clean_error(
        &r,
        &[
            "t.templates:2: unknown attribute 'colour'",
            "known attributes: form",
        ],
    );
    let r = run(&[
        "train",
        "--select",
        "none",
        "--task",
        "parsing",
        "--data",
        &treebank(),
        "--kernel",
        "rbf",
        "--out",
        o,
    ]);
    assert_clean_error(&r, &["templates, not kernels"]);
    let r = run(&[
        "train",
        "--select",
        "none",
        "--task",
        "binary",
        "--data",
        &treebank(),
        "--templates",
        "x",
        "--out",
        o,
    ]);
    assert_clean_error(&r, &["--templates applies to --task parsing"]);
}
