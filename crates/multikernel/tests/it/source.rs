//! One fit over a data source (`estimator::source`) and a model applied to a file
//! (`estimator::apply`), each against the path a program takes by hand: the reader the
//! source picks, then `fit` / `score_with` / `predict` on what it read. The same seed gives
//! the same model bytes, so the two paths must agree to the byte.

use multikernel::data::ocr::read_ocr;
use multikernel::estimator::{
    evaluate, predict, ApplyOptions, DataFormat, Evaluation, FileSource, Source, TrainSource,
};
use multikernel::prelude::*;
use std::path::{Path, PathBuf};

/// Reads `source` for the spec's task and trains it: the data-source door.
fn fit_source(
    source: &TrainSource<'_>,
    spec: &LearnerSpec,
    select: Option<&multikernel::estimator::AutoConfig>,
    observer: &dyn multikernel::run::Observer,
) -> multikernel::Result<multikernel::estimator::Fitted> {
    source.load(spec.task)?.fit(spec, select, None, observer)
}

fn uci(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/uci")
        .join(name)
}

fn ocr() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models-v1/ocr-train.data.gz")
}

fn online(task: Task, kernel: &str, epochs: usize) -> LearnerSpec {
    let o = OnlineSpec {
        steps: OnlineSteps {
            epochs,
            ..OnlineSteps::default()
        },
        ..OnlineSpec::default()
    };
    LearnerSpec::new(task, Learner::Online(o)).with_kernels(vec![kernel.parse().unwrap()])
}

fn file(path: &Path) -> TrainSource<'static> {
    TrainSource::new(Source::File(FileSource::new(path)))
}

#[test]
fn a_table_file_fits_as_the_table_read_by_hand() {
    let spec = online(Task::Binary, "linear", 2);
    let by_source = fit_source(&file(&uci("sonar.csv")), &spec, None, &()).unwrap();
    let data = read_table(&uci("sonar.csv"), None, TargetKind::Classes, None, None).unwrap();
    let by_hand = fit(&data, &spec, &()).unwrap();
    assert_eq!(
        by_source.model.to_bytes().unwrap(),
        by_hand.model.to_bytes().unwrap()
    );
    assert!(by_source.selection.is_none() && by_source.stream.is_none());
    let loaded = file(&uci("sonar.csv")).load(Task::Binary).unwrap();
    assert_eq!(loaded.describe(), "208 rows x 60 features");

    // The same data in memory: the same model again.
    let memory = TrainSource::new(Source::Memory((&data).into()));
    let in_memory = fit_source(&memory, &spec, None, &()).unwrap();
    assert_eq!(
        in_memory.model.to_bytes().unwrap(),
        by_hand.model.to_bytes().unwrap()
    );
}

#[test]
fn ocr_sequences_fit_as_read_by_hand_and_folds_select_them() {
    let spec = online(Task::Sequence, "linear:norm=diag", 1);
    let by_source = fit_source(&file(&ocr()), &spec, None, &()).unwrap();
    let words = read_ocr(&ocr()).unwrap();
    let by_hand = fit(&words, &spec, &()).unwrap();
    assert_eq!(
        by_source.model.to_bytes().unwrap(),
        by_hand.model.to_bytes().unwrap()
    );
    let model = by_hand.model;
    let e = evaluate(&model, &FileSource::new(ocr()), &ApplyOptions::default()).unwrap();
    let Evaluation::Sequences {
        sequences,
        positions,
        token_accuracy,
    } = e
    else {
        panic!("{e:?}")
    };
    assert_eq!(
        (sequences, positions),
        (words.n_sequences(), words.n_positions())
    );
    let limit = MemoryLimit::default();
    let Model::Sequence(m) = &model else {
        panic!("a sequence model")
    };
    let pred = m.predict_names(&words.x, &words.spans, &limit).unwrap();
    let right: usize = pred
        .iter()
        .zip(&words.spans)
        .map(|(p, s)| {
            p.iter()
                .zip(&words.labels[s.clone()])
                .filter(|&(a, &b)| *a == words.label_names[b])
                .count()
        })
        .sum();
    assert_eq!(token_accuracy, right as f64 / positions as f64);

    let fold = FileSource::new(ocr()).with_folds(Some("0".into()));
    let want = words.select_folds(&[0]);
    assert_eq!(
        fold.read_sequences().unwrap().n_sequences(),
        want.n_sequences()
    );
}

#[test]
fn a_model_scores_and_predicts_a_file_as_it_does_its_rows() {
    let spec = online(Task::Multiclass, "rbf", 2);
    let data = read_table(&uci("glass.csv"), None, TargetKind::Classes, None, None).unwrap();
    let model = fit(&data, &spec, &()).unwrap().model;
    let limit = MemoryLimit::default();
    let source = FileSource::new(uci("glass.csv"));
    for chunk_rows in [1, 7, 10_000] {
        let opts = ApplyOptions {
            chunk_rows,
            ..ApplyOptions::default()
        };
        let e = evaluate(&model, &source, &opts).unwrap();
        let want = model
            .score_with(data.x.view(), &data.targets, &limit)
            .unwrap();
        assert_eq!(e, Evaluation::Table(want));
        assert_eq!(
            e.to_string(),
            format!("n 214\naccuracy {:.4}\n", want.value)
        );
        let mut text = Vec::new();
        predict(&model, &source, &opts, |b| {
            text.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        let Targets::Classes { classes, y } = model.predict(data.x.view()).unwrap() else {
            panic!("classes")
        };
        let lines: String = y.iter().map(|&c| format!("{}\n", classes[c])).collect();
        assert_eq!(String::from_utf8(text).unwrap(), lines);
    }
}

#[test]
fn bad_sources_are_clear_errors() {
    assert_eq!("Conllu".parse::<DataFormat>().unwrap(), DataFormat::Conllu);
    assert_eq!(
        "svmlight".parse::<DataFormat>().unwrap(),
        DataFormat::Libsvm
    );
    let e = "xml".parse::<DataFormat>().unwrap_err().to_string();
    assert!(e.contains("xml") && e.contains("conllu"), "{e}");

    let ocr_as_table = FileSource::new(ocr()).with_format(Some(DataFormat::Ocr));
    let e = TrainSource::new(Source::File(ocr_as_table))
        .load(Task::Binary)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("format = ocr") && e.contains("sequence task"),
        "{e}"
    );

    let folds = FileSource::new(uci("sonar.csv")).with_folds(Some("0".into()));
    let e = TrainSource::new(Source::File(folds))
        .load(Task::Binary)
        .unwrap_err();
    assert!(e.to_string().contains("used whole"), "{e}");

    let stream = Source::Stream(FileSource::new(ocr()), Default::default());
    let e = TrainSource::new(stream).load(Task::Sequence).unwrap_err();
    assert!(e.to_string().contains("table task"), "{e}");

    // A validation file without the training columns: named as the validation input.
    let mut src = file(&uci("sonar.csv"));
    src.validation = Some(FileSource::new(uci("glass.csv")));
    match src.load(Task::Binary).unwrap_err() {
        Error::Input { name, source } => {
            assert_eq!(name, "validation");
            assert!(source.to_string().contains("glass.csv"), "{source}");
        }
        other => panic!("{other}"),
    }

    // A tagger needs its templates.
    let columns = FileSource::new(uci("sonar.csv")).with_format(Some(DataFormat::Columns));
    let e = TrainSource::new(Source::File(columns))
        .load(Task::Sequence)
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidParameter { name, .. } if name == "templates"),
        "{e}"
    );

    // A table model asked for label probabilities.
    let spec = online(Task::Binary, "linear", 1);
    let model = fit_source(&file(&uci("sonar.csv")), &spec, None, &())
        .unwrap()
        .model;
    let opts = ApplyOptions {
        marginals: Some(1),
        ..ApplyOptions::default()
    };
    let e = predict(
        &model,
        &FileSource::new(uci("sonar.csv")),
        &opts,
        |_| Ok(()),
    )
    .unwrap_err();
    assert!(e.to_string().contains("CRF loss"), "{e}");
    let zero = ApplyOptions {
        chunk_rows: 0,
        ..ApplyOptions::default()
    };
    let e = evaluate(&model, &FileSource::new(uci("sonar.csv")), &zero).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidParameter { name, .. } if name == "chunk_rows"),
        "{e}"
    );
}
