//! Training the online proximal learner (Alg. 1) on a vector data set: standardization,
//! kernel fitting on the training part, Gram matrices, the run, and the compact model
//! ([`super::compact`]).

use crate::data::standardize::Standardizer;
use crate::data::{Matrix, TableRef};
use crate::error::{Error, Result};
use crate::kernel::{fit_all, Gram, KernelSpec, MemoryLimit};
use crate::run::{Control, Observer, RunInfo};
use crate::solver::online::compact::{compact, GroupNorms};
use crate::solver::online::vector_model::{KernelMachine, OnlineTraining};
use crate::solver::online::{EpochReport, OnlineLearner, OnlineParams};
use crate::task::targets::online_targets;
use crate::task::vector::check_loss;
use crate::task::{Loss, TaskKind, VectorTask};
use rayon::prelude::*;

/// Everything that defines a training run on vector data.
#[derive(Debug, Clone)]
pub struct VectorFitConfig {
    pub task: TaskKind,
    pub loss: Loss,
    pub kernels: Vec<KernelSpec>,
    pub params: OnlineParams,
    /// An unregularized bias per output (on by default).
    pub bias: bool,
    /// Standardize features on the training data (and regression targets).
    pub standardize: bool,
    pub memory: MemoryLimit,
}

/// Trains on `train`; `observer` sees each epoch and may stop the run (the model reached so
/// far is returned, with status [`crate::run::RunStatus::Cancelled`]).
pub fn fit_vector(
    train: TableRef<'_>,
    cfg: &VectorFitConfig,
    observer: &(impl Observer + ?Sized),
) -> Result<(KernelMachine, RunInfo)> {
    check_loss(cfg.task, cfg.loss)?;
    if train.is_empty() {
        return Err(Error::data("the training set is empty"));
    }
    if cfg.kernels.is_empty() {
        return Err(Error::param("kernels", "none", "at least one kernel"));
    }
    let (classes, targets, target_scaler) = online_targets(cfg.task, train.targets())?;
    // The learner needs its own (standardized) copy of the rows: the support points.
    let mut x = train.x().to_matrix();
    let standardizer = cfg.standardize.then(|| Standardizer::fit(&x));
    if let Some(s) = &standardizer {
        for i in 0..x.rows {
            s.apply_row(x.row_mut(i));
        }
    }
    let kernels = fit_all(&cfg.kernels, &x, train.feature_names(), cfg.params.seed)?;
    let n = x.rows;
    cfg.memory.check(
        kernels.len() * n * n * 8,
        &format!("{} training Gram matrices of {n} x {n}", kernels.len()),
    )?;
    // A request to stop that arrives while the Gram matrices are computed leaves the rest
    // uncomputed (zeros, never read: the learner stops at its first poll with a model of
    // zero weights), so a stopped run does not wait for every kernel.
    let grams: Vec<Gram> = kernels
        .par_iter()
        .map(|k| {
            if observer.should_stop() {
                Ok(Gram::Dense(Matrix::zeros(n, n)))
            } else {
                k.gram_sym(&x, &cfg.memory)
            }
        })
        .collect::<Result<_>>()?;
    let n_outputs = cfg.loss.n_outputs(classes.len());
    let task = VectorTask::new(cfg.loss, targets, n_outputs, cfg.bias);
    let learner = OnlineLearner::new(&task, &grams, cfg.params.clone())?;
    let gamma = learner.gamma();
    let mut last: Option<EpochReport> = None;
    let (state, info) = learner.run(observer, &mut |rep, _| {
        last = Some(rep.clone());
        Control::Continue
    });
    let mut compact = compact(
        &state,
        &grams,
        &cfg.params.reg,
        cfg.params.averaging,
        GroupNorms::PointByPoint,
    )?;
    let bias = if cfg.bias {
        compact.explicit.remove(0)
    } else {
        vec![0.0; n_outputs]
    };
    let p = &cfg.params;
    let training = OnlineTraining {
        reg: p.reg.clone(),
        lambda: p.lambda,
        c: 1.0 / (p.lambda * n as f64),
        eta0: p.eta0,
        schedule: p.schedule,
        epochs: p.epochs,
        seed: p.seed,
        averaging: p.averaging,
        projection_radius: gamma,
        bias: cfg.bias,
        n_train: n,
        final_objective: last.as_ref().map(|r| r.objective),
    };
    Ok((
        KernelMachine {
            task: cfg.task,
            loss: cfg.loss,
            classes,
            feature_names: train.feature_names().to_vec(),
            standardizer,
            target_scaler,
            kernels,
            support: x.select_rows(&compact.support_rows),
            coef: compact.coef,
            bias,
            n_outputs,
            group_norms: compact.group_norms,
            weights: compact.weights,
            training,
            selection: None,
        },
        info,
    ))
}
