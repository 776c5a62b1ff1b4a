//! Randomized mirror descent MKL over polynomial kernels: Algorithm 2 of Afkanpour et al.
//! (2013) ("projected stochastic gradient") with the gradient sampled by Algorithm 3
//! ([`super::poly_sampler`]), and the uniform-coordinate-descent (UCD) baseline.
//!
//! # Problem
//! Minimize `J(theta) = (lambda/2) y^T (K_theta + lambda I)^-1 y` ([`super::objective`]) over
//! the positive part of the unit l2 ball (`Psi = 1/2 ||.||_2^2`, `K = Delta_2`: block norm
//! q = 4/3, kernel-weight norm p = 2 in FORMULAS.md's notation), one weight per distinct
//! product kernel `K_m` (multi-index `m`, degree `<= D`, weight `rho_d`).
//!
//! # Algorithm 2 with the estimate of eq. 14
//! Iteration `k` (from `theta^(0) = 0`): draw `m ~ s_{k-1}`, estimate the gradient by
//! `g_hat = (g_m / s_m) e_m` (unbiased, eq. 14), and set
//! `theta^(k) = Pi(theta^(k-1) - eta_k g_hat)`, `Pi` the projection onto the positive part of
//! the unit l2 ball. Every `g_m < 0`, so the step only increases `theta_m` and the
//! projection is a scaling by `min(1, 1/||theta||)`.
//!
//! Sampling distributions ([`Sampling`]):
//! - [`Sampling::Importance`] ("Stoch"): Algorithm 3, `s_m = c_m |g_m| / C'` where `c_m` is
//!   the number of orderings of `m` (see [`super::poly_sampler`]); the importance ratio
//!   `q_m / s_m = C' / (c_m ||g||_1)` is exact.
//! - [`Sampling::Proportional`]: exactly `q_m = |g_m| / ||g||_1` (Algorithm 3 plus rejection).
//! - [`Sampling::Uniform`] (UCD): uniform over all `C(r + D, D)` kernels.
//! - [`Sampling::User`]: any [`IndexDistribution`].
//!
//! Step size: `eta_k = eta0 / (||g^(k-1)||_1 sqrt(k))`, i.e. `theta_m` grows by
//! `eta0 / sqrt(k) * q_m / s_m`. Corollary 3.3's step is `1 / sqrt(B T)` with
//! `B = C^2 max q/s / 2`, `C` a bound on `||g||_1`: using the current `||g||_1` instead of its
//! bound makes `eta0` scale free (the objective's scale, `lambda` and `n` drop out), so one
//! grid of `eta0` serves every data set. `eta0` is fixed ([`StepRule::Fixed`]) or picked by a
//! pilot ([`StepRule::Pilot`]): every candidate runs a short budget from `theta^(0)` with the
//! same random numbers, the one with the lowest objective continues, the others' time counts.
//!
//! Other step rules measured on the Figure 1 tables (lambda = 1e-5, 5 s or 300 iterations,
//! `diag_fig1` in `reproduce::mirror_descent`) were not better on all four tables, and most
//! moved `J / J*` only within the run-to-run noise of the pilot (about ±0.005): decay
//! exponents 0, 1/4, 1/2; averaging powers 1 and 3; the `eta0` grid widened to 30 and 100
//! (the pilot then picks large steps that look good early and end worse); a step scaled by
//! `||theta||_1` (the fixed point `theta* = |g| / ||g||_2` has `||theta*||_1 = ||g||_1 /
//! ||g||_2`; better on sonar and waveform, worse on ionosphere). What limits the accuracy
//! after a few seconds is the number of sampled coordinates per kernel: the optimum is
//! dense, its `theta*_m` estimated by how often `m` was drawn, so the batch rule
//! ([`auto_batch`]) mattered most. The same density bounds what importance sampling can
//! gain over UCD: the second moment of the eq.-14 estimate under uniform sampling is
//! `N sum_m q_m^2` times that under sampling by `|g|`, and at the end of a 5 s run it is
//! only 5.3 (ionosphere), 3.6 (sonar), 3.0 (ringnorm), 2.3 (waveform), while a UCD
//! iteration is cheaper (no Algorithm 3 draws).
//!
//! Start: `theta^(0) = 0` as printed ([`Init::Zero`], the default); the uniform start
//! `N^{-1/2} 1` ([`Init::Uniform`]) is an option. Measured (lambda = 1e-4, 1000 iterations,
//! the Figure 2 synthetic problem at r = 100, 176,851 kernels): `J` 4.26e-5 from zero against
//! 4.96e-5 from the uniform start, test MSE 0.835 against 0.926 — the uniform start gives
//! every kernel the weight `N^{-1/2}`, i.e. the whole unit norm to the uniform kernel, which
//! the averaged iterate forgets slowly; on the Figure 1 tables the two starts reach the same
//! `J` within the run-to-run noise (with a batch, `K_theta` is full rank after `n / B`
//! iterations, so the rank deficiency of the zero start costs a handful of iterations).
//!
//! One choice departs from Algorithm 2 as printed, an option whose printed form remains
//! available:
//! - **Batch** ([`SolverOptions::batch`]): `B` coordinates drawn i.i.d. per iteration, the
//!   gradient estimate the average of their eq.-14 estimates (still unbiased, variance / B).
//!   An iteration costs a fixed number of `O(n^2)` passes (the masses of Algorithm 3, the
//!   solve for `alpha`, the averaged kernel) plus a rank-`B` change of `K_phi`; the draws of
//!   Algorithm 3 run level by level and share every step-6 computation whose state they
//!   share ([`PolySampler::draw_batch`]). `B = 1` is the paper's algorithm; the default
//!   ([`auto_batch`]) was measured on the Figure 1 tables.
//!
//! Returned iterate: the weighted average `theta_bar = sum_k w_k theta^(k) / sum_k w_k` with
//! `w_k = k^power` (`power = -1/2` is Theorem 3.1's step-weighted average for
//! `eta_k ~ 1/sqrt(k)`; larger powers forget the early iterates faster), rescaled onto the
//! unit sphere: `J(s theta)` decreases in `s` (`K_{s theta} = s K_theta`), so the rescaling
//! never hurts and stays feasible.
//!
//! # Keeping `K_theta` current
//! `theta = c phi` with a scalar `c`: an update touches one `phi_m` and adds
//! `dphi rho_d^-2 K_m` to `K_phi`; the projection changes `c` only. With rank-one kernels
//! (per-variable linear base kernels, `K_m = z_m z_m^T`) the Cholesky factor of
//! `K_phi + mu0 I` is updated in `O(n^2)` (faer's rank-one update), and
//! `alpha = (c K_phi + lambda I)^-1 y = (K_phi + mu I)^-1 y / c`, `mu = lambda / c`, is solved
//! by conjugate gradients preconditioned with that factor: the preconditioned matrix
//! `I + (mu - mu0) (K_phi + mu0 I)^-1` has its spectrum in `[1, mu/mu0]`, so a handful of
//! `O(n^2)` iterations suffice; the factor of `K_phi + (lambda / c) I` is recomputed when
//! `mu/mu0` leaves `[1, 1 + tau]`, and also whenever the batch is large against `n`
//! (`8 B > n`, `RANK_UPDATE_RATIO`): a rank-`B` update then costs more than a new
//! factorization (measured: `n = 140`, `B = 234`: 1.84 ms against 0.09 ms), which also
//! makes the solve direct. Full-rank product kernels (e.g. Gaussian base kernels)
//! refactor every iteration (`O(n^3)`). The averaged `K_theta_bar` is accumulated the same
//! way (`O(n^2)` per iteration), and per-kernel averages lazily (`O(1)` per iteration), so
//! memory is `O(n^2 D)` plus one entry per kernel ever sampled — never per kernel of the
//! family.

use super::poly_sampler::{pos, PolyBasis, PolySampler};
use crate::data::standardize::{Standardizer, TargetScaler};
use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::kernel::{
    expand_specs, fit_all, FittedKernel, FittedKind, KernelSpec, MemoryLimit, Normalization,
};
use crate::linalg::{axpy, dot, SpdFactor};
use crate::multiset::{index_name, orderings, DegreeUniform, IndexDistribution, MultiIndex};
use faer::{Accum, MatMut, MatRef, Par};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

/// Default grid of `eta0` for the pilot rule.
pub const DEFAULT_ETA0_GRID: [f64; 5] = [0.1, 0.3, 1.0, 3.0, 10.0];
/// Default fraction of the budget spent on pilots (all candidates together).
pub const DEFAULT_PILOT_FRACTION: f64 = 0.1;
/// Default averaging power (`w_k = k^power`).
pub const DEFAULT_AVERAGING_POWER: f64 = 1.0;
/// Default step decay exponent (`eta_k ~ k^-decay`).
pub const DEFAULT_STEP_DECAY: f64 = 0.5;
/// Refactor when `mu / mu0` leaves `[1, 1 + REFACTOR_TAU]`.
const REFACTOR_TAU: f64 = 0.25;
/// `c` (the projection's common scale) is folded into `phi` when it falls below this.
const RENORMALIZE_BELOW: f64 = 1e-6;
/// Refactor after this many rank-one updates in any case (rounding hygiene).
const MAX_RANK_UPDATES: usize = 2000;
/// Rank-`b` Cholesky updates are used only while `b * RANK_UPDATE_RATIO <= n`; beyond, the
/// factor is recomputed. Measured (faer, one core): `n = 83`, `b = 394`: update 1.72 ms,
/// new factor 0.04 ms; `n = 140`, `b = 234`: 1.84 / 0.09 ms; `n = 500`: `b = 65` 3.57 /
/// 2.27 ms, `b = 16` 0.82 / 2.23 ms.
const RANK_UPDATE_RATIO: usize = 8;
/// Relative accuracy of the preconditioned conjugate gradient solve.
const PCG_TOL: f64 = 1e-10;
const PCG_MAX_ITER: usize = 60;

/// How the coordinate is drawn (the distribution `s_{k-1}` of eq. 14).
#[derive(Debug, Clone)]
pub enum Sampling {
    /// Algorithm 3 with its exact importance ratio ("Stoch" of the paper).
    Importance,
    /// Exactly proportional to `|g_m|` (Algorithm 3 plus rejection).
    Proportional,
    /// Uniform over all distinct product kernels (UCD).
    Uniform,
    /// A user-given distribution.
    User(Arc<dyn IndexDistribution>),
}

impl Sampling {
    /// `stoch` / `importance` / `mirror-descent`, `proportional`, `ucd` / `uniform`.
    pub fn parse(s: &str) -> Result<Sampling> {
        match s.trim().to_ascii_lowercase().as_str() {
            "stoch" | "importance" | "mirror-descent" => Ok(Sampling::Importance),
            "proportional" | "exact" => Ok(Sampling::Proportional),
            "ucd" | "uniform" => Ok(Sampling::Uniform),
            other => Err(Error::invalid(format!(
                "unknown sampling '{other}': expected stoch, proportional or ucd"
            ))),
        }
    }

    /// Short name.
    pub fn name(&self) -> &'static str {
        match self {
            Sampling::Importance => "stoch",
            Sampling::Proportional => "proportional",
            Sampling::Uniform => "ucd",
            Sampling::User(_) => "user",
        }
    }
}

/// How `eta0` is chosen.
#[derive(Debug, Clone, PartialEq)]
pub enum StepRule {
    /// A given `eta0`.
    Fixed(f64),
    /// Pilot runs: each candidate gets `fraction / grid.len()` of the budget; the best
    /// continues.
    Pilot { grid: Vec<f64>, fraction: f64 },
}

impl Default for StepRule {
    fn default() -> Self {
        StepRule::Pilot {
            grid: DEFAULT_ETA0_GRID.to_vec(),
            fraction: DEFAULT_PILOT_FRACTION,
        }
    }
}

/// The batch size used when [`SolverOptions::batch`] is 0: `32768 / n`, clamped to
/// `[16, 512]` (65 at `n = 500`, 234 at `n = 140`, 394 at `n = 83`), and at most the number
/// of product kernels `kernels`.
///
/// An iteration costs a fixed number of `O(n^2)` passes (the masses of Algorithm 3, the
/// first draw level `O(n^2 r)`, the solve for `alpha`, the averaged kernel) whatever the
/// batch, and each sampled coordinate an `O(n^2)` change of `K_phi` plus `O(n r)` sampling
/// work. At small `n` the per-coordinate work is tiny and the fixed passes dominate, so a
/// large batch buys many more sampled coordinates per second. Measured on Figure 1 (with
/// rank-one Cholesky updates, before large batches switched to refactoring)
/// (lambda = 1e-5, 5 s, seconds to reach 1% of lp-MKL's optimum): ionosphere (`n = 140`)
/// 4.1 s with `B = 18`, 2.1 s with 256, 1.6 s with 1024; sonar (`n = 83`) `J/J*` after 5 s
/// 1.051 with `B = 11`, 1.020 with 256, 1.014 with 1024; ringnorm and waveform (`n = 500`)
/// no better with `B = 128` than 64 and worse with 512 (too few iterations).
pub fn auto_batch(n: usize, kernels: f64) -> usize {
    let b = (32768 / n.max(1)).clamp(16, 512);
    if kernels >= 1.0 && kernels < b as f64 {
        kernels as usize
    } else {
        b
    }
}

/// Starting point `theta^(0)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Init {
    /// `theta^(0) = 0`, the minimizer of `Psi` on the ball (Algorithm 2 as printed).
    #[default]
    Zero,
    /// `theta^(0) = N^{-1/2} 1` over all `N` product kernels: the center of the positive
    /// part of the sphere and lp-MKL's starting point. `K_theta` is then full rank from the
    /// first iteration (with `theta = 0` and rank-one kernels it takes `n` iterations to
    /// become so, during which `J` stays near `J(0)`). Theorem 3.1 holds for any start, with
    /// `delta` replaced by `D_Psi(theta*, theta^(0)) <= 2`. At large `N` it hands the whole
    /// unit norm to the uniform kernel, which the averaged iterate forgets slowly (module
    /// docs).
    Uniform,
}

/// When the observer sees the objective of the returned iterate (evaluation time is not
/// counted as training time).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EvalSchedule {
    /// Only at the end.
    End,
    /// Every this many iterations.
    Iterations(u64),
    /// Every this many seconds of training time.
    Seconds(f64),
    /// At training times `first * factor^i` seconds (dense early, sparse late).
    Geometric { first: f64, factor: f64 },
}

/// Options of the solver on prepared data ([`solve`]).
#[derive(Debug, Clone)]
pub struct SolverOptions {
    pub sampling: Sampling,
    /// Ridge `lambda > 0`.
    pub lambda: f64,
    /// Iterations of the run that is returned (pilots not included).
    pub max_iter: u64,
    /// Training-time budget in seconds (pilots included), if any.
    pub max_seconds: Option<f64>,
    pub step: StepRule,
    /// `Some(power)`: weighted average with `w_k = k^power`; `None`: the last iterate.
    pub averaging_power: Option<f64>,
    /// Step decay: `eta_k = eta0 / (||g||_1 k^decay)`; 1/2 is the paper's rate.
    pub step_decay: f64,
    pub init: Init,
    /// Coordinates sampled per iteration (the gradient estimate is the average of `batch`
    /// independent eq.-14 estimates; 1 is Algorithm 2 as printed); 0 picks
    /// [`auto_batch`].
    pub batch: usize,
    pub seed: u64,
    pub eval: EvalSchedule,
}

impl Default for SolverOptions {
    fn default() -> Self {
        SolverOptions {
            sampling: Sampling::Importance,
            lambda: 1e-2,
            max_iter: 2000,
            max_seconds: None,
            step: StepRule::default(),
            averaging_power: Some(DEFAULT_AVERAGING_POWER),
            step_decay: DEFAULT_STEP_DECAY,
            init: Init::default(),
            batch: 0,
            seed: 1,
            eval: EvalSchedule::End,
        }
    }
}

impl SolverOptions {
    fn validate(&self) -> Result<()> {
        if !(self.lambda > 0.0 && self.lambda.is_finite()) {
            return Err(Error::invalid(format!(
                "lambda must be finite and > 0, got {}",
                self.lambda
            )));
        }
        if self.max_iter == 0 && self.max_seconds.is_none() {
            return Err(Error::invalid("give an iteration or a time budget"));
        }
        if let Some(s) = self.max_seconds {
            if !pos(s) {
                return Err(Error::invalid("the time budget must be > 0 seconds"));
            }
        }
        match &self.step {
            StepRule::Fixed(e) => {
                if !(*e > 0.0 && e.is_finite()) {
                    return Err(Error::invalid(format!("eta0 must be > 0, got {e}")));
                }
            }
            StepRule::Pilot { grid, fraction } => {
                if grid.is_empty() || grid.iter().any(|e| !(*e > 0.0 && e.is_finite())) {
                    return Err(Error::invalid("the eta0 grid needs positive values"));
                }
                if !(*fraction > 0.0 && *fraction < 1.0) {
                    return Err(Error::invalid("the pilot fraction must be in (0, 1)"));
                }
            }
        }
        match self.eval {
            EvalSchedule::Seconds(s) if !pos(s) => {
                return Err(Error::invalid("evaluation interval must be > 0 seconds"))
            }
            EvalSchedule::Geometric { first, factor } if !(first > 0.0 && factor > 1.0) => {
                return Err(Error::invalid(
                    "geometric evaluation needs first > 0 seconds and factor > 1",
                ))
            }
            _ => {}
        }
        if !(0.0..=1.0).contains(&self.step_decay) {
            return Err(Error::invalid("the step decay exponent must be in [0, 1]"));
        }
        if let Some(p) = self.averaging_power {
            if !p.is_finite() || p < -1.0 {
                return Err(Error::invalid(
                    "the averaging power must be finite and >= -1",
                ));
            }
        }
        Ok(())
    }
}

/// The objective of the returned iterate at some point of training.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub iteration: u64,
    /// Training seconds (pilots included, evaluations excluded).
    pub seconds: f64,
    pub objective: f64,
}

/// Counters of the linear algebra.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SolveStats {
    pub factorizations: u64,
    pub rank_one_updates: u64,
    pub pcg_iterations: u64,
    pub pcg_solves: u64,
}

/// Result of [`solve`].
#[derive(Debug, Clone)]
pub struct MdSolution {
    /// Weights of the kernels ever sampled (the returned iterate has unit l2 norm),
    /// largest first.
    pub terms: Vec<(MultiIndex, f64)>,
    /// Weight of every product kernel not in `terms` (0 with [`Init::Zero`]).
    pub uniform_weight: f64,
    /// `alpha = (K_theta + lambda I)^-1 y` at the returned weights.
    pub alpha: Vec<f64>,
    /// `J` at the returned weights.
    pub objective: f64,
    /// Iterations of the returned run.
    pub iterations: u64,
    pub eta0: f64,
    /// Training seconds (pilots included, evaluations excluded).
    pub seconds: f64,
    /// `(eta0, J after the pilot)` per candidate.
    pub pilot: Vec<(f64, f64)>,
    pub trace: Vec<Checkpoint>,
    /// The gradient vanished (nothing left to learn).
    pub converged: bool,
    pub stats: SolveStats,
}

/// `(J, alpha, touched terms, weight of the other kernels)` of the returned iterate.
type Evaluated = (f64, Vec<f64>, Vec<(MultiIndex, f64)>, f64);

/// A stopwatch that can leave evaluation time out.
struct Stopwatch {
    start: Instant,
    paused: f64,
}

impl Stopwatch {
    fn new() -> Self {
        Stopwatch {
            start: Instant::now(),
            paused: 0.0,
        }
    }
    fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64() - self.paused
    }
    fn pause<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        self.paused += t.elapsed().as_secs_f64();
        out
    }
}

#[derive(Debug, Clone)]
struct Coord {
    /// `theta_m = c * (base + phi)`.
    phi: f64,
    /// `sum_{k <= flush} w_k c_k phi^(k)` (the part above the common base).
    acc: f64,
    /// Value of `wc` at the last flush.
    mark: f64,
}

/// The state of one run of Algorithm 2.
#[derive(Clone)]
struct Engine<'a> {
    s: &'a PolySampler,
    y: &'a [f64],
    lambda: f64,
    n: usize,
    sampling: Sampling,
    eta0: f64,
    power: Option<f64>,
    decay: f64,
    batch: usize,
    coords: HashMap<MultiIndex, Coord>,
    /// Common weight of every kernel (in `phi` units): `theta_m = c (base + phi_m)`.
    base: f64,
    /// `sum_k w_k c_k base` up to `base_mark`.
    base_acc: f64,
    base_mark: f64,
    /// Number of product kernels `N`.
    n_kernels: f64,
    phi_norm2: f64,
    c: f64,
    k_phi: Vec<f64>,
    factor: Option<SpdFactor>,
    mu0: f64,
    rank_updates: usize,
    alpha: Vec<f64>,
    k_bar: Vec<f64>,
    w_sum: f64,
    /// `sum_k w_k c_k`.
    wc: f64,
    k: u64,
    rng: ChaCha8Rng,
    stats: SolveStats,
    converged: bool,
}

impl<'a> Engine<'a> {
    fn new(s: &'a PolySampler, y: &'a [f64], opts: &SolverOptions, eta0: f64) -> Engine<'a> {
        let n = s.points();
        let n_kernels = s.kernel_count();
        let base = match opts.init {
            Init::Zero => 0.0,
            Init::Uniform => 1.0 / n_kernels.sqrt(),
        };
        let mut k_phi = vec![0.0; n * n];
        if base > 0.0 {
            s.add_uniform_kernel(base, &mut k_phi);
        }
        Engine {
            s,
            y,
            lambda: opts.lambda,
            n,
            sampling: opts.sampling.clone(),
            eta0,
            power: opts.averaging_power,
            decay: opts.step_decay,
            batch: if opts.batch == 0 {
                auto_batch(n, n_kernels)
            } else {
                opts.batch
            },
            coords: HashMap::new(),
            base,
            base_acc: 0.0,
            base_mark: 0.0,
            n_kernels,
            phi_norm2: n_kernels * base * base,
            c: 1.0,
            k_phi,
            factor: None,
            mu0: opts.lambda,
            rank_updates: 0,
            alpha: y.iter().map(|v| v / opts.lambda).collect(),
            k_bar: if opts.averaging_power.is_some() {
                vec![0.0; n * n]
            } else {
                Vec::new()
            },
            w_sum: 0.0,
            wc: 0.0,
            k: 0,
            rng: ChaCha8Rng::seed_from_u64(opts.seed),
            stats: SolveStats::default(),
            converged: false,
        }
    }

    /// Draws `batch` coordinates and their ratios `q_m / s_m` (`None`: zero gradient).
    fn sample(&mut self) -> Option<Vec<(MultiIndex, f64)>> {
        let b = self.batch;
        let (prep, distinct) = self.s.prepare_with_distinct(&self.alpha);
        if !pos(distinct) || !distinct.is_finite() {
            return None;
        }
        match &self.sampling {
            Sampling::Importance => {
                let ms = self.s.draw_batch(&prep, &self.alpha, &mut self.rng, b)?;
                Some(
                    ms.into_iter()
                        .map(|m| {
                            let ratio = prep.total / (orderings(&m) * distinct);
                            (m, ratio)
                        })
                        .collect(),
                )
            }
            Sampling::Proportional => (0..b)
                .map(|_| {
                    self.s
                        .draw_proportional(&prep, &self.alpha, &mut self.rng, 10_000)
                        .map(|m| (m, 1.0))
                })
                .collect(),
            Sampling::Uniform => {
                let dist = DegreeUniform::uniform(self.s.base_count(), self.s.degree()).ok()?;
                Some(
                    (0..b)
                        .map(|_| {
                            let m = dist.draw(&mut self.rng);
                            let q = self.s.grad_mass(&m, &self.alpha) / distinct;
                            let p = dist.prob(&m);
                            (m, q / p)
                        })
                        .collect(),
                )
            }
            Sampling::User(dist) => Some(
                (0..b)
                    .map(|_| {
                        let m = dist.draw(&mut self.rng);
                        if m.len() > self.s.degree()
                            || m.iter().any(|&j| j as usize >= self.s.base_count())
                        {
                            return (Vec::new(), 0.0);
                        }
                        let p = dist.prob(&m);
                        let q = self.s.grad_mass(&m, &self.alpha) / distinct;
                        (m, if p > 0.0 { q / p } else { 0.0 })
                    })
                    .collect(),
            ),
        }
    }

    /// One iteration of Algorithm 2 (with a batch of coordinates). `Ok(false)` when the
    /// gradient vanished.
    fn step(&mut self) -> Result<bool> {
        let Some(samples) = self.sample() else {
            self.converged = true;
            return Ok(false);
        };
        self.k += 1;
        let k = self.k as f64;
        let step = self.eta0 * k.powf(-self.decay) / samples.len().max(1) as f64;
        let n = self.n;
        // Rank-one columns (column-major n x B) and their weights.
        let mut fcols: Vec<f64> = Vec::new();
        let mut fw: Vec<f64> = Vec::new();
        // Full-rank kernels and their weights, added once per distinct kernel below.
        let mut dense: Vec<(MultiIndex, f64)> = Vec::new();
        let mut changed = false;
        for (m, ratio) in samples {
            let dtheta = step * ratio;
            if !(dtheta > 0.0 && dtheta.is_finite()) {
                continue;
            }
            changed = true;
            let dphi = dtheta / self.c;
            let wc = self.wc;
            let d = m.len();
            let w = dphi * self.s.inv_rho2(d);
            match self.s.feature(&m) {
                Some(f) => {
                    fcols.extend_from_slice(&f);
                    fw.push(w);
                }
                None => dense.push((m.clone(), w)),
            }
            let coord = self.coords.entry(m).or_insert(Coord {
                phi: 0.0,
                acc: 0.0,
                mark: wc,
            });
            coord.acc += coord.phi * (wc - coord.mark);
            coord.mark = wc;
            self.phi_norm2 += dphi * (2.0 * (self.base + coord.phi) + dphi);
            coord.phi += dphi;
        }
        if !dense.is_empty() {
            // A batch often draws the same kernel several times: one pass over K_phi each.
            dense.sort_by(|a, b| a.0.cmp(&b.0));
            for group in dense.chunk_by(|a, b| a.0 == b.0) {
                let w: f64 = group.iter().map(|(_, w)| w).sum();
                self.s.add_kernel(&group[0].0, w, &mut self.k_phi);
            }
            self.factor = None;
        }
        if !fw.is_empty() {
            let b = fw.len();
            if b == 1 {
                for (t, &ft) in fcols.iter().enumerate() {
                    axpy(fw[0] * ft, &fcols, &mut self.k_phi[t * n..(t + 1) * n]);
                }
            } else {
                // K_phi += F diag(w) F^T in one pass.
                let mut fwt = vec![0.0; fcols.len()];
                for ((out, col), &w) in fwt.chunks_exact_mut(n).zip(fcols.chunks_exact(n)).zip(&fw)
                {
                    for (o, v) in out.iter_mut().zip(col) {
                        *o = v * w;
                    }
                }
                faer::linalg::matmul::matmul(
                    MatMut::from_column_major_slice_mut(&mut self.k_phi, n, n),
                    Accum::Add,
                    MatRef::from_column_major_slice(&fcols, n, b),
                    MatRef::from_column_major_slice(&fwt, n, b).transpose(),
                    1.0,
                    Par::Seq,
                );
            }
            if b.saturating_mul(RANK_UPDATE_RATIO) > n {
                // A rank-b update costs more than factoring afresh (see RANK_UPDATE_RATIO).
                self.factor = None;
            } else if let Some(fac) = self.factor.as_mut() {
                if fac.rank_update(&fcols, &fw).is_err() {
                    self.factor = None;
                } else {
                    self.rank_updates += b;
                    self.stats.rank_one_updates += b as u64;
                }
            }
        }
        if changed {
            // Projection onto the positive part of the unit l2 ball: a scaling.
            let norm_phi = self.phi_norm2.sqrt();
            if self.c * norm_phi > 1.0 {
                self.c = 1.0 / norm_phi;
            }
            self.update_alpha()?;
        }
        if let Some(p) = self.power {
            let wk = k.powf(p);
            let a = wk * self.c;
            axpy(a, &self.k_phi, &mut self.k_bar);
            self.w_sum += wk;
            self.wc += a;
        }
        Ok(true)
    }

    /// Folds `c` into `phi` (and `K_phi`), flushing the per-kernel averages.
    fn renormalize(&mut self) {
        if self.c == 1.0 {
            return;
        }
        let c = self.c;
        let wc = self.wc;
        for coord in self.coords.values_mut() {
            coord.acc += coord.phi * (wc - coord.mark);
            coord.mark = wc;
            coord.phi *= c;
        }
        self.base_acc += self.base * (wc - self.base_mark);
        self.base_mark = wc;
        self.base *= c;
        self.phi_norm2 *= c * c;
        self.k_phi.iter_mut().for_each(|v| *v *= c);
        self.c = 1.0;
    }

    /// Factors `K_phi + mu I`, `mu = lambda / c`, and solves for `alpha` directly. `c` is
    /// folded into `phi` only when it has drifted far from 1 (a pass over every touched
    /// kernel), not at every factorization.
    fn refactor(&mut self) -> Result<()> {
        if !(RENORMALIZE_BELOW..=1.0).contains(&self.c) {
            self.renormalize();
        }
        let n = self.n;
        let mu = self.lambda / self.c;
        let f = SpdFactor::new(MatRef::from_column_major_slice(&self.k_phi, n, n), mu)?;
        self.stats.factorizations += 1;
        let inv_c = 1.0 / self.c;
        self.alpha = f.solve(self.y).into_iter().map(|v| v * inv_c).collect();
        self.factor = Some(f);
        self.mu0 = mu;
        self.rank_updates = 0;
        Ok(())
    }

    /// `alpha = (c K_phi + lambda I)^-1 y`.
    fn update_alpha(&mut self) -> Result<()> {
        let mu = self.lambda / self.c;
        let fresh = match &self.factor {
            None => false,
            Some(_) => {
                mu >= self.mu0 * (1.0 - 1e-12)
                    && mu <= self.mu0 * (1.0 + REFACTOR_TAU)
                    && self.rank_updates < MAX_RANK_UPDATES
            }
        };
        if !fresh {
            return self.refactor();
        }
        let b: Vec<f64> = self.y.iter().map(|v| v / self.c).collect();
        match self.pcg(&b, mu) {
            Some(x) => {
                self.alpha = x;
                Ok(())
            }
            None => self.refactor(),
        }
    }

    /// Conjugate gradients on `(K_phi + mu I) x = b` preconditioned with the factor of
    /// `K_phi + mu0 I`; `None` if it does not converge.
    fn pcg(&mut self, b: &[f64], mu: f64) -> Option<Vec<f64>> {
        let n = self.n;
        let fac = self.factor.as_ref()?;
        let delta = mu - self.mu0;
        let mut x = fac.solve(b);
        if delta == 0.0 {
            self.stats.pcg_solves += 1;
            return Some(x);
        }
        let kmat = MatRef::from_column_major_slice(&self.k_phi, n, n);
        let apply = |v: &[f64], out: &mut Vec<f64>| {
            out.clear();
            out.resize(n, 0.0);
            faer::linalg::matmul::matmul(
                MatMut::from_column_major_slice_mut(out, n, 1),
                Accum::Replace,
                kmat,
                MatRef::from_column_major_slice(v, n, 1),
                1.0,
                Par::Seq,
            );
            for (o, vi) in out.iter_mut().zip(v) {
                *o += mu * vi;
            }
        };
        let mut ax = Vec::with_capacity(n);
        apply(&x, &mut ax);
        let mut r: Vec<f64> = b.iter().zip(&ax).map(|(bi, ai)| bi - ai).collect();
        let mut z = fac.solve(&r);
        let mut p = z.clone();
        let mut rz = dot(&r, &z);
        let mut ap = Vec::with_capacity(n);
        for _ in 0..PCG_MAX_ITER {
            self.stats.pcg_iterations += 1;
            let xnorm = dot(&x, &x).sqrt();
            if dot(&z, &z).sqrt() <= PCG_TOL * xnorm {
                self.stats.pcg_solves += 1;
                return Some(x);
            }
            apply(&p, &mut ap);
            let pap = dot(&p, &ap);
            if !pos(pap) {
                return None;
            }
            let a = rz / pap;
            for i in 0..n {
                x[i] += a * p[i];
                r[i] -= a * ap[i];
            }
            z = fac.solve(&r);
            let rz_new = dot(&r, &z);
            let beta = rz_new / rz;
            rz = rz_new;
            for i in 0..n {
                p[i] = z[i] + beta * p[i];
            }
        }
        None
    }

    /// `sum_k w_k theta^(k)` per touched kernel and for every other kernel (or the
    /// current `theta` without averaging).
    fn weights(&self) -> (Vec<(MultiIndex, f64)>, f64) {
        let base = match self.power {
            Some(_) => self.base_acc + self.base * (self.wc - self.base_mark),
            None => self.c * self.base,
        };
        let mut terms: Vec<(MultiIndex, f64)> = self
            .coords
            .iter()
            .map(|(m, c)| {
                let v = match self.power {
                    Some(_) => c.acc + c.phi * (self.wc - c.mark),
                    None => self.c * c.phi,
                };
                (m.clone(), base + v)
            })
            .filter(|(_, v)| *v > 0.0)
            .collect();
        // A fixed order (the map's is random), so sums over the terms and the saved model
        // are the same bit for bit from run to run.
        terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        (terms, base)
    }

    /// `K_theta` of the returned iterate (unit norm), its touched terms and the weight of
    /// every other kernel.
    fn returned(&self) -> (Vec<f64>, Vec<(MultiIndex, f64)>, f64) {
        let (mut terms, mut base) = self.weights();
        let others = (self.n_kernels - terms.len() as f64).max(0.0);
        let norm = (terms.iter().map(|(_, v)| v * v).sum::<f64>() + others * base * base).sqrt();
        if !pos(norm) {
            return (vec![0.0; self.n * self.n], Vec::new(), 0.0);
        }
        terms.iter_mut().for_each(|(_, v)| *v /= norm);
        base /= norm;
        let k: Vec<f64> = match self.power {
            Some(_) => self.k_bar.iter().map(|v| v / norm).collect(),
            None => self.k_phi.iter().map(|v| v * self.c / norm).collect(),
        };
        (k, terms, base)
    }

    /// `J` and `alpha` of the returned iterate.
    fn evaluate_full(&self) -> Result<Evaluated> {
        let (k, terms, base) = self.returned();
        let n = self.n;
        let f = SpdFactor::new(MatRef::from_column_major_slice(&k, n, n), self.lambda)?;
        let alpha = f.solve(self.y);
        let j = 0.5 * self.lambda * dot(self.y, &alpha);
        Ok((j, alpha, terms, base))
    }

    fn evaluate(&self) -> Result<f64> {
        Ok(self.evaluate_full()?.0)
    }
}

/// Runs Algorithm 2 on the training targets `y` (already standardized) with the product
/// kernels of `sampler`. `observer` sees the objective of the returned iterate according to
/// `opts.eval` (and once at the end).
pub fn solve(
    sampler: &PolySampler,
    y: &[f64],
    opts: &SolverOptions,
    observer: &mut dyn FnMut(&Checkpoint),
) -> Result<MdSolution> {
    opts.validate()?;
    if y.len() != sampler.points() {
        return Err(Error::invalid(format!(
            "{} targets for {} training points",
            y.len(),
            sampler.points()
        )));
    }
    if y.iter().any(|v| !v.is_finite()) {
        return Err(Error::invalid("targets contain a non-finite value"));
    }
    let mut clock = Stopwatch::new();
    let out_of_time =
        |clock: &Stopwatch, limit: Option<f64>| limit.is_some_and(|s| clock.elapsed() >= s);

    // Pilot phase.
    let mut pilot = Vec::new();
    let mut engine = match &opts.step {
        StepRule::Fixed(eta0) => Engine::new(sampler, y, opts, *eta0),
        StepRule::Pilot { grid, fraction } => {
            let per = fraction / grid.len() as f64;
            let iters = if opts.max_iter == 0 {
                u64::MAX
            } else {
                ((opts.max_iter as f64 * per).ceil() as u64).max(1)
            };
            let secs = opts.max_seconds.map(|s| s * per);
            let mut best: Option<(f64, Engine)> = None;
            for &eta0 in grid {
                let mut e = Engine::new(sampler, y, opts, eta0);
                let t0 = clock.elapsed();
                while e.k < iters && !secs.is_some_and(|s| clock.elapsed() - t0 >= s) {
                    if !e.step()? {
                        break;
                    }
                }
                let j = e.evaluate()?;
                pilot.push((eta0, j));
                if best.as_ref().is_none_or(|(bj, _)| j < *bj) {
                    best = Some((j, e));
                }
            }
            best.expect("non-empty grid").1
        }
    };

    let mut trace = Vec::new();
    let mut record =
        |engine: &Engine, clock: &mut Stopwatch, trace: &mut Vec<Checkpoint>| -> Result<()> {
            let seconds = clock.elapsed();
            let j = clock.pause(|| engine.evaluate())?;
            let cp = Checkpoint {
                iteration: engine.k,
                seconds,
                objective: j,
            };
            clock.pause(|| observer(&cp));
            trace.push(cp);
            Ok(())
        };
    if opts.eval != EvalSchedule::End {
        record(&engine, &mut clock, &mut trace)?;
    }
    let mut next_iter = match opts.eval {
        EvalSchedule::Iterations(k) => engine.k + k.max(1),
        _ => u64::MAX,
    };
    let mut next_sec = match opts.eval {
        EvalSchedule::Seconds(s) => clock.elapsed() + s,
        EvalSchedule::Geometric { first, .. } => first.max(clock.elapsed() * 1.0001),
        _ => f64::INFINITY,
    };
    let iter_cap = if opts.max_iter == 0 {
        u64::MAX
    } else {
        opts.max_iter
    };
    while engine.k < iter_cap && !out_of_time(&clock, opts.max_seconds) {
        if !engine.step()? {
            break;
        }
        if engine.k >= next_iter {
            record(&engine, &mut clock, &mut trace)?;
            if let EvalSchedule::Iterations(k) = opts.eval {
                next_iter += k.max(1);
            }
        } else if clock.elapsed() >= next_sec {
            record(&engine, &mut clock, &mut trace)?;
            match opts.eval {
                EvalSchedule::Seconds(s) => next_sec = clock.elapsed() + s,
                EvalSchedule::Geometric { factor, .. } => {
                    while next_sec <= clock.elapsed() {
                        next_sec *= factor.max(1.0001);
                    }
                }
                _ => {}
            }
        }
    }
    let seconds = clock.elapsed();
    let (objective, alpha, mut terms, uniform_weight) = engine.evaluate_full()?;
    terms.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let last = Checkpoint {
        iteration: engine.k,
        seconds,
        objective,
    };
    if trace.last().is_none_or(|c| c.iteration != engine.k) {
        observer(&last);
        trace.push(last);
    }
    Ok(MdSolution {
        terms,
        uniform_weight,
        alpha,
        objective,
        iterations: engine.k,
        eta0: engine.eta0,
        seconds,
        pilot,
        trace,
        converged: engine.converged,
        stats: engine.stats,
    })
}

/// How the trained model predicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PolyPredictor {
    /// Rank-one (per-variable linear) base kernels: `f(x) = sum_m w_m prod_{j in m} z_j(x)`
    /// with `z_j(x) = base_scale[j] * x_std[base_feature[j]]` (explicit monomial weights,
    /// aligned with `terms`).
    /// When every other kernel carries the weight `uniform_weight > 0`, the model adds
    /// `uniform_weight * sum_t alpha_t U(z(x_t), z(x))`, `U` the sum of all product kernels
    /// ([`uniform_value`]) over the training features `z_train` (`n x r`); the `coef` then
    /// hold `(theta_m - uniform_weight) rho_d^-2 z_m^T alpha`.
    Monomials {
        base_feature: Vec<usize>,
        base_scale: Vec<f64>,
        coef: Vec<f64>,
        uniform: Option<(Vec<f64>, Matrix)>,
    },
    /// General base kernels: `f(x) = sum_t alpha_t K_theta(x_t, x)` with
    /// `K_theta = uniform_weight U + sum_m (theta_m - uniform_weight) rho_d^-2 prod_{j in m}
    /// kappa_j` over the standardized training rows.
    Dual {
        base: Vec<FittedKernel>,
        x_train: Matrix,
        alpha: Vec<f64>,
    },
}

/// One learned product kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolyTerm {
    /// Base-kernel indices (0-based, sorted).
    pub index: Vec<u32>,
    /// Kernel weight `theta_m` (the weights have unit l2 norm).
    pub weight: f64,
}

/// Parameters of [`PolyMklModel::fit`].
#[derive(Debug, Clone)]
pub struct MirrorDescentParams {
    /// `Importance` (`--algo mirror-descent`) or `Uniform` (`--algo ucd`), ...
    pub sampling: Sampling,
    /// Maximum degree `D` of the product kernels.
    pub degree: usize,
    pub lambda: f64,
    /// `rho_d^2`, `d = 0..=D`; empty means all 1.
    pub rho2: Vec<f64>,
    pub max_iter: u64,
    pub max_seconds: Option<f64>,
    pub step: StepRule,
    pub averaging_power: Option<f64>,
    pub step_decay: f64,
    pub init: Init,
    /// Coordinates per iteration (0: [`auto_batch`]).
    pub batch: usize,
    pub seed: u64,
    /// Base kernels (expanded per feature where asked); default `perfeature:linear`.
    pub base: Vec<KernelSpec>,
    pub memory: MemoryLimit,
}

impl Default for MirrorDescentParams {
    fn default() -> Self {
        MirrorDescentParams {
            sampling: Sampling::Importance,
            degree: 3,
            lambda: 1e-2,
            rho2: Vec::new(),
            max_iter: 2000,
            max_seconds: None,
            step: StepRule::default(),
            averaging_power: Some(DEFAULT_AVERAGING_POWER),
            step_decay: DEFAULT_STEP_DECAY,
            init: Init::default(),
            batch: 0,
            seed: 1,
            base: vec![perfeature_linear()],
            memory: MemoryLimit::default(),
        }
    }
}

/// The spec `perfeature:linear`.
pub fn perfeature_linear() -> KernelSpec {
    let mut s = KernelSpec::new(crate::kernel::KernelKind::Linear);
    s.perfeature = true;
    s
}

impl MirrorDescentParams {
    /// `rho_d^2` for `d = 0..=D`.
    pub fn rho2_full(&self) -> Result<Vec<f64>> {
        if self.rho2.is_empty() {
            Ok(vec![1.0; self.degree + 1])
        } else if self.rho2.len() == self.degree + 1 {
            Ok(self.rho2.clone())
        } else {
            Err(Error::invalid(format!(
                "rho^2 needs {} values (degrees 0..={}), got {}",
                self.degree + 1,
                self.degree,
                self.rho2.len()
            )))
        }
    }

    /// The solver options these parameters imply.
    pub fn solver_options(&self) -> SolverOptions {
        SolverOptions {
            sampling: self.sampling.clone(),
            lambda: self.lambda,
            max_iter: self.max_iter,
            max_seconds: self.max_seconds,
            step: self.step.clone(),
            averaging_power: self.averaging_power,
            step_decay: self.step_decay,
            init: self.init,
            batch: self.batch,
            seed: self.seed,
            eval: EvalSchedule::End,
        }
    }
}

/// Training data prepared for the polynomial family: standardized inputs and targets, the
/// fitted base kernels and the sampler (reusable across `lambda` values).
pub struct PolyProblem {
    pub standardizer: Standardizer,
    pub target: TargetScaler,
    /// Standardized targets.
    pub y: Vec<f64>,
    pub base: Vec<FittedKernel>,
    /// `Some((feature, scale))` per base kernel when all are rank one.
    pub rank_one: Option<Vec<(usize, f64)>>,
    pub base_names: Vec<String>,
    pub x_train: Matrix,
    pub sampler: PolySampler,
    pub degree: usize,
    pub rho2: Vec<f64>,
}

/// `Some((feature, sqrt(scale)))` when the kernel is `scale * x_j x'_j`.
fn rank_one_of(k: &FittedKernel) -> Option<(usize, f64)> {
    match (k.kind(), k.features(), k.norm()) {
        (FittedKind::Linear, Some([j]), norm) if norm != Normalization::Diag => {
            let s = k.scale();
            (s > 0.0 && s.is_finite()).then(|| (*j, s.sqrt()))
        }
        _ => None,
    }
}

impl PolyProblem {
    /// Standardizes `x` and `y`, fits the base kernels on the standardized rows and builds
    /// the sampler (Algorithm 3's Hadamard powers).
    pub fn new(x: &Matrix, y: &[f64], params: &MirrorDescentParams) -> Result<PolyProblem> {
        if x.rows != y.len() {
            return Err(Error::invalid(format!(
                "{} rows but {} targets",
                x.rows,
                y.len()
            )));
        }
        if x.rows < 2 {
            return Err(Error::invalid("training needs at least two rows"));
        }
        if x.data.iter().chain(y).any(|v| !v.is_finite()) {
            return Err(Error::invalid("training data contain a non-finite value"));
        }
        let rho2 = params.rho2_full()?;
        let standardizer = Standardizer::fit(x);
        let xs = standardizer.apply(x);
        let target = TargetScaler::fit(y);
        let ys = target.apply_all(y);
        let specs = expand_specs(&params.base, x.cols);
        if specs.is_empty() {
            return Err(Error::invalid("no base kernels"));
        }
        let names: Vec<String> = (1..=x.cols).map(|i| format!("x{i}")).collect();
        let base = fit_all(&specs, &xs, &names, params.seed)?;
        let ro: Option<Vec<(usize, f64)>> = base.iter().map(rank_one_of).collect();
        let n = xs.rows;
        let (basis, base_names) = match &ro {
            Some(list) => {
                let mut z = Matrix::zeros(list.len(), n);
                for (j, &(f, s)) in list.iter().enumerate() {
                    for t in 0..n {
                        z.set(j, t, s * xs.get(t, f));
                    }
                }
                let nm = list.iter().map(|&(f, _)| names[f].clone()).collect();
                (PolyBasis::RankOne { z }, nm)
            }
            None => {
                params.memory.check(
                    base.len().saturating_mul(n * n * 8),
                    &format!("{} base Gram matrices of {n} x {n}", base.len()),
                )?;
                let grams = base
                    .iter()
                    .map(|k| Ok(k.gram_sym(&xs, &params.memory)?.to_dense()))
                    .collect::<Result<Vec<Matrix>>>()?;
                let nm = base.iter().map(|k| format!("[{}]", k.name)).collect();
                (PolyBasis::Full { grams }, nm)
            }
        };
        let sampler = PolySampler::new(basis, params.degree, &rho2, &params.memory)?;
        Ok(PolyProblem {
            standardizer,
            target,
            y: ys,
            base,
            rank_one: ro,
            base_names,
            x_train: xs,
            sampler,
            degree: params.degree,
            rho2,
        })
    }

    /// Runs the solver and wraps the result as a model.
    pub fn fit(
        &self,
        opts: &SolverOptions,
        observer: &mut dyn FnMut(&Checkpoint),
    ) -> Result<(PolyMklModel, MdSolution)> {
        let sol = solve(&self.sampler, &self.y, opts, observer)?;
        let u = sol.uniform_weight;
        let predictor = match &self.rank_one {
            Some(list) => {
                let coef = sol
                    .terms
                    .iter()
                    .map(|(m, th)| {
                        let f = self.sampler.feature(m).expect("rank-one basis");
                        (th - u) * self.sampler.inv_rho2(m.len()) * dot(&f, &sol.alpha)
                    })
                    .collect();
                let uniform = (u > 0.0).then(|| {
                    let PolyBasis::RankOne { z } = self.sampler.basis() else {
                        unreachable!("rank-one basis")
                    };
                    (sol.alpha.clone(), z.transpose())
                });
                PolyPredictor::Monomials {
                    base_feature: list.iter().map(|p| p.0).collect(),
                    base_scale: list.iter().map(|p| p.1).collect(),
                    coef,
                    uniform,
                }
            }
            None => PolyPredictor::Dual {
                base: self.base.clone(),
                x_train: self.x_train.clone(),
                alpha: sol.alpha.clone(),
            },
        };
        let model = PolyMklModel {
            standardizer: self.standardizer.clone(),
            target: self.target.clone(),
            degree: self.degree,
            lambda: opts.lambda,
            rho2: self.rho2.clone(),
            base_names: self.base_names.clone(),
            terms: sol
                .terms
                .iter()
                .map(|(m, w)| PolyTerm {
                    index: m.clone(),
                    weight: *w,
                })
                .collect(),
            uniform_weight: u,
            kernel_count: self.sampler.kernel_count(),
            predictor,
            objective: sol.objective,
            iterations: sol.iterations,
            eta0: sol.eta0,
            sampling: opts.sampling.name().to_string(),
        };
        Ok((model, sol))
    }
}

/// A trained polynomial-kernel MKL model (mirror descent or UCD).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolyMklModel {
    pub standardizer: Standardizer,
    pub target: TargetScaler,
    pub degree: usize,
    pub lambda: f64,
    pub rho2: Vec<f64>,
    /// A name per base kernel (`x3` for the linear kernel of input 3).
    pub base_names: Vec<String>,
    /// Weights of the kernels the solver touched, largest first.
    pub terms: Vec<PolyTerm>,
    /// Weight of each of the other `kernel_count - terms.len()` product kernels.
    pub uniform_weight: f64,
    /// Number of product kernels `C(r + D, D)`.
    pub kernel_count: f64,
    pub predictor: PolyPredictor,
    /// `J` of the returned weights on the (standardized) training data.
    pub objective: f64,
    pub iterations: u64,
    pub eta0: f64,
    /// `stoch`, `ucd`, ...
    pub sampling: String,
}

impl PolyMklModel {
    /// Standardizes, trains with [`solve`] and keeps what predicts.
    pub fn fit(x: &Matrix, y: &[f64], params: &MirrorDescentParams) -> Result<PolyMklModel> {
        let problem = PolyProblem::new(x, y, params)?;
        Ok(problem.fit(&params.solver_options(), &mut |_| {})?.0)
    }

    /// Predictions (original target units) for raw rows.
    pub fn predict(&self, x: &Matrix) -> Vec<f64> {
        let xs = self.standardizer.apply(x);
        let inv_rho2: Vec<f64> = self.rho2.iter().map(|v| 1.0 / v).collect();
        let u = self.uniform_weight;
        let raw: Vec<f64> = match &self.predictor {
            PolyPredictor::Monomials {
                base_feature,
                base_scale,
                coef,
                uniform,
            } => (0..xs.rows)
                .into_par_iter()
                .map(|i| {
                    let row = xs.row(i);
                    let z: Vec<f64> = base_feature
                        .iter()
                        .zip(base_scale)
                        .map(|(&f, &s)| s * row[f])
                        .collect();
                    let mut f: f64 = self
                        .terms
                        .iter()
                        .zip(coef)
                        .map(|(t, &c)| c * t.index.iter().map(|&j| z[j as usize]).product::<f64>())
                        .sum();
                    if let Some((alpha, z_train)) = uniform {
                        let mut kv = vec![0.0; z.len()];
                        let mut acc = 0.0;
                        for (t, &at) in alpha.iter().enumerate() {
                            for ((v, a), b) in kv.iter_mut().zip(&z).zip(z_train.row(t)) {
                                *v = a * b;
                            }
                            acc += at * uniform_value(&kv, &inv_rho2);
                        }
                        f += u * acc;
                    }
                    f
                })
                .collect(),
            PolyPredictor::Dual {
                base,
                x_train,
                alpha,
            } => (0..xs.rows)
                .into_par_iter()
                .map(|i| {
                    let row = xs.row(i);
                    let mut f = 0.0;
                    let mut kv = vec![0.0; base.len()];
                    for (t, &at) in alpha.iter().enumerate() {
                        let xt = x_train.row(t);
                        for (v, k) in kv.iter_mut().zip(base) {
                            *v = k.eval(row, xt);
                        }
                        let mut ksum: f64 = self
                            .terms
                            .iter()
                            .map(|term| {
                                (term.weight - u)
                                    * inv_rho2[term.index.len()]
                                    * term.index.iter().map(|&j| kv[j as usize]).product::<f64>()
                            })
                            .sum();
                        if u > 0.0 {
                            ksum += u * uniform_value(&kv, &inv_rho2);
                        }
                        f += at * ksum;
                    }
                    f
                })
                .collect(),
        };
        raw.iter().map(|&v| self.target.invert(v)).collect()
    }

    /// The learned kernels as readable multi-indices (`x1^2*x5`, `1` for the constant) with
    /// their weights, largest first; when the other kernels share a positive weight, a last
    /// entry `(each of the other K kernels)` gives it.
    pub fn kernels(&self) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = self
            .terms
            .iter()
            .map(|t| (index_name(&t.index, &self.base_names), t.weight))
            .collect();
        let others = self.kernel_count - self.terms.len() as f64;
        if self.uniform_weight > 0.0 && others > 0.0 {
            out.push((
                format!("(each of the other {others} kernels)"),
                self.uniform_weight,
            ));
        }
        out
    }
}

/// `sum_{d=0..D} rho_d^-2 h_d(k_1, .., k_r)`: the sum of all distinct product kernels of
/// degree `<= D` at one pair of points, from the base kernel values `k_j` by Newton's
/// identity (`d h_d = sum_{i=1..d} p_i h_{d-i}`, `p_i = sum_j k_j^i`).
pub fn uniform_value(k: &[f64], inv_rho2: &[f64]) -> f64 {
    let deg = inv_rho2.len().saturating_sub(1);
    let mut p = vec![0.0; deg + 1];
    let mut pw: Vec<f64> = k.to_vec();
    for (i, pi) in p.iter_mut().enumerate().skip(1) {
        if i > 1 {
            for (v, x) in pw.iter_mut().zip(k) {
                *v *= x;
            }
        }
        *pi = pw.iter().sum();
    }
    let mut h = vec![0.0; deg + 1];
    h[0] = 1.0;
    let mut v = inv_rho2[0];
    for d in 1..=deg {
        let mut acc = 0.0;
        for i in 1..=d {
            acc += p[i] * h[d - i];
        }
        h[d] = acc / d as f64;
        v += inv_rho2[d] * h[d];
    }
    v
}

/// The uniform polynomial kernel `(sum_{j=0..r} kappa_j)^D = (1 + x . x')^D` over the
/// standardized inputs (the constant feature `kappa_0 = 1` included, Sec. 5) with kernel
/// ridge regression `alpha = (K + lambda I)^-1 y`: the "Uniform" baseline of Sec. 5.3.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UniformPolyModel {
    pub standardizer: Standardizer,
    pub target: TargetScaler,
    pub degree: usize,
    pub lambda: f64,
    /// Standardized training rows.
    pub x_train: Matrix,
    pub alpha: Vec<f64>,
}

impl UniformPolyModel {
    /// Standardizes `x` and `y` and solves the ridge system.
    pub fn fit(x: &Matrix, y: &[f64], degree: usize, lambda: f64) -> Result<UniformPolyModel> {
        if x.rows != y.len() || x.rows == 0 {
            return Err(Error::invalid(format!(
                "{} rows but {} targets",
                x.rows,
                y.len()
            )));
        }
        if degree == 0 {
            return Err(Error::invalid("the polynomial degree must be at least 1"));
        }
        let standardizer = Standardizer::fit(x);
        let xs = standardizer.apply(x);
        let target = TargetScaler::fit(y);
        let ys = target.apply_all(y);
        let n = xs.rows;
        let mut k = Matrix::zeros(n, n);
        for a in 0..n {
            for b in 0..=a {
                let v = (1.0 + dot(xs.row(a), xs.row(b))).powi(degree as i32);
                k.set(a, b, v);
                k.set(b, a, v);
            }
        }
        let (_, alpha) = super::objective::objective(&k, &ys, lambda)?;
        Ok(UniformPolyModel {
            standardizer,
            target,
            degree,
            lambda,
            x_train: xs,
            alpha,
        })
    }

    /// Predictions (original target units) for raw rows.
    pub fn predict(&self, x: &Matrix) -> Vec<f64> {
        let xs = self.standardizer.apply(x);
        (0..xs.rows)
            .into_par_iter()
            .map(|i| {
                let row = xs.row(i);
                let f: f64 = (0..self.x_train.rows)
                    .map(|t| {
                        self.alpha[t]
                            * (1.0 + dot(row, self.x_train.row(t))).powi(self.degree as i32)
                    })
                    .sum();
                self.target.invert(f)
            })
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;
    use crate::data::synthetic::MonomialProblem;
    use crate::data::Targets;
    use crate::multiset::enumerate_multisets;
    use crate::solver::objective::objective;
    use rand::Rng;

    fn rank_one_sampler(
        n: usize,
        r: usize,
        degree: usize,
        seed: u64,
    ) -> (PolySampler, Vec<f64>, Matrix) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x = Matrix::from_vec(n, r, (0..n * r).map(|_| rng.gen_range(-1.0..1.0)).collect());
        let z = x.transpose();
        let y: Vec<f64> = (0..n)
            .map(|i| x.get(i, 0) * x.get(i, 1) + 0.5 * x.get(i, 2) + 0.1 * rng.gen_range(-1.0..1.0))
            .collect();
        let s = PolySampler::new(
            PolyBasis::RankOne { z: z.clone() },
            degree,
            &vec![1.0; degree + 1],
            &MemoryLimit::default(),
        )
        .unwrap();
        (s, y, z)
    }

    /// Every product kernel's weight: the touched terms, the uniform weight elsewhere.
    fn full_weights(sol: &MdSolution, r: usize, degree: usize) -> Vec<(MultiIndex, f64)> {
        let map: HashMap<MultiIndex, f64> = sol.terms.iter().cloned().collect();
        (0..=degree)
            .flat_map(|d| enumerate_multisets(r, d))
            .map(|m| {
                let w = map.get(&m).copied().unwrap_or(sol.uniform_weight);
                (m, w)
            })
            .collect()
    }

    /// Brute force: K_theta of the returned terms from explicit monomial features.
    fn brute_k(terms: &[(MultiIndex, f64)], z: &Matrix, n: usize) -> Matrix {
        let mut k = Matrix::zeros(n, n);
        for (m, w) in terms {
            let f: Vec<f64> = (0..n)
                .map(|t| m.iter().map(|&j| z.get(j as usize, t)).product())
                .collect();
            for a in 0..n {
                for b in 0..n {
                    k.set(a, b, k.get(a, b) + w * f[a] * f[b]);
                }
            }
        }
        k
    }

    #[test]
    fn incremental_state_matches_recomputation() {
        // The returned objective and alpha equal a from-scratch computation on the returned
        // weights, for every sampling and averaging choice.
        let (s, y, z) = rank_one_sampler(30, 4, 3, 1);
        for (sampling, init) in [
            (Sampling::Importance, Init::Zero),
            (Sampling::Importance, Init::Uniform),
            (Sampling::Uniform, Init::Uniform),
            (Sampling::Proportional, Init::Zero),
        ] {
            for (power, batch) in [(None, 1), (Some(-0.5), 3), (Some(1.0), 1)] {
                let opts = SolverOptions {
                    init,
                    batch,
                    sampling: sampling.clone(),
                    lambda: 1e-3,
                    max_iter: 300,
                    step: StepRule::Fixed(1.0),
                    averaging_power: power,
                    ..SolverOptions::default()
                };
                let sol = solve(&s, &y, &opts, &mut |_| {}).unwrap();
                assert_eq!(sol.uniform_weight > 0.0, init == Init::Uniform);
                let all = full_weights(&sol, 4, 3);
                let norm: f64 = all.iter().map(|t| t.1 * t.1).sum::<f64>().sqrt();
                assert!((norm - 1.0).abs() < 1e-9);
                let k = brute_k(&all, &z, 30);
                let (j, alpha) = objective(&k, &y, 1e-3).unwrap();
                assert!(
                    (j - sol.objective).abs() < 1e-6 * j,
                    "{j} vs {}",
                    sol.objective
                );
                for (a, b) in alpha.iter().zip(&sol.alpha) {
                    assert!((a - b).abs() < 1e-5 * (1.0 + a.abs()));
                }
                assert_eq!(sol.iterations, 300);
                assert!(sol.stats.rank_one_updates >= 299 * batch as u64 - 5);
            }
        }
    }

    #[test]
    fn pcg_solves_match_direct_solves() {
        // After every step the maintained alpha equals a direct solve at the current theta,
        // on the rank-update + PCG path (batch 2 against n = 25) and on the refactoring path
        // (batch 10: 10 * RANK_UPDATE_RATIO > 25).
        for batch in [2, 10] {
            check_alpha_after_every_step(batch);
        }
    }

    fn check_alpha_after_every_step(batch: usize) {
        let (s, y, _) = rank_one_sampler(25, 3, 2, 2);
        let opts = SolverOptions {
            lambda: 1e-4,
            averaging_power: None,
            batch,
            ..SolverOptions::default()
        };
        let mut e = Engine::new(&s, &y, &opts, 0.5);
        for _ in 0..200 {
            e.step().unwrap();
            let n = 25;
            let kt: Vec<f64> = e.k_phi.iter().map(|v| v * e.c).collect();
            let f = SpdFactor::new(MatRef::from_column_major_slice(&kt, n, n), 1e-4).unwrap();
            let a = f.solve(&y);
            for (p, q) in a.iter().zip(&e.alpha) {
                assert!((p - q).abs() < 1e-6 * (1.0 + p.abs()), "{p} vs {q}");
            }
            let norm = e.c * e.phi_norm2.sqrt();
            assert!(norm <= 1.0 + 1e-12);
        }
        if batch * RANK_UPDATE_RATIO <= 25 {
            assert!(e.stats.pcg_solves > 0);
            assert!(e.stats.rank_one_updates > 0);
        } else {
            assert_eq!(e.stats.rank_one_updates, 0);
            assert!(e.stats.factorizations >= 200);
        }
    }

    /// Against lp-MKL-free ground truth: the optimum over the (few) explicit kernels by
    /// projected full-gradient descent on the sphere, Stoch gets within 2% in a short run.
    #[test]
    fn stoch_approaches_the_optimum() {
        let (s, y, z) = rank_one_sampler(40, 3, 2, 3);
        let lambda = 1e-2;
        let kernels: Vec<MultiIndex> = (0..=2).flat_map(|d| enumerate_multisets(3, d)).collect();
        // Reference: theta ∝ |g| fixed point iteration (KKT on the sphere) from uniform.
        let mut theta = vec![1.0 / (kernels.len() as f64).sqrt(); kernels.len()];
        let mut jref = f64::INFINITY;
        for _ in 0..3000 {
            let terms: Vec<(MultiIndex, f64)> =
                kernels.iter().cloned().zip(theta.iter().copied()).collect();
            let (j, alpha) = objective(&brute_k(&terms, &z, 40), &y, lambda).unwrap();
            jref = jref.min(j);
            let g: Vec<f64> = kernels
                .iter()
                .zip(&theta)
                .map(|(m, t)| t * t * s.grad_mass(m, &alpha))
                .collect();
            // lp-MKL p = 2 closed form: theta ∝ ||w||^(2/3).
            let new: Vec<f64> = g.iter().map(|v| v.powf(1.0 / 3.0)).collect();
            let nn = new.iter().map(|v| v * v).sum::<f64>().sqrt();
            theta = new.iter().map(|v| v / nn).collect();
        }
        let opts = SolverOptions {
            lambda,
            max_iter: 3000,
            ..SolverOptions::default()
        };
        let sol = solve(&s, &y, &opts, &mut |_| {}).unwrap();
        assert!(
            sol.objective >= jref * (1.0 - 1e-6),
            "{} < optimum {jref}",
            sol.objective
        );
        assert!(
            sol.objective <= jref * 1.02,
            "{} vs optimum {jref}",
            sol.objective
        );
        assert_eq!(sol.pilot.len(), DEFAULT_ETA0_GRID.len());
    }

    #[test]
    fn model_predicts_a_polynomial() {
        let p = MonomialProblem::new(4, 5, 3, 9).unwrap();
        let train = p.generate(150, 1);
        let test = p.generate(100, 2);
        let Targets::Real(ytr) = &train.targets else {
            panic!()
        };
        let Targets::Real(yte) = &test.targets else {
            panic!()
        };
        let params = MirrorDescentParams {
            lambda: 1e-4,
            max_iter: 1500,
            init: Init::Uniform,
            ..MirrorDescentParams::default()
        };
        let model = PolyMklModel::fit(&train.x, ytr, &params).unwrap();
        let pred = model.predict(&test.x);
        let var = yte.iter().map(|v| v * v).sum::<f64>() / yte.len() as f64;
        let mse = pred
            .iter()
            .zip(yte)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            / yte.len() as f64;
        assert!(mse < 0.05 * var, "mse {mse} vs variance {var}");
        let names = model.kernels();
        assert!(!names.is_empty());
        // The model survives serialization.
        let json = serde_json::to_string(&model).unwrap();
        let back: PolyMklModel = serde_json::from_str(&json).unwrap();
        assert_eq!(back.predict(&test.x), pred);
        // Monomial predictor equals the dual form sum_t alpha_t K_theta(x_t, x).
        let prob = PolyProblem::new(&train.x, ytr, &params).unwrap();
        let (m2, sol) = prob.fit(&params.solver_options(), &mut |_| {}).unwrap();
        assert!(sol.uniform_weight > 0.0);
        let all = full_weights(&sol, 4, 3);
        let xs = prob.standardizer.apply(&test.x);
        for i in 0..5 {
            let mut f = 0.0;
            for (t, a) in sol.alpha.iter().enumerate() {
                let kv: f64 = all
                    .iter()
                    .map(|(m, w)| {
                        w * m
                            .iter()
                            .map(|&j| xs.get(i, j as usize) * prob.x_train.get(t, j as usize))
                            .product::<f64>()
                    })
                    .sum();
                f += a * kv;
            }
            let direct = prob.target.invert(f);
            let via = m2.predict(&test.x.select_rows(&[i]))[0];
            assert!((direct - via).abs() < 1e-8 * (1.0 + direct.abs()));
        }
    }

    #[test]
    fn gaussian_base_kernels_train_and_predict() {
        let p = MonomialProblem::new(3, 4, 2, 5).unwrap();
        let train = p.generate(60, 3);
        let Targets::Real(ytr) = &train.targets else {
            panic!()
        };
        let mut base = KernelSpec::new(crate::kernel::KernelKind::Rbf { sigma2: Some(1.0) });
        base.perfeature = true;
        let params = MirrorDescentParams {
            lambda: 1e-3,
            degree: 2,
            max_iter: 150,
            base: vec![base],
            ..MirrorDescentParams::default()
        };
        let prob = PolyProblem::new(&train.x, ytr, &params).unwrap();
        assert!(prob.rank_one.is_none());
        let (model, sol) = prob.fit(&params.solver_options(), &mut |_| {}).unwrap();
        // Dual prediction on the training rows equals K_theta alpha.
        let pred = model.predict(&train.x);
        let n = 60;
        let mut k = vec![0.0; n * n];
        for (m, w) in &full_weights(&sol, 3, 2) {
            let km = prob.sampler.kernel_dense(m);
            for (a, b) in k.iter_mut().zip(&km) {
                *a += w * b;
            }
        }
        for i in 0..n {
            let f: f64 = (0..n).map(|t| k[i * n + t] * sol.alpha[t]).sum();
            assert!((prob.target.invert(f) - pred[i]).abs() < 1e-8);
        }
        let mse = pred
            .iter()
            .zip(ytr)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            / n as f64;
        let var = ytr.iter().map(|v| v * v).sum::<f64>() / n as f64;
        assert!(mse < 0.1 * var);
    }

    #[test]
    fn uniform_kernel_equals_sum_over_ordered_products() {
        // (1 + x.x')^D is the sum over ordered tuples of the base kernels with the constant
        // feature: checked against explicit expansion on a tiny problem.
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let x = Matrix::from_vec(6, 2, (0..12).map(|_| rng.gen_range(-1.0..1.0)).collect());
        let y: Vec<f64> = (0..6).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let m = UniformPolyModel::fit(&x, &y, 2, 0.1).unwrap();
        let xs = &m.x_train;
        let mut k = Matrix::zeros(6, 6);
        for a in 0..6 {
            for b in 0..6 {
                let f = |i: usize, j: usize| if j == 0 { 1.0 } else { xs.get(i, j - 1) };
                let mut v = 0.0;
                for j1 in 0..3 {
                    for j2 in 0..3 {
                        v += f(a, j1) * f(b, j1) * f(a, j2) * f(b, j2);
                    }
                }
                k.set(a, b, v);
            }
        }
        let ys = m.target.apply_all(&y);
        let (_, alpha) = objective(&k, &ys, 0.1).unwrap();
        for (p, q) in alpha.iter().zip(&m.alpha) {
            assert!((p - q).abs() < 1e-9 * (1.0 + p.abs()));
        }
        let pred = m.predict(&x);
        for i in 0..6 {
            let f: f64 = (0..6).map(|t| k.get(i, t) * alpha[t]).sum();
            assert!((m.target.invert(f) - pred[i]).abs() < 1e-9);
        }
        assert!(UniformPolyModel::fit(&x, &y, 0, 0.1).is_err());
    }

    #[test]
    fn auto_batch_follows_the_measured_rule() {
        // 32768 / n clamped to [16, 512], never more than the number of kernels.
        assert_eq!(auto_batch(500, 176_851.0), 65);
        assert_eq!(auto_batch(140, 7770.0), 234);
        assert_eq!(auto_batch(83, 39_711.0), 394);
        assert_eq!(auto_batch(20, 1e6), 512);
        assert_eq!(auto_batch(5000, 1e6), 16);
        assert_eq!(auto_batch(40, 10.0), 10);
        // The default start is Algorithm 2's theta = 0: nothing outside the sampled terms.
        let (s, y, _) = rank_one_sampler(30, 4, 3, 5);
        let opts = SolverOptions {
            max_iter: 20,
            step: StepRule::Fixed(1.0),
            ..SolverOptions::default()
        };
        let sol = solve(&s, &y, &opts, &mut |_| {}).unwrap();
        assert_eq!(sol.uniform_weight, 0.0);
        assert!(sol.terms.len() <= 20 * auto_batch(30, s.kernel_count()));
        // A batch this large against n = 30 refactors instead of updating (RANK_UPDATE_RATIO).
        assert_eq!(sol.stats.rank_one_updates, 0);
        assert!(sol.stats.factorizations >= 20);
    }

    #[test]
    fn invalid_options_are_rejected() {
        let (s, y, _) = rank_one_sampler(10, 3, 2, 4);
        let bad = [
            SolverOptions {
                lambda: 0.0,
                ..SolverOptions::default()
            },
            SolverOptions {
                step: StepRule::Fixed(-1.0),
                ..SolverOptions::default()
            },
            SolverOptions {
                step: StepRule::Pilot {
                    grid: vec![],
                    fraction: 0.1,
                },
                ..SolverOptions::default()
            },
            SolverOptions {
                max_seconds: Some(0.0),
                ..SolverOptions::default()
            },
        ];
        for o in bad {
            assert!(solve(&s, &y, &o, &mut |_| {}).is_err());
        }
        assert!(solve(&s, &y[..5], &SolverOptions::default(), &mut |_| {}).is_err());
        assert!(Sampling::parse("nope").is_err());
        // Zero targets: zero gradient, nothing to learn.
        let sol = solve(&s, &[0.0; 10], &SolverOptions::default(), &mut |_| {}).unwrap();
        assert!(sol.converged);
    }
}
