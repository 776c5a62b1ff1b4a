//! A tagger trained by the cutting plane over parts of its sentences held apart (other
//! processes or machines; the Python package's `multikernel.dask.fit_dask`), giving the model
//! of one process on all of them:
//!
//! 1. feature dicts only: each part's keys ([`PartKeys::of`]), merged in the parts' order
//!    ([`PartKeys::merge`]: keys in order of first appearance, as over all sentences);
//! 2. each part's sentences in the tagger's columns ([`TagPart::new`]) and their expansion
//!    counts ([`TagPart::counts`]), merged in any order ([`TagCounts::merge`]) into the
//!    featurizer ([`TagCounts::part_featurizer`], the same as one process builds);
//! 3. each part compiled against it ([`TagPart::compile`]) and kept where it is;
//! 4. the loop ([`fit_parts`]) runs the master problem here and asks for the separation at
//!    each point: every part's unscaled sums ([`CompiledPart::separate_at`], [`PartSums`]),
//!    added and scaled once. With CRF++ templates or string features (binary features,
//!    integer sums) the cuts are bit for bit those of one process, so is the model.
//!
//! The point need not travel: each [`Point`] comes with what the loop did since the last
//! one ([`LoopStep`]: the cut added, the master's multipliers and template factors, the
//! cuts dropped, whether the last point became the best one), from which a
//! [`PointReplica`] where the parts are rebuilds the point bit for bit; a process that
//! missed steps starts again from the loop's state ([`Point::state`]). A replica holds only
//! the weights its parts read (`PointReplica::new` with parts), so what it streams to rebuild the
//! point shrinks with the parts it serves. Every part's sums carry a fingerprint of the
//! loop's steps its replica followed (`step_hash`), checked against the loop's.

use super::{check_labels, column_sentences, Sentences};
use crate::data::columns::ColumnSentence;
use crate::error::{Error, Result};
use crate::estimator::fit::scored_tagging;
use crate::estimator::fitted::Fitted;
use crate::estimator::spec::{LearnerSpec, Task};
use crate::features::SparseVector;
use crate::pipeline::columns::tagging::{fit_cutting_plane, TaggerLearner};
use crate::run::Observer;
use crate::solver::cutting_plane::{
    self, Cut, CutSums, Examples, LoopView, Replica, ReplicaState, Separator, Step,
};
use crate::task::tagging::{FeatureKeys, TagFeaturizer, TaggingTask, TemplateFile};
use std::path::Path;
use std::sync::Mutex;

pub use crate::task::tagging::TagCounts;

/// The keys of a part's feature-dict tokens, in order of first appearance.
#[derive(Debug, Clone, PartialEq)]
pub struct PartKeys(FeatureKeys);

impl PartKeys {
    /// The keys of sentences of feature dicts (none at all allowed in a part); an error for
    /// columns, or a value that is not finite.
    pub fn of(x: Sentences<'_>) -> Result<PartKeys> {
        match x {
            Sentences::Dicts(d) => Ok(PartKeys(FeatureKeys::collect(d)?)),
            Sentences::Columns(_) => Err(Error::unsupported(
                "tokens given as columns read templates, not feature keys",
            )),
        }
    }

    /// The keys of this part's sentences followed by `later`'s.
    pub fn merge(self, later: PartKeys) -> PartKeys {
        PartKeys(self.0.merge(later.0))
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(&self.0).map_err(|e| Error::data(format!("feature keys: {e}")))
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<PartKeys> {
        let keys: FeatureKeys =
            serde_json::from_slice(bytes).map_err(|e| Error::data(format!("feature keys: {e}")))?;
        if keys.names.len() != keys.real.len() {
            return Err(Error::data(format!(
                "feature keys: {} names and {} kinds",
                keys.names.len(),
                keys.real.len()
            )));
        }
        let distinct: std::collections::HashSet<&String> = keys.names.iter().collect();
        if distinct.len() != keys.names.len() {
            return Err(Error::data("feature keys: a key is named twice"));
        }
        Ok(PartKeys(keys))
    }
}

/// How a part's tokens become the tagger's columns: CRF++ template text (tokens given as
/// columns) and a name for it in errors, or the keys of all parts (feature dicts).
#[derive(Debug, Clone, Copy)]
pub enum PartFormat<'a> {
    Templates { text: &'a str, origin: &'a str },
    Keys(&'a PartKeys),
}

/// A part of the training sentences in the tagger's columns (labels last).
#[derive(Debug, Clone)]
pub struct TagPart {
    train: Vec<ColumnSentence>,
    templates: TemplateFile,
}

impl TagPart {
    /// The part's sentences `x` with labels `y`; errors as `training_data`'s (sentence
    /// numbers count within the part).
    pub fn new(x: Sentences<'_>, y: &[Vec<String>], format: PartFormat<'_>) -> Result<TagPart> {
        check_labels(x, y)?;
        let (train, templates) = match (x, format) {
            (Sentences::Dicts(d), PartFormat::Keys(keys)) => {
                let keys = keys.0.clone().nonempty()?;
                (keys.columns(d, Some(y))?, keys.templates())
            }
            (Sentences::Columns(c), PartFormat::Templates { text, origin }) => (
                column_sentences(c, Some(y), None)?,
                TemplateFile::parse(text.as_bytes(), Path::new(origin))?,
            ),
            (Sentences::Dicts(_), PartFormat::Templates { .. }) => {
                return Err(Error::unsupported(
                    "templates read columns; tokens given as feature dicts take the merged \
                     feature keys",
                ))
            }
            (Sentences::Columns(_), PartFormat::Keys(_)) => {
                return Err(Error::unsupported(
                    "tokens given as columns need templates (CRF++ template text)",
                ))
            }
        };
        if let Some(i) = train.iter().position(ColumnSentence::is_empty) {
            return Err(Error::data(format!("sentence {i} has no tokens")));
        }
        Ok(TagPart { train, templates })
    }

    /// The part's expansion counts, to merge with the other parts'.
    pub fn counts(&self) -> Result<TagCounts> {
        TagCounts::of(self.templates.clone(), &self.train)
    }

    /// The attributes of the part's sentences that `featurizer` has features of, each with
    /// its feature's index, in order of first appearance (`SequenceTagger::attributes`).
    pub fn attributes(&self, featurizer: &PartFeaturizer) -> Vec<(String, usize)> {
        featurizer.0.attributes(&self.train)
    }

    /// The part's sentences featurized by the featurizer of all parts.
    pub fn compile(&self, featurizer: &PartFeaturizer) -> Result<CompiledPart> {
        if featurizer.0.templates != self.templates {
            return Err(Error::data(
                "the featurizer was built under other templates than this part's",
            ));
        }
        let task = TaggingTask::new(&featurizer.0, &self.train)?;
        let dim = featurizer.0.layout().total();
        Ok(CompiledPart {
            task,
            dim,
            scratch: Mutex::new(Vec::new()),
            id: NEXT_PART.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        })
    }
}

impl TagCounts {
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(self).map_err(|e| Error::data(format!("expansion counts: {e}")))
    }

    /// Counts from [`TagCounts::to_bytes`], checked.
    pub fn from_bytes(bytes: &[u8]) -> Result<TagCounts> {
        let c: TagCounts = serde_json::from_slice(bytes)
            .map_err(|e| Error::data(format!("expansion counts: {e}")))?;
        c.validate()
            .map_err(|e| Error::data(format!("expansion counts: {e}")))?;
        Ok(c)
    }
}

/// The featurizer of all the parts (their labels and kept expansions).
#[derive(Debug, Clone, PartialEq)]
pub struct PartFeaturizer(TagFeaturizer);

impl From<TagFeaturizer> for PartFeaturizer {
    fn from(f: TagFeaturizer) -> Self {
        PartFeaturizer(f)
    }
}

impl TagCounts {
    /// The featurizer of the counted sentences (expansions seen at least `min_count`
    /// times), as one process builds it.
    pub fn part_featurizer(self, min_count: usize) -> Result<PartFeaturizer> {
        Ok(PartFeaturizer(self.featurizer(min_count)?))
    }
}

impl PartFeaturizer {
    /// The number of weights of a model over these features.
    pub fn dim(&self) -> usize {
        self.0.layout().total()
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(&self.0).map_err(|e| Error::data(format!("featurizer: {e}")))
    }

    /// A featurizer from [`PartFeaturizer::to_bytes`], checked.
    pub fn from_bytes(bytes: &[u8]) -> Result<PartFeaturizer> {
        let f: TagFeaturizer =
            serde_json::from_slice(bytes).map_err(|e| Error::data(format!("featurizer: {e}")))?;
        f.validate()
            .map_err(|e| Error::data(format!("featurizer: {e}")))?;
        Ok(PartFeaturizer(f))
    }
}

/// A part's sentences featurized, kept where the part is, separated at each point of the
/// loop.
#[derive(Debug)]
pub struct CompiledPart {
    task: TaggingTask,
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
        crate::task::structured::explicit_reads(&self.task, &mut reads);
        reads
    }

    /// The part's unscaled separation sums at the weights `w`, reached by the loop's steps
    /// of fingerprint `hash`.
    pub(crate) fn separate(&self, w: &[f64], hash: u64) -> Result<PartSums> {
        use crate::task::structured::StructuredTask;
        if w.len() != self.dim {
            return Err(Error::shape("weights", self.dim, w.len()));
        }
        let mut scratch = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        scratch.resize(self.dim, 0.0);
        let n = self.task.n_examples();
        let sums = cutting_plane::separation_sums(&self.task, w, 0..n, &mut scratch, &())?
            .ok_or_else(|| Error::data("the separation stopped"))?;
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
    hash: u64,
    /// The parts whose weights it holds ([`CompiledPart::id`]; `None`: it holds all the
    /// weights).
    serves: Option<std::collections::HashSet<u64>>,
}

impl PointReplica {
    /// The loop before its first separation (at zero), over `featurizer`'s weights: all of
    /// them, or with `parts` only those the parts read (the point is the loop's there, 0
    /// elsewhere).
    pub fn new(
        featurizer: &PartFeaturizer,
        separation_step: f64,
        parts: Option<&[&CompiledPart]>,
    ) -> Result<PointReplica> {
        let layout = featurizer.0.layout();
        let replica = match parts {
            None => Replica::new(layout, separation_step),
            Some(p) => Replica::reading(layout, separation_step, reads_of(featurizer, p)?)?,
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

    /// The replica of the loop at `state`, over `featurizer`'s weights (all of them, or
    /// with `parts` only those the parts read).
    pub fn from_state(
        featurizer: &PartFeaturizer,
        state: LoopState,
        parts: Option<&[&CompiledPart]>,
    ) -> Result<PointReplica> {
        let cuts = state
            .cuts
            .into_iter()
            .map(LoopCut::checked)
            .collect::<Result<Vec<_>>>()?;
        let replica = Replica::from_state(
            featurizer.0.layout(),
            ReplicaState {
                step: state.separation_step,
                cuts,
                alpha: state.alpha,
                factors: state.factors,
                best: state.best,
                steps: state.steps,
            },
            parts.map(|p| reads_of(featurizer, p)).transpose()?,
        )?;
        Ok(PointReplica {
            replica,
            hash: state.hash,
            serves: parts.map(|p| p.iter().map(|c| c.id).collect()),
        })
    }
}

/// The weights any of `parts` reads (an error for a part compiled over other weights
/// than `featurizer`'s).
fn reads_of(featurizer: &PartFeaturizer, parts: &[&CompiledPart]) -> Result<Vec<bool>> {
    let mut reads = vec![false; featurizer.dim()];
    for part in parts {
        if part.dim != reads.len() {
            return Err(Error::shape("a part's weights", reads.len(), part.dim));
        }
        crate::task::structured::explicit_reads(&part.task, &mut reads);
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
const STEPS_START: u64 = 0xcbf2_9ce4_8422_2325;

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
struct PartsSeparator<'f> {
    separate: &'f mut SeparateParts<'f>,
    n: usize,
    scratch: Vec<f64>,
    /// The loop's step since the last separation.
    pending: Option<LoopStep>,
    /// The fingerprint of the loop's steps so far ([`step_hash`]).
    chain: u64,
    index: usize,
    separation_step: f64,
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
        let dim = self.scratch.len();
        let sums = parts
            .into_iter()
            .map(|p| p.checked(dim))
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(CutSums::cut(&sums, self.n, &mut self.scratch)))
    }
}

/// Multi-template learning (the `mtl` learner of `spec`, a sequence spec) over `n`
/// sentences held in parts: `featurizer` is the parts' merged featurizer, `separate` gives
/// every part's [`PartSums`] at a [`Point`] (`None`: stop). The model is the one
/// [`fit`](crate::estimator::fit()) trains on all the sentences in one process.
pub fn fit_parts<'f>(
    featurizer: PartFeaturizer,
    n: usize,
    spec: &LearnerSpec,
    separate: &'f mut SeparateParts<'f>,
    observer: &dyn Observer,
) -> Result<Fitted> {
    let spec = spec.check()?;
    if spec.task != Task::Sequence {
        return Err(Error::unsupported(format!(
            "a tagger's parts train a sequence spec, not a {} one",
            spec.task
        )));
    }
    if n == 0 {
        return Err(Error::data("the training set has no sentences"));
    }
    let (learner, lambda) = spec
        .learner
        .family()
        .tagger(spec.learner.kind(), &spec, n)?;
    let TaggerLearner::CuttingPlane { params, q } = learner else {
        return Err(Error::unsupported(format!(
            "the {} learner trains on all the sentences in one process; over parts, the \
             cutting plane (learner mtl) does",
            spec.learner.kind()
        )));
    };
    params.validate()?;
    let min_count = featurizer.0.min_count;
    let examples = Examples {
        n,
        groups: featurizer.0.groups(),
    };
    let separation_step = params
        .separation_step
        .unwrap_or(cutting_plane::SEPARATION_STEP);
    let mut separator = PartsSeparator {
        separate,
        n,
        scratch: vec![0.0; examples.layout().total()],
        pending: None,
        chain: STEPS_START,
        index: 0,
        separation_step,
    };
    let fit = fit_cutting_plane(
        featurizer.0,
        &examples,
        (&params, q),
        &mut separator,
        observer,
    )?;
    Ok(scored_tagging(fit, min_count, &spec, lambda).fitted)
}

#[cfg(test)]
mod tests;
