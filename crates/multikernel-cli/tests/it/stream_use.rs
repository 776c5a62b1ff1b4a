//! `multikernel eval` and `predict` on tables read chunk by chunk: the same score and the
//! same predictions as the whole file read at once (computed here through the library's
//! whole-file reader) in every chunk size; a malformed row deep in the file exits 1 naming
//! the file and line, keeps an older `--out` file and leaves no temporary file.

use crate::common::{
    assert_clean_error, bad_rows_at_line_4001, data, ok, ringnorm, run, temp_files, text,
};
use multikernel::data::{read_for_model, Targets};
use multikernel::kernel::MemoryLimit;
use multikernel::model::Model;
use std::path::Path;

/// A streamed model of ringnorm rows (one epoch of 64 random Fourier features).
fn ring_model(dir: &Path) -> String {
    let train = ringnorm(dir, "train.csv", 2000, 1);
    let m = dir.join("m.json").to_str().unwrap().to_string();
    ok(&[
        "train",
        "--stream",
        "--kernel",
        "rbf:approx=rff,dim=64",
        "--C",
        "1",
        "--epochs",
        "1",
        "--data",
        &train,
        "--out",
        &m,
    ]);
    m
}

/// What `eval` printed before it streamed: the whole file read at once and scored.
fn whole_file_eval(model: &str, data: &str) -> String {
    let model = Model::load(Path::new(model)).unwrap();
    let rows = read_for_model(Path::new(data), None, &model.schema().unwrap()).unwrap();
    let s = model
        .score_with(
            rows.x.view(),
            &rows.targets.unwrap(),
            &MemoryLimit::default(),
        )
        .unwrap();
    format!("n {}\n{} {:.4}\n", s.n, s.metric, s.value)
}

/// What `predict` printed before it streamed: one line per row of the whole file.
fn whole_file_predictions(model: &str, data: &str) -> String {
    let model = Model::load(Path::new(model)).unwrap();
    let rows = read_for_model(Path::new(data), None, &model.schema().unwrap()).unwrap();
    let mut out = String::new();
    match model.predict(rows.x.view()).unwrap() {
        Targets::Classes { classes, y } => y.iter().for_each(|&c| {
            out.push_str(&classes[c]);
            out.push('\n');
        }),
        Targets::Real(v) => v.iter().for_each(|x| out.push_str(&format!("{x}\n"))),
    }
    out
}

#[test]
fn eval_and_predict_are_the_whole_files_in_every_chunk_size() {
    let dir = tempfile::tempdir().unwrap();
    let m = ring_model(dir.path());
    let test = ringnorm(dir.path(), "test.csv", 3000, 2);
    let want_eval = whole_file_eval(&m, &test);
    let want_pred = whole_file_predictions(&m, &test);
    assert!(want_eval.starts_with("n 3000\naccuracy 0.9"), "{want_eval}");
    assert_eq!(want_pred.lines().count(), 3000);
    for chunk in [None, Some("1"), Some("7"), Some("1000"), Some("3000")] {
        let extra: Vec<&str> = chunk.map_or(vec![], |c| vec!["--chunk-rows", c]);
        fn with<'a>(args: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
            [args, extra].concat()
        }
        assert_eq!(
            ok(&with(&["eval", "--model", &m, "--data", &test], &extra)),
            want_eval,
            "chunk {chunk:?}"
        );
        assert_eq!(
            ok(&with(&["predict", "--model", &m, "--data", &test], &extra)),
            want_pred,
            "chunk {chunk:?}"
        );
        let out = dir.path().join("pred.txt");
        let o = out.to_str().unwrap();
        ok(&with(
            &["predict", "--model", &m, "--data", &test, "--out", o],
            &extra,
        ));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), want_pred);
    }
    assert!(temp_files(dir.path()).is_empty());
    // Without the target column (the features in another order): the same predictions;
    // eval refuses the file.
    let text_in = std::fs::read_to_string(&test).unwrap();
    let reordered: String = text_in
        .lines()
        .map(|l| {
            let mut f: Vec<&str> = l.split(',').collect();
            f.pop();
            f.reverse();
            f.join(",") + "\n"
        })
        .collect();
    let features = dir.path().join("features.csv");
    std::fs::write(&features, reordered).unwrap();
    let f = features.to_str().unwrap();
    assert_eq!(
        ok(&["predict", "--model", &m, "--data", f, "--chunk-rows", "64"]),
        want_pred
    );
    assert_clean_error(
        &run(&["eval", "--model", &m, "--data", f]),
        &["features.csv", "no target column"],
    );
    assert_clean_error(
        &run(&["eval", "--model", &m, "--data", &test, "--chunk-rows", "0"]),
        &["--chunk-rows 0", "at least 1"],
    );
}

/// Regression models on a shipped table: the mean squared error of the whole file in
/// chunks of 1, 100 and 65,536 rows, for explicit maps and for an exact kernel (support
/// points); the predictions of the explicit maps to the last digit.
#[test]
fn regression_eval_is_the_whole_files_in_every_chunk_size() {
    let dir = tempfile::tempdir().unwrap();
    let boston = data("boston-housing.csv");
    let b = boston.to_str().unwrap();
    for (name, kernels) in [
        ("maps.json", &["rbf:approx=rff,dim=128", "linear"][..]),
        ("exact.json", &["rbf"][..]),
    ] {
        let m = dir.path().join(name).to_str().unwrap().to_string();
        let mut args = vec!["train", "--task", "regression", "--C", "1", "--epochs", "2"];
        for k in kernels {
            args.extend(["--kernel", k]);
        }
        ok(&[&args[..], &["--data", b, "--out", &m]].concat());
        let want = whole_file_eval(&m, b);
        assert!(want.starts_with("n 506\nmse "), "{want}");
        for chunk in ["1", "100", "65536"] {
            let got = ok(&["eval", "--model", &m, "--data", b, "--chunk-rows", chunk]);
            assert_eq!(got, want, "{name}, chunk {chunk}");
        }
        if name == "maps.json" {
            let got = ok(&["predict", "--model", &m, "--data", b, "--chunk-rows", "9"]);
            assert_eq!(got, whole_file_predictions(&m, b));
        }
    }
}

#[test]
fn a_bad_row_deep_in_the_file_names_its_line_and_keeps_the_old_output() {
    let dir = tempfile::tempdir().unwrap();
    let m = ring_model(dir.path());
    let good = ringnorm(dir.path(), "good.csv", 5000, 3);
    let out = dir.path().join("pred.txt");
    let o = out.to_str().unwrap();
    std::fs::write(&out, "old predictions\n").unwrap();
    // Line 4,001 (the header is line 1): a word in a number's place, a ragged row, a NaN.
    for (name, path, needle) in bad_rows_at_line_4001(dir.path(), &good) {
        let p = path.as_str();
        let at = format!("{name}:4001");
        for args in [
            vec!["eval", "--model", &m, "--data", p, "--chunk-rows", "700"],
            vec![
                "predict",
                "--model",
                &m,
                "--data",
                p,
                "--chunk-rows",
                "700",
                "--out",
                o,
            ],
            vec!["predict", "--model", &m, "--data", p, "--out", o],
        ] {
            let r = run(&args);
            assert_clean_error(&r, &[at.as_str(), needle]);
            assert_eq!(r.status.code(), Some(1), "{args:?}");
            assert!(r.stdout.is_empty(), "{args:?}");
            assert_eq!(std::fs::read_to_string(&out).unwrap(), "old predictions\n");
        }
        // To standard output, the chunks before the bad row's are printed (5 x 700 rows);
        // with the file in one chunk, nothing is.
        let r = run(&["predict", "--model", &m, "--data", p, "--chunk-rows", "700"]);
        assert_clean_error(&r, &[at.as_str()]);
        assert_eq!(text(&r).0.lines().count(), 3500);
        let r = run(&["predict", "--model", &m, "--data", p]);
        assert_clean_error(&r, &[at.as_str()]);
        assert!(r.stdout.is_empty());
    }
    assert!(
        temp_files(dir.path()).is_empty(),
        "{:?}",
        temp_files(dir.path())
    );
}
