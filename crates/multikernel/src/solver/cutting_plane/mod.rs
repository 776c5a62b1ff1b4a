//! A minimal 1-slack cutting-plane learner for structured tasks with explicit features: the
//! l2-regularized structural SVM of Joachims, Finley & Yu (2009), as in Algorithm 1 of
//! mao-tsang without its multiple-template (MKL) part:
//!
//! ```text
//! min_{w, xi >= 0}  1/2 ||w||^2 + C xi
//! s.t.  <w, a(y_hat)> >= b(y_hat) - xi   for every choice y_hat = (y_hat_1, ..., y_hat_n),
//! a(y_hat) = 1/n sum_i [Phi(x_i, y_i) - Phi(x_i, y_hat_i)],   b(y_hat) = 1/n sum_i c(y_i, y_hat_i),
//! ```
//!
//! i.e. `lambda/2 ||w||^2 + (1/n) sum_i hinge_i` with `lambda = 1 / C` (eq. 4 of martins2011
//! averaged). Each iteration
//! 1. finds the most violated constraint at a point `w` by loss-augmented decoding of every
//!    example (in parallel; [`StructuredTask::loss_augmented_decode`]), which also gives the
//!    exact objective `J(w) = 1/2 ||w||^2 + C R_emp(w)`, `R_emp(w) = b - <w, a>`; `w` is the
//!    last restricted solution (Joachims et al.) or, by default, a point between it and the
//!    best point so far (below);
//! 2. stops (status [`RunStatus::Converged`]) when the objective is certified within `C
//!    epsilon`: Joachims et al.'s test `R_emp(w) <= xi + epsilon`, `xi` the slack of the
//!    working set at `w`, or by default the best `J` within `C epsilon` of the best value of
//!    the restricted problem (a lower bound);
//! 3. otherwise adds the cut to the working set and re-solves the restricted problem, the
//!    [`MasterProblem`] (here [`L2Master`], the dual QP of [`qp`] over the capped simplex).
//!
//! **Separation inside the segment** (the default; [`CuttingPlaneParams::separation_step`]
//! `s < 1`; the in-out scheme of Ben-Ameur & Neto 2007, as OCAS of Franc & Sonnenburg 2009
//! takes its cuts between the best point and the master's): the cut is found at `w_best + s
//! (w_master - w_best)`, `w_best` the point of the best objective so far, rather than at the
//! master's solution, whose iterates jump about (most with a weakly convex regularizer, the
//! squared block norms with `q > 2`). Every cut is still exact (a subgradient of the risk at
//! the point separated), so the master's value stays a lower bound; the loop stops when the
//! best objective is within `C epsilon` of the best lower bound and returns `w_best`. On the
//! small template set of TWT tagging (`multikernel reproduce mtl --template-sets small
//! --separation-step S`, epsilon 0.1) the cuts with `s = 1` (Joachims et al.'s loop) against
//! [`SEPARATION_STEP`]: q = 1 258 against 100, q = 4/3 276 against 92, q = 2 469 against
//! 122, q = 4 1,670 against 199, test accuracies within 0.2 points.
//!
//! **Where the examples are decoded** is a seam ([`Separator`]): [`LocalSeparator`] decodes
//! every example in this process; a separation split over parts of the examples adds the
//! parts' unscaled [`CutSums`] and scales once, which with binary template features and the
//! Hamming cost (integer sums) gives this process's cut bit for bit, in any order (the test
//! `a_cutting_plane_separated_in_parts_is_the_one_process_fit_bit_for_bit`): the ground
//! for a distributed fit that equals the one-process model.
//!
//! The multi-template issue replaces the master by the QCQP over per-template Gram matrices
//! (mao-tsang problem (6)); cuts keep the global index layout of the task's explicit groups so
//! that per-group blocks are at hand.
//!
//! The loop and its settings are here; the restricted problem in `master` (and
//! `block_master` for the template weights), the cut at a point in `separation`, the
//! workers' copy of the point in `replica`, checkpoints in `checkpoint`.

pub(crate) mod block_master;
pub(crate) mod checkpoint;
pub(crate) mod compact_cuts;
mod master;
pub(crate) mod qp;
pub(crate) mod replica;
mod separation;

use crate::error::{Error, Result};
use crate::features::GroupLayout;
use crate::run::{Control, Observer, RunInfo, RunRecorder, RunStatus, StepUnit};
use crate::task::online::ExplicitGroup;
use crate::task::structured::{check_parts, explicit_scores, StructuredTask};
pub(crate) use block_master::BlockNormMaster;
pub(crate) use master::{
    retain_kept, Cut, L2Master, MasterProblem, MasterSnapshot, MasterSolution, INACTIVE_SOLVES,
};
use rayon::prelude::*;
pub(crate) use replica::{Replica, ReplicaState, Step};
pub(crate) use separation::{separation_sums, CutSums, LocalSeparator, LoopView, Separator};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Hyper-parameters of the cutting-plane loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CuttingPlaneParams {
    /// `C` of `1/2 ||w||^2 + C xi` (`xi` bounds the average loss).
    #[serde(rename = "C")]
    pub c: f64,
    /// Stop when the objective is certified within `C epsilon` of the optimum: by default the
    /// best objective within that of the best working-set value; with
    /// [`CuttingPlaneParams::separation_step`] 1, the most violated constraint violated by at
    /// most `epsilon` more than the working set's slack (Joachims et al.).
    pub epsilon: f64,
    /// Cuts added at most (then status [`RunStatus::IterationLimit`]).
    pub max_iter: usize,
    /// Duality gap at which the working-set QP stops.
    pub qp_tol: f64,
    /// Pairwise steps of the working-set QP at most.
    pub qp_max_iter: usize,
    /// Where the next cut is found on the segment from the best point so far to the master's
    /// solution (module docs): `1` at the master's solution (Joachims et al.'s loop, stopped
    /// by its slack test), `s < 1` at `w_best + s (w_master - w_best)`, stopped when the best
    /// objective is within `C epsilon` of the best master value. `None`:
    /// `SEPARATION_STEP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub separation_step: Option<f64>,
}

impl Default for CuttingPlaneParams {
    fn default() -> Self {
        CuttingPlaneParams {
            c: 1.0,
            epsilon: 1e-3,
            max_iter: 1000,
            qp_tol: 1e-10,
            qp_max_iter: 1_000_000,
            separation_step: None,
        }
    }
}

impl CuttingPlaneParams {
    /// Checks the values before any work starts.
    pub(crate) fn validate(&self) -> Result<()> {
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(Error::param("C", self.c, "a positive number"));
        }
        if !(self.epsilon.is_finite() && self.epsilon > 0.0) {
            return Err(Error::param("epsilon", self.epsilon, "a positive number"));
        }
        if self.max_iter == 0 {
            return Err(Error::param("max_iter", 0, "at least 1"));
        }
        if !(self.qp_tol.is_finite() && self.qp_tol >= 0.0) {
            return Err(Error::param("qp_tol", self.qp_tol, "a number >= 0"));
        }
        if self.qp_max_iter == 0 {
            return Err(Error::param("qp_max_iter", 0, "at least 1"));
        }
        if let Some(s) = self.separation_step {
            check_separation_step(s)?;
        }
        Ok(())
    }
}

/// Refuses a separation step ([`CuttingPlaneParams::separation_step`]) outside `(0, 1]`.
pub fn check_separation_step(s: f64) -> Result<()> {
    if s.is_finite() && s > 0.0 && s <= 1.0 {
        Ok(())
    } else {
        Err(Error::param("separation_step", s, "a number in (0, 1]"))
    }
}

/// What the cutting-plane loop returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CuttingPlaneModel {
    /// Weights over the explicit groups (global indices of `layout`).
    pub weights: Vec<f64>,
    pub layout: GroupLayout,
    pub group_names: Vec<String>,
    /// `||w_g||` per group.
    pub group_norms: Vec<f64>,
    pub params: CuttingPlaneParams,
    /// Cuts added in all (the working set drops cuts inactive for [`INACTIVE_SOLVES`]
    /// solves).
    pub cuts: usize,
    /// `J(w) = 1/2 ||w||^2 + C R_emp(w)` of the returned weights (NaN when cancelled before
    /// the first evaluation).
    pub objective: f64,
    /// `R_emp(w)`, the average structured hinge loss of the returned weights.
    pub empirical_risk: f64,
    /// Seconds in loss-augmented decoding (building the cuts).
    #[serde(default)]
    pub decode_seconds: f64,
    /// Seconds in the working-set problem (the master: QP, QCQP).
    #[serde(default)]
    pub master_seconds: f64,
}

impl CuttingPlaneModel {
    /// The best output of example `i` of `task` (a task over the same explicit features).
    pub fn predict<T: StructuredTask + ?Sized>(&self, task: &T, i: usize) -> Result<T::Output> {
        let mut s = Vec::new();
        explicit_scores(task, i, &self.weights, &mut s)?;
        Ok(task.decode(i, &s))
    }
}

/// Trains the l2 structural SVM on `task` by the 1-slack cutting-plane loop with the l2
/// master. `observer` sees each iteration's objective `J(w)` and may stop the run (polled
/// between examples while decoding); a stopped run returns the weights reached, with status
/// [`RunStatus::Cancelled`].
pub fn fit<T: StructuredTask + ?Sized>(
    task: &T,
    params: &CuttingPlaneParams,
    observer: &dyn Observer,
) -> Result<(CuttingPlaneModel, RunInfo)> {
    fit_with_master(
        task,
        params,
        &mut L2Master::new(params.qp_tol, params.qp_max_iter),
        observer,
    )
}

/// The cutting plane with the squared block norm `1/2 (sum_j ||w_j||^q)^(2/q)` over the
/// task's explicit groups (mao-tsang Alg. 1; `q = 2`: the plain l2 structural SVM, [`fit`];
/// other `q >= 1`: [`BlockNormMaster`]). Returns the model, the run, and the template weights
/// `mu_j = ||w_j|| / sum_k ||w_k||` (for `q = 1` the QCQP's duals, which agree, unless the
/// loop separates inside the segment: then those of the best point it returns); templates
/// with `mu_j / sum mu <` `PRUNE_SHARE` are pruned (their weights set to 0).
pub(crate) fn fit_block_norm<T: StructuredTask + ?Sized>(
    task: &T,
    params: &CuttingPlaneParams,
    q: f64,
    observer: &dyn Observer,
) -> Result<(CuttingPlaneModel, RunInfo, Vec<f64>)> {
    let examples = Examples::of(task)?;
    let mut separator = LocalSeparator::new(task, examples.layout().total());
    fit_block_norm_with(&examples, params, q, &mut separator, observer)
}

/// [`fit_block_norm`] with the cuts found by `separator` over `examples` (the distributed
/// fit's door: the examples are decoded elsewhere).
pub(crate) fn fit_block_norm_with(
    examples: &Examples,
    params: &CuttingPlaneParams,
    q: f64,
    separator: &mut dyn Separator,
    observer: &dyn Observer,
) -> Result<(CuttingPlaneModel, RunInfo, Vec<f64>)> {
    if !(q.is_finite() && q >= 1.0) {
        return Err(Error::param("q", q, "a finite block norm q >= 1"));
    }
    // mu_j = ||w_j|| / sum_k ||w_k|| of the returned weights.
    let shares = |m: &CuttingPlaneModel| -> Vec<f64> {
        let total: f64 = m.group_norms.iter().sum();
        m.group_norms
            .iter()
            .map(|n| if total > 0.0 { n / total } else { 0.0 })
            .collect()
    };
    let (mut m, run, mu) = if q == 2.0 {
        let mut master = L2Master::new(params.qp_tol, params.qp_max_iter);
        let (m, run) = fit_with_separator(examples, params, &mut master, separator, observer)?;
        let mu = shares(&m);
        (m, run, mu)
    } else {
        let layout = examples.layout();
        // The saddle point's relative gap (far below any epsilon of the outer loop, which
        // bounds the average loss).
        let tol = params.qp_tol.max(SADDLE_TOL);
        // A working-set solution within a tenth of C epsilon of its optimum costs the outer
        // loop at most a tenth of its own accuracy (it stops within C epsilon).
        let mut master = BlockNormMaster::new(q, layout, tol, 10_000)?
            .with_abs_tol(0.1 * params.c * params.epsilon)
            .inexact();
        let (m, run) = fit_with_separator(examples, params, &mut master, separator, observer)?;
        // Separating inside the segment, the weights returned are the best point's, not
        // the last solve's.
        let mu = if params.separation_step.unwrap_or(SEPARATION_STEP) < 1.0 {
            shares(&m)
        } else {
            master.mu().to_vec()
        };
        (m, run, mu)
    };
    // Templates with a negligible weight are pruned: their weights set to 0.
    let total: f64 = mu.iter().sum();
    for (g, &share) in mu.iter().enumerate() {
        if total > 0.0 && share / total < PRUNE_SHARE {
            m.weights[m.layout.range(g)]
                .iter_mut()
                .for_each(|v| *v = 0.0);
            m.group_norms[g] = 0.0;
        }
    }
    Ok((m, run, mu))
}

/// The cutting plane's default separation step (module docs): on the small template set
/// with `q = 4` (`multikernel reproduce mtl --template-sets small --methods mtl-q4
/// --separation-step S`, C = 1, epsilon 0.1) 1 took 1,670 cuts (test accuracy 93.15), 0.5
/// 515 (93.40), 0.3 314 (93.55), 0.2 250 (93.30), 0.1 199 (93.34) and 0.05 201 (93.27).
pub(crate) const SEPARATION_STEP: f64 = 0.1;

/// The relative duality gap at which the working-set saddle point (`q != 2`) stops in
/// [`fit_block_norm`].
pub(crate) const SADDLE_TOL: f64 = 1e-6;

/// A template whose weight `mu_j` is below this share of `sum mu` is pruned (mao-tsang;
/// docs/formulas.md).
pub(crate) const PRUNE_SHARE: f64 = 1e-5;

/// The working set's slack `xi = max(0, max_r b_r - <a_r, w>)`, from the master's margins
/// when it gave them for these cuts.
fn working_set_slack(cuts: &[Cut], margins: Option<&[f64]>, w: &[f64]) -> f64 {
    match margins {
        Some(m) if m.len() == cuts.len() => {
            cuts.iter().zip(m).map(|(k, m)| k.b - m).fold(0.0, f64::max)
        }
        _ => cuts
            .par_iter()
            .map(|k| k.b - k.a.dot(w))
            .reduce(|| 0.0, f64::max),
    }
}

/// [`fit`] with any master problem (the multi-template learner's seam).
///
/// With checkpoints ([`Observer::checkpoints`]; family `checkpoint::CHECKPOINT_FAMILY`)
/// the loop starts from the saved cut boundary, if any, and saves its state after every cut
/// the store asks for (the step is the number of cuts added), while the master keeps
/// checkpoints (`MasterProblem::snapshot`); fails when the checkpoint does not fit or
/// cannot be written.
pub(crate) fn fit_with_master<T: StructuredTask + ?Sized>(
    task: &T,
    params: &CuttingPlaneParams,
    master: &mut dyn MasterProblem,
    observer: &dyn Observer,
) -> Result<(CuttingPlaneModel, RunInfo)> {
    let examples = Examples::of(task)?;
    let mut separator = LocalSeparator::new(task, examples.layout().total());
    fit_with_separator(&examples, params, master, &mut separator, observer)
}

/// What the loop needs to know of the examples it never sees itself (a [`Separator`]
/// decodes them): how many there are (each cut averages over them) and the explicit groups
/// (the parameters' layout and the templates' names).
#[derive(Debug, Clone)]
pub(crate) struct Examples {
    pub n: usize,
    pub groups: Vec<ExplicitGroup>,
}

impl Examples {
    /// The examples of `task`, checked: at least one, explicit parts only, every part map
    /// inside the layout.
    pub(crate) fn of<T: StructuredTask + ?Sized>(task: &T) -> Result<Examples> {
        if task.n_examples() == 0 {
            return Err(Error::data("no training examples"));
        }
        if task.n_points() > 0 {
            return Err(Error::unsupported(
                "the cutting-plane learner handles explicit feature groups only; the task has \
                 kernel-scored parts",
            ));
        }
        check_parts(task)?;
        Ok(Examples {
            n: task.n_examples(),
            groups: task.explicit_groups(),
        })
    }

    pub(crate) fn layout(&self) -> GroupLayout {
        GroupLayout::new(self.groups.iter().map(|g| g.len))
    }
}

/// [`fit_with_master`] with the cuts found by `separator` over `examples`.
pub(crate) fn fit_with_separator(
    examples: &Examples,
    params: &CuttingPlaneParams,
    master: &mut dyn MasterProblem,
    separator: &mut dyn Separator,
    observer: &dyn Observer,
) -> Result<(CuttingPlaneModel, RunInfo)> {
    params.validate()?;
    if examples.n == 0 {
        return Err(Error::data("no training examples"));
    }
    let layout = examples.layout();
    let dim = layout.total();
    let c = params.c;
    let mut decode_seconds = 0.0;
    let mut master_seconds = 0.0;
    // Cuts added so far, and for each cut in the working set the solves it has stayed
    // inactive (multiplier 0) for.
    let mut added = 0;
    let mut idle: Vec<usize> = Vec::new();
    let mut w = vec![0.0; dim];
    let mut cuts: Vec<Cut> = Vec::new();
    // A step is a separation: one at each point, the last at the point of the last cut's
    // solve, so `max_iter` cuts take at most `max_iter + 1` of them (the progress lines'
    // total; it read "iteration 6/5" at the limit before).
    let mut rec = RunRecorder::new(StepUnit::Iteration, Some(params.max_iter as u64 + 1));
    let mut objective = f64::NAN;
    let mut risk = f64::NAN;
    // The best objective seen (an upper bound of the optimum) and the best master value (a
    // lower bound: each master is a relaxation); their difference steers inexact masters.
    let mut best_objective = f64::INFINITY;
    let mut best_lower = f64::NEG_INFINITY;
    // `<a_r, w>` of the working set's cuts at the current `w`, when the master gave them.
    let mut margins: Option<Vec<f64>> = None;
    // `Omega(w)` of the current `w`, when the master gave it.
    let mut regularizer: Option<f64> = None;
    // Separation inside the segment (module docs): the step, the point of the best objective
    // so far with its risk, and the point separated (kept, not allocated at every cut).
    let step = params.separation_step.unwrap_or(SEPARATION_STEP);
    let mut best: Option<(Vec<f64>, f64)> = None;
    let mut inner = Vec::new();
    // Whether the point separated last became the best point (for [`Separator::solved`]),
    // and the last solve's template factors ([`LoopView`]).
    let mut best_moved;
    let mut last_factors = vec![1.0; layout.n_groups()];
    let ck = observer
        .checkpoints()
        .filter(|_| master.snapshot().is_some());
    if let Some(bytes) = ck
        .map(|c| c.resume(checkpoint::CHECKPOINT_FAMILY))
        .transpose()?
        .flatten()
    {
        let s: checkpoint::LoopState =
            crate::checkpoint::decode(checkpoint::CHECKPOINT_FAMILY, &bytes)?;
        w = s.check(dim, params.max_iter)?;
        best = s.best_point(dim)?;
        master.restore(s.master)?;
        if let Some(c) = ck {
            c.resumed_at(s.added as u64)?;
        }
        added = s.added;
        cuts = s.cuts;
        idle = s.idle;
        margins = s.margins;
        regularizer = s.regularizer;
        objective = f64::from_bits(s.objective);
        risk = f64::from_bits(s.risk);
        best_objective = f64::from_bits(s.best_objective);
        best_lower = f64::from_bits(s.best_lower);
        decode_seconds = s.decode_seconds;
        master_seconds = s.master_seconds;
        // One step per cut added (module docs): the steps of the saved run.
        rec.set_steps(added as u64);
    }
    let status = loop {
        // The point separated: the master's solution, or with a step below 1 and a best
        // point, a point between the two.
        let between = match &best {
            Some((b, _)) if step < 1.0 => {
                compact_cuts::between_into(b, &w, step, &mut inner);
                true
            }
            _ => false,
        };
        let at: &[f64] = if between { &inner } else { &w };
        let t = Instant::now();
        let view = LoopView {
            cuts: &cuts,
            alpha: master.alpha(),
            factors: &last_factors,
            best: best.as_ref().map(|(b, _)| b.as_slice()),
            step,
            solves: added,
        };
        let found = separator.separate_in(at, &view, observer)?;
        decode_seconds += t.elapsed().as_secs_f64();
        let Some(cut) = found else {
            break RunStatus::Cancelled;
        };
        risk = (cut.b - cut.a.dot(at)).max(0.0);
        // The master gave the regularizer of its own solution only.
        let omega = match regularizer {
            Some(r) if !between => r,
            _ => master.regularizer(at),
        };
        objective = omega + c * risk;
        best_moved = step < 1.0 && objective < best_objective;
        if best_moved {
            match &mut best {
                Some((b, r)) => {
                    b.copy_from_slice(at);
                    *r = risk;
                }
                None => best = Some((at.to_vec(), risk)),
            }
        }
        best_objective = best_objective.min(objective);
        if rec.step(Some(objective), observer) == Control::Stop {
            break RunStatus::Cancelled;
        }
        // Joachims et al.'s slack test at the master's solution, or inside the segment the
        // gap between the best objective and the best lower bound.
        let converged = if step < 1.0 {
            best_objective - best_lower <= c * params.epsilon
        } else {
            risk <= working_set_slack(&cuts, margins.as_deref(), &w) + params.epsilon
        };
        if converged {
            break RunStatus::Converged;
        }
        if added >= params.max_iter {
            break RunStatus::IterationLimit;
        }
        cuts.push(cut);
        idle.push(0);
        let t = Instant::now();
        master.outer_gap((best_objective - best_lower).max(0.0));
        let solved = master.solve(&cuts, c, dim)?;
        master.recycle(std::mem::replace(&mut w, solved.w));
        margins = solved.margins;
        regularizer = solved.regularizer;
        last_factors = if solved.factors.is_empty() {
            vec![1.0; layout.n_groups()]
        } else {
            solved.factors
        };
        best_lower = best_lower.max(solved.value);
        master_seconds += t.elapsed().as_secs_f64();
        added += 1;
        for (k, a) in idle.iter_mut().zip(master.alpha()) {
            *k = if *a > 0.0 { 0 } else { *k + 1 };
        }
        let keep: Vec<bool> = if idle.iter().any(|&k| k >= INACTIVE_SOLVES) {
            idle.iter().map(|&k| k < INACTIVE_SOLVES).collect()
        } else {
            Vec::new()
        };
        if let Some(cut) = cuts.last() {
            separator.solved(&Step {
                best_moved,
                cut,
                alpha: master.alpha(),
                factors: &last_factors,
                keep: &keep,
            });
        }
        if !keep.is_empty() {
            master.retain(&keep);
            if let Some(m) = &mut margins {
                retain_kept(m, &keep);
            }
            let mut it = keep.iter();
            cuts.retain(|_| *it.next().unwrap_or(&true));
            idle.retain(|&k| k < INACTIVE_SOLVES);
        }
        if let Some(c) = ck.filter(|c| added < params.max_iter && c.due(added as u64)) {
            let master_state = master.snapshot().expect("checked before the loop");
            let state = checkpoint::LoopStateRef {
                dim,
                added,
                cuts: &cuts,
                idle: &idle,
                w: checkpoint::sparse_weights(&w),
                margins: &margins,
                regularizer,
                objective: objective.to_bits(),
                risk: risk.to_bits(),
                best_objective: best_objective.to_bits(),
                best_lower: best_lower.to_bits(),
                best: best
                    .as_ref()
                    .map(|(b, r)| (checkpoint::sparse_weights(b), r.to_bits())),
                decode_seconds,
                master_seconds,
                master: master_state,
            };
            c.save(
                checkpoint::CHECKPOINT_FAMILY,
                added as u64,
                &crate::checkpoint::encode(&state)?,
            )?;
        }
    };
    // Separating inside the segment, the loop returns the best point it evaluated.
    if step < 1.0 {
        if let Some((b, r)) = best {
            w = b;
            risk = r;
            objective = best_objective;
        }
    }
    let group_norms = layout.group_norms(&w);
    let model = CuttingPlaneModel {
        weights: w,
        group_names: examples.groups.iter().map(|g| g.name.clone()).collect(),
        group_norms,
        layout,
        params: params.clone(),
        cuts: added,
        objective,
        empirical_risk: risk,
        decode_seconds,
        master_seconds,
    };
    Ok((model, rec.finish(status)))
}
