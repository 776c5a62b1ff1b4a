//! SimpleMKL and Gauss-Seidel on precomputed kernels (`fit_precomputed` with a wrapper
//! learner, the Python package's `kernels="precomputed", learner="simplemkl"`) against
//! their twin: the vector path (`fit` with `Learner::SimpleMkl` / `GaussSeidel`) on the same
//! kernels computed by the library from the rows, which must give the same kernel weights
//! and decision values; the selection of C against the folds written out; model bytes; the
//! refusals.

use crate::fit_precomputed;
use multikernel::data::{read_table, Dataset, Matrix, MatrixRef, TargetKind, Targets};
use multikernel::engine::select::SplitStrategy;
use multikernel::engine::task::TaskKind;
use multikernel::estimator::{
    fit, Learner, LearnerSpec, PrecomputedLearner, PrecomputedSpec, Task, WrapperSpec,
};
use multikernel::kernel::{fit_all, kernel_matrices, KernelSpec, MemoryLimit};
use multikernel::model::Model;
use multikernel::Error;
use std::path::Path;

fn table(path: &str, target: TargetKind) -> Dataset {
    read_table(Path::new(path), None, target, None, None).unwrap()
}

fn ionosphere() -> Dataset {
    table(
        "tests/fixtures/models-v1/ionosphere-sub.csv",
        TargetKind::Classes,
    )
}

fn specs(list: &[&str]) -> Vec<KernelSpec> {
    list.iter().map(|s| s.parse().unwrap()).collect()
}

/// Rows with even index (training) and odd index (test).
fn halves(data: &Dataset) -> (Dataset, Dataset) {
    let even: Vec<usize> = (0..data.len()).step_by(2).collect();
    let odd: Vec<usize> = (1..data.len()).step_by(2).collect();
    (data.select(&even), data.select(&odd))
}

/// The training Gram matrices as the vector wrappers compute them (`fit_all` +
/// `kernel_matrices` on the training rows, factors made dense) and the test-by-train
/// matrices `K_m(X_test, X_train)` of the same fitted kernels.
fn grams(specs: &[KernelSpec], train: &Matrix, test: &Matrix) -> (Vec<Matrix>, Vec<Matrix>) {
    let names: Vec<String> = (0..train.cols).map(|j| format!("x{j}")).collect();
    let fitted = fit_all(specs, train, &names, 0).unwrap();
    let limit = MemoryLimit::default();
    let k_train = kernel_matrices(&fitted, train, &limit)
        .unwrap()
        .iter()
        .map(|k| k.to_dense())
        .collect();
    let k_test = fitted
        .iter()
        .map(|f| f.gram(test, train, &limit).unwrap().to_dense())
        .collect();
    (k_train, k_test)
}

fn views(ks: &[Matrix]) -> Vec<MatrixRef<'_>> {
    ks.iter().map(|m| m.view()).collect()
}

fn largest_difference(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Fits `learner` at `c` both ways on the even rows of `data` and checks that the weights
/// and the decision values on the odd rows agree within 1e-6; returns the precomputed
/// model and the test matrices.
fn twins(
    data: &Dataset,
    task: Task,
    kind: TaskKind,
    kernels: &[&str],
    learner: Learner,
    c: f64,
) -> (Model, Vec<Matrix>, Dataset) {
    let (train, test) = halves(data);
    let kernels = specs(kernels);
    let mut spec = LearnerSpec::new(task, learner.clone())
        .with_kernels(kernels.clone())
        .with_c(c);
    spec.standardize = false;
    let rows = fit(&train, &spec, &()).unwrap().model;
    let Model::Wrapper(r) = &rows else {
        panic!("the vector path gave {}", rows.summary().learner)
    };

    let (k_train, k_test) = grams(&kernels, &train.x, &test.x);
    let pre = PrecomputedSpec {
        learner: match learner {
            Learner::SimpleMkl(w) => PrecomputedLearner::SimpleMkl(w),
            Learner::GaussSeidel(w) => PrecomputedLearner::GaussSeidel(w),
            _ => unreachable!(),
        },
        c: Some(c),
        ..PrecomputedSpec::default()
    };
    let fitted = fit_precomputed(&views(&k_train), &train.targets, kind, &pre, &()).unwrap();
    let model = fitted.model;
    let Model::PrecomputedWrapper(m) = &model else {
        panic!("fit_precomputed gave {}", model.summary().learner)
    };
    // The same kernel weights, in the same (given) order, and the same SVMs.
    let dw = largest_difference(&m.learner.weights, &r.learner.weights);
    assert!(dw < 1e-6, "kernel weights differ by {dw}");
    assert!(
        m.learner.weights.iter().filter(|w| **w > 1e-3).count() >= 1
            && (m.learner.weights.iter().sum::<f64>() - 1.0).abs() < 1e-9
    );
    assert_eq!(m.learner.objective.len(), r.learner.objective.len());
    assert_eq!(m.learner.converged, r.learner.converged);
    let f_pre = model.decision_kernels(&views(&k_test)).unwrap();
    let f_rows = rows.decision_function(test.x.view()).unwrap();
    assert_eq!((f_pre.rows, f_pre.cols), (f_rows.rows, f_rows.cols));
    let df = largest_difference(&f_pre.data, &f_rows.data);
    assert!(df < 1e-6, "decision values differ by {df}");
    // Not a constant predictor: the decision values spread.
    let spread = f_pre.data.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
        - f_pre.data.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(spread > 0.1, "spread {spread}");
    if kind != TaskKind::Regression {
        // (Regression's predictions are the decision values compared above.)
        assert_eq!(
            model.predict_kernels(&views(&k_test)).unwrap(),
            rows.predict(test.x.view()).unwrap()
        );
    }
    (model, k_test, test)
}

/// The fraction of the rows of `test` (test-by-train matrices) the model labels as
/// `targets` does.
fn accuracy(model: &Model, test: &[Matrix], targets: &Targets) -> f64 {
    let Targets::Classes { y: p, .. } = model.predict_kernels(&views(test)).unwrap() else {
        panic!("not a classifier")
    };
    let Targets::Classes { y, .. } = targets else {
        panic!("not class labels")
    };
    p.iter().zip(y).filter(|(a, b)| a == b).count() as f64 / y.len() as f64
}

const THREE: [&str; 3] = [
    "rbf:sigma2=2",
    "linear:norm=diag",
    "poly:degree=2,norm=diag",
];

#[test]
fn simplemkl_on_precomputed_grams_is_the_vector_path() {
    let (model, k_test, test) = twins(
        &ionosphere(),
        Task::Binary,
        TaskKind::Binary,
        &THREE,
        Learner::SimpleMkl(WrapperSpec::default()),
        10.0,
    );
    let s = model.summary();
    assert!(
        s.learner.contains("Rakotomamonjy et al. 2008"),
        "{}",
        s.learner
    );
    assert!(
        s.headline
            .starts_with("SimpleMKL on precomputed kernels: C 10.0000"),
        "{}",
        s.headline
    );
    // Two kernels share the weight (measured: 0.430, 0, 0.570 in 3 iterations): not a
    // vertex of the simplex.
    let Model::PrecomputedWrapper(m) = &model else {
        panic!()
    };
    assert_eq!(m.learner.weights.iter().filter(|w| **w > 0.1).count(), 2);
    let names: Vec<String> = s.kernel_weights().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["K0", "K1", "K2"]);
    let acc = accuracy(&model, &k_test, &test.targets);
    assert!(acc > 0.75, "accuracy {acc}");
}

#[test]
fn gauss_seidel_on_precomputed_grams_is_the_vector_path() {
    let w = WrapperSpec {
        tol: 1e-3,
        max_iter: 50,
        ..WrapperSpec::default()
    };
    let (model, _, _) = twins(
        &ionosphere(),
        Task::Binary,
        TaskKind::Binary,
        &THREE,
        Learner::GaussSeidel(w),
        1.0,
    );
    assert!(model
        .summary()
        .headline
        .starts_with("Gauss-Seidel MKL on precomputed"));
}

#[test]
fn multiclass_is_the_vector_path_and_round_trips_through_bytes() {
    let glass = table("../../data/uci/glass.csv", TargetKind::Classes);
    let (model, k_test, _) = twins(
        &glass,
        Task::Multiclass,
        TaskKind::Multiclass,
        &["rbf", "linear:norm=trace"],
        Learner::SimpleMkl(WrapperSpec::default()),
        10.0,
    );
    let f = model.decision_kernels(&views(&k_test)).unwrap();
    assert_eq!(f.cols, model.classes().len());
    assert!(model.classes().len() > 2);
    let back = Model::from_bytes(&model.to_bytes().unwrap()).unwrap();
    assert_eq!(back.decision_kernels(&views(&k_test)).unwrap(), f);
    assert_eq!(back.summary().to_string(), model.summary().to_string());
    assert_eq!(back.task_name(), "multiclass");
}

#[test]
fn regression_is_the_vector_path_and_round_trips_through_bytes() {
    let boston = table("../../data/uci/boston-housing.csv", TargetKind::Real);
    let rows: Vec<usize> = (0..160).collect();
    let boston = boston.select(&rows);
    let w = WrapperSpec {
        epsilon: 0.5,
        ..WrapperSpec::default()
    };
    let (model, k_test, test) = twins(
        &boston,
        Task::Regression,
        TaskKind::Regression,
        &["rbf", "linear:norm=trace"],
        Learner::SimpleMkl(w),
        10.0,
    );
    let s = model.summary();
    assert!(
        s.settings
            .contains(&("epsilon".to_string(), "0.5000".to_string())),
        "{:?}",
        s.settings
    );
    let bytes = model.to_bytes().unwrap();
    let back = Model::from_bytes(&bytes).unwrap();
    let Targets::Real(p) = back.predict_kernels(&views(&k_test)).unwrap() else {
        panic!()
    };
    let Targets::Real(y) = &test.targets else {
        panic!()
    };
    assert_eq!(
        back.decision_kernels(&views(&k_test)).unwrap(),
        model.decision_kernels(&views(&k_test)).unwrap()
    );
    // Better than the mean of the targets.
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    let mse = |f: &dyn Fn(usize) -> f64| {
        (0..y.len()).map(|i| (f(i) - y[i]).powi(2)).sum::<f64>() / y.len() as f64
    };
    assert!(mse(&|i| p[i]) < 0.7 * mse(&|_| mean));
    // A model file of this kind with a bad field is refused on reading.
    let text = String::from_utf8(bytes).unwrap();
    let broken = text.replacen("\"n_train\":80", "\"n_train\":81", 1);
    assert_ne!(broken, text);
    assert!(Model::from_bytes(broken.as_bytes()).is_err());
}

#[test]
fn selection_of_c_scores_the_folds_as_fits_at_fixed_c_do() {
    let data = ionosphere();
    let kernels = specs(&THREE);
    let (k, _) = grams(&kernels, &data.x, &data.x);
    let refs = views(&k);
    let spec = PrecomputedSpec {
        learner: PrecomputedLearner::SimpleMkl(WrapperSpec::default()),
        ..PrecomputedSpec::default()
    };
    let fitted = fit_precomputed(&refs, &data.targets, TaskKind::Binary, &spec, &()).unwrap();
    let record = fitted.selection.clone().unwrap().record;
    assert_eq!(record.grid.len(), 5); // the C grid, no p
    assert!(record.grid.iter().all(|g| g.learner == "simplemkl"));
    assert!(
        record.method.contains("5-fold stratified"),
        "{}",
        record.method
    );
    let chosen = record.chosen.unwrap();
    assert_eq!(fitted.model.selection(), Some(&record));
    let Model::PrecomputedWrapper(m) = &fitted.model else {
        panic!()
    };
    assert_eq!(m.learner.c, record.grid[chosen].c);

    // Two grid points against fits at fixed C on the folds cut by hand: 351 rows, at most
    // REPEAT_MAX_ROWS, so 5 folds over SMALL_REPEATS partitions.
    assert!(data.targets.len() <= multikernel::estimator::auto::REPEAT_MAX_ROWS);
    assert!(record.method.starts_with("3 x 5-fold"), "{}", record.method);
    let splits = SplitStrategy::RepeatedStratifiedKFold {
        folds: 5,
        repeats: multikernel::estimator::auto::SMALL_REPEATS,
        seed: 0,
    }
    .splits_for(&data.targets)
    .unwrap();
    let cut = |rows: &[usize], cols: &[usize]| -> Vec<Matrix> {
        k.iter()
            .map(|m| {
                let mut out = Matrix::zeros(rows.len(), cols.len());
                for (a, &i) in rows.iter().enumerate() {
                    for (b, &j) in cols.iter().enumerate() {
                        out.set(a, b, m.get(i, j));
                    }
                }
                out
            })
            .collect()
    };
    for j in [0, 2] {
        let c = record.grid[j].c;
        let mut total = 0.0;
        for s in &splits {
            let (tr, va) = (cut(&s.train, &s.train), cut(&s.validation, &s.train));
            let fixed = PrecomputedSpec {
                c: Some(c),
                ..spec.clone()
            };
            let model = fit_precomputed(
                &views(&tr),
                &data.targets.select(&s.train),
                TaskKind::Binary,
                &fixed,
                &(),
            )
            .unwrap()
            .model;
            total += accuracy(&model, &va, &data.targets.select(&s.validation));
        }
        let mean = total / splits.len() as f64;
        let recorded = record.grid[j].mean.unwrap();
        assert!(
            (mean - recorded).abs() < 1e-12,
            "C = {c}: {mean} by hand, {recorded} recorded"
        );
    }
}

#[test]
fn bad_settings_and_indefinite_matrices_are_refused() {
    let data = ionosphere();
    let n = data.len();
    let (k, _) = grams(&specs(&THREE), &data.x, &data.x);
    let refs = views(&k);
    let run = |spec: PrecomputedSpec| {
        fit_precomputed(&refs, &data.targets, TaskKind::Binary, &spec, &()).map(|_| ())
    };
    let with = |w: WrapperSpec| PrecomputedSpec {
        learner: PrecomputedLearner::SimpleMkl(w),
        c: Some(1.0),
        ..PrecomputedSpec::default()
    };
    let msg = |r: Result<(), Error>| r.unwrap_err().to_string();
    let e = msg(run(PrecomputedSpec {
        c: Some(0.0),
        ..with(WrapperSpec::default())
    }));
    assert!(e.contains("C") && e.contains("positive"), "{e}");
    let e = msg(run(with(WrapperSpec {
        tol: 0.0,
        ..WrapperSpec::default()
    })));
    assert!(e.contains("tol"), "{e}");
    let e = msg(run(with(WrapperSpec {
        svm_tol: f64::NAN,
        ..WrapperSpec::default()
    })));
    assert!(e.contains("svm_tol"), "{e}");
    let e = msg(run(with(WrapperSpec {
        epsilon: -1.0,
        ..WrapperSpec::default()
    })));
    assert!(e.contains("epsilon"), "{e}");
    let e = msg(run(with(WrapperSpec {
        max_iter: 0,
        ..WrapperSpec::default()
    })));
    assert!(e.contains("max_iter"), "{e}");
    let e = msg(run(PrecomputedSpec {
        p: Some(2.0),
        ..with(WrapperSpec::default())
    }));
    assert!(
        e.contains("p is a setting of lp-mkl, not of simplemkl"),
        "{e}"
    );
    // Too little memory for the copies and their weighted sum.
    let tight = PrecomputedSpec {
        memory: MemoryLimit::gib(1e-6),
        ..with(WrapperSpec::default())
    };
    assert!(matches!(
        fit_precomputed(&refs, &data.targets, TaskKind::Binary, &tight, &()),
        Err(Error::Memory { .. })
    ));

    // An indefinite matrix (a tanh "kernel") is refused by name, for both wrappers.
    let mut tanh = Matrix::zeros(n, n);
    for i in 0..n {
        for j in 0..n {
            let d: f64 = data
                .x
                .row(i)
                .iter()
                .zip(data.x.row(j))
                .map(|(a, b)| a * b)
                .sum();
            tanh.set(i, j, (d + 1.0).tanh());
        }
    }
    let ks = [k[0].clone(), tanh];
    for learner in [
        PrecomputedLearner::SimpleMkl(WrapperSpec::default()),
        PrecomputedLearner::GaussSeidel(WrapperSpec::default()),
    ] {
        for c in [Some(1.0), None] {
            let spec = PrecomputedSpec {
                learner: learner.clone(),
                c,
                ..PrecomputedSpec::default()
            };
            let err = fit_precomputed(&views(&ks), &data.targets, TaskKind::Binary, &spec, &())
                .unwrap_err();
            assert!(matches!(err, Error::Data(_)), "{err:?}");
            assert!(
                err.to_string()
                    .contains("kernel 1 (K1) is not positive semidefinite: smallest eigenvalue -"),
                "{err}"
            );
        }
    }
    // The model takes kernel matrices, not rows.
    let model = fit_precomputed(
        &refs,
        &data.targets,
        TaskKind::Binary,
        &with(WrapperSpec::default()),
        &(),
    )
    .unwrap()
    .model;
    assert!(model
        .predict(data.x.view())
        .unwrap_err()
        .to_string()
        .contains("kernel matrices"));
    assert!(model
        .decision_kernels(&refs[..2])
        .unwrap_err()
        .to_string()
        .contains("one per kernel of the model"));
}
