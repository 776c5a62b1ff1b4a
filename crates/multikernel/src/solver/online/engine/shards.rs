//! An epoch of Alg. 1 (martins2011) in parallel shards: iterative parameter mixing (McDonald,
//! Hall & Mann 2010, "Distributed training strategies for the structured perceptron", Fig. 3),
//! with the shards' passes composed rather than averaged.
//!
//! With `params.shards = N > 1`, an epoch
//! 1. shuffles the order as the sequential learner does (the same draw of the same generator);
//! 2. cuts it into `N` contiguous shards ([`shard_ranges`]: sizes differ by at most one);
//! 3. runs one pass of Alg. 1 per shard, the shards in parallel, each from a copy of the
//!    state `x0` at the start of the epoch, with the step sizes of its place in the epoch
//!    (shard `k` starting at position `a_k` of the order takes `eta_{t0 + a_k + 1}, ...`, as
//!    the sequential pass would at those rounds), every block marked
//!    ([`ScaledVec::track_shrink`]) so that the pass is known as `x_k = F_k x0 + u_k`: `F_k`
//!    the product of the scale factors its proximal and projection steps applied to each
//!    group (Prop. 1: a block regularizer's prox only rescales groups), `u_k` what its loss
//!    steps added (shrunk by the steps after them);
//! 4. composes the shards in order ([`compose_states`], [`ScaledVec::compose`]): the mix is
//!    `x0` pushed through `x -> F_1 x + u_1`, then `x -> F_2 x + u_2`, ..., i.e. the sum of
//!    the shards' moves `x_k - x0`, each earlier move shrunk by the later shards' factors;
//!    the running sums of the averaged iterates and the cached scores `F = K c` of the kernel
//!    groups compose the same way (both are linear in the parameters), and the round counter
//!    advances by the epoch's rounds;
//! 5. projects the mix onto the ball of radius gamma when the learner projects (step 3 of
//!    Alg. 1; a projection of a point inside the ball changes nothing).
//!
//! Why the composition and not the mean (this module's first version): every shard makes a
//! shard's worth of progress from `x0`, and the mean of `N` such moves is one shard's worth,
//! so an epoch did `1/N` of a sequential epoch's work (2 shards on OCR fold 0 trailed the
//! sequential learner by 0.5-1.4 points of character accuracy at 5-20 epochs). The sum of
//! the moves does a whole epoch's work, like the sequential pass whose rounds it reorders,
//! and reads each shard's gradients at weights that lag by at most the other shards' moves
//! of the same epoch.
//!
//! The regularizer is counted once per round: shard `k`'s rounds shrink `x0` by `F_k`, and
//! the composition multiplies `x0` by `F_1 F_2 ... F_N`, the factor the epoch's rounds
//! would apply one after another (the plain sum of the moves, `x0 + sum_k (x_k - x0)`,
//! gives `(F_1 + ... + F_N - (N - 1)) x0`: the same to first order in the shrinks, but below
//! zero when a shard's shrinks are strong, e.g. when the group lasso's prox zeroes a group
//! that another shard keeps). No proximal step follows the mix: each round has taken its
//! own, and one more would shrink the epoch twice at one round. When neither the loss
//! gradients nor the shrink factors depend on the weights (the l2 prox with a constant step,
//! a hinge loss every example keeps violating), the composed epoch is the sequential epoch
//! itself, averaged iterates included (the twin test below).
//!
//! Each shard's pass depends only on its examples and the start state, and the composition
//! adds the shards in shard order, so the same seed and `N` give the same model, to the bit,
//! on any number of threads. The memory is `N` copies of the state (parameters, running
//! sums and, for kernel groups, the cached scores), on top of the shared Gram matrices and
//! task.

use super::{project, OnlineLearner, OnlineState, STOP_POLL};
use crate::params::ScaledVec;
use crate::run::{Control, Observer};
use crate::task::online::{Gradient, OnlineTask};
use rand::SeedableRng;
use rayon::prelude::*;
use std::ops::Range;

/// The `shards` contiguous pieces of `0..n` (at most `n` of them, at least one): sizes differ
/// by at most one, the longer first.
pub fn shard_ranges(n: usize, shards: usize) -> Vec<Range<usize>> {
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

/// The composition of shard states that each started as a copy of `start` marked by
/// [`ScaledVec::track_shrink`] and ran `rounds[k]` rounds (module docs, step 4): every block
/// composed by [`ScaledVec::compose`], the squared norm of a kernel group recomputed from its
/// composed coefficients and cached scores (`||theta||^2 = sum_{p, y} c[p, y] F[y, p]`,
/// martins2011 Sec. 3.4), the round counter of `start` plus all the shards' rounds. `parts`
/// must share `start`'s groups (they are copies of it).
pub fn compose_states(start: &OnlineState, parts: &[OnlineState], rounds: &[usize]) -> OnlineState {
    let l = start.n_labels;
    let kernel = (0..start.kernel.len())
        .map(|g| {
            let blocks: Vec<&ScaledVec> = parts.iter().map(|p| &p.kernel[g]).collect();
            let mut mix = ScaledVec::compose(&start.kernel[g], &blocks);
            let n = mix.len() / l.max(1);
            let (c, f) = (mix.coef(), mix.image());
            let sq: f64 = (0..n)
                .map(|p| (0..l).map(|y| c[p * l + y] * f[y * n + p]).sum::<f64>())
                .sum();
            mix.set_sqnorm(sq);
            mix
        })
        .collect();
    let explicit = (0..start.explicit.len())
        .map(|g| {
            let blocks: Vec<&ScaledVec> = parts.iter().map(|p| &p.explicit[g]).collect();
            ScaledVec::compose(&start.explicit[g], &blocks)
        })
        .collect();
    OnlineState {
        kernel,
        explicit,
        explicit_groups: start.explicit_groups.clone(),
        n_labels: l,
        t: start.t + rounds.iter().sum::<usize>() as u64,
        avg_start: start.avg_start,
    }
}

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
    /// composed and projected (module docs). A stop asked during the pass mixes what the
    /// shards did and returns [`Control::Stop`] (the epoch is not counted).
    pub(super) fn sharded_pass(&mut self, observer: &(impl Observer + ?Sized)) -> Control {
        let ranges = shard_ranges(self.order.len(), self.params.shards);
        let (task, grams, gamma, epoch) = (self.task, self.grams, self.gamma, self.epoch);
        let (params, start, order) = (&self.params, &self.state, &self.order);
        let passes: Vec<ShardPass> = ranges
            .into_par_iter()
            .map(|range| {
                let mut state = start.clone();
                state.t += range.start as u64;
                for g in state.kernel.iter_mut().chain(state.explicit.iter_mut()) {
                    g.track_shrink();
                }
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
        if self.progressive.1 > 0 {
            let rounds: Vec<usize> = passes.iter().map(|p| p.rounds).collect();
            let states: Vec<OnlineState> = passes.into_iter().map(|p| p.state).collect();
            let mut mixed = compose_states(&self.state, &states, &rounds);
            drop(states);
            if let Some(gamma) = self.gamma {
                project(&mut mixed, gamma);
            }
            self.state = mixed;
        }
        if stopped {
            return Control::Stop;
        }
        self.epoch += 1;
        Control::Continue
    }
}

#[cfg(test)]
mod tests;
