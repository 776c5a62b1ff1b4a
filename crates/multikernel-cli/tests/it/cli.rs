//! The `multikernel` binary end to end: the documented workflow, and bad input that must give
//! a clear message and a non-zero exit (never a panic, never a half-written model).

use std::path::Path;

use crate::common::*;

#[test]
fn train_eval_predict_inspect_workflow() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.model");
    let m = model.to_str().unwrap();
    let sonar = data("sonar.csv");
    let s = sonar.to_str().unwrap();
    // The defaults just work.
    let o = run(&[
        "train", "--select", "none", "--task", "binary", "--data", s, "--kernel", "rbf", "--out", m,
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let o = run(&[
        "train",
        "--select",
        "none",
        "--task",
        "binary",
        "--data",
        s,
        "--kernel",
        "linear:norm=trace",
        "--kernel",
        "poly:degree=2,norm=trace",
        "--kernel",
        "rbf:norm=trace",
        "--reg",
        "l21sq",
        "--C",
        "10",
        "--epochs",
        "10",
        "--out",
        m,
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let o = run(&["eval", "--model", m, "--data", s]);
    let (out, _) = text(&o);
    let last = out.lines().last().unwrap();
    let acc: f64 = last.strip_prefix("accuracy ").unwrap().parse().unwrap();
    assert!(acc > 0.8, "training accuracy {acc}");
    let pred = dir.path().join("p.txt");
    let o = run(&[
        "predict",
        "--model",
        m,
        "--data",
        s,
        "--out",
        pred.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let lines: Vec<String> = std::fs::read_to_string(&pred)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 208);
    assert!(lines.iter().all(|l| l == "M" || l == "R"));
    let o = run(&["inspect", "--model", m]);
    let (out, _) = text(&o);
    assert!(
        out.contains("rbf") && out.contains("poly") && out.contains("linear"),
        "{out}"
    );

    // Regression prints mse; multiclass keeps string labels.
    let o = run(&[
        "train",
        "--select",
        "none",
        "--task",
        "regression",
        "--data",
        data("boston-housing.csv").to_str().unwrap(),
        "--kernel",
        "rbf",
        "--C",
        "10",
        "--out",
        m,
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let o = run(&[
        "eval",
        "--model",
        m,
        "--data",
        data("boston-housing.csv").to_str().unwrap(),
    ]);
    let (out, _) = text(&o);
    let mse: f64 = out
        .lines()
        .last()
        .unwrap()
        .strip_prefix("mse ")
        .unwrap()
        .parse()
        .unwrap();
    assert!(mse < 30.0, "training mse {mse}");
    let o = run(&[
        "train",
        "--select",
        "none",
        "--task",
        "multiclass",
        "--data",
        data("glass.csv").to_str().unwrap(),
        "--kernel",
        "rbf",
        "--out",
        m,
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let o = run(&[
        "predict",
        "--model",
        m,
        "--data",
        data("glass.csv").to_str().unwrap(),
    ]);
    let (out, _) = text(&o);
    assert!(out
        .lines()
        .all(|l| ["1", "2", "3", "5", "6", "7"].contains(&l)));
}

fn write(dir: &Path, name: &str, content: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn bad_input_gives_clear_errors_and_keeps_old_model() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("keep.model");
    let m = model.to_str().unwrap();
    let o = run(&[
        "train",
        "--select",
        "none",
        "--data",
        data("sonar.csv").to_str().unwrap(),
        "--kernel",
        "linear",
        "--epochs",
        "2",
        "--out",
        m,
    ]);
    assert!(o.status.success());
    let before = std::fs::read(&model).unwrap();
    let train = |file: &str, extra: &[&str]| {
        let mut args = vec!["train", "--select", "none", "--data", file, "--out", m];
        args.extend_from_slice(extra);
        run(&args)
    };
    let missing = dir.path().join("nope.csv");
    assert_clean_error(&train(missing.to_str().unwrap(), &[]), &["nope.csv"]);
    let ragged = write(dir.path(), "ragged.csv", "a,b,label\n1,2,x\n3,y\n");
    assert_clean_error(&train(&ragged, &[]), &["ragged.csv:3", "expected 3 fields"]);
    let nonnum = write(dir.path(), "nonnum.csv", "a,b,label\n1,2,x\n3,abc,y\n");
    assert_clean_error(&train(&nonnum, &[]), &["nonnum.csv:3", "abc"]);
    let nan = write(dir.path(), "nan.csv", "a,b,label\n1,2,x\nNaN,1,y\n");
    assert_clean_error(&train(&nan, &[]), &["nan.csv:3"]);
    let inf = write(dir.path(), "inf.csv", "a,b,label\n1,2,x\ninf,1,y\n");
    assert_clean_error(&train(&inf, &[]), &["inf.csv:3"]);
    let empty = write(dir.path(), "empty.csv", "a,b,label\n");
    assert_clean_error(&train(&empty, &[]), &["empty.csv", "no data rows"]);
    let three = write(dir.path(), "three.csv", "a,label\n1,x\n2,y\n3,z\n");
    assert_clean_error(&train(&three, &[]), &["2 classes"]);
    let s = data("sonar.csv");
    let s = s.to_str().unwrap();
    assert_clean_error(&train(s, &["--kernel", "rbff"]), &["rbff"]);
    assert_clean_error(&train(s, &["--reg", "l3"]), &["l3"]);
    assert_clean_error(&train(s, &["--C", "-1"]), &["--C"]);
    assert_clean_error(&train(s, &["--loss", "squared-hinge"]), &["squared-hinge"]);
    assert_clean_error(&train(s, &["--reg", "l1"]), &["l1"]);
    assert_clean_error(&train(s, &["--algo", "magic"]), &["magic"]);
    // The model that was there is untouched after every failure.
    assert_eq!(std::fs::read(&model).unwrap(), before);

    // A label unseen in training, a wrong feature count, a broken model file.
    let unseen = write(dir.path(), "unseen.csv", &{
        let mut t = std::fs::read_to_string(s).unwrap();
        t = t.replacen(",R\n", ",Q\n", 1);
        t
    });
    assert_clean_error(
        &run(&["eval", "--model", m, "--data", &unseen]),
        &["unseen.csv:", "Q"],
    );
    assert_clean_error(
        &run(&[
            "eval",
            "--model",
            m,
            "--data",
            data("glass.csv").to_str().unwrap(),
        ]),
        &["glass.csv"],
    );
    let junk = write(dir.path(), "junk.model", "{\"hello\": 1}");
    assert_clean_error(
        &run(&["inspect", "--model", &junk]),
        &["junk.model", "not a multikernel model"],
    );
    let trunc = write(
        dir.path(),
        "trunc.model",
        &String::from_utf8_lossy(&before[..before.len() / 2]),
    );
    assert_clean_error(&run(&["inspect", "--model", &trunc]), &["trunc.model"]);
}

/// `predict` on new data: a CSV without the target column (its columns in another order,
/// matched by name), a LIBSVM file without labels, and `--out -` for standard output.
#[test]
fn predict_on_unlabelled_files() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.model");
    let m = model.to_str().unwrap();
    let sonar = data("sonar.csv");
    let s = sonar.to_str().unwrap();
    ok(&[
        "train", "--select", "none", "--data", s, "--kernel", "rbf", "--epochs", "3", "--out", m,
    ]);
    let labelled = ok(&["predict", "--model", m, "--data", s]);
    // The features only, last column first: the same predictions.
    let text = std::fs::read_to_string(&sonar).unwrap();
    let mut rows = Vec::new();
    for line in text.lines() {
        let mut f: Vec<&str> = line.split(',').collect();
        f.pop();
        let last = f.pop().unwrap();
        f.insert(0, last);
        rows.push(f.join(","));
    }
    let unlabelled = write(dir.path(), "new.csv", &(rows.join("\n") + "\n"));
    let out = ok(&["predict", "--model", m, "--data", &unlabelled, "--out", "-"]);
    assert_eq!(out, labelled);
    assert!(!dir.path().join("-").exists(), "--out - is standard output");
    // eval needs the labels and says so.
    assert_clean_error(
        &run(&["eval", "--model", m, "--data", &unlabelled]),
        &["new.csv", "no target column"],
    );
    // A column the model does not know is refused by name.
    let extra: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("{l},extra")
            } else {
                format!("{l},0")
            }
        })
        .collect();
    let extra = write(dir.path(), "extra.csv", &(extra.join("\n") + "\n"));
    assert_clean_error(
        &run(&["predict", "--model", m, "--data", &extra]),
        &["extra.csv:1", "'label', 'extra'"],
    );

    // LIBSVM: a model trained on labelled lines predicts lines without labels.
    let svm_train = write(
        dir.path(),
        "t.svm",
        "+1 1:1 2:0.5\n-1 1:-1 2:0.2\n+1 1:0.9\n-1 2:-0.4 1:-0.8\n"
            .replace("2:-0.4 1:-0.8", "1:-0.8 2:-0.4")
            .as_str(),
    );
    let svm_model = dir.path().join("s.model");
    let sm = svm_model.to_str().unwrap();
    ok(&[
        "train", "--select", "none", "--data", &svm_train, "--kernel", "linear", "--out", sm,
    ]);
    let new = write(dir.path(), "new.svm", "1:1 2:0.5\n1:-1 2:0.2\n");
    let out = ok(&["predict", "--model", sm, "--data", &new]);
    assert_eq!(out, "+1\n-1\n");
    let mixed = write(dir.path(), "mixed.svm", "1:1\n-1 1:-1\n");
    assert_clean_error(
        &run(&["predict", "--model", sm, "--data", &mixed]),
        &["mixed.svm:2", "label all lines or none"],
    );
}

/// Ctrl-C during training stops it at the next step: a one-line message, exit status 130,
/// and no model file (an older one stays as it was).
#[cfg(unix)]
#[test]
fn ctrl_c_stops_training_without_writing_a_model() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.model");
    std::fs::write(&model, b"old").unwrap();
    let sonar = data("sonar.csv");
    // Far more epochs than the test waits for.
    let mut child = bin()
        .args([
            "train",
            "--select",
            "none",
            "--data",
            sonar.to_str().unwrap(),
            "--kernel",
            "rbf",
        ])
        .args(["--epochs", "100000000", "--out", model.to_str().unwrap()])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    // The handler is installed before this line is printed.
    while !line.contains("Ctrl-C stops it") {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "no start line");
    }
    let pid = child.id() as i32;
    // SAFETY: sends SIGINT to the child we spawned.
    unsafe { libc::kill(pid, libc::SIGINT) };
    // A watchdog, so that a child that ignores Ctrl-C fails the test instead of hanging it.
    let (done, wait) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if wait
            .recv_timeout(std::time::Duration::from_secs(120))
            .is_err()
        {
            // SAFETY: the child has not been reaped (the test still waits for it).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    let status = child.wait().unwrap();
    let _ = done.send(());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(
        rest.contains("interrupted after") && rest.contains("no model written"),
        "{rest}"
    );
    assert!(!rest.contains("panicked"), "{rest}");
    assert_eq!(std::fs::read(&model).unwrap(), b"old");
}

/// `train --out -` writes the model to standard output (the summary to stderr): the bytes
/// are the model the same run writes to a file.
#[test]
fn train_writes_the_model_to_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.model");
    let f = file.to_str().unwrap();
    let sonar = data("sonar.csv");
    let s = sonar.to_str().unwrap();
    let args = [
        "train", "--select", "none", "--data", s, "--kernel", "rbf", "--epochs", "2", "--out",
    ];
    let o = bin()
        .current_dir(dir.path())
        .args(args)
        .arg("-")
        .output()
        .unwrap();
    assert!(o.status.success());
    ok(&[&args[..], &[f]].concat());
    assert_eq!(o.stdout, std::fs::read(&file).unwrap());
    let (_, err) = text(&o);
    assert!(err.contains("kernel"), "the summary is on stderr: {err}");
    assert!(!dir.path().join("-").exists());
}
