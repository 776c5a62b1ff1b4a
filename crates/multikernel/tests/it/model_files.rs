//! Model files: the version-1 files written by commit 3b69a82 (tests/fixtures/models-v1,
//! made by its `make.sh`) still load and predict what they predicted then; every model kind
//! round-trips through bytes and files; the same seed gives byte-identical files; shapes are
//! checked on loading.

use multikernel::data::ocr::read_ocr;
use multikernel::data::{read_for_model, read_table, Dataset, TargetKind, Targets};
use multikernel::estimator::{
    fit, Budget, GompSpec, Learner, LearnerKind, LearnerSpec, LossKind, LpMklSpec, OnlineSpec,
    OnlineSteps, PolySpec, Task,
};
use multikernel::kernel::MemoryLimit;
use multikernel::model::Model;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models-v1")
}

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../data/uci/{name}"))
}

/// What a model predicts for a file, one line per row or word, as `predict` printed it.
fn predictions(model: &Model, data: &Path) -> Vec<String> {
    let limit = MemoryLimit::default();
    if let Model::Sequence(m) = model {
        let test = read_ocr(data).unwrap();
        let pred = m.predict_names(&test.x, &test.spans, &limit).unwrap();
        return pred.iter().map(|w| w.concat()).collect();
    }
    let rows = read_for_model(data, None, &model.schema().unwrap()).unwrap();
    match model.predict_with(rows.x.view(), &limit).unwrap() {
        Targets::Classes { classes, y } => y.iter().map(|&c| classes[c].clone()).collect(),
        Targets::Real(v) => v.iter().map(|x| format!("{x}")).collect(),
    }
}

#[test]
fn version_1_models_load_and_predict_the_same() {
    let dir = fixtures();
    let map = std::fs::read_to_string(dir.join("data-map.txt")).unwrap();
    let mut kinds = std::collections::BTreeSet::new();
    let mut checked = 0;
    for line in map.lines() {
        let (name, data) = line.split_once(' ').unwrap();
        let data = if data.starts_with("ocr-") {
            dir.join(data)
        } else {
            shipped(data)
        };
        let model = Model::load(&dir.join(format!("{name}.model")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        kinds.insert(format!(
            "{}/{}",
            model.task_name(),
            name.split('-').next().unwrap()
        ));
        let want = std::fs::read_to_string(dir.join(format!("{name}.predict.txt"))).unwrap();
        let want: Vec<&str> = want.lines().collect();
        let got = predictions(&model, &data);
        assert_eq!(got.len(), want.len(), "{name}");
        // The same text: class names, and values to the last bit (shortest round-trip
        // form).
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{name} row {i}: now and in version 1");
        }
        checked += 1;
    }
    // Every kind of model: online (4 tasks/losses), sequences (2), GOMP, lp-MKL (2), mirror
    // descent and UCD.
    assert_eq!(checked, 12, "{kinds:?}");
}

fn table(name: &str, target: TargetKind) -> Dataset {
    read_table(&shipped(name), None, target, None, None).unwrap()
}

/// Every learner on a small table: (label, spec, data).
fn every_learner() -> Vec<(&'static str, LearnerSpec, Dataset)> {
    let sonar = table("sonar.csv", TargetKind::Classes);
    let glass = table("glass.csv", TargetKind::Classes);
    let boston = table("boston-housing.csv", TargetKind::Real);
    let spec = |task: Task, learner: Learner, kernels: &[&str]| {
        LearnerSpec::new(task, learner)
            .with_kernels(kernels.iter().map(|k| k.parse().unwrap()).collect())
            .with_seed(5)
    };
    let online = |loss: Option<LossKind>| {
        Learner::Online(OnlineSpec {
            loss,
            steps: OnlineSteps {
                epochs: 3,
                ..OnlineSteps::default()
            },
            ..OnlineSpec::default()
        })
    };
    let poly = PolySpec {
        degree: 2,
        budget: Budget::Iterations(50),
        ..PolySpec::default()
    };
    vec![
        (
            "online binary",
            spec(Task::Binary, online(None), &["rbf", "linear"]),
            sonar.clone(),
        ),
        (
            "online multiclass",
            spec(Task::Multiclass, online(Some(LossKind::Logistic)), &["rbf"]),
            glass.clone(),
        ),
        (
            "online regression",
            spec(Task::Regression, online(None), &["rbf", "poly:degree=2"]),
            boston.clone(),
        ),
        (
            "gomp",
            spec(
                Task::Multiclass,
                Learner::Gomp(GompSpec {
                    max_kernels: 3,
                    ..GompSpec::default()
                }),
                &["perfeature:rbf"],
            ),
            glass,
        ),
        (
            "lp-mkl",
            spec(
                Task::Regression,
                Learner::LpMkl(LpMklSpec { p: 4.0 / 3.0 }),
                &["rbf", "linear"],
            ),
            boston.clone(),
        ),
        (
            "mirror descent",
            spec(Task::Binary, Learner::MirrorDescent(poly.clone()), &[]),
            sonar,
        ),
        (
            "ucd",
            spec(Task::Regression, Learner::Ucd(poly), &[]),
            boston,
        ),
    ]
}

#[test]
fn every_kind_round_trips_through_bytes_and_files() {
    let dir = tempfile::tempdir().unwrap();
    for (label, spec, data) in every_learner() {
        let fitted = fit(&data, &spec, &()).unwrap_or_else(|e| panic!("{label}: {e}"));
        let m = &fitted.model;
        let before = m.decision_function(data.x.view()).unwrap();
        let bytes = m.to_bytes().unwrap();
        let back = Model::from_bytes(&bytes).unwrap();
        assert_eq!(
            back.decision_function(data.x.view()).unwrap(),
            before,
            "{label}"
        );
        assert_eq!(
            back.to_bytes().unwrap(),
            bytes,
            "{label}: bytes -> model -> bytes"
        );
        let path = dir.path().join("m.model");
        m.save(&path).unwrap();
        assert_eq!(
            std::fs::read(&path).unwrap(),
            bytes,
            "{label}: file = bytes"
        );
        let loaded = Model::load(&path).unwrap();
        assert_eq!(
            loaded.predict(data.x.view()).unwrap(),
            m.predict(data.x.view()).unwrap()
        );
        assert_eq!(loaded.summary(), m.summary(), "{label}");
        // The same seed gives the same file, byte for byte.
        let again = fit(&data, &spec, &()).unwrap();
        assert_eq!(
            again.model.to_bytes().unwrap(),
            bytes,
            "{label}: not reproducible"
        );
        // New files say who wrote them.
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.contains("\"version\":2") && text.contains("\"crate_version\""),
            "{label}"
        );
        assert!(
            !text.contains("seconds"),
            "{label}: a timing in the model file"
        );
    }
}

#[test]
fn inconsistent_shapes_are_refused_on_loading() {
    let path = fixtures().join("online-binary.model");
    let text = std::fs::read_to_string(path).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    // One bias too many, a coefficient block cut short, a kernel weight missing.
    type Mutation = (&'static str, fn(&mut serde_json::Value));
    let mutations: [Mutation; 3] = [
        ("bias", |m| {
            m["bias"].as_array_mut().unwrap().push(1.0.into())
        }),
        ("coef", |m| {
            m["coef"][0].as_array_mut().unwrap().pop();
        }),
        ("weights", |m| {
            m["weights"].as_array_mut().unwrap().pop();
        }),
    ];
    for (what, mutate) in mutations {
        let mut w = v.clone();
        mutate(&mut w["model"]);
        let e = Model::from_bytes(w.to_string().as_bytes()).unwrap_err();
        assert!(e.to_string().contains("inconsistent"), "{what}: {e}");
    }
    v["version"] = 7.into();
    let e = Model::from_bytes(v.to_string().as_bytes()).unwrap_err();
    assert!(e.to_string().contains("version 7"), "{e}");
}

#[test]
fn learners_report_their_kind_and_the_cli_names_parse() {
    for k in LearnerKind::ALL {
        assert_eq!(k.name().parse::<LearnerKind>().unwrap(), k);
    }
}

#[test]
fn sequence_models_round_trip_and_hold_no_timings() {
    let words = read_ocr(&fixtures().join("ocr-train-small.data.gz")).unwrap();
    let spec = LearnerSpec::new(
        Task::Sequence,
        Learner::Online(OnlineSpec {
            steps: OnlineSteps {
                epochs: 2,
                learn_beta0: true,
                ..OnlineSteps::default()
            },
            loss: Some(LossKind::Logistic),
            ..OnlineSpec::default()
        }),
    )
    .with_kernels(vec![
        "linear:norm=diag".parse().unwrap(),
        "bspline".parse().unwrap(),
    ]);
    let m = fit(&words, &spec, &()).unwrap().model;
    let bytes = m.to_bytes().unwrap();
    let back = Model::from_bytes(&bytes).unwrap();
    let lim = MemoryLimit::default();
    assert_eq!(
        back.predict_sequences_with(words.x.view(), &words.spans, &lim)
            .unwrap(),
        m.predict_sequences_with(words.x.view(), &words.spans, &lim)
            .unwrap()
    );
    assert_eq!(
        fit(&words, &spec, &()).unwrap().model.to_bytes().unwrap(),
        bytes
    );
    let text = String::from_utf8(bytes).unwrap();
    assert!(!text.contains("seconds"), "a timing in the model file");
    assert_eq!(back.summary().setting("loss"), Some("crf"));
}
