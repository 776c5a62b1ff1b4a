//! `train --weight-column NAME` and `--class-weight` end to end: an integer weight is the
//! row repeated (lp-MKL with fixed kernels, unstandardized), and bad weights or a learner
//! without them give a clear message with the file and line.

use crate::common::*;

/// Rows `a,b` with a label by a noisy circle (deterministic).
fn rows(n: usize, seed: u64) -> Vec<(f64, f64, &'static str)> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) * 4.0 - 2.0
    };
    (0..n)
        .map(|_| {
            let (a, b) = (next(), next());
            let noise = next() / 4.0;
            (
                a,
                b,
                if a * a + b * b + noise > 2.0 {
                    "out"
                } else {
                    "in"
                },
            )
        })
        .collect()
}

const FIXED: [&str; 11] = [
    "--algo",
    "lp-mkl",
    "--p",
    "2",
    "--C",
    "3",
    "--kernel",
    "rbf:sigma2=2,norm=none",
    "--kernel",
    "linear:norm=none",
    "--no-standardize",
];

#[test]
fn integer_weights_train_what_repeated_rows_train() {
    let dir = tempfile::tempdir().unwrap();
    let p = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    let train = rows(30, 1);
    let mut weighted = String::from("a,w,b,label\n");
    let mut repeated = String::from("a,b,label\n");
    for (i, (a, b, l)) in train.iter().enumerate() {
        let k = (i * 7 + 3) % 4;
        weighted.push_str(&format!("{a},{k},{b},{l}\n"));
        for _ in 0..k {
            repeated.push_str(&format!("{a},{b},{l}\n"));
        }
    }
    let mut test = String::from("a,b,label\n");
    for (a, b, l) in rows(40, 2) {
        test.push_str(&format!("{a},{b},{l}\n"));
    }
    std::fs::write(p("w.csv"), weighted).unwrap();
    std::fs::write(p("r.csv"), repeated).unwrap();
    std::fs::write(p("t.csv"), test).unwrap();
    let (wm, rm) = (p("w.model"), p("r.model"));
    let w_csv = p("w.csv");
    let mut args = vec![
        "train",
        "--data",
        &w_csv,
        "--weight-column",
        "w",
        "--out",
        &wm,
    ];
    args.extend(FIXED);
    ok(&args);
    let r_csv = p("r.csv");
    let mut args = vec!["train", "--data", &r_csv, "--out", &rm];
    args.extend(FIXED);
    ok(&args);
    let predict = |model: &str, out: &str| {
        let t = p("t.csv");
        ok(&["predict", "--model", model, "--data", &t, "--out", out]);
        std::fs::read_to_string(out).unwrap()
    };
    assert_eq!(predict(&wm, &p("w.pred")), predict(&rm, &p("r.pred")));
    // Class weights on the same file: balanced, and a label's own.
    for cw in ["balanced", "in:1,out:2.5"] {
        let mut args = vec![
            "train",
            "--data",
            &w_csv,
            "--weight-column",
            "w",
            "--class-weight",
            cw,
            "--out",
            &wm,
        ];
        args.extend(FIXED);
        ok(&args);
    }
}

#[test]
fn bad_weights_name_the_file_line_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.csv");
    let fs = f.to_str().unwrap();
    let out = dir.path().join("m.model");
    let os = out.to_str().unwrap();
    std::fs::write(&f, "a,w,label\n1,1,x\n2,-3,y\n3,1,x\n4,1,y\n").unwrap();
    let train = |extra: &[&str]| {
        let mut args = vec![
            "train", "--data", fs, "--out", os, "--algo", "lp-mkl", "--p", "2", "--C", "1",
        ];
        args.extend(extra);
        run(&args)
    };
    assert_clean_error(
        &train(&["--weight-column", "w"]),
        &["bad.csv:3", "-3", ">= 0"],
    );
    assert_clean_error(
        &train(&["--weight-column", "weight"]),
        &["bad.csv:1", "no column named `weight`", "a, w, label"],
    );
    assert_clean_error(&train(&["--weight-column", "label"]), &["target column"]);
    std::fs::write(&f, "a,w,label\n1,1,x\n2,2,y\n3,1,x\n4,1,y\n").unwrap();
    let gomp = [
        "train",
        "--data",
        fs,
        "--out",
        os,
        "--algo",
        "gomp",
        "--C",
        "1",
        "--weight-column",
        "w",
    ];
    assert_clean_error(&run(&gomp), &["gomp", "row weights", "lp-mkl"]);
    let svm = dir.path().join("rows.libsvm");
    std::fs::write(&svm, "x 1:1\ny 1:2\nx 1:3\ny 1:4\n").unwrap();
    let svm_args = [
        "train",
        "--data",
        svm.to_str().unwrap(),
        "--out",
        os,
        "--algo",
        "lp-mkl",
        "--p",
        "2",
        "--C",
        "1",
    ];
    let mut with_column = svm_args.to_vec();
    with_column.extend(["--weight-column", "w"]);
    assert_clean_error(&run(&with_column), &["rows.libsvm", "LIBSVM"]);
    let mut balanced = svm_args.to_vec();
    balanced.extend(["--class-weight", "balanced"]);
    ok(&balanced);
    assert_clean_error(
        &train(&["--class-weight", "x:one"]),
        &["one", "not a number"],
    );
    assert_clean_error(&train(&["--class-weight", "z:2"]), &["no class `z`"]);
    assert_clean_error(
        &train(&["--class-weight", "balanced", "--task", "regression"]),
        &["regression"],
    );
}
