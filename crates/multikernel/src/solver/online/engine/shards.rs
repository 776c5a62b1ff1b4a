//! An epoch of Alg. 1 (martins2011) in parallel shards: iterative parameter mixing (McDonald,
//! Hall & Mann 2010, "Distributed training strategies for the structured perceptron", Fig. 3,
//! "iterative parameter mixing"), with the proximal step of the regularizer after each mix.
//!
//! With `params.shards = N > 1`, an epoch
//! 1. shuffles the order as the sequential learner does (the same draw of the same generator);
//! 2. cuts it into `N` contiguous shards ([`shard_ranges`]: sizes differ by at most one);
//! 3. runs one pass of Alg. 1 per shard, the shards in parallel, each from a copy of the
//!    state at the start of the epoch (the same round counter `t0`, so each shard takes the
//!    steps `eta_{t0 + 1}, eta_{t0 + 2}, ...` a sequential pass over its examples would);
//! 4. mixes the shards' states uniformly ([`mix_states`]): the parameters, the running sums
//!    of the averaged iterates and the cached scores `F = K c` of the kernel groups are the
//!    mean of the shards'; the round counter advances by the mean shard length (the mix has
//!    moved as far as one shard, so a decreasing step size decreases at that pace);
//! 5. takes one proximal step of the regularizer (Prop. 1, the step 2 of Alg. 1) at the mixed
//!    round's step size: the mean of group-sparse states is not group-sparse, the step gives
//!    the mix back the sparsity a round of Alg. 1 ends with.
//!
//! Uniform rather than loss- or update-weighted mixing: the shards are equal-sized contiguous
//! pieces of one random order, so each is a sample of the same data and its parameters are
//! an estimate as good as any other's; the weighting by updates in McDonald et al. is for the
//! perceptron, which updates only on mistakes, whereas Alg. 1 takes a (proximal) step every
//! round. Uniform weights also make one example per shard the plain mean of single-example
//! updates (the twin test below).
//!
//! Each shard's pass depends only on its examples and the start state, and the mean adds the
//! shards in shard order, so the same seed and `N` give the same model, to the bit, on any
//! number of threads. The memory is `N` copies of the state (parameters, running sums and,
//! for kernel groups, the cached scores), on top of the shared Gram matrices and task: the
//! first shard runs on the learner's state, the others on copies kept between epochs (each
//! epoch copies the start state into them without allocating), and the mix is written into
//! the first shard's state.

use super::{prox_steps, OnlineLearner, OnlineState, STOP_POLL};
use crate::params::ScaledVec;
use crate::run::{Control, Observer};
use crate::task::online::{Gradient, OnlineTask};
use rand::SeedableRng;
use rayon::prelude::*;
use std::ops::Range;

/// The `shards` contiguous pieces of `0..n` (at most `n` of them, at least one): sizes differ
/// by at most one, the longer first.
pub(crate) fn shard_ranges(n: usize, shards: usize) -> Vec<Range<usize>> {
    let k = shards.clamp(1, n.max(1));
    let (q, r) = (n / k, n % k);
    let mut start = 0;
    (0..k)
        .map(|s| {
            let len = q + usize::from(s < r);
            start += len;
            start - len..start
        })
        .collect()
}

/// The uniform mix of shard states that started from one state and ran `rounds[k]` rounds
/// each (module docs, step 4), written into `parts[0]` (the others are left as they are):
/// every block the mean of the shards' ([`ScaledVec::mix_into`]), the squared norm of a
/// kernel group recomputed from its mean coefficients and mean cached scores
/// (`||theta||^2 = sum_{p, y} c[p, y] F[y, p]`, martins2011 Sec. 3.4; the points' terms in
/// parallel, their sum in point order), the round counter at the start plus the mean shard
/// length (rounded). `parts` must not be empty and must share their groups (they are copies
/// of one state).
pub(crate) fn mix_states(parts: &mut [OnlineState], rounds: &[usize]) {
    let (first, others) = parts
        .split_first_mut()
        .expect("mix_states needs at least one shard state");
    let k = others.len() + 1;
    let t0 = first.t - rounds[0] as u64;
    let total: usize = rounds.iter().sum();
    let l = first.n_labels;
    for (g, mean) in first.kernel.iter_mut().enumerate() {
        let blocks: Vec<&ScaledVec> = others.iter().map(|p| &p.kernel[g]).collect();
        mean.mix_into(&blocks);
        let n = mean.len() / l.max(1);
        let (c, f) = (mean.coef(), mean.image());
        let per_point: Vec<f64> = (0..n)
            .into_par_iter()
            .with_min_len(NORM_MIN_POINTS)
            .map(|p| (0..l).map(|y| c[p * l + y] * f[y * n + p]).sum::<f64>())
            .collect();
        let sq: f64 = per_point.iter().sum();
        mean.set_sqnorm(sq);
    }
    for (g, mean) in first.explicit.iter_mut().enumerate() {
        let blocks: Vec<&ScaledVec> = others.iter().map(|p| &p.explicit[g]).collect();
        mean.mix_into(&blocks);
    }
    first.t = t0 + ((total + k / 2) / k) as u64;
}

/// The mix of shard states that started from one state and ran `rounds[k]` rounds each
/// ([`mix_states`], into `parts[0]`), then one proximal step of the regularizer `reg` at
/// the mixed round's step size (module docs, steps 4 and 5).
pub(crate) fn mix_and_step(
    parts: &mut [OnlineState],
    rounds: &[usize],
    reg: &dyn crate::prox::Regularizer,
    params: &crate::solver::online::params::OnlineParams,
) {
    mix_states(parts, rounds);
    let eta = params.steps.eta(parts[0].t.max(1), params.lambda);
    prox_steps(&mut parts[0], reg, params.lambda, eta);
}

/// Points a thread takes at least in the squared norm of a mixed kernel group.
const NORM_MIN_POINTS: usize = 1 << 10;

/// What one shard's pass left: its state, the sum of its progressive losses, its rounds, and
/// whether the observer asked to stop.
struct ShardPass {
    state: OnlineState,
    loss: f64,
    rounds: usize,
    stopped: bool,
}

impl<T: OnlineTask> OnlineLearner<'_, T> {
    /// The epoch's pass in `params.shards` parallel shards over the (already shuffled) order,
    /// mixed and proximal-stepped (module docs). A stop asked during the pass mixes what the
    /// shards did and returns [`Control::Stop`] (the epoch is not counted).
    pub(super) fn sharded_pass(&mut self, observer: &dyn Observer) -> Control {
        let ranges = shard_ranges(self.order.len(), self.params.steps.shards);
        // The first shard runs on the state itself, the others on copies of it whose
        // vectors are kept from epoch to epoch (`shard_copies`).
        let mut copies = std::mem::take(&mut self.shard_copies);
        copies.truncate(ranges.len() - 1);
        let start = &self.state;
        copies.par_iter_mut().for_each(|c| c.clone_from(start));
        while copies.len() + 1 < ranges.len() {
            copies.push(self.state.clone());
        }
        let mut states = vec![std::mem::take(&mut self.state)];
        states.append(&mut copies);
        let (task, grams, gamma, epoch) = (self.task, self.grams, self.gamma, self.epoch);
        let (params, order) = (&self.params, &self.order);
        let passes: Vec<ShardPass> = ranges
            .into_par_iter()
            .zip(states)
            .map(|(range, state)| {
                let mut shard = OnlineLearner {
                    task,
                    grams,
                    params: params.clone(),
                    state,
                    gamma,
                    reg: params.reg.build(),
                    order: Vec::new(),
                    rng: rand_chacha::ChaCha8Rng::seed_from_u64(0),
                    epoch,
                    progressive: (0.0, 0),
                    shard_copies: Vec::new(),
                };
                let (mut grad, mut scores) = (Gradient::default(), Vec::new());
                let (mut loss, mut rounds, mut stopped) = (0.0, 0, false);
                for (k, &i) in order[range].iter().enumerate() {
                    if k % STOP_POLL == 0 && observer.should_stop() {
                        stopped = true;
                        break;
                    }
                    loss += shard.round(i, &mut grad, &mut scores);
                    rounds += 1;
                }
                ShardPass {
                    state: shard.state,
                    loss,
                    rounds,
                    stopped,
                }
            })
            .collect();
        let stopped = passes.iter().any(|p| p.stopped);
        self.progressive = (
            passes.iter().map(|p| p.loss).sum(),
            passes.iter().map(|p| p.rounds).sum(),
        );
        let rounds: Vec<usize> = passes.iter().map(|p| p.rounds).collect();
        let mut states: Vec<OnlineState> = passes.into_iter().map(|p| p.state).collect();
        if self.progressive.1 > 0 {
            mix_and_step(&mut states, &rounds, self.reg.as_ref(), &self.params);
        }
        // With no round done, shard 1's state is still the start state.
        self.shard_copies = states.split_off(1);
        self.state = states.pop().expect("one state per shard");
        if stopped {
            return Control::Stop;
        }
        self.epoch += 1;
        Control::Continue
    }
}

#[cfg(test)]
mod tests;
