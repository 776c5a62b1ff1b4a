//! lp-MKL on precomputed kernels (the Python package's `kernels="precomputed"`) against its
//! twin: the same kernels computed by the library from the rows (`LpMklModel`), which must
//! give the same decision values; the checks of the matrices; the model bytes.

use crate::fit_precomputed;
use multikernel::data::{read_table, Matrix, MatrixRef, TargetKind, Targets};
use multikernel::engine::task::TaskKind;
use multikernel::estimator::{fit, Learner, LearnerSpec, LpMklSpec, PrecomputedSpec, Task};
use multikernel::kernel::{fit_all, kernel_matrices, KernelSpec, MemoryLimit};
use multikernel::model::Model;
use multikernel::Error;
use std::path::Path;

fn sonar() -> multikernel::data::Dataset {
    read_table(
        Path::new("../../data/uci/sonar.csv"),
        None,
        TargetKind::Classes,
        None,
        None,
    )
    .unwrap()
}

fn specs() -> Vec<KernelSpec> {
    ["rbf:sigma2=40", "linear", "poly:degree=2"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect()
}

/// Dense training Gram matrices of the specs on the rows `x`, by the library's kernels.
fn grams(x: &Matrix) -> Vec<Matrix> {
    let names: Vec<String> = (0..x.cols).map(|j| format!("x{j}")).collect();
    let fitted = fit_all(&specs(), x, &names, 0).unwrap();
    kernel_matrices(&fitted, x, &MemoryLimit::default())
        .unwrap()
        .iter()
        .map(|k| k.to_dense())
        .collect()
}

#[test]
fn precomputed_kernels_give_the_decision_values_of_the_rows_path() {
    let data = sonar();
    let mut spec = LearnerSpec::new(Task::Binary, Learner::LpMkl(LpMklSpec { p: 4.0 / 3.0 }))
        .with_kernels(specs())
        .with_c(10.0);
    spec.standardize = false;
    let rows_model = fit(&data, &spec, &()).unwrap().model;

    let k = grams(&data.x);
    let refs: Vec<MatrixRef<'_>> = k.iter().map(|m| m.view()).collect();
    let pre = PrecomputedSpec {
        p: Some(4.0 / 3.0),
        c: Some(10.0),
        ..PrecomputedSpec::default()
    };
    let fitted = fit_precomputed(&refs, &data.targets, TaskKind::Binary, &pre, &()).unwrap();
    let f_pre = fitted.model.decision_kernels(&refs).unwrap();
    let f_rows = rows_model.decision_function(data.x.view()).unwrap();
    let worst = f_pre
        .data
        .iter()
        .zip(&f_rows.data)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-8, "largest difference {worst}");
    // The same kernel weights.
    let Model::Precomputed(m) = &fitted.model else {
        panic!()
    };
    let Model::LpMkl(r) = &rows_model else {
        panic!()
    };
    for (a, b) in m.learner.solution.theta.iter().zip(&r.learner.theta) {
        assert!((a - b).abs() < 1e-9);
    }
    // Predictions from the kernels are the rows path's.
    assert_eq!(
        fitted.model.predict_kernels(&refs).unwrap(),
        rows_model.predict(data.x.view()).unwrap()
    );
}

#[test]
fn selection_on_precomputed_kernels_records_its_grid_and_round_trips() {
    let data = sonar();
    let k = grams(&data.x);
    let refs: Vec<MatrixRef<'_>> = k.iter().map(|m| m.view()).collect();
    let fitted = fit_precomputed(
        &refs,
        &data.targets,
        TaskKind::Binary,
        &PrecomputedSpec::default(),
        &(),
    )
    .unwrap();
    let record = fitted.selection.unwrap().record;
    assert_eq!(record.grid.len(), 10); // p in {4/3, 2} x five C
    assert!(record.chosen.is_some());
    let model = fitted.model;
    assert_eq!(model.selection(), Some(&record));
    let back = Model::from_bytes(&model.to_bytes().unwrap()).unwrap();
    assert_eq!(
        back.decision_kernels(&refs).unwrap(),
        model.decision_kernels(&refs).unwrap()
    );
    // Rows are refused with what to do instead.
    let err = back.predict(data.x.view()).unwrap_err();
    assert!(err.to_string().contains("kernel matrices"), "{err}");
}

#[test]
fn bad_matrices_are_refused_with_what_was_expected() {
    let data = sonar();
    let n = data.len();
    let k = grams(&data.x);
    let fixed = PrecomputedSpec {
        c: Some(1.0),
        ..PrecomputedSpec::default()
    };
    let run = |ks: &[Matrix]| {
        let refs: Vec<MatrixRef<'_>> = ks.iter().map(|m| m.view()).collect();
        fit_precomputed(&refs, &data.targets, TaskKind::Binary, &fixed, &()).map(|_| ())
    };
    let msg = |r: Result<(), Error>| r.unwrap_err().to_string();
    assert!(msg(run(&[])).contains("at least one kernel matrix"));
    let small = Matrix::zeros(n - 1, n - 1);
    assert!(msg(run(&[k[0].clone(), small]))
        .contains("kernel 1: a training kernel matrix must be n x n"));
    let mut asym = k[0].clone();
    asym.set(3, 1, asym.get(3, 1) + 0.5);
    assert!(msg(run(&[asym])).contains("kernel 0 is not symmetric: K[3, 1]"));
    let mut nan = k[1].clone();
    nan.set(2, 2, f64::NAN);
    assert!(msg(run(&[k[0].clone(), nan])).contains("kernel 1: entry (2, 2) is NaN"));
    // Too little memory for the copies.
    let refs: Vec<MatrixRef<'_>> = k.iter().map(|m| m.view()).collect();
    let tight = PrecomputedSpec {
        memory: MemoryLimit::gib(1e-6),
        ..fixed.clone()
    };
    assert!(matches!(
        fit_precomputed(&refs, &data.targets, TaskKind::Binary, &tight, &()),
        Err(Error::Memory { .. })
    ));
    // Test matrices: one per kernel, n_train columns.
    let model = fit_precomputed(&refs, &data.targets, TaskKind::Binary, &fixed, &())
        .unwrap()
        .model;
    assert!(model
        .decision_kernels(&refs[..2])
        .unwrap_err()
        .to_string()
        .contains("kernel matrices"));
    let narrow = Matrix::zeros(4, n - 1);
    let wrong: Vec<MatrixRef<'_>> = vec![narrow.view(); 3];
    assert!(model
        .decision_kernels(&wrong)
        .unwrap_err()
        .to_string()
        .contains("n_test x n_train"));
    // Regression targets with a classifier task are refused by the target encoder.
    let real = Targets::Real(vec![0.0; n]);
    assert!(fit_precomputed(&refs, &real, TaskKind::Binary, &fixed, &()).is_err());
}

#[test]
fn indefinite_training_kernels_are_refused_with_their_name_and_eigenvalue() {
    let data = sonar();
    let n = data.len();
    let k = grams(&data.x);
    // A sigmoid (tanh) "kernel" on the rows: symmetric, finite, indefinite.
    let mut sigmoid = Matrix::zeros(n, n);
    for i in 0..n {
        for j in 0..n {
            let d: f64 = data
                .x
                .row(i)
                .iter()
                .zip(data.x.row(j))
                .map(|(a, b)| a * b)
                .sum();
            sigmoid.set(i, j, (d / data.x.cols as f64 + 1.0).tanh());
        }
    }
    let ks = [k[0].clone(), k[1].clone(), sigmoid];
    let refs: Vec<MatrixRef<'_>> = ks.iter().map(|m| m.view()).collect();
    let named = PrecomputedSpec {
        c: Some(1.0),
        names: Some(vec!["rbf".into(), "lin".into(), "tanh".into()]),
        ..PrecomputedSpec::default()
    };
    let err = fit_precomputed(&refs, &data.targets, TaskKind::Binary, &named, &()).unwrap_err();
    assert!(matches!(err, Error::Data(_)), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("kernel 2 (tanh) is not positive semidefinite: smallest eigenvalue -"),
        "{msg}"
    );
    assert!(msg.contains("add c*I"), "{msg}");
    // Unnamed kernels are K0, K1, ...; the selection path refuses too.
    let mut flipped = Matrix::from_vec(
        n,
        n,
        (0..n * n)
            .map(|i| if i / n == i % n { 1.0 } else { 0.0 })
            .collect(),
    );
    flipped.set(0, 1, 2.0);
    flipped.set(1, 0, 2.0);
    let refs = [k[0].view(), flipped.view()];
    let msg = fit_precomputed(
        &refs,
        &data.targets,
        TaskKind::Binary,
        &PrecomputedSpec::default(),
        &(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        msg.contains("kernel 1 (K1) is not positive semidefinite: smallest eigenvalue -1.000"),
        "{msg}"
    );
    // The same matrix made positive semidefinite by adding c*I (c = the message's bound) is
    // accepted, as are the library's own Grams (rank-deficient linear kernel on 60 features
    // of 208 rows included).
    let mut fixed = flipped.clone();
    for i in 0..n {
        fixed.set(i, i, fixed.get(i, i) + 1.0);
    }
    let refs = [k[0].view(), k[1].view(), k[2].view(), fixed.view()];
    let fixed_c = PrecomputedSpec {
        c: Some(1.0),
        ..PrecomputedSpec::default()
    };
    assert!(fit_precomputed(&refs, &data.targets, TaskKind::Binary, &fixed_c, &()).is_ok());
}
