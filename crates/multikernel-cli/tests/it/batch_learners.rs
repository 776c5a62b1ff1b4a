//! The batch learners end to end through the `multikernel` binary: `train --algo gomp |
//! lp-mkl | mirror-descent | ucd` on shipped UCI tables split into a training and a held-out
//! part (every third row held out), then `eval`, `predict` and `inspect`, and bad input that
//! must give a clear message and a non-zero exit (never a panic).

use std::path::Path;

use crate::common::*;

/// Writes `name.train.csv` (rows 1, 2, 4, 5, ...) and `name.test.csv` (every third row,
/// starting with the first) into `dir`; returns their paths.
fn split(dir: &Path, name: &str) -> (String, String) {
    let all = std::fs::read_to_string(data(&format!("{name}.csv"))).unwrap();
    let mut lines = all.lines();
    let header = lines.next().unwrap();
    let (mut tr, mut te) = (vec![header], vec![header]);
    for (i, l) in lines.filter(|l| !l.trim().is_empty()).enumerate() {
        if i % 3 == 0 {
            te.push(l);
        } else {
            tr.push(l);
        }
    }
    let write = |suffix: &str, rows: &[&str]| {
        let p = dir.join(format!("{name}.{suffix}.csv"));
        std::fs::write(&p, rows.join("\n") + "\n").unwrap();
        p.to_str().unwrap().to_string()
    };
    (write("train", &tr), write("test", &te))
}

fn rows_of(path: &str) -> usize {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .count()
}

/// The labels (last CSV field) of a file.
fn labels_of(path: &str) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.rsplit(',').next().unwrap().trim().to_string())
        .collect()
}

/// `eval`'s output: `n N` then `METRIC VALUE`.
fn eval(model: &str, file: &str, metric: &str) -> f64 {
    let out = ok(&["eval", "--model", model, "--data", file]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0], format!("n {}", rows_of(file)));
    lines[1]
        .strip_prefix(&format!("{metric} "))
        .unwrap_or_else(|| panic!("no {metric} in {out}"))
        .parse()
        .unwrap()
}

/// `predict`'s output file: one line per row.
fn predict(dir: &Path, model: &str, file: &str) -> Vec<String> {
    let p = dir.join("pred.txt");
    let ps = p.to_str().unwrap();
    ok(&["predict", "--model", model, "--data", file, "--out", ps]);
    let lines: Vec<String> = std::fs::read_to_string(&p)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), rows_of(file));
    lines
}

/// Accuracy of predicted labels against the file's labels, computed here (not by `eval`).
fn agreement(pred: &[String], file: &str) -> f64 {
    let truth = labels_of(file);
    assert_eq!(pred.len(), truth.len());
    pred.iter().zip(&truth).filter(|(p, t)| p == t).count() as f64 / truth.len() as f64
}

#[test]
fn gomp_binary_with_validation_chooses_a_path_length() {
    let dir = tempfile::tempdir().unwrap();
    let (tr, te) = split(dir.path(), "sonar");
    let model = dir.path().join("g.model");
    let m = model.to_str().unwrap();
    // The whole path (20 kernels), then a path length chosen on the held-out rows.
    let out = ok(&[
        "train",
        "--select",
        "none",
        "--kernel",
        "perfeature:linear",
        "--algo",
        "gomp",
        "--data",
        &tr,
        "--max-kernels",
        "20",
        "--out",
        m,
    ]);
    assert!(out.contains("20 of 60 kernels chosen"), "{out}");
    let full_test = eval(m, &te, "accuracy");
    let out = ok(&[
        "train",
        "--select",
        "none",
        "--kernel",
        "perfeature:linear",
        "--algo",
        "gomp",
        "--data",
        &tr,
        "--max-kernels",
        "20",
        "--validation",
        &te,
        "--out",
        m,
    ]);
    let chosen: usize = out
        .split("path length ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no chosen length in {out}"));
    assert!((1..=20).contains(&chosen), "{out}");
    // The chosen kernels are listed in order with their improvements.
    let listed: Vec<&str> = out.lines().filter(|l| l.contains("linear[")).collect();
    assert_eq!(listed.len(), chosen, "{out}");
    assert!(listed[0].trim_start().starts_with("1 "), "{out}");
    // Chosen to minimize the held-out error over all lengths, so it is at least as good
    // there as the full path.
    let test = eval(m, &te, "accuracy");
    assert!(test >= full_test, "{test} < {full_test}");
    assert!(test > 0.75, "held-out accuracy {test}");
    assert!(eval(m, &tr, "accuracy") > 0.8);
    let pred = predict(dir.path(), m, &te);
    assert!(pred.iter().all(|p| p == "M" || p == "R"), "{pred:?}");
    assert!((agreement(&pred, &te) - test).abs() < 1e-3);
    let out = ok(&["inspect", "--model", m]);
    assert!(out.contains("MKL-GOMP"), "{out}");
    assert!(
        out.contains(&format!("{chosen} of 60 kernels chosen")),
        "{out}"
    );
    assert_eq!(
        out.lines().filter(|l| l.contains("linear[")).count(),
        chosen
    );
}

#[test]
fn gomp_and_lp_mkl_multiclass_glass() {
    let dir = tempfile::tempdir().unwrap();
    let (tr, te) = split(dir.path(), "glass");
    let classes = ["1", "2", "3", "5", "6", "7"];
    let model = dir.path().join("m.model");
    let m = model.to_str().unwrap();
    let kernels = [
        "--kernel",
        "perfeature:linear",
        "--kernel",
        "perfeature:rbf",
        "--kernel",
        "rbf",
    ];
    for algo in [
        &["--algo", "gomp"][..],
        &["--algo", "lp-mkl", "--p", "2"][..],
    ] {
        let mut args = vec![
            "train",
            "--select",
            "none",
            "--task",
            "multiclass",
            "--data",
            &tr,
            "--out",
            m,
        ];
        args.extend_from_slice(algo);
        args.extend_from_slice(&kernels);
        ok(&args);
        // The largest class holds 35% of the rows.
        let train = eval(m, &tr, "accuracy");
        let test = eval(m, &te, "accuracy");
        assert!(train > 0.8 && test > 0.5, "{algo:?}: {train} {test}");
        let pred = predict(dir.path(), m, &te);
        assert!(pred.iter().all(|p| classes.contains(&p.as_str())));
        assert!(out_has_classes(&ok(&["inspect", "--model", m])));
    }
}

fn out_has_classes(inspect: &str) -> bool {
    inspect.contains("classes: 1, 2, 3, 5, 6, 7") && inspect.contains("task: multiclass")
}

#[test]
fn lp_mkl_binary_and_regression() {
    let dir = tempfile::tempdir().unwrap();
    let (tr, te) = split(dir.path(), "sonar");
    let model = dir.path().join("l.model");
    let m = model.to_str().unwrap();
    let out = ok(&[
        "train",
        "--select",
        "none",
        "--kernel",
        "perfeature:linear",
        "--algo",
        "lp-mkl",
        "--p",
        "4/3",
        "--data",
        &tr,
        "--out",
        m,
    ]);
    assert!(out.contains("p 4/3"), "{out}");
    let test = eval(m, &te, "accuracy");
    assert!(test > 0.75, "held-out accuracy {test}");
    let out = ok(&["inspect", "--model", m, "--all"]);
    // Every kernel of the dictionary with its weight; ||theta||_{4/3} = 1.
    let thetas: Vec<f64> = out
        .lines()
        .filter(|l| l.contains("linear["))
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(thetas.len(), 60, "{out}");
    let norm: f64 = thetas.iter().map(|t: &f64| t.powf(4.0 / 3.0)).sum();
    assert!((norm - 1.0).abs() < 1e-3, "{norm}");

    let (tr, te) = split(dir.path(), "boston-housing");
    ok(&[
        "train",
        "--select",
        "none",
        "--kernel",
        "perfeature:linear",
        "--task",
        "regression",
        "--algo",
        "lp-mkl",
        "--p",
        "inf",
        "--data",
        &tr,
        "--out",
        m,
    ]);
    // Predicting the mean gives about 84 (the target variance); linear regression ~24.
    let mse = eval(m, &te, "mse");
    assert!(mse < 35.0, "held-out mse {mse}");
    let pred = predict(dir.path(), m, &te);
    let truth: Vec<f64> = labels_of(&te).iter().map(|t| t.parse().unwrap()).collect();
    let own: f64 = pred
        .iter()
        .zip(&truth)
        .map(|(p, t)| (p.parse::<f64>().unwrap() - t).powi(2))
        .sum::<f64>()
        / truth.len() as f64;
    assert!((own - mse).abs() < 1e-3 * mse.max(1.0), "{own} vs {mse}");
}

#[test]
fn mirror_descent_binary_lists_product_kernels() {
    let dir = tempfile::tempdir().unwrap();
    let (tr, te) = split(dir.path(), "sonar");
    let model = dir.path().join("p.model");
    let m = model.to_str().unwrap();
    let out = ok(&[
        "train",
        "--select",
        "none",
        "--algo",
        "mirror-descent",
        "--seconds",
        "0.8",
        "--seed",
        "3",
        "--data",
        &tr,
        "--out",
        m,
    ]);
    assert!(out.contains("mirror descent: degree 3"), "{out}");
    assert!(eval(m, &tr, "accuracy") > 0.9);
    let test = eval(m, &te, "accuracy");
    assert!(test > 0.75, "held-out accuracy {test}");
    let pred = predict(dir.path(), m, &te);
    assert!(pred.iter().all(|p| p == "M" || p == "R"));
    let out = ok(&["inspect", "--model", m]);
    // C(60 + 3, 3) = 39711 product kernels; multi-indices such as x12 or x4^2*x9.
    assert!(out.contains("39711 product kernels"), "{out}");
    assert!(out.contains("settings: sampling stoch, degree 3"), "{out}");
    // Weight lines: a number, then a multi-index (x12, x4^2*x9, or 1 for the constant).
    let listed = out
        .lines()
        .filter(|l| {
            let mut t = l.split_whitespace();
            t.next().is_some_and(|w| w.parse::<f64>().is_ok())
                && t.next().is_some_and(|k| k.starts_with('x') || k == "1")
        })
        .count();
    let own: usize = out
        .split("kernels with their own weight: ")
        .nth(1)
        .and_then(|s| s.lines().next())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("no kernel count in {out}"));
    assert_eq!(listed, own.min(40), "{out}");
    if own > 40 {
        assert!(out.contains(&format!("... {} more", own - 40)), "{out}");
    }
}

#[test]
fn ucd_regression_predicts_values() {
    let dir = tempfile::tempdir().unwrap();
    let (tr, te) = split(dir.path(), "boston-housing");
    let model = dir.path().join("u.model");
    let m = model.to_str().unwrap();
    let out = ok(&[
        "train",
        "--select",
        "none",
        "--task",
        "regression",
        "--algo",
        "ucd",
        "--poly-degree",
        "2",
        "--seconds",
        "0.8",
        "--data",
        &tr,
        "--out",
        m,
    ]);
    // C(13 + 2, 2) = 105 product kernels.
    assert!(out.contains("UCD: degree 2"), "{out}");
    assert!(out.contains("105 product kernels"), "{out}");
    let mse = eval(m, &te, "mse");
    assert!(mse < 25.0, "held-out mse {mse}");
    let pred = predict(dir.path(), m, &te);
    assert!(pred
        .iter()
        .all(|p| p.parse::<f64>().is_ok_and(f64::is_finite)));
    let out = ok(&["inspect", "--model", m]);
    assert!(out.contains("sampling ucd, degree 2"), "{out}");
    assert!(out.contains("x1 = crim, x2 = zn"), "{out}");
}

#[test]
fn batch_learners_refuse_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.model");
    let m = model.to_str().unwrap();
    let sonar = data("sonar.csv");
    let s = sonar.to_str().unwrap();
    let glass = data("glass.csv");
    let g = glass.to_str().unwrap();
    let train = |extra: &[&str]| {
        let mut args = vec!["train", "--select", "none", "--data", s, "--out", m];
        args.extend_from_slice(extra);
        run(&args)
    };
    assert_clean_error(
        &train(&["--algo", "gomp", "--task", "sequence"]),
        &["gomp", "online learner"],
    );
    assert_clean_error(&train(&["--algo", "lp-mkl"]), &["needs --p"]);
    assert_clean_error(&train(&["--algo", "lp-mkl", "--p", "0.5"]), &[">= 1"]);
    assert_clean_error(
        &train(&["--algo", "gomp", "--validation", g]),
        &["--validation", "glass.csv", "missing", "V1"],
    );
    assert_clean_error(
        &train(&["--algo", "gomp", "--max-kernels", "0"]),
        &["at least 1"],
    );
    assert_clean_error(
        &train(&["--algo", "mirror-descent", "--seconds", "0"]),
        &["--seconds"],
    );
    assert_clean_error(&train(&["--algo", "gomp", "--reg", "l1"]), &["--reg"]);
    assert_clean_error(
        &train(&["--algo", "gomp", "--task", "regression"]),
        &["not a number"],
    );
    assert!(!model.exists(), "no model is written on errors");
    let mut args = vec![
        "train",
        "--select",
        "none",
        "--data",
        g,
        "--out",
        m,
        "--task",
        "multiclass",
    ];
    args.extend_from_slice(&["--algo", "ucd"]);
    assert_clean_error(&run(&args), &["binary or regression"]);
    assert_clean_error(
        &run(&[
            "train", "--select", "none", "--data", g, "--out", m, "--algo", "gomp",
        ]),
        &["exactly 2 classes", "multiclass task"],
    );
    // A trained model refuses a file with other features.
    ok(&[
        "train", "--select", "none", "--algo", "gomp", "--data", s, "--out", m,
    ]);
    assert_clean_error(
        &run(&["eval", "--model", m, "--data", g]),
        &["glass.csv:1", "missing", "V1"],
    );
    assert_clean_error(
        &run(&["predict", "--model", m, "--data", g]),
        &["glass.csv:1", "missing", "V1"],
    );
}

/// `--C` means the same for both learners: MKL-GOMP with every kernel chosen refits
/// `(sum_j K_j + lambda l I)^-1 y` with `lambda = 1/(C l)`, lp-MKL with p = inf solves
/// `(sum_j K_j + lambda I)^-1 y` with `lambda = 1/C`: the same kernel ridge regression.
#[test]
fn gomp_with_every_kernel_equals_lp_mkl_inf_under_the_same_c() {
    let dir = tempfile::tempdir().unwrap();
    let (tr, te) = split(dir.path(), "boston-housing");
    let model = dir.path().join("m.model");
    let m = model.to_str().unwrap();
    let common = [
        "--task",
        "regression",
        "--C",
        "0.5",
        "--data",
        &tr,
        "--out",
        m,
    ];
    let mut args = vec![
        "train",
        "--select",
        "none",
        "--kernel",
        "perfeature:linear",
        "--algo",
        "gomp",
        "--max-kernels",
        "13",
        "--eps",
        "0",
    ];
    args.extend_from_slice(&common);
    let out = ok(&args);
    assert!(out.contains("13 of 13 kernels chosen"), "{out}");
    let gomp = predict(dir.path(), m, &te);
    let mut args = vec![
        "train",
        "--select",
        "none",
        "--kernel",
        "perfeature:linear",
        "--algo",
        "lp-mkl",
        "--p",
        "inf",
    ];
    args.extend_from_slice(&common);
    ok(&args);
    let lp = predict(dir.path(), m, &te);
    for (a, b) in gomp.iter().zip(&lp) {
        let (a, b): (f64, f64) = (a.parse().unwrap(), b.parse().unwrap());
        assert!((a - b).abs() < 1e-6 * (1.0 + a.abs()), "{a} vs {b}");
    }
}

/// `generate polynomial` writes the Sec. 5.2 problem; mirror descent with an iteration
/// budget is reproducible (same seed, same model file) and learns it far better than the
/// mean; unknown generators and empty sizes are clean errors.
#[test]
fn generated_polynomial_data_and_iteration_budget() {
    let dir = tempfile::tempdir().unwrap();
    let path = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    for (file, n, seed) in [("train.csv", "300", "1"), ("test.csv", "300", "2")] {
        let args = [
            "generate",
            "polynomial",
            "--n",
            n,
            "--r",
            "4",
            "--seed",
            seed,
            "--out",
        ];
        ok(&[&args[..], &[path(file).as_str()]].concat());
    }
    let text = std::fs::read_to_string(path("train.csv")).unwrap();
    assert_eq!(text.lines().next().unwrap(), "x1,x2,x3,x4,y");
    assert_eq!(text.lines().count(), 301);
    let mut models = Vec::new();
    for m in ["a.json", "b.json"] {
        let args = [
            "train",
            "--select",
            "none",
            "--task",
            "regression",
            "--algo",
            "mirror-descent",
            "--kernel",
            "perfeature:linear",
            "--poly-degree",
            "3",
            "--lambda",
            "1e-3",
            "--max-iter",
            "200",
            "--data",
        ];
        let (train, model) = (path("train.csv"), path(m));
        ok(&[&args[..], &[train.as_str(), "--out", model.as_str()]].concat());
        models.push(std::fs::read_to_string(&model).unwrap());
    }
    assert_eq!(
        models[0], models[1],
        "same seed and iterations, different models"
    );
    let mse = eval(&path("a.json"), &path("test.csv"), "mse");
    let y: Vec<f64> = std::fs::read_to_string(path("test.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
        .collect();
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    let var = y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / y.len() as f64;
    assert!(mse < 0.2 * var, "test mse {mse} against variance {var}");
    let bad = run(&["generate", "spiral", "--n", "5", "--out", &path("x.csv")]);
    assert_clean_error(&bad, &["data set spiral", "polynomial"]);
    let empty = run(&["generate", "ringnorm", "--n", "0", "--out", &path("x.csv")]);
    assert_clean_error(&empty, &["--n"]);
    assert!(!dir.path().join("x.csv").exists());
}
