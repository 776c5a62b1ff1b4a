//! The loop's point rebuilt elsewhere from what changed ([`Replica`]): a process that
//! separates parts of the examples follows the loop from each step's new cut, the master's
//! multipliers and template factors, the cuts dropped, and whether the point it separated
//! became the best point ([`Step`]), instead of receiving the dense weights (59 MB for 7.4M
//! weights) at every cut. The weights are summed as the masters sum them
//! (`block_master::grams::PackedGrams::weights_into`: `w_j = sum_r (alpha_r f_g(j)) a_r[j]`,
//! cut after cut from zero, cuts with `alpha_r = 0` and groups with `f_g = 0` left out), so
//! the point is the loop's, bit for bit.

use super::Cut;
use crate::error::{Error, Result};
use crate::features::GroupLayout;

/// What the loop did between two separations: the point separated last became the best
/// point (`best_moved`), `cut` was added, the master solved with multipliers `alpha` (one
/// per cut in the working set, `cut` last) and one factor per group (`factors`), then the
/// cuts `r` with `keep[r]` false were dropped (`keep` empty: none). Borrowed from the loop.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Step<'a> {
    pub best_moved: bool,
    pub cut: &'a Cut,
    pub alpha: &'a [f64],
    pub factors: &'a [f64],
    pub keep: &'a [bool],
}

/// `out = b + s (w - b)`, the point between the best point `b` and the master's `w` that
/// the loop separates: one function for the loop and its replicas, so both take the same
/// bits.
pub(crate) fn between_into(b: &[f64], w: &[f64], s: f64, out: &mut Vec<f64>) {
    out.clear();
    out.extend(b.iter().zip(w).map(|(x, y)| x + s * (y - x)));
}

/// The loop's state as far as its points go: the working set, the last multipliers and
/// factors, the best point, the separation step, and the separations so far.
#[derive(Debug, Clone)]
pub(crate) struct Replica {
    layout: GroupLayout,
    step: f64,
    cuts: Vec<Cut>,
    alpha: Vec<f64>,
    factors: Vec<f64>,
    best: Option<Vec<f64>>,
    /// The point of the next separation.
    at: Vec<f64>,
    /// Steps applied (the loop's solves).
    steps: usize,
}

impl Replica {
    /// The loop before its first separation (at zero) over `layout`'s weights, separating
    /// at `step` between the best point and the master's (1: at the master's).
    pub(crate) fn new(layout: GroupLayout, step: f64) -> Replica {
        let dim = layout.total();
        Replica {
            factors: vec![1.0; layout.n_groups()],
            layout,
            step,
            cuts: Vec::new(),
            alpha: Vec::new(),
            best: None,
            at: vec![0.0; dim],
            steps: 0,
        }
    }

    /// The point of the next separation.
    pub(crate) fn at(&self) -> &[f64] {
        &self.at
    }

    /// The loop's solves applied so far.
    pub(crate) fn steps(&self) -> usize {
        self.steps
    }

    /// Follows the loop through `step`; an error for a step that does not fit (the state is
    /// then unchanged).
    pub(crate) fn apply(&mut self, step: Step<'_>) -> Result<()> {
        let dim = self.layout.total();
        let r = self.cuts.len() + 1;
        if step.alpha.len() != r
            || step.factors.len() != self.layout.n_groups()
            || !(step.keep.is_empty() || step.keep.len() == r)
        {
            return Err(Error::data(format!(
                "a loop step does not fit the point's state: {} multipliers, {} factors and {} \
                 kept flags for {r} cuts and {} groups",
                step.alpha.len(),
                step.factors.len(),
                step.keep.len(),
                self.layout.n_groups()
            )));
        }
        if step.cut.a.iter().any(|(j, _)| j >= dim) {
            return Err(Error::data(format!(
                "a loop step's cut has an index past the {dim} weights"
            )));
        }
        if step.best_moved {
            match &mut self.best {
                Some(b) => b.copy_from_slice(&self.at),
                None => self.best = Some(self.at.clone()),
            }
        }
        self.cuts.push(step.cut.clone());
        self.alpha = step.alpha.to_vec();
        self.factors = step.factors.to_vec();
        self.point();
        if !step.keep.is_empty() {
            let mut keep = step.keep.iter();
            self.cuts.retain(|_| *keep.next().unwrap_or(&true));
            let mut keep = step.keep.iter();
            self.alpha.retain(|_| *keep.next().unwrap_or(&true));
        }
        self.steps += 1;
        Ok(())
    }

    /// Sets `at` to the weights of the working set, or the point between the best point and
    /// them ([`between_into`]), as the loop takes it.
    fn point(&mut self) {
        let mut w = std::mem::take(&mut self.at);
        self.weights_into(&mut w);
        self.at = match self.best.as_ref().filter(|_| self.step < 1.0) {
            Some(b) => {
                let mut at = Vec::with_capacity(w.len());
                between_into(b, &w, self.step, &mut at);
                at
            }
            None => w,
        };
    }

    /// `w_j = sum_r (alpha_r f_g(j)) a_r[j]`, as the masters sum it, into `w` (resized).
    fn weights_into(&self, w: &mut Vec<f64>) {
        w.clear();
        w.resize(self.layout.total(), 0.0);
        for (cut, &a) in self.cuts.iter().zip(&self.alpha) {
            if a == 0.0 {
                continue;
            }
            let mut g = 0;
            let mut end = 0;
            for (j, v) in cut.a.iter() {
                while j >= end {
                    end = self.layout.range(g).end;
                    g += 1;
                }
                let f = self.factors[g - 1];
                if f != 0.0 {
                    w[j] += a * f * v;
                }
            }
        }
    }

    /// The replica of `state` over `layout`: the same point, bit for bit (the multipliers of
    /// the cuts dropped were 0, so the weights are the same sum).
    pub(crate) fn from_state(layout: GroupLayout, state: ReplicaState) -> Result<Replica> {
        let dim = layout.total();
        if state.alpha.len() != state.cuts.len()
            || state.factors.len() != layout.n_groups()
            || state.best.as_ref().is_some_and(|b| b.len() != dim)
            || state.cuts.iter().any(|c| c.a.iter().any(|(j, _)| j >= dim))
        {
            return Err(Error::data(
                "a loop state does not fit the featurizer's weights",
            ));
        }
        let mut r = Replica {
            layout,
            step: state.step,
            cuts: state.cuts,
            alpha: state.alpha,
            factors: state.factors,
            best: state.best,
            at: vec![0.0; dim],
            steps: state.steps,
        };
        if r.steps > 0 {
            r.point();
        }
        Ok(r)
    }
}

/// [`Replica::state`]: what a process needs to follow the loop from here.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReplicaState {
    pub step: f64,
    pub cuts: Vec<Cut>,
    pub alpha: Vec<f64>,
    pub factors: Vec<f64>,
    pub best: Option<Vec<f64>>,
    pub steps: usize,
}
