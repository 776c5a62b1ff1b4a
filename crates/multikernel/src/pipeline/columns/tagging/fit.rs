//! [`fit_tagger`]: a tagger's fit dispatched to its learner (the online learner, the
//! cutting plane, L-BFGS), and what a fit measured ([`TaggerFit`]).

use super::model::TaggerModel;
use super::online::online_epochs;
use super::{LabelMemory, TaggerLearner, TaggerSpec};
use crate::data::columns::ColumnSentence;
use crate::error::{Error, Result};
use crate::run::{Control, Observer, RunInfo, RunRecorder, StepUnit};
use crate::solver::batch::{self, LbfgsParams};
use crate::solver::cutting_plane::{self, CuttingPlaneParams};
use crate::solver::online::params::{OnlineParams, OnlineSteps};
use crate::task::structured::StructLoss;
use crate::task::tagging::{TagFeaturizer, TaggingTask, TemplateFile};
use std::time::Instant;

/// A trained tagger with what training measured.
#[derive(Debug, Clone)]
pub struct TaggerFit {
    pub model: TaggerModel,
    /// Status, steps (epochs or cuts), seconds.
    pub run: RunInfo,
    /// The epoch whose averaged weights were kept (online; 0 for the cutting plane).
    pub best_epoch: usize,
    /// The development score (percent) after each epoch (online) or at the end (cutting
    /// plane); empty without development sentences.
    pub dev_scores: Vec<f64>,
    /// Seconds to build the featurizer and the features of every sentence.
    pub index_seconds: f64,
    /// Seconds of training proper (decoding, updates, working-set problems).
    pub train_seconds: f64,
    /// Cutting plane: cuts in the working set and `J(w)` at the end.
    pub cuts: usize,
    /// The cutting plane's `J(w)`; L-BFGS's `lambda/2 ||w||^2 + (1/N) sum L`; online, with
    /// `track_objective`, the kept epoch's training objective (NaN otherwise).
    pub objective: f64,
    /// Online with `track_objective`: the training objective `lambda/2 ||w||^2 + (1/N) sum L`
    /// (l2 regularizer; `lambda Omega + ...` for the others) of the weights of each epoch
    /// (averaged when the run averages); L-BFGS: its final objective.
    pub objectives: Vec<f64>,
    /// Cutting plane: seconds in loss-augmented decoding and in the working-set problem.
    pub decode_seconds: f64,
    pub master_seconds: f64,
    /// Online: the initial step size trained with (the calibrated one when calibrating);
    /// NaN for the batch learners.
    pub eta0: f64,
    /// Online with [`TaggerSpec::calibrate`]: each `eta0` tried and its score (development
    /// accuracy, or minus the training objective).
    pub calibration: Vec<(f64, f64)>,
}

/// Trains a tagger on `train` (labels in the last column) with `templates`; with `dev`,
/// keeps the online epoch that tags it best. `observer` sees each epoch (or cut) and may
/// stop the run (the best weights so far are returned: the weights reached when no epoch ended).
pub fn fit_tagger(
    train: &[ColumnSentence],
    dev: Option<&[ColumnSentence]>,
    templates: TemplateFile,
    spec: &TaggerSpec,
    observer: &dyn Observer,
) -> Result<TaggerFit> {
    if train.is_empty() {
        return Err(Error::data("no training sentences"));
    }
    match &spec.learner {
        TaggerLearner::Online { params, .. } => {
            params.validate()?;
            if let Some(c) = &spec.calibrate {
                c.validate()?;
            }
        }
        TaggerLearner::CuttingPlane { params, q } => {
            params.validate()?;
            if !(q.is_finite() && *q >= 1.0) {
                return Err(Error::param("q", q, "a finite block norm q >= 1"));
            }
        }
        TaggerLearner::Lbfgs { params } => params.validate()?,
    }
    let start = Instant::now();
    let featurizer = TagFeaturizer::fit(templates, train, spec.min_count)?;
    let dev = dev.filter(|d| !d.is_empty());
    if let Some(d) = dev {
        featurizer.check_sentences(d)?;
    }
    // Before the label-pair parts and the learner's vectors are allocated.
    LabelMemory::training(&featurizer, train, dev, spec)
        .check(&spec.memory, "training a tagger")?;
    let task = TaggingTask::new(&featurizer, train)?;
    let index_seconds = start.elapsed().as_secs_f64();
    let t = Instant::now();
    match &spec.learner {
        TaggerLearner::Online { params, loss } => {
            let mut params = params.clone();
            let mut calibration = Vec::new();
            if let Some(cal) = &spec.calibrate {
                let mut best: Option<(f64, f64)> = None;
                for &eta0 in &cal.eta0_grid {
                    let short = OnlineParams {
                        steps: OnlineSteps {
                            eta0,
                            epochs: cal.epochs,
                            ..params.steps
                        },
                        ..params.clone()
                    };
                    let track = dev.is_none();
                    let run =
                        online_epochs(&task, &featurizer, *loss, &short, spec, track, dev, &())?;
                    let score = match dev {
                        Some(_) => run.best_score,
                        None => -run.kept_objective,
                    };
                    calibration.push((eta0, score));
                    if best.is_none_or(|(b, _)| score > b) {
                        best = Some((score, eta0));
                    }
                }
                params.steps.eta0 = best.map_or(params.steps.eta0, |b| b.1);
            }
            let run = online_epochs(
                &task,
                &featurizer,
                *loss,
                &params,
                spec,
                spec.track_objective,
                dev,
                observer,
            )?;
            let (best_epoch, weights) = run.best;
            Ok(TaggerFit {
                model: TaggerModel {
                    selection: None,
                    featurizer,
                    weights,
                    template_weights: Vec::new(),
                    loss: Some(*loss),
                    learner: spom_description(
                        *loss,
                        &params,
                        best_epoch,
                        !calibration.is_empty(),
                        "",
                    ),
                },
                run: run.info,
                best_epoch,
                dev_scores: run.dev_scores,
                index_seconds,
                train_seconds: t.elapsed().as_secs_f64() - run.eval_seconds,
                cuts: 0,
                objective: run.kept_objective,
                objectives: run.objectives,
                decode_seconds: 0.0,
                master_seconds: 0.0,
                eta0: params.steps.eta0,
                calibration,
            })
        }
        TaggerLearner::Lbfgs { params } => {
            let dim = crate::task::structured::explicit_layout(&task).total();
            let mut eval = |w: &[f64], g: &mut [f64]| -> Result<f64> {
                batch::objective::objective_grad(&task, StructLoss::Crf, params.lambda, w, Some(g))
            };
            let mut fit = fit_batch_crf(featurizer, dim, &mut eval, params, observer)?;
            if let Some(d) = dev {
                fit.dev_scores = vec![fit.model.dev_score_with(d, &spec.memory)?];
            }
            fit.index_seconds = index_seconds;
            Ok(fit)
        }
        TaggerLearner::CuttingPlane { params: p, q } => {
            let examples = cutting_plane::Examples::of(&task)?;
            let mut separator =
                cutting_plane::LocalSeparator::new(&task, examples.layout().total());
            let mut fit =
                fit_cutting_plane(featurizer, &examples, (p, *q), &mut separator, observer)?;
            if let Some(d) = dev {
                fit.dev_scores = vec![fit.model.dev_score_with(d, &spec.memory)?];
            }
            fit.index_seconds = index_seconds;
            Ok(fit)
        }
    }
}

/// The batch CRF by L-BFGS from zero over the `dim` weights of `featurizer`, the objective
/// and its gradient evaluated by `eval` (in this process, or summed over parts of the
/// sentences elsewhere: `estimator::tagger::parts`), each iteration reported to `observer`
/// with its objective (which may stop the run at the iterate reached). The fit's index
/// seconds and development scores are left for the caller.
pub(crate) fn fit_batch_crf(
    featurizer: TagFeaturizer,
    dim: usize,
    eval: &mut batch::Objective<'_>,
    params: &LbfgsParams,
    observer: &dyn Observer,
) -> Result<TaggerFit> {
    let mut rec = RunRecorder::new(StepUnit::Iteration, Some(params.max_iter));
    let fit = batch::minimize_from_zero(dim, eval, params, &mut |_, value| {
        rec.step(Some(value), observer) == Control::Stop
    })?;
    let run = rec.finish(fit.status);
    let model = TaggerModel {
        selection: None,
        featurizer,
        weights: fit.weights,
        template_weights: Vec::new(),
        loss: Some(StructLoss::Crf),
        learner: format!(
            "L-BFGS l2 CRF, lambda {:e}, {} iterations ({}), gradient norm {:.2e}",
            params.lambda, fit.iterations, fit.stop, fit.grad_norm
        ),
    };
    Ok(TaggerFit {
        model,
        run,
        best_epoch: 0,
        dev_scores: Vec::new(),
        index_seconds: 0.0,
        train_seconds: fit.seconds,
        cuts: 0,
        objective: fit.objective,
        objectives: vec![fit.objective],
        decode_seconds: 0.0,
        master_seconds: 0.0,
        eta0: f64::NAN,
        calibration: Vec::new(),
    })
}

/// How an online tagger was trained (the model's `learner`): the loss, the regularizer and
/// its constant, the steps, the averaged epoch kept, then `more` (e.g. how parts were mixed).
pub(crate) fn spom_description(
    loss: StructLoss,
    params: &OnlineParams,
    best_epoch: usize,
    calibrated: bool,
    more: &str,
) -> String {
    format!(
        "SPOM, {} loss, reg {}, lambda {:e}, {} eta0 {}{}, averaged epoch {best_epoch}{}{more}",
        loss,
        params.reg,
        params.lambda,
        params.steps.schedule,
        params.steps.eta0,
        if calibrated { " (calibrated)" } else { "" },
        if params.steps.shards > 1 {
            format!(", {} shards", params.steps.shards)
        } else if params.steps.batch > 1 {
            format!(", batch {}", params.steps.batch)
        } else {
            String::new()
        },
    )
}

/// Multi-template learning by the cutting plane (mao-tsang Alg. 1 with the squared block
/// norm `q`) over `examples`, the sentences featurized by `featurizer` and decoded by
/// `separator` (in this process, or parts of them elsewhere: `estimator::tagger::parts`).
/// The fit's index seconds and development scores are left for the caller.
pub(crate) fn fit_cutting_plane(
    featurizer: TagFeaturizer,
    examples: &cutting_plane::Examples,
    (p, q): (&CuttingPlaneParams, f64),
    separator: &mut dyn cutting_plane::Separator,
    observer: &dyn Observer,
) -> Result<TaggerFit> {
    let t = Instant::now();
    let (cp, run, mu) = cutting_plane::fit_block_norm_with(examples, p, q, separator, observer)?;
    let train_seconds = t.elapsed().as_secs_f64();
    let model = TaggerModel {
        selection: None,
        featurizer,
        weights: cp.weights,
        template_weights: mu,
        loss: Some(StructLoss::Hinge),
        learner: format!(
            "cutting plane, q {q}, C {:e}, epsilon {:e}, {} cuts",
            p.c, p.epsilon, cp.cuts
        ),
    };
    Ok(TaggerFit {
        model,
        run,
        best_epoch: 0,
        dev_scores: Vec::new(),
        index_seconds: 0.0,
        train_seconds,
        cuts: cp.cuts,
        objective: cp.objective,
        objectives: Vec::new(),
        decode_seconds: cp.decode_seconds,
        master_seconds: cp.master_seconds,
        eta0: f64::NAN,
        calibration: Vec::new(),
    })
}
