//! The loop's point rebuilt elsewhere from what changed ([`Replica`]): a process that
//! separates parts of the examples follows the loop from each step's new cut, the master's
//! multipliers and template factors, the cuts dropped, and whether the point it separated
//! became the best point ([`Step`]), instead of receiving the dense weights (59 MB for 7.4M
//! weights) at every cut. The cuts are held and the weights summed as the masters hold and
//! sum them ([`CompactCuts::weights_into`]: `w_j = sum_r (alpha_r f_g(j)) a_r[j]`, cut after
//! cut from zero, cuts with `alpha_r = 0` and groups with `f_g = 0` left out), so the point
//! is the loop's, bit for bit.
//!
//! A replica may hold only the weights its process reads (`reads`: the parameters the
//! examples decoded there score with): the cuts' other entries are dropped as they arrive,
//! so rebuilding the point streams only those, and the point equals the loop's wherever it
//! is read (elsewhere it is 0). The set can grow only before the first cut
//! ([`Replica::widen`]); later, a replica over a larger set starts again from the loop's
//! state.

use super::compact_cuts::CompactCuts;
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

/// The loop's state as far as its points go: the working set, the last multipliers and
/// factors, the best point, the separation step, and the separations so far.
#[derive(Debug, Clone)]
pub(crate) struct Replica {
    layout: GroupLayout,
    step: f64,
    held: CompactCuts,
    alpha: Vec<f64>,
    factors: Vec<f64>,
    best: Option<Vec<f64>>,
    /// The point of the next separation.
    at: Vec<f64>,
    /// Steps applied (the loop's solves).
    steps: usize,
    /// The weights held (`None`: all).
    reads: Option<Vec<bool>>,
    /// The chunks of [`CompactCuts`] that hold a weight of `reads` (`None`: all): the
    /// others are not written (the point there is what it was).
    chunks: Option<Vec<bool>>,
}

impl Replica {
    /// The loop before its first separation (at zero) over `layout`'s weights, separating
    /// at `step` between the best point and the master's (1: at the master's).
    pub(crate) fn new(layout: GroupLayout, step: f64) -> Replica {
        let dim = layout.total();
        Replica {
            factors: vec![1.0; layout.n_groups()],
            held: CompactCuts::new(&layout),
            layout,
            step,
            alpha: Vec::new(),
            best: None,
            at: vec![0.0; dim],
            chunks: None,
            steps: 0,
            reads: None,
        }
    }

    /// [`Replica::new`] holding only the weights `j` with `reads[j]`; an error when `reads`
    /// does not cover the weights.
    pub(crate) fn reading(layout: GroupLayout, step: f64, reads: Vec<bool>) -> Result<Replica> {
        let dim = layout.total();
        if reads.len() != dim {
            return Err(Error::shape("weights read", dim, reads.len()));
        }
        let mut r = Replica::new(layout, step);
        r.chunks = Some(r.held.chunks_read(&reads));
        r.reads = Some(reads);
        Ok(r)
    }

    /// Holds also the weights `j` with `more[j]`: true when it does (or did already), false,
    /// and no change, when a cut is held that dropped some of them; an error when `more`
    /// does not cover the weights.
    pub(crate) fn widen(&mut self, more: &[bool]) -> Result<bool> {
        let dim = self.layout.total();
        if more.len() != dim {
            return Err(Error::shape("weights read", dim, more.len()));
        }
        let Some(reads) = &mut self.reads else {
            return Ok(true);
        };
        if self.steps == 0 {
            reads.iter_mut().zip(more).for_each(|(a, &b)| *a |= b);
            self.chunks = Some(self.held.chunks_read(reads));
            return Ok(true);
        }
        Ok(more.iter().zip(reads.iter()).all(|(&m, &r)| r || !m))
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
        let r = self.held.cuts().len() + 1;
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
        if u32::try_from(dim).is_err() {
            return Err(Error::unsupported(format!(
                "{dim} weights: the cuts index at most 2^32 of them"
            )));
        }
        if step.cut.a.iter().any(|(j, _)| j >= dim) {
            return Err(Error::data(format!(
                "a loop step's cut has an index past the {dim} weights"
            )));
        }
        if step.best_moved {
            // The point separated last becomes the best one; the next point is written
            // over the old best's buffer.
            match &mut self.best {
                Some(b) => std::mem::swap(b, &mut self.at),
                None => self.best = Some(std::mem::take(&mut self.at)),
            }
        }
        self.held.push_where(step.cut, self.reads.as_deref());
        self.alpha.clear();
        self.alpha.extend_from_slice(step.alpha);
        self.factors.clear();
        self.factors.extend_from_slice(step.factors);
        self.point();
        if !step.keep.is_empty() {
            self.held.retain(step.keep);
            let mut keep = step.keep.iter();
            self.alpha.retain(|_| *keep.next().unwrap_or(&true));
        }
        self.steps += 1;
        Ok(())
    }

    /// Sets `at` to the weights of the working set, or the point between the best point and
    /// them ([`super::compact_cuts::between`]), as the loop takes it; with `reads`, only the
    /// chunks that hold a weight read are written.
    fn point(&mut self) {
        let between = self
            .best
            .as_deref()
            .filter(|_| self.step < 1.0)
            .map(|b| (b, self.step));
        let at = std::mem::take(&mut self.at);
        self.at = self.held.point_into(
            &self.alpha,
            &self.factors,
            between,
            self.chunks.as_deref(),
            at,
        );
    }

    /// The replica of `state` over `layout`: the same point, bit for bit (the multipliers of
    /// the cuts dropped were 0, so the weights are the same sum).
    /// It holds only the weights `j` with `reads[j]` (`None`: all).
    pub(crate) fn from_state(
        layout: GroupLayout,
        state: ReplicaState,
        reads: Option<Vec<bool>>,
    ) -> Result<Replica> {
        let dim = layout.total();
        if reads.as_ref().is_some_and(|r| r.len() != dim) {
            return Err(Error::data(
                "the weights read do not cover the featurizer's weights",
            ));
        }
        if u32::try_from(dim).is_err()
            || state.alpha.len() != state.cuts.len()
            || state.factors.len() != layout.n_groups()
            || state.best.as_ref().is_some_and(|b| b.len() != dim)
            || state.cuts.iter().any(|c| c.a.iter().any(|(j, _)| j >= dim))
        {
            return Err(Error::data(
                "a loop state does not fit the featurizer's weights",
            ));
        }
        let mut held = CompactCuts::new(&layout);
        for cut in &state.cuts {
            held.push_where(cut, reads.as_deref());
        }
        let chunks = reads.as_deref().map(|r| held.chunks_read(r));
        let mut r = Replica {
            layout,
            step: state.step,
            held,
            alpha: state.alpha,
            factors: state.factors,
            best: state.best,
            at: vec![0.0; dim],
            steps: state.steps,
            reads,
            chunks,
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
