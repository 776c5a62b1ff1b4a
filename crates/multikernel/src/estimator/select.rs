//! Choosing a [`LearnerSpec`] by validation: every spec of a grid the caller builds (any
//! learners, any settings: `C` x kernel sets, lp-MKL's `p`, ...) trained on the training part
//! of every split of a table and scored on its validation part, the best mean chosen, and the
//! chosen spec refitted on all rows.
//!
//! - **Splits** come from a [`SplitStrategy`]: seeded k-fold, stratified k-fold, held out
//!   (plain or stratified), disjoint held-out parts, or splits made elsewhere.
//! - **Scores** are the model's own metric ([`Model::score_with`]): accuracy for class
//!   labels (maximized), mean squared error for values (minimized). Every spec must have the
//!   same kind of target.
//! - **Order and determinism**: all `(spec, split)` pairs are trained in parallel (rayon)
//!   by [`fit()`](crate::estimator::fit()), each on its own copy of the split's rows; the scores are
//!   collected and averaged in split order afterwards (`crate::select`), and ties go to the
//!   first spec in grid order, so the choice does not depend on the thread count. A spec
//!   whose learner runs on a time budget ([`crate::estimator::Budget::Seconds`]) is not
//!   reproducible, and so neither is a selection over it.
//! - **No warm starts at this level**: every evaluation is a fresh fit of a whole spec.
//!   Warm starts (a regularization path from large to small lambda, one greedy MKL-GOMP path
//!   scored at every length) need the learners' engines and their state, so they live one
//!   level down: [`crate::select::Search::run_warm`] and path-valued evaluations over the
//!   solvers, as `reproduce gomp` and `reproduce mirror-descent` use them.
//! - **Memory**: each spec's memory limit holds for one fit; fits run two or more at a time.
//! - **Run contract** ([`crate::run`]): the observer is polled before every evaluation and
//!   sees one step after each ([`StepUnit::Iteration`](crate::run::StepUnit), `total` = specs
//!   x splits); the fits inside an evaluation run without it, so a stop request takes effect
//!   between evaluations. A stopped selection is not an error: it comes back with
//!   [`RunStatus::Cancelled`], the specs scored on every split so far, and no refit. After a
//!   completed search the refit runs under the same observer, which sees its steps (epochs,
//!   iterations, kernels) and may stop it (the refit's own status is in
//!   [`Fitted::run`]).
//!
//! ```
//! use multikernel::prelude::*;
//! # let sonar = std::path::Path::new("../../data/uci/sonar.csv");
//! let data = read_table(sonar, None, TargetKind::Classes, None, None)?;
//! // A grid of C x kernel sets for the online learner, and lp-MKL over both kernels.
//! let kernel_sets: Vec<Vec<KernelSpec>> =
//!     vec![vec!["rbf".parse()?], vec!["linear:norm=trace".parse()?, "rbf".parse()?]];
//! let online = LearnerSpec::new(Task::Binary, Learner::Online(OnlineSpec::default()));
//! let mut specs: Vec<LearnerSpec> = Vec::new();
//! for c in [0.1, 10.0] {
//!     for k in &kernel_sets {
//!         specs.push(online.clone().with_kernels(k.clone()).with_c(c));
//!     }
//! }
//! specs.push(
//!     LearnerSpec::new(Task::Binary, Learner::LpMkl(LpMklSpec { p: 2.0 }))
//!         .with_kernels(kernel_sets[1].clone()),
//! );
//! let folds = SplitStrategy::StratifiedKFold { folds: 3, seed: 1 };
//! let sel = select_spec(&data, &specs, &folds, &())?;
//! assert_eq!((sel.metric, sel.status), ("accuracy", RunStatus::Completed));
//! for (i, spec) in specs.iter().enumerate() {
//!     let scores = sel.split_scores(i).unwrap(); // one accuracy per fold
//!     assert_eq!(scores.len(), 3);
//!     println!("{:?} {}: mean {:.3}", spec.strength, spec.learner.kind(), sel.mean(i).unwrap());
//! }
//! let best = sel.best.unwrap();
//! assert!(specs.iter().enumerate().all(|(i, _)| sel.mean(i) <= sel.mean(best)));
//! // The chosen spec, refitted on all 208 rows.
//! let fitted = sel.fitted.unwrap();
//! assert_eq!(sel.spec.as_ref(), Some(&specs[best]));
//! assert_eq!(fitted.model.predict(data.x.view())?.len(), data.len());
//! # Ok::<(), multikernel::Error>(())
//! ```
//!
//! [`Model::score_with`]: crate::model::Model::score_with

use super::fit::{fit_checked, TrainingData};
use super::fitted::Fitted;
use super::spec::{CheckedSpec, LearnerSpec, Task};
use crate::data::split::Split;
use crate::data::{Dataset, TableRef};
use crate::error::{Error, Result};
use crate::run::{Observer, RunStatus, StopOnly};
use crate::select::{Search, Selection};

pub use crate::select::{Goal, SplitStrategy};

/// A selection over learner specs (module docs): the specs, how to split, whether to refit.
#[derive(Debug, Clone)]
pub struct SpecSearch<'s> {
    specs: &'s [LearnerSpec],
    strategy: SplitStrategy,
    refit: bool,
}

/// What `SpecSearch::run` found: every score, the chosen spec and its model refitted on
/// all rows.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SpecSelection {
    /// [`RunStatus::Completed`], or [`RunStatus::Cancelled`] when the observer stopped the
    /// search before every evaluation ran.
    pub status: RunStatus,
    /// `accuracy` (class labels) or `mse` (values).
    pub metric: &'static str,
    /// [`Goal::Maximize`] for accuracy, [`Goal::Minimize`] for the MSE.
    pub goal: Goal,
    /// The splits every spec was scored on (row indices of the table).
    pub splits: Vec<Split>,
    /// Every score: one `crate::select::Entry` per spec scored on every split (its
    /// `candidate` is the spec's index), with the score on each split and their mean; the
    /// evaluations run and the seconds the search took.
    pub scores: Selection,
    /// Index of the chosen spec (the best mean; the first in grid order among equals).
    pub best: Option<usize>,
    /// The chosen spec, as given.
    pub spec: Option<LearnerSpec>,
    /// The chosen spec trained on all rows (`None` when the search was stopped, or refitting
    /// was turned off).
    pub fitted: Option<Fitted>,
}

impl SpecSelection {
    /// The mean validation score of spec `i` (if it was scored on every split).
    pub fn mean(&self, i: usize) -> Option<f64> {
        self.scores.mean(i)
    }

    /// The validation score of spec `i` on each split, in split order.
    pub fn split_scores(&self, i: usize) -> Option<&[f64]> {
        self.scores.entry(i, 0).map(|e| e.scores.as_slice())
    }
}

impl<'s> SpecSearch<'s> {
    /// A search over `specs` (grid order = tie order) on the splits `strategy` makes of the
    /// table's rows; the chosen spec is refitted on all rows.
    pub(crate) fn new(specs: &'s [LearnerSpec], strategy: SplitStrategy) -> SpecSearch<'s> {
        SpecSearch {
            specs,
            strategy,
            refit: true,
        }
    }

    /// Whether to train the chosen spec on all rows afterwards (default: yes).
    pub(crate) fn refit(mut self, refit: bool) -> SpecSearch<'s> {
        self.refit = refit;
        self
    }

    /// Scores every spec on every split of `data` (a table) and chooses. Refuses, before any
    /// training: no specs, a spec that does not pass [`LearnerSpec::check`] (its error), specs
    /// of the sequence task or of different kinds of target, sequences for data, an empty
    /// table, splits the strategy cannot make. An evaluation's error (e.g. class labels for
    /// a regression spec, a memory refusal) stops the search and is returned as it is; so
    /// is a completed search in which no spec had a finite mean score
    /// ([`Error::Numerical`]).
    pub(crate) fn run<'a>(
        &self,
        data: impl Into<TrainingData<'a>>,
        observer: &dyn Observer,
    ) -> Result<SpecSelection> {
        if self.specs.is_empty() {
            return Err(Error::param("candidates", 0, "at least one learner spec"));
        }
        let checked: Vec<CheckedSpec> = self
            .specs
            .iter()
            .map(LearnerSpec::check)
            .collect::<Result<_>>()?;
        let (metric, goal) = metric_of(self.specs)?;
        let table = match data.into() {
            TrainingData::Table(t) => t,
            _ => {
                return Err(Error::unsupported(
                    "selection over learner specs scores the rows of a table; sequences are \
                     not supported",
                ))
            }
        };
        if table.is_empty() {
            return Err(Error::data("the table has no rows"));
        }
        let splits = self.strategy.splits_for(table.targets())?;
        let scores = Search::new(&checked, &splits).goal(goal).run(
            |spec: &CheckedSpec, split: &Split| -> Result<f64> {
                let train = rows(table, &split.train);
                let train_weights = table.select_weights(&split.train);
                let validation = rows(table, &split.validation);
                // A request to stop also ends the evaluation under way.
                let stop = StopOnly(observer);
                let view = weighted_view(&train, train_weights.as_deref())?;
                let fitted = fit_checked(TrainingData::Table(view), None, spec, &stop)?;
                let score = fitted.model.score_with(
                    validation.x.view(),
                    &validation.targets,
                    &spec.memory,
                )?;
                Ok(score.value)
            },
            observer,
        )?;
        let best = scores.best().map(|e| e.candidate);
        let fitted = match (scores.status, best) {
            (RunStatus::Cancelled, _) => None,
            (_, None) => {
                return Err(Error::Numerical(format!(
                    "none of the {} learner specs had a finite mean validation {metric}",
                    self.specs.len()
                )))
            }
            (_, Some(b)) if self.refit => Some(fit_checked(
                TrainingData::Table(table),
                None,
                &checked[b],
                observer,
            )?),
            _ => None,
        };
        Ok(SpecSelection {
            status: scores.status,
            metric,
            goal,
            splits,
            best,
            spec: best.map(|b| self.specs[b].clone()),
            fitted,
            scores,
        })
    }
}

/// Chooses among `specs` by the validation splits `strategy` makes of `data`, refits the
/// chosen one on all rows ([`SpecSearch`] with its defaults; see the module docs).
pub fn select_spec<'a>(
    data: impl Into<TrainingData<'a>>,
    specs: &[LearnerSpec],
    strategy: &SplitStrategy,
    observer: &dyn Observer,
) -> Result<SpecSelection> {
    SpecSearch::new(specs, strategy.clone()).run(data, observer)
}

/// The metric every spec's model is scored by, and whether larger is better.
fn metric_of(specs: &[LearnerSpec]) -> Result<(&'static str, Goal)> {
    let values = |t: Task| t == Task::Regression;
    for (i, s) in specs.iter().enumerate() {
        if s.task == Task::Sequence || s.task == Task::Parsing {
            return Err(Error::unsupported(format!(
                "learner spec {i} is for the {} task; selection over specs scores the rows \
                 of a table (binary, multiclass, regression)",
                s.task
            )));
        }
        if values(s.task) != values(specs[0].task) {
            return Err(Error::param(
                "task",
                format!("{} (spec {i}) beside {} (spec 0)", s.task, specs[0].task),
                "one kind of target for every spec: class labels (binary, multiclass) or \
                 values (regression)",
            ));
        }
    }
    Ok(if values(specs[0].task) {
        ("mse", Goal::Minimize)
    } else {
        ("accuracy", Goal::Maximize)
    })
}

/// A copied table's view with the weights of its rows (`None`: unweighted).
pub(super) fn weighted_view<'a>(
    data: &'a Dataset,
    weights: Option<&'a [f64]>,
) -> Result<TableRef<'a>> {
    match weights {
        Some(w) => data.view().with_weights(w),
        None => Ok(data.view()),
    }
}

/// The rows `idx` of a table, copied.
pub(super) fn rows(table: TableRef<'_>, idx: &[usize]) -> Dataset {
    Dataset {
        x: table.x().select_rows(idx),
        targets: table.targets().select(idx),
        feature_names: table.feature_names().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Matrix, SequenceData, Targets};
    use crate::estimator::fit;
    use crate::estimator::spec::{GompSpec, Learner, LpMklSpec, OnlineSpec};
    use crate::kernel::MemoryLimit;
    use crate::run::{Control, Progress, StepUnit, StopFlag};
    use crate::solver::online::OnlineSteps;
    use std::sync::Mutex;

    /// `n` rows of two features on a grid-like pattern; the class is inside / outside a
    /// circle (with a few labels flipped), the value a smooth function plus a wobble.
    fn table(n: usize, classes: bool) -> Dataset {
        let mut x = Vec::with_capacity(2 * n);
        let mut y = Vec::with_capacity(n);
        let mut v = Vec::with_capacity(n);
        for i in 0..n {
            let a = ((i * 37) % 101) as f64 / 50.0 - 1.0;
            let b = ((i * 53) % 97) as f64 / 48.0 - 1.0;
            x.extend_from_slice(&[a, b]);
            let inside = a * a + b * b < 0.6;
            y.push(usize::from(inside != (i % 13 == 0)));
            v.push(a * a - b + 0.2 * (((i * 7) % 11) as f64 / 11.0 - 0.5));
        }
        Dataset {
            x: Matrix::from_vec(n, 2, x),
            targets: if classes {
                Targets::Classes {
                    classes: vec!["out".into(), "in".into()],
                    y,
                }
            } else {
                Targets::Real(v)
            },
            feature_names: vec!["a".into(), "b".into()],
        }
    }

    /// The bits of a model's decision values on `data`: what the model computes. (Not its
    /// bytes: the online learner records the final objective in the model, summed over the
    /// examples in parallel, so its last bit may change with the thread count.)
    fn decisions(model: &crate::model::Model, data: &Dataset) -> Vec<u64> {
        let f = model.decision_function(data.x.view()).unwrap();
        f.data.iter().map(|v| v.to_bits()).collect()
    }

    fn online(task: Task, kernels: &[&str], c: f64) -> LearnerSpec {
        let o = OnlineSpec {
            steps: OnlineSteps {
                epochs: 5,
                ..OnlineSteps::default()
            },
            ..OnlineSpec::default()
        };
        LearnerSpec::new(task, Learner::Online(o))
            .with_kernels(kernels.iter().map(|k| k.parse().unwrap()).collect())
            .with_c(c)
    }

    /// Binary: the online learner over C x kernel sets, and lp-MKL.
    fn binary_grid() -> Vec<LearnerSpec> {
        let mut g = Vec::new();
        for c in [0.01, 1.0, 100.0] {
            for k in [&["linear"][..], &["rbf"], &["linear", "rbf"]] {
                g.push(online(Task::Binary, k, c));
            }
        }
        g.push(
            LearnerSpec::new(Task::Binary, Learner::LpMkl(LpMklSpec { p: 2.0 }))
                .with_kernels(vec!["rbf".parse().unwrap(), "linear".parse().unwrap()]),
        );
        g
    }

    /// Regression: lp-MKL over C, MKL-GOMP, the online learner.
    fn regression_grid() -> Vec<LearnerSpec> {
        let mut g: Vec<LearnerSpec> = [0.01, 1.0, 100.0]
            .iter()
            .map(|&c| {
                LearnerSpec::new(Task::Regression, Learner::LpMkl(LpMklSpec { p: 1.5 }))
                    .with_kernels(vec!["rbf".parse().unwrap(), "linear".parse().unwrap()])
                    .with_c(c)
            })
            .collect();
        g.push(LearnerSpec::new(
            Task::Regression,
            Learner::Gomp(GompSpec::default()),
        ));
        g.push(online(Task::Regression, &["rbf"], 10.0));
        g
    }

    /// The explicit double loop the selection stands for: specs outer, splits inner, each a
    /// fit on the training rows scored on the validation rows, means summed in split order
    /// then divided, the first strict improvement kept.
    fn explicit_loop(data: &Dataset, specs: &[LearnerSpec], splits: &[Split]) -> (usize, Vec<f64>) {
        let maximize = specs[0].task != Task::Regression;
        let mut means = Vec::new();
        let mut best: Option<(usize, f64)> = None;
        for (i, spec) in specs.iter().enumerate() {
            let mut total = 0.0;
            for s in splits {
                let train = data.select(&s.train);
                let val = data.select(&s.validation);
                let model = fit(&train, spec, &()).unwrap().model;
                let score = model
                    .score_with(val.x.view(), &val.targets, &MemoryLimit::default())
                    .unwrap();
                total += score.value;
            }
            let mean = total / splits.len() as f64;
            means.push(mean);
            let better = best.is_none_or(|(_, b)| if maximize { mean > b } else { mean < b });
            if better {
                best = Some((i, mean));
            }
        }
        (best.unwrap().0, means)
    }

    #[test]
    fn chooses_what_an_explicit_loop_chooses() {
        let cases = [
            (
                table(90, true),
                binary_grid(),
                SplitStrategy::StratifiedKFold { folds: 3, seed: 4 },
            ),
            (
                table(80, false),
                regression_grid(),
                SplitStrategy::KFold { folds: 4, seed: 2 },
            ),
            (
                table(70, true),
                binary_grid(),
                SplitStrategy::HeldOut {
                    train_fraction: 0.7,
                    seed: 9,
                },
            ),
        ];
        for (data, specs, strategy) in cases {
            let sel = select_spec(&data, &specs, &strategy, &()).unwrap();
            let splits = strategy.splits_for(&data.targets).unwrap();
            assert_eq!(sel.splits, splits);
            let (want, means) = explicit_loop(&data, &specs, &splits);
            assert_eq!(sel.status, RunStatus::Completed);
            assert_eq!(sel.scores.evaluations, specs.len() * splits.len());
            for (i, m) in means.iter().enumerate() {
                assert_eq!(sel.mean(i).unwrap().to_bits(), m.to_bits(), "spec {i}");
                assert_eq!(sel.split_scores(i).unwrap().len(), splits.len());
            }
            assert_eq!(sel.best, Some(want));
            assert_eq!(sel.spec.as_ref(), Some(&specs[want]));
            let regression = specs[0].task == Task::Regression;
            assert_eq!(sel.metric, if regression { "mse" } else { "accuracy" });
            // The refit is the chosen spec trained on every row.
            let refit = fit(&data, &specs[want], &()).unwrap();
            let fitted = sel.fitted.as_ref().unwrap();
            assert_eq!(
                decisions(&fitted.model, &data),
                decisions(&refit.model, &data)
            );
            // The grid is not flat: the selection had something to choose.
            let lo = means.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = means.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            assert!(hi > lo, "{means:?}");
        }
    }

    #[test]
    fn ties_go_to_the_first_spec_and_refit_can_be_skipped() {
        let data = table(60, true);
        let spec = online(Task::Binary, &["rbf"], 1.0);
        let specs = vec![spec.clone(), spec.clone().with_c(1e3), spec];
        let strategy = SplitStrategy::KFold { folds: 3, seed: 1 };
        let sel = SpecSearch::new(&specs, strategy)
            .refit(false)
            .run(&data, &())
            .unwrap();
        // Specs 0 and 2 are the same: equal means; the later one never wins.
        assert_eq!(
            sel.mean(0).unwrap().to_bits(),
            sel.mean(2).unwrap().to_bits()
        );
        assert_ne!(sel.best, Some(2));
        assert!(sel.fitted.is_none() && sel.spec.is_some());
    }

    #[test]
    fn same_choice_whatever_the_thread_count() {
        let data = table(90, true);
        let specs = binary_grid();
        let strategy = SplitStrategy::StratifiedKFold { folds: 3, seed: 11 };
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let sel = select_spec(&data, &specs, &strategy, &()).unwrap();
                let bits: Vec<Vec<u64>> = sel
                    .scores
                    .entries
                    .iter()
                    .map(|e| {
                        e.scores
                            .iter()
                            .chain([&e.mean])
                            .map(|v| v.to_bits())
                            .collect()
                    })
                    .collect();
                (sel.best, bits, decisions(&sel.fitted.unwrap().model, &data))
            })
        };
        let one = run(1);
        for threads in [2, 3] {
            let other = run(threads);
            assert_eq!(other.0, one.0, "best, {threads} threads");
            for (i, (a, b)) in one.1.iter().zip(&other.1).enumerate() {
                assert_eq!(a, b, "scores of spec {i}, {threads} threads");
            }
            assert!(other.2 == one.2, "the refitted model, {threads} threads");
        }
    }

    #[test]
    fn the_observer_stops_the_selection_between_evaluations() {
        let data = table(60, true);
        let specs = binary_grid();
        let strategy = SplitStrategy::StratifiedKFold { folds: 3, seed: 1 };
        // A flag set before: nothing is trained, nothing refitted, no error.
        let flag = StopFlag::new();
        flag.stop();
        let sel = select_spec(&data, &specs, &strategy, &flag).unwrap();
        assert_eq!(sel.status, RunStatus::Cancelled);
        assert_eq!(sel.scores.evaluations, 0);
        assert!(sel.best.is_none() && sel.fitted.is_none() && sel.scores.entries.is_empty());
        // Stop after the 7th evaluation; on one thread the specs run in grid order, split by
        // split, so specs 0 and 1 were scored on every split and spec 2 on one.
        let seen = Mutex::new(Vec::new());
        let obs = |p: &Progress| {
            seen.lock().unwrap().push((p.step, p.unit));
            if p.step >= 7 {
                Control::Stop
            } else {
                Control::Continue
            }
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let sel = pool.install(|| select_spec(&data, &specs, &strategy, &obs).unwrap());
        assert_eq!(sel.status, RunStatus::Cancelled);
        assert_eq!(sel.scores.evaluations, 7);
        assert_eq!(
            *seen.lock().unwrap(),
            (1..=7)
                .map(|s| (s, StepUnit::Iteration))
                .collect::<Vec<_>>()
        );
        let complete: Vec<usize> = sel.scores.entries.iter().map(|e| e.candidate).collect();
        assert_eq!(complete, [0, 1]);
        assert!(sel.best.is_some_and(|b| b < 2));
        assert!(sel.fitted.is_none());
        // A completed search: one step per evaluation, then the refit's own steps.
        let seen = Mutex::new(Vec::new());
        let obs = |p: &Progress| {
            seen.lock().unwrap().push(p.unit);
            Control::Continue
        };
        let online_only = &specs[..3];
        let sel = select_spec(&data, online_only, &strategy, &obs).unwrap();
        let units = seen.into_inner().unwrap();
        let evals = online_only.len() * 3;
        assert!(units[..evals].iter().all(|u| *u == StepUnit::Iteration));
        assert_eq!(units[evals..], [StepUnit::Epoch; 5]);
        assert_eq!(sel.fitted.unwrap().run.steps, 5);
    }

    #[test]
    fn bad_inputs_are_refused_before_any_training() {
        let data = table(40, true);
        let strategy = SplitStrategy::KFold { folds: 2, seed: 0 };
        let steps = Mutex::new(0);
        let count = |_: &Progress| {
            *steps.lock().unwrap() += 1;
            Control::Continue
        };
        let param = |r: Result<SpecSelection>| match r {
            Err(Error::InvalidParameter { name, .. }) => name,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            param(select_spec(&data, &[], &strategy, &count)),
            "candidates"
        );
        let bad = vec![
            online(Task::Binary, &["rbf"], 1.0),
            online(Task::Binary, &["rbf"], -1.0),
        ];
        assert_eq!(param(select_spec(&data, &bad, &strategy, &count)), "C");
        let mixed = vec![
            online(Task::Binary, &["rbf"], 1.0),
            online(Task::Regression, &["rbf"], 1.0),
        ];
        assert_eq!(param(select_spec(&data, &mixed, &strategy, &count)), "task");
        let folds = SplitStrategy::KFold { folds: 1, seed: 0 };
        let one = [online(Task::Binary, &["rbf"], 1.0)];
        assert_eq!(param(select_spec(&data, &one, &folds, &count)), "folds");
        // Stratified splits of values, sequences, the sequence task, an empty table.
        let values = table(40, false);
        let reg = [online(Task::Regression, &["rbf"], 1.0)];
        let strat = SplitStrategy::StratifiedKFold { folds: 2, seed: 0 };
        let e = select_spec(&values, &reg, &strat, &count).unwrap_err();
        assert!(matches!(e, Error::Data(_)), "{e}");
        let words = SequenceData {
            x: Matrix::zeros(2, 1),
            labels: vec![0, 1],
            spans: std::iter::once(0..2).collect(),
            label_names: vec!["a".into(), "b".into()],
            feature_names: vec!["f".into()],
            folds: None,
        };
        let e = select_spec(&words, &one, &strategy, &count).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{e}");
        let seq = [online(Task::Sequence, &["linear"], 1.0)];
        let e = select_spec(&data, &seq, &strategy, &count).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{e}");
        let empty = data.select(&[]);
        let e = select_spec(&empty, &one, &strategy, &count).unwrap_err();
        assert!(matches!(e, Error::Data(_)), "{e}");
        assert_eq!(*steps.lock().unwrap(), 0, "nothing was trained");
        // An evaluation's error is returned as it is: class labels for a regression spec.
        let e = select_spec(&data, &reg, &strategy, &count).unwrap_err();
        assert!(matches!(e, Error::Data(_)), "{e}");
    }
}
