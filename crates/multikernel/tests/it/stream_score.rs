//! Scoring and predicting a table read chunk by chunk (`Model::score_stream`,
//! `Model::predict_stream` over a `ModelStream`) against the whole file read at once
//! (`read_for_model`, `Model::score_with`, `Model::predict_with`): the same predictions row
//! for row and the same score, for online, lp-MKL and GOMP models on binary, multiclass and
//! regression tables, in chunks of 1, 2, 7 and 1,000 rows, CSV with shuffled columns and
//! libsvm without labels.

use multikernel::data::{
    read_for_model, read_table, to_csv, Dataset, Format, Matrix, ModelStream, TargetKind, Targets,
};
use multikernel::engine::metrics;
use multikernel::estimator::{
    fit, GompSpec, Learner, LearnerSpec, LpMklSpec, OnlineSpec, OnlineSteps, Task,
};
use multikernel::kernel::MemoryLimit;
use multikernel::model::Model;
use std::path::{Path, PathBuf};

fn uci(name: &str, target: TargetKind) -> Dataset {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../data/uci/{name}.csv"));
    read_table(&p, None, target, None, None).unwrap()
}

fn online(task: Task, kernels: &[&str]) -> LearnerSpec {
    let o = OnlineSpec {
        steps: OnlineSteps {
            epochs: 3,
            ..OnlineSteps::default()
        },
        ..OnlineSpec::default()
    };
    let mut spec = LearnerSpec::new(task, Learner::Online(o));
    spec.kernels = kernels.iter().map(|s| s.parse().unwrap()).collect();
    spec.strength = multikernel::estimator::Strength::C(1.0);
    spec
}

/// The models, the tables they are tested on, and whether their predictions are the same
/// bits in every chunk size (explicit maps: each row's scores computed on their own) or may
/// differ in the last bits (Gram blocks against support points through faer's matmul,
/// whose rounding depends on the block's shape, which the number of rows and threads
/// choose: already so for the whole file read at once).
fn cases() -> Vec<(&'static str, Model, Dataset, bool)> {
    let sonar = uci("sonar", TargetKind::Classes);
    let glass = uci("glass", TargetKind::Classes);
    let boston = uci("boston-housing", TargetKind::Real);
    let fitted = |spec: LearnerSpec, ds: &Dataset| fit(ds, &spec, &()).unwrap().model;
    let mut lp = LearnerSpec::new(Task::Regression, Learner::LpMkl(LpMklSpec { p: 2.0 }));
    lp.kernels = ["rbf", "linear"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    let gomp = LearnerSpec::new(
        Task::Binary,
        Learner::Gomp(GompSpec {
            max_kernels: 3,
            ..GompSpec::default()
        }),
    );
    vec![
        (
            "online binary, exact rbf",
            fitted(online(Task::Binary, &["rbf", "linear"]), &sonar),
            sonar.clone(),
            false,
        ),
        (
            "online multiclass, rff",
            fitted(online(Task::Multiclass, &["rbf:approx=rff,dim=64"]), &glass),
            glass,
            true,
        ),
        (
            "online regression, rff and linear",
            fitted(
                online(Task::Regression, &["rbf:approx=rff,dim=128", "linear"]),
                &boston,
            ),
            boston.clone(),
            true,
        ),
        (
            "online regression, exact rbf",
            fitted(online(Task::Regression, &["rbf"]), &boston),
            boston.clone(),
            false,
        ),
        ("lp-mkl regression", fitted(lp, &boston), boston, false),
        ("gomp binary", fitted(gomp, &sonar), sonar, false),
    ]
}

/// The table as CSV with its columns in reverse order and the target first.
fn shuffled_csv(ds: &Dataset) -> String {
    let d = ds.n_features();
    let mut text = String::from("target");
    for j in (0..d).rev() {
        text.push(',');
        text.push_str(&ds.feature_names[j]);
    }
    text.push('\n');
    for i in 0..ds.len() {
        match &ds.targets {
            Targets::Classes { classes, y } => text.push_str(&classes[y[i]]),
            Targets::Real(y) => text.push_str(&y[i].to_string()),
        }
        for j in (0..d).rev() {
            text.push_str(&format!(",{}", ds.x.get(i, j)));
        }
        text.push('\n');
    }
    text
}

fn streamed_predictions(model: &Model, path: &Path, chunk: usize) -> Targets {
    let schema = model.schema().unwrap();
    let mut stream = ModelStream::open(path, None, &schema).unwrap();
    let mut all: Option<Targets> = None;
    let limit = MemoryLimit::default();
    let n = model
        .predict_stream(&mut stream, chunk, &limit, |p| {
            match (&mut all, p) {
                (None, p) => all = Some(p),
                (Some(Targets::Classes { y, .. }), Targets::Classes { y: more, .. }) => {
                    y.extend(more)
                }
                (Some(Targets::Real(v)), Targets::Real(more)) => v.extend(more),
                _ => panic!("predictions change kind"),
            }
            Ok(())
        })
        .unwrap();
    let all = all.unwrap();
    assert_eq!(all.len(), n);
    all
}

/// Predictions agree: classes identical; values to the last bit (`exact`) or within 1e-12
/// relative.
fn assert_agree(got: &Targets, want: &Targets, exact: bool, what: &str) {
    match (got, want) {
        (Targets::Real(g), Targets::Real(w)) if !exact => {
            assert_eq!(g.len(), w.len(), "{what}");
            for (a, b) in g.iter().zip(w) {
                assert!(
                    (a - b).abs() <= 1e-12 * b.abs().max(1.0),
                    "{what}: {a} vs {b}"
                );
            }
        }
        _ => assert_eq!(got, want, "{what}"),
    }
}

/// Streamed scores and predictions equal the whole file's, in chunks of 1, 2, 7 and 1,000
/// rows: predictions identical row for row (classes always; values to the last bit for
/// explicit maps, within 1e-12 relative for Gram blocks), accuracy identical, the mean
/// squared error identical to the last bit for explicit maps (the sum of squared errors is
/// added in the whole file's order) and within 1e-12 relative otherwise.
#[test]
fn streamed_scores_and_predictions_equal_the_whole_files() {
    let dir = tempfile::tempdir().unwrap();
    let limit = MemoryLimit::default();
    for (name, model, ds, exact) in cases() {
        let path = dir.path().join("t.csv");
        std::fs::write(&path, shuffled_csv(&ds)).unwrap();
        let schema = model.schema().unwrap();
        let whole = read_for_model(&path, None, &schema).unwrap();
        assert_eq!(
            whole.x, ds.x,
            "{name}: the columns come back in the model's order"
        );
        let targets = whole.targets.clone().unwrap();
        let score = model.score_with(whole.x.view(), &targets, &limit).unwrap();
        let pred = model.predict_with(whole.x.view(), &limit).unwrap();
        // The score is the metric of the whole file's predictions.
        let direct = match (&pred, &targets) {
            (Targets::Classes { y: p, .. }, Targets::Classes { y, .. }) => metrics::accuracy(p, y),
            (Targets::Real(p), Targets::Real(y)) => metrics::mse(p, y),
            _ => panic!("{name}: kinds"),
        };
        assert_eq!(score.value.to_bits(), direct.to_bits(), "{name}");
        assert_eq!(score.n, ds.len());
        for chunk in [1, 2, 7, 1000] {
            let what = format!("{name}, chunk {chunk}");
            let mut stream = ModelStream::open(&path, None, &schema).unwrap();
            let s = model.score_stream(&mut stream, chunk, &limit).unwrap();
            assert_eq!((s.metric, s.n), (score.metric, score.n), "{what}");
            if exact || s.metric == "accuracy" {
                assert_eq!(s.value.to_bits(), score.value.to_bits(), "{what}");
            } else {
                assert!(
                    (s.value - score.value).abs() <= 1e-12 * score.value.abs(),
                    "{what}: {} vs {}",
                    s.value,
                    score.value
                );
            }
            assert_agree(
                &streamed_predictions(&model, &path, chunk),
                &pred,
                exact,
                &what,
            );
        }
    }
}

/// A libsvm file without labels (gzip-compressed, the format sniffed): the same
/// predictions as the whole file's; scoring it is an error naming the file.
#[test]
fn unlabelled_libsvm_predicts_as_the_whole_file_and_cannot_be_scored() {
    let dir = tempfile::tempdir().unwrap();
    let (_, model, ds, exact) = cases().swap_remove(0);
    let mut text = String::new();
    for i in 0..ds.len() {
        let entries: Vec<String> = (0..ds.n_features())
            .filter(|&j| ds.x.get(i, j) != 0.0)
            .map(|j| format!("{}:{}", j + 1, ds.x.get(i, j)))
            .collect();
        text.push_str(&entries.join(" "));
        text.push('\n');
    }
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, text.as_bytes()).unwrap();
    let path = dir.path().join("rows.dat");
    std::fs::write(&path, enc.finish().unwrap()).unwrap();
    let schema = model.schema().unwrap();
    let whole = read_for_model(&path, None, &schema).unwrap();
    assert!(whole.targets.is_none());
    let want = model.predict(whole.x.view()).unwrap();
    for chunk in [1, 50, 1000] {
        let got = streamed_predictions(&model, &path, chunk);
        assert_agree(&got, &want, exact, "unlabelled");
    }
    let mut stream = ModelStream::open(&path, Some(Format::Libsvm), &schema).unwrap();
    let e = model
        .score_stream(&mut stream, 64, &MemoryLimit::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("rows.dat") && e.contains("no target column"),
        "{e}"
    );
}

/// A malformed row deep in the file: the whole-file reader's very error, from the chunk
/// that holds it; predictions of the chunks before it were handed out, none after.
#[test]
fn a_bad_row_stops_the_stream_with_the_whole_files_error() {
    let dir = tempfile::tempdir().unwrap();
    let (_, model, ds, _) = cases().swap_remove(2);
    let text = to_csv(&ds);
    let mut lines: Vec<&str> = text.lines().collect();
    lines[301] = "1,2,3";
    let path = dir.path().join("bad.csv");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let schema = model.schema().unwrap();
    let whole = read_for_model(&path, None, &schema)
        .unwrap_err()
        .to_string();
    assert!(
        whole.starts_with(&format!("{}:302:", path.display())),
        "{whole}"
    );
    let limit = MemoryLimit::default();
    let mut stream = ModelStream::open(&path, None, &schema).unwrap();
    let e = model.score_stream(&mut stream, 100, &limit).unwrap_err();
    assert_eq!(e.to_string(), whole);
    let mut stream = ModelStream::open(&path, None, &schema).unwrap();
    let mut seen = 0;
    let e = model
        .predict_stream(&mut stream, 100, &limit, |p| {
            seen += p.len();
            Ok(())
        })
        .unwrap_err();
    assert_eq!(e.to_string(), whole);
    assert_eq!(seen, 300, "the three chunks before line 302");
    // An empty chunk of rows scores as NaN, as the whole-table metric of no rows does.
    let empty = Matrix::zeros(0, ds.n_features());
    let s = model
        .score_with(empty.view(), &Targets::Real(vec![]), &limit)
        .unwrap();
    assert!(s.value.is_nan() && s.n == 0);
}
