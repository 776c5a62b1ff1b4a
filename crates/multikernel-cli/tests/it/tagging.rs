//! Template tagging end to end through the `multikernel` binary: `convert` the shipped
//! treebank to CRF++ columns, `train --task sequence --format columns --templates` with SPOM
//! and with multi-template learning, `eval` (last line `accuracy`, or `f1` for chunk labels),
//! `predict` (the input columns with the predicted label appended, readable as columns
//! again), `score` (conlleval on two columns), `inspect`, and bad files that must give a
//! one-line error with the file and line and a non-zero exit.

use crate::common::*;

fn last_value(out: &str, key: &str) -> f64 {
    let line = out.lines().last().unwrap();
    let (k, v) = line.split_once(' ').unwrap();
    assert_eq!(k, key, "{out}");
    v.parse().unwrap()
}

#[test]
#[ignore = "full tier: a tagger trained on TWT columns, 3 s"]
fn convert_train_eval_predict_score_inspect() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let tb = repo("data/treebank/tr-web.conllu.gz");
    for (folds, name) in [("0-1", "train.txt"), ("8", "dev.txt"), ("9", "test.txt")] {
        ok(&[
            "convert",
            "--data",
            &tb,
            "--folds",
            folds,
            "--out",
            &p(name),
        ]);
    }
    let tpl = repo("data/tagging/twt-upos-small.templates");
    let (train, dev, model) = (p("train.txt"), p("dev.txt"), p("m.model"));
    for algo in [
        &["--algo", "online", "--reg", "l21sq", "--epochs", "5"][..],
        &["--algo", "mtl", "--q", "1", "--eps", "0.3"][..],
    ] {
        let mut args = columns_train_args(&train);
        args.extend([
            "--templates",
            &tpl,
            "--C",
            "1",
            "--validation",
            &dev,
            "--out",
            &model,
        ]);
        args.extend_from_slice(algo);
        let out = ok(&args);
        assert!(out.contains("templates kept"), "{out}");
        let acc = last_value(
            &ok(&["eval", "--model", &p("m.model"), "--data", &p("test.txt")]),
            "accuracy",
        );
        assert!(acc > 80.0, "{algo:?}: {acc}");
        let pred = ok(&[
            "predict",
            "--model",
            &p("m.model"),
            "--data",
            &p("test.txt"),
            "--out",
            &p("pred.txt"),
        ]);
        assert!(pred.is_empty());
        // The prediction file: the test file's columns and one more; score agrees with eval.
        let scored = ok(&["score", "--data", &p("pred.txt")]);
        assert!(
            (last_value(&scored, "accuracy") - acc).abs() < 1e-9,
            "{scored}"
        );
        let inspect = ok(&["inspect", "--model", &p("m.model")]);
        assert!(
            inspect.contains("U00:%x[0,1]") && inspect.contains("sequence"),
            "{inspect}"
        );
    }
}

/// `--separation-step` reaches the cutting plane: the paper's loop (1) and the default (cuts
/// found inside the segment) take different numbers of cuts to the same tolerance, both
/// converged; a step outside (0, 1] is refused before any work.
#[test]
fn the_separation_step_reaches_the_cutting_plane() {
    let dir = tempfile::tempdir().unwrap();
    let train = dir.path().join("train.txt").to_str().unwrap().to_string();
    let model = dir.path().join("m.model").to_str().unwrap().to_string();
    let tb = repo("data/treebank/tr-web.conllu.gz");
    ok(&["convert", "--data", &tb, "--folds", "0-1", "--out", &train]);
    let tpl = repo("data/tagging/twt-upos-small.templates");
    let args = |step: Option<&'static str>| {
        let mut a = columns_train_args(&train);
        a.extend([
            "--templates",
            &tpl,
            "--C",
            "1",
            "--algo",
            "mtl",
            "--eps",
            "0.3",
        ]);
        a.extend(["--out", &model]);
        if let Some(s) = step {
            a.extend(["--separation-step", s]);
        }
        a
    };
    let cuts = |log: &str| -> usize {
        let line = log.lines().find(|l| l.starts_with("trained mtl")).unwrap();
        assert!(line.contains("converged"), "{line}");
        let words: Vec<&str> = line.split_whitespace().collect();
        let i = words
            .iter()
            .position(|w| w.starts_with("iterations"))
            .unwrap();
        words[i - 1].parse().unwrap()
    };
    let trained = |step| {
        let o = run(&args(step));
        let (out, err) = text(&o);
        assert!(o.status.success(), "stdout {out}\nstderr {err}");
        cuts(&err)
    };
    let (inside, paper) = (trained(None), trained(Some("1")));
    assert_ne!(
        inside, paper,
        "the same {inside} cuts with and without the paper's loop"
    );
    for bad in ["0", "1.5"] {
        assert_clean_error(&run(&args(Some(bad))), &["--separation-step"]);
    }
}

#[test]
fn chunk_labels_are_scored_by_f1() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let mut train = String::new();
    for k in 0..30 {
        let w = ["the", "big", "dog", "ran", "home"];
        let l = ["B-NP", "I-NP", "I-NP", "B-VP", "B-NP"];
        for i in 0..5 {
            train.push_str(&format!(
                "{}{} {}\n",
                w[i],
                if k % 2 == 0 { "" } else { "s" },
                l[i]
            ));
        }
        train.push('\n');
    }
    std::fs::write(p("train.txt"), &train).unwrap();
    std::fs::write(p("tpl"), "U00:%x[0,0]\nU01:%x[-1,0]\nB\n").unwrap();
    ok(&[
        "train",
        "--select",
        "none",
        "--task",
        "sequence",
        "--templates",
        &p("tpl"),
        "--data",
        &p("train.txt"),
        "--epochs",
        "5",
        "--out",
        &p("m"),
    ]);
    let out = ok(&["eval", "--model", &p("m"), "--data", &p("train.txt")]);
    assert_eq!(last_value(&out, "f1"), 100.0, "{out}");
    assert!(out.contains("chunks_gold 90"), "{out}");
    // `--epochs` is a setting of the online learner only, so that run was SPOM; without it a
    // template tagger's default learner is multi-template learning (the cutting plane).
    let learner = |model: &str| {
        let out = ok(&["inspect", "--model", model]);
        out.lines()
            .find(|l| l.starts_with("settings:"))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        !learner(&p("m")).contains("cutting plane"),
        "{}",
        learner(&p("m"))
    );
    ok(&[
        "train",
        "--select",
        "none",
        "--task",
        "sequence",
        "--templates",
        &p("tpl"),
        "--data",
        &p("train.txt"),
        "--out",
        &p("m2"),
    ]);
    assert!(
        learner(&p("m2")).contains("cutting plane, q 1"),
        "{}",
        learner(&p("m2"))
    );
    let out = ok(&["eval", "--model", &p("m2"), "--data", &p("train.txt")]);
    assert_eq!(last_value(&out, "f1"), 100.0, "{out}");
}

#[test]
fn bad_files_give_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    std::fs::write(p("ok.txt"), "a X B-NP\nb Y I-NP\n\nc Z O\n").unwrap();
    std::fs::write(p("ragged.txt"), "a X B-NP\nb Y\n").unwrap();
    std::fs::write(p("empty.txt"), "\n\n  \n").unwrap();
    std::fs::write(p("ok.tpl"), "U00:%x[0,0]\nB\n").unwrap();
    std::fs::write(p("col.tpl"), "# comment\nU00:%x[0,5]\n").unwrap();
    std::fs::write(p("macro.tpl"), "U00:%x[0;0]\n").unwrap();
    let train = |data: &str, tpl: &str| {
        run(&[
            "train",
            "--select",
            "none",
            "--task",
            "sequence",
            "--templates",
            &p(tpl),
            "--data",
            &p(data),
            "--out",
            &p("m"),
        ])
    };
    assert_clean_error(
        &train("ragged.txt", "ok.tpl"),
        &["ragged.txt:2", "expected 3 columns"],
    );
    assert_clean_error(&train("ok.txt", "col.tpl"), &["col.tpl:2", "column 5"]);
    assert_clean_error(&train("empty.txt", "ok.tpl"), &["empty.txt:1", "no tokens"]);
    assert_clean_error(
        &train("ok.txt", "macro.tpl"),
        &["macro.tpl:1", "%x[row,col]"],
    );
    assert!(!dir.path().join("m").exists(), "no model is written");
    assert_clean_error(
        &run(&[columns_train_args(&p("ok.txt")), vec!["--out", &p("m")]].concat()),
        &["--templates"],
    );
    assert_clean_error(
        &run(&["score", "--data", &p("ragged.txt")]),
        &["ragged.txt:2"],
    );
}

/// Issue 46, item 3: the 250-label file with a bigram template with macros under
/// `--memory-limit-gb 0.05` is refused before the label-pair parts are built, the message
/// naming the template, the labels and the estimate; `predict` and `eval` refuse a limit
/// below the sentences' buffers the same way; a limit that is not a positive number of GiB
/// is a usage error of all three commands, and `inf` means no limit.
#[test]
fn label_pairs_over_the_memory_limit_are_refused_with_the_estimate() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m").to_str().unwrap().to_string();
    let (data, tpl) = label_pair_files(dir.path(), 250);
    let train = |data: &str, limit: &str| {
        let mut args = columns_train_args(data);
        args.extend(["--templates", &tpl, "--epochs", "1", "--out", &model]);
        let flag = format!("--memory-limit-gb={limit}");
        args.push(&flag);
        run(&args)
    };
    assert_clean_error(
        &train(&data, "0.05"),
        &[
            "training a tagger with 250 labels",
            "B01:%x[0,1]",
            "380 positions",
            "needs 0.",
            "GiB but the memory limit is 51.2 MiB",
            "(--memory-limit-gb 1)",
        ],
    );
    assert!(!dir.path().join("m").exists(), "no model is written");
    let (small, _) = label_pair_files(dir.path(), 20);
    assert!(train(&small, "inf").status.success());
    for cmd in ["predict", "eval"] {
        assert_clean_error(
            &run(&[
                cmd,
                "--model",
                &model,
                "--data",
                &small,
                "--memory-limit-gb",
                "0.000001",
            ]),
            &["tagging with 20 labels", "B01:%x[0,1]", "sentence buffers"],
        );
    }
    for bad in ["-1", "NaN", "0", "-inf", "lots"] {
        let o = train(&small, bad);
        assert_eq!(o.status.code(), Some(2), "train {bad}");
        assert_clean_error(&o, &["--memory-limit-gb", "positive number of GiB"]);
        for cmd in ["predict", "eval"] {
            let o = run(&[
                cmd,
                "--model",
                &model,
                "--data",
                &small,
                "--memory-limit-gb",
                bad,
            ]);
            assert_eq!(o.status.code(), Some(2), "{cmd} {bad}");
            if bad != "-inf" {
                // (`-inf` after a space reads as a flag: clap's own usage error.)
                assert_clean_error(&o, &["--memory-limit-gb", "positive number of GiB"]);
            }
        }
    }
}
