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
mod tests {
    use super::*;
    use crate::run::StopFlag;
    use std::sync::Mutex;

    /// A deterministic toy score of (candidate, split) with ties and a clear optimum.
    fn toy(c: &(u32, u32), s: &usize) -> f64 {
        let (a, b) = *c;
        // Peak at a = 2, flat in b except on split 1; quantized so ties happen.
        let v = -((a as f64 - 2.0).powi(2)) + 0.25 * ((b + *s as u32) % 3) as f64;
        (v * 4.0).round() / 4.0
    }

    fn grid() -> Vec<(u32, u32)> {
        (0..5).flat_map(|a| (0..4).map(move |b| (a, b))).collect()
    }

    /// The explicit double loop the harness replaces: candidates outer, splits inner, means
    /// summed then divided, strict improvement so the first wins ties.
    fn brute_force(grid: &[(u32, u32)], splits: &[usize], maximize: bool) -> (usize, Vec<f64>) {
        let mut means = Vec::new();
        let mut best: Option<(f64, usize)> = None;
        for (ci, c) in grid.iter().enumerate() {
            let mut total = 0.0;
            for s in splits {
                total += toy(c, s);
            }
            let v = total / splits.len() as f64;
            means.push(v);
            let better = match best {
                None => true,
                Some((b, _)) => {
                    if maximize {
                        v > b
                    } else {
                        v < b
                    }
                }
            };
            if better {
                best = Some((v, ci));
            }
        }
        (best.unwrap().1, means)
    }

    #[test]
    fn picks_what_the_double_loop_picks() {
        let g = grid();
        let splits = [0usize, 1, 2];
        for maximize in [true, false] {
            let search = Search::new(&g, &splits).goal(if maximize {
                Goal::Maximize
            } else {
                Goal::Minimize
            });
            let sel = search.run(|c, s| Ok(toy(c, s)), &()).unwrap();
            let (want, means) = brute_force(&g, &splits, maximize);
            assert_eq!(sel.status, RunStatus::Completed);
            assert_eq!(sel.evaluations, g.len() * splits.len());
            assert_eq!(sel.best().unwrap().candidate, want);
            assert_eq!(sel.entries.len(), g.len());
            for (ci, e) in sel.entries.iter().enumerate() {
                assert_eq!((e.candidate, e.point), (ci, 0));
                assert_eq!(e.mean.to_bits(), means[ci].to_bits());
                let scores: Vec<f64> = splits.iter().map(|s| toy(&g[ci], s)).collect();
                assert_eq!(e.scores, scores);
            }
        }
        // The toy has ties at the top: the first in grid order won them.
        let sel = Search::new(&g, &splits)
            .run(|c, s| Ok(toy(c, s)), &())
            .unwrap();
        let best = sel.best().unwrap();
        let tied: Vec<usize> = sel
            .entries
            .iter()
            .filter(|e| e.mean == best.mean)
            .map(|e| e.candidate)
            .collect();
        assert!(tied.len() > 1, "the toy should have ties: {tied:?}");
        assert_eq!(best.candidate, tied[0]);
        let last = Search::new(&g, &splits)
            .ties(Ties::Last)
            .run(|c, s| Ok(toy(c, s)), &())
            .unwrap();
        assert_eq!(last.best().unwrap().candidate, *tied.last().unwrap());
    }

    #[test]
    fn rule_matches_its_definition() {
        let values = [1.0, 3.0, f64::NAN, 3.0 + 1e-13, 2.0, f64::INFINITY, 3.0];
        let rule = |goal, ties, tolerance| Rule {
            goal,
            ties,
            tolerance,
        };
        assert_eq!(
            rule(Goal::Maximize, Ties::First, 0.0).choose(values),
            Some(3)
        );
        assert_eq!(
            rule(Goal::Maximize, Ties::First, 1e-12).choose(values),
            Some(1)
        );
        assert_eq!(
            rule(Goal::Maximize, Ties::Last, 1e-12).choose(values),
            Some(6)
        );
        assert_eq!(
            rule(Goal::Maximize, Ties::Last, 0.0).choose(values),
            Some(3)
        );
        assert_eq!(
            rule(Goal::Minimize, Ties::First, 0.0).choose(values),
            Some(0)
        );
        let down = [2.0, 1.0, 1.0, 5.0];
        assert_eq!(rule(Goal::Minimize, Ties::First, 0.0).choose(down), Some(1));
        assert_eq!(rule(Goal::Minimize, Ties::Last, 0.0).choose(down), Some(2));
        // Non-finite values are never chosen, even first.
        assert_eq!(Rule::default().choose([f64::NAN, 0.5]), Some(1));
        assert_eq!(Rule::default().choose([f64::NAN, f64::INFINITY]), None);
        assert_eq!(Rule::default().choose([]), None);
    }

    #[test]
    fn means_use_the_exact_arithmetic_asked_for() {
        // 0.1 + 0.2 + 0.3 summed then divided differs from the sum of thirds in the last bit.
        let s = [0.1, 0.2, 0.3];
        let a = Mean::Arithmetic.of(&s);
        let b = Mean::Shares.of(&s);
        assert_eq!(a.to_bits(), ((0.1 + 0.2 + 0.3) / 3.0f64).to_bits());
        assert_eq!(
            b.to_bits(),
            (0.1 / 3.0 + 0.2 / 3.0 + 0.3 / 3.0f64).to_bits()
        );
        assert_ne!(a.to_bits(), b.to_bits());
        let w = Mean::Weighted(vec![10.0, 20.0, 5.0]).of(&s);
        assert_eq!(
            w.to_bits(),
            ((0.1 * 10.0 + 0.2 * 20.0 + 0.3 * 5.0) / 35.0f64).to_bits()
        );
        // Through a search: the entries carry those means.
        let splits = [0usize, 1, 2];
        for mean in [
            Mean::Arithmetic,
            Mean::Shares,
            Mean::Weighted(vec![10.0, 20.0, 5.0]),
        ] {
            let sel = Search::new(&[()], &splits)
                .mean(mean.clone())
                .run(|_, &k| Ok(s[k]), &())
                .unwrap();
            assert_eq!(sel.mean(0).unwrap().to_bits(), mean.of(&s).to_bits());
        }
    }

    #[test]
    fn same_selection_whatever_the_thread_count() {
        let g = grid();
        let splits = [0usize, 1, 2, 3];
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                // Scores with rounding that depends on the order of additions if the harness
                // summed in completion order.
                let sel = Search::new(&g, &splits)
                    .run(
                        |c, s| Ok(toy(c, s) + 0.1 * (*s as f64) + 1e-17 * c.0 as f64),
                        &(),
                    )
                    .unwrap();
                let warm = Search::new(&g, &splits)
                    .minimize()
                    .run_warm(
                        |_| Ok(0.0),
                        |c, s, w: &mut f64| {
                            *w += toy(c, s);
                            Ok(*w)
                        },
                        &(),
                    )
                    .unwrap();
                (sel.best, sel.entries, warm.best, warm.entries)
            })
        };
        let one = run(1);
        for threads in [2, 3, 8] {
            let other = run(threads);
            assert_eq!(one.0, other.0);
            assert_eq!(one.2, other.2);
            for (a, b) in one.1.iter().zip(&other.1).chain(one.3.iter().zip(&other.3)) {
                assert_eq!(a.mean.to_bits(), b.mean.to_bits());
                assert_eq!(a.scores, b.scores);
            }
        }
    }

    #[test]
    fn warm_state_is_passed_in_grid_order_within_each_split() {
        let lambdas = [100.0, 10.0, 1.0, 0.1];
        let splits = [0usize, 1, 2];
        // The state records the lambdas seen so far on its split.
        let log = Mutex::new(Vec::new());
        let sel = Search::new(&lambdas, &splits)
            .run_warm(
                |&s| Ok((s, Vec::<f64>::new())),
                |&l, &s, state: &mut (usize, Vec<f64>)| {
                    assert_eq!(state.0, s, "a split's state stays on its split");
                    let seen = state.1.clone();
                    state.1.push(l);
                    log.lock().unwrap().push((s, seen.clone()));
                    Ok((seen.len() as f64, seen))
                },
                &(),
            )
            .unwrap();
        for (ci, _) in lambdas.iter().enumerate() {
            for s in 0..splits.len() {
                // Candidate ci saw exactly the candidates before it, in order.
                assert_eq!(sel.output(ci, s).unwrap(), &lambdas[..ci].to_vec());
            }
        }
        assert_eq!(log.lock().unwrap().len(), lambdas.len() * splits.len());
        // Scores 0, 1, 2, 3 on every split: the last is the largest.
        assert_eq!(sel.best().unwrap().candidate, 3);
        assert_eq!(sel.best_output(0).unwrap().len(), 3);
    }

    #[test]
    fn path_evaluations_compete_point_by_point() {
        // Each candidate returns a path of 3 scores; the best is (candidate 1, point 2), with
        // (candidate 2, point 0) within the tolerance of it and later, so it does not win.
        let cands = [0usize, 1, 2];
        let splits = [0usize, 1];
        let path = |c: usize, s: usize| -> Vec<f64> {
            let base = [[0.1, 0.2, 0.3], [0.2, 0.4, 0.9], [0.9 + 1e-13, 0.5, 0.1]][c];
            base.iter().map(|v| v + 0.01 * s as f64).collect()
        };
        let sel = Search::new(&cands, &splits)
            .tolerance(1e-12)
            .mean(Mean::Shares)
            .run(|&c, &s| Ok(path(c, s)), &())
            .unwrap();
        assert_eq!(sel.entries.len(), 9);
        let b = sel.best().unwrap();
        assert_eq!((b.candidate, b.point), (1, 2));
        assert_eq!(b.scores, vec![path(1, 0)[2], path(1, 1)[2]]);
        assert_eq!(
            sel.entry(2, 1).unwrap().scores,
            vec![path(2, 0)[1], path(2, 1)[1]]
        );
        // Without the tolerance the later, slightly larger one wins.
        let sel = Search::new(&cands, &splits)
            .mean(Mean::Shares)
            .run(|&c, &s| Ok(path(c, s)), &())
            .unwrap();
        let b = sel.best().unwrap();
        assert_eq!((b.candidate, b.point), (2, 0));
        // A path of another length on another split is a shape error.
        let err = Search::new(&cands, &splits)
            .run(
                |&c, &s| Ok(vec![0.0; 2 + usize::from(c == 1 && s == 1)]),
                &(),
            )
            .unwrap_err();
        assert!(
            matches!(&err, Error::ShapeMismatch { what, expected: 2, found: 3 } if what.contains("candidate 1 on split 1")),
            "{err}"
        );
        let err = Search::new(&cands, &splits)
            .run(|_, _| Ok(Vec::new()), &())
            .unwrap_err();
        assert!(
            matches!(err, Error::ShapeMismatch { found: 0, .. }),
            "{err}"
        );
    }

    #[test]
    fn best_where_chooses_within_a_group() {
        // Two learners searched together: candidates (learner, c).
        let g: Vec<(usize, f64)> = (0..2)
            .flat_map(|m| [1.0, 2.0, 3.0].map(|c| (m, c)))
            .collect();
        let sel = Search::new(&g, &[0usize])
            .run(|&(m, c), _| Ok(if m == 0 { c } else { -c }), &())
            .unwrap();
        assert_eq!(g[sel.best().unwrap().candidate], (0, 3.0));
        let b1 = sel.best_where(|e| g[e.candidate].0 == 1).unwrap();
        assert_eq!(g[b1.candidate], (1, 1.0));
        assert!(sel.best_where(|_| false).is_none());
    }

    #[test]
    fn the_observer_stops_the_search_between_evaluations() {
        let g = grid();
        let splits = [0usize, 1, 2];
        // A flag already set: nothing runs.
        let flag = StopFlag::new();
        flag.stop();
        let ran = AtomicU64::new(0);
        let sel = Search::new(&g, &splits)
            .run(
                |c, s| {
                    ran.fetch_add(1, Ordering::SeqCst);
                    Ok(toy(c, s))
                },
                &flag,
            )
            .unwrap();
        assert_eq!(sel.status, RunStatus::Cancelled);
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        assert!(sel.entries.is_empty() && sel.best.is_none());
        // Stop after the 5th evaluation (a closure observer sees each one): on one thread the
        // warm search runs candidates in order, so exactly 5 ran and no later one started.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let steps = Mutex::new(Vec::new());
        let obs = |p: &Progress| {
            steps.lock().unwrap().push((p.step, p.total));
            if p.step >= 5 {
                Control::Stop
            } else {
                Control::Continue
            }
        };
        let sel = pool.install(|| {
            Search::new(&g, &splits)
                .run_warm(|_| Ok(()), |c, s, _: &mut ()| Ok(toy(c, s)), &obs)
                .unwrap()
        });
        assert_eq!(sel.status, RunStatus::Cancelled);
        assert_eq!(sel.evaluations, 5);
        let total = Some((g.len() * splits.len()) as u64);
        assert_eq!(
            *steps.lock().unwrap(),
            (1..=5).map(|k| (k, total)).collect::<Vec<_>>()
        );
        let ran: usize = sel.outputs.iter().flatten().filter(|o| o.is_some()).count();
        assert_eq!(ran, 5);
        // Five candidates on split 0 only: none is complete, so none is chosen.
        assert!(sel.entries.is_empty() && sel.best().is_none());
        // Split by split: stopping during the first split leaves the others unevaluated;
        // the candidates finished on every split are the ones reported.
        let sel = Search::new(&g, &[0usize])
            .run_split_by_split(|_| Ok(()), |_, c, s| Ok(toy(c, s)), &|p: &Progress| {
                if p.step >= 3 {
                    Control::Stop
                } else {
                    Control::Continue
                }
            })
            .unwrap();
        assert_eq!(sel.status, RunStatus::Cancelled);
        assert!(sel.evaluations >= 3 && sel.evaluations < g.len());
        assert_eq!(sel.entries.len(), sel.evaluations);
        let best = sel.best().unwrap();
        let chosen = Rule::default()
            .choose(sel.entries.iter().map(|e| e.mean))
            .unwrap();
        assert_eq!(best, &sel.entries[chosen]);
    }

    #[test]
    fn an_evaluation_error_is_returned_as_it_is() {
        let g = grid();
        let splits = [0usize, 1];
        let failing = |c: &(u32, u32), s: &usize| -> Result<f64> {
            if *c == (3, 1) && *s == 1 {
                Err(Error::Memory {
                    what: "a Gram matrix".into(),
                    needed: 10,
                    limit: 1,
                })
            } else {
                Ok(toy(c, s))
            }
        };
        let e = Search::new(&g, &splits).run(failing, &()).unwrap_err();
        assert!(matches!(e, Error::Memory { needed: 10, .. }), "{e}");
        let e = Search::new(&g, &splits)
            .run_warm(|_| Ok(()), |c, s, _: &mut ()| failing(c, s), &())
            .unwrap_err();
        assert!(matches!(e, Error::Memory { .. }), "{e}");
        let e = Search::new(&g, &splits)
            .run_split_by_split(|_| Ok(()), |_, c, s| failing(c, s), &())
            .unwrap_err();
        assert!(matches!(e, Error::Memory { .. }), "{e}");
        // Errors of the per-split state and context too.
        let e = Search::new(&g, &splits)
            .run_warm(
                |&s| {
                    if s == 1 {
                        Err(Error::Numerical("init".into()))
                    } else {
                        Ok(())
                    }
                },
                |c, s, _: &mut ()| Ok(toy(c, s)),
                &(),
            )
            .unwrap_err();
        assert!(matches!(e, Error::Numerical(_)), "{e}");
        let e = Search::new(&g, &splits)
            .run_split_by_split(
                |_| Err::<(), _>(Error::data("no context")),
                |_, c, s| Ok(toy(c, s)),
                &(),
            )
            .unwrap_err();
        assert!(matches!(e, Error::Data(_)), "{e}");
    }

    #[test]
    fn empty_grids_splits_and_bad_settings_are_refused() {
        let g = grid();
        let splits = [0usize, 1];
        let none: [(u32, u32); 0] = [];
        let e = Search::new(&none, &splits)
            .run(|c, s| Ok(toy(c, s)), &())
            .unwrap_err();
        assert!(
            matches!(&e, Error::InvalidParameter { name, .. } if name == "candidates"),
            "{e}"
        );
        let e = Search::new(&g, &[] as &[usize])
            .run_warm(|_| Ok(()), |c, s, _: &mut ()| Ok(toy(c, s)), &())
            .unwrap_err();
        assert!(
            matches!(&e, Error::InvalidParameter { name, .. } if name == "splits"),
            "{e}"
        );
        let e = Search::new(&g, &splits)
            .mean(Mean::Weighted(vec![1.0]))
            .run(|c, s| Ok(toy(c, s)), &())
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::ShapeMismatch {
                    expected: 2,
                    found: 1,
                    ..
                }
            ),
            "{e}"
        );
        let e = Search::new(&g, &splits)
            .mean(Mean::Weighted(vec![1.0, 0.0]))
            .run(|c, s| Ok(toy(c, s)), &())
            .unwrap_err();
        assert!(
            matches!(&e, Error::InvalidParameter { name, .. } if name == "weights"),
            "{e}"
        );
        let e = Search::new(&g, &splits)
            .tolerance(-1.0)
            .run_split_by_split(|_| Ok(()), |_, c, s| Ok(toy(c, s)), &())
            .unwrap_err();
        assert!(
            matches!(&e, Error::InvalidParameter { name, .. } if name == "tolerance"),
            "{e}"
        );
    }

    #[test]
    fn strategies_make_the_split_module_partitions() {
        let y: Vec<usize> = (0..30).map(|i| i % 3).collect();
        let s = SplitStrategy::KFold { folds: 4, seed: 2 }
            .splits(30, None)
            .unwrap();
        assert_eq!(s, Split::from_pairs(kfold(30, 4, 2)));
        let s = SplitStrategy::StratifiedKFold { folds: 3, seed: 5 }
            .splits(30, Some(&y))
            .unwrap();
        assert_eq!(s, Split::from_pairs(stratified_kfold(&y, 3, 5)));
        let targets = Targets::Classes {
            classes: vec!["a".into(), "b".into(), "c".into()],
            y: y.clone(),
        };
        assert_eq!(
            SplitStrategy::StratifiedKFold { folds: 3, seed: 5 }
                .splits_for(&targets)
                .unwrap(),
            s
        );
        let s = SplitStrategy::HeldOut {
            train_fraction: 0.7,
            seed: 1,
        }
        .splits(30, None)
        .unwrap();
        assert_eq!(s, vec![random_split(30, 0.7, 1).into()]);
        let s = SplitStrategy::StratifiedHeldOut {
            train_fraction: 0.7,
            seed: 1,
        }
        .splits_for(&targets)
        .unwrap();
        assert_eq!(s, vec![stratified_split(&y, 0.7, 1).into()]);
        let rows: Vec<usize> = (0..30).collect();
        let s = SplitStrategy::HeldOutParts {
            fraction: 0.2,
            parts: 5,
            seed: 3,
        }
        .splits(30, None)
        .unwrap();
        assert_eq!(s, Split::from_pairs(held_out_parts(&rows, 0.2, 5, 3)));
        let given = vec![Split {
            train: vec![0, 1],
            validation: vec![2],
        }];
        assert_eq!(
            SplitStrategy::Given(given.clone()).splits(3, None).unwrap(),
            given
        );
    }

    #[test]
    fn repeated_kfolds_are_plain_kfolds_over_independent_partitions() {
        let y: Vec<usize> = (0..31).map(|i| i % 3).collect();
        let s = SplitStrategy::RepeatedKFold {
            folds: 4,
            repeats: 3,
            seed: 2,
        }
        .splits(31, None)
        .unwrap();
        let mut want = Split::from_pairs(kfold(31, 4, 2));
        want.extend(Split::from_pairs(kfold(31, 4, repeat_seed(2, 1))));
        want.extend(Split::from_pairs(kfold(31, 4, repeat_seed(2, 2))));
        assert_eq!(s, want);
        let strat = SplitStrategy::RepeatedStratifiedKFold {
            folds: 3,
            repeats: 2,
            seed: 5,
        };
        assert_eq!(strat.repeats(), 2);
        assert_eq!(SplitStrategy::KFold { folds: 3, seed: 5 }.repeats(), 1);
        let s = strat.splits(31, Some(&y)).unwrap();
        assert_eq!(s.len(), 6);
        // Each partition puts every row in exactly one validation part, and the two
        // partitions differ.
        for part in s.chunks(3) {
            let mut seen: Vec<usize> = part.iter().flat_map(|p| p.validation.clone()).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..31).collect::<Vec<_>>());
        }
        assert_ne!(s[..3], s[3..]);
        // The first partition is the plain stratified k-fold's.
        assert_eq!(s[..3], Split::from_pairs(stratified_kfold(&y, 3, 5))[..]);
        let e = SplitStrategy::RepeatedKFold {
            folds: 3,
            repeats: 0,
            seed: 0,
        }
        .splits(10, None)
        .unwrap_err();
        assert!(matches!(&e, Error::InvalidParameter { name, .. } if name == "repeats"));
    }

    #[test]
    fn strategies_refuse_what_cannot_be_split() {
        let param = |r: Result<Vec<Split>>, want: &str| match r {
            Err(Error::InvalidParameter { name, .. }) => assert_eq!(name, want),
            other => panic!("expected a {want} error, got {other:?}"),
        };
        param(
            SplitStrategy::KFold { folds: 1, seed: 0 }.splits(10, None),
            "folds",
        );
        param(
            SplitStrategy::HeldOut {
                train_fraction: 1.0,
                seed: 0,
            }
            .splits(10, None),
            "train_fraction",
        );
        param(
            SplitStrategy::HeldOutParts {
                fraction: 0.0,
                parts: 2,
                seed: 0,
            }
            .splits(10, None),
            "fraction",
        );
        let data = |r: Result<Vec<Split>>| assert!(matches!(r, Err(Error::Data(_))), "{r:?}");
        data(SplitStrategy::StratifiedKFold { folds: 2, seed: 0 }.splits(10, None));
        data(SplitStrategy::KFold { folds: 2, seed: 0 }.splits(1, None));
        data(
            SplitStrategy::HeldOut {
                train_fraction: 0.5,
                seed: 0,
            }
            .splits(1, None),
        );
        data(SplitStrategy::Given(vec![]).splits(3, None));
        data(
            SplitStrategy::Given(vec![Split {
                train: vec![0],
                validation: vec![3],
            }])
            .splits(3, None),
        );
        data(
            SplitStrategy::Given(vec![Split {
                train: vec![0, 1],
                validation: vec![],
            }])
            .splits(3, None),
        );
        let r = SplitStrategy::KFold { folds: 2, seed: 0 }.splits(4, Some(&[0, 1]));
        assert!(
            matches!(
                r,
                Err(Error::ShapeMismatch {
                    expected: 4,
                    found: 2,
                    ..
                })
            ),
            "{r:?}"
        );
    }
}

/// The selection loops of `reproduce` (gomp glass and simulation, ocr, mirror descent Figures
/// 2-3, as of commit 3b69a82), each written out as it was and set against the harness call
/// that replaces it. The learners are stood in for by deterministic scores with ties,
/// near-ties and (where the loop filters them) non-finite values; state-dependent scores
/// check the warm-start order.
#[cfg(test)]
mod loops {
    use super::*;
    use std::cmp::Ordering as CmpOrdering;

    /// A deterministic hash (splitmix64).
    fn h(mut x: u64) -> u64 {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }

    /// An accuracy-like score `k / 7` (many exact ties), sometimes nudged by less than
    /// glass's tolerance 1e-12 (near-ties).
    fn acc(key: u64) -> f64 {
        acc_of(key, 7)
    }

    /// [`acc`] with `levels + 1` values `k / levels`.
    fn acc_of(key: u64, levels: u64) -> f64 {
        let v = h(key);
        let base = (v % (levels + 1)) as f64 / levels as f64;
        if v.is_multiple_of(5) {
            base + 3e-13
        } else {
            base
        }
    }

    /// Glass, GOMP: per lambda and fold one path of `m + 1` accuracies (lengths beyond a
    /// fold's path reuse its last model), `a += acc / folds` per point, scan lambda outer and
    /// path length inner, `a > best + 1e-12`.
    #[test]
    fn glass_gomp() {
        let lambdas: Vec<f64> = (0..7).map(|i| 10f64.powi(i - 5)).collect();
        let m = 4;
        let folds = [0u64, 1, 2];
        let mut tolerance_mattered = 0;
        for rep in 0..40u64 {
            // The path a fold's GOMP run reaches: sometimes shorter than m + 1.
            let path = |li: usize, f: u64| -> Vec<f64> {
                let key = rep * 100_000 + li as u64 * 1000 + f * 100;
                let len = 2 + (h(key) % (m as u64)) as usize;
                let preds: Vec<f64> = (0..len).map(|s| acc_of(key + s as u64, 2)).collect();
                (0..=m).map(|s| preds[s.min(preds.len() - 1)]).collect()
            };
            // The loop as it was.
            let mut best: Option<(f64, usize, usize)> = None;
            let mut table = Vec::new();
            for li in 0..lambdas.len() {
                let mut a = vec![0.0; m + 1];
                for &f in &folds {
                    let p = path(li, f);
                    for (s, a) in a.iter_mut().enumerate() {
                        *a += p[s] / folds.len() as f64;
                    }
                }
                for (s, &v) in a.iter().enumerate() {
                    table.push(v);
                    if best.is_none_or(|b| v > b.0 + 1e-12) {
                        best = Some((v, li, s));
                    }
                }
            }
            // The harness.
            let search = Search::new(&lambdas, &folds).mean(Mean::Shares);
            let eval = |l: &f64, &f: &u64| {
                let li = lambdas.iter().position(|x| x == l).unwrap();
                Ok(path(li, f))
            };
            let sel = search.clone().tolerance(1e-12).run(eval, &()).unwrap();
            let (_, li, s) = best.unwrap();
            let b = sel.best().unwrap();
            assert_eq!((b.candidate, b.point), (li, s));
            let means: Vec<u64> = sel.entries.iter().map(|e| e.mean.to_bits()).collect();
            assert_eq!(means, table.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
            let strict = search.run(eval, &()).unwrap();
            if strict.best != sel.best {
                tolerance_mattered += 1;
            }
        }
        assert!(
            tolerance_mattered > 0,
            "no near-tie exercised the tolerance"
        );
    }

    /// Glass, lp-MKL per p: one accuracy per (lambda, fold), same mean and rule.
    #[test]
    fn glass_lp() {
        let lambdas: Vec<f64> = (0..9).map(|i| 10f64.powi(i - 3)).collect();
        let folds = [0u64, 1, 2];
        for p in 0..40u64 {
            let score = |li: usize, f: u64| acc_of(p * 10_000 + li as u64 * 10 + f, 2);
            let mut best: Option<(f64, usize)> = None;
            for li in 0..lambdas.len() {
                let mut a = 0.0;
                for &f in &folds {
                    a += score(li, f) / folds.len() as f64;
                }
                if best.is_none_or(|b| a > b.0 + 1e-12) {
                    best = Some((a, li));
                }
            }
            let idx: Vec<usize> = (0..lambdas.len()).collect();
            let sel = Search::new(&idx, &folds)
                .mean(Mean::Shares)
                .tolerance(1e-12)
                .run(|&li, &f| Ok(score(li, f)), &())
                .unwrap();
            assert_eq!(sel.best().unwrap().candidate, best.unwrap().1);
            assert_eq!(
                sel.best().unwrap().mean.to_bits(),
                best.unwrap().0.to_bits()
            );
        }
    }

    /// Simulation, GOMP: one validation set, one path of errors per lambda, `e < best`
    /// (first wins), the chosen path kept.
    #[test]
    fn simulation_gomp() {
        let lambdas: Vec<usize> = (0..17).collect();
        let err = |li: usize, s: usize| 1.0 - acc(li as u64 * 100 + s as u64);
        let mut best: Option<(f64, usize, usize, String)> = None;
        for &li in &lambdas {
            let path = format!("path {li}");
            for s in 0..6 {
                let e = err(li, s);
                if best.as_ref().is_none_or(|b| e < b.0) {
                    best = Some((e, li, s, path.clone()));
                }
            }
        }
        let sel = Search::new(&lambdas, &[()])
            .minimize()
            .run(
                |&li, _| {
                    Ok((
                        (0..6).map(|s| err(li, s)).collect::<Vec<f64>>(),
                        format!("path {li}"),
                    ))
                },
                &(),
            )
            .unwrap();
        let (_, li, s, path) = best.unwrap();
        let b = sel.best().unwrap();
        assert_eq!((b.candidate, b.point), (li, s));
        assert_eq!(sel.best_output(0), Some(&path));
    }

    /// Simulation, lp-MKL per p: lambdas in grid order on the validation set, each started
    /// from the previous solution's floored weights, `e < best`.
    #[test]
    fn simulation_lp_warm() {
        let lambdas: Vec<f64> = (0..9).map(|i| 10f64.powi(i - 3)).collect();
        // A "solve" whose result depends on its warm start.
        let solve = |l: f64, warm: &Option<Vec<f64>>| -> (f64, Vec<f64>) {
            let w0 = warm.as_ref().map_or(0.0, |w| w[0]);
            let theta = vec![(l.ln() + 7.0 * w0).sin().abs(), 0.0];
            let e = ((theta[0] * 8.0).round() / 8.0 - 0.5).abs();
            (e, theta)
        };
        let floor = |t: &[f64]| -> Vec<f64> {
            let m = t.iter().cloned().fold(0.0, f64::max);
            t.iter().map(|v| v.max(1e-6 * m)).collect()
        };
        let mut best: Option<(f64, usize, Vec<f64>)> = None;
        let mut warm: Option<Vec<f64>> = None;
        for (li, &l) in lambdas.iter().enumerate() {
            let (e, theta) = solve(l, &warm);
            warm = Some(floor(&theta));
            if best.as_ref().is_none_or(|b| e < b.0) {
                best = Some((e, li, theta));
            }
        }
        let sel = Search::new(&lambdas, &[()])
            .minimize()
            .run_warm(
                |_| Ok(None),
                |&l, _, warm: &mut Option<Vec<f64>>| {
                    let (e, theta) = solve(l, warm);
                    *warm = Some(floor(&theta));
                    Ok((e, theta))
                },
                &(),
            )
            .unwrap();
        let (_, li, theta) = best.unwrap();
        assert_eq!(sel.best().unwrap().candidate, li);
        assert_eq!(sel.best_output(0), Some(&theta));
    }

    /// Mirror descent's `select`: finite validation MSEs only, the lowest, ties to the
    /// larger ridge.
    fn mirror_select(fits: &[(f64, f64)]) -> Option<(f64, f64)> {
        fits.iter()
            .copied()
            .filter(|f| f.1.is_finite())
            .min_by(|a, b| a.1.total_cmp(&b.1).then(b.0.total_cmp(&a.0)))
    }

    /// Mirror descent Figures 2-3, Stoch and uniform: every ridge of the increasing grid
    /// fitted in parallel, [`mirror_select`]. lp-MKL: sequential in grid order, the warm
    /// start replaced only when some weight is positive, [`mirror_select`].
    #[test]
    fn mirror_descent_grids() {
        let grids: [&[f64]; 3] = [
            &[1e-6, 1e-4, 1e-2, 1.0, 1e2],
            &[1e-4, 1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3],
            &[1e-2],
        ];
        for (gi, lambdas) in grids.iter().enumerate() {
            for rep in 0..20u64 {
                let key = |li: usize| rep * 1000 + gi as u64 * 100 + li as u64;
                // Validation MSEs with ties, a NaN and an infinity now and then.
                let val = |li: usize| match h(key(li)) % 9 {
                    0 => f64::NAN,
                    1 => f64::INFINITY,
                    v => (v % 3) as f64 / 4.0,
                };
                let fits: Vec<(f64, f64)> = lambdas
                    .iter()
                    .enumerate()
                    .map(|(li, &l)| (l, val(li)))
                    .collect();
                let want = mirror_select(&fits);
                let sel = Search::new(lambdas, &[()])
                    .minimize()
                    .ties(Ties::Last)
                    .run(
                        |&l, _| Ok(val(lambdas.iter().position(|&x| x == l).unwrap())),
                        &(),
                    )
                    .unwrap();
                assert_eq!(sel.best().map(|b| lambdas[b.candidate]), want.map(|f| f.0));

                // lp-MKL: the solution depends on the warm start; all-zero weights keep the
                // previous warm start.
                let solve = |li: usize, warm: &Option<Vec<f64>>| -> (f64, Vec<f64>) {
                    let w = warm.as_ref().map_or(0.5, |w| w[0]);
                    let t = if h(key(li) ^ 77).is_multiple_of(4) {
                        0.0
                    } else {
                        (w * 3.0 + li as f64) % 1.0
                    };
                    let v = if h(key(li) ^ 99).is_multiple_of(7) {
                        f64::NAN
                    } else {
                        (t * 4.0).round() / 4.0
                    };
                    (v, vec![t])
                };
                let mut fits = Vec::new();
                let mut warm: Option<Vec<f64>> = None;
                for (li, &l) in lambdas.iter().enumerate() {
                    let (v, theta) = solve(li, &warm);
                    if theta.iter().any(|t| *t > 0.0) {
                        warm = Some(theta.iter().map(|t| t.max(1e-12)).collect());
                    }
                    fits.push((l, v));
                }
                let want = mirror_select(&fits);
                let idx: Vec<usize> = (0..lambdas.len()).collect();
                let sel = Search::new(&idx, &[()])
                    .minimize()
                    .ties(Ties::Last)
                    .run_warm(
                        |_| Ok(None),
                        |&li, _, warm: &mut Option<Vec<f64>>| {
                            let (v, theta) = solve(li, warm);
                            if theta.iter().any(|t| *t > 0.0) {
                                *warm = Some(theta.iter().map(|t| t.max(1e-12)).collect());
                            }
                            Ok((v, lambdas[li]))
                        },
                        &(),
                    )
                    .unwrap();
                assert_eq!(sel.best().map(|b| lambdas[b.candidate]), want.map(|f| f.0));
                assert_eq!(
                    sel.best().map(|b| b.mean.total_cmp(&want.unwrap().1)),
                    want.map(|_| CmpOrdering::Equal)
                );
            }
        }
    }

    /// OCR: for each held-out part in turn, each row's kernel set built once and the
    /// `C x eta0` grid (C outer) trained in parallel; accuracies pooled over the parts by
    /// their characters; per row the first best (`>`). With the harness: the rows that share
    /// a kernel set searched together, split by split, the context the kernel set, the mean
    /// weighted by the parts' characters, and the best chosen per row.
    #[test]
    fn ocr_rows() {
        let c_grid = [0.3, 1.0, 3.0, 10.0, 100.0, 1000.0];
        let eta_grid = [0.3, 1.0, 3.0, 10.0, 30.0];
        // Rows sharing a kernel set (3 rows over "LQG"), their held-out parts' characters.
        let rows = [0u64, 1, 2];
        let chars = [921usize, 937, 905, 930, 924];
        let parts: Vec<usize> = (0..chars.len()).collect();
        let acc = |row: u64, part: usize, e: f64, c: f64| {
            let k = h(row * 7919 + part as u64 * 104_729 + (e * 10.0) as u64 * 13 + c as u64);
            (k % (chars[part] as u64 + 1)) as f64 / chars[part] as f64
        };
        // The loop as it was.
        let grid: Vec<(f64, f64)> = c_grid
            .iter()
            .flat_map(|&c| eta_grid.iter().map(move |&e| (e, c)))
            .collect();
        let mut tally = vec![vec![(0.0, 0usize); grid.len()]; rows.len()];
        for &p in &parts {
            for (ri, &r) in rows.iter().enumerate() {
                let accs: Vec<f64> = grid.iter().map(|&(e, c)| acc(r, p, e, c)).collect();
                for (t, a) in tally[ri].iter_mut().zip(&accs) {
                    t.0 += a * chars[p] as f64;
                    t.1 += chars[p];
                }
            }
        }
        let mut want = Vec::new();
        for tl in &tally {
            let results: Vec<(f64, f64, f64)> = grid
                .iter()
                .zip(tl)
                .map(|(&(e, c), &(right, n))| (e, c, right / n.max(1) as f64))
                .collect();
            let mut best = results[0];
            for &r in &results[1..] {
                if r.2 > best.2 {
                    best = r;
                }
            }
            want.push((results, best));
        }
        // The harness: candidates (row, eta0, C), row outer, C, then eta0.
        let cands: Vec<(u64, f64, f64)> = rows
            .iter()
            .flat_map(|&r| grid.iter().map(move |&(e, c)| (r, e, c)))
            .collect();
        let built = std::sync::Mutex::new(Vec::new());
        let sel = Search::new(&cands, &parts)
            .mean(Mean::Weighted(chars.iter().map(|&n| n as f64).collect()))
            .run_split_by_split(
                |&p| {
                    built.lock().unwrap().push(p);
                    Ok(format!("kernel set of part {p}"))
                },
                |set: &String, &(r, e, c), &p| {
                    assert_eq!(set, &format!("kernel set of part {p}"));
                    Ok(acc(r, p, e, c))
                },
                &(),
            )
            .unwrap();
        assert_eq!(
            *built.lock().unwrap(),
            parts,
            "one context a part, in order"
        );
        for (ri, &r) in rows.iter().enumerate() {
            let b = sel.best_where(|e| cands[e.candidate].0 == r).unwrap();
            let (results, best) = &want[ri];
            assert_eq!(
                (cands[b.candidate].1, cands[b.candidate].2),
                (best.0, best.1)
            );
            assert_eq!(b.mean.to_bits(), best.2.to_bits());
            for (k, res) in results.iter().enumerate() {
                let e = &sel.entries[ri * grid.len() + k];
                assert_eq!(e.mean.to_bits(), res.2.to_bits());
            }
        }
    }
}
