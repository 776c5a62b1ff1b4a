//! An epoch of Alg. 1 (martins2011) in mini-batches of `params.batch` examples whose losses
//! and gradients (the loss-augmented decodings) are computed in parallel against the same
//! parameters, then applied one round after another, with the kernel groups' cached scores
//! updated for the whole batch at once, in parallel.
//!
//! With `params.batch = B > 1`, each batch of `B` consecutive examples of the epoch's
//! (shuffled) order
//! 1. computes every example's scores, loss and gradient at the parameters the batch
//!    started with, the examples in parallel (`loss_grad_at`: for a sequence or a tree the
//!    loss-augmented decoding, the costly part of the parser's rounds);
//! 2. applies them in order, each as its own round of Alg. 1: the round counter and step
//!    size `eta_t`, the subgradient step (eq. 9), the proximal steps (Prop. 1), the
//!    projection and the averages' tick, exactly as the sequential learner would with these
//!    gradients: only the gradients are older (by at most `B - 1` rounds);
//! 3. holds back the costly part of a kernel group's step, the Gram rows added into the
//!    cached scores `F = K c` (`points` numbers per gradient entry, martins2011 Sec. 3.4:
//!    most of SPOM's time on OCR), and adds the batch's rows at its end, the labels' slices
//!    of each group's scores in parallel, each entry's additions in the order the rounds
//!    made them. The rounds in between read the scores they need (the group norm's update
//!    `<theta, d>` at the gradient's own points) as the cached value plus the held-back
//!    rows' entries at that point, added in the same order: the same numbers, to the bit,
//!    as the sequential learner's cache. A re-normalization or zeroing of a group during
//!    the batch rescales or drops its held-back rows as it does the cache
//!    ([`ScaledVec::units_since_watch`]).
//!
//! Each step depends only on the batch's start state and the order, never on which thread
//! ran what, so the same seed and `B` give the same model on any number of threads; `B = 1`
//! is the sequential learner (this module is not used). The gradients are stale by at most
//! `B - 1` rounds, a small fraction of an epoch (626 OCR words, 2,033 parser sentences), so
//! the accuracy per epoch follows the sequential learner's, while the decodings and the
//! score updates, most of a round's work, run on every core.

use super::{add_gram_row, OnlineLearner, STOP_POLL};
use crate::kernel::Gram;
use crate::params::ScaledVec;
use crate::run::{Control, Observer};
use crate::task::online::{Gradient, OnlineTask};
use rayon::prelude::*;

/// A kernel group's held-back Gram rows: `(point, label, amount in stored units)` in the
/// order the rounds made them.
type Held = Vec<(usize, usize, f64)>;

/// The cached score of `(p, y)` (stored units) with the held-back rows of `held` added in
/// their order: what the sequential learner's cache holds there.
fn held_score(group: &ScaledVec, gram: &Gram, held: &Held, n: usize, p: usize, y: usize) -> f64 {
    let mut v = group.image()[y * n + p];
    for &(p2, y2, a) in held {
        if y2 == y {
            v += a * gram.get(p2, p);
        }
    }
    v
}

/// The subgradient step `nz` (`(point, label, delta)`) on one kernel group as
/// [`OnlineLearner::round`] takes it, its Gram rows held back in `held`.
fn held_step(
    group: &mut ScaledVec,
    gram: &Gram,
    held: &mut Held,
    nz: &[(usize, usize, f64)],
    n: usize,
    l: usize,
) {
    let s = group.scale();
    let mut inner = 0.0;
    let mut dd = 0.0;
    for (a, &(p, y, d)) in nz.iter().enumerate() {
        inner += d * s * held_score(group, gram, held, n, p, y);
        for &(p2, y2, d2) in &nz[..a] {
            if y2 == y {
                dd += 2.0 * d * d2 * gram.get(p, p2);
            }
        }
        dd += d * d * gram.get(p, p);
    }
    group.add_to_sqnorm(2.0 * inner + dd);
    let inv = 1.0 / group.scale();
    for &(p, y, d) in nz {
        group.add(p * l + y, d);
        held.push((p, y, d * inv));
    }
}

/// Adds the held-back rows into the cached scores, each label's slice of a group in
/// parallel (entries in their order within a slice), and empties `held`.
fn add_held(kernel: &mut [ScaledVec], grams: &[Gram], held: &mut [Held], n: usize) {
    if n == 0 {
        return;
    }
    kernel
        .par_iter_mut()
        .zip(grams.par_iter())
        .zip(held.par_iter_mut())
        .for_each(|((group, gram), held)| {
            if held.is_empty() {
                return;
            }
            let (image, _) = group.image_mut();
            image.par_chunks_mut(n).enumerate().for_each(|(y, slice)| {
                for &(p, y2, a) in held.iter() {
                    if y2 == y {
                        add_gram_row(gram, p, a, slice);
                    }
                }
            });
            held.clear();
        });
}

impl<T: OnlineTask> OnlineLearner<'_, T> {
    /// The epoch's pass over the (already shuffled) order in mini-batches of
    /// `params.batch` (module docs). A stop asked during the pass ends it after a batch and
    /// returns [`Control::Stop`] (the epoch is not counted).
    pub(super) fn batched_pass(&mut self, observer: &dyn Observer) -> Control {
        let b = self.params.steps.batch.max(1);
        let (n, l) = (self.task.n_points(), self.state.n_labels);
        let order = std::mem::take(&mut self.order);
        let mut grads: Vec<Gradient> = Vec::new();
        let mut held: Vec<Held> = vec![Vec::new(); self.state.kernel.len()];
        self.progressive = (0.0, 0);
        let mut next_poll = 0;
        let mut control = Control::Continue;
        for (c, batch) in order.chunks(b).enumerate() {
            if c * b >= next_poll {
                if observer.should_stop() {
                    control = Control::Stop;
                    break;
                }
                next_poll = c * b + STOP_POLL;
            }
            grads.resize_with(batch.len(), Gradient::default);
            let this = &*self;
            let losses: Vec<f64> = grads[..batch.len()]
                .par_iter_mut()
                .zip(batch.par_iter())
                .map_init(Vec::new, |scores, (grad, &i)| {
                    this.loss_grad_at(i, grad, scores)
                })
                .collect();
            for ((&i, grad), loss) in batch.iter().zip(grads.iter_mut()).zip(losses) {
                self.state.t += 1;
                let eta = self.eta(self.state.t);
                let nz = self.kernel_deltas(i, grad, eta);
                if !nz.is_empty() {
                    for ((group, gram), held) in
                        self.state.kernel.iter_mut().zip(self.grams).zip(&mut held)
                    {
                        held_step(group, gram, held, &nz, n, l);
                    }
                }
                self.state.kernel.iter_mut().for_each(|g| g.watch_units());
                self.finish_round(grad, eta);
                for (group, held) in self.state.kernel.iter().zip(&mut held) {
                    let u = group.units_since_watch();
                    if u == 0.0 {
                        held.clear();
                    } else if u != 1.0 {
                        held.iter_mut().for_each(|h| h.2 *= u);
                    }
                }
                self.progressive.0 += loss;
                self.progressive.1 += 1;
            }
            add_held(&mut self.state.kernel, self.grams, &mut held, n);
        }
        self.order = order;
        if control == Control::Continue {
            self.epoch += 1;
        }
        control
    }
}

#[cfg(test)]
mod tests;
