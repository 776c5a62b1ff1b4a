//! `reproduce uci`: the online proximal learner (Alg. 1 of martins2011) on UCI tables, each
//! single kernel against their average and sparse / non-sparse MKL.
//!
//! Protocol: 10 seeded stratified 70/30 splits (plain random for regression); on each, C and
//! the step rule chosen by 3-fold validation on the training part from [`C_GRID`] x (the
//! Pegasos rule eta_t = 1/(lambda t), or eta_t = eta0/sqrt(t) with eta0 in [`ETA0_GRID`]), then
//! one final training run on the whole training part, evaluated on the test part. The
//! validation is [`multikernel::engine::select::Search`]: mean accuracy (or MSE, minimized) over the folds,
//! summed in fold order then divided; ties go to the first grid point.

use crate::{mean_std, median, Report, Row};
use multikernel::data::split::{random_split, stratified_split, Split};
use multikernel::data::{Dataset, Targets};
use multikernel::engine::pipeline::table::vector::{fit_vector, VectorFitConfig};
use multikernel::engine::pipeline::table::vector_model::KernelMachine;
use multikernel::engine::prox::RegSpec;
use multikernel::engine::select::{Goal, Search, SplitStrategy};
use multikernel::engine::solver::online::{OnlineParams, OnlineSteps, StepSchedule};
use multikernel::engine::task::vector::default_loss;
use multikernel::engine::task::{prediction_metric, TaskKind};
use multikernel::error::{Error, Result};
use multikernel::kernel::{KernelSpec, MemoryLimit};
use rayon::prelude::*;
use std::time::Instant;

/// The grid of C = 1 / (lambda N) searched by validation.
pub const C_GRID: [f64; 5] = [0.1, 1.0, 10.0, 100.0, 1000.0];
/// The grid of initial learning rates of the eta0/sqrt(t) rule searched by validation.
pub const ETA0_GRID: [f64; 4] = [0.1, 1.0, 10.0, 100.0];

/// One UCI table of the experiment.
#[derive(Debug, Clone)]
pub struct UciTable {
    pub name: String,
    pub data: Dataset,
    pub task: TaskKind,
}

/// Settings of `reproduce uci`.
#[derive(Debug, Clone)]
pub struct UciConfig {
    pub splits: usize,
    pub epochs: usize,
    pub folds: usize,
    pub seed: u64,
    pub c_grid: Vec<f64>,
    pub eta0_grid: Vec<f64>,
    /// Also try the rule eta_t = 1/(lambda t) (which has no eta0).
    pub try_inv: bool,
    /// Return the averaged iterate instead of the last one.
    pub averaging: bool,
    /// Only these rows (methods of [`methods`] and [`SELECTED_METHODS`]); `None`: all.
    pub methods: Option<Vec<String>>,
}

impl UciConfig {
    /// The step rules searched: (schedule, eta0).
    pub fn step_rules(&self) -> Vec<(StepSchedule, f64)> {
        let mut v: Vec<(StepSchedule, f64)> = Vec::new();
        if self.try_inv {
            v.push((StepSchedule::Inv { sigma: None }, 1.0));
        }
        v.extend(self.eta0_grid.iter().map(|&e| (StepSchedule::InvSqrt, e)));
        v
    }
}

impl Default for UciConfig {
    fn default() -> Self {
        UciConfig {
            splits: 10,
            epochs: 20,
            folds: 3,
            seed: 1,
            c_grid: C_GRID.to_vec(),
            eta0_grid: ETA0_GRID.to_vec(),
            try_inv: true,
            averaging: false,
            methods: None,
        }
    }
}

/// The methods (rows) compared: name, kernels, regularizer.
pub fn methods() -> Vec<(&'static str, Vec<&'static str>, RegSpec)> {
    const L: &str = "linear:norm=trace";
    const P: &str = "poly:degree=2,offset=1,norm=trace";
    const G: &str = "rbf:norm=trace";
    vec![
        ("linear", vec![L], RegSpec::L2),
        ("poly2", vec![P], RegSpec::L2),
        ("rbf", vec![G], RegSpec::L2),
        // q = 2: the plain sum (average, up to a rescaling of C) of the three kernels.
        ("average", vec![L, P, G], RegSpec::L2),
        ("mkl-l21sq", vec![L, P, G], RegSpec::L21Sq),
        ("mkl-l2q", vec![L, P, G], RegSpec::L2q { q: 4.0 / 3.0 }),
    ]
}

const KERNEL_NAMES: [&str; 3] = ["linear", "poly2", "rbf"];

/// Rows trained by the estimator's built-in selection on each split's training part
/// ([`multikernel::estimator::auto`]): `auto` (the default dictionary, the learner, p and C by
/// 5-fold cross-validation), `single-cv` (the best single kernel of the same dictionary
/// and its C, by the same cross-validation), and the batch MKL baselines on the three
/// kernels of the online rows (L, P, G), C (and lp-MKL's p) by the same cross-validation:
/// `simplemkl` (SimpleMKL around the exact SMO solver, issue 16) and `lp-mkl` (Kloft et
/// al., squared loss).
pub const SELECTED_METHODS: [&str; 4] = ["auto", "single-cv", "simplemkl", "lp-mkl"];

/// The training and test rows of split `split` of `table` (stratified 70/30 for classes,
/// plain random for values, seeded by `cfg.seed` and the split): what every row of the
/// table is trained and tested on (the peers' scripts read them).
pub fn split_rows(table: &UciTable, split: usize, cfg: &UciConfig) -> (Vec<usize>, Vec<usize>) {
    let seed = split_seed(cfg, split);
    match &table.data.targets {
        Targets::Classes { y, .. } => stratified_split(y, 0.7, seed),
        Targets::Real(_) => random_split(table.data.len(), 0.7, seed),
    }
}

fn split_seed(cfg: &UciConfig, split: usize) -> u64 {
    cfg.seed.wrapping_mul(1000).wrapping_add(split as u64)
}

struct SelectedResult {
    metric: f64,
    train_seconds: f64,
    select_seconds: f64,
    chosen: String,
}

/// A row of [`SELECTED_METHODS`] on one split.
fn run_selected(
    table: &UciTable,
    method: &str,
    split: usize,
    cfg: &UciConfig,
) -> Result<SelectedResult> {
    use multikernel::estimator::{
        fit, AutoConfig, FitRequest, Learner, LearnerKind, LearnerSpec, OnlineSpec,
    };
    let (train_idx, test_idx) = split_rows(table, split, cfg);
    let train = table.data.select(&train_idx);
    let test = table.data.select(&test_idx);
    let base = LearnerSpec::new(table.task.into(), Learner::Online(OnlineSpec::default()))
        .with_seed(split_seed(cfg, split));
    let auto_cfg = AutoConfig::default();
    let lpg = || -> Result<Vec<KernelSpec>> {
        let (_, kernels, _) = &methods()[4];
        kernels.iter().map(|s| s.parse()).collect()
    };
    let start = Instant::now();
    let fitted = match method {
        "auto" => fit(
            train.view(),
            FitRequest::new(&base).select(Some(&auto_cfg)),
            &(),
        )?,
        "simplemkl" | "lp-mkl" => {
            let kind = if method == "simplemkl" {
                LearnerKind::SimpleMkl
            } else {
                LearnerKind::LpMkl
            };
            let base = LearnerSpec::new(table.task.into(), Learner::default_for(kind))
                .with_kernels(lpg()?)
                .with_seed(split_seed(cfg, split));
            let batch_cfg = AutoConfig {
                learner: Some(kind),
                ..AutoConfig::default()
            };
            fit(
                train.view(),
                FitRequest::new(&base).select(Some(&batch_cfg)),
                &(),
            )?
        }
        _ => {
            let single = AutoConfig {
                single_kernel: true,
                ..AutoConfig::default()
            };
            fit(
                train.view(),
                FitRequest::new(&base).select(Some(&single)),
                &(),
            )?
        }
    };
    let total = start.elapsed().as_secs_f64();
    let selection = fitted
        .selection
        .as_ref()
        .expect("the built-in selection ran");
    let chosen = selection
        .record
        .chosen
        .and_then(|i| selection.record.grid.get(i))
        .map(|g| format!("{} {} C={}", g.learner, g.setting, g.c))
        .unwrap_or_default();
    let score = fitted
        .model
        .score_with(test.x.view(), &test.targets, &MemoryLimit::default())?;
    Ok(SelectedResult {
        metric: score.value,
        train_seconds: total - selection.seconds,
        select_seconds: selection.seconds,
        chosen,
    })
}

fn config(
    task: TaskKind,
    kernels: &[&str],
    reg: &RegSpec,
    (c, (schedule, eta0)): (f64, (StepSchedule, f64)),
    n: usize,
    cfg: &UciConfig,
    seed: u64,
) -> Result<VectorFitConfig> {
    Ok(VectorFitConfig {
        task,
        loss: default_loss(task),
        kernels: kernels
            .iter()
            .map(|s| s.parse::<KernelSpec>())
            .collect::<Result<_>>()?,
        params: OnlineParams {
            lambda: 1.0 / (c * n as f64),
            reg: reg.clone(),
            steps: OnlineSteps {
                eta0,
                schedule,
                epochs: cfg.epochs,
                averaging: cfg.averaging,
                projection: true,
                shards: 1,
                batch: 1,
                learn_beta0: false,
            },
            seed,
            shuffle: true,
        },
        bias: true,
        standardize: true,
        memory: MemoryLimit::default(),
        explicit_linear: true,
    })
}

/// Test metric of a model: accuracy (fraction) or MSE in the original units.
pub fn score(model: &KernelMachine, test: &Dataset) -> Result<f64> {
    let pred = model.predict(test.x.view(), &MemoryLimit::default())?;
    Ok(prediction_metric(&pred, &test.targets).1)
}

struct SplitResult {
    metric: f64,
    seconds: f64,
    weights: Vec<f64>,
    c: f64,
    /// eta0 of the sqrt rule; None for the 1/(lambda t) rule.
    eta0: Option<f64>,
}

/// C and the step rule of `method` by validation on `train`: 3-fold (stratified for classes)
/// validation of the C x step-rule grid (C outer) by [`Search`]; mean accuracy maximized (MSE
/// minimized), summed in fold order then divided, ties to the first grid point.
fn choose(
    table: &UciTable,
    train: &Dataset,
    method: usize,
    cfg: &UciConfig,
    seed: u64,
) -> Result<(f64, (StepSchedule, f64))> {
    let (_, kernels, reg) = &methods()[method];
    let strategy = match &train.targets {
        Targets::Classes { .. } => SplitStrategy::StratifiedKFold {
            folds: cfg.folds,
            seed,
        },
        Targets::Real(_) => SplitStrategy::KFold {
            folds: cfg.folds,
            seed,
        },
    };
    let folds = strategy.splits_for(&train.targets)?;
    let grid: Vec<(f64, (StepSchedule, f64))> = cfg
        .c_grid
        .iter()
        .flat_map(|&c| cfg.step_rules().into_iter().map(move |rule| (c, rule)))
        .collect();
    let goal = if table.task == TaskKind::Regression {
        Goal::Minimize
    } else {
        Goal::Maximize
    };
    let selection = Search::new(&grid, &folds).goal(goal).run(
        |&candidate, fold: &Split| {
            let part = train.select(&fold.train);
            let fit_cfg = config(table.task, kernels, reg, candidate, part.len(), cfg, seed)?;
            let (m, _) = fit_vector(part.view(), &fit_cfg, &())?;
            score(&m, &train.select(&fold.validation))
        },
        &(),
    )?;
    let best = selection.best().ok_or_else(|| {
        Error::Numerical(format!(
            "{}: no hyper-parameters gave a finite validation score",
            table.name
        ))
    })?;
    Ok(grid[best.candidate])
}

fn run_split(
    table: &UciTable,
    method: usize,
    split: usize,
    cfg: &UciConfig,
) -> Result<SplitResult> {
    let (_, kernels, reg) = &methods()[method];
    let seed = split_seed(cfg, split);
    let (train_idx, test_idx) = split_rows(table, split, cfg);
    let train = table.data.select(&train_idx);
    let test = table.data.select(&test_idx);
    let (c, rule) = choose(table, &train, method, cfg, seed)?;
    let fit_cfg = config(table.task, kernels, reg, (c, rule), train.len(), cfg, seed)?;
    let start = Instant::now();
    let (m, _) = fit_vector(train.view(), &fit_cfg, &())?;
    let seconds = start.elapsed().as_secs_f64();
    Ok(SplitResult {
        metric: score(&m, &test)?,
        seconds,
        weights: m.weights.clone(),
        c,
        eta0: (rule.0 == StepSchedule::InvSqrt).then_some(rule.1),
    })
}

/// The table's `metric | mean | std` cells: accuracy in percent, or the MSE.
fn metric_cells(metric: &str, values: &[f64]) -> String {
    let (mean, std) = mean_std(values);
    let (mean, std) = (mean.unwrap_or(f64::NAN), std.unwrap_or(f64::NAN));
    if metric == "accuracy" {
        format!("accuracy % | {:.1} | {:.1}", 100.0 * mean, 100.0 * std)
    } else {
        format!("mse | {mean:.2} | {std:.2}")
    }
}

/// Runs the experiment on the given tables; `progress` receives one line per finished row.
pub fn run(
    tables: &[UciTable],
    cfg: &UciConfig,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Report> {
    let ms = methods();
    let mut rows = Vec::new();
    let mut table = String::from(
        "| dataset | method | metric | mean | std | C (median) | eta0 (median; 1/(lambda t) rule: how many splits) | weights L/P/G | train s |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    let wanted = |name: &str| {
        cfg.methods
            .as_ref()
            .is_none_or(|m| m.iter().any(|w| w == name))
    };
    for t in tables {
        for (mi, (name, kernels, _)) in ms.iter().enumerate() {
            if !wanted(name) {
                continue;
            }
            let results: Vec<SplitResult> = (0..cfg.splits)
                .into_par_iter()
                .map(|s| run_split(t, mi, s, cfg))
                .collect::<Result<_>>()?;
            let values: Vec<f64> = results.iter().map(|r| r.metric).collect();
            let metric = if t.task == TaskKind::Regression {
                "mse"
            } else {
                "accuracy"
            };
            let mut row = Row::from_values(&t.name, name, metric, &values);
            row.train_seconds = median(&results.iter().map(|r| r.seconds).collect::<Vec<_>>());
            let cs: Vec<f64> = results.iter().map(|r| r.c).collect();
            let etas: Vec<f64> = results.iter().filter_map(|r| r.eta0).collect();
            let n_inv = results.iter().filter(|r| r.eta0.is_none()).count();
            let eta_text = match (median(&etas), n_inv) {
                (Some(e), 0) => format!("{e}"),
                (Some(e), k) => format!("{e}; inv {k}"),
                (None, k) => format!("inv {k}"),
            };
            row = row
                .with("C", median(&cs))
                .with("eta0", median(&etas))
                .with("C_per_split", cs.clone())
                .with(
                    "eta0_per_split",
                    results.iter().map(|r| r.eta0).collect::<Vec<_>>(),
                )
                .with("inv_schedule_splits", n_inv);
            let mut wtext = String::from("-");
            if kernels.len() > 1 {
                let mut avg = [0.0; 3];
                for r in &results {
                    for (a, w) in avg.iter_mut().zip(&r.weights) {
                        *a += w / results.len() as f64;
                    }
                }
                let mut map = serde_json::Map::new();
                for (k, a) in KERNEL_NAMES.iter().zip(avg) {
                    map.insert(k.to_string(), a.into());
                }
                row.weights = Some(map);
                wtext = format!("{:.2}/{:.2}/{:.2}", avg[0], avg[1], avg[2]);
            }
            let line = format!(
                "| {} | {} | {} | {} | {} | {} | {:.3} |\n",
                t.name,
                name,
                metric_cells(metric, &values),
                median(&cs).unwrap_or(f64::NAN),
                eta_text,
                wtext,
                row.train_seconds.unwrap_or(f64::NAN)
            );
            progress(line.trim_end());
            table.push_str(&line);
            rows.push(row);
        }
        for name in SELECTED_METHODS {
            if !wanted(name) {
                continue;
            }
            // One split at a time: the selection itself runs its folds in parallel.
            let results: Vec<SelectedResult> = (0..cfg.splits)
                .map(|s| run_selected(t, name, s, cfg))
                .collect::<Result<_>>()?;
            let values: Vec<f64> = results.iter().map(|r| r.metric).collect();
            let metric = if t.task == TaskKind::Regression {
                "mse"
            } else {
                "accuracy"
            };
            let mut row = Row::from_values(&t.name, name, metric, &values);
            row.train_seconds =
                median(&results.iter().map(|r| r.train_seconds).collect::<Vec<_>>());
            let select = median(&results.iter().map(|r| r.select_seconds).collect::<Vec<_>>());
            row = row.with("select_seconds", select).with(
                "chosen_per_split",
                results.iter().map(|r| r.chosen.clone()).collect::<Vec<_>>(),
            );
            let line = format!(
                "| {} | {} | {} | - | - | selection {:.2} s | {:.3} |\n",
                t.name,
                name,
                metric_cells(metric, &values),
                select.unwrap_or(f64::NAN),
                row.train_seconds.unwrap_or(f64::NAN)
            );
            progress(line.trim_end());
            table.push_str(&line);
            rows.push(row);
        }
    }
    Ok(Report {
        experiment: "uci".into(),
        rows,
        table,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use multikernel::data::split::{kfold, stratified_kfold};
    use multikernel::data::Matrix;

    /// The loop `choose` replaced (commit 3b69a82), kept as its slow twin.
    fn explicit_loop(
        table: &UciTable,
        train: &Dataset,
        method: usize,
        cfg: &UciConfig,
        seed: u64,
    ) -> (f64, (StepSchedule, f64)) {
        let (_, kernels, reg) = &methods()[method];
        let classification = table.task != TaskKind::Regression;
        let folds = match &train.targets {
            Targets::Classes { y, .. } => stratified_kfold(y, cfg.folds, seed),
            Targets::Real(_) => kfold(train.len(), cfg.folds, seed),
        };
        let mut best: Option<(f64, f64, (StepSchedule, f64))> = None;
        for &c in &cfg.c_grid {
            for rule in cfg.step_rules() {
                let mut total = 0.0;
                for (tr, va) in &folds {
                    let part = train.select(tr);
                    let fit_cfg =
                        config(table.task, kernels, reg, (c, rule), part.len(), cfg, seed).unwrap();
                    let (m, _) = fit_vector(part.view(), &fit_cfg, &()).unwrap();
                    total += score(&m, &train.select(va)).unwrap();
                }
                let v = total / folds.len() as f64;
                let v = if classification { v } else { -v };
                if best.is_none_or(|(b, _, _)| v > b) {
                    best = Some((v, c, rule));
                }
            }
        }
        let (_, c, rule) = best.unwrap();
        (c, rule)
    }

    /// A small noisy table: two features, a class by the sign of a nonlinear score (or the
    /// score itself for regression).
    fn table(task: TaskKind, n: usize) -> UciTable {
        let mut x = Vec::with_capacity(2 * n);
        let mut score = Vec::with_capacity(n);
        for i in 0..n {
            let a = ((i * 37) % 101) as f64 / 50.0 - 1.0;
            let b = ((i * 53) % 97) as f64 / 48.0 - 1.0;
            x.extend_from_slice(&[a, b]);
            score.push(a * a - b + 0.3 * (((i * 7) % 11) as f64 / 11.0 - 0.5));
        }
        let targets = match task {
            TaskKind::Regression => Targets::Real(score),
            _ => Targets::Classes {
                classes: vec!["neg".into(), "pos".into()],
                y: score.iter().map(|&s| usize::from(s > 0.2)).collect(),
            },
        };
        UciTable {
            name: "toy".into(),
            data: Dataset {
                x: Matrix::from_vec(n, 2, x),
                targets,
                feature_names: vec!["a".into(), "b".into()],
            },
            task,
        }
    }

    /// The grid has ties (the first wins) and, for regression, diverged candidates whose
    /// validation MSE is infinite or NaN (never chosen, by either).
    #[test]
    fn choose_picks_what_the_explicit_loop_picks() {
        let cfg = UciConfig {
            epochs: 2,
            c_grid: vec![0.1, 10.0, 1000.0],
            eta0_grid: vec![0.1, 10.0],
            ..UciConfig::default()
        };
        for task in [TaskKind::Binary, TaskKind::Regression] {
            let t = table(task, 45);
            for (method, seed) in [(0, 3), (4, 8)] {
                let want = explicit_loop(&t, &t.data, method, &cfg, seed);
                let got = choose(&t, &t.data, method, &cfg, seed).unwrap();
                assert_eq!(got, want, "{task:?} method {method}");
            }
        }
    }

    #[test]
    fn an_empty_grid_is_refused_by_name() {
        let cfg = UciConfig {
            c_grid: Vec::new(),
            ..UciConfig::default()
        };
        let t = table(TaskKind::Binary, 20);
        let e = choose(&t, &t.data, 0, &cfg, 1).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidParameter { name, .. } if name == "candidates"),
            "{e}"
        );
    }
}
