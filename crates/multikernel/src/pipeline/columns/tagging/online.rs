//! The online learner of a tagger over epochs: SPOM's proximal steps or AdaGrad's, the
//! averaged iterate of each epoch scored on the development sentences, the best kept.

use super::model::TaggerModel;
use super::TaggerSpec;
use crate::data::columns::ColumnSentence;
use crate::error::{Error, Result};
use crate::run::{Control, Observer, RunInfo, RunRecorder, RunStatus, StepUnit};
use crate::solver::adagrad::AdagradLearner;
use crate::solver::batch;
use crate::solver::online::engine::OnlineLearner;
use crate::solver::online::params::{OnlineParams, OnlineSteps, StepSchedule};
use crate::task::structured::{StructLoss, StructuredOnline};
use crate::task::tagging::{TagFeaturizer, TaggingTask};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// The online learner of a tagger: SPOM with one step size for every coordinate (Alg. 1,
/// the proximal steps of the group regularizers), or per-coordinate AdaGrad steps (l2).
enum Spom<'a> {
    Prox(OnlineLearner<'a, StructuredOnline<'a, TaggingTask>>),
    AdaGrad(AdagradLearner<'a, TaggingTask>),
}

impl Spom<'_> {
    fn epoch_observed(&mut self, observer: &dyn Observer) -> Result<Control> {
        match self {
            Spom::Prox(l) => Ok(l.epoch_observed(observer)),
            Spom::AdaGrad(l) => l.epoch_observed(observer),
        }
    }

    fn restart_average(&mut self) {
        match self {
            Spom::Prox(l) => l.restart_average(),
            Spom::AdaGrad(l) => l.restart_average(),
        }
    }

    /// The weights in the global layout (averaged when asked).
    fn weights(&mut self, averaged: bool) -> Vec<f64> {
        match self {
            Spom::Prox(l) => l.state().explicit_values(averaged).concat(),
            Spom::AdaGrad(l) => l.weights(averaged),
        }
    }

    /// The learner at an epoch boundary, for a checkpoint (SPOM's state by reference).
    fn snapshot(&mut self) -> SpomSnapshotRef<'_> {
        match self {
            Spom::Prox(l) => SpomSnapshotRef::Prox(l.snapshot()),
            Spom::AdaGrad(l) => SpomSnapshotRef::AdaGrad(l.snapshot()),
        }
    }

    /// Puts the learner where [`Self::snapshot`] found one of the same kind.
    fn restore(&mut self, snap: SpomSnapshot) -> Result<()> {
        match (self, snap) {
            (Spom::Prox(l), SpomSnapshot::Prox(v)) => l.restore(v),
            (Spom::AdaGrad(l), SpomSnapshot::AdaGrad(a)) => l.restore(a),
            _ => Err(Error::data(
                "the checkpoint holds the state of the other step schedule (adagrad or not)",
            )),
        }
    }
}

/// The learner family name of the template tagger's online checkpoints.
pub(crate) const CHECKPOINT_FAMILY: &str = "tagger";

/// A tagger's online learner at an epoch boundary, as saved.
#[derive(Serialize)]
enum SpomSnapshotRef<'a> {
    Prox(crate::solver::online::engine::SnapshotRef<'a>),
    AdaGrad(crate::solver::adagrad::AdagradSnapshot),
}

/// A [`SpomSnapshotRef`] read back.
#[derive(Deserialize)]
enum SpomSnapshot {
    Prox(crate::solver::online::engine::EngineSnapshot),
    AdaGrad(crate::solver::adagrad::AdagradSnapshot),
}

/// [`online_epochs`] at an epoch boundary (a checkpoint): the learner, the epochs done, the
/// best epoch so far, the development scores and the tracked objectives (NaN as `None`).
#[derive(Serialize, Deserialize)]
struct SavedEpochs<L> {
    learner: L,
    epoch: usize,
    best: Option<(f64, usize, Vec<f64>)>,
    dev_scores: Vec<f64>,
    objectives: Vec<Option<f64>>,
    kept_objective: Option<f64>,
}

/// What [`online_epochs`] found.
pub(super) struct OnlineRun {
    /// The kept epoch and its (averaged) weights; epoch 0 and the weights reached when
    /// stopped before the first epoch ended.
    pub(super) best: (usize, Vec<f64>),
    pub(super) best_score: f64,
    pub(super) dev_scores: Vec<f64>,
    pub(super) objectives: Vec<f64>,
    pub(super) kept_objective: f64,
    pub(super) eval_seconds: f64,
    pub(super) info: RunInfo,
}

/// SPOM for `params.epochs` epochs on the tagging task, keeping the epoch whose weights tag
/// `dev` best (the last without `dev`); with `track`, the training objective of each epoch's
/// weights.
#[allow(clippy::too_many_arguments)]
pub(super) fn online_epochs(
    task: &TaggingTask,
    featurizer: &TagFeaturizer,
    loss: StructLoss,
    params: &OnlineParams,
    spec: &TaggerSpec,
    track: bool,
    dev: Option<&[ColumnSentence]>,
    observer: &dyn Observer,
) -> Result<OnlineRun> {
    let adapter = StructuredOnline::new(task, loss)?;
    let one = OnlineParams {
        steps: OnlineSteps {
            epochs: 1,
            ..params.steps
        },
        ..params.clone()
    };
    let mut learner = if params.steps.schedule == StepSchedule::AdaGrad {
        Spom::AdaGrad(AdagradLearner::new(task, loss, &one)?)
    } else {
        Spom::Prox(OnlineLearner::new(&adapter, &[], one)?)
    };
    let mut rec = RunRecorder::new(StepUnit::Epoch, Some(params.steps.epochs as u64));
    let mut best: Option<(f64, usize, Vec<f64>)> = None;
    let mut dev_scores = Vec::new();
    let mut status = RunStatus::Completed;
    let mut eval_seconds = 0.0;
    let mut objectives = Vec::new();
    let mut kept_objective = f64::NAN;
    let ck = observer.checkpoints();
    let mut first = 1;
    if let Some(bytes) = ck
        .map(|c| c.resume(CHECKPOINT_FAMILY))
        .transpose()?
        .flatten()
    {
        let saved: SavedEpochs<SpomSnapshot> =
            crate::checkpoint::decode(CHECKPOINT_FAMILY, &bytes)?;
        if saved.epoch > params.steps.epochs {
            return Err(Error::data(format!(
                "the checkpoint is after epoch {}, beyond the run's {} epochs",
                saved.epoch, params.steps.epochs
            )));
        }
        learner.restore(saved.learner)?;
        if let Some(c) = ck {
            c.resumed_at(saved.epoch as u64)?;
        }
        first = saved.epoch + 1;
        best = saved.best;
        dev_scores = saved.dev_scores;
        objectives = saved
            .objectives
            .iter()
            .map(|o| o.unwrap_or(f64::NAN))
            .collect();
        kept_objective = saved.kept_objective.unwrap_or(f64::NAN);
        rec.set_steps(saved.epoch as u64);
    }
    for epoch in first..=params.steps.epochs {
        if learner.epoch_observed(observer)? == Control::Stop {
            status = RunStatus::Cancelled;
            break;
        }
        if epoch == spec.average_from {
            learner.restart_average();
        }
        let e = Instant::now();
        let w = learner.weights(params.steps.averaging);
        if track {
            objectives.push(online_objective(task, loss, params, &w)?);
        }
        let score = match dev {
            Some(d) => {
                let m = TaggerModel {
                    selection: None,
                    featurizer: featurizer.clone(),
                    weights: w.clone(),
                    learner: String::new(),
                    template_weights: Vec::new(),
                    loss: Some(loss),
                };
                let s = m.dev_score_with(d, &spec.memory)?;
                dev_scores.push(s);
                s
            }
            None => epoch as f64,
        };
        if best.as_ref().is_none_or(|(b, _, _)| score > *b) {
            best = Some((score, epoch, w));
            kept_objective = objectives.last().copied().unwrap_or(f64::NAN);
        }
        eval_seconds += e.elapsed().as_secs_f64();
        if let Some(c) = ck.filter(|c| epoch < params.steps.epochs && c.due(epoch as u64)) {
            let finite = |v: f64| v.is_finite().then_some(v);
            let saved = SavedEpochs {
                learner: learner.snapshot(),
                epoch,
                best: best.clone(),
                dev_scores: dev_scores.clone(),
                objectives: objectives.iter().map(|&o| finite(o)).collect(),
                kept_objective: finite(kept_objective),
            };
            c.save(
                CHECKPOINT_FAMILY,
                epoch as u64,
                &crate::checkpoint::encode(&saved)?,
            )?;
        }
        if rec.step(None, observer) == Control::Stop {
            if epoch < params.steps.epochs {
                status = RunStatus::Cancelled;
            }
            break;
        }
    }
    // Stopped before the first epoch ended: the weights reached so far, as epoch 0 (the
    // run contract: a stop returns the model reached, with status cancelled).
    let best = best.unwrap_or_else(|| (f64::NAN, 0, learner.weights(params.steps.averaging)));
    let best_score = best.0;
    Ok(OnlineRun {
        best: (best.1, best.2),
        best_score,
        dev_scores,
        objectives,
        kept_objective,
        eval_seconds,
        info: rec.finish(status),
    })
}

/// The online learner's objective `lambda Omega(w) + (1/N) sum L` at explicit weights `w`
/// (global layout): the batch objective of [`batch::objective`] for the l2 regularizer, the
/// group-norm regularizer's value otherwise.
fn online_objective(
    task: &TaggingTask,
    loss: StructLoss,
    params: &OnlineParams,
    w: &[f64],
) -> Result<f64> {
    let data = batch::objective(task, loss, 0.0, w)?;
    let norms = crate::task::structured::explicit_layout(task).group_norms(w);
    let omega = crate::solver::online::regularizer_value(&params.reg, &norms);
    Ok(params.lambda * omega + data)
}
