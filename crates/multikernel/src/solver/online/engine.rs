//! Online proximal learning of grouped models: Alg. 1 of Martins et al. (2011), with its
//! kernelized form (Alg. 3, Sec. 3.4), generic over the task (loss) and the regularizer.
//!
//! Each round takes one example i and
//! 1. a subgradient step on its loss: theta <- theta - eta_t g_i (eq. 9 of martins2011);
//! 2. J proximal steps, one per component of the composite regularizer:
//!    theta <- prox_{eta_t lambda_j Omega_j}(theta) (Prop. 1: for block regularizers only the
//!    group norms are needed, and each group is rescaled in O(1));
//! 3. optionally a projection onto the l2 ball of radius gamma (martins2010 App. E).
//!
//! Kernel groups hold one coefficient per training point and label, `theta_m = s_m sum_j
//! c_m[j] phi_m(x_j)`, and cache the unscaled scores `F_m = K_m c_m` of every training point, so
//! a gradient entry costs one Gram row and scores cost O(1) to read. Group norms are updated with
//! ||theta + d||^2 = ||theta||^2 + 2 <theta, d> + ||d||^2 (Sec. 3.4) instead of recomputed.
//!
//! There may be no kernel group at all: a task whose parameters are explicit groups only
//! (feature templates of a structured task seen through
//! [`crate::task::structured::StructuredOnline`]) trains with `grams = &[]`.

use crate::error::{Error, Result};
use crate::kernel::Gram;
use crate::params::ScaledVec;
use crate::prox::{RegSpec, Regularizer};
use crate::run::{Control, Observer, RunInfo, RunRecorder, RunStatus, StepUnit};
use crate::solver::online::params::{EpochReport, OnlineParams};
use crate::task::online::{ExplicitGroup, Gradient, GroupRole, OnlineTask};
use rand::seq::SliceRandom;
use rand::SeedableRng;

mod batch;
mod shards;

pub(crate) use shards::mix_and_step;
#[cfg(test)]
pub(crate) use shards::shard_ranges;

/// The state of the learner: one scaled block per kernel group and per explicit group.
#[derive(Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OnlineState {
    /// Per kernel: coefficients (point-major, `n_points * n_labels`) with cached scores
    /// `F = K c` as the image (label-major: `F[p, y]` at `y * n_points + p`).
    pub kernel: Vec<ScaledVec>,
    pub explicit: Vec<ScaledVec>,
    pub explicit_groups: Vec<ExplicitGroup>,
    pub n_labels: usize,
    /// Rounds done.
    pub t: u64,
    /// Round after which the running average restarted (`OnlineState::restart_average`);
    /// the average is over rounds `avg_start + 1 ..= t` (0: over every round, Alg. 1).
    #[serde(default)]
    pub avg_start: u64,
}

/// `clone_from` reuses the target's blocks ([`ScaledVec`]'s `clone_from`).
impl Clone for OnlineState {
    fn clone(&self) -> Self {
        OnlineState {
            kernel: self.kernel.clone(),
            explicit: self.explicit.clone(),
            explicit_groups: self.explicit_groups.clone(),
            n_labels: self.n_labels,
            t: self.t,
            avg_start: self.avg_start,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.kernel.clone_from(&source.kernel);
        self.explicit.clone_from(&source.explicit);
        self.explicit_groups.clone_from(&source.explicit_groups);
        self.n_labels = source.n_labels;
        self.t = source.t;
        self.avg_start = source.avg_start;
    }
}

impl OnlineState {
    /// Effective kernel-group coefficients (averaged when the params ask for it).
    pub fn kernel_coefs(&self, averaged: bool) -> Vec<Vec<f64>> {
        self.kernel
            .iter()
            .map(|g| {
                if averaged {
                    g.averaged(self.t - self.avg_start)
                } else {
                    g.current()
                }
            })
            .collect()
    }

    /// Effective explicit groups.
    pub fn explicit_values(&self, averaged: bool) -> Vec<Vec<f64>> {
        self.explicit
            .iter()
            .map(|g| {
                if averaged {
                    g.averaged(self.t - self.avg_start)
                } else {
                    g.current()
                }
            })
            .collect()
    }

    /// Restarts the running average of the iterates at the current round: from now on the
    /// averaged parameters are the mean of the iterates of the rounds that follow (averaged
    /// SGD that skips the first, far-from-optimal iterates; Xu 2011, Bottou 2012 Sec. 5.3).
    pub(crate) fn restart_average(&mut self) {
        for g in self.kernel.iter_mut().chain(self.explicit.iter_mut()) {
            g.restart_average();
        }
        self.avg_start = self.t;
    }

    /// Recomputes each kernel group's cached image `F = K c` (label-major) and its squared
    /// norm `s^2 sum_{p, y} c[p, y] F[y, p]` from `grams` (one per kernel group), for a state
    /// whose group Gram matrices changed since the images were cached (a wrapper's new
    /// kernel weights `d` in `K_d = sum_m d_m K_m`). A dense Gram takes one matrix product
    /// `C^T K` written straight into the image (no memory beyond it); a sparse one is read
    /// row by row, points in parallel.
    pub(crate) fn recompute_images(&mut self, grams: &[Gram]) -> Result<()> {
        if grams.len() != self.kernel.len() {
            return Err(Error::shape(
                "Gram matrices (one per kernel group)",
                self.kernel.len(),
                grams.len(),
            ));
        }
        let l = self.n_labels;
        for (m, (group, gram)) in self.kernel.iter_mut().zip(grams).enumerate() {
            let n = gram.rows();
            if gram.cols() != n || group.len() != n * l || group.image().len() != n * l {
                return Err(Error::shape(
                    format!("points x labels of kernel group {m} (its Gram matrix's rows)"),
                    group.len(),
                    n * l,
                ));
            }
            let coef = group.coef().to_vec();
            let (image, _) = group.image_mut();
            image_of(gram, &coef, l, image);
            let sq: f64 = (0..n)
                .map(|p| {
                    (0..l)
                        .map(|y| coef[p * l + y] * image[y * n + p])
                        .sum::<f64>()
                })
                .sum();
            let s = group.scale();
            group.set_sqnorm(s * s * sq);
        }
        Ok(())
    }

    /// Norms of the regularized groups: kernel groups, then regularized explicit groups.
    pub(crate) fn regularized_norms(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self.kernel.iter().map(|g| g.norm()).collect();
        for (g, spec) in self.explicit.iter().zip(&self.explicit_groups) {
            if spec.role == GroupRole::Regularized {
                v.push(g.norm());
            }
        }
        v
    }
}

/// Where a ChaCha8 generator is in its stream: its seed, stream and word position (a
/// generator set to them draws what the original draws next).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct RngPosition {
    pub seed: [u8; 32],
    pub stream: u64,
    /// The 128-bit word position, in decimal (JSON numbers stop at 64 bits).
    pub word_pos: String,
}

impl RngPosition {
    pub(crate) fn of(rng: &rand_chacha::ChaCha8Rng) -> RngPosition {
        RngPosition {
            seed: rng.get_seed(),
            stream: rng.get_stream(),
            word_pos: rng.get_word_pos().to_string(),
        }
    }

    /// The generator at this position; fails on a word position that is not a number.
    pub(crate) fn rng(&self) -> Result<rand_chacha::ChaCha8Rng> {
        let pos: u128 = self.word_pos.parse().map_err(|_| {
            Error::data(format!(
                "the generator position {:?} is not a number",
                self.word_pos
            ))
        })?;
        let mut rng = rand_chacha::ChaCha8Rng::from_seed(self.seed);
        rng.set_stream(self.stream);
        rng.set_word_pos(pos);
        Ok(rng)
    }
}

/// What the epochs after an epoch boundary depend on (besides the task and the settings):
/// the parameters with their averages and step counter, the order of the examples the next
/// shuffle starts from and the generator's position, the epoch count and the last epoch's
/// progressive loss. Written by [`OnlineLearner::snapshot`] into checkpoints, read back by
/// [`OnlineLearner::restore`].
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct SnapshotRef<'a> {
    pub state: &'a OnlineState,
    pub order: &'a [usize],
    pub rng: RngPosition,
    pub epoch: usize,
    pub progressive: (f64, usize),
}

/// A [`SnapshotRef`] read back.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub(crate) struct EngineSnapshot {
    pub state: OnlineState,
    pub order: Vec<usize>,
    pub rng: RngPosition,
    pub epoch: usize,
    pub progressive: (f64, usize),
}

/// The learner family name of [`OnlineLearner::run`]'s checkpoints.
pub(crate) const CHECKPOINT_FAMILY: &str = "online";

/// `image = (K C)^T` (label-major, `image[y * n + p] = sum_j K[p, j] c[j * l + y]`) for
/// point-major coefficients `c` (`n x l`) and a symmetric `K`.
fn image_of(gram: &Gram, c: &[f64], l: usize, image: &mut [f64]) {
    let n = gram.rows();
    match gram {
        Gram::Dense(m) => {
            use faer::{Accum, MatMut, MatRef, Par};
            // (K C)^T = C^T K (K symmetric): C^T is the point-major C read column-major.
            let ct = MatRef::from_row_major_slice(c, n, l).transpose();
            let k = MatRef::from_row_major_slice(&m.data, n, n);
            let dst = MatMut::from_row_major_slice_mut(image, l, n);
            faer::linalg::matmul::matmul(dst, Accum::Replace, ct, k, 1.0, Par::rayon(0));
        }
        Gram::Sparse(_) => {
            use rayon::prelude::*;
            let rows: Vec<Vec<f64>> = (0..n)
                .into_par_iter()
                .map(|p| {
                    let mut acc = vec![0.0; l];
                    gram.for_each_in_row(p, |j, v| {
                        for (a, cj) in acc.iter_mut().zip(&c[j * l..(j + 1) * l]) {
                            *a += v * cj;
                        }
                    });
                    acc
                })
                .collect();
            for (p, acc) in rows.iter().enumerate() {
                for (y, v) in acc.iter().enumerate() {
                    image[y * n + p] = *v;
                }
            }
        }
    }
}

/// Scores of point `p` from the cached images: `out[y] = sum_m s_m F_m[p, y]`. Images are
/// label-major (`F_m[p, y]` at `y * n_points + p`) so that a gradient entry updates one
/// contiguous slice (see [`add_gram_row`]).
fn point_scores(kernel: &[ScaledVec], p: usize, n_labels: usize, out: &mut [f64]) {
    out.iter_mut().for_each(|o| *o = 0.0);
    for g in kernel {
        let s = g.scale();
        let img = g.image();
        let n = img.len() / n_labels.max(1);
        for (y, o) in out.iter_mut().enumerate() {
            *o += s * img[y * n + p];
        }
    }
}

/// The order in which a learner seeded with `seed` visits `n` examples in epoch `epoch`
/// (from 1): the examples in order, shuffled once per epoch so far by one generator, as
/// [`OnlineLearner::epoch_observed`] shuffles them (in order when `shuffle` is false). A
/// process that runs a single epoch replays the epochs before it.
pub(crate) fn epoch_order(n: usize, seed: u64, epoch: usize, shuffle: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    if shuffle {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..epoch {
            order.shuffle(&mut rng);
        }
    }
    order
}

/// Rounds between two polls of the observer inside an epoch.
pub(crate) const STOP_POLL: usize = 64;

/// Examples per chunk of the order-fixed loss sum of [`OnlineLearner::average_loss`].
pub(crate) const LOSS_CHUNK: usize = 64;

/// Gram-row updates (gradient entries x training points x groups) per round above which the
/// kernel groups are updated in parallel (on a thread of a pool of more than one only).
const PAR_MIN_WORK: usize = 1 << 16;

/// `image[j] += a * G[p, j]` for all `j`: one label's slice of a label-major image updated
/// with Gram row `p` (a contiguous, vectorizable loop for dense Grams; the stored entries only
/// for sparse ones).
#[inline]
fn add_gram_row(gram: &Gram, p: usize, a: f64, image: &mut [f64]) {
    match gram {
        Gram::Dense(m) => {
            for (o, &v) in image.iter_mut().zip(m.row(p)) {
                *o += a * v;
            }
        }
        Gram::Sparse(_) => gram.for_each_in_row(p, |j, v| image[j] += a * v),
    }
}

/// Rescales each regularized group from norm `old[m]` to `new[m]` (Prop. 1).
fn apply_norms(state: &mut OnlineState, old: &[f64], new: &[f64]) {
    let factor = |o: f64, n: f64| if o > 0.0 { n / o } else { 1.0 };
    let mut idx = 0;
    for g in state.kernel.iter_mut() {
        g.scale_by(factor(old[idx], new[idx]));
        idx += 1;
    }
    for (b, spec) in state.explicit.iter_mut().zip(&state.explicit_groups) {
        if spec.role == GroupRole::Regularized {
            b.scale_by(factor(old[idx], new[idx]));
            idx += 1;
        }
    }
}

/// Step 2 of Alg. 1: the proximal steps of the regularizer's components on the regularized
/// groups (Prop. 1) with step `eta`, and the l2 shrinkage of `L2Shrink` groups.
fn prox_steps(state: &mut OnlineState, reg: &dyn Regularizer, lambda: f64, eta: f64) {
    for step in reg.steps() {
        let Some(block) = step.reg.as_block() else {
            continue; // rejected in `OnlineLearner::new`
        };
        if step.weight == 0.0 {
            continue;
        }
        let old = state.regularized_norms();
        let mut new = old.clone();
        block.prox_norms(&mut new, eta * lambda * step.weight);
        apply_norms(state, &old, &new);
    }
    for (block, spec) in state.explicit.iter_mut().zip(&state.explicit_groups) {
        if spec.role == GroupRole::L2Shrink {
            block.scale_by(1.0 / (1.0 + eta * lambda));
        }
    }
}

/// Step 2 of Alg. 1 alone (the proximal steps with step size `eta`) on `state`, e.g. after
/// averaging the parameters of several learners (iterative parameter mixing). Fails on a
/// regularizer that is not a function of the group norms.
pub(crate) fn prox_step(state: &mut OnlineState, params: &OnlineParams, eta: f64) -> Result<()> {
    params.reg.validate()?;
    let reg = params.reg.build();
    if reg.steps().iter().any(|s| s.reg.as_block().is_none()) {
        return Err(Error::param(
            "reg",
            &params.reg,
            "a regularizer of the group norms (l2, l21, l21sq, l2q or elastic)",
        ));
    }
    prox_steps(state, reg.as_ref(), params.lambda, eta);
    Ok(())
}

/// The learner of Alg. 1 over a task with kernel groups given by their training Gram matrices
/// (`n_points x n_points` each).
pub struct OnlineLearner<'a, T: OnlineTask> {
    task: &'a T,
    grams: &'a [Gram],
    params: OnlineParams,
    state: OnlineState,
    gamma: Option<f64>,
    reg: Box<dyn Regularizer>,
    order: Vec<usize>,
    rng: rand_chacha::ChaCha8Rng,
    epoch: usize,
    /// Sum of the losses of the last epoch's rounds, each before its update (the
    /// progressive loss), and the number of rounds.
    progressive: (f64, usize),
    /// The states of shards 2..N kept between sharded epochs, so that each epoch's copies of
    /// the start state reuse their vectors (scratch, never saved: [`shards`]).
    shard_copies: Vec<OnlineState>,
}

/// The report after epoch `epoch` of a run at `state`: the objective lambda Omega(theta) +
/// `average_loss`, with the l2 term of `L2Shrink` groups (lambda/2 ||w||^2) added to Omega.
pub(crate) fn epoch_report(
    state: &OnlineState,
    params: &OnlineParams,
    epoch: usize,
    average_loss: f64,
    seconds: f64,
) -> EpochReport {
    let norms = state.regularized_norms();
    let mut omega = regularizer_value(&params.reg, &norms);
    for (b, spec) in state.explicit.iter().zip(&state.explicit_groups) {
        if spec.role == GroupRole::L2Shrink {
            omega += 0.5 * b.sqnorm();
        }
    }
    EpochReport {
        epoch,
        objective: params.lambda * omega + average_loss,
        average_loss,
        weights: params.reg.kernel_weights(&norms),
        group_norms: norms,
        seconds,
    }
}

/// Omega(theta) from the norms of the regularized groups (NaN for a regularizer that is not
/// a function of the group norms).
pub(crate) fn regularizer_value(reg: &RegSpec, norms: &[f64]) -> f64 {
    reg.build_block().map_or(f64::NAN, |b| b.value_norms(norms))
}

impl<'a, T: OnlineTask> OnlineLearner<'a, T> {
    /// Sets up Alg. 1; fails on invalid parameters or Gram matrices of the wrong size.
    pub(crate) fn new(task: &'a T, grams: &'a [Gram], params: OnlineParams) -> Result<Self> {
        params.validate()?;
        let n = task.n_points();
        for (m, g) in grams.iter().enumerate() {
            if g.rows() != n || g.cols() != n {
                return Err(Error::shape(
                    format!("rows and columns of Gram matrix {m} (training points)"),
                    n,
                    if g.rows() != n { g.rows() } else { g.cols() },
                ));
            }
        }
        if task.n_examples() == 0 {
            return Err(Error::data("no training examples"));
        }
        if params.steps.schedule == crate::solver::online::StepSchedule::AdaGrad {
            return Err(Error::unsupported(
                "the adagrad schedule (per-coordinate steps) trains template taggers with the \
                 l2 regularizer only; this learner keeps one step size for all coordinates \
                 (sqrt, const, inv or bottou)",
            ));
        }
        params.reg.validate()?;
        let reg = params.reg.build();
        if reg.steps().iter().any(|s| s.reg.as_block().is_none()) {
            return Err(Error::param(
                "reg",
                &params.reg,
                "a regularizer of the group norms (l2, l21, l21sq, l2q or elastic): kernel \
                 groups only expose their norms",
            ));
        }
        let l = task.n_labels();
        let groups = task.explicit_groups();
        let state = OnlineState {
            kernel: grams
                .iter()
                .map(|_| ScaledVec::zeros_with_image(n * l, n * l, params.steps.averaging))
                .collect(),
            explicit: groups
                .iter()
                .map(|g| ScaledVec::zeros(g.len, params.steps.averaging))
                .collect(),
            explicit_groups: groups,
            n_labels: l,
            t: 0,
            avg_start: 0,
        };
        let gamma = params
            .steps
            .projection
            .then(|| (2.0 * task.loss_at_zero() / params.lambda).sqrt())
            .filter(|g| g.is_finite() && *g > 0.0);
        Ok(OnlineLearner {
            task,
            grams,
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(params.seed),
            order: (0..task.n_examples()).collect(),
            params,
            state,
            gamma,
            reg,
            epoch: 0,
            progressive: (0.0, 0),
            shard_copies: Vec::new(),
        })
    }

    /// Continues Alg. 1 from `state`, the state of an earlier run over the same task (a warm
    /// start): rounds go on from `state.t` (so a decreasing step size keeps decreasing), the
    /// epochs' shuffles are seeded by `params.seed` and `state.t`. The cached images `F = K c`
    /// of the state's kernel groups must be those of `grams`: after a change of the Gram
    /// matrices call [`OnlineState::recompute_images`] first. Fails when the state's groups
    /// do not fit the task and `grams`.
    pub(crate) fn with_state(
        task: &'a T,
        grams: &'a [Gram],
        params: OnlineParams,
        state: OnlineState,
    ) -> Result<Self> {
        let mut learner = Self::new(task, grams, params)?;
        learner.check_state(&state)?;
        learner.rng = rand_chacha::ChaCha8Rng::seed_from_u64(
            learner.params.seed ^ state.t.wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        learner.state = state;
        Ok(learner)
    }

    /// A learner for one pass over the examples in `order` (each once; the pass does not
    /// shuffle), from `state` (a zero state when `None`), as a part of the data held in
    /// another process runs an epoch of iterative parameter mixing (`estimator::parts`):
    /// `epoch_observed`, then [`Self::progressive_loss`] and [`Self::into_state`]. Fails when
    /// the state does not fit the task or `order` is not an order of its examples.
    pub(crate) fn for_pass(
        task: &'a T,
        grams: &'a [Gram],
        params: OnlineParams,
        state: Option<OnlineState>,
        order: Vec<usize>,
    ) -> Result<Self> {
        let mut learner = Self::new(
            task,
            grams,
            OnlineParams {
                shuffle: false,
                ..params
            },
        )?;
        if let Some(state) = state {
            learner.check_state(&state)?;
            learner.state = state;
        }
        let n = task.n_examples();
        let mut seen = vec![false; n];
        if order.len() != n
            || order
                .iter()
                .any(|&i| i >= n || std::mem::replace(&mut seen[i], true))
        {
            return Err(Error::data(format!(
                "a pass visits each of the {n} examples once"
            )));
        }
        learner.order = order;
        Ok(learner)
    }

    /// Fails when `state`'s groups do not fit the task and the Gram matrices.
    fn check_state(&self, state: &OnlineState) -> Result<()> {
        let (n, l) = (self.task.n_points(), self.task.n_labels());
        if state.n_labels != l {
            return Err(Error::shape(
                "labels of the warm-start state",
                l,
                state.n_labels,
            ));
        }
        if state.kernel.len() != self.grams.len() {
            return Err(Error::shape(
                "kernel groups of the warm-start state (one per Gram matrix)",
                self.grams.len(),
                state.kernel.len(),
            ));
        }
        if let Some(g) = state
            .kernel
            .iter()
            .find(|g| g.len() != n * l || g.image().len() != n * l)
        {
            return Err(Error::shape(
                "points x labels of a warm-start kernel group",
                n * l,
                g.len(),
            ));
        }
        if state.explicit_groups != self.state.explicit_groups
            || state
                .explicit
                .iter()
                .zip(&state.explicit_groups)
                .any(|(b, g)| b.len() != g.len)
            || state.explicit.len() != state.explicit_groups.len()
        {
            return Err(Error::data(
                "the warm-start state's explicit groups are not the task's",
            ));
        }
        Ok(())
    }

    /// The learner at its current epoch boundary, for a checkpoint ([`SnapshotRef`]).
    pub(crate) fn snapshot(&self) -> SnapshotRef<'_> {
        SnapshotRef {
            state: &self.state,
            order: &self.order,
            rng: RngPosition::of(&self.rng),
            epoch: self.epoch,
            progressive: self.progressive,
        }
    }

    /// Puts the learner where [`Self::snapshot`] found one over the same task, Gram
    /// matrices and settings: the epochs that follow are those of the learner that wrote
    /// it, to the last bit. Fails when the snapshot does not fit the task.
    pub(crate) fn restore(&mut self, snap: EngineSnapshot) -> Result<()> {
        self.check_state(&snap.state)?;
        let n = self.task.n_examples();
        let mut seen = vec![false; n];
        if snap.order.len() != n
            || snap
                .order
                .iter()
                .any(|&i| i >= n || std::mem::replace(&mut seen[i], true))
        {
            return Err(Error::data(format!(
                "the checkpoint's order of the examples is not an order of the {n} training \
                 examples"
            )));
        }
        self.rng = snap.rng.rng()?;
        self.state = snap.state;
        self.order = snap.order;
        self.epoch = snap.epoch;
        self.progressive = snap.progressive;
        Ok(())
    }

    /// Epochs done.
    pub(crate) fn epochs_done(&self) -> usize {
        self.epoch
    }

    pub(crate) fn state(&self) -> &OnlineState {
        &self.state
    }

    /// Restarts the running average of the iterates at the current round
    /// ([`OnlineState::restart_average`]).
    pub(crate) fn restart_average(&mut self) {
        self.state.restart_average();
    }

    /// The state, consuming the learner (to warm-start a later one).
    pub(crate) fn into_state(self) -> OnlineState {
        self.state
    }

    /// The projection radius in use, if any.
    pub(crate) fn gamma(&self) -> Option<f64> {
        self.gamma
    }

    /// Replaces the projection radius (a learner that sees the data block by block keeps
    /// the radius of the whole data, not of the block).
    pub(crate) fn with_gamma(mut self, gamma: Option<f64>) -> Self {
        self.gamma = gamma;
        self
    }

    /// The sum of the losses of the last epoch's rounds, each taken before its update
    /// (the progressive validation loss of an online learner), and the number of rounds.
    pub(crate) fn progressive_loss(&self) -> (f64, usize) {
        self.progressive
    }

    fn eta(&self, t: u64) -> f64 {
        self.params.steps.eta(t, self.params.lambda)
    }

    /// The loss of example `i` at the current parameters (before the round's update) with
    /// its gradient in `grad` (scores of its points, explicit entries); reads the state only.
    fn loss_grad_at(&self, i: usize, grad: &mut Gradient, scores: &mut Vec<f64>) -> f64 {
        let l = self.state.n_labels;
        let pts = self.task.points(i);
        let len = pts.len();
        scores.resize(len * l, 0.0);
        for (k, p) in pts.clone().enumerate() {
            point_scores(&self.state.kernel, p, l, &mut scores[k * l..(k + 1) * l]);
        }
        grad.scores.clear();
        grad.scores.resize(len * l, 0.0);
        grad.clear_explicit();
        self.task.loss_grad(i, scores, &self.state.explicit, grad)
    }

    /// The kernel groups' step of example `i`'s score gradient: `(point, label, -eta g)` for
    /// every nonzero entry `g` (eq. 9: `theta_m -= eta sum_{p,y} g_py phi_m(x_p) e_y`).
    fn kernel_deltas(&self, i: usize, grad: &Gradient, eta: f64) -> Vec<(usize, usize, f64)> {
        let l = self.state.n_labels;
        let start = self.task.points(i).start;
        grad.scores
            .iter()
            .enumerate()
            .filter(|(_, g)| **g != 0.0)
            .map(|(k, g)| (start + k / l, k % l, -eta * g))
            .collect()
    }

    /// One round of Alg. 1 on example `i`; returns its loss before the update.
    pub(crate) fn round(&mut self, i: usize, grad: &mut Gradient, scores: &mut Vec<f64>) -> f64 {
        let loss = self.loss_grad_at(i, grad, scores);
        self.step(i, grad);
        loss
    }

    /// The update of a round of Alg. 1 with example `i`'s gradient `grad` (steps 1-3).
    fn step(&mut self, i: usize, grad: &mut Gradient) {
        let l = self.state.n_labels;
        self.state.t += 1;
        let eta = self.eta(self.state.t);

        // 1. Subgradient step on the kernel groups: theta_m -= eta sum_{p,y} g_py phi_m(x_p) e_y.
        let nz = self.kernel_deltas(i, grad, eta);
        if !nz.is_empty() {
            let n = self.task.n_points();
            let step = |group: &mut ScaledVec, gram: &Gram| {
                // <theta_m, d> and ||d||^2 before the update (Sec. 3.4).
                let s = group.scale();
                let mut inner = 0.0;
                let mut dd = 0.0;
                for (a, &(p, y, d)) in nz.iter().enumerate() {
                    inner += d * s * group.image()[y * n + p];
                    for &(p2, y2, d2) in &nz[..a] {
                        if y2 == y {
                            dd += 2.0 * d * d2 * gram.get(p, p2);
                        }
                    }
                    dd += d * d * gram.get(p, p);
                }
                group.add_to_sqnorm(2.0 * inner + dd);
                for &(p, y, d) in &nz {
                    group.add(p * l + y, d);
                    let (image, inv) = group.image_mut();
                    add_gram_row(gram, p, d * inv, &mut image[y * n..(y + 1) * n]);
                }
            };
            // Groups are independent: update them in parallel when there is enough work, more
            // than one thread, and the round already runs on one of the pool's threads (then
            // the loop is a `join`, the idle half stolen or run in place). From outside the
            // pool, as `train` runs the learner, each round would hand the groups to the pool
            // and wait: two thread switches per round, slower than the groups one after
            // another (SPOM on OCR fold 0 on one thread: 42 ms per epoch with the hand-offs,
            // 23 ms without; BENCHMARKS.md, "Rounds without hand-offs"). Nor when the round
            // is one of `--shards N` passes and the pool has no more than `N` threads: every
            // thread then runs a shard, and a `join` only costs.
            let groups = self.state.kernel.len();
            if groups > 1
                && nz.len() * n * groups >= PAR_MIN_WORK
                && rayon::current_thread_index().is_some()
                && rayon::current_num_threads() > self.params.steps.shards.max(1)
            {
                use rayon::prelude::*;
                self.state
                    .kernel
                    .par_iter_mut()
                    .zip(self.grams.par_iter())
                    .for_each(|(group, gram)| step(group, gram));
            } else {
                for (group, gram) in self.state.kernel.iter_mut().zip(self.grams) {
                    step(group, gram);
                }
            }
        }
        self.finish_round(grad, eta);
    }

    /// The rest of a round after the kernel groups' step (Alg. 1 at step `eta`): the
    /// explicit groups' gradient step, the proximal steps (Prop. 1), the projection, and the
    /// tick of the running averages.
    fn finish_round(&mut self, grad: &mut Gradient, eta: f64) {
        // Explicit groups: plain sparse gradient step.
        grad.explicit.sort_unstable_by_key(|&(g, j, _)| (g, j));
        let mut k = 0;
        while k < grad.explicit.len() {
            let (g, j, mut v) = grad.explicit[k];
            k += 1;
            while k < grad.explicit.len() && grad.explicit[k].0 == g && grad.explicit[k].1 == j {
                v += grad.explicit[k].2;
                k += 1;
            }
            let d = -eta * v;
            let block = &mut self.state.explicit[g];
            let cur = block.get(j);
            block.add_to_sqnorm(2.0 * cur * d + d * d);
            block.add(j, d);
        }
        for o in &grad.outer {
            let (z, v) = (
                &grad.outer_values[o.z.clone()],
                &grad.outer_values[o.v.clone()],
            );
            self.state.explicit[o.group].add_outer(z, v, -eta);
        }

        // 2. Proximal steps on the regularized groups (Prop. 1), and l2 shrinkage.
        prox_steps(&mut self.state, self.reg.as_ref(), self.params.lambda, eta);

        // 3. Projection onto the ball of radius gamma (all but unregularized groups).
        if let Some(gamma) = self.gamma {
            let mut sq: f64 = self.state.kernel.iter().map(|g| g.sqnorm()).sum();
            for (b, spec) in self.state.explicit.iter().zip(&self.state.explicit_groups) {
                if spec.role != GroupRole::Unregularized {
                    sq += b.sqnorm();
                }
            }
            let norm = sq.sqrt();
            if norm > gamma {
                let f = gamma / norm;
                self.state.kernel.iter_mut().for_each(|g| g.scale_by(f));
                for (b, spec) in self
                    .state
                    .explicit
                    .iter_mut()
                    .zip(&self.state.explicit_groups)
                {
                    if spec.role != GroupRole::Unregularized {
                        b.scale_by(f);
                    }
                }
            }
        }
        self.state.kernel.iter_mut().for_each(|g| g.tick());
        self.state.explicit.iter_mut().for_each(|g| g.tick());
    }

    /// One pass over the training examples (shuffled when asked; with `params.shards > 1`,
    /// in parallel shards mixed at the end: the `shards` module).
    #[cfg(test)]
    pub(crate) fn epoch(&mut self) {
        self.epoch_observed(&());
    }

    /// One pass over the training examples, polling `observer` every [`STOP_POLL`] rounds;
    /// returns [`Control::Stop`] when it asked to stop (the pass is then cut short).
    pub(crate) fn epoch_observed(&mut self, observer: &dyn Observer) -> Control {
        if self.params.shuffle {
            let mut order = std::mem::take(&mut self.order);
            order.shuffle(&mut self.rng);
            self.order = order;
        }
        if self.params.steps.shards > 1 {
            return self.sharded_pass(observer);
        }
        if self.params.steps.batch > 1 {
            return self.batched_pass(observer);
        }
        let mut grad = Gradient::default();
        let mut scores = Vec::new();
        self.progressive = (0.0, 0);
        for k in 0..self.order.len() {
            if k % STOP_POLL == 0 && observer.should_stop() {
                return Control::Stop;
            }
            let i = self.order[k];
            let loss = self.round(i, &mut grad, &mut scores);
            self.progressive.0 += loss;
            self.progressive.1 += 1;
        }
        self.epoch += 1;
        Control::Continue
    }

    /// Average loss of the last iterate over all training examples (scores read from the
    /// caches, examples in parallel). The sum is order-fixed: the examples are cut into
    /// chunks of [`LOSS_CHUNK`], each summed in order, and the chunk sums added in order, so
    /// the result (recorded in the model as its final objective) is the same to the last bit
    /// whatever the number of threads.
    pub(crate) fn average_loss(&self) -> f64 {
        let sums = self.loss_chunk_sums();
        sums.iter().sum::<f64>() / self.task.n_examples() as f64
    }

    /// The losses of the last iterate summed over consecutive chunks of [`LOSS_CHUNK`]
    /// examples, each in order, chunks in parallel (the terms of [`Self::average_loss`]).
    pub(crate) fn loss_chunk_sums(&self) -> Vec<f64> {
        use rayon::prelude::*;
        let l = self.state.n_labels;
        let n = self.task.n_examples();
        (0..n.div_ceil(LOSS_CHUNK))
            .into_par_iter()
            .map_init(
                || (Gradient::default(), Vec::new()),
                |(grad, scores), c| {
                    let mut sum = 0.0;
                    for i in c * LOSS_CHUNK..((c + 1) * LOSS_CHUNK).min(n) {
                        let pts = self.task.points(i);
                        scores.clear();
                        scores.resize(pts.len() * l, 0.0);
                        for (k, p) in pts.clone().enumerate() {
                            point_scores(&self.state.kernel, p, l, &mut scores[k * l..(k + 1) * l]);
                        }
                        grad.scores.clear();
                        grad.scores.resize(pts.len() * l, 0.0);
                        grad.clear_explicit();
                        sum += self.task.loss_grad(i, scores, &self.state.explicit, grad);
                    }
                    sum
                },
            )
            .collect()
    }

    /// The primal objective lambda Omega(theta) + (1/N) sum L of the last iterate, with the
    /// l2 term of `L2Shrink` groups (lambda/2 ||w||^2) added.
    pub(crate) fn report(&self, seconds: f64) -> EpochReport {
        epoch_report(
            &self.state,
            &self.params,
            self.epoch,
            self.average_loss(),
            seconds,
        )
    }

    /// Runs all epochs. After each, `on_epoch` sees the report and the state (and may stop
    /// the run) and `observer` sees the progress (epoch, objective); `observer` is also
    /// polled between examples. Returns the final state with the run's information: status
    /// [`RunStatus::Completed`] after all epochs, [`RunStatus::Cancelled`] when stopped.
    ///
    /// With checkpoints ([`Observer::checkpoints`]) the run starts from the saved epoch
    /// boundary, if any, and saves [`Self::snapshot`] after every epoch the store asks
    /// for but the last (family [`CHECKPOINT_FAMILY`]); fails when the checkpoint does not
    /// fit or cannot be written.
    pub(crate) fn run(
        mut self,
        observer: &dyn Observer,
        on_epoch: &mut dyn FnMut(&EpochReport, &OnlineState) -> Control,
    ) -> Result<(OnlineState, RunInfo)> {
        let mut rec = RunRecorder::new(StepUnit::Epoch, Some(self.params.steps.epochs as u64));
        let ck = observer.checkpoints();
        if let Some(c) = ck {
            if let Some(bytes) = c.resume(CHECKPOINT_FAMILY)? {
                self.restore(crate::checkpoint::decode(CHECKPOINT_FAMILY, &bytes)?)?;
                if self.epoch > self.params.steps.epochs {
                    return Err(Error::data(format!(
                        "the checkpoint is after epoch {}, beyond the run's {} epochs",
                        self.epoch, self.params.steps.epochs
                    )));
                }
                c.resumed_at(self.epoch as u64)?;
                rec.set_steps(self.epoch as u64);
            }
        }
        let mut status = RunStatus::Completed;
        while self.epoch < self.params.steps.epochs {
            if self.epoch_observed(observer) == Control::Stop {
                status = RunStatus::Cancelled;
                break;
            }
            let rep = self.report(rec.seconds());
            let hook = on_epoch(&rep, &self.state);
            if let Some(c) = ck {
                let e = self.epoch as u64;
                if self.epoch < self.params.steps.epochs && c.due(e) {
                    c.save(
                        CHECKPOINT_FAMILY,
                        e,
                        &crate::checkpoint::encode(&self.snapshot())?,
                    )?;
                }
            }
            if rec.step(Some(rep.objective), observer) == Control::Stop || hook == Control::Stop {
                status = RunStatus::Cancelled;
                break;
            }
        }
        Ok((self.state, rec.finish(status)))
    }
}
