//! Incremental training of the online learner (Alg. 1 of martins2011) over explicit feature
//! groups: a fit that goes on chunk by chunk (`partial_fit`), for tables that do not fit in
//! memory, arrive over time, or are cut in shards (iterative parameter mixing).
//!
//! Every kernel must have an explicit map (a linear kernel, or `approx=`:
//! [`crate::kernel::feature_map`]), so the fit's memory is its parameters (`sum_g D_g x
//! outputs`) plus the chunk in hand, whatever the number of rows seen. What a whole-table
//! fit learns from the table before its first round is taken here from the first chunk, or
//! given: the classes, the features' standardization, the regression targets' scale and the
//! kernels' data-dependent parameters (the Gaussian width by the median heuristic, a trace
//! normalization). Each [`IncrementalFit::partial_fit`] runs one round per row, in the
//! chunk's order ([`BlockLearner`]).
//!
//! [`IncrementalFit::mix`] averages fits that started from the same one and ran on
//! different shards: iterative parameter mixing (McDonald, Hall & Mann 2010), followed by
//! the proximal step of the regularizer at the current step size, which gives the mixed
//! parameters back the group sparsity the average may have lost.

use crate::data::standardize::{Standardizer, TargetScaler};
use crate::data::{Matrix, TableRef, Targets};
use crate::error::{Error, Result};
use crate::kernel::{fit_all, FeatureMap, FittedKernel};
use crate::params::ScaledVec;
use crate::pipeline::table::vector::{assemble_machine, MachineParts, VectorFitConfig};
use crate::pipeline::table::vector_model::{KernelMachine, OnlineTraining};
use crate::run::Observer;
use crate::solver::online::blocks::{
    Block, BlockLearner, PassReport, TaskShape, DEFAULT_BLOCK_ROWS,
};
use crate::solver::online::compact::{compact, GroupNorms};
use crate::solver::online::{OnlineParams, OnlineState};
use crate::task::targets::check_targets;
use crate::task::vector::check_loss;
use crate::task::{Loss, TaskKind};
use serde::{Deserialize, Serialize};

/// What a fit may be given instead of taking it from its first chunk.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Given {
    /// The class labels (all of them: a first chunk may lack some).
    pub classes: Option<Vec<String>>,
    /// The features' standardization (e.g. from a first pass over a file).
    pub standardizer: Option<Standardizer>,
    /// The regression targets' scale.
    pub target_scaler: Option<TargetScaler>,
}

/// An incremental fit (module docs): the setup fixed at the first chunk and the state of
/// Alg. 1. It serializes (JSON through serde), so an estimator holding one pickles and a
/// fit can be shipped to a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IncrementalFit {
    pub task: TaskKind,
    pub loss: Loss,
    pub classes: Vec<String>,
    pub feature_names: Vec<String>,
    pub standardizer: Option<Standardizer>,
    pub target_scaler: Option<TargetScaler>,
    /// Fitted on the first chunk; each has an explicit map.
    pub kernels: Vec<FittedKernel>,
    pub params: OnlineParams,
    pub bias: bool,
    pub n_outputs: usize,
    /// The projection radius (from the first chunk's targets), if the params project.
    pub gamma: Option<f64>,
    pub state: OnlineState,
    /// Rows seen over all calls (rounds run).
    pub rows_seen: u64,
    /// `rows_seen` when the fit was last mixed ([`IncrementalFit::mix`]), so that the next
    /// mix counts each worker's new rows once.
    #[serde(default)]
    pub rows_at_mix: u64,
    /// Passes over chunks so far ([`IncrementalFit::partial_fit`] calls).
    pub chunks_seen: u64,
    /// The rows of one pass over the data, the `n` of `lambda = 1 / (C n)`, when the caller
    /// knows it (a file's row count; Python's `n_rows`): the model then records `n` training
    /// rows, `C = 1 / (lambda n)` and `rows_seen / n` epochs. 0: unknown, the model records
    /// the rows seen and one epoch per call.
    #[serde(default)]
    pub pass_rows: u64,
    /// The average progressive loss of the last call.
    pub last_loss: Option<f64>,
}

impl IncrementalFit {
    /// Sets a fit up on its first chunk (which it does not train on: call
    /// [`IncrementalFit::partial_fit`] with it next). Fails on a loss that does not fit the
    /// task, a kernel without an explicit map, or classes the task cannot take.
    pub fn start(cfg: &VectorFitConfig, first: TableRef<'_>, given: Given) -> Result<Self> {
        check_loss(cfg.task, cfg.loss)?;
        if first.is_empty() {
            return Err(Error::data("the first chunk is empty"));
        }
        if cfg.kernels.is_empty() {
            return Err(Error::param("kernels", "none", "at least one kernel"));
        }
        let classes = match (cfg.task, first.targets(), given.classes) {
            (TaskKind::Regression, Targets::Real(_), _) => Vec::new(),
            (_, Targets::Classes { .. }, Some(c)) => c,
            (_, Targets::Classes { classes, .. }, None) => classes.clone(),
            (_, t, _) => {
                check_targets(cfg.task, t)?;
                Vec::new()
            }
        };
        let named = Targets::Classes {
            classes: classes.clone(),
            y: Vec::new(),
        };
        if cfg.task != TaskKind::Regression {
            check_targets(cfg.task, &named).map_err(|e| {
                Error::data(format!(
                    "{e}; a first chunk may lack classes: give all of them (classes=)"
                ))
            })?;
        }
        let mut x = first.x().to_matrix();
        let standardizer = match (given.standardizer, cfg.standardize) {
            (Some(s), _) => {
                if s.n_features() != x.cols {
                    return Err(Error::shape(
                        "features of the given standardization",
                        x.cols,
                        s.n_features(),
                    ));
                }
                Some(s)
            }
            (None, true) => Some(Standardizer::fit(&x)),
            (None, false) => None,
        };
        if let Some(s) = &standardizer {
            for i in 0..x.rows {
                s.apply_row(x.row_mut(i));
            }
        }
        let target_scaler = match (cfg.task, first.targets()) {
            (TaskKind::Regression, Targets::Real(y)) => {
                Some(given.target_scaler.unwrap_or_else(|| TargetScaler::fit(y)))
            }
            _ => None,
        };
        let kernels = fit_all(&cfg.kernels, &x, first.feature_names(), cfg.params.seed)?;
        if let Some(k) = kernels.iter().find(|k| k.feature_map().is_none()) {
            return Err(Error::param(
                "kernels",
                &k.name,
                "kernels with an explicit map when training chunk by chunk: linear kernels or \
                 approximated ones (approx=rff for rbf, approx=sketch for poly, \
                 approx=nystrom for any kernel but bspline)",
            ));
        }
        let n_outputs = cfg.loss.n_outputs(classes.len());
        let mut fit = IncrementalFit {
            task: cfg.task,
            loss: cfg.loss,
            classes,
            feature_names: first.feature_names().to_vec(),
            standardizer,
            target_scaler,
            kernels,
            params: cfg.params.clone(),
            bias: cfg.bias,
            n_outputs,
            gamma: None,
            state: OnlineState {
                kernel: Vec::new(),
                explicit: Vec::new(),
                explicit_groups: Vec::new(),
                n_labels: n_outputs,
                t: 0,
                avg_start: 0,
            },
            rows_seen: 0,
            rows_at_mix: 0,
            chunks_seen: 0,
            pass_rows: 0,
            last_loss: None,
        };
        let targets = fit.online_targets(first.targets())?;
        fit.gamma = BlockLearner::projection_radius(fit.shape(), &fit.params, &targets);
        let maps = fit.maps();
        let learner = BlockLearner::new(
            &maps,
            fit.names(),
            fit.shape(),
            fit.params.clone(),
            fit.gamma,
        )?;
        fit.state = learner.into_state()?;
        Ok(fit)
    }

    fn shape(&self) -> TaskShape {
        TaskShape {
            loss: self.loss,
            n_outputs: self.n_outputs,
            bias: self.bias,
        }
    }

    fn names(&self) -> Vec<String> {
        self.kernels.iter().map(|k| k.name.clone()).collect()
    }

    /// The kernels' explicit maps.
    pub(crate) fn maps(&self) -> Vec<FeatureMap> {
        self.kernels
            .iter()
            .filter_map(FittedKernel::feature_map)
            .collect()
    }

    /// The targets as the online task wants them (`+-1`, class index, scaled value), class
    /// labels looked up by name among the fit's classes (an unknown label is an error).
    pub(crate) fn online_targets(&self, targets: &Targets) -> Result<Vec<f64>> {
        match (self.task, targets) {
            (TaskKind::Regression, Targets::Real(y)) => {
                let s = self.target_scaler.as_ref();
                Ok(y.iter().map(|&v| s.map_or(v, |s| s.apply(v))).collect())
            }
            (TaskKind::Regression, _) => Err(Error::data(
                "regression needs real targets, the chunk has class labels",
            )),
            (_, Targets::Classes { classes, y }) => {
                let index: Vec<Option<usize>> = classes
                    .iter()
                    .map(|c| self.classes.iter().position(|k| k == c))
                    .collect();
                y.iter()
                    .enumerate()
                    .map(|(i, &c)| match index.get(c).copied().flatten() {
                        Some(k) if self.task == TaskKind::Binary => {
                            Ok(if k == 1 { 1.0 } else { -1.0 })
                        }
                        Some(k) => Ok(k as f64),
                        None => Err(Error::data(format!(
                            "row {} of the chunk: class {} is not one of the fit's classes ({})",
                            i + 1,
                            classes.get(c).map_or("?", String::as_str),
                            self.classes.join(", ")
                        ))),
                    })
                    .collect()
            }
            (_, Targets::Real(_)) => Err(Error::data(
                "a classification task needs class labels, the chunk has real targets",
            )),
        }
    }

    /// A chunk as the learner takes it: standardized rows and online targets.
    pub(crate) fn block(&self, chunk: TableRef<'_>) -> Result<Block> {
        if chunk.n_features() != self.feature_names.len() {
            return Err(Error::shape(
                "features of a chunk",
                self.feature_names.len(),
                chunk.n_features(),
            ));
        }
        let mut x = chunk.x().to_matrix();
        if let Some(s) = &self.standardizer {
            for i in 0..x.rows {
                s.apply_row(x.row_mut(i));
            }
        }
        Ok(Block {
            x,
            targets: self.online_targets(chunk.targets())?,
        })
    }

    /// One round per row of `chunk`, in order (the caller shuffles). On an error the fit is
    /// left as it was.
    pub fn partial_fit(
        &mut self,
        chunk: TableRef<'_>,
        observer: &dyn Observer,
    ) -> Result<PassReport> {
        let block = self.block(chunk)?;
        let rows: Vec<usize> = (0..block.x.rows).collect();
        let blocks = rows.chunks(DEFAULT_BLOCK_ROWS).map(|idx| {
            Ok(Block {
                x: block.x.select_rows(idx),
                targets: idx.iter().map(|&i| block.targets[i]).collect(),
            })
        });
        self.train_blocks(blocks, observer)
    }

    /// One round per row of the blocks (standardized rows, online targets:
    /// [`IncrementalFit::block`]), in order; on an error the fit is left as it was.
    pub(crate) fn train_blocks<I>(
        &mut self,
        blocks: I,
        observer: &dyn Observer,
    ) -> Result<PassReport>
    where
        I: Iterator<Item = Result<Block>> + Send,
    {
        self.train_blocks_from(blocks, PassReport::default(), observer, &mut |_, _| Ok(()))
    }

    /// [`IncrementalFit::train_blocks`] as one call that `report` began (a resumed pass:
    /// `BlockLearner::train_blocks_from`): the fit's counters and last loss end as after
    /// the one uninterrupted call; `after_block` sees the state and the pass so far after
    /// each block.
    pub(crate) fn train_blocks_from<I>(
        &mut self,
        blocks: I,
        report: PassReport,
        observer: &dyn Observer,
        after_block: &mut dyn FnMut(&OnlineState, &PassReport) -> Result<()>,
    ) -> Result<PassReport>
    where
        I: Iterator<Item = Result<Block>> + Send,
    {
        let maps = self.maps();
        let mut learner = BlockLearner::with_state(
            &maps,
            self.names(),
            self.shape(),
            self.params.clone(),
            self.gamma,
            Some(self.state.clone()),
        )?;
        let pass = learner.train_blocks_from(blocks, report, observer, after_block)?;
        self.state = learner.into_state()?;
        self.rows_seen += pass.rounds as u64;
        self.chunks_seen += 1;
        if pass.rounds > 0 {
            self.last_loss = Some(pass.average_loss());
        }
        Ok(pass)
    }

    /// The model of the fit so far (the average of the iterates when the params average).
    /// Its final objective is lambda Omega plus the last call's progressive loss.
    pub fn model(&self) -> Result<KernelMachine> {
        let mut compact = compact(
            &self.state,
            &[],
            &self.params.reg,
            self.params.steps.averaging,
            GroupNorms::PointByPoint,
        )?;
        let p = &self.params;
        let (n_train, epochs) = if self.pass_rows > 0 {
            let passes = self.rows_seen as f64 / self.pass_rows as f64;
            (self.pass_rows, passes.round() as usize)
        } else {
            (self.rows_seen.max(1), self.chunks_seen as usize)
        };
        let n = n_train as f64;
        let objective = self.last_loss.map(|loss| {
            crate::solver::online::epoch_report(&self.state, p, 0, loss, 0.0).objective
        });
        let training = OnlineTraining {
            reg: p.reg.clone(),
            lambda: p.lambda,
            c: 1.0 / (p.lambda * n),
            eta0: p.steps.eta0,
            schedule: p.steps.schedule,
            epochs,
            seed: p.seed,
            averaging: p.steps.averaging,
            projection_radius: self.gamma,
            bias: self.bias,
            n_train: n_train as usize,
            final_objective: objective,
        };
        let ids: Vec<usize> = (0..self.kernels.len()).collect();
        let machine = assemble_machine(
            MachineParts {
                task: self.task,
                loss: self.loss,
                classes: self.classes.clone(),
                feature_names: self.feature_names.clone(),
                standardizer: self.standardizer.clone(),
                target_scaler: self.target_scaler.clone(),
                kernels: self.kernels.clone(),
                n_outputs: self.n_outputs,
                training,
            },
            &mut compact,
            &[],
            &ids,
            Matrix::zeros(0, self.feature_names.len()),
        );
        machine.validate()?;
        Ok(machine)
    }

    /// Iterative parameter mixing (module docs): the average of `fits`, which must share
    /// their setup (kernels, classes, standardization, params: the same first fit shipped to
    /// each worker), then one proximal step of the regularizer at the step size of the
    /// mixed round count. Rows seen since the last mix add up; the round counter `t` is the average (each
    /// worker's rounds were one pass over its shard). The running averages (when the params
    /// average) are averaged too.
    pub fn mix(fits: &[IncrementalFit]) -> Result<IncrementalFit> {
        let Some(first) = fits.first() else {
            return Err(Error::data("no fits to mix"));
        };
        let same_setup = |f: &IncrementalFit| {
            f.task == first.task
                && f.loss == first.loss
                && f.classes == first.classes
                && f.feature_names == first.feature_names
                && f.standardizer == first.standardizer
                && f.target_scaler == first.target_scaler
                && f.kernels == first.kernels
                && f.params == first.params
                && f.bias == first.bias
                && f.state.explicit_groups == first.state.explicit_groups
                && f.state.explicit.len() == first.state.explicit.len()
        };
        if let Some(i) = fits.iter().position(|f| !same_setup(f)) {
            return Err(Error::data(format!(
                "fit {} was not set up as fit 1 (kernels, classes, standardization and \
                 parameters must be the same: start every worker from one fit)",
                i + 1
            )));
        }
        let k = fits.len() as f64;
        let t = (fits.iter().map(|f| f.state.t as f64).sum::<f64>() / k).round() as u64;
        let mut mixed = first.clone();
        for (g, block) in mixed.state.explicit.iter_mut().enumerate() {
            let parts: Vec<&ScaledVec> = fits.iter().map(|f| &f.state.explicit[g]).collect();
            *block = ScaledVec::mean(&parts);
        }
        mixed.state.t = t;
        mixed.rows_seen = first.rows_at_mix
            + fits
                .iter()
                .map(|f| f.rows_seen.saturating_sub(f.rows_at_mix))
                .sum::<u64>();
        mixed.rows_at_mix = mixed.rows_seen;
        mixed.chunks_seen = fits.iter().map(|f| f.chunks_seen).max().unwrap_or(0);
        let losses: Vec<f64> = fits.iter().filter_map(|f| f.last_loss).collect();
        mixed.last_loss =
            (!losses.is_empty()).then(|| losses.iter().sum::<f64>() / losses.len() as f64);
        // The proximal step at the current step size (Prop. 1 of martins2011).
        let eta = mixed.params.steps.eta(t.max(1), mixed.params.lambda);
        crate::solver::online::engine::prox_step(&mut mixed.state, &mixed.params, eta)?;
        Ok(mixed)
    }
}
