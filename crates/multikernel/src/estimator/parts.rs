//! Structured learners trained by the cutting plane over parts of their sentences held apart
//! (other processes or machines; the Python package's `multikernel.dask.fit_dask`), what a
//! tagger's parts ([`super::tagger::parts`]) and a parser's ([`super::parser::parts`])
//! share:
//!
//! - each part's sentences featurized against the merged featurizer ([`CompiledPart`]) and
//!   kept where they are; at each point of the loop every part returns its unscaled
//!   separation sums ([`CompiledPart::separate_at`], [`PartSums`]), added and scaled once by
//!   the loop (`PartsSeparator`). With binary features (CRF++ templates, string features,
//!   arc templates) every sum is an integer, so the cut is bit for bit that of one process,
//!   and so is the model;
//! - the point need not travel: each [`Point`] comes with what the loop did since the last
//!   one ([`LoopStep`]: the cut added, the master's multipliers and template factors, the
//!   cuts dropped, whether the last point became the best one), from which a
//!   [`PointReplica`] where the parts are rebuilds the point bit for bit; a process that
//!   missed steps starts again from the loop's state ([`Point::state`]). A replica holds
//!   only the weights its parts read (`PointReplica::new` with parts), so what it streams to
//!   rebuild the point shrinks with the parts it serves. Every part's sums carry a
//!   fingerprint of the loop's steps its replica followed (`step_hash`), checked against the
//!   loop's.
//!
//! The online learner over parts mixes their passes ([`online`]); the batch CRF adds their
//! losses and gradients at each point L-BFGS evaluates ([`batch`]).

pub mod batch;
pub mod online;

use crate::error::{Error, Result};
use crate::features::{GroupLayout, SparseVector};
use crate::run::Observer;
use crate::solver::cutting_plane::{
    self, Cut, CutSums, LoopView, Replica, ReplicaState, Separator, Step,
};
use crate::task::tagging::TaggingTask;
use crate::task::tree::{ChuLiuEdmonds, Eisner, TreeTask};
use std::sync::Mutex;

/// The weights of a model trained over parts, one group per template (a tagger's or a
/// parser's merged featurizer's: `PartFeaturizer::layout`, `ParseFeaturizer::layout`).
#[derive(Debug, Clone, PartialEq)]
pub struct PartLayout(pub(crate) GroupLayout);

impl PartLayout {
    /// The number of weights.
    pub(crate) fn dim(&self) -> usize {
        self.0.total()
    }
}

/// A part's sentences as a structured task: tagged sequences, or trees (any tree, or
/// projective).
#[derive(Debug)]
pub(crate) enum PartTask {
    Tagging(TaggingTask),
    Trees(TreeTask<ChuLiuEdmonds>),
    Projective(TreeTask<Eisner>),
}

impl PartTask {
    /// Marks the weights the part's sentences are scored with.
    fn reads(&self, reads: &mut [bool]) {
        use crate::task::structured::explicit_reads;
        match self {
            PartTask::Tagging(t) => explicit_reads(t, reads),
            PartTask::Trees(t) => explicit_reads(t, reads),
            PartTask::Projective(t) => explicit_reads(t, reads),
        }
    }

    /// The number of sentences and their unscaled separation sums at `w`.
    fn sums(&self, w: &[f64], scratch: &mut [f64]) -> Result<(usize, Option<CutSums>)> {
        use crate::task::structured::StructuredTask;
        fn of<T: StructuredTask>(
            t: &T,
            w: &[f64],
            scratch: &mut [f64],
        ) -> Result<(usize, Option<CutSums>)> {
            let n = t.n_examples();
            Ok((n, cutting_plane::separation_sums(t, w, 0..n, scratch, &())?))
        }
        match self {
            PartTask::Tagging(t) => of(t, w, scratch),
            PartTask::Trees(t) => of(t, w, scratch),
            PartTask::Projective(t) => of(t, w, scratch),
        }
    }
}

/// A part's sentences featurized, kept where the part is, separated at each point of the
/// loop.
#[derive(Debug)]
pub struct CompiledPart {
    task: PartTask,
    dim: usize,
    /// The dense accumulator of the sums (all zeros between separations).
    scratch: Mutex<Vec<f64>>,
    /// This part among those compiled in this process (what a [`PointReplica`] holds the
    /// weights of).
    id: u64,
}

/// The next [`CompiledPart::id`].
static NEXT_PART: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl CompiledPart {
    /// A part's featurized sentences over `dim` weights.
    pub(crate) fn new(task: PartTask, dim: usize) -> CompiledPart {
        CompiledPart {
            task,
            dim,
            scratch: Mutex::new(Vec::new()),
            id: NEXT_PART.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// The part's unscaled separation sums at the point of `replica` (decoded in
    /// parallel).
    pub fn separate_at(&self, replica: &PointReplica) -> Result<PartSums> {
        if replica
            .serves
            .as_ref()
            .is_some_and(|s| !s.contains(&self.id))
        {
            return Err(Error::data(
                "the point's replica does not hold the weights this part reads",
            ));
        }
        self.separate(replica.at(), replica.hash)
    }

    /// How many of the model's weights the part's sentences are scored with (what a
    /// [`PointReplica`] holds for this part).
    pub fn weights_read(&self) -> usize {
        self.reads().iter().filter(|&&r| r).count()
    }

    /// The weights the part's sentences are scored with (`true` at their indices).
    pub(crate) fn reads(&self) -> Vec<bool> {
        let mut reads = vec![false; self.dim];
        self.task.reads(&mut reads);
        reads
    }

    /// The part's unscaled separation sums at the loop's point `w` itself (sent whole
    /// instead of rebuilt by a replica), the point of fingerprint `hash` ([`Point::hash`]).
    pub fn separate_point(&self, w: &[f64], hash: u64) -> Result<PartSums> {
        self.separate(w, hash)
    }

    /// The part's unscaled separation sums at the weights `w`, reached by the loop's steps
    /// of fingerprint `hash`.
    pub(crate) fn separate(&self, w: &[f64], hash: u64) -> Result<PartSums> {
        if w.len() != self.dim {
            return Err(Error::shape("weights", self.dim, w.len()));
        }
        let mut scratch = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        scratch.resize(self.dim, 0.0);
        let (n, sums) = self.task.sums(w, &mut scratch[..])?;
        let sums = sums.ok_or_else(|| Error::data("the separation stopped"))?;
        Ok(PartSums {
            indices: sums.a.iter().map(|&(j, _)| j as u64).collect(),
            values: sums.a.iter().map(|&(_, v)| v).collect(),
            cost: sums.b,
            examples: n,
            hash,
        })
    }
}

/// A part's separation sums: `sum_i [Phi(x_i, y_i) - Phi(x_i, y_hat_i)]` over its
/// sentences (the weights' indices, strictly increasing, with their values), `sum_i
/// c(y_i, y_hat_i)`, and how many sentences they sum over.
#[derive(Debug, Clone, PartialEq)]
pub struct PartSums {
    pub indices: Vec<u64>,
    pub values: Vec<f64>,
    pub cost: f64,
    pub examples: usize,
    /// A fingerprint of the loop's steps to the point separated (`step_hash`).
    pub hash: u64,
}

impl PartSums {
    /// The sums of several parts as one part's, when adding them first changes nothing the
    /// loop computes: every value and cost an integer (binary features' counts, the Hamming
    /// cost; below 2^53, so that any grouping adds them exactly), every part at the same
    /// point (one fingerprint). The entries merged in order, a weight's values added, the
    /// sums that come to zero dropped, by the loop's own merge. `None` otherwise (real
    /// values: the loop adds the parts in its own order), or for no part.
    ///
    /// A process that separates several parts sends one merged part instead of each:
    /// fewer bytes where the parts share weights, and the same cut to the bit.
    pub fn merged_exactly(parts: &[PartSums]) -> Option<PartSums> {
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
        let exact = |v: f64| v.fract() == 0.0 && v.abs() <= EXACT;
        let first = parts.first()?;
        if parts.iter().any(|p| {
            p.hash != first.hash
                || p.indices.len() != p.values.len()
                || !exact(p.cost)
                || !p.values.iter().all(|&v| exact(v))
        }) {
            return None;
        }
        let sums: Vec<CutSums> = parts.iter().map(PartSums::cut_sums).collect();
        let sum = CutSums::sum(&sums);
        if !exact(sum.b) || !sum.a.iter().all(|&(_, v)| exact(v)) {
            return None;
        }
        let (indices, values) = sum.a.into_iter().map(|(j, v)| (j as u64, v)).unzip();
        Some(PartSums {
            indices,
            values,
            cost: sum.b,
            examples: parts.iter().map(|p| p.examples).sum(),
            hash: first.hash,
        })
    }

    /// The sums as the loop adds them, unchecked.
    pub(crate) fn cut_sums(&self) -> CutSums {
        CutSums {
            a: self
                .indices
                .iter()
                .map(|&j| j as usize)
                .zip(self.values.iter().copied())
                .collect(),
            b: self.cost,
        }
    }

    /// The sums as the loop adds them, checked against `dim` weights.
    fn checked(self, dim: usize) -> Result<CutSums> {
        if self.indices.len() != self.values.len() {
            return Err(Error::data(format!(
                "separation sums: {} indices and {} values",
                self.indices.len(),
                self.values.len()
            )));
        }
        if !self.cost.is_finite() || self.values.iter().any(|v| !v.is_finite()) {
            return Err(Error::data("separation sums: a value is not finite"));
        }
        if self.indices.windows(2).any(|p| p[0] >= p[1])
            || self.indices.last().is_some_and(|&j| j >= dim as u64)
        {
            return Err(Error::data(format!(
                "separation sums: indices must increase and stay below {dim}"
            )));
        }
        Ok(CutSums {
            a: self
                .indices
                .into_iter()
                .map(|j| j as usize)
                .zip(self.values)
                .collect(),
            b: self.cost,
        })
    }
}

/// A cut as it travels: the weights' indices (strictly increasing), their values, and the
/// cut's offset `b`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoopCut {
    pub indices: Vec<u64>,
    pub values: Vec<f64>,
    pub b: f64,
}

impl LoopCut {
    fn of(cut: &Cut) -> LoopCut {
        LoopCut {
            indices: cut.a.iter().map(|(j, _)| j as u64).collect(),
            values: cut.a.iter().map(|(_, v)| v).collect(),
            b: cut.b,
        }
    }

    fn checked(self) -> Result<Cut> {
        if self.indices.len() != self.values.len()
            || self.indices.windows(2).any(|p| p[0] >= p[1])
            || !self.b.is_finite()
            || self.values.iter().any(|v| !v.is_finite())
        {
            return Err(Error::data(
                "a cut needs as many values as indices, indices increasing, finite numbers",
            ));
        }
        let entries = self
            .indices
            .into_iter()
            .map(|j| j as usize)
            .zip(self.values)
            .collect();
        Ok(Cut {
            a: SparseVector::from_sorted(entries).unwrap_or_default(),
            b: self.b,
        })
    }
}

/// What the loop did between two separations: the point separated last became the best
/// point (`best_moved`), `cut` was added, the master solved with multipliers `alpha` (one
/// per cut of the working set, `cut` last) and `factors` (one per template), then the cuts
/// `r` with `keep[r]` false were dropped (`keep` empty: none).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoopStep {
    pub best_moved: bool,
    pub cut: LoopCut,
    pub alpha: Vec<f64>,
    pub factors: Vec<f64>,
    pub keep: Vec<bool>,
}

impl LoopStep {
    fn of(step: &Step<'_>) -> LoopStep {
        LoopStep {
            best_moved: step.best_moved,
            cut: LoopCut::of(step.cut),
            alpha: step.alpha.to_vec(),
            factors: step.factors.to_vec(),
            keep: step.keep.to_vec(),
        }
    }
}

/// The loop's state as far as its points go (for a process that missed steps): the
/// separation step, the working set's cuts with their last multipliers, the templates'
/// factors, the best point, and the loop's solves so far.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopState {
    pub separation_step: f64,
    pub cuts: Vec<LoopCut>,
    pub alpha: Vec<f64>,
    pub factors: Vec<f64>,
    pub best: Option<Vec<f64>>,
    pub steps: usize,
    /// The fingerprint of the loop's steps so far.
    pub hash: u64,
}

/// The point of the loop's next separation, rebuilt where the parts are, with the
/// fingerprint of the steps that led there.
#[derive(Debug, Clone)]
pub struct PointReplica {
    replica: Replica,
    pub(crate) hash: u64,
    /// The parts whose weights it holds ([`CompiledPart::id`]; `None`: it holds all the
    /// weights).
    serves: Option<std::collections::HashSet<u64>>,
}

impl PointReplica {
    /// The loop before its first separation (at zero), over the weights of `layout`: all
    /// of them, or with `parts` only those the parts read (the point is the loop's there, 0
    /// elsewhere).
    pub fn new(
        layout: &PartLayout,
        separation_step: f64,
        parts: Option<&[&CompiledPart]>,
    ) -> Result<PointReplica> {
        let replica = match parts {
            None => Replica::new(layout.0.clone(), separation_step),
            Some(p) => Replica::reading(layout.0.clone(), separation_step, reads_of(layout, p)?)?,
        };
        Ok(PointReplica {
            replica,
            hash: STEPS_START,
            serves: parts.map(|p| p.iter().map(|c| c.id).collect()),
        })
    }

    /// Holds also the weights `part` reads: true when it does, false (no change) when a
    /// cut already dropped some of them (a replica [`PointReplica::from_state`] holds
    /// them).
    pub fn widen(&mut self, part: &CompiledPart) -> Result<bool> {
        let Some(serves) = &mut self.serves else {
            return Ok(true);
        };
        if serves.contains(&part.id) {
            return Ok(true);
        }
        let widened = self.replica.widen(&part.reads())?;
        if widened {
            serves.insert(part.id);
        }
        Ok(widened)
    }

    /// Follows the loop through `step` (an error, and no change, for a step that does not
    /// fit).
    pub fn apply(&mut self, step: LoopStep) -> Result<()> {
        let cut = step.cut.checked()?;
        let step = Step {
            best_moved: step.best_moved,
            cut: &cut,
            alpha: &step.alpha,
            factors: &step.factors,
            keep: &step.keep,
        };
        self.replica.apply(step)?;
        self.hash = step_hash(self.hash, &step);
        Ok(())
    }

    /// The point of the next separation.
    pub(crate) fn at(&self) -> &[f64] {
        self.replica.at()
    }

    /// The loop's solves followed so far (the separations before the next one, less 1).
    pub fn steps(&self) -> usize {
        self.replica.steps()
    }

    /// The replica of the loop at `state`, over the weights of `layout` (all of them, or
    /// with `parts` only those the parts read).
    pub fn from_state(
        layout: &PartLayout,
        state: LoopState,
        parts: Option<&[&CompiledPart]>,
    ) -> Result<PointReplica> {
        let cuts = state
            .cuts
            .into_iter()
            .map(LoopCut::checked)
            .collect::<Result<Vec<_>>>()?;
        let replica = Replica::from_state(
            layout.0.clone(),
            ReplicaState {
                step: state.separation_step,
                cuts,
                alpha: state.alpha,
                factors: state.factors,
                best: state.best,
                steps: state.steps,
            },
            parts.map(|p| reads_of(layout, p)).transpose()?,
        )?;
        Ok(PointReplica {
            replica,
            hash: state.hash,
            serves: parts.map(|p| p.iter().map(|c| c.id).collect()),
        })
    }
}

/// The weights any of `parts` reads (an error for a part compiled over other weights
/// than `layout`'s).
fn reads_of(layout: &PartLayout, parts: &[&CompiledPart]) -> Result<Vec<bool>> {
    let mut reads = vec![false; layout.dim()];
    for part in parts {
        if part.dim != reads.len() {
            return Err(Error::shape("a part's weights", reads.len(), part.dim));
        }
        part.task.reads(&mut reads);
    }
    Ok(reads)
}

/// A point the loop asks the parts to separate: the weights, and what the loop did since
/// the last point (`None` at the first, which is zero), so that the parts' replicas
/// ([`PointReplica`]) can rebuild it instead of receiving it.
#[derive(Debug, Clone, Copy)]
pub struct Point<'a> {
    pub at: &'a [f64],
    pub step: Option<&'a LoopStep>,
    /// Separations before this one.
    pub index: usize,
    /// The loop's separation step (for a new [`PointReplica`]).
    pub separation_step: f64,
    /// A fingerprint of the loop's steps to this point (`step_hash`): a part's replica at
    /// this point has the same.
    pub hash: u64,
    /// The loop's state, for a process that missed steps ([`Point::state`]).
    view: &'a LoopView<'a>,
}

impl Point<'_> {
    /// The loop's state at this point: a [`PointReplica::from_state`] separates here.
    pub fn state(&self) -> LoopState {
        let s = self.view.state();
        LoopState {
            separation_step: s.step,
            cuts: s.cuts.iter().map(LoopCut::of).collect(),
            alpha: s.alpha,
            factors: s.factors,
            best: s.best,
            steps: s.steps,
            hash: self.hash,
        }
    }
}

/// The fingerprint of no steps ([`step_hash`]'s start).
pub(crate) const STEPS_START: u64 = 0xcbf2_9ce4_8422_2325;

/// The fingerprint of the loop's steps: `h`, the fingerprint of the steps before, folded
/// with `step`'s words (FNV-1a: whether the best point moved, the cut's indices, values and
/// offset, the multipliers, the factors, the cuts kept). The loop and each replica fold the
/// same steps, so a part that separated at another point than the loop's (a replica that
/// missed or repeated a step, or followed another fit) shows another fingerprint. Hashing
/// the steps, not the point, costs the size of a cut, not of the weights.
pub(crate) fn step_hash(h: u64, step: &Step<'_>) -> u64 {
    let mut h = h;
    let mut fold = |word: u64| {
        h ^= word;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    };
    fold(u64::from(step.best_moved));
    for (j, v) in step.cut.a.iter() {
        fold(j as u64);
        fold(v.to_bits());
    }
    fold(step.cut.b.to_bits());
    step.alpha.iter().for_each(|a| fold(a.to_bits()));
    step.factors.iter().for_each(|f| fold(f.to_bits()));
    step.keep.iter().for_each(|&k| fold(u64::from(k)));
    h ^ (h >> 29)
}

/// The callable that separates the parts: every part's sums at a point (each sentence in
/// one part), or `None` to stop.
pub type SeparateParts<'f> = dyn FnMut(&Point<'_>) -> Result<Option<Vec<PartSums>>> + 'f;

/// The separation of the parts: what the caller's `separate` returns for a point, every
/// part's sums (each sentence once), added in the order given.
pub(crate) struct PartsSeparator<'f> {
    separate: &'f mut SeparateParts<'f>,
    n: usize,
    /// The number of weights.
    dim: usize,
    /// The loop's step since the last separation.
    pending: Option<LoopStep>,
    /// The fingerprint of the loop's steps so far ([`step_hash`]).
    chain: u64,
    index: usize,
    separation_step: f64,
}

impl<'f> PartsSeparator<'f> {
    /// The separation of `n` sentences held in parts over `dim` weights, by the caller's
    /// `separate`; `separation_step` is the loop's (for the parts' new replicas).
    pub(crate) fn new(
        separate: &'f mut SeparateParts<'f>,
        n: usize,
        dim: usize,
        separation_step: f64,
    ) -> PartsSeparator<'f> {
        PartsSeparator {
            separate,
            n,
            dim,
            pending: None,
            chain: STEPS_START,
            index: 0,
            separation_step,
        }
    }
}

impl Separator for PartsSeparator<'_> {
    fn solved(&mut self, step: &Step<'_>) {
        self.pending = Some(LoopStep::of(step));
        self.chain = step_hash(self.chain, step);
    }

    fn separate(&mut self, _at: &[f64], _observer: &dyn Observer) -> Result<Option<Cut>> {
        Err(Error::data(
            "the parts' separation needs the loop's state (Separator::separate_in)",
        ))
    }

    fn separate_in(
        &mut self,
        at: &[f64],
        view: &LoopView<'_>,
        observer: &dyn Observer,
    ) -> Result<Option<Cut>> {
        if observer.should_stop() {
            return Ok(None);
        }
        let hash = self.chain;
        let point = Point {
            at,
            step: self.pending.as_ref(),
            index: self.index,
            separation_step: self.separation_step,
            hash,
            view,
        };
        let found = (self.separate)(&point)?;
        self.pending = None;
        self.index += 1;
        let Some(parts) = found else {
            return Ok(None);
        };
        if let Some(p) = parts.iter().find(|p| p.hash != hash) {
            return Err(Error::Numerical(format!(
                "a part separated at another point than the loop's at separation {} (its \
                 fingerprint {:016x}, the loop's {hash:016x})",
                self.index - 1,
                p.hash
            )));
        }
        let covered: usize = parts.iter().map(|p| p.examples).sum();
        if covered != self.n {
            return Err(Error::data(format!(
                "the parts' separation sums cover {covered} sentences of {}",
                self.n
            )));
        }
        let dim = self.dim;
        let sums = parts
            .into_iter()
            .map(|p| p.checked(dim))
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(CutSums::cut(&sums, self.n)))
    }
}
