//! Model selection: every candidate of a grid scored on every validation split, the scores
//! averaged per candidate, the best mean chosen.
//!
//! The papers pick their hyper-parameters this way: C by 5-fold cross-validation (Martins et
//! al. 2011, Table 1), the ridge on a validation set (Afkanpour et al. 2013, Sec. 5), lambda
//! and the number of kernels of MKL-GOMP on a validation set (Sindhwani and Lozano 2012,
//! Sec. 4). This module is the one loop behind all of them:
//!
//! - **Splits** are the caller's: any slice of any type (`(train, validation)` index pairs, a
//!   fold's precomputed kernel matrices, a fixed validation set). [`SplitStrategy`] makes the
//!   usual ones (seeded k-fold, stratified k-fold, held-out, disjoint held-out parts), so
//!   each experiment keeps its own splits and therefore its numbers.
//! - **Candidates** are any type: learner specs, tuples of hyper-parameters. An evaluation
//!   may score a whole *path* of settings at once (GOMP's number of kernels after one greedy
//!   run): it then returns one score per point of the path, and every `(candidate, point)`
//!   competes.
//! - **Order** ([`Search::run`]): candidates x splits in parallel (rayon). [`Search::run_warm`]:
//!   within a split the candidates in grid order, each evaluation handed the warm-start state
//!   the previous one left (a regularization path from large to small lambda), the splits in
//!   parallel. [`Search::run_split_by_split`]: one split at a time with a context built for
//!   it (kernel matrices too large to hold for every split at once), its candidates in
//!   parallel.
//! - **Determinism**: scores are collected in grid order and averaged in split order after all
//!   evaluations ran, so the selection does not depend on the thread count. The mean is
//!   [`Mean::Arithmetic`] (summed in split order, then divided), [`Mean::Shares`] (each score
//!   divided, then summed) or [`Mean::Weighted`]: the exact arithmetic of the loops this
//!   replaced. The choice scans `(candidate, point)` in grid order under a [`Rule`]: maximize
//!   or minimize, a tolerance an improvement must exceed, and ties to the first or the last;
//!   non-finite means are never chosen.
//! - **Run contract** ([`crate::run`]): the observer is polled before every evaluation and told
//!   after each one ([`StepUnit::Iteration`], one step an evaluation); when it asks to stop, no
//!   further evaluation starts and the selection comes back with [`RunStatus::Cancelled`] and
//!   the candidates that were scored on every split. An evaluation's error stops the search
//!   and is returned as it is.
//!
//! ```
//! use multikernel::data::split::Split;
//! use multikernel::engine::select::{Search, SplitStrategy};
//!
//! // Ridge regression through the origin, w = sum(x y) / (sum(x x) + lambda), on y = 3x +- 1.
//! let x: Vec<f64> = (1..=20).map(f64::from).collect();
//! let y: Vec<f64> = x.iter().enumerate().map(|(i, v)| 3.0 * v + [1.0, -1.0][i % 2]).collect();
//! let lambdas = [1e4, 1e2, 1.0, 0.0];
//! let folds = SplitStrategy::KFold { folds: 4, seed: 7 }.splits(x.len(), None)?;
//! let sel = Search::new(&lambdas, &folds).minimize().run(
//!     |&lambda, fold: &Split| {
//!         let (sxy, sxx) = fold.train.iter().fold((0.0, 0.0), |(a, b), &i| {
//!             (a + x[i] * y[i], b + x[i] * x[i])
//!         });
//!         let w = sxy / (sxx + lambda);
//!         let sse: f64 = fold.validation.iter().map(|&i| (y[i] - w * x[i]).powi(2)).sum();
//!         Ok(sse / fold.validation.len() as f64) // validation MSE
//!     },
//!     &(),
//! )?;
//! let best = sel.best().expect("a finite score");
//! assert_eq!(best.scores.len(), 4); // one score per fold
//! assert!(lambdas[best.candidate] <= 1.0); // heavy shrinkage loses
//! assert!(best.mean <= sel.mean(0).unwrap());
//! # Ok::<(), multikernel::Error>(())
//! ```

use crate::data::split::{
    held_out_parts, kfold, random_split, stratified_kfold, stratified_split, Split,
};
use crate::data::Targets;
use crate::error::{Error, Result};
use crate::run::{Control, Observer, Progress, RunStatus, StepUnit};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Whether a larger or a smaller mean score is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Goal {
    /// Accuracy, F1, ...
    #[default]
    Maximize,
    /// Error rate, MSE, ...
    Minimize,
}

/// Which of equally good candidates wins (within the `Rule`'s tolerance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ties {
    /// The first in grid order.
    #[default]
    First,
    /// The last in grid order (e.g. the largest ridge of an increasing grid).
    Last,
}

/// How one candidate's scores over the splits are averaged. All sum in split order.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub enum Mean {
    /// `(s_1 + ... + s_k) / k`.
    #[default]
    Arithmetic,
    /// `s_1 / k + ... + s_k / k` (the same number up to rounding).
    Shares,
    /// `(s_1 w_1 + ... + s_k w_k) / (w_1 + ... + w_k)`, one positive weight a split (e.g.
    /// the items in its validation part, which pools the validation parts).
    Weighted(Vec<f64>),
}

impl Mean {
    fn check(&self, splits: usize) -> Result<()> {
        if let Mean::Weighted(w) = self {
            if w.len() != splits {
                return Err(Error::shape("weights of the splits", splits, w.len()));
            }
            if let Some(bad) = w.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
                return Err(Error::param(
                    "weights",
                    bad,
                    "finite positive numbers, one a split",
                ));
            }
        }
        Ok(())
    }

    /// The mean of one candidate's scores, given in split order.
    fn of(&self, scores: &[f64]) -> f64 {
        let k = scores.len() as f64;
        match self {
            Mean::Arithmetic => {
                let mut total = 0.0;
                for s in scores {
                    total += s;
                }
                total / k
            }
            Mean::Shares => {
                let mut total = 0.0;
                for s in scores {
                    total += s / k;
                }
                total
            }
            Mean::Weighted(w) => {
                let (mut total, mut weight) = (0.0, 0.0);
                for (s, w) in scores.iter().zip(w) {
                    total += s * w;
                    weight += w;
                }
                total / weight
            }
        }
    }
}

/// How the best of a list of mean scores is chosen: the scan keeps the first finite value
/// and replaces it by a later one that [`Rule::improves`] on it. Non-finite values (NaN, a
/// diverged run's infinity) are never chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    pub goal: Goal,
    pub ties: Ties,
    /// How much a later value must beat the current best by (0: any strict improvement;
    /// with [`Ties::Last`]: how much worse it may be and still win).
    pub tolerance: f64,
}

impl Default for Rule {
    fn default() -> Rule {
        Rule {
            goal: Goal::Maximize,
            ties: Ties::First,
            tolerance: 0.0,
        }
    }
}

impl Rule {
    fn check(&self) -> Result<()> {
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            return Err(Error::param(
                "tolerance",
                self.tolerance,
                "a finite number >= 0",
            ));
        }
        Ok(())
    }

    /// Whether `value`, later in grid order, replaces the current `best`:
    /// maximize, ties first: `value > best + tolerance`; maximize, ties last:
    /// `value >= best - tolerance`; minimize, ties first: `value < best - tolerance`;
    /// minimize, ties last: `value <= best + tolerance`.
    pub(crate) fn improves(&self, value: f64, best: f64) -> bool {
        let t = self.tolerance;
        match (self.goal, self.ties) {
            (Goal::Maximize, Ties::First) => value > best + t,
            (Goal::Maximize, Ties::Last) => value >= best - t,
            (Goal::Minimize, Ties::First) => value < best - t,
            (Goal::Minimize, Ties::Last) => value <= best + t,
        }
    }

    /// The position of the best finite value in `values` (`None` when none is finite).
    pub(crate) fn choose(&self, values: impl IntoIterator<Item = f64>) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for (i, v) in values.into_iter().enumerate() {
            if !v.is_finite() {
                continue;
            }
            if best.is_none_or(|(_, b)| self.improves(v, b)) {
                best = Some((i, v));
            }
        }
        best.map(|(i, _)| i)
    }
}

/// What an evaluation returns: its score (or one score per point of a path) and, optionally,
/// an output kept in [`Selection::outputs`] (the fitted model, its test score, its seconds).
pub trait Evaluation: Send {
    type Output: Send;
    /// The scores (at least one) and the output.
    fn into_parts(self) -> (Vec<f64>, Self::Output);
}

impl Evaluation for f64 {
    type Output = ();
    fn into_parts(self) -> (Vec<f64>, ()) {
        (vec![self], ())
    }
}

impl Evaluation for Vec<f64> {
    type Output = ();
    fn into_parts(self) -> (Vec<f64>, ()) {
        (self, ())
    }
}

impl<T: Send> Evaluation for (f64, T) {
    type Output = T;
    fn into_parts(self) -> (Vec<f64>, T) {
        (vec![self.0], self.1)
    }
}

impl<T: Send> Evaluation for (Vec<f64>, T) {
    type Output = T;
    fn into_parts(self) -> (Vec<f64>, T) {
        self
    }
}

/// One point of the grid scored on every split.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Index of the candidate in the grid.
    pub candidate: usize,
    /// Point of the candidate's path (0 for an evaluation that returns one score).
    pub point: usize,
    /// The score on each split, in split order.
    pub scores: Vec<f64>,
    /// The scores' [`Mean`].
    pub mean: f64,
}

/// Every score of a search and the chosen candidate.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Selection<T = ()> {
    /// [`RunStatus::Completed`], or [`RunStatus::Cancelled`] when the observer stopped the
    /// search before every evaluation ran.
    pub status: RunStatus,
    /// The rule the best was chosen by (also used by [`Selection::best_where`]).
    pub rule: Rule,
    /// Candidates in the grid and splits searched.
    pub candidates: usize,
    pub splits: usize,
    /// Evaluations that ran.
    pub evaluations: usize,
    /// Wall-clock seconds of the search.
    pub seconds: f64,
    /// The `(candidate, point)`s scored on every split, in grid order (candidate, then point).
    /// When the search completed, every candidate is here.
    pub entries: Vec<Entry>,
    /// Index into [`Selection::entries`] of the best mean (`None` when no mean is finite).
    pub best: Option<usize>,
    /// `outputs[candidate][split]`: what each evaluation returned besides its scores (`None`
    /// where it did not run).
    pub outputs: Vec<Vec<Option<T>>>,
}

impl<T> Selection<T> {
    /// The chosen entry.
    pub fn best(&self) -> Option<&Entry> {
        self.best.map(|i| &self.entries[i])
    }

    /// The best entry among those `keep` accepts, by the same rule (e.g. one of several
    /// learners searched together over shared splits: the entries of its candidates).
    pub fn best_where(&self, keep: impl Fn(&Entry) -> bool) -> Option<&Entry> {
        let kept: Vec<&Entry> = self.entries.iter().filter(|e| keep(e)).collect();
        self.rule
            .choose(kept.iter().map(|e| e.mean))
            .map(|i| kept[i])
    }

    /// The entry of `(candidate, point)`, if it was scored on every split.
    pub(crate) fn entry(&self, candidate: usize, point: usize) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.candidate == candidate && e.point == point)
    }

    /// The mean score of `candidate` (its first point), if it was scored on every split.
    pub fn mean(&self, candidate: usize) -> Option<f64> {
        self.entry(candidate, 0).map(|e| e.mean)
    }

    /// What the evaluation of `candidate` on `split` returned besides its scores.
    pub(crate) fn output(&self, candidate: usize, split: usize) -> Option<&T> {
        self.outputs.get(candidate)?.get(split)?.as_ref()
    }

    /// The output of the chosen candidate on `split`.
    pub fn best_output(&self, split: usize) -> Option<&T> {
        self.output(self.best()?.candidate, split)
    }
}

/// A grid search over `candidates` x `splits` (see the module docs). Defaults: maximize,
/// [`Mean::Arithmetic`], ties to the first, no tolerance.
#[derive(Debug)]
pub struct Search<'a, C, S> {
    candidates: &'a [C],
    splits: &'a [S],
    rule: Rule,
    mean: Mean,
}

impl<C, S> Clone for Search<'_, C, S> {
    fn clone(&self) -> Self {
        Search {
            candidates: self.candidates,
            splits: self.splits,
            rule: self.rule,
            mean: self.mean.clone(),
        }
    }
}

/// One evaluation's result: `None` when it did not run (cancelled, or stopped by another
/// evaluation's error).
type Cell<T> = Option<Result<(Vec<f64>, T)>>;

/// Shared state of a running search: the observer, the stop flag, the step count.
struct Runner<'o> {
    observer: &'o dyn Observer,
    stop: AtomicBool,
    done: AtomicU64,
    total: u64,
    start: Instant,
}

impl Runner<'_> {
    /// Whether the next evaluation may start.
    fn go(&self) -> bool {
        if self.stop.load(Ordering::SeqCst) {
            return false;
        }
        if self.observer.should_stop() {
            self.stop.store(true, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// Runs one evaluation unless the search is stopping, and reports it.
    fn eval<E: Evaluation>(&self, f: impl FnOnce() -> Result<E>) -> Cell<E::Output> {
        if !self.go() {
            return None;
        }
        match f() {
            Ok(e) => {
                let step = self.done.fetch_add(1, Ordering::SeqCst) + 1;
                let p = Progress {
                    step,
                    total: Some(self.total),
                    unit: StepUnit::Iteration,
                    objective: None,
                    seconds: self.start.elapsed().as_secs_f64(),
                };
                if self.observer.progress(&p) == Control::Stop {
                    self.stop.store(true, Ordering::SeqCst);
                }
                Some(Ok(e.into_parts()))
            }
            Err(e) => {
                self.stop.store(true, Ordering::SeqCst);
                Some(Err(e))
            }
        }
    }
}

impl<'a, C: Sync, S: Sync> Search<'a, C, S> {
    /// A search of `candidates` (grid order = tie order) on `splits` (split order = the order
    /// means are summed in).
    pub fn new(candidates: &'a [C], splits: &'a [S]) -> Self {
        Search {
            candidates,
            splits,
            rule: Rule::default(),
            mean: Mean::default(),
        }
    }

    /// Whether larger or smaller mean scores are better.
    pub fn goal(mut self, goal: Goal) -> Self {
        self.rule.goal = goal;
        self
    }

    /// Larger scores are better (the default).
    pub fn maximize(self) -> Self {
        self.goal(Goal::Maximize)
    }

    /// Smaller scores are better.
    pub fn minimize(self) -> Self {
        self.goal(Goal::Minimize)
    }

    /// Which of equally good candidates wins (the first in grid order by default).
    pub fn ties(mut self, ties: Ties) -> Self {
        self.rule.ties = ties;
        self
    }

    /// How much a later mean must beat the best so far by (see [`Rule::improves`]).
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.rule.tolerance = tolerance;
        self
    }

    /// How a candidate's scores over the splits are averaged.
    pub fn mean(mut self, mean: Mean) -> Self {
        self.mean = mean;
        self
    }

    /// Refuses an empty grid, no splits, weights that do not fit, a bad tolerance.
    fn check(&self) -> Result<()> {
        if self.candidates.is_empty() {
            return Err(Error::param("candidates", 0, "at least one candidate"));
        }
        if self.splits.is_empty() {
            return Err(Error::param("splits", 0, "at least one split"));
        }
        self.mean.check(self.splits.len())?;
        self.rule.check()
    }

    fn runner<'o>(&self, observer: &'o dyn Observer) -> Runner<'o> {
        Runner {
            observer,
            stop: AtomicBool::new(false),
            done: AtomicU64::new(0),
            total: (self.candidates.len() * self.splits.len()) as u64,
            start: Instant::now(),
        }
    }

    /// Scores every candidate on every split, all `(candidate, split)` pairs in parallel.
    /// `eval(candidate, split)` returns a score, or scores and an output (see
    /// [`Evaluation`]).
    pub fn run<E, F>(&self, eval: F, observer: &dyn Observer) -> Result<Selection<E::Output>>
    where
        E: Evaluation,
        F: Fn(&C, &S) -> Result<E> + Sync,
    {
        self.check()?;
        let runner = self.runner(observer);
        let ns = self.splits.len();
        let flat: Vec<Cell<E::Output>> = (0..self.candidates.len() * ns)
            .into_par_iter()
            .map(|i| runner.eval(|| eval(&self.candidates[i / ns], &self.splits[i % ns])))
            .collect();
        let mut cells: Vec<Vec<Cell<E::Output>>> = Vec::with_capacity(self.candidates.len());
        let mut it = flat.into_iter();
        for _ in 0..self.candidates.len() {
            cells.push(it.by_ref().take(ns).collect());
        }
        self.assemble(cells, &runner)
    }

    /// Warm-started search: on each split, `init(split)` makes a state, then the candidates
    /// are evaluated in grid order, each `eval(candidate, split, &mut state)` reading the
    /// state the previous evaluation left and leaving its own (e.g. the kernel weights of
    /// the previous lambda); the splits run in parallel. Put the candidates in the order the
    /// warm starts should follow (a regularization path: large to small lambda).
    pub fn run_warm<W, E, I, F>(
        &self,
        init: I,
        eval: F,
        observer: &dyn Observer,
    ) -> Result<Selection<E::Output>>
    where
        E: Evaluation,
        I: Fn(&S) -> Result<W> + Sync,
        F: Fn(&C, &S, &mut W) -> Result<E> + Sync,
    {
        self.check()?;
        let runner = self.runner(observer);
        let nc = self.candidates.len();
        let by_split: Vec<Vec<Cell<E::Output>>> = self
            .splits
            .par_iter()
            .map(|split| {
                let mut cells: Vec<Cell<E::Output>> = Vec::with_capacity(nc);
                let mut state = match init(split) {
                    Ok(w) => w,
                    Err(e) => {
                        runner.stop.store(true, Ordering::SeqCst);
                        cells.push(Some(Err(e)));
                        cells.resize_with(nc, || None);
                        return cells;
                    }
                };
                for c in self.candidates {
                    let cell = runner.eval(|| eval(c, split, &mut state));
                    let stop = !matches!(cell, Some(Ok(_)));
                    cells.push(cell);
                    if stop {
                        break;
                    }
                }
                cells.resize_with(nc, || None);
                cells
            })
            .collect();
        self.assemble(transpose(by_split, nc), &runner)
    }

    /// One split at a time: `setup(split)` builds its context (e.g. kernel matrices), the
    /// candidates are evaluated on it in parallel with `eval(&context, candidate, split)`,
    /// and the context is dropped before the next split's is built.
    pub fn run_split_by_split<P, E, U, F>(
        &self,
        setup: U,
        eval: F,
        observer: &dyn Observer,
    ) -> Result<Selection<E::Output>>
    where
        P: Sync,
        E: Evaluation,
        U: Fn(&S) -> Result<P>,
        F: Fn(&P, &C, &S) -> Result<E> + Sync,
    {
        self.check()?;
        let runner = self.runner(observer);
        let nc = self.candidates.len();
        let mut by_split: Vec<Vec<Cell<E::Output>>> = Vec::with_capacity(self.splits.len());
        for split in self.splits {
            if !runner.go() {
                by_split.push((0..nc).map(|_| None).collect());
                continue;
            }
            let context = setup(split)?;
            by_split.push(
                self.candidates
                    .par_iter()
                    .map(|c| runner.eval(|| eval(&context, c, split)))
                    .collect(),
            );
        }
        self.assemble(transpose(by_split, nc), &runner)
    }

    /// Checks the cells, averages the scores of every complete candidate and chooses.
    fn assemble<T>(&self, cells: Vec<Vec<Cell<T>>>, runner: &Runner<'_>) -> Result<Selection<T>> {
        let mut entries = Vec::new();
        let mut outputs = Vec::with_capacity(cells.len());
        let mut skipped = false;
        for (c, row) in cells.into_iter().enumerate() {
            let mut scores: Vec<Vec<f64>> = Vec::with_capacity(row.len());
            let mut outs = Vec::with_capacity(row.len());
            for (s, cell) in row.into_iter().enumerate() {
                match cell {
                    None => {
                        skipped = true;
                        outs.push(None);
                    }
                    Some(Err(e)) => return Err(e),
                    Some(Ok((sc, out))) => {
                        let expected = scores.first().map_or(1, |f| f.len());
                        if sc.is_empty() || (!scores.is_empty() && sc.len() != expected) {
                            return Err(Error::shape(
                                format!("scores of candidate {c} on split {s}"),
                                expected,
                                sc.len(),
                            ));
                        }
                        scores.push(sc);
                        outs.push(Some(out));
                    }
                }
            }
            if scores.len() == self.splits.len() {
                for point in 0..scores[0].len() {
                    let per_split: Vec<f64> = scores.iter().map(|s| s[point]).collect();
                    entries.push(Entry {
                        candidate: c,
                        point,
                        mean: self.mean.of(&per_split),
                        scores: per_split,
                    });
                }
            }
            outputs.push(outs);
        }
        let best = self.rule.choose(entries.iter().map(|e| e.mean));
        Ok(Selection {
            status: if skipped {
                RunStatus::Cancelled
            } else {
                RunStatus::Completed
            },
            rule: self.rule,
            candidates: self.candidates.len(),
            splits: self.splits.len(),
            evaluations: runner.done.load(Ordering::SeqCst) as usize,
            seconds: runner.start.elapsed().as_secs_f64(),
            entries,
            best,
            outputs,
        })
    }
}

/// `[split][candidate]` -> `[candidate][split]`.
fn transpose<T>(by_split: Vec<Vec<T>>, nc: usize) -> Vec<Vec<T>> {
    let mut out: Vec<Vec<T>> = (0..nc)
        .map(|_| Vec::with_capacity(by_split.len()))
        .collect();
    for row in by_split {
        for (c, cell) in row.into_iter().enumerate() {
            out[c].push(cell);
        }
    }
    out
}

/// The seed of partition `r` of a repeated k-fold ([`SplitStrategy::RepeatedKFold`]):
/// `seed` itself for the first, so that its folds are the plain k-fold's, then `seed` moved
/// by `r` times the 64-bit golden-ratio constant (well apart for nearby seeds).
pub(crate) fn repeat_seed(seed: u64, r: usize) -> u64 {
    seed.wrapping_add((r as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// The usual ways to make validation splits of `n` rows (all seeded; see
/// [`crate::data::split`] for the exact partitions). Any other splits can be given to
/// [`Search`] directly.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SplitStrategy {
    /// Random k-fold partition ([`kfold`]); `folds` above the number of rows is leave-one-out.
    KFold { folds: usize, seed: u64 },
    /// k-fold partition with every class spread evenly over the folds ([`stratified_kfold`]);
    /// needs class labels.
    StratifiedKFold { folds: usize, seed: u64 },
    /// [`SplitStrategy::KFold`] repeated `repeats` times over independent partitions (the
    /// first with `seed`, the others with `repeat_seed`): `folds * repeats` splits, the
    /// partitions one after another. Averaging over several partitions lowers the variance
    /// that one partition's luck adds to a cross-validated score (Kohavi 1995; Bouckaert &
    /// Frank 2004), which matters on small tables.
    RepeatedKFold {
        folds: usize,
        repeats: usize,
        seed: u64,
    },
    /// [`SplitStrategy::StratifiedKFold`] repeated the same way.
    RepeatedStratifiedKFold {
        folds: usize,
        repeats: usize,
        seed: u64,
    },
    /// One random split with `round(train_fraction * n)` training rows ([`random_split`]).
    HeldOut { train_fraction: f64, seed: u64 },
    /// One split keeping every class's proportion ([`stratified_split`]); needs class labels.
    StratifiedHeldOut { train_fraction: f64, seed: u64 },
    /// `parts` disjoint validation parts of `round(fraction * n)` rows each, every one
    /// against the rest ([`held_out_parts`]).
    HeldOutParts {
        fraction: f64,
        parts: usize,
        seed: u64,
    },
    /// Splits made elsewhere, checked against the rows.
    Given(Vec<Split>),
}

impl SplitStrategy {
    /// The splits of `n` rows; `classes` (one class index a row) where the targets are class
    /// labels. Refuses fewer than 2 folds, fractions outside `(0, 1)`, a stratified strategy
    /// without labels, labels of another length, and any split with an empty training or
    /// validation part or a row outside `0..n`.
    pub fn splits(&self, n: usize, classes: Option<&[usize]>) -> Result<Vec<Split>> {
        if let Some(y) = classes {
            if y.len() != n {
                return Err(Error::shape("class labels of the rows", n, y.len()));
            }
        }
        let labels = || classes.ok_or_else(|| Error::data("stratified splits need class labels"));
        let folds_ok = |k: usize| {
            if k < 2 {
                Err(Error::param("folds", k, "at least 2"))
            } else {
                Ok(())
            }
        };
        let repeats_ok = |r: usize| {
            if r < 1 {
                Err(Error::param("repeats", r, "at least 1"))
            } else {
                Ok(())
            }
        };
        let fraction_ok = |name: &str, f: f64| {
            if f > 0.0 && f < 1.0 {
                Ok(())
            } else {
                Err(Error::param(name, f, "a number strictly between 0 and 1"))
            }
        };
        // `repeats` k-fold partitions, the `r`-th drawn with `repeat_seed(seed, r)` (the first
        // with `seed` itself: one repeat is the plain k-fold).
        let kfolds = |folds: usize, repeats: usize, seed: u64, stratified: bool| {
            folds_ok(folds)?;
            repeats_ok(repeats)?;
            let y = if stratified { Some(labels()?) } else { None };
            Ok::<Vec<Split>, Error>(
                (0..repeats)
                    .flat_map(|r| {
                        let seed = repeat_seed(seed, r);
                        Split::from_pairs(match y {
                            Some(y) => stratified_kfold(y, folds, seed),
                            None => kfold(n, folds, seed),
                        })
                    })
                    .collect(),
            )
        };
        let splits = match self {
            SplitStrategy::KFold { folds, seed } => kfolds(*folds, 1, *seed, false)?,
            SplitStrategy::StratifiedKFold { folds, seed } => kfolds(*folds, 1, *seed, true)?,
            SplitStrategy::RepeatedKFold {
                folds,
                repeats,
                seed,
            } => kfolds(*folds, *repeats, *seed, false)?,
            SplitStrategy::RepeatedStratifiedKFold {
                folds,
                repeats,
                seed,
            } => kfolds(*folds, *repeats, *seed, true)?,
            SplitStrategy::HeldOut {
                train_fraction,
                seed,
            } => {
                fraction_ok("train_fraction", *train_fraction)?;
                vec![random_split(n, *train_fraction, *seed).into()]
            }
            SplitStrategy::StratifiedHeldOut {
                train_fraction,
                seed,
            } => {
                fraction_ok("train_fraction", *train_fraction)?;
                vec![stratified_split(labels()?, *train_fraction, *seed).into()]
            }
            SplitStrategy::HeldOutParts {
                fraction,
                parts,
                seed,
            } => {
                fraction_ok("fraction", *fraction)?;
                let rows: Vec<usize> = (0..n).collect();
                Split::from_pairs(held_out_parts(&rows, *fraction, *parts, *seed))
            }
            SplitStrategy::Given(splits) => splits.clone(),
        };
        if splits.is_empty() {
            return Err(Error::data(format!("{n} rows give no validation split")));
        }
        for (i, s) in splits.iter().enumerate() {
            if s.train.is_empty() || s.validation.is_empty() {
                return Err(Error::data(format!(
                    "split {i} of {n} rows has an empty training or validation part"
                )));
            }
            if let Some(r) = s.train.iter().chain(&s.validation).find(|&&r| r >= n) {
                return Err(Error::data(format!(
                    "split {i}: row {r} is outside the {n} rows"
                )));
            }
        }
        Ok(splits)
    }

    /// How many partitions of the rows the splits repeat: `repeats` of the repeated k-folds,
    /// 1 for every other strategy.
    pub(crate) fn repeats(&self) -> usize {
        match self {
            SplitStrategy::RepeatedKFold { repeats, .. }
            | SplitStrategy::RepeatedStratifiedKFold { repeats, .. } => *repeats,
            _ => 1,
        }
    }

    /// The splits of the rows of `targets` (class labels used where there are some).
    pub fn splits_for(&self, targets: &Targets) -> Result<Vec<Split>> {
        match targets {
            Targets::Classes { y, .. } => self.splits(y.len(), Some(y)),
            Targets::Real(y) => self.splits(y.len(), None),
        }
    }
}

// ------------------------------------------------- what a model keeps of its selection

/// One grid point and its cross-validated score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GridScore {
    /// The learner (`lp-mkl`, `online`, `gomp`).
    pub learner: String,
    /// Its settings besides C (`p=4/3`, `eta0=1`), empty when none.
    pub setting: String,
    #[serde(rename = "C")]
    pub c: f64,
    /// Mean validation score over the folds (`null` when not finite).
    pub mean: Option<f64>,
}

/// What a built-in selection ([`crate::estimator::auto`]) did, stored in the model (`inspect`
/// prints it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectionRecord {
    /// How the grid was scored (`5-fold stratified cross-validation, seed 0`), or why there
    /// was no selection.
    pub method: String,
    /// `accuracy` (maximized) or `mse` (minimized).
    pub metric: String,
    /// Which learner and why, when the selection chose it.
    pub learner_choice: Option<String>,
    /// Every grid point in grid order.
    pub grid: Vec<GridScore>,
    /// Index of the chosen point in `grid` (`None`: no selection ran).
    pub chosen: Option<usize>,
    /// The candidates scored when the selection chose the learner (single kernels, the
    /// uniform sum, learned combinations; `estimator::candidates`), in candidate order;
    /// empty in models written before them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<CandidateScore>,
    /// Why the chosen candidate (the one-standard-error rule's reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// One candidate of the built-in selection and its cross-validated score at its best C.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateScore {
    /// `single rbf:norm=trace`, `svm rbf:scale=4,norm=trace`, `uniform sum of 7`,
    /// `lp-mkl p=2`.
    pub name: String,
    /// `single`, `uniform` or `learned`.
    pub family: String,
    /// `squared` (lp-MKL, kernel ridge) or `hinge` (C-SVC by SMO).
    pub loss: String,
    /// Its best C (`null` when it was not scored on every fold).
    #[serde(rename = "C")]
    pub c: Option<f64>,
    /// Mean validation score at that C over the folds.
    pub mean: Option<f64>,
    /// Standard error of that mean (the fold scores' sample standard deviation / sqrt(folds)).
    pub se: Option<f64>,
    /// Fold scores at that C (or at its best C on the folds it was scored on).
    pub folds: Vec<f64>,
    /// Fits it took (one C on one fold each).
    pub fits: usize,
    /// Why it stopped early or was skipped, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

impl SelectionRecord {
    /// One line on the choice: `selected lp-mkl p=1 C=10 by 5-fold ...: accuracy 0.8731`.
    pub fn headline(&self) -> String {
        match self.chosen.and_then(|i| self.grid.get(i)) {
            Some(g) => format!(
                "selected {} {}C={} by {}: mean {} {}",
                g.learner,
                if g.setting.is_empty() {
                    String::new()
                } else {
                    format!("{} ", g.setting)
                },
                g.c,
                self.method,
                self.metric,
                g.mean.map_or("-".into(), |m| format!("{m:.4}"))
            ),
            None => format!("no selection: {}", self.method),
        }
    }

    /// The candidates as lines `name C=.. mean +- se` (the chosen one marked `*`), then the
    /// reason of the choice; empty when no candidates were scored.
    pub fn candidate_lines(&self) -> Vec<String> {
        // The grid holds every candidate's C grid, candidate-major.
        let per = self.grid.len() / self.candidates.len().max(1);
        let chosen = self.chosen.filter(|_| per > 0).map(|i| i / per.max(1));
        let mut out: Vec<String> = self
            .candidates
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mark = chosen == Some(i);
                let score = match (c.mean, c.se) {
                    (Some(m), Some(se)) => format!("{} {m:.4} +- {se:.4}", self.metric),
                    _ => format!("{} -", self.metric),
                };
                format!(
                    "{} {:<40} C={:<6} {score}  ({} fits){}",
                    if mark { "*" } else { " " },
                    c.name,
                    c.c.map_or("-".into(), |c| c.to_string()),
                    c.fits,
                    c.stopped
                        .as_ref()
                        .map_or(String::new(), |s| format!(" {s}"))
                )
            })
            .collect();
        if let Some(why) = &self.why {
            out.push(format!("chosen: {why}"));
        }
        out
    }

    /// The grid as lines `learner setting C=.. mean` (the chosen one marked `*`).
    pub fn grid_lines(&self) -> Vec<String> {
        self.grid
            .iter()
            .enumerate()
            .map(|(i, g)| {
                format!(
                    "{} {:<8} {:<10} C={:<6} {} {}",
                    if Some(i) == self.chosen { "*" } else { " " },
                    g.learner,
                    g.setting,
                    g.c,
                    self.metric,
                    g.mean.map_or("-".into(), |m| format!("{m:.4}"))
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod loops;
