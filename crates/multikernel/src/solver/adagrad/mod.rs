//! SPOM with per-coordinate steps: diagonal AdaGrad with the composite proximal step (Duchi,
//! Hazan & Singer 2011, "Adaptive subgradient methods for online learning and stochastic
//! optimization", JMLR 12, eq. 4 with `H_t = diag(sqrt(G_t))`), for structured tasks over
//! explicit features (template taggers) with the l2 regularizer `lambda/2 ||w||^2`.
//!
//! Round `t` takes example `i`, the (sub)gradient `g` of its loss at `w_t` (eq. 3 / 4 of
//! martins2011, as in Alg. 1), adds `g_j^2` to `G_j`, and solves, coordinate by coordinate,
//!
//! ```text
//! w_{t+1,j} = argmin_x  eta g_j x + eta lambda/2 x^2 + H_j/2 (x - w_{t,j})^2,   H_j = sqrt(G_j)
//!           = (H_j w_{t,j} - eta g_j) / (H_j + eta lambda)                      (prox_step)
//! ```
//!
//! so coordinate `j` moves with the step `eta / H_j`: a feature seen in few sentences keeps a
//! large step, a frequent one settles (what one step size for all coordinates cannot do when
//! templates differ in frequency by orders of magnitude). `eta` is `eta0`, constant.
//!
//! Lazily: a round touches only the coordinates the example's parts read. A coordinate not
//! read in a round has `g_j = 0`, so its update is the shrinkage `w_j <- r_j w_j` with
//! `r_j = H_j / (H_j + eta lambda)` fixed until it is read again; `m` skipped rounds are
//! applied at once (`r_j^m`), and their contribution to the running sum of the iterates is
//! the geometric sum `w_j (r_j + ... + r_j^m) = w_j (1 - r_j^m) / a_j` with `a_j = eta lambda
//! / H_j` (`r_j = 1 / (1 + a_j)`). The running average is over the rounds after
//! [`AdagradLearner::restart_average`] (every round when never restarted), as in
//! [`crate::solver::online::OnlineState`]. The tests compare it with the eager update of
//! every coordinate every round, and the step with a brute-force 1-D minimization.

use crate::error::{Error, Result};
use crate::prox::RegSpec;
use crate::run::{Control, Observer};
use crate::solver::batch::objective::add_part_gradient;
use crate::solver::online::engine::{RngPosition, STOP_POLL};
use crate::solver::online::params::{OnlineParams, StepSchedule};
use crate::task::online::GroupRole;
use crate::task::structured::{
    explicit_layout, explicit_scores, loss_grad, PartScorer, StructLoss, StructuredTask,
};
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// The composite AdaGrad step of one coordinate: `argmin_x eta g x + eta lambda/2 x^2 + h/2
/// (x - w)^2` for `h >= 0` (Duchi et al. 2011 eq. 4, diagonal `H`, `phi = lambda/2 x^2`);
/// `w` unchanged when `h + eta lambda = 0`.
#[inline]
pub(crate) fn prox_step(w: f64, g: f64, h: f64, eta: f64, lambda: f64) -> f64 {
    let den = h + eta * lambda;
    if den > 0.0 {
        (h * w - eta * g) / den
    } else {
        w
    }
}

/// What the epochs after an epoch boundary of an [`AdagradLearner`] depend on.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct AdagradSnapshot {
    pub w: Vec<f64>,
    pub sum: Vec<f64>,
    pub g2: Vec<f64>,
    pub last: Vec<u64>,
    pub t: u64,
    pub avg_start: u64,
    pub order: Vec<usize>,
    pub rng: RngPosition,
}

/// Diagonal AdaGrad-SPOM over a structured task whose parts are scored by explicit features
/// only (module docs).
pub(crate) struct AdagradLearner<'a, T: StructuredTask + ?Sized> {
    task: &'a T,
    loss: StructLoss,
    eta: f64,
    lambda: f64,
    shuffle: bool,
    rng: rand_chacha::ChaCha8Rng,
    order: Vec<usize>,
    /// The iterate, each coordinate as of round `last[j]`.
    w: Vec<f64>,
    /// Sum of coordinate `j`'s iterates over rounds `avg_start + 1 ..= last[j]`.
    sum: Vec<f64>,
    /// `G_j`: the sum of the squared loss gradients of coordinate `j`.
    g2: Vec<f64>,
    last: Vec<u64>,
    t: u64,
    avg_start: u64,
    // Scratch for one round.
    grad: Vec<f64>,
    seen: Vec<bool>,
    touched: Vec<usize>,
    scores: Vec<f64>,
    part_grad: Vec<f64>,
}

impl<'a, T: StructuredTask + ?Sized> AdagradLearner<'a, T> {
    /// Sets up the learner; fails unless the schedule is [`StepSchedule::AdaGrad`], the
    /// regularizer `l2`, every parameter group regularized (or l2-shrunk) and every part scored
    /// by explicit features.
    pub(crate) fn new(task: &'a T, loss: StructLoss, params: &OnlineParams) -> Result<Self> {
        params.validate()?;
        if params.steps.schedule != StepSchedule::AdaGrad {
            return Err(Error::param(
                "schedule",
                params.steps.schedule,
                "adagrad (the per-coordinate learner)",
            ));
        }
        if params.steps.batch != 1 {
            return Err(Error::param(
                "batch",
                params.steps.batch,
                "1 with the adagrad schedule (its per-coordinate learner runs round after \
                 round; the sqrt, const, inv and bottou schedules train in parallel \
                 mini-batches)",
            ));
        }
        if params.steps.shards != 1 {
            return Err(Error::param(
                "shards",
                params.steps.shards,
                "1 with the adagrad schedule (its per-coordinate sums are not mixed; the \
                 sqrt, const, inv and bottou schedules train in shards)",
            ));
        }
        if params.reg != RegSpec::L2 {
            return Err(Error::unsupported(format!(
                "the adagrad schedule trains with the l2 regularizer only (got {}): the \
                 per-coordinate proximal step of the group regularizers is not implemented",
                params.reg
            )));
        }
        if task
            .explicit_groups()
            .iter()
            .any(|g| g.role == GroupRole::Unregularized)
        {
            return Err(Error::unsupported(
                "the adagrad schedule needs every parameter group regularized",
            ));
        }
        let n = task.n_examples();
        if n == 0 {
            return Err(Error::data("no training examples"));
        }
        if (0..n).any(|i| task.part_map(i).n_kernel_parts() > 0) {
            return Err(Error::unsupported(
                "the adagrad schedule trains parts scored by explicit features only; the task \
                 has kernel-scored parts",
            ));
        }
        let dim = explicit_layout(task).total();
        Ok(AdagradLearner {
            task,
            loss,
            eta: params.steps.eta0,
            lambda: params.lambda,
            shuffle: params.shuffle,
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(params.seed),
            order: (0..n).collect(),
            w: vec![0.0; dim],
            sum: vec![0.0; dim],
            g2: vec![0.0; dim],
            last: vec![0; dim],
            t: 0,
            avg_start: 0,
            grad: vec![0.0; dim],
            seen: vec![false; dim],
            touched: Vec::new(),
            scores: Vec::new(),
            part_grad: Vec::new(),
        })
    }

    /// Rounds done.
    #[cfg(test)]
    pub(crate) fn rounds(&self) -> u64 {
        self.t
    }

    /// Brings coordinate `j` to round `to` (the shrinkage of the rounds it was not read in),
    /// adding those rounds' iterates to its running sum.
    #[inline]
    fn catch_up(&mut self, j: usize, to: u64) {
        let m = to - self.last[j];
        self.last[j] = to;
        let w = self.w[j];
        if m == 0 || w == 0.0 {
            return;
        }
        // w != 0 means the coordinate has had a gradient, so G_j > 0.
        let a = self.eta * self.lambda / self.g2[j].sqrt();
        let log_rm = -(m as f64) * a.ln_1p();
        self.sum[j] += w * -log_rm.exp_m1() / a;
        self.w[j] = w * log_rm.exp();
    }

    /// Every coordinate brought to the current round.
    fn flush(&mut self) {
        let t = self.t;
        for j in 0..self.w.len() {
            self.catch_up(j, t);
        }
    }

    /// The coordinates example `i`'s parts read, each once, into `self.touched`.
    fn collect_touched(&mut self, i: usize) {
        let map = self.task.part_map(i);
        self.touched.clear();
        let mark = |j: usize, seen: &mut [bool], touched: &mut Vec<usize>| {
            if !seen[j] {
                seen[j] = true;
                touched.push(j);
            }
        };
        let head = map.parameters.len() + map.n_explicit_parts();
        for r in 0..head {
            match map.scorer(r) {
                PartScorer::Parameter(j) => mark(j, &mut self.seen, &mut self.touched),
                PartScorer::Explicit(f) => {
                    for &(j, _) in f {
                        mark(j, &mut self.seen, &mut self.touched);
                    }
                }
                PartScorer::Kernel { .. } | PartScorer::Conjoined { .. } => {}
            }
        }
        if let Some(c) = map.conjoined {
            let l = c.n_labels;
            for r in 0..c.rows.n_rows() {
                for &(j, _) in c.rows.row(r) {
                    let at = c.offset + j * l;
                    for k in at..at + l {
                        mark(k, &mut self.seen, &mut self.touched);
                    }
                }
            }
        }
    }

    /// One round on example `i`; returns its loss before the update.
    pub(crate) fn round(&mut self, i: usize) -> Result<f64> {
        self.collect_touched(i);
        let now = self.t;
        for k in 0..self.touched.len() {
            let j = self.touched[k];
            self.catch_up(j, now);
        }
        explicit_scores(self.task, i, &self.w, &mut self.scores)?;
        self.part_grad.clear();
        self.part_grad.resize(self.scores.len(), 0.0);
        let loss = loss_grad(self.task, self.loss, i, &self.scores, &mut self.part_grad);
        if !loss.is_finite() {
            return Err(Error::Numerical(format!(
                "the {} loss of example {i} is not finite (round {})",
                self.loss,
                now + 1
            )));
        }
        add_part_gradient(self.task, i, &self.part_grad, &mut self.grad);
        self.t += 1;
        let t = self.t;
        for &j in &self.touched {
            let g = std::mem::take(&mut self.grad[j]);
            self.seen[j] = false;
            self.g2[j] += g * g;
            let w = prox_step(self.w[j], g, self.g2[j].sqrt(), self.eta, self.lambda);
            self.w[j] = w;
            self.sum[j] += w;
            self.last[j] = t;
        }
        Ok(loss)
    }

    /// One pass over the examples (in a fresh random order when shuffling), polling
    /// `observer` every [`STOP_POLL`] rounds ([`Control::Stop`] when it asked to stop).
    pub(crate) fn epoch_observed(&mut self, observer: &dyn Observer) -> Result<Control> {
        if self.shuffle {
            let mut order = std::mem::take(&mut self.order);
            order.shuffle(&mut self.rng);
            self.order = order;
        }
        for k in 0..self.order.len() {
            if k % STOP_POLL == 0 && observer.should_stop() {
                return Ok(Control::Stop);
            }
            self.round(self.order[k])?;
        }
        Ok(Control::Continue)
    }

    /// The learner at an epoch boundary, for a checkpoint: the iterate, the sums of the
    /// average and of the squared gradients, the rounds, the order of the examples and the
    /// generator's position (the coordinates are brought up to the current round first).
    pub(crate) fn snapshot(&mut self) -> AdagradSnapshot {
        self.flush();
        AdagradSnapshot {
            w: self.w.clone(),
            sum: self.sum.clone(),
            g2: self.g2.clone(),
            last: self.last.clone(),
            t: self.t,
            avg_start: self.avg_start,
            order: self.order.clone(),
            rng: RngPosition::of(&self.rng),
        }
    }

    /// Puts the learner where [`Self::snapshot`] found one over the same task and settings;
    /// fails when the snapshot's sizes are not the task's.
    pub(crate) fn restore(&mut self, snap: AdagradSnapshot) -> Result<()> {
        let dim = self.w.len();
        let n = self.order.len();
        let mut seen = vec![false; n];
        if [snap.w.len(), snap.sum.len(), snap.g2.len(), snap.last.len()] != [dim; 4]
            || snap.order.len() != n
            || snap
                .order
                .iter()
                .any(|&i| i >= n || std::mem::replace(&mut seen[i], true))
            || snap.last.iter().any(|&l| l > snap.t)
            || snap.avg_start > snap.t
        {
            return Err(Error::data(format!(
                "the checkpoint's AdaGrad state does not fit the task ({dim} weights, {n} \
                 examples)"
            )));
        }
        self.rng = snap.rng.rng()?;
        self.w = snap.w;
        self.sum = snap.sum;
        self.g2 = snap.g2;
        self.last = snap.last;
        self.t = snap.t;
        self.avg_start = snap.avg_start;
        self.order = snap.order;
        Ok(())
    }

    /// Restarts the running average at the current round: from now on it is the mean of the
    /// iterates of the rounds that follow.
    pub(crate) fn restart_average(&mut self) {
        self.flush();
        self.sum.iter_mut().for_each(|s| *s = 0.0);
        self.avg_start = self.t;
    }

    /// The weights (global layout): the last iterate, or the mean of the iterates since the
    /// average (re)started (the last iterate before any round after the restart).
    pub(crate) fn weights(&mut self, averaged: bool) -> Vec<f64> {
        self.flush();
        let k = self.t - self.avg_start;
        if averaged && k > 0 {
            let inv = 1.0 / k as f64;
            self.sum.iter().map(|s| s * inv).collect()
        } else {
            self.w.clone()
        }
    }
}

#[cfg(test)]
mod tests;
