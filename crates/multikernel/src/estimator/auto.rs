//! Built-in selection: `train` without `--C` picks C (and the online learner's `eta0`,
//! lp-MKL's `p`, and the learner itself when none is named) by seeded k-fold
//! cross-validation on the training rows, then refits the choice on all of them.
//!
//! Fixed rules, not values fitted to any table:
//!
//! - **Grids**: C in `C_GRID`; lp-MKL's kernel-weight norm p in `P_GRID` (unless given);
//!   the online learner's eta0 in `ETA0_GRID` (unless given).
//! - **Folds**: `FOLDS`-fold, stratified for class labels, seeded by the spec's seed. A
//!   class with fewer rows than folds lowers the folds to its count; with fewer than 2 rows
//!   in some class (or fewer than 4 rows in all) there is no selection: the defaults stand
//!   (C = 1), and the record says so. On tables of at most [`REPEAT_MAX_ROWS`] rows the
//!   k-fold is repeated over [`SMALL_REPEATS`] seeded partitions (the first is the plain
//!   k-fold's), so that one partition's luck does not decide between close candidates.
//! - **The learner** (when none is named): lp-MKL (the batch learner, closed-form steps,
//!   squared loss) when its kernel matrices on all rows fit the memory limit and the table
//!   has at most `BATCH_MAX_ROWS` rows (its Cholesky solves grow as n^3: the selection's
//!   time stays within seconds below that); the online learner (Alg. 1) above it. The
//!   record says which and why.
//! - **Candidates** (when the selection chooses the learner and takes lp-MKL): single
//!   kernels, hinge-loss SVMs on the Gaussian kernels, the uniform sum and the learned
//!   combinations, chosen by a one-standard-error rule that prefers the simpler
//!   ([`super::candidates`]; issue 28). A named learner keeps the grid below.
//! - **lp-MKL's path**: the kernel matrices are computed once on all training rows (the
//!   kernels' data-dependent choices, the median heuristic and the trace normalization, are
//!   made on all rows, without the labels), and every fold takes its rows and columns from
//!   them; within a fold the C grid runs from small to large C (large to small lambda), each
//!   solve warm-started from the previous kernel weights (Kloft's alternation, a relative
//!   tolerance of `candidates::select_tol`: 1e-6 at p > 1, 1e-8 at p = 1). The online learner and MKL-GOMP refit every grid point
//!   from scratch (no warm start fits their runs).
//! - **Large tables, online learner**: its grid is scored on a seeded subsample of
//!   `SELECT_MAX_ROWS` rows (each grid point is a fresh fit with n x n Gram matrices); the
//!   chosen settings are then refitted on all rows.
//! - **Scores**: mean validation accuracy (maximized) or MSE (minimized) over the folds,
//!   summed in fold order (`crate::select`); ties go to the first grid point (smaller C).

use super::fit::{fit_checked, TrainingData};
use super::fitted::{Fitted, Selection};
use super::fold_cuts::cut;
use super::select::SpecSearch;
use super::spec::{CheckedSpec, Learner, LearnerKind, LearnerSpec, LpMklSpec, Strength, Task};
use crate::data::split::Split;
use crate::data::{Matrix, TableRef, Targets};
use crate::error::{Error, Result};
use crate::kernel::{fit_all, kernel_matrices, KernelMatrix, MemoryLimit};
use crate::run::{FitSteps, Observer, RunStatus, StopOnly};
use crate::select::{Goal, Search, SplitStrategy};
use crate::solver::lp_mkl::{lp_mkl_weighted, p_label, LpMklParams};
use crate::solver::ridge::prepare_rows;
use crate::task::targets::{decode, encode_targets, prediction_metric};
use std::ops::Range;
use std::time::Instant;

/// The C grid (C weighs the sum of the losses against `1/2 ||f||^2`, the same for every
/// learner).
pub(crate) const C_GRID: [f64; 5] = [0.1, 1.0, 10.0, 100.0, 1000.0];
/// lp-MKL's kernel-weight norms: 4/3 (sparse-leaning) and the plain l2 (2). Not p = 1:
/// its multiplicative steps converge slowly (on breast-cancer the 5-fold selection over the
/// C grid took 41.8 s at p = 1 against 4.5 s at p = 4/3 and 2.6 s at p = 2, all three
/// scoring 97.4-97.5 %); `--p 1` still selects C for it.
pub(crate) const P_GRID: [f64; 2] = [4.0 / 3.0, 2.0];
/// The online learner's initial learning rates (rule eta0 / sqrt(t)).
pub(crate) const ETA0_GRID: [f64; 3] = [0.1, 1.0, 10.0];
/// Cross-validation folds.
pub(crate) const FOLDS: usize = 5;
/// The online learner and MKL-GOMP are selected on a seeded (stratified) subsample of at
/// most this many rows of a larger table, then refitted on all rows: every grid point is a
/// fresh fit whose Gram matrices grow as n^2 (on 5,000 ringnorm rows one fit takes 15 s and
/// 5.3 GB, and the 15 x 5 fits of the grid would take twenty minutes).
pub(crate) const SELECT_MAX_ROWS: usize = 1000;
/// The batch learner is chosen up to this many rows (and when its matrices fit the memory).
pub(crate) const BATCH_MAX_ROWS: usize = 3000;
pub use crate::select::{GridScore, SelectionRecord};

/// What to select (module docs). `learner: None` lets the selection choose it.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoConfig {
    pub learner: Option<LearnerKind>,
    /// lp-MKL: the p grid when `None`.
    pub p: Option<f64>,
    /// The online learner: search eta0 (it was not given).
    pub tune_eta0: bool,
    pub folds: usize,
    pub c_grid: Vec<f64>,
    /// When the selection chooses the learner: at most this many fits (one candidate at one
    /// C on one fold each; [`super::candidates`]), spent simplest candidate first. `None`:
    /// no limit.
    pub budget: Option<usize>,
    /// When the selection chooses the learner: no candidate starts after this many seconds
    /// of selection (those started finish). Opt-in and not deterministic: the clock decides
    /// which candidates run, so the model can differ between machines and thread counts.
    pub budget_seconds: Option<f64>,
    /// Select only among single kernels of the dictionary (with their C, by the same
    /// folds), the baseline MKL has to beat; the learner is lp-MKL with one kernel.
    pub single_kernel: bool,
}

/// A selection budget as `--select-budget` takes it: `400` (fits, deterministic) or `30s`
/// (seconds of selection, opt-in, not deterministic across machines).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SelectBudget {
    Fits(usize),
    Seconds(f64),
}

impl std::str::FromStr for SelectBudget {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let t = s.trim();
        if let Some(secs) = t.strip_suffix('s') {
            return match secs.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 => Ok(SelectBudget::Seconds(v)),
                _ => Err(format!(
                    "{s:?}: expected a positive number of seconds before the s (e.g. 30s)"
                )),
            };
        }
        match t.parse::<usize>() {
            Ok(n) if n > 0 => Ok(SelectBudget::Fits(n)),
            _ => Err(format!(
                "{s:?}: expected a positive count of fits (e.g. 400) or seconds (e.g. 30s)"
            )),
        }
    }
}

impl AutoConfig {
    /// The same configuration with this budget (fits or seconds; the other kind cleared).
    pub fn with_budget(self, budget: Option<SelectBudget>) -> AutoConfig {
        let (fits, seconds) = match budget {
            None => (None, None),
            Some(SelectBudget::Fits(n)) => (Some(n), None),
            Some(SelectBudget::Seconds(t)) => (None, Some(t)),
        };
        AutoConfig {
            budget: fits,
            budget_seconds: seconds,
            ..self
        }
    }
}

impl Default for AutoConfig {
    fn default() -> Self {
        AutoConfig {
            learner: None,
            p: None,
            tune_eta0: true,
            folds: FOLDS,
            c_grid: C_GRID.to_vec(),
            budget: None,
            budget_seconds: None,
            single_kernel: false,
        }
    }
}

impl AutoConfig {
    /// The selection a request without C runs (as `multikernel train` and the Python
    /// estimators do): for the online, lp-MKL, GOMP and wrapper learners, or for none named, which
    /// the selection then chooses, unless a setting only the online learner has was given
    /// (then the online learner). `None`: the named learner has no built-in selection.
    /// `p`: lp-MKL's p when given (the grid otherwise); `tune_eta0`: search the online
    /// learner's eta0 (it was not given).
    pub(crate) fn for_request(
        learner: Option<LearnerKind>,
        online_setting_given: bool,
        p: Option<f64>,
        tune_eta0: bool,
    ) -> Option<AutoConfig> {
        use LearnerKind::*;
        let learner = match learner {
            None if online_setting_given => Some(Online),
            None => None,
            Some(k @ (Online | LpMkl | Gomp | SimpleMkl | GaussSeidel)) => Some(k),
            Some(_) => return None,
        };
        Some(AutoConfig {
            learner,
            p,
            tune_eta0,
            ..AutoConfig::default()
        })
    }
}

/// The result of [`fit_auto`]: the refitted model, the record (also stored in the model)
/// and the seconds of the selection alone.
#[derive(Debug, Clone)]
pub(crate) struct AutoFitted {
    pub(crate) fitted: Fitted,
    /// The learner that was fitted (chosen, or the one asked for).
    pub(crate) learner: LearnerKind,
    pub(crate) record: SelectionRecord,
    pub(crate) select_seconds: f64,
}

impl From<AutoFitted> for Fitted {
    fn from(a: AutoFitted) -> Fitted {
        Fitted {
            selection: Some(Selection {
                record: a.record,
                seconds: a.select_seconds,
                learner: a.learner,
            }),
            ..a.fitted
        }
    }
}

/// The learner the selection uses on a table of `n` rows and `n_kernels` kernels, with
/// the reason (module docs: lp-MKL while its matrices fit and `n <= BATCH_MAX_ROWS`).
pub(crate) fn choose_learner(
    n: usize,
    n_kernels: usize,
    memory: &MemoryLimit,
) -> (LearnerKind, String) {
    let bytes = (n as u128) * (n as u128) * 8 * n_kernels as u128;
    let gib = bytes as f64 / (1u64 << 30) as f64;
    let fits = memory.check(
        usize::try_from(bytes).unwrap_or(usize::MAX),
        "kernel matrices",
    );
    if fits.is_err() {
        (
            LearnerKind::Online,
            format!(
                "online: lp-MKL's {n_kernels} kernel matrices on {n} rows need {gib:.1} GiB, \
                 above the memory limit"
            ),
        )
    } else if n > BATCH_MAX_ROWS {
        (
            LearnerKind::Online,
            format!(
                "online: {n} rows is above {BATCH_MAX_ROWS}, where lp-MKL's n^3 solves make \
                 the selection slow; no candidates (single kernels, hinge-loss SVMs, the \
                 uniform sum) are scored, only the online learner's grid"
            ),
        )
    } else {
        (
            LearnerKind::LpMkl,
            format!(
                "lp-mkl: {n} rows (at most {BATCH_MAX_ROWS}), {n_kernels} kernel matrices in \
                 {gib:.2} GiB"
            ),
        )
    }
}

/// Selects by cross-validation on `table` (module docs) and refits the choice on all rows.
/// The checked spec gives the task, the kernels (none: the default dictionary), bias,
/// standardization, the seed (of the folds too), the memory limit, and the named learner's
/// other settings; its strength is ignored. The observer sees the refit's progress; a
/// request to stop ([`Observer::should_stop`]) also reaches the fits of the grid, which
/// then end early, and the refit returns at once with [`RunStatus::Cancelled`].
pub(crate) fn fit_auto(
    table: TableRef<'_>,
    checked: &CheckedSpec,
    cfg: &AutoConfig,
    observer: &dyn Observer,
) -> Result<AutoFitted> {
    if cfg.single_kernel {
        return fit_single_best(table, checked, cfg);
    }
    let base = checked.spec();
    if matches!(base.task, Task::Sequence | Task::Parsing) {
        return Err(Error::unsupported(
            "built-in selection scores the rows of a table (binary, multiclass, regression)",
        ));
    }
    if cfg.c_grid.is_empty() {
        return Err(Error::param("c_grid", 0, "at least one C"));
    }
    let start = Instant::now();
    let n_kernels =
        crate::kernel::expand_specs(&checked.kernels_for(table.n_features()), table.n_features())
            .len();
    let (kind, why) = match cfg.learner {
        Some(k) => (k, None),
        None => {
            let (k, why) = choose_learner(table.len(), n_kernels, &base.memory);
            (k, Some(why))
        }
    };
    let (metric, goal) = if base.task == Task::Regression {
        ("mse", Goal::Minimize)
    } else {
        ("accuracy", Goal::Maximize)
    };
    let Some((strategy, mut method)) = fold_rule(table.targets(), cfg.folds, base.seed) else {
        // Too few rows: the defaults stand.
        // A grid of one C is a C given (plan.rs): it stands; else C = 1.
        let c = match cfg.c_grid[..] {
            [c] => c,
            _ => 1.0,
        };
        let spec = spec_for(base, kind, cfg.p.unwrap_or(2.0), c);
        let record = SelectionRecord {
            method: format!(
                "too few rows{} for {}-fold cross-validation: C = {} and the learner's defaults",
                if matches!(table.targets(), Targets::Classes { .. }) {
                    " per class"
                } else {
                    ""
                },
                cfg.folds,
                c
            ),
            metric: metric.into(),
            learner_choice: why,
            grid: Vec::new(),
            chosen: None,
            candidates: Vec::new(),
            why: None,
        };
        let select_seconds = start.elapsed().as_secs_f64();
        return refit(table, &spec, kind, record, select_seconds, observer);
    };
    if cfg.learner.is_none() && kind == LearnerKind::LpMkl {
        let sel = SelectionSetup {
            strategy,
            method,
            learner_choice: why,
            goal,
            metric,
            start,
        };
        return fit_candidates(table, base, cfg, sel, observer);
    }
    let splits = strategy.splits_for(table.targets())?;
    let stop = StopOnly(observer);
    let (grid, specs) = match kind {
        LearnerKind::LpMkl => {
            let ps: Vec<f64> = match cfg.p {
                Some(p) => vec![p],
                None => P_GRID.to_vec(),
            };
            let groups: Vec<(Range<usize>, f64)> = ps.iter().map(|&p| (0..n_kernels, p)).collect();
            let scores = lp_path_scores(table, base, &groups, &cfg.c_grid, &splits, goal, &stop)?;
            let mut grid = Vec::new();
            let mut specs = Vec::new();
            for (i, &p) in ps.iter().enumerate() {
                for (j, &c) in cfg.c_grid.iter().enumerate() {
                    grid.push(GridScore {
                        learner: "lp-mkl".into(),
                        setting: format!("p={}", p_label(p)),
                        c,
                        mean: scores[i * cfg.c_grid.len() + j],
                    });
                    specs.push(spec_for(base, kind, p, c));
                }
            }
            (grid, specs)
        }
        LearnerKind::Online
        | LearnerKind::Gomp
        | LearnerKind::SimpleMkl
        | LearnerKind::GaussSeidel => {
            let eta0s: Vec<Option<f64>> = if kind == LearnerKind::Online && cfg.tune_eta0 {
                ETA0_GRID.iter().map(|&e| Some(e)).collect()
            } else {
                vec![None]
            };
            // Above SELECT_MAX_ROWS the grid is scored on a subsample (module docs).
            let (sub_rows, sub_note) = subsample(table.targets(), base.seed);
            let sub = sub_rows.as_ref().map(|r| super::select::rows(table, r));
            let sub_weights = sub_rows.as_ref().and_then(|r| table.select_weights(r));
            let sub_splits = match &sub {
                Some(d) => strategy.splits_for(&d.targets)?,
                None => splits.clone(),
            };
            let mut specs = Vec::new();
            let mut settings = Vec::new();
            for &c in &cfg.c_grid {
                for &e in &eta0s {
                    let mut spec = spec_for(base, kind, 2.0, c);
                    if let (Some(e), Learner::Online(o)) = (e, &mut spec.learner) {
                        o.steps.eta0 = e;
                    }
                    specs.push(spec);
                    settings.push((c, e));
                }
            }
            let search = SpecSearch::new(&specs, SplitStrategy::Given(sub_splits)).refit(false);
            // Each evaluation is one fit: reported as the candidates' fits are.
            let steps = FitSteps(observer);
            let sel = match &sub {
                Some(d) => search.run(
                    super::select::weighted_view(d, sub_weights.as_deref())?,
                    &steps,
                )?,
                None => search.run(table, &steps)?,
            };
            method.push_str(&sub_note);
            let grid = settings
                .iter()
                .enumerate()
                .map(|(i, &(c, e))| GridScore {
                    learner: kind.name().into(),
                    setting: e.map_or(String::new(), |e| format!("eta0={e}")),
                    c,
                    mean: sel.mean(i).filter(|m| m.is_finite()),
                })
                .collect();
            (grid, specs)
        }
        other => {
            return Err(Error::unsupported(format!(
                "built-in selection runs for the online, lp-mkl, gomp, simplemkl and \
                 gauss-seidel learners, not {other}: give --C"
            )))
        }
    };
    // A stopped grid scored nothing worth choosing: the refit below returns at once.
    let chosen = if observer.should_stop() {
        0
    } else {
        best_point(&grid, goal, metric)?
    };
    let select_seconds = start.elapsed().as_secs_f64();
    let record = SelectionRecord {
        method,
        metric: metric.into(),
        learner_choice: why,
        grid,
        chosen: Some(chosen),
        candidates: Vec::new(),
        why: None,
    };
    refit(
        table,
        &specs[chosen],
        kind,
        record,
        select_seconds,
        observer,
    )
}

/// Refits `spec` (the learner `kind`) on all rows of `table` and stores the selection's
/// `record` in the model (not in a cancelled one).
fn refit(
    table: TableRef<'_>,
    spec: &LearnerSpec,
    kind: LearnerKind,
    record: SelectionRecord,
    select_seconds: f64,
    observer: &dyn Observer,
) -> Result<AutoFitted> {
    let mut fitted = fit_checked(TrainingData::Table(table), None, &spec.check()?, observer)?;
    if fitted.run.status != RunStatus::Cancelled {
        fitted.model.set_selection(record.clone());
    }
    Ok(AutoFitted {
        fitted,
        learner: kind,
        record,
        select_seconds,
    })
}

/// What [`fit_auto`] settled before scoring the candidates.
struct SelectionSetup {
    strategy: SplitStrategy,
    method: String,
    learner_choice: Option<String>,
    goal: Goal,
    metric: &'static str,
    start: Instant,
}

/// The selection among candidates (single kernels, the uniform sum, learned combinations;
/// [`super::candidates`]) when it chooses the learner on a table lp-MKL takes: the kernel
/// matrices computed once (on a seeded subsample of [`SELECT_MAX_ROWS`] rows of a larger
/// table), every candidate's C path scored on the same folds with successive halving, the
/// one-standard-error rule, then the choice refitted on all rows.
fn fit_candidates(
    table: TableRef<'_>,
    base: &LearnerSpec,
    cfg: &AutoConfig,
    setup: SelectionSetup,
    observer: &dyn Observer,
) -> Result<AutoFitted> {
    use super::candidates::{self as cs, Family};
    use super::fold_cuts::{FoldCuts, SelectionKernels};
    use crate::kernel::{expand_specs, KernelKind};
    let SelectionSetup {
        strategy,
        mut method,
        learner_choice,
        goal,
        metric,
        start,
    } = setup;
    let checked = base.check()?;
    let d = table.n_features();
    let kernels = expand_specs(&checked.kernels_for(d), d);
    let (sub_rows, sub_note) = subsample(table.targets(), base.seed);
    let sub = sub_rows.as_ref().map(|r| super::select::rows(table, r));
    let sub_weights = sub_rows.as_ref().and_then(|r| table.select_weights(r));
    let view = match &sub {
        Some(s) => super::select::weighted_view(s, sub_weights.as_deref())?,
        None => table,
    };
    method.push_str(&sub_note);
    if let Some(t) = cfg.budget_seconds {
        method.push_str(&format!(
            ", a budget of {t} s (clock-bound: not deterministic)"
        ));
    }
    if !cs::halving_applies(view.len()) {
        method.push_str(&format!(
            ", every candidate on every fold (no successive halving at {} rows, at most {})",
            view.len(),
            cs::HALVING_MIN_ROWS
        ));
    }
    let splits = strategy.splits_for(view.targets())?;
    let strategy_repeats = strategy.repeats();
    let task = base
        .task
        .vector_kind()
        .ok_or_else(|| Error::unsupported("the built-in selection learns from tables"))?;
    let (_, y_all) = encode_targets(task, view.targets())?;
    let (_, xs) = prepare_rows(view.x(), view.feature_names(), view.len(), base.standardize)?;
    let fitted = fit_all(&kernels, &xs, view.feature_names(), base.seed)?;
    let all = kernel_matrices(&fitted, &xs, &base.memory)?;
    let names: Vec<String> = kernels.iter().map(|k| k.to_string()).collect();
    let gaussian: Vec<bool> = kernels
        .iter()
        .zip(&all)
        .map(|(k, m)| {
            matches!(k.kind, KernelKind::Rbf { .. })
                && k.features.is_none()
                && matches!(m, KernelMatrix::Dense(_))
        })
        .collect();
    let ps: Vec<f64> = cfg.p.map_or(P_GRID.to_vec(), |p| vec![p]);
    let classes = matches!(view.targets(), Targets::Classes { .. });
    let cands = cs::candidates(&names, &gaussian, classes, &ps);
    let all = SelectionKernels::new(all, &y_all)?;
    let folds: Vec<cs::Fold> = splits
        .iter()
        .map(|s| cs::Fold {
            kernels: FoldCuts::new(&all, s.train.clone(), s.validation.clone()),
            y: y_all.select_rows(&s.train),
            validation: view.targets().select(&s.validation),
            weights: view.select_weights(&s.train),
        })
        .collect();
    let problem = cs::Problem {
        folds: &folds,
        c_grid: &cfg.c_grid,
        task,
        bias: base.bias,
        goal,
        budget: cfg.budget,
        halving: cs::halving_applies(view.len()),
        partition: folds.len() / strategy_repeats.max(1),
        deadline: cfg
            .budget_seconds
            .map(|t| (start + std::time::Duration::from_secs_f64(t), t)),
        start,
    };
    let scores = cs::score(&cands, &problem, observer)?;
    let k = folds.len();
    drop(folds);
    let mut grid = Vec::new();
    let mut summary = Vec::new();
    for (cand, s) in cands.iter().zip(&scores) {
        let means = s.means(k);
        for (j, &c) in cfg.c_grid.iter().enumerate() {
            grid.push(GridScore {
                learner: if cand.hinge { "svm" } else { "lp-mkl" }.into(),
                setting: cand.setting(),
                c,
                mean: means[j],
            });
        }
        let best = best_point(
            &means
                .iter()
                .zip(&cfg.c_grid)
                .map(|(m, &c)| GridScore {
                    learner: String::new(),
                    setting: String::new(),
                    c,
                    mean: *m,
                })
                .collect::<Vec<_>>(),
            goal,
            metric,
        )
        .ok();
        let fold_scores: Vec<f64> = best
            .map(|j| s.scores[j].iter().flatten().copied().collect())
            .unwrap_or_default();
        let (mean, se) = if fold_scores.is_empty() {
            (None, None)
        } else {
            let (m, se) = cs::mean_se(&fold_scores);
            (Some(m), Some(se))
        };
        summary.push(crate::select::CandidateScore {
            name: cand.label.clone(),
            family: cand.family.name().into(),
            loss: if cand.hinge { "hinge" } else { "squared" }.into(),
            c: best.map(|j| cfg.c_grid[j]),
            mean,
            se,
            folds: fold_scores,
            fits: s.scores.iter().flatten().flatten().count(),
            stopped: s.stopped.clone(),
        });
    }
    let choice = if observer.should_stop() {
        None
    } else {
        Some(
            cs::one_se_choice(&cands, &scores, k, strategy_repeats, goal).ok_or_else(|| {
                Error::Numerical(format!(
                    "no candidate had a finite mean validation {metric}"
                ))
            })?,
        )
    };
    let (ci, cj, why) = choice.unwrap_or((0, 0, "stopped".into()));
    let cand = &cands[ci];
    let c = cfg.c_grid[cj];
    let (kind, spec) = match (cand.family, cand.hinge) {
        (Family::Single, false) => (
            LearnerKind::LpMkl,
            spec_for(base, LearnerKind::LpMkl, 2.0, c)
                .with_kernels(vec![kernels[cand.kernels.start].clone()]),
        ),
        (Family::Single, true) => (
            LearnerKind::SimpleMkl,
            spec_for(base, LearnerKind::SimpleMkl, 2.0, c)
                .with_kernels(vec![kernels[cand.kernels.start].clone()]),
        ),
        (Family::Uniform, _) => (
            LearnerKind::LpMkl,
            spec_for(base, LearnerKind::LpMkl, f64::INFINITY, c).with_kernels(kernels.clone()),
        ),
        (Family::Learned, _) => (
            LearnerKind::LpMkl,
            spec_for(base, LearnerKind::LpMkl, cand.p, c),
        ),
    };
    let select_seconds = start.elapsed().as_secs_f64();
    let record = SelectionRecord {
        method,
        metric: metric.into(),
        learner_choice,
        grid,
        chosen: Some(ci * cfg.c_grid.len() + cj),
        candidates: summary,
        why: Some(why),
    };
    refit(table, &spec, kind, record, select_seconds, observer)
}

/// The grid point with the best finite mean (ties to the first, [`crate::select::Rule`]).
pub(crate) fn best_point(grid: &[GridScore], goal: Goal, metric: &str) -> Result<usize> {
    let rule = crate::select::Rule {
        goal,
        ..crate::select::Rule::default()
    };
    rule.choose(grid.iter().map(|g| g.mean.unwrap_or(f64::NAN)))
        .ok_or_else(|| {
            Error::Numerical(format!(
                "no grid point had a finite mean validation {metric}"
            ))
        })
}

/// The selection repeats its k-fold cross-validation over [`SMALL_REPEATS`] partitions on
/// tables of at most this many rows (the same bound as successive halving's,
/// `super::candidates::HALVING_MIN_ROWS`). On so few rows one partition's luck decides
/// between candidates a standard error apart: a validation row is 0.8-1.7 points of a fold
/// on sonar or glass, and the candidates' fold scores are correlated through the shared
/// training rows. Averaging over several partitions lowers that variance of the estimate
/// (Kohavi 1995; Bouckaert & Frank 2004, who recommend 10 x 10 for comparing learners) at
/// the price of more fits, which are cheap here (n^3 solves on at most 400 training rows).
pub const REPEAT_MAX_ROWS: usize = 500;
/// The partitions of the repeated cross-validation on small tables ([`REPEAT_MAX_ROWS`]).
pub const SMALL_REPEATS: usize = 3;

/// The folds of the selection (module docs), or `None` when the table is too small for it:
/// `folds`-fold cross-validation (stratified for classes, lowered to the smallest class's
/// rows), repeated over [`SMALL_REPEATS`] partitions up to [`REPEAT_MAX_ROWS`] rows.
pub(crate) fn fold_rule(
    targets: &Targets,
    folds: usize,
    seed: u64,
) -> Option<(SplitStrategy, String)> {
    let repeats = if targets.len() <= REPEAT_MAX_ROWS {
        SMALL_REPEATS
    } else {
        1
    };
    let times = if repeats > 1 {
        format!("{repeats} x ")
    } else {
        String::new()
    };
    let why = if repeats > 1 {
        format!(
            " (repeated at {} rows, at most {REPEAT_MAX_ROWS})",
            targets.len()
        )
    } else {
        String::new()
    };
    match targets {
        Targets::Classes { classes, y } => {
            let mut count = vec![0usize; classes.len()];
            y.iter().for_each(|&c| count[c] += 1);
            let smallest = count.iter().copied().filter(|&c| c > 0).min().unwrap_or(0);
            let k = folds.min(smallest);
            (k >= 2).then(|| {
                let note = if k < folds {
                    format!(" (lowered from {folds}: a class has {smallest} rows)")
                } else {
                    String::new()
                };
                (
                    kfold_strategy(true, k, repeats, seed),
                    format!("{times}{k}-fold stratified cross-validation{note}{why}, seed {seed}"),
                )
            })
        }
        Targets::Real(y) => {
            let k = folds.min(y.len() / 2);
            (k >= 2).then(|| {
                (
                    kfold_strategy(false, k, repeats, seed),
                    format!("{times}{k}-fold cross-validation{why}, seed {seed}"),
                )
            })
        }
    }
}

/// `folds`-fold cross-validation (`stratified` for class labels), plain or repeated over
/// `repeats > 1` partitions.
fn kfold_strategy(stratified: bool, folds: usize, repeats: usize, seed: u64) -> SplitStrategy {
    match (stratified, repeats > 1) {
        (true, true) => SplitStrategy::RepeatedStratifiedKFold {
            folds,
            repeats,
            seed,
        },
        (true, false) => SplitStrategy::StratifiedKFold { folds, seed },
        (false, true) => SplitStrategy::RepeatedKFold {
            folds,
            repeats,
            seed,
        },
        (false, false) => SplitStrategy::KFold { folds, seed },
    }
}

/// The rows the online learner's and MKL-GOMP's grid is scored on: all of them up to
/// [`SELECT_MAX_ROWS`], else a seeded subsample of that many (stratified for classes), with
/// a note for the record.
fn subsample(targets: &Targets, seed: u64) -> (Option<Vec<usize>>, String) {
    let n = targets.len();
    if n <= SELECT_MAX_ROWS {
        return (None, String::new());
    }
    let fraction = SELECT_MAX_ROWS as f64 / n as f64;
    let (mut rows, _) = match targets {
        Targets::Classes { y, .. } => crate::data::split::stratified_split(y, fraction, seed),
        Targets::Real(_) => crate::data::split::random_split(n, fraction, seed),
    };
    rows.sort_unstable();
    let note = format!(", on a subsample of {} of the {n} rows", rows.len());
    (Some(rows), note)
}

/// `base` as the learner `kind` at C `c` (lp-MKL's `p`).
fn spec_for(base: &LearnerSpec, kind: LearnerKind, p: f64, c: f64) -> LearnerSpec {
    let mut spec = base.clone();
    if spec.learner.kind() != kind {
        spec.learner = Learner::default_for(kind);
    }
    if let Learner::LpMkl(l) = &mut spec.learner {
        *l = LpMklSpec { p };
    }
    spec.strength = Strength::C(c);
    spec
}

/// A fold's kernel matrices, cut from the matrices on all rows.
struct FoldKernels {
    train: Vec<KernelMatrix>,
    test: Vec<KernelMatrix>,
    y: Matrix,
    validation: Targets,
    /// The last kernel weights of each group (warm start along the C grid).
    theta: Vec<Option<Vec<f64>>>,
    /// The training rows' weights (`None`: unweighted).
    weights: Option<Vec<f64>>,
}

/// Mean validation scores of lp-MKL over `groups` x `c_grid` (groups outer; a group is a
/// run of the kernels, by index into the expanded list, and its p), the kernel matrices
/// computed once and each fold's C path warm-started (module docs).
fn lp_path_scores(
    table: TableRef<'_>,
    base: &LearnerSpec,
    groups: &[(Range<usize>, f64)],
    c_grid: &[f64],
    splits: &[Split],
    goal: Goal,
    stop: &dyn Observer,
) -> Result<Vec<Option<f64>>> {
    let checked = base.check()?;
    let specs = checked.kernels_for(table.n_features());
    let task = base
        .task
        .vector_kind()
        .ok_or_else(|| Error::unsupported("lp-MKL learns from tables"))?;
    let (_, y_all) = encode_targets(task, table.targets())?;
    let (_, xs) = prepare_rows(
        table.x(),
        table.feature_names(),
        table.len(),
        base.standardize,
    )?;
    let fitted = fit_all(&specs, &xs, table.feature_names(), base.seed)?;
    let all = kernel_matrices(&fitted, &xs, &base.memory)?;
    let path = LpPath {
        kernels: &all,
        y: &y_all,
        targets: table.targets(),
        task,
        bias: base.bias,
        weights: table.weights(),
    };
    path.scores(groups, c_grid, splits, goal, stop)
}

/// lp-MKL's warm-started C path on kernel matrices of all rows (the dictionary's, or the
/// caller's precomputed ones), scored by cross-validation.
pub(crate) struct LpPath<'a> {
    /// The kernel matrices on all rows.
    pub kernels: &'a [KernelMatrix],
    /// The encoded targets of all rows.
    pub y: &'a Matrix,
    pub targets: &'a Targets,
    pub task: crate::task::TaskKind,
    pub bias: bool,
    /// The row weights of all rows (`None`: unweighted); each fold's training rows take
    /// theirs, the validation scores are unweighted.
    pub weights: Option<&'a [f64]>,
}

impl LpPath<'_> {
    /// The mean validation score of every (group, C), group-major: `groups` are ranges of
    /// the kernel list with their p.
    pub(crate) fn scores(
        &self,
        groups: &[(Range<usize>, f64)],
        c_grid: &[f64],
        splits: &[Split],
        goal: Goal,
        stop: &dyn Observer,
    ) -> Result<Vec<Option<f64>>> {
        let (all, y_all, targets, task) = (self.kernels, self.y, self.targets, self.task);
        let mut sorted_c: Vec<usize> = (0..c_grid.len()).collect();
        sorted_c.sort_by(|&a, &b| c_grid[a].total_cmp(&c_grid[b]));
        // Candidates in path order: groups outer, C from small to large.
        let candidates: Vec<(usize, usize)> = (0..groups.len())
            .flat_map(|i| sorted_c.iter().map(move |&j| (i, j)))
            .collect();
        let sel = Search::new(&candidates, splits).goal(goal).run_warm(
            |s: &Split| -> Result<FoldKernels> {
                Ok(FoldKernels {
                    train: all.iter().map(|k| cut(k, &s.train, &s.train)).collect(),
                    test: all
                        .iter()
                        .map(|k| cut(k, &s.validation, &s.train))
                        .collect(),
                    y: y_all.select_rows(&s.train),
                    validation: targets.select(&s.validation),
                    theta: vec![None; groups.len()],
                    weights: self
                        .weights
                        .map(|w| s.train.iter().map(|&i| w[i]).collect()),
                })
            },
            |&(i, j): &(usize, usize), _s: &Split, w: &mut FoldKernels| -> Result<f64> {
                let (members, p) = &groups[i];
                let init = w.theta[i].as_ref().map(|t| {
                    let top = t.iter().cloned().fold(0.0, f64::max);
                    t.iter().map(|v| v.max(1e-6 * top)).collect()
                });
                let params = LpMklParams {
                    p: *p,
                    lambda: 1.0 / c_grid[j],
                    bias: self.bias,
                    tol: super::candidates::select_tol(*p),
                    init_theta: init,
                    ..LpMklParams::default()
                };
                let (train, test) = (&w.train[members.clone()], &w.test[members.clone()]);
                let (sol, _) = lp_mkl_weighted(train, &w.y, w.weights.as_deref(), &params, stop)?;
                let f = sol.decision(train, test)?;
                let pred = decode(task, &f)?;
                let (_, score) = prediction_metric(&pred, &w.validation);
                w.theta[i] = Some(sol.theta);
                Ok(score)
            },
            stop,
        )?;
        let mut out = vec![None; groups.len() * c_grid.len()];
        for (k, &(i, j)) in candidates.iter().enumerate() {
            out[i * c_grid.len() + j] = sel.mean(k).filter(|m| m.is_finite());
        }
        Ok(out)
    }
}

/// The best single kernel of the dictionary (`base`'s kernels, expanded) and its C, chosen
/// by the same cross-validation as [`fit_auto`] (kernel ridge regression on each kernel
/// alone: lp-MKL with one kernel), refitted on all rows: the baseline MKL has to beat.
pub(crate) fn fit_single_best(
    table: TableRef<'_>,
    checked: &CheckedSpec,
    cfg: &AutoConfig,
) -> Result<AutoFitted> {
    let start = Instant::now();
    let base = checked.spec();
    let kernels =
        crate::kernel::expand_specs(&checked.kernels_for(table.n_features()), table.n_features());
    let goal = if base.task == Task::Regression {
        Goal::Minimize
    } else {
        Goal::Maximize
    };
    let metric = if goal == Goal::Minimize {
        "mse"
    } else {
        "accuracy"
    };
    let (strategy, method) = fold_rule(table.targets(), cfg.folds, base.seed).ok_or_else(|| {
        Error::data("too few rows per class for cross-validation over single kernels")
    })?;
    let splits = strategy.splits_for(table.targets())?;
    let expanded = base.clone().with_kernels(kernels.clone());
    let groups: Vec<(Range<usize>, f64)> = (0..kernels.len()).map(|m| (m..m + 1, 2.0)).collect();
    let scores = lp_path_scores(table, &expanded, &groups, &cfg.c_grid, &splits, goal, &())?;
    let mut grid = Vec::new();
    for (m, k) in kernels.iter().enumerate() {
        for (j, &c) in cfg.c_grid.iter().enumerate() {
            grid.push(GridScore {
                learner: "lp-mkl".into(),
                setting: k.to_string(),
                c,
                mean: scores[m * cfg.c_grid.len() + j],
            });
        }
    }
    let chosen = best_point(&grid, goal, metric)?;
    let select_seconds = start.elapsed().as_secs_f64();
    let (m, c) = (
        chosen / cfg.c_grid.len(),
        cfg.c_grid[chosen % cfg.c_grid.len()],
    );
    let spec = spec_for(base, LearnerKind::LpMkl, 2.0, c).with_kernels(vec![kernels[m].clone()]);
    let record = SelectionRecord {
        method,
        metric: metric.into(),
        learner_choice: None,
        grid,
        chosen: Some(chosen),
        candidates: Vec::new(),
        why: None,
    };
    refit(
        table,
        &spec,
        LearnerKind::LpMkl,
        record,
        select_seconds,
        &(),
    )
}

#[cfg(test)]
mod tests;
