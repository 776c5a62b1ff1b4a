//! Training on kernel matrices the caller computed (MKLpy's way, and the Python package's
//! `kernels="precomputed"`) on training Gram matrices: lp-norm MKL (Kloft et al. 2011) by
//! default, or the wrappers around the exact SVM (SMO): SimpleMKL (Rakotomamonjy et al.
//! 2008) and Gauss-Seidel (Kloft et al. 2011, p = 1), for C-SVC, one-vs-rest multiclass
//! (one weight vector shared by the machines) and epsilon-SVR. With no C given, the
//! built-in selection of C (and lp-MKL's p): the same grid and folds as
//! the table's ([`super::auto`]); lp-MKL on the same warm-started path as on the dictionary's
//! matrices, a wrapper by one fit per grid point and fold on the matrices cut to the fold.

use super::auto::{fold_rule, LpPath, C_GRID, FOLDS, P_GRID};
use super::fitted::{Fitted, Selection};
use super::fold_cuts::cut;
use super::spec::{LearnerKind, WrapperSpec};
use crate::data::split::Split;
use crate::data::{Matrix, MatrixRef, Targets};
use crate::error::{Error, Result};
use crate::kernel::{check_psd_with, KernelMatrix, MemoryLimit};
use crate::model::{BatchModel, Model};
use crate::run::{Observer, RunStatus, StopOnly};
use crate::select::{Goal, GridScore, Search, SelectionRecord};
use crate::solver::lp_mkl::{
    check_train_kernels, lp_mkl, p_label, LpMklParams, PrecomputedLpModel,
};
use crate::solver::wrapper::{PrecomputedWrapperModel, WrapperMethod};
use crate::task::targets::{decode, encode_targets, prediction_metric};
use crate::task::TaskKind;
use std::ops::Range;
use std::time::Instant;

/// The learner on precomputed kernels.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum PrecomputedLearner {
    /// lp-norm MKL with the squared loss (Kloft et al. 2011), with [`PrecomputedSpec::p`].
    #[default]
    LpMkl,
    /// SimpleMKL (Rakotomamonjy et al. 2008) around SMO: the spec's `tol`, `max_iter`,
    /// `svm_tol` and `epsilon` (its PEGASOS epochs are for sequences).
    SimpleMkl(WrapperSpec),
    /// Gauss-Seidel wrapper MKL (Kloft et al. 2011, p = 1) around SMO, with the same
    /// settings.
    GaussSeidel(WrapperSpec),
}

impl PrecomputedLearner {
    /// The learner's kind (`lp-mkl`, `simplemkl`, `gauss-seidel`).
    pub fn kind(&self) -> LearnerKind {
        match self {
            PrecomputedLearner::LpMkl => LearnerKind::LpMkl,
            PrecomputedLearner::SimpleMkl(_) => LearnerKind::SimpleMkl,
            PrecomputedLearner::GaussSeidel(_) => LearnerKind::GaussSeidel,
        }
    }

    /// The wrapper method and its settings; `None` for lp-MKL.
    fn wrapper(&self) -> Option<(WrapperMethod, &WrapperSpec)> {
        match self {
            PrecomputedLearner::LpMkl => None,
            PrecomputedLearner::SimpleMkl(w) => Some((WrapperMethod::SimpleMkl, w)),
            PrecomputedLearner::GaussSeidel(w) => Some((WrapperMethod::GaussSeidel, w)),
        }
    }
}

/// What to learn from precomputed kernels.
#[derive(Debug, Clone, PartialEq)]
pub struct PrecomputedSpec {
    /// lp-MKL (default), SimpleMKL or Gauss-Seidel.
    pub learner: PrecomputedLearner,
    /// lp-MKL's p (`None`: selected from {4/3, 2} when C is selected, 2 otherwise).
    pub p: Option<f64>,
    /// The regularization constant (`None`: selected by cross-validation).
    pub c: Option<f64>,
    /// lp-MKL's unpenalized bias (the wrappers' SVMs always have their offset: `false` only
    /// adds a note).
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
            learner: PrecomputedLearner::LpMkl,
            p: None,
            c: None,
            bias: true,
            seed: 0,
            memory: MemoryLimit::default(),
            names: None,
        }
    }
}

/// Trains `spec.learner` on the training matrices `kernels` (`n x n` each, `n` the targets'
/// rows; finite, symmetric and positive semidefinite, copied once) for `task`, selecting C
/// (and lp-MKL's p) by seeded 5-fold (stratified) cross-validation when `spec.c` is `None`.
/// The observer sees the final fit's progress; a request to stop also ends the selection.
pub(crate) fn fit_precomputed(
    kernels: &[MatrixRef<'_>],
    targets: &Targets,
    task: TaskKind,
    spec: &PrecomputedSpec,
    observer: &dyn Observer,
) -> Result<Fitted> {
    if let Some(c) = spec.c {
        if !(c.is_finite() && c > 0.0) {
            return Err(Error::param("C", c, "a positive number"));
        }
    }
    if let Some(p) = spec.p {
        if spec.learner != PrecomputedLearner::LpMkl {
            return Err(Error::unsupported(format!(
                "p is a setting of lp-mkl, not of {}",
                spec.learner.kind()
            )));
        }
        if p.is_nan() || p < 1.0 {
            return Err(Error::param("p", p, "a number >= 1 (or inf)"));
        }
    }
    if let Some((_, w)) = spec.learner.wrapper() {
        w.check()?;
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
    // The wrappers also keep the weighted sum of the matrices.
    let copies = kernels.len() + usize::from(spec.learner.wrapper().is_some());
    spec.memory.check(
        copies
            .saturating_mul(n)
            .saturating_mul(n)
            .saturating_mul(std::mem::size_of::<f64>()),
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
    let mut fitted = match spec.learner.wrapper() {
        None => {
            let params = LpMklParams {
                p,
                lambda: 1.0 / c,
                bias: spec.bias,
                ..LpMklParams::default()
            };
            let (solution, run) = lp_mkl(&owned, &y, &params, observer)?;
            let lambda = solution.lambda;
            let model = PrecomputedLpModel {
                n_train: n,
                kernel_names: names,
                solution,
            };
            Fitted {
                model: Model::Precomputed(batch(task, classes, model)),
                run,
                lambda,
                path_choice: None,
                notes: Vec::new(),
                selection: None,
                stream: None,
            }
        }
        Some((method, w)) => {
            let grams: Vec<Matrix> = owned.into_iter().map(into_dense).collect();
            let params = w.model_params(method, c, false, spec.seed, spec.memory);
            let (model, run) =
                PrecomputedWrapperModel::fit(&grams, &names, &y, task, &params, observer)?;
            let mut notes = Vec::new();
            if !spec.bias {
                notes.push(
                    "bias = false has no effect: the SVM's offset is part of its dual".into(),
                );
            }
            Fitted {
                model: Model::PrecomputedWrapper(batch(task, classes, model)),
                run,
                lambda: 1.0 / c,
                path_choice: None,
                notes,
                selection: None,
                stream: None,
            }
        }
    };
    if fitted.run.status != RunStatus::Cancelled {
        if let Some(record) = &selection {
            fitted.model.set_selection(record.clone());
        }
    }
    fitted.selection = selection.map(|record| Selection {
        record,
        seconds: select_seconds,
        learner: spec.learner.kind(),
    });
    Ok(fitted)
}

/// A model on precomputed kernels: no feature names, the selection set by the caller.
fn batch<L>(task: TaskKind, classes: Vec<String>, learner: L) -> BatchModel<L> {
    BatchModel {
        task,
        classes,
        feature_names: Vec::new(),
        learner,
        selection: None,
    }
}

/// The matrix of a dense kernel matrix (the copies here are all dense).
fn into_dense(k: KernelMatrix) -> Matrix {
    match k {
        KernelMatrix::Dense(m) => m,
        f @ KernelMatrix::Factor(_) => f.to_dense(),
    }
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
/// is too small for the folds. lp-MKL scores its grid (p x C) on the warm-started path, a
/// wrapper its C grid by [`wrapper_scores`].
fn select(
    owned: &[KernelMatrix],
    y: &Matrix,
    targets: &Targets,
    task: TaskKind,
    spec: &PrecomputedSpec,
    observer: &dyn Observer,
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
            candidates: Vec::new(),
            why: None,
        };
        return Ok((spec.p.unwrap_or(2.0), 1.0, Some(record)));
    };
    let splits = strategy.splits_for(targets)?;
    let stop = StopOnly(observer);
    let ps: Vec<f64> = match (spec.p, spec.learner.wrapper()) {
        (_, Some(_)) => vec![2.0], // not used by the wrappers
        (Some(p), None) => vec![p],
        (None, None) => P_GRID.to_vec(),
    };
    let scores = match spec.learner.wrapper() {
        None => {
            let groups: Vec<(Range<usize>, f64)> =
                ps.iter().map(|&p| (0..owned.len(), p)).collect();
            let path = LpPath {
                kernels: owned,
                y,
                targets,
                task,
                bias: spec.bias,
                weights: None,
            };
            path.scores(&groups, &C_GRID, &splits, goal, &stop)?
        }
        Some((method, w)) => {
            let folds = FoldGrams {
                kernels: owned,
                y,
                targets,
                task,
            };
            folds.wrapper_scores(method, w, spec, &C_GRID, &splits, goal, &stop)?
        }
    };
    let learner = spec.learner.kind().name();
    let mut grid = Vec::new();
    let mut points = Vec::new();
    for (i, &p) in ps.iter().enumerate() {
        for (j, &c) in C_GRID.iter().enumerate() {
            grid.push(GridScore {
                learner: learner.into(),
                setting: match spec.learner {
                    PrecomputedLearner::LpMkl => format!("p={}", p_label(p)),
                    _ => String::new(),
                },
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
            candidates: Vec::new(),
            why: None,
        }),
    ))
}

/// The caller's matrices on all rows with the encoded targets: what a wrapper's
/// cross-validation cuts its folds from.
struct FoldGrams<'a> {
    kernels: &'a [KernelMatrix],
    y: &'a Matrix,
    targets: &'a Targets,
    task: TaskKind,
}

/// One fold's training and validation matrices.
struct Fold {
    train: Vec<Matrix>,
    test: Vec<Matrix>,
    y: Matrix,
    validation: Targets,
}

impl FoldGrams<'_> {
    /// The mean validation score of the wrapper at each C of `c_grid`: on each split (in
    /// parallel) the matrices are cut once ([`super::fold_cuts::cut`]: train x train and
    /// validation x train), then one cold fit per C, as the refit on all rows would run it.
    #[allow(clippy::too_many_arguments)]
    fn wrapper_scores(
        &self,
        method: WrapperMethod,
        w: &WrapperSpec,
        spec: &PrecomputedSpec,
        c_grid: &[f64],
        splits: &[Split],
        goal: Goal,
        stop: &dyn Observer,
    ) -> Result<Vec<Option<f64>>> {
        let names: Vec<String> = (0..self.kernels.len()).map(|m| format!("K{m}")).collect();
        let sel = Search::new(c_grid, splits).goal(goal).run_warm(
            |s: &Split| -> Result<Fold> {
                let part = |rows: &[usize]| -> Vec<Matrix> {
                    self.kernels
                        .iter()
                        .map(|k| into_dense(cut(k, rows, &s.train)))
                        .collect()
                };
                Ok(Fold {
                    train: part(&s.train),
                    test: part(&s.validation),
                    y: self.y.select_rows(&s.train),
                    validation: self.targets.select(&s.validation),
                })
            },
            |&c: &f64, _s: &Split, f: &mut Fold| -> Result<f64> {
                let params = w.model_params(method, c, false, spec.seed, spec.memory);
                let (model, _) =
                    PrecomputedWrapperModel::fit(&f.train, &names, &f.y, self.task, &params, stop)?;
                let test: Vec<MatrixRef<'_>> = f.test.iter().map(Matrix::view).collect();
                let pred = decode(self.task, &model.decision(&test)?)?;
                Ok(prediction_metric(&pred, &f.validation).1)
            },
            stop,
        )?;
        Ok((0..c_grid.len())
            .map(|j| sel.mean(j).filter(|m| m.is_finite()))
            .collect())
    }
}
