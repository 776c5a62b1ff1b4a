//! The candidates of the built-in selection when it chooses the learner (issue 28): a learned
//! combination can lose to one of its own kernels (Gonen & Alpaydin 2011, Sec. 5: learned
//! combinations often do no better than the uniform sum or the best single kernel), so the
//! selection scores, on the same folds and the same kernel matrices,
//!
//! - every **single kernel** of the dictionary with lp-MKL's squared loss (kernel ridge),
//!   and, for classes, each Gaussian kernel over all features with the **hinge loss** (a
//!   C-SVC, one-vs-rest for several classes, solved exactly by SMO, `solver::smo`);
//! - the **uniform sum** of the dictionary (lp-MKL at p = inf);
//! - the **learned combination** (lp-MKL at each p of the grid), as before;
//!
//! each over the C grid, from small to large C, warm-started (lp-MKL: from the previous
//! kernel weights; SMO: from the previous dual point scaled by the ratio of the Cs, which
//! stays feasible).
//!
//! **The choice** (`one_se_choice`): each candidate's best C by mean validation score; the
//! best candidate `b`; then the *simplest* candidate whose mean is within one standard error
//! of `b`'s (the one-standard-error rule, Hastie, Tibshirani & Friedman, *Elements of
//! Statistical Learning*, 2nd ed., Sec. 7.10; the standard error is the standard deviation of
//! `b`'s fold scores over `sqrt(folds)`, times `overlap_correction` for the folds'
//! shared training rows, 1.5 at 5 folds, 2.18 at 3 x 5), simplest meaning (`Candidate::rank`) a single kernel with the
//! default learner's squared loss, then a single kernel with the hinge loss (another
//! learner), then the uniform sum, then a learned combination; within that rank the best
//! mean (ties: the first in candidate order).
//!
//! **Successive halving** (`score`), above `HALVING_MIN_ROWS` rows: every candidate is
//! scored on the first `FIRST_FOLDS` folds; one whose best mean there is clearly beaten (below the leader's by
//! more than `clear_margin`, which on small folds is at least two binomial standard errors)
//! stops; so does a learned combination whose best mean there is not ahead of every simpler
//! candidate's (it would need to beat them by a standard error to be chosen, and it costs
//! the most: an alternation of solves per C); the others are scored on the remaining folds.
//! Without halving (small tables, a repeated k-fold), the learned combinations alone go
//! through the same test after the first partition. A learned combination's first round at
//! p > 1 is a **screen**: solved to `SCREEN_TOL` (1e-3) instead of `select_tol`, it only
//! decides whether the combination goes on; one that goes on is scored again on those
//! folds at `select_tol`, so the scores that compete are those of the full tolerance. Only
//! candidates scored on every fold compete. **Budget**: at most `budget` fits (one fit is one
//! candidate at one C on one fold), reserved in candidate order, simplest first, a candidate
//! reserving the fits of all its folds (a screened one its screen's too); a candidate whose fits no longer fit is skipped (the
//! first always runs, so there is always a choice). Both are fixed rules of the scores and counts, so the
//! same seed gives the same choice on any machine and thread count.

use super::fold_cuts::FoldCuts;
use crate::data::{Matrix, Targets};
use crate::error::{Error, Result};
use crate::kernel::KernelMatrix;
use crate::run::{Observer, Progress, StepUnit, StopOnly};
use crate::select::Goal;
use crate::solver::lp_mkl::{lp_mkl_on, lp_mkl_weighted, LpMklParams};
use crate::solver::ridge::Prepared;
use crate::solver::smo::{svc_from, SmoParams, SvmFit};
use crate::task::targets::{decode, prediction_metric};
use crate::task::TaskKind;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// Relative tolerance of lp-MKL's alternation during selection at p <= 1: the learner's
/// own. (At 1e-5 the slow multiplicative steps of p = 1 stopped far from the optimum: a
/// validation MSE 27 % below the converged one in the test of the warm path.)
pub(crate) const SELECT_TOL: f64 = 1e-8;
/// ... at p > 1 (the grid's 4/3 and 2, and the uniform sum), where the steps contract
/// fast: about 60 % of the alternations of 1e-8 (breast-cancer, 3 x 5 folds), and the
/// validation MSE of the warm path within 1e-3 (relative) of fully converged cold solves
/// (`the_warm_path_scores_what_cold_solves_score`; at 1e-5 it was 1.02e-3 off). The refit
/// runs at the learner's own tolerance.
pub(crate) const SELECT_TOL_SMOOTH: f64 = 1e-6;

/// lp-MKL's relative tolerance in the selection's fits at this `p` ([`SELECT_TOL`],
/// [`SELECT_TOL_SMOOTH`]).
pub(crate) fn select_tol(p: f64) -> f64 {
    if p > 1.0 {
        SELECT_TOL_SMOOTH
    } else {
        SELECT_TOL
    }
}

/// Relative tolerance of a learned combination's first round at p > 1 (its **screen**): it
/// only decides whether the combination leads the simpler candidates there and goes on. One
/// that goes on is scored again on those folds at [`select_tol`], so every score that
/// competes in the choice is as exact as without the screen. On make_classification
/// (1,000 x 20 rows, 27 kernels) the screen took 98 alternations where 1e-6 took 244.
pub(crate) const SCREEN_TOL: f64 = 1e-3;

/// Whether a candidate's first round is a screen ([`SCREEN_TOL`]): learned combinations at
/// p > 1 (at p <= 1 the steps are too slow for a loose tolerance to tell), when there is a
/// round after the first.
fn screened(cand: &Candidate, first: usize, folds: usize) -> bool {
    cand.family == Family::Learned && cand.p > 1.0 && first < folds
}

/// Folds every candidate is scored on before the clearly beaten ones stop.
pub(crate) const FIRST_FOLDS: usize = 2;
/// Successive halving runs only when the selection scores more rows than this; on fewer,
/// every candidate is scored on every fold. Two folds of a small table hold too few
/// validation rows to rank candidates (glass: 60 rows, where one row is 1.7 points, and
/// the single kernel the full cross-validation picks was stopped on 1 of the 10 splits of
/// `reproduce uci`), and
/// there is little time to save: every fit is an n^3 solve on at most 400 training rows.
pub(crate) const HALVING_MIN_ROWS: usize = 500;

/// Whether successive halving runs on a selection over `rows` rows ([`HALVING_MIN_ROWS`]).
pub(crate) fn halving_applies(rows: usize) -> bool {
    rows > HALVING_MIN_ROWS
}
/// Accuracy: a candidate is clearly beaten on the first folds when it is below the leader
/// by more than this (or by more than two of the leader's standard errors, when larger).
pub(crate) const CLEAR_MARGIN_ACCURACY: f64 = 0.03;
/// MSE: ... when its MSE is above the leader's by more than this fraction (or by two of the
/// leader's standard errors, when larger).
pub(crate) const CLEAR_MARGIN_MSE: f64 = 0.15;

/// A candidate's family, in the order the tie rule prefers (simplest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Family {
    /// One kernel of the dictionary.
    Single,
    /// The uniform sum of the dictionary.
    Uniform,
    /// lp-MKL's learned combination.
    Learned,
}

impl Family {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Family::Single => "single",
            Family::Uniform => "uniform",
            Family::Learned => "learned",
        }
    }
}

/// One candidate: a family, its loss, its kernels (a range of the expanded dictionary) and
/// lp-MKL's p (2 for one kernel, inf for the uniform sum).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Candidate {
    pub family: Family,
    /// The hinge loss (C-SVC by SMO) instead of the squared loss (lp-MKL).
    pub hinge: bool,
    pub kernels: Range<usize>,
    pub p: f64,
    /// `single rbf:scale=4,norm=trace`, `svm rbf:norm=trace`, `uniform sum of 7`, `lp-mkl p=2`.
    pub label: String,
}

impl Candidate {
    /// The tie rule's order (module docs): 0 a single kernel with lp-MKL's squared loss (the
    /// default learner), 1 a single kernel with the hinge loss (a second learner), 2 the
    /// uniform sum, 3 a learned combination.
    pub(crate) fn rank(&self) -> usize {
        match (self.family, self.hinge) {
            (Family::Single, false) => 0,
            (Family::Single, true) => 1,
            (Family::Uniform, _) => 2,
            (Family::Learned, _) => 3,
        }
    }

    /// `single kernel`, `single kernel, hinge loss`, `uniform sum`, `learned combination`.
    pub(crate) fn kind(&self) -> &'static str {
        match self.rank() {
            0 => "single kernel",
            1 => "single kernel, hinge loss",
            2 => "uniform sum",
            _ => "learned combination",
        }
    }

    /// The candidate's setting under its learner (`lp-mkl` or `svm`) in the grid: the
    /// kernel of a single one, `p=inf (uniform sum of 7)`, `p=4/3`.
    pub(crate) fn setting(&self) -> String {
        match self.family {
            Family::Single => self
                .label
                .split_once(' ')
                .map_or(self.label.clone(), |(_, k)| k.to_string()),
            Family::Uniform => format!("p=inf ({})", self.label),
            Family::Learned => self
                .label
                .strip_prefix("lp-mkl ")
                .unwrap_or(&self.label)
                .to_string(),
        }
    }
}

/// The candidates for a dictionary of `names.len()` kernels (`gaussian[m]`: kernel `m` is a
/// Gaussian over all features held as a dense matrix, which gets a hinge-loss candidate when
/// `classes`), in candidate order: single kernels, hinge singles, the uniform sum, then
/// lp-MKL at each p of `ps`.
pub(crate) fn candidates(
    names: &[String],
    gaussian: &[bool],
    classes: bool,
    ps: &[f64],
) -> Vec<Candidate> {
    let m = names.len();
    let mut out: Vec<Candidate> = (0..m)
        .map(|k| Candidate {
            family: Family::Single,
            hinge: false,
            kernels: k..k + 1,
            p: 2.0,
            label: format!("single {}", names[k]),
        })
        .collect();
    if classes {
        out.extend((0..m).filter(|&k| gaussian[k]).map(|k| Candidate {
            family: Family::Single,
            hinge: true,
            kernels: k..k + 1,
            p: 2.0,
            label: format!("svm {}", names[k]),
        }));
    }
    if m > 1 {
        out.push(Candidate {
            family: Family::Uniform,
            hinge: false,
            kernels: 0..m,
            p: f64::INFINITY,
            label: format!("uniform sum of {m}"),
        });
        out.extend(ps.iter().map(|&p| Candidate {
            family: Family::Learned,
            hinge: false,
            kernels: 0..m,
            p,
            label: format!("lp-mkl p={}", crate::solver::lp_mkl::p_label(p)),
        }));
    }
    out
}

/// A fold: its kernel matrices (cut when first read) and targets.
pub(crate) struct Fold<'a> {
    pub kernels: FoldCuts<'a>,
    /// Encoded targets of the training rows.
    pub y: Matrix,
    pub validation: Targets,
    /// The training rows' weights (`None`: unweighted); the validation scores are not
    /// weighted (as scikit-learn's `GridSearchCV` by default).
    pub weights: Option<Vec<f64>>,
}

/// What the scoring needs besides the candidates.
pub(crate) struct Problem<'a> {
    pub folds: &'a [Fold<'a>],
    pub c_grid: &'a [f64],
    pub task: TaskKind,
    pub bias: bool,
    pub goal: Goal,
    /// At most this many fits (`None`: no limit).
    pub budget: Option<usize>,
    /// Stop the clearly beaten candidates after the first folds ([`halving_applies`]).
    pub halving: bool,
    /// Folds in one partition of the cross-validation (`folds.len()` unless repeated).
    /// Without halving, a learned combination goes on past the first partition only when
    /// it leads the simpler candidates there.
    pub partition: usize,
    /// The opt-in budget in seconds: no candidate starts after this instant (the seconds,
    /// for the record). Not deterministic.
    pub deadline: Option<(std::time::Instant, f64)>,
    /// When the selection started (the progress's seconds).
    pub start: std::time::Instant,
}

/// Every candidate's scores: `scores[c][fold]` (`None` where it did not run), and why it
/// stopped early, if it did.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scores {
    pub scores: Vec<Vec<Option<f64>>>,
    pub stopped: Option<String>,
}

impl Scores {
    /// The mean over the folds of each C (`None` unless scored on all `folds`).
    pub(crate) fn means(&self, folds: usize) -> Vec<Option<f64>> {
        self.scores
            .iter()
            .map(|f| {
                let v: Vec<f64> = f.iter().take(folds).flatten().copied().collect();
                (v.len() == folds && v.iter().all(|x| x.is_finite()))
                    .then(|| v.iter().sum::<f64>() / folds as f64)
            })
            .collect()
    }
}

/// The mean and standard error (`std / sqrt(k)`, the sample standard deviation) of scores.
pub(crate) fn mean_se(v: &[f64]) -> (f64, f64) {
    let k = v.len() as f64;
    let mean = v.iter().sum::<f64>() / k;
    if v.len() < 2 {
        return (mean, 0.0);
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0);
    (mean, (var / k).sqrt())
}

/// The factor on the standard error of a k-fold mean that accounts for the folds' overlapping
/// training rows: the fold scores are correlated, so `std / sqrt(k)` understates the
/// mean's spread. Nadeau & Bengio (2003, *Inference for the Generalization Error*, Machine
/// Learning 52, eq. 6) correct the variance from `1/k` to `1/k + n_val/n_train` times the
/// fold scores' variance; with k folds `n_val/n_train = 1/(k - 1)`, so the standard error
/// grows by `sqrt(1 + k/(k - 1))` (1.5 at 5 folds). Over `repeats` partitions of k folds
/// each (`folds = repeats * k` scores; Bouckaert & Frank 2004's corrected repeated
/// k-fold test) the variance is `1/folds + 1/(k - 1)`, the factor `sqrt(1 + folds/(k - 1))`
/// (2.18 for 3 x 5 folds: the standard error still shrinks, from `0.67 std` to `0.56 std`).
pub(crate) fn overlap_correction(folds: usize, repeats: usize) -> f64 {
    let k = folds / repeats.max(1);
    if k < 2 {
        return 1.0;
    }
    (1.0 + folds as f64 / (k as f64 - 1.0)).sqrt()
}

/// How far below (accuracy) or above (MSE) the leader a candidate must be on the first folds
/// to stop (module docs): `leader` the leader's mean, `se` its standard error over those
/// folds, `rows` the validation rows they hold. An accuracy's standard error is also at
/// least the binomial one, `sqrt(a (1 - a) / rows)`: two fold scores estimate their spread
/// poorly (two close scores give a standard error near 0), and on small folds a few rows
/// move the mean by more than [`CLEAR_MARGIN_ACCURACY`] (glass: 60 validation rows in two
/// folds, a binomial standard error of 6 points at 70 %).
pub(crate) fn clear_margin(goal: Goal, leader: f64, se: f64, rows: usize) -> f64 {
    match goal {
        Goal::Maximize => {
            let a = leader.clamp(0.0, 1.0);
            let binomial = (a * (1.0 - a) / rows.max(1) as f64).sqrt();
            CLEAR_MARGIN_ACCURACY.max(2.0 * se.max(binomial))
        }
        Goal::Minimize => (CLEAR_MARGIN_MSE * leader.abs()).max(2.0 * se),
    }
}

/// The best C of one candidate by mean (ties to the first in `c_grid` order): its index,
/// mean.
fn best_c(means: &[Option<f64>], goal: Goal) -> Option<(usize, f64)> {
    let mut best: Option<(usize, f64)> = None;
    for (j, m) in means.iter().enumerate() {
        let Some(m) = *m else { continue };
        let better = match (best, goal) {
            (None, _) => true,
            (Some((_, b)), Goal::Maximize) => m > b,
            (Some((_, b)), Goal::Minimize) => m < b,
        };
        if better {
            best = Some((j, m));
        }
    }
    best
}

/// Scores every candidate on `problem`'s folds with successive halving and the budget
/// (module docs); `scores[i]` belongs to `cands[i]`. Fits run in parallel over (fold,
/// candidate); the result does not depend on the thread count.
/// `observer` sees the fits done ([`StepUnit::Fit`]) after each candidate's C path on a
/// fold, from the worker threads, and may stop the selection; the fits themselves report
/// nothing.
pub(crate) fn score(
    cands: &[Candidate],
    problem: &Problem<'_>,
    observer: &dyn Observer,
) -> Result<Vec<Scores>> {
    let stop = &StopOnly(observer);
    let k = problem.folds.len();
    let nc = problem.c_grid.len();
    let done = AtomicU64::new(0);
    let report = |total: usize| {
        observer.progress(&Progress {
            step: done.load(Ordering::Relaxed),
            total: Some(total as u64),
            unit: StepUnit::Fit,
            objective: None,
            seconds: problem.start.elapsed().as_secs_f64(),
        });
    };
    let mut out: Vec<Scores> = cands
        .iter()
        .map(|_| Scores {
            scores: vec![vec![None; k]; nc],
            stopped: None,
        })
        .collect();
    let mut spent = 0usize;
    // The first round: the first folds under successive halving, else the first
    // partition of a repeated cross-validation (then only learned combinations can stop).
    let first = if problem.halving {
        FIRST_FOLDS.min(k)
    } else {
        problem.partition.clamp(1, k.max(1))
    };
    let screen: Vec<bool> = cands.iter().map(|c| screened(c, first, k)).collect();
    // Screened candidates that went on: scored again from fold 0 in the second round.
    let mut rescore = vec![false; cands.len()];
    for round in [0..first, first..k] {
        if round.is_empty() {
            continue;
        }
        let folds_of = |i: usize| {
            if rescore[i] {
                0..round.end
            } else {
                round.clone()
            }
        };
        // Who runs this round: not stopped and, on the first round, within the budget
        // (candidate order; a candidate reserves the fits of every fold, the first one
        // always runs).
        let mut run = Vec::new();
        for (i, s) in out.iter_mut().enumerate() {
            if s.stopped.is_some() {
                continue;
            }
            if round.start == 0 {
                // A screened candidate reserves its screen's fits too.
                let cost = nc * (k + if screen[i] { first } else { 0 });
                if i > 0 && problem.budget.is_some_and(|b| spent + cost > b) {
                    s.stopped = Some(format!(
                        "skipped: not within the budget of {} fits ({spent} reserved before it)",
                        problem.budget.unwrap_or(0)
                    ));
                    continue;
                }
                spent += cost;
            }
            run.push(i);
        }
        // The fits planned from here: those of the candidates running now, on this round's
        // folds and the next (halving may stop some of them).
        let planned = done.load(Ordering::Relaxed) as usize
            + run
                .iter()
                .map(|&i| {
                    let again = if round.start == 0 && screen[i] {
                        first
                    } else {
                        0
                    };
                    nc * (k - folds_of(i).start + again)
                })
                .sum::<usize>();
        report(planned);
        // With a budget in seconds, the first round starts candidates a few at a time, in
        // candidate order, while time remains (started ones finish).
        let chunk = match (problem.deadline, round.start) {
            (Some(_), 0) => rayon::current_num_threads().max(1),
            _ => run.len().max(1),
        };
        for (g, group) in run.chunks(chunk).enumerate() {
            if let Some((deadline, secs)) = problem.deadline.filter(|_| round.start == 0) {
                if g > 0 && std::time::Instant::now() >= deadline {
                    for &i in group {
                        out[i].stopped = Some(format!(
                            "skipped: the budget of {secs} s ran out before it started"
                        ));
                    }
                    continue;
                }
            }
            let mut jobs: Vec<(usize, usize)> = group
                .iter()
                .flat_map(|&i| folds_of(i).map(move |f| (f, i)))
                .collect();
            // The costliest first (learned combinations, the uniform sum, hinge losses),
            // so that no long fit starts last while the other threads idle; the scores
            // land by (fold, candidate) whatever the order.
            jobs.sort_by_key(|&(_, i)| std::cmp::Reverse(cands[i].rank()));
            let results: Vec<Result<Vec<f64>>> = jobs
                .par_iter()
                .with_max_len(1)
                .map(|&(f, i)| {
                    if stop.should_stop() {
                        // A stopped search scores nothing worth choosing.
                        return Ok(vec![f64::NAN; nc]);
                    }
                    let loose = round.start == 0 && screen[i];
                    let scored = c_path(&cands[i], &problem.folds[f], problem, loose, stop);
                    done.fetch_add(nc as u64, Ordering::Relaxed);
                    report(planned);
                    scored
                })
                .collect();
            for (&(f, i), r) in jobs.iter().zip(results) {
                let v = r?;
                for (j, s) in v.into_iter().enumerate() {
                    out[i].scores[j][f] = Some(s);
                }
            }
        }
        if round.start == 0 && first < k {
            if problem.halving {
                let rows = problem.folds[..first]
                    .iter()
                    .map(|f| f.validation.len())
                    .sum();
                halve(cands, &mut out, first, rows, problem.goal);
            } else {
                stop_learned_not_leading(cands, &mut out, first, problem.goal);
            }
            for (i, s) in out.iter_mut().enumerate() {
                if !screen[i] {
                    continue;
                }
                match &mut s.stopped {
                    Some(why) => why.push_str(&format!(
                        " (screened at a relative tolerance of {SCREEN_TOL:e})"
                    )),
                    None => {
                        // Scored again at the selection's tolerance from fold 0.
                        s.scores.iter_mut().for_each(|c| c[..first].fill(None));
                        rescore[i] = true;
                    }
                }
            }
        }
    }
    Ok(out)
}

/// After the first folds (holding `rows` validation rows): stops the candidates clearly
/// beaten there, then the learned combinations that do not lead every simpler candidate
/// there (module docs).
fn halve(cands: &[Candidate], out: &mut [Scores], first: usize, rows: usize, goal: Goal) {
    stop_clearly_beaten(out, first, rows, goal);
    stop_learned_not_leading(cands, out, first, goal);
}

/// A learned combination is chosen only when it beats every simpler candidate by more than
/// a standard error (`one_se_choice`), so one that does not lead them on the first folds
/// stops there: it costs the most fits of all (an alternation of solves per C) and would
/// rarely be chosen. Ties stop it (the simpler is preferred).
fn stop_learned_not_leading(cands: &[Candidate], out: &mut [Scores], first: usize, goal: Goal) {
    let best = |s: &Scores| best_c(&s.means(first), goal).map(|b| b.1);
    let simpler: Vec<Option<f64>> = cands
        .iter()
        .zip(out.iter())
        .filter(|(c, s)| c.family != Family::Learned && s.stopped.is_none())
        .map(|(_, s)| best(s))
        .collect();
    let Some((_, lead)) = best_c(&simpler, goal) else {
        return;
    };
    for (c, s) in cands.iter().zip(out.iter_mut()) {
        if c.family != Family::Learned || s.stopped.is_some() {
            continue;
        }
        let Some(m) = best(s) else { continue };
        let leads = match goal {
            Goal::Maximize => m > lead,
            Goal::Minimize => m < lead,
        };
        if !leads {
            s.stopped = Some(format!(
                "stopped after {first} folds: {m:.4}, not ahead of the simpler candidates' \
                 {lead:.4} (a learned combination goes on only when it leads)"
            ));
        }
    }
}

/// After the first folds: stops the candidates clearly beaten there (module docs).
fn stop_clearly_beaten(out: &mut [Scores], first: usize, rows: usize, goal: Goal) {
    let bests: Vec<Option<(usize, f64)>> = out
        .iter()
        .map(|s| {
            if s.stopped.is_some() {
                None
            } else {
                best_c(&s.means(first), goal)
            }
        })
        .collect();
    let Some(leader) = best_c(
        &bests.iter().map(|b| b.map(|b| b.1)).collect::<Vec<_>>(),
        goal,
    )
    .map(|(i, _)| i) else {
        return;
    };
    let (lc, lmean) = bests[leader].unwrap_or((0, f64::NAN));
    let lscores: Vec<f64> = out[leader].scores[lc][..first]
        .iter()
        .flatten()
        .copied()
        .collect();
    let (_, se) = mean_se(&lscores);
    let margin = clear_margin(goal, lmean, se, rows);
    for (s, b) in out.iter_mut().zip(&bests) {
        if s.stopped.is_some() {
            continue;
        }
        let beaten = match b {
            None => true,
            Some((_, m)) => match goal {
                Goal::Maximize => *m < lmean - margin,
                Goal::Minimize => *m > lmean + margin,
            },
        };
        if beaten {
            s.stopped = Some(match b {
                Some((_, m)) => format!(
                    "stopped after {first} folds: {m:.4} against the leader's {lmean:.4} \
                     (margin {margin:.4})"
                ),
                None => format!("stopped after {first} folds: no finite score"),
            });
        }
    }
}

/// One candidate's C path on one fold: the validation score at each C of the grid (in grid
/// order), solved from small to large C, each solve warm-started from the previous one;
/// lp-MKL at [`SCREEN_TOL`] when `screen`, else at [`select_tol`].
fn c_path(
    cand: &Candidate,
    fold: &Fold,
    problem: &Problem<'_>,
    screen: bool,
    stop: &dyn Observer,
) -> Result<Vec<f64>> {
    let grid = problem.c_grid;
    let mut order: Vec<usize> = (0..grid.len()).collect();
    order.sort_by(|&a, &b| grid[a].total_cmp(&grid[b]));
    let mut out = vec![f64::NAN; grid.len()];
    // The uniform sum is one kernel, summed once on all rows.
    let idx: Vec<usize> = match cand.family {
        Family::Uniform => vec![fold.kernels.sum_index()],
        _ => cand.kernels.clone().collect(),
    };
    let train: Vec<&KernelMatrix> = idx.iter().map(|&m| fold.kernels.train(m)).collect();
    let test: Vec<&KernelMatrix> = idx.iter().map(|&m| fold.kernels.test(m)).collect();
    if cand.hinge {
        let k = train[0].to_dense();
        let KernelMatrix::Dense(kt) = test[0] else {
            return Err(Error::unsupported(
                "the hinge-loss candidates take dense kernel matrices",
            ));
        };
        let machines = machine_labels(problem.task, &fold.y)?;
        let mut prev: Option<(f64, Vec<SvmFit>)> = None;
        let params = SmoParams::default();
        for &j in &order {
            let c = grid[j];
            let fits: Vec<SvmFit> = machines
                .iter()
                .enumerate()
                .map(|(o, y)| {
                    let start: Option<Vec<f64>> = prev
                        .as_ref()
                        .map(|(pc, f)| f[o].solution.alpha.iter().map(|a| a * c / pc).collect());
                    let w = fold.weights.as_deref();
                    svc_from(k.view(), y, c, w, start.as_deref(), &params, stop)
                })
                .collect::<Result<_>>()?;
            let mut f = Matrix::zeros(kt.rows, fits.len());
            for (o, fit) in fits.iter().enumerate() {
                for (r, v) in fit.decision(kt.view())?.into_iter().enumerate() {
                    f.set(r, o, v);
                }
            }
            out[j] = validation_score(problem.task, &f, &fold.validation)?;
            prev = Some((c, fits));
        }
    } else {
        // Unweighted, the fold's kernels (checked once on all rows) are prepared once for
        // the whole C path, with the fold's column means (weighted fits transform the
        // kernels per fit).
        let prepared = match fold.weights {
            None if problem.bias => Some(Prepared::from_refs_with_means(
                train.clone(),
                true,
                idx.iter()
                    .map(|&m| fold.kernels.col_means(m).to_vec())
                    .collect(),
            )),
            None => Some(Prepared::from_refs(train.clone(), false)),
            Some(_) => None,
        };
        let owned: Vec<KernelMatrix> = match fold.weights {
            Some(_) => train.iter().map(|&k| k.clone()).collect(),
            None => Vec::new(),
        };
        let mut theta: Option<Vec<f64>> = None;
        for &j in &order {
            let params = LpMklParams {
                p: cand.p,
                lambda: 1.0 / grid[j],
                bias: problem.bias,
                tol: if screen {
                    SCREEN_TOL
                } else {
                    select_tol(cand.p)
                },
                init_theta: theta.as_ref().map(|t| {
                    let top = t.iter().cloned().fold(0.0, f64::max);
                    t.iter().map(|v| v.max(1e-6 * top)).collect()
                }),
                ..LpMklParams::default()
            };
            let (sol, _) = match &prepared {
                Some(prepared) => lp_mkl_on(prepared, &fold.y, &params, stop)?,
                None => lp_mkl_weighted(&owned, &fold.y, fold.weights.as_deref(), &params, stop)?,
            };
            let f = sol.decision(&train, &test)?;
            out[j] = validation_score(problem.task, &f, &fold.validation)?;
            theta = Some(sol.theta);
        }
    }
    Ok(out)
}

/// The +-1 labels of each machine: the one column of a binary task, one per class (the class
/// against the rest) of a multiclass one.
fn machine_labels(task: TaskKind, y: &Matrix) -> Result<Vec<Vec<f64>>> {
    match task {
        TaskKind::Binary => Ok(vec![(0..y.rows).map(|i| y.get(i, 0)).collect()]),
        TaskKind::Multiclass => Ok((0..y.cols)
            .map(|c| {
                (0..y.rows)
                    .map(|i| if y.get(i, c) > 0.5 { 1.0 } else { -1.0 })
                    .collect()
            })
            .collect()),
        TaskKind::Regression => Err(Error::unsupported(
            "the hinge-loss candidates are for classes",
        )),
    }
}

fn validation_score(task: TaskKind, f: &Matrix, validation: &Targets) -> Result<f64> {
    let pred = decode(task, f)?;
    Ok(prediction_metric(&pred, validation).1)
}

/// The choice among scored candidates (module docs): `(candidate, C index, why)`, or `None`
/// when no candidate has a finite mean on every fold. `folds` is the number of folds, over
/// `repeats` partitions of the rows.
pub(crate) fn one_se_choice(
    cands: &[Candidate],
    scores: &[Scores],
    folds: usize,
    repeats: usize,
    goal: Goal,
) -> Option<(usize, usize, String)> {
    let bests: Vec<Option<(usize, f64)>> = scores
        .iter()
        .map(|s| best_c(&s.means(folds), goal))
        .collect();
    let (b, bmean) = best_c(
        &bests.iter().map(|x| x.map(|x| x.1)).collect::<Vec<_>>(),
        goal,
    )?;
    let bc = bests[b]?.0;
    let bscores: Vec<f64> = scores[b].scores[bc].iter().flatten().copied().collect();
    let se = mean_se(&bscores).1 * overlap_correction(folds, repeats);
    let within = |m: f64| match goal {
        Goal::Maximize => m >= bmean - se,
        Goal::Minimize => m <= bmean + se,
    };
    let top = cands[b].rank();
    // The simplest rank with a candidate within one standard error, then its best mean.
    for rank in 0..=top {
        let members: Vec<Option<f64>> = (0..cands.len())
            .map(|i| {
                bests[i]
                    .filter(|&(_, m)| cands[i].rank() == rank && within(m))
                    .map(|x| x.1)
            })
            .collect();
        if let Some((i, m)) = best_c(&members, goal) {
            let why = if i == b {
                format!(
                    "{}: the best mean ({m:.4}, standard error {se:.4})",
                    cands[i].label
                )
            } else {
                format!(
                    "{}: mean {m:.4}, within one standard error ({se:.4}) of the best, {} \
                     ({bmean:.4}), and simpler ({} before {})",
                    cands[i].label,
                    cands[b].label,
                    cands[i].kind(),
                    cands[b].kind()
                )
            };
            return Some((i, bests[i]?.0, why));
        }
    }
    None
}

#[cfg(test)]
mod tests;
