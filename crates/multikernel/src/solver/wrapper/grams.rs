//! One wrapper fit on dense training Gram matrices, shared by the model on rows
//! ([`super::WrapperModel`], which computes the matrices from its kernels) and the model on
//! the caller's matrices ([`super::PrecomputedWrapperModel`]): the SVM task from the
//! encoded targets (C-SVC, one-vs-rest sharing the weights, epsilon-SVR), SimpleMKL
//! (Rakotomamonjy et al. 2008) or Gauss-Seidel (Kloft et al. 2011, p = 1) around the exact
//! SMO solver, and what the model keeps: the weights, one coefficient column and bias per
//! machine, the trace of `J` and the final gaps.

use super::svm_inner::{SvmInner, SvmTask};
use super::{gauss_seidel, simplemkl, InnerSolve, WrapperMethod, WrapperModelParams, WrapperStep};
use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::run::{Control, Observer, RunInfo};
use crate::solver::smo::SvmFit;
use crate::task::TaskKind;

/// What a wrapper fit learns: `f(x) = sum_m d_m K_m(x, X) coef + b` per machine.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GramFit {
    /// Kernel weights `d` on the simplex.
    pub weights: Vec<f64>,
    /// `n x machines`: `y_i a_i` (C-SVC) or `a_i - a*_i` (epsilon-SVR) per machine.
    pub coef: Matrix,
    pub bias: Vec<f64>,
    /// `J(d)` per outer iteration.
    pub objective: Vec<f64>,
    /// The relative MKL duality gap at the end.
    pub mkl_gap: f64,
    /// The SVM's duality gap at the end (summed over machines).
    pub svm_gap: f64,
}

/// The machines' labels from the encoded targets (`-1/+1` column, one-hot columns, or real
/// values).
pub(crate) fn svm_task(task: TaskKind, y: &Matrix, epsilon: f64) -> Result<SvmTask> {
    Ok(match task {
        TaskKind::Binary => SvmTask::Binary((0..y.rows).map(|i| y.get(i, 0)).collect()),
        TaskKind::Multiclass => SvmTask::OneVsRest {
            classes: (0..y.rows)
                .map(|i| {
                    y.row(i)
                        .iter()
                        .position(|&v| v > 0.5)
                        .ok_or_else(|| Error::data(format!("row {i} has no class")))
                })
                .collect::<Result<_>>()?,
            k: y.cols,
        },
        TaskKind::Regression => SvmTask::Regression {
            z: (0..y.rows).map(|i| y.get(i, 0)).collect(),
            epsilon,
        },
    })
}

/// SimpleMKL or Gauss-Seidel (`params.method`, with `params.c`, `params.epsilon`,
/// `params.smo` and `params.wrapper`; the rows' settings `standardize`, `seed` and `memory`
/// are not used) on the training Gram matrices `grams` (`n x n` each, finite, symmetric)
/// with the encoded targets `y` of `task`
/// ([`crate::task::targets::encode_targets`]). `on_step` sees each outer iteration and may
/// stop the run; a cancelled run gives the fit at the last accepted weights.
pub(crate) fn fit_grams(
    grams: &[Matrix],
    y: &Matrix,
    task: TaskKind,
    params: &WrapperModelParams,
    observer: &dyn Observer,
    on_step: &mut dyn FnMut(&WrapperStep) -> Control,
) -> Result<(GramFit, RunInfo)> {
    let svm = svm_task(task, y, params.epsilon)?;
    let mut inner = SvmInner::new(grams, svm, params.c, params.smo)?
        .with_row_weights(params.row_weights.clone())?;
    let mut hook = |s: &WrapperStep, _: &InnerSolve<Vec<SvmFit>>| on_step(s);
    let result = match params.method {
        WrapperMethod::SimpleMkl => simplemkl(&mut inner, &params.wrapper, observer, &mut hook),
        WrapperMethod::GaussSeidel => {
            gauss_seidel(&mut inner, &params.wrapper, observer, &mut hook)
        }
    }?;
    let fits = &result.solve.state;
    let n = y.rows;
    let mut coef = Matrix::zeros(n, fits.len());
    for (o, f) in fits.iter().enumerate() {
        for (i, v) in f.coef.iter().enumerate() {
            coef.set(i, o, *v);
        }
    }
    let fit = GramFit {
        weights: result.weights.clone(),
        coef,
        bias: fits.iter().map(|f| f.bias).collect(),
        objective: result.steps.iter().map(|s| s.objective).collect(),
        mkl_gap: result.steps.last().map_or(f64::NAN, |s| s.gap),
        svm_gap: result.solve.gap.unwrap_or(f64::NAN),
    };
    Ok((fit, result.run))
}
