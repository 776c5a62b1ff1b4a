//! The structured wrappers of martins2011's Figure 2: SimpleMKL and Gauss-Seidel on a
//! first-order chain (sequence labeling), each SVM solved by structured PEGASOS.
//!
//! The inner solver ([`SequenceInner`]) is the online learner of Alg. 1
//! ([`crate::solver::online::engine`]) with one kernel group whose Gram matrix is
//! `K_d = sum_m d_m K_m`, the regularizer `lambda/2 ||theta||^2` ([`RegSpec::L2`]), the step
//! `eta_t = 1 / (lambda t)` ([`StepSchedule::Inv`]), the projection onto the ball of radius
//! `sqrt(2 L(0) / lambda)`, `lambda = 1 / (C N)` ([`lambda_from_c`]) and the label-pair
//! scores as the chain's explicit group (beta0 fixed: `lambda/2 ||W||^2`). The first (cold)
//! call runs `first_epochs` epochs (20 in the paper), each later call `warm_epochs` (3)
//! epochs from the previous state, with `t` going on; when `d` changed, the cached scores
//! `F = K_d c` are recomputed first, as `sum_m d_m (K_m c)` from the products the last solve
//! computed for the gradient (else by [`OnlineState::recompute_images`]).
//!
//! With coefficients `c` (one per training position and label) the kernel blocks are
//! `theta_m = d_m sum_j c_j phi_m(x_j)`, so with `q_m = sum_y c_y^T K_m c_y`
//!
//! ```text
//! J(d)     = lambda/2 (sum_m d_m q_m + ||W||^2) + (1/N) sum_i hinge_i     (lambda/2 c^T K_d c + ...)
//! dJ/dd_m  = -lambda/2 q_m                                               (= -lambda ||theta_m||^2 / (2 d_m^2))
//! ```
//!
//! (docs/formulas.md "Wrapper MKL", divided by `C N`). The gradient is Danskin's: it is the
//! derivative in `d_m` of the primal `lambda/2 sum_m ||theta_m||^2 / d_m + loss` at fixed
//! blocks `theta_m` (the scores, hence the loss, do not move), equivalently of the dual's
//! `-lambda/2 c^T K_d c` at fixed `c`.
//!
//! Every method's iterate is also a point of SPOM's problem (the squared l2,1 block norm):
//! [`mkl_objective`] `= lambda/2 (sum_m ||theta_m||)^2 + average loss + lambda/2 ||W||^2`,
//! which for a wrapper's state uses `||theta_m|| = d_m sqrt(q_m)` (never above `J(d)`, by
//! Cauchy-Schwarz on the simplex, and equal to it at the optimal `d` for that state).
//!
//! [`fit_sequence_wrapper`] fits the kernels, runs the method and returns the usual
//! [`SequenceModel`]: one kernel group with the learned weights as its components, so
//! `predict`, `eval` and `inspect` work as for SPOM's models.

use super::grams::{base_grams, c_from_lambda, fit_kernels, lambda_from_c};
use super::model::{KernelGroup, SequenceModel, SequenceTraining, WrapperTraining};
use crate::data::SequenceData;
use crate::error::{Error, Result};
use crate::kernel::{FittedKernel, Gram, KernelSpec, MemoryLimit};
use crate::prox::RegSpec;
use crate::run::{Control, Observer, RunInfo, RunStatus};
use crate::solver::online::compact::{compact, GroupNorms};
use crate::solver::online::{OnlineLearner, OnlineParams, OnlineState, OnlineSteps, StepSchedule};
use crate::solver::wrapper::{
    gauss_seidel, relative_gap, simplemkl, InnerSolve, InnerSolver, OnStep, WrapperMethod,
    WrapperParams, WrapperResult,
};
use crate::task::online::GroupRole;
use crate::task::sequence::{SeqLoss, SequenceTask};
use crate::task::structured::StructuredOnline;
use rayon::prelude::*;

/// The paper's PEGASOS epochs in the first (cold) SVM call.
pub const FIRST_EPOCHS: usize = 20;
/// The paper's warm-started PEGASOS epochs in each later call.
pub const WARM_EPOCHS: usize = 3;

/// SPOM's objective (squared l2,1 MKL with the label-pair scores under l2 shrinkage) from its
/// pieces: `lambda/2 (sum_m block_norms[m])^2 + average_loss + lambda/2 transitions_sqnorm`.
/// The one evaluator of Figure 2: SPOM's `report().objective` with `reg l21sq` is this, and a
/// wrapper's state gives its pieces through `SequenceState::mkl_objective`.
pub fn mkl_objective(
    lambda: f64,
    block_norms: &[f64],
    average_loss: f64,
    transitions_sqnorm: f64,
) -> f64 {
    let s: f64 = block_norms.iter().sum();
    0.5 * lambda * (s * s + transitions_sqnorm) + average_loss
}

/// The squared norm of the explicit groups the objective regularizes (the label-pair scores
/// under l2 shrinkage, or as a regularized group).
pub fn explicit_sqnorm(state: &OnlineState) -> f64 {
    state
        .explicit_values(false)
        .iter()
        .zip(&state.explicit_groups)
        .filter(|(_, g)| g.role != GroupRole::Unregularized)
        .map(|(v, _)| v.iter().map(|x| x * x).sum::<f64>())
        .sum()
}

/// The inner solver's state: PEGASOS's parameters and what a solve computed from them.
#[derive(Debug, Clone)]
pub struct SequenceState {
    /// One kernel group (coefficients `c`, cached scores `K_d c` at `weights`) and the
    /// label-pair group.
    pub online: OnlineState,
    /// The kernel weights `d` of the last solve (those of the cached scores).
    pub weights: Vec<f64>,
    /// `q_m = sum_y c_y^T K_m c_y` per base kernel.
    pub block_sqnorms: Vec<f64>,
    /// `K_m c` per base kernel (point-major, positions x labels): the cached scores at other
    /// weights `d'` are `sum_m d'_m K_m c`, with no product by `K_d'` (empty: recomputed).
    pub products: Vec<Vec<f64>>,
    /// The average structured hinge loss over the training sequences.
    pub average_loss: f64,
    /// `||W||^2` of the label-pair scores.
    pub transitions_sqnorm: f64,
    /// PEGASOS epochs along this state's history (every solve it descends from).
    pub epochs: usize,
}

impl SequenceState {
    /// `||theta_m|| = d_m sqrt(q_m)`.
    pub(crate) fn block_norms(&self) -> Vec<f64> {
        self.weights
            .iter()
            .zip(&self.block_sqnorms)
            .map(|(d, q)| d * q.max(0.0).sqrt())
            .collect()
    }

    /// [`mkl_objective`] at this state.
    pub fn mkl_objective(&self, lambda: f64) -> f64 {
        mkl_objective(
            lambda,
            &self.block_norms(),
            self.average_loss,
            self.transitions_sqnorm,
        )
    }
}

/// Structured PEGASOS on `K_d` as the wrappers' inner solver (module docs).
pub(crate) struct SequenceInner<'a> {
    chain: SequenceTask,
    base: &'a [Gram],
    /// `K_d` for `combined_at`.
    combined: Gram,
    combined_at: Option<Vec<f64>>,
    lambda: f64,
    first_epochs: usize,
    warm_epochs: usize,
    seed: u64,
    /// PEGASOS's projection radius (set by the first solve).
    gamma: Option<f64>,
    /// A state the next cold call continues from (see [`SequenceInner::resume_from`]).
    resume: Option<SequenceState>,
}

impl<'a> SequenceInner<'a> {
    /// The chain of `train` (beta0 fixed) over the base training Grams `base`
    /// (`positions x positions` each); `lambda = 1 / (C N)`. The combined Gram matrix is
    /// checked against `memory` (the base ones exist already).
    pub(crate) fn new(
        train: &SequenceData,
        base: &'a [Gram],
        lambda: f64,
        seed: u64,
        memory: &MemoryLimit,
    ) -> Result<Self> {
        if base.is_empty() {
            return Err(Error::param("kernels", "none", "at least one kernel"));
        }
        if !(lambda.is_finite() && lambda > 0.0) {
            return Err(Error::param(
                "lambda",
                lambda,
                "a positive number (C = 1/(lambda N) > 0)",
            ));
        }
        if train.n_sequences() == 0 {
            return Err(Error::data("the training set has no sequences"));
        }
        let n = train.n_positions();
        for (m, g) in base.iter().enumerate() {
            if g.rows() != n || g.cols() != n {
                return Err(Error::shape(
                    format!("rows and columns of Gram matrix {m} (training positions)"),
                    n,
                    if g.rows() != n { g.rows() } else { g.cols() },
                ));
            }
        }
        memory.check(
            n.saturating_mul(n).saturating_mul(8),
            &format!("the combined training Gram matrix of {n} x {n}"),
        )?;
        let chain = SequenceTask::new(
            train.labels.clone(),
            train.spans.clone(),
            train.n_labels(),
            false,
        )?;
        Ok(SequenceInner {
            chain,
            base,
            combined: Gram::Dense(crate::data::Matrix::zeros(n, n)),
            combined_at: None,
            lambda,
            first_epochs: FIRST_EPOCHS,
            warm_epochs: WARM_EPOCHS,
            seed,
            gamma: None,
            resume: None,
        })
    }

    /// PEGASOS epochs of the first (cold) call and of each warm-started one (a warm call of
    /// 0 epochs re-evaluates the state at the new weights).
    pub(crate) fn with_epochs(mut self, first: usize, warm: usize) -> Self {
        self.first_epochs = first;
        self.warm_epochs = warm;
        self
    }

    /// Makes the next call without a start (a wrapper's first) continue from `state`, as a
    /// warm-started call: to restart a wrapper where an earlier run of it stopped.
    pub(crate) fn resume_from(&mut self, state: SequenceState) {
        self.resume = Some(state);
    }

    #[cfg(test)]
    pub(crate) fn set_epochs(&mut self, first: usize, warm: usize) {
        self.first_epochs = first;
        self.warm_epochs = warm;
    }

    pub(crate) fn lambda(&self) -> f64 {
        self.lambda
    }

    /// PEGASOS's projection radius `sqrt(2 L(0) / lambda)` (known after the first solve).
    pub(crate) fn gamma(&self) -> Option<f64> {
        self.gamma
    }

    /// `K_d` of the last solve.
    pub(crate) fn combined(&self) -> &Gram {
        &self.combined
    }

    /// PEGASOS's settings for a solve of `epochs` epochs.
    pub(crate) fn params(&self, epochs: usize) -> OnlineParams {
        OnlineParams {
            lambda: self.lambda,
            reg: RegSpec::L2,
            steps: OnlineSteps {
                eta0: 1.0,
                schedule: StepSchedule::Inv { sigma: None },
                epochs: epochs.max(1),
                averaging: false,
                projection: true,
                shards: 1,
                batch: 1,
                learn_beta0: false,
            },
            seed: self.seed,
            shuffle: true,
        }
    }

    /// `K_d = sum_m d_m K_m` into the buffer (rows in parallel), unless it holds it already.
    fn combine(&mut self, d: &[f64]) {
        if self.combined_at.as_deref() == Some(d) {
            return;
        }
        let base = self.base;
        if let Gram::Dense(m) = &mut self.combined {
            let n = m.cols.max(1);
            m.data.par_chunks_mut(n).enumerate().for_each(|(i, row)| {
                row.iter_mut().for_each(|v| *v = 0.0);
                for (g, &w) in base.iter().zip(d) {
                    if w == 0.0 {
                        continue;
                    }
                    match g {
                        Gram::Dense(k) => {
                            for (o, v) in row.iter_mut().zip(k.row(i)) {
                                *o += w * v;
                            }
                        }
                        Gram::Sparse(_) => g.for_each_in_row(i, |j, v| row[j] += w * v),
                    }
                }
            });
        }
        self.combined_at = Some(d.to_vec());
    }
}

impl InnerSolver for SequenceInner<'_> {
    type State = SequenceState;

    fn n_kernels(&self) -> usize {
        self.base.len()
    }

    fn solve(
        &mut self,
        d: &[f64],
        start: Option<&SequenceState>,
        observer: &dyn Observer,
    ) -> Result<InnerSolve<SequenceState>> {
        if d.len() != self.base.len() {
            return Err(Error::shape("kernel weights", self.base.len(), d.len()));
        }
        if d.iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
            return Err(Error::data("kernel weights must be finite and >= 0"));
        }
        let resumed = if start.is_none() {
            self.resume.take()
        } else {
            None
        };
        let start = start.or(resumed.as_ref());
        self.combine(d);
        let task = StructuredOnline::new(&self.chain, SeqLoss::Hinge)?;
        let grams = std::slice::from_ref(&self.combined);
        let (mut learner, epochs, before) = match start {
            None => {
                let e = self.first_epochs;
                let p = self.params(e);
                (OnlineLearner::new(&task, grams, p)?, e, 0)
            }
            Some(s) => {
                let e = self.warm_epochs;
                let mut online = s.online.clone();
                if s.weights.as_slice() != d {
                    if s.products.len() == d.len() {
                        images_from_products(&mut online, &s.products, d);
                    } else {
                        online.recompute_images(grams)?;
                    }
                }
                let p = self.params(e);
                (
                    OnlineLearner::with_state(&task, grams, p, online)?,
                    e,
                    s.epochs,
                )
            }
        };
        self.gamma = learner.gamma();
        let mut status = RunStatus::Completed;
        let mut ran = 0;
        for _ in 0..epochs {
            if learner.epoch_observed(observer) == Control::Stop {
                status = RunStatus::Cancelled;
                break;
            }
            ran += 1;
        }
        let average_loss = learner.average_loss();
        let online = learner.into_state();
        let l = online.n_labels;
        let coefs = online.kernel_coefs(false);
        let c = &coefs[0];
        let products: Vec<Vec<f64>> = self.base.iter().map(|g| kernel_product(g, c, l)).collect();
        let block_sqnorms: Vec<f64> = products
            .iter()
            .map(|p| p.iter().zip(c).map(|(a, b)| a * b).sum::<f64>().max(0.0))
            .collect();
        let transitions_sqnorm = explicit_sqnorm(&online);
        let lambda = self.lambda;
        let kd: f64 = d.iter().zip(&block_sqnorms).map(|(w, q)| w * q).sum();
        let objective = 0.5 * lambda * (kd + transitions_sqnorm) + average_loss;
        let gradient = block_sqnorms.iter().map(|q| -0.5 * lambda * q).collect();
        Ok(InnerSolve {
            state: SequenceState {
                online,
                weights: d.to_vec(),
                block_sqnorms,
                products,
                average_loss,
                transitions_sqnorm,
                epochs: before + ran,
            },
            objective,
            gradient,
            gap: None,
            passes: ran as f64,
            status,
        })
    }
}

/// `K c` for point-major coefficients `c` (`n x l`), point-major: one matrix product for a
/// dense Gram matrix, rows in parallel for a sparse one.
fn kernel_product(g: &Gram, c: &[f64], l: usize) -> Vec<f64> {
    let n = g.rows();
    let mut out = vec![0.0; n * l];
    match g {
        Gram::Dense(m) => {
            use faer::{Accum, MatMut, MatRef, Par};
            let k = MatRef::from_row_major_slice(&m.data, n, n);
            let rhs = MatRef::from_row_major_slice(c, n, l);
            let dst = MatMut::from_row_major_slice_mut(&mut out, n, l);
            faer::linalg::matmul::matmul(dst, Accum::Replace, k, rhs, 1.0, Par::rayon(0));
        }
        Gram::Sparse(_) => {
            out.par_chunks_mut(l.max(1))
                .enumerate()
                .for_each(|(p, row)| {
                    g.for_each_in_row(p, |j, v| {
                        for (o, cj) in row.iter_mut().zip(&c[j * l..(j + 1) * l]) {
                            *o += v * cj;
                        }
                    })
                });
        }
    }
    out
}

/// The kernel group's cached scores and squared norm at weights `d` from the products
/// `K_m c` of its (effective) coefficients: `F = sum_m d_m K_m c`, stored unscaled and
/// label-major, `||theta||^2 = sum_m d_m c^T K_m c`.
fn images_from_products(online: &mut OnlineState, products: &[Vec<f64>], d: &[f64]) {
    let l = online.n_labels;
    let group = &mut online.kernel[0];
    let coef: Vec<f64> = group.current();
    let (image, inv) = group.image_mut();
    let n = image.len() / l.max(1);
    image
        .par_chunks_mut(n.max(1))
        .enumerate()
        .for_each(|(y, row)| {
            for (p, o) in row.iter_mut().enumerate() {
                let f: f64 = products
                    .iter()
                    .zip(d)
                    .map(|(pm, w)| w * pm[p * l + y])
                    .sum();
                *o = f * inv;
            }
        });
    let sq: f64 = products
        .iter()
        .zip(d)
        .map(|(pm, w)| w * pm.iter().zip(&coef).map(|(a, b)| a * b).sum::<f64>())
        .sum();
    group.set_sqnorm(sq);
}

/// Everything that defines a structured wrapper run.
#[derive(Debug, Clone)]
pub struct SequenceWrapperConfig {
    pub method: WrapperMethod,
    /// Base kernels over the position features.
    pub kernels: Vec<KernelSpec>,
    /// `C = 1 / (lambda N)`, `N` training sequences.
    pub c: f64,
    /// PEGASOS epochs of the first (cold) call ([`FIRST_EPOCHS`] in the paper).
    pub first_epochs: usize,
    /// PEGASOS epochs of each warm-started call ([`WARM_EPOCHS`] in the paper).
    pub warm_epochs: usize,
    /// The outer loop's settings.
    pub wrapper: WrapperParams,
    /// Seeds the kernels' heuristics and PEGASOS's shuffles.
    pub seed: u64,
    pub memory: MemoryLimit,
}

impl SequenceWrapperConfig {
    /// The paper's settings (20 then 3 epochs, SimpleMKL's defaults) for `method`, `kernels`
    /// and `c`.
    #[cfg(test)]
    pub(crate) fn new(method: WrapperMethod, kernels: Vec<KernelSpec>, c: f64) -> Self {
        SequenceWrapperConfig {
            method,
            kernels,
            c,
            first_epochs: FIRST_EPOCHS,
            warm_epochs: WARM_EPOCHS,
            wrapper: WrapperParams::default(),
            seed: 0,
            memory: MemoryLimit::default(),
        }
    }

    /// Checks what does not depend on the data.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.kernels.is_empty() {
            return Err(Error::param("kernels", "none", "at least one kernel"));
        }
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(Error::param("C", self.c, "a positive number"));
        }
        if self.first_epochs == 0 {
            return Err(Error::param("first_epochs", 0, "at least 1"));
        }
        if self.warm_epochs == 0 {
            return Err(Error::param("warm_epochs", 0, "at least 1"));
        }
        self.wrapper.start_weights(self.kernels.len()).map(|_| ())
    }
}

/// Trains a structured wrapper on `train` (kernels fitted, Grams computed here); `observer`
/// sees every outer iteration and may stop the run (the model reached is returned with
/// status cancelled).
pub(crate) fn fit_sequence_wrapper(
    train: &SequenceData,
    cfg: &SequenceWrapperConfig,
    observer: &dyn Observer,
) -> Result<(SequenceModel, RunInfo)> {
    cfg.validate()?;
    if train.n_sequences() == 0 {
        return Err(Error::data("the training set has no sequences"));
    }
    let kernels = fit_kernels(&cfg.kernels, &train.x, cfg.seed)?;
    let base = base_grams(&kernels, &train.x, &cfg.memory)?;
    let (model, result) =
        fit_wrapper_with_grams(train, kernels, &base, cfg, None, observer, &mut |_, _| {
            Control::Continue
        })?;
    Ok((model, result.run))
}

/// Trains a structured wrapper with precomputed base Gram matrices (`base[m]` the training
/// Gram of `kernels[m]`), so that several runs share them; `resume`: the first SVM call
/// continues from this state (warm, `warm_epochs`) instead of starting cold (with
/// `cfg.wrapper.start` at its weights, a run continues an earlier one); `on_step` sees each
/// outer iteration with the inner solve at its weights (and may stop the run). Returns the
/// model and the outer loop's whole result.
pub fn fit_wrapper_with_grams(
    train: &SequenceData,
    kernels: Vec<FittedKernel>,
    base: &[Gram],
    cfg: &SequenceWrapperConfig,
    resume: Option<SequenceState>,
    observer: &dyn Observer,
    on_step: &mut OnStep<'_, SequenceState>,
) -> Result<(SequenceModel, WrapperResult<SequenceState>)> {
    cfg.validate()?;
    if kernels.len() != base.len() || kernels.len() != cfg.kernels.len() {
        return Err(Error::shape(
            "Gram matrices (one per kernel)",
            kernels.len(),
            base.len(),
        ));
    }
    let n_words = train.n_sequences();
    let lambda = lambda_from_c(cfg.c, n_words);
    let mut inner = SequenceInner::new(train, base, lambda, cfg.seed, &cfg.memory)?
        .with_epochs(cfg.first_epochs, cfg.warm_epochs);
    if let Some(state) = resume {
        inner.resume_from(state);
    }
    let result = match cfg.method {
        WrapperMethod::SimpleMkl => simplemkl(&mut inner, &cfg.wrapper, observer, on_step)?,
        WrapperMethod::GaussSeidel => gauss_seidel(&mut inner, &cfg.wrapper, observer, on_step)?,
    };
    let model = wrapper_model(train, kernels, &inner, cfg, &result)?;
    Ok((model, result))
}

/// The [`SequenceModel`] of a finished wrapper run: one group `sum_m d_m K_m` (components
/// with `d_m > 0`) over the support positions of `c`, the label-pair scores, and per base
/// kernel its weight `d_m` and block norm `d_m sqrt(q_m)`.
fn wrapper_model(
    train: &SequenceData,
    kernels: Vec<FittedKernel>,
    inner: &SequenceInner<'_>,
    cfg: &SequenceWrapperConfig,
    result: &WrapperResult<SequenceState>,
) -> Result<SequenceModel> {
    let state = &result.solve.state;
    let d = &state.weights;
    // The cached scores are those of `d` (the solve's): the norms come from them, and the
    // combined Gram matrix only gives the number of positions.
    let mut compact = compact(
        &state.online,
        std::slice::from_ref(inner.combined()),
        &RegSpec::L2,
        false,
        GroupNorms::Cached,
    )?;
    let transitions = compact.explicit.remove(0);
    let names: Vec<String> = kernels.iter().map(|k| k.name.clone()).collect();
    let group = KernelGroup {
        name: format!("{}({})", cfg.method.name(), names.join(" + ")),
        components: d
            .iter()
            .enumerate()
            .filter(|(_, w)| **w > 0.0)
            .map(|(m, w)| (m, *w))
            .collect(),
    };
    let lambda = inner.lambda();
    let n_words = train.n_sequences();
    let training = SequenceTraining {
        loss: SeqLoss::Hinge,
        reg: RegSpec::L21Sq,
        lambda,
        c: c_from_lambda(lambda, n_words),
        eta0: 1.0,
        schedule: StepSchedule::Inv { sigma: None },
        epochs: state.epochs,
        epochs_run: Some(state.epochs),
        seed: cfg.seed,
        averaging: false,
        projection_radius: inner.gamma(),
        learn_beta0: false,
        average_kernels: false,
        n_train_sequences: n_words,
        n_train_positions: train.n_positions(),
        final_objective: Some(state.mkl_objective(lambda)),
        final_average_loss: Some(state.average_loss),
        folds: train.fold_list(),
        shards: 1,
        batch: 1,
        wrapper: Some(WrapperTraining {
            method: cfg.method,
            first_epochs: cfg.first_epochs,
            warm_epochs: cfg.warm_epochs,
            outer_iterations: result.steps.len(),
            inner_solves: result.steps.last().map_or(1, |s| s.solves),
            relative_gap: Some(relative_gap(
                d,
                &result.solve.gradient,
                result.solve.objective,
            ))
            .filter(|g| g.is_finite()),
            tol: cfg.wrapper.tol,
            status: result.run.status.describe().to_string(),
        }),
    };
    let model = SequenceModel {
        loss: SeqLoss::Hinge,
        labels: train.label_names.clone(),
        n_features: train.x.cols,
        feature_names: train.feature_names.clone(),
        kernels,
        groups: vec![group],
        support: train.x.select_rows(&compact.support_rows),
        support_rows: compact.support_rows,
        coef: compact.coef,
        transitions,
        group_norms: state.block_norms(),
        weight_names: names,
        weights: d.clone(),
        training,
    };
    model.validate()?;
    Ok(model)
}

#[cfg(test)]
mod tests;
