//! `multikernel train --stream` end to end (issue 17): the default kernels are explicit
//! maps, a malformed row deep in the file stops the run with the file and line and keeps the
//! model that was there, and the outputs are checked before any data is read.

use crate::common::{
    assert_clean_error, bad_rows_at_line_4001, ok, ringnorm, run, temp_files, text,
};

#[test]
fn streamed_training_with_the_default_kernels_learns_and_evaluates() {
    let dir = tempfile::tempdir().unwrap();
    let train = ringnorm(dir.path(), "train.csv", 3000, 1);
    let test = ringnorm(dir.path(), "test.csv", 1000, 2);
    let model = dir.path().join("m.json");
    let m = model.to_str().unwrap();
    // No --kernel, no --C: the streaming dictionary (three RFF maps) and C = 1, no
    // selection (which would read the file many times).
    let o = run(&[
        "train",
        "--stream",
        "--chunk-rows",
        "500",
        "--shuffle-rows",
        "1000",
        "--epochs",
        "3",
        "--data",
        &train,
        "--out",
        m,
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let all = format!("{out}{err}");
    assert!(all.contains("training online on"), "{all}");
    // The file's rows, not the rounds run (3 epochs x 3,000).
    assert!(all.contains("trained on 3000 rows"), "{all}");
    assert!(all.contains("3072 explicit features"), "{all}");
    assert_eq!(all.matches("~rff1024").count(), 3, "{all}");
    let eval = ok(&["eval", "--model", m, "--data", &test]);
    let acc: f64 = eval
        .lines()
        .find_map(|l| l.trim().strip_prefix("accuracy"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no accuracy in {eval}"));
    assert!(acc > 0.9, "accuracy {acc}\n{eval}");
}

#[test]
fn a_bad_row_deep_in_the_stream_names_its_line_and_keeps_the_old_model() {
    let dir = tempfile::tempdir().unwrap();
    let good = ringnorm(dir.path(), "good.csv", 5000, 3);
    let model = dir.path().join("keep.json");
    let m = model.to_str().unwrap();
    let args = |data: &str| {
        vec![
            "train".to_string(),
            "--stream".into(),
            "--chunk-rows".into(),
            "700".into(),
            "--epochs".into(),
            "1".into(),
            "--kernel".into(),
            "rbf:approx=rff,dim=64".into(),
            "--data".into(),
            data.to_string(),
            "--out".into(),
            m.to_string(),
        ]
    };
    let call = |v: Vec<String>| run(&v.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(call(args(&good)).status.success());
    let before = std::fs::read(&model).unwrap();
    // Line 4,001 (the header is line 1) of five chunks' worth of rows: a word in a number's
    // place, then a ragged row, then a NaN, each in a file of its own.
    for (name, path, needle) in bad_rows_at_line_4001(dir.path(), &good) {
        let o = call(args(&path));
        let line = format!("{name}:4001");
        assert_clean_error(&o, &[line.as_str(), needle]);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(std::fs::read(&model).unwrap(), before, "{name}");
    }
    // No temporary file is left next to the model.
    assert!(temp_files(dir.path()).is_empty());
}

#[test]
fn stream_settings_and_outputs_are_checked_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    let o = out.to_str().unwrap();
    // The data file does not exist: an error about the output proves it came first.
    let missing = dir.path().join("absent.csv");
    let d = missing.to_str().unwrap();
    let nowhere = dir.path().join("no/such/dir/m.json");
    assert_clean_error(
        &run(&[
            "train",
            "--stream",
            "--data",
            d,
            "--out",
            nowhere.to_str().unwrap(),
        ]),
        &["--out", "does not exist"],
    );
    assert_clean_error(
        &run(&["train", "--data", d, "--out", dir.path().to_str().unwrap()]),
        &["--out", "is a directory"],
    );
    assert_clean_error(
        &run(&[
            "train",
            "--stream",
            "--data",
            d,
            "--out",
            o,
            "--run-json",
            nowhere.to_str().unwrap(),
        ]),
        &["--run-json", "does not exist"],
    );
    let good = ringnorm(dir.path(), "good.csv", 200, 4);
    for (flag, needle) in [
        ("--chunk-rows", "--chunk-rows 0"),
        ("--shuffle-rows", "--shuffle-rows 0"),
    ] {
        assert_clean_error(
            &run(&["train", "--stream", flag, "0", "--data", &good, "--out", o]),
            &[needle, "at least 1"],
        );
    }
    assert_clean_error(
        &run(&[
            "train", "--stream", "--kernel", "rbf", "--data", &good, "--out", o,
        ]),
        &["explicit map", "approx=rff"],
    );
    assert_clean_error(
        &run(&[
            "train", "--stream", "--algo", "gomp", "--data", &good, "--out", o,
        ]),
        &["--stream", "online"],
    );
    assert!(!out.exists());
}
