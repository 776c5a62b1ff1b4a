//! The wrapper learners (SimpleMKL, Gauss-Seidel) through the estimator: the kernel the
//! labels depend on gets the weight, a single kernel gives the plain SVM (the SMO solve with
//! weight 1), the three tasks train and round-trip through the model bytes, bad input is
//! refused.

use multikernel::data::ocr::read_ocr;
use multikernel::data::{Dataset, Matrix, Targets};
use multikernel::engine::solver::smo::{svc, SmoParams};
use multikernel::estimator::{fit, Learner, LearnerKind, LearnerSpec, Task, WrapperSpec};
use multikernel::kernel::{fit_all, kernel_matrices, KernelSpec, MemoryLimit};
use multikernel::model::Model;
use multikernel::Error;
use rand::{Rng, SeedableRng};

/// 200 rows of 6 uniform features; the class is `x_2 * x_2 > 0.3` with 3% of the labels
/// flipped: only feature 2 carries the signal.
fn one_feature_table(seed: u64) -> Dataset {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (n, d) = (200, 6);
    let data: Vec<f64> = (0..n * d).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let y: Vec<usize> = (0..n)
        .map(|i| {
            let v = data[i * d + 2];
            let c = usize::from(v * v > 0.3);
            if rng.gen_bool(0.03) {
                1 - c
            } else {
                c
            }
        })
        .collect();
    Dataset {
        x: Matrix::from_vec(n, d, data),
        targets: Targets::Classes {
            classes: vec!["a".into(), "b".into()],
            y,
        },
        feature_names: (0..d).map(|j| format!("x{j}")).collect(),
    }
}

fn spec(task: Task, kind: LearnerKind, kernels: &[&str], c: f64) -> LearnerSpec {
    LearnerSpec::new(task, Learner::default_for(kind))
        .with_kernels(kernels.iter().map(|s| s.parse().unwrap()).collect())
        .with_c(c)
}

/// One Gaussian kernel per feature: SimpleMKL and Gauss-Seidel put most of the weight on
/// the kernel of feature 2, the only one the labels depend on.
#[test]
fn the_informative_kernel_gets_the_weight() {
    let data = one_feature_table(1);
    for kind in [LearnerKind::SimpleMkl, LearnerKind::GaussSeidel] {
        let s = spec(Task::Binary, kind, &["perfeature:rbf"], 10.0);
        let fitted = fit(&data, &s, &()).unwrap();
        let weights = fitted.model.summary().kernel_weights();
        assert_eq!(weights.len(), 6);
        let total: f64 = weights.iter().map(|w| w.1).sum();
        assert!((total - 1.0).abs() < 1e-9, "{weights:?}");
        assert!(weights[2].1 > 0.7, "{kind}: {weights:?}");
        let acc = fitted
            .model
            .score_with(data.x.view(), &data.targets, &MemoryLimit::default())
            .unwrap()
            .value;
        assert!(acc > 0.9, "{kind}: training accuracy {acc}");
    }
}

/// With one kernel the weight is 1 and the model is the SVM of the SMO solver on that
/// kernel: the same decision values.
#[test]
fn one_kernel_is_the_plain_svm() {
    let data = one_feature_table(2);
    let kernels = ["rbf:sigma2=2"];
    let mut s = spec(Task::Binary, LearnerKind::SimpleMkl, &kernels, 3.0);
    s.standardize = false;
    let Learner::SimpleMkl(w) = &mut s.learner else {
        unreachable!()
    };
    w.svm_tol = 1e-8;
    let model = fit(&data, &s, &()).unwrap().model;
    let f = model.decision_function(data.x.view()).unwrap();

    let specs: Vec<KernelSpec> = kernels.iter().map(|k| k.parse().unwrap()).collect();
    let fitted = fit_all(&specs, &data.x, &data.feature_names, 0).unwrap();
    let k = kernel_matrices(&fitted, &data.x, &MemoryLimit::default()).unwrap()[0].to_dense();
    let Targets::Classes { y, .. } = &data.targets else {
        unreachable!()
    };
    let ys: Vec<f64> = y.iter().map(|&c| if c == 1 { 1.0 } else { -1.0 }).collect();
    let params = SmoParams {
        tol: 1e-8,
        ..SmoParams::default()
    };
    let svm = svc(k.view(), &ys, 3.0, &params, &()).unwrap();
    let g = svm.decision(k.view()).unwrap();
    assert_eq!(g.len(), data.len());
    for (i, gi) in g.iter().enumerate() {
        assert!(
            (f.get(i, 0) - gi).abs() < 1e-5,
            "row {i}: {} vs {gi}",
            f.get(i, 0)
        );
    }
}

/// Multiclass (one machine per class, shared weights) and regression (epsilon-SVR) train,
/// predict well on their training rows and survive the model bytes.
#[test]
fn multiclass_and_regression_round_trip() {
    let data = one_feature_table(3);
    let x = &data.x;
    let classes: Vec<usize> = (0..x.rows)
        .map(|i| {
            let v = x.get(i, 2);
            if v < -0.33 {
                0
            } else if v < 0.33 {
                1
            } else {
                2
            }
        })
        .collect();
    let multi = Dataset {
        targets: Targets::Classes {
            classes: vec!["lo".into(), "mid".into(), "hi".into()],
            y: classes,
        },
        ..data.clone()
    };
    let reg = Dataset {
        targets: Targets::Real((0..x.rows).map(|i| (3.0 * x.get(i, 2)).sin()).collect()),
        ..data.clone()
    };
    let kernels = ["rbf", "linear"];
    for kind in [LearnerKind::SimpleMkl, LearnerKind::GaussSeidel] {
        for (task, d) in [(Task::Multiclass, &multi), (Task::Regression, &reg)] {
            let fitted = fit(d, &spec(task, kind, &kernels, 10.0), &()).unwrap();
            let m = &fitted.model;
            let score = m
                .score_with(d.x.view(), &d.targets, &MemoryLimit::default())
                .unwrap();
            match task {
                Task::Multiclass => assert!(score.value > 0.9, "{kind}: {score:?}"),
                _ => assert!(score.value < 0.05, "{kind}: {score:?}"),
            }
            let back = Model::from_bytes(&m.to_bytes().unwrap()).unwrap();
            assert_eq!(
                back.decision_function(d.x.view()).unwrap(),
                m.decision_function(d.x.view()).unwrap()
            );
            assert!(
                m.summary().headline.contains("MKL gap"),
                "{}",
                m.summary().headline
            );
        }
    }
}

#[test]
fn bad_settings_are_refused() {
    let data = one_feature_table(4);
    for c in [0.0, -2.0] {
        let s = spec(Task::Binary, LearnerKind::SimpleMkl, &["rbf"], c);
        assert!(fit(&data, &s, &()).is_err(), "C = {c}");
    }
    for w in [
        WrapperSpec {
            tol: 0.0,
            ..WrapperSpec::default()
        },
        WrapperSpec {
            svm_tol: f64::NAN,
            ..WrapperSpec::default()
        },
        WrapperSpec {
            epsilon: -1.0,
            ..WrapperSpec::default()
        },
        WrapperSpec {
            max_iter: 0,
            ..WrapperSpec::default()
        },
    ] {
        let s = LearnerSpec::new(Task::Binary, Learner::GaussSeidel(w.clone())).with_c(1.0);
        assert!(
            matches!(fit(&data, &s, &()), Err(Error::InvalidParameter { .. })),
            "{w:?}"
        );
    }
    // One outer iteration: the cap is a status, the model usable.
    let mut s = spec(
        Task::Binary,
        LearnerKind::GaussSeidel,
        &["rbf", "linear"],
        1.0,
    );
    if let Learner::GaussSeidel(w) = &mut s.learner {
        w.max_iter = 1;
        w.tol = 1e-12;
    }
    let fitted = fit(&data, &s, &()).unwrap();
    assert_eq!(
        fitted.run.status,
        multikernel::run::RunStatus::IterationLimit
    );
    assert!(fitted.model.predict(data.x.view()).is_ok());
}

/// Sequences through the estimator: both wrappers train on the shipped OCR words, the
/// model says which wrapper made it, predicts the same through `Model` as through the
/// sequence model itself, and survives the model bytes.
#[test]
fn sequence_wrappers_through_the_model() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/models-v1");
    let train = read_ocr(&dir.join("ocr-train-small.data.gz")).unwrap();
    let test = read_ocr(&dir.join("ocr-test.data.gz")).unwrap();
    let lim = MemoryLimit::default();
    for (kind, name) in [
        (LearnerKind::SimpleMkl, "SimpleMKL"),
        (LearnerKind::GaussSeidel, "Gauss-Seidel"),
    ] {
        let mut s = spec(Task::Sequence, kind, &["linear", "rbf"], 10.0);
        match &mut s.learner {
            Learner::SimpleMkl(w) | Learner::GaussSeidel(w) => {
                w.first_epochs = 5;
                w.warm_epochs = 2;
                w.max_iter = 3;
            }
            other => panic!("{other:?}"),
        }
        let fitted = fit(&train, &s, &()).unwrap();
        let m = &fitted.model;
        let Model::Sequence(seq) = m else {
            panic!("{kind}: not a sequence model");
        };
        assert!(
            m.summary().learner.contains(name),
            "{}",
            m.summary().learner
        );
        let pred = m
            .predict_sequences_with(test.x.view(), &test.spans, &lim)
            .unwrap();
        assert_eq!(pred, seq.predict_data(&test, &lim).unwrap());
        let back = Model::from_bytes(&m.to_bytes().unwrap()).unwrap();
        assert_eq!(
            back.predict_sequences_with(test.x.view(), &test.spans, &lim)
                .unwrap(),
            pred
        );
    }
}
