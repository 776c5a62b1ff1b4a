//! Training the online proximal learner (Alg. 1) on a vector data set: standardization,
//! kernel fitting on the training part, Gram matrices, the run, and the compact model
//! ([`crate::solver::online::compact`]).
//!
//! A kernel with an explicit feature map (a linear kernel, or `approx=rff`:
//! [`FittedKernel::feature_map`]) is trained as an explicit group over its mapped rows
//! ([`ExplicitVectorTask`]), in `O(n D)` memory; the others through their `n x n` Gram
//! matrices. The model keeps a linear kernel's weights `W` (`D x outputs`) instead of
//! coefficients on support points.

use crate::data::standardize::Standardizer;
use crate::data::{Matrix, TableRef};
use crate::error::{Error, Result};
use crate::kernel::{fit_all, FittedKernel, Gram, KernelSpec, MemoryLimit};
use crate::pipeline::table::vector_model::{KernelMachine, OnlineTraining};
use crate::run::{Control, Observer, RunInfo};
use crate::solver::online::blocks::{BlockLearner, TaskShape, DEFAULT_BLOCK_ROWS};
use crate::solver::online::compact::{compact, GroupNorms};
use crate::solver::online::OnlineState;
use crate::solver::online::{EpochReport, OnlineLearner, OnlineParams};
use crate::task::explicit_vector::{ExplicitVectorTask, MappedRows};
use crate::task::online::OnlineTask;
use crate::task::targets::online_targets;
use crate::task::vector::check_loss;
use crate::task::{Loss, TaskKind, VectorTask};
use rayon::prelude::*;

/// Largest size of the stored mapped rows of the explicit groups (bytes); above it they
/// are computed again in every round.
pub(crate) const STORE_MAPPED: usize = 1 << 28;

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
    /// Train linear kernels as explicit feature groups (the default; `false`: through their
    /// Gram matrices, the same model up to rounding). Approximated kernels are always
    /// explicit.
    pub explicit_linear: bool,
}

impl VectorFitConfig {
    /// Whether kernel `k` is trained as an explicit group.
    fn is_explicit(&self, k: &FittedKernel) -> bool {
        k.approx().is_some() || (self.explicit_linear && k.feature_map().is_some())
    }
}

/// Trains on `train`; `observer` sees each epoch and may stop the run (the model reached so
/// far is returned, with status [`crate::run::RunStatus::Cancelled`]).
pub fn fit_vector(
    train: TableRef<'_>,
    cfg: &VectorFitConfig,
    observer: &dyn Observer,
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
    let (explicit_ids, gram_ids): (Vec<usize>, Vec<usize>) =
        (0..kernels.len()).partition(|&m| cfg.is_explicit(&kernels[m]));
    let maps: Vec<_> = explicit_ids
        .iter()
        .map(|&m| {
            kernels[m]
                .feature_map()
                .expect("an explicit kernel has a map")
        })
        .collect();
    let mapped: usize = maps.iter().map(|z| z.dim()).sum();
    // The mapped rows are stored when they take at most STORE_MAPPED bytes, else computed
    // again in every round (memory: the rows and the maps only).
    let store = mapped.saturating_mul(n).saturating_mul(8) <= STORE_MAPPED;
    cfg.memory.check(
        (gram_ids.len() * n * n + if store { mapped * n } else { 0 }) * 8,
        &format!(
            "{} training Gram matrices of {n} x {n} and the {mapped} explicit features of \
             {n} rows",
            gram_ids.len()
        ),
    )?;
    // A request to stop that arrives while the Gram matrices are computed leaves the rest
    // uncomputed (zeros, never read: the learner stops at its first poll with a model of
    // zero weights), so a stopped run does not wait for every kernel.
    let grams: Vec<Gram> = gram_ids
        .par_iter()
        .map(|&m| {
            if observer.should_stop() {
                Ok(Gram::Dense(Matrix::zeros(n, n)))
            } else {
                kernels[m].gram_sym(&x, &cfg.memory)
            }
        })
        .collect::<Result<_>>()?;
    let features: Vec<Matrix> = maps
        .iter()
        .filter(|_| store)
        .map(|z| {
            if observer.should_stop() {
                Matrix::zeros(n, z.dim())
            } else {
                z.map_rows(&x)
            }
        })
        .collect();
    let n_outputs = cfg.loss.n_outputs(classes.len());
    let mut task = VectorTask::new(cfg.loss, targets, n_outputs, cfg.bias);
    task.weights = train.weights().map(<[f64]>::to_vec);
    let mut last: Option<EpochReport> = None;
    let names: Vec<String> = explicit_ids
        .iter()
        .map(|&m| kernels[m].name.clone())
        .collect();
    let (state, info, gamma) = if explicit_ids.is_empty() {
        run(&task, &grams, cfg, observer, &mut last)?
    } else if !store && gram_ids.is_empty() {
        // Only explicit groups, too many mapped rows to keep: rows mapped block by block,
        // ahead of the rounds (the same run as with the rows kept).
        let shape = TaskShape {
            loss: cfg.loss,
            n_outputs,
            bias: cfg.bias,
        };
        let gamma = BlockLearner::projection_radius(shape, &cfg.params, &task.targets);
        let mut learner = BlockLearner::new(&maps, names, shape, cfg.params.clone(), gamma)?;
        let info = learner.run_in_memory(
            &x,
            &task.targets,
            DEFAULT_BLOCK_ROWS,
            observer,
            &mut |rep| last = Some(rep.clone()),
        )?;
        (learner.into_state()?, info, gamma)
    } else {
        let rows = if store {
            MappedRows::Stored(&features)
        } else {
            MappedRows::OnTheFly { x: &x, maps: &maps }
        };
        let with_features = ExplicitVectorTask::new(&task, rows, names);
        run(&with_features, &grams, cfg, observer, &mut last)?
    };
    let mut compact = compact(
        &state,
        &grams,
        &cfg.params.reg,
        cfg.params.steps.averaging,
        GroupNorms::PointByPoint,
    )?;
    let p = &cfg.params;
    let training = OnlineTraining {
        reg: p.reg.clone(),
        lambda: p.lambda,
        c: 1.0 / (p.lambda * n as f64),
        eta0: p.steps.eta0,
        schedule: p.steps.schedule,
        epochs: p.steps.epochs,
        seed: p.seed,
        averaging: p.steps.averaging,
        projection_radius: gamma,
        bias: cfg.bias,
        n_train: n,
        final_objective: last.as_ref().map(|r| r.objective),
    };
    let support = x.select_rows(&compact.support_rows);
    let machine = assemble_machine(
        MachineParts {
            task: cfg.task,
            loss: cfg.loss,
            classes,
            feature_names: train.feature_names().to_vec(),
            standardizer,
            target_scaler,
            kernels,
            n_outputs,
            training,
        },
        &mut compact,
        &gram_ids,
        &explicit_ids,
        support,
    );
    Ok((machine, info))
}

/// What a [`KernelMachine`] holds besides its parameters.
pub(crate) struct MachineParts {
    pub task: TaskKind,
    pub loss: Loss,
    pub classes: Vec<String>,
    pub feature_names: Vec<String>,
    pub standardizer: Option<Standardizer>,
    pub target_scaler: Option<crate::data::standardize::TargetScaler>,
    pub kernels: Vec<FittedKernel>,
    pub n_outputs: usize,
    pub training: OnlineTraining,
}

/// The model of a finished run from its compact form: the kernel groups (`gram_ids`, in
/// that order, first in `compact`) and the explicit feature groups (`explicit_ids`, after
/// the bias) put back in the kernels' order; `support` holds the support rows.
pub(crate) fn assemble_machine(
    parts: MachineParts,
    compact: &mut crate::solver::online::compact::Compact,
    gram_ids: &[usize],
    explicit_ids: &[usize],
    support: Matrix,
) -> KernelMachine {
    let n_kernels = parts.kernels.len();
    let n_bias = usize::from(parts.training.bias);
    let mut group_norms = vec![0.0; n_kernels];
    let mut weights = vec![0.0; n_kernels];
    let mut coef = vec![Vec::new(); n_kernels];
    let mut primal = vec![Vec::new(); n_kernels];
    for (p, &m) in gram_ids.iter().enumerate() {
        group_norms[m] = compact.group_norms[p];
        weights[m] = compact.weights[p];
        coef[m] = std::mem::take(&mut compact.coef[p]);
    }
    for (q, &m) in explicit_ids.iter().enumerate() {
        let p = gram_ids.len() + q;
        group_norms[m] = compact.group_norms[p];
        weights[m] = compact.weights[p];
        if group_norms[m] > 0.0 {
            primal[m] = std::mem::take(&mut compact.explicit[n_bias + q]);
        }
    }
    if explicit_ids.is_empty() {
        primal.clear();
    }
    let bias = if parts.training.bias {
        compact.explicit.remove(0)
    } else {
        vec![0.0; parts.n_outputs]
    };
    KernelMachine {
        task: parts.task,
        loss: parts.loss,
        classes: parts.classes,
        feature_names: parts.feature_names,
        standardizer: parts.standardizer,
        target_scaler: parts.target_scaler,
        kernels: parts.kernels,
        support,
        coef,
        primal,
        bias,
        n_outputs: parts.n_outputs,
        group_norms,
        weights,
        training: parts.training,
        selection: None,
    }
}

/// Alg. 1 on `task` over `grams` until the run ends; `last` keeps the last epoch's report.
/// Returns the final state, the run's record and the projection radius in use.
fn run<T: OnlineTask>(
    task: &T,
    grams: &[Gram],
    cfg: &VectorFitConfig,
    observer: &dyn Observer,
    last: &mut Option<EpochReport>,
) -> Result<(OnlineState, RunInfo, Option<f64>)> {
    let learner = OnlineLearner::new(task, grams, cfg.params.clone())?;
    let gamma = learner.gamma();
    let (state, info) = learner.run(observer, &mut |rep, _| {
        *last = Some(rep.clone());
        Control::Continue
    })?;
    Ok((state, info, gamma))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::online::OnlineSteps;
    use crate::task::vector::default_loss;
    use rand::{Rng, SeedableRng};

    /// The explicit groups' mapped rows stored or computed again at each use: the same run,
    /// to the last bit (a random Fourier map and a linear one, with a bias, averaging on).
    #[test]
    fn stored_and_recomputed_mapped_rows_give_the_same_run() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let (n, d) = (120, 4);
        let x = Matrix::from_vec(n, d, (0..n * d).map(|_| rng.gen_range(-1.0..1.0)).collect());
        let targets: Vec<f64> = (0..n)
            .map(|i| {
                if x.get(i, 0) * x.get(i, 1) > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        let specs: Vec<KernelSpec> = ["rbf:approx=rff,dim=32", "linear:norm=trace"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let kernels = fit_all(&specs, &x, &[], 1).unwrap();
        let maps: Vec<_> = kernels.iter().map(|k| k.feature_map().unwrap()).collect();
        let stored: Vec<Matrix> = maps.iter().map(|m| m.map_rows(&x)).collect();
        let task = VectorTask::new(default_loss(TaskKind::Binary), targets, 1, true);
        let params = OnlineParams {
            lambda: 1e-2,
            steps: OnlineSteps {
                epochs: 3,
                averaging: true,
                ..OnlineSteps::default()
            },
            ..OnlineParams::default()
        };
        let run_with = |rows: MappedRows<'_>| {
            let names = vec!["a".to_string(), "b".to_string()];
            let t = ExplicitVectorTask::new(&task, rows, names);
            let learner = OnlineLearner::new(&t, &[], params.clone()).unwrap();
            let (state, _) = learner.run(&(), &mut |_, _| Control::Continue).unwrap();
            (state.explicit_values(false), state.explicit_values(true))
        };
        let a = run_with(MappedRows::Stored(&stored));
        let b = run_with(MappedRows::OnTheFly { x: &x, maps: &maps });
        assert_eq!(a, b);
        assert!(a.0[1].iter().any(|v| *v != 0.0));
    }
}
