//! Training on kernel matrices the caller computed (MKLpy's way, and the Python package's
//! `kernels="precomputed"`): lp-norm MKL (Kloft et al. 2011) on training Gram matrices,
//! with the built-in selection of C (and p) when no C is given: the same grid, folds and
//! warm-started path as [`super::auto::fit_auto`] on the dictionary's matrices.

use super::auto::{fold_rule, LpPath, C_GRID, FOLDS, P_GRID};
use super::fit::Fitted;
use crate::data::{MatrixRef, Targets};
use crate::error::{Error, Result};
use crate::kernel::{check_psd_with, KernelMatrix, MemoryLimit};
use crate::model::{BatchModel, Model};
use crate::run::{Observer, RunStatus, StopOnly};
use crate::select::{Goal, GridScore, SelectionRecord};
use crate::solver::lp_mkl::{
    check_train_kernels, lp_mkl, p_label, LpMklParams, PrecomputedLpModel,
};
use crate::task::targets::encode_targets;
use crate::task::TaskKind;
use std::ops::Range;
use std::time::Instant;

/// What to learn from precomputed kernels.
#[derive(Debug, Clone, PartialEq)]
pub struct PrecomputedSpec {
    /// lp-MKL's p (`None`: selected from {4/3, 2} when C is selected, 2 otherwise).
    pub p: Option<f64>,
    /// The regularization constant (`None`: selected by cross-validation).
    pub c: Option<f64>,
    pub bias: bool,
    /// Seed of the folds.
    pub seed: u64,
    pub memory: MemoryLimit,
    /// One name per kernel (`None`: `K0`, `K1`, ...).
    pub names: Option<Vec<String>>,
}

impl Default for PrecomputedSpec {
    fn default() -> Self {
        PrecomputedSpec {
            p: None,
            c: None,
            bias: true,
            seed: 0,
            memory: MemoryLimit::default(),
            names: None,
        }
    }
}

/// A model trained on precomputed kernels, with the selection's record when it ran.
#[derive(Debug, Clone)]
pub struct PrecomputedFitted {
    pub fitted: Fitted,
    pub selection: Option<SelectionRecord>,
    pub select_seconds: f64,
}

/// Trains lp-MKL on the training matrices `kernels` (`n x n` each, `n` the targets' rows;
/// finite, symmetric and positive semidefinite, copied once) for `task`, selecting C (and
/// p) by seeded 5-fold (stratified) cross-validation when `spec.c` is `None`. The observer
/// sees the final fit's progress; a request to stop also ends the selection.
pub fn fit_precomputed(
    kernels: &[MatrixRef<'_>],
    targets: &Targets,
    task: TaskKind,
    spec: &PrecomputedSpec,
    observer: &(impl Observer + ?Sized),
) -> Result<PrecomputedFitted> {
    if let Some(c) = spec.c {
        if !(c.is_finite() && c > 0.0) {
            return Err(Error::param("C", c, "a positive number"));
        }
    }
    if let Some(p) = spec.p {
        if p.is_nan() || p < 1.0 {
            return Err(Error::param("p", p, "a number >= 1 (or inf)"));
        }
    }
    let n = targets.len();
    if n == 0 {
        return Err(Error::data("the training set has no rows"));
    }
    check_train_kernels(kernels, n)?;
    let names = match &spec.names {
        Some(names) if names.len() != kernels.len() => {
            return Err(Error::shape(
                "kernel names (one per kernel)",
                kernels.len(),
                names.len(),
            ))
        }
        Some(names) => names.clone(),
        None => (0..kernels.len()).map(|m| format!("K{m}")).collect(),
    };
    let (classes, y) = encode_targets(task, targets)?;
    spec.memory.check(
        kernels.len() * n * n * std::mem::size_of::<f64>(),
        "the copies of the training kernel matrices",
    )?;
    check_train_kernels_psd(kernels, &names, &spec.memory)?;
    let owned: Vec<KernelMatrix> = kernels
        .iter()
        .map(|k| KernelMatrix::Dense(k.to_matrix()))
        .collect();
    let start = Instant::now();
    let (p, c, selection) = match spec.c {
        Some(c) => (spec.p.unwrap_or(2.0), c, None),
        None => select(&owned, &y, targets, task, spec, observer)?,
    };
    let select_seconds = start.elapsed().as_secs_f64();
    let params = LpMklParams {
        p,
        lambda: 1.0 / c,
        bias: spec.bias,
        ..LpMklParams::default()
    };
    let (solution, run) = lp_mkl(&owned, &y, &params, observer)?;
    let lambda = solution.lambda;
    let mut model = BatchModel {
        task,
        classes,
        feature_names: Vec::new(),
        learner: PrecomputedLpModel {
            n_train: n,
            kernel_names: names,
            solution,
        },
        selection: None,
    };
    if run.status != RunStatus::Cancelled {
        model.selection = selection.clone();
    }
    Ok(PrecomputedFitted {
        fitted: Fitted {
            model: Model::Precomputed(model),
            run,
            lambda,
            path_choice: None,
            notes: Vec::new(),
        },
        selection,
        select_seconds,
    })
}

/// Refuses a training kernel matrix that is not positive semidefinite
/// ([`crate::kernel::check_psd`]: smallest eigenvalue below `-1e-6` times the largest
/// eigenvalue magnitude), naming it by index and name. One matrix at a time, each `O(n^3)`
/// with one `n x n` copy under `memory` (a Cholesky factorization for a matrix that passes;
/// the eigenvalues, for the message, only for one that does not).
fn check_train_kernels_psd(
    kernels: &[MatrixRef<'_>],
    names: &[String],
    memory: &MemoryLimit,
) -> Result<()> {
    for (m, (k, name)) in kernels.iter().zip(names).enumerate() {
        check_psd_with(*k, &format!("kernel {m} ({name})"), memory)?;
    }
    Ok(())
}

/// The chosen p and C with the record; C = 1 and p = 2 (or the given p) when the table
/// is too small for the folds.
fn select(
    owned: &[KernelMatrix],
    y: &crate::data::Matrix,
    targets: &Targets,
    task: TaskKind,
    spec: &PrecomputedSpec,
    observer: &(impl Observer + ?Sized),
) -> Result<(f64, f64, Option<SelectionRecord>)> {
    let (metric, goal) = match task {
        TaskKind::Regression => ("mse", Goal::Minimize),
        _ => ("accuracy", Goal::Maximize),
    };
    let Some((strategy, method)) = fold_rule(targets, FOLDS, spec.seed) else {
        let record = SelectionRecord {
            method: format!("too few rows for {FOLDS}-fold cross-validation: C = 1"),
            metric: metric.into(),
            learner_choice: None,
            grid: Vec::new(),
            chosen: None,
        };
        return Ok((spec.p.unwrap_or(2.0), 1.0, Some(record)));
    };
    let splits = strategy.splits_for(targets)?;
    let ps: Vec<f64> = match spec.p {
        Some(p) => vec![p],
        None => P_GRID.to_vec(),
    };
    let groups: Vec<(Range<usize>, f64)> = ps.iter().map(|&p| (0..owned.len(), p)).collect();
    let path = LpPath {
        kernels: owned,
        y,
        targets,
        task,
        bias: spec.bias,
    };
    let stop = StopOnly(observer);
    let scores = path.scores(&groups, &C_GRID, &splits, goal, &stop)?;
    let mut grid = Vec::new();
    let mut points = Vec::new();
    for (i, &p) in ps.iter().enumerate() {
        for (j, &c) in C_GRID.iter().enumerate() {
            grid.push(GridScore {
                learner: "lp-mkl".into(),
                setting: format!("p={}", p_label(p)),
                c,
                mean: scores[i * C_GRID.len() + j],
            });
            points.push((p, c));
        }
    }
    let chosen = if observer.should_stop() {
        0
    } else {
        super::auto::best_point(&grid, goal, metric)?
    };
    let (p, c) = points[chosen];
    Ok((
        p,
        c,
        Some(SelectionRecord {
            method,
            metric: metric.into(),
            learner_choice: None,
            grid,
            chosen: Some(chosen),
        }),
    ))
}
