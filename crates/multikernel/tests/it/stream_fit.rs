//! Training from a file read chunk by chunk (estimator::stream::fit_stream): as accurate as
//! the in-memory fit, a malformed row deep in the file stops it with the file and line
//! before any training, exact kernels are refused.

use multikernel::data::synthetic::generate;
use multikernel::data::{read_table, to_csv, TargetKind};
use multikernel::estimator::stream::{StreamOptions, StreamReport};
use multikernel::estimator::{fit, Learner, LearnerSpec, OnlineSpec, OnlineSteps, Task};
use multikernel::model::Model;
use std::path::Path;

/// The online learner on `path` read chunk by chunk: the data-source door with
/// [`Source::Stream`](multikernel::estimator::Source::Stream).
fn fit_stream(
    path: &Path,
    format: Option<multikernel::estimator::DataFormat>,
    spec: &LearnerSpec,
    opts: &StreamOptions,
    observer: &dyn multikernel::run::Observer,
) -> multikernel::Result<(multikernel::estimator::Fitted, StreamReport)> {
    use multikernel::estimator::{FileSource, Source, TrainSource};
    let file = FileSource::new(path).with_format(format);
    let source = TrainSource::new(Source::Stream(file, *opts));
    let fitted = source.load(spec.task)?.fit(spec, None, None, observer)?;
    let report = fitted
        .stream
        .clone()
        .expect("a streamed fit reports its passes");
    Ok((fitted, report))
}

fn spec(kernels: &[&str]) -> LearnerSpec {
    let online = OnlineSpec {
        steps: OnlineSteps {
            epochs: 3,
            ..OnlineSteps::default()
        },
        ..OnlineSpec::default()
    };
    let mut spec = LearnerSpec::new(Task::Binary, Learner::Online(online));
    spec.kernels = kernels.iter().map(|s| s.parse().unwrap()).collect();
    spec.strength = multikernel::estimator::Strength::C(1.0);
    spec.seed = 4;
    spec
}

fn accuracy(model: &Model, data: &multikernel::data::Dataset) -> f64 {
    let Model::KernelMachine(m) = model else {
        panic!("an online model")
    };
    crate::score(m, data)
}

#[test]
fn a_streamed_fit_learns_like_the_in_memory_fit() {
    let dir = tempfile::tempdir().unwrap();
    let (train, _) = generate("ringnorm", 3000, 0, 1, 1).unwrap();
    let (test, _) = generate("ringnorm", 2000, 0, 1, 2).unwrap();
    let path = dir.path().join("ring.csv");
    std::fs::write(&path, to_csv(&train)).unwrap();
    let kernels = ["rbf:approx=rff,dim=256", "rbf:scale=4,approx=rff,dim=256"];
    let s = spec(&kernels);
    let whole = fit(&train, &s, &()).unwrap();
    let opts = StreamOptions {
        chunk_rows: 700,
        shuffle_rows: 1000,
    };
    let (streamed, report) = fit_stream(&path, None, &s, &opts, &()).unwrap();
    assert_eq!(report.rows, 3000);
    assert_eq!(report.epoch_losses.len(), 3);
    let (a, b) = (
        accuracy(&whole.model, &test),
        accuracy(&streamed.model, &test),
    );
    assert!(b > 0.9 && b > a - 0.02, "streamed {b} vs in memory {a}");
    // The model records the file's rows, the passes and the C it was given (not the rounds
    // run: 3 epochs x 3,000 rows), as the in-memory fit does.
    let (Model::KernelMachine(w), Model::KernelMachine(m)) = (&whole.model, &streamed.model) else {
        panic!("online models")
    };
    assert_eq!(m.training.n_train, 3000);
    assert_eq!(m.training.epochs, 3);
    assert!((m.training.c - 1.0).abs() < 1e-12, "C {}", m.training.c);
    assert_eq!(
        (m.training.n_train, m.training.epochs),
        (w.training.n_train, w.training.epochs)
    );
    // The same file gzip-compressed, the same seed: the same model.
    let gz = dir.path().join("ring.csv.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, to_csv(&train).as_bytes()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let (again, _) = fit_stream(&gz, None, &s, &opts, &()).unwrap();
    assert_eq!(
        again.model.to_bytes().unwrap(),
        streamed.model.to_bytes().unwrap()
    );
}

#[test]
fn a_bad_row_deep_in_the_file_stops_before_training() {
    let dir = tempfile::tempdir().unwrap();
    let (train, _) = generate("ringnorm", 4000, 0, 1, 1).unwrap();
    let text = to_csv(&train);
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    lines[3000] = lines[3000].replacen(',', ",x", 1); // line 3001: not a number
    let path = dir.path().join("bad.csv");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let err = fit_stream(
        &path,
        None,
        &spec(&["rbf:approx=rff,dim=64"]),
        &StreamOptions {
            chunk_rows: 512,
            shuffle_rows: 100,
        },
        &(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("bad.csv") && err.contains("3001"), "{err}");
    let whole = read_table(&path, None, TargetKind::Classes, None, None)
        .unwrap_err()
        .to_string();
    assert_eq!(err, whole);
}

#[test]
fn exact_kernels_and_other_learners_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (train, _) = generate("ringnorm", 200, 0, 1, 1).unwrap();
    let path = dir.path().join("ring.csv");
    std::fs::write(&path, to_csv(&train)).unwrap();
    let opts = StreamOptions::default();
    let err = fit_stream(&path, None, &spec(&["rbf"]), &opts, &())
        .unwrap_err()
        .to_string();
    assert!(err.contains("approx=rff"), "{err}");
    let mut gomp = spec(&["linear"]);
    gomp.learner = Learner::Gomp(Default::default());
    let err = fit_stream(&path, None, &gomp, &opts, &())
        .unwrap_err()
        .to_string();
    assert!(err.contains("online"), "{err}");
}
