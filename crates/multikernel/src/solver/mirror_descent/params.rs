//! Options of the mirror-descent solver ([`SolverOptions`]) and of the model fit
//! ([`MirrorDescentParams`]), checked before any work starts.

use super::sampler::pos;
use crate::error::{Error, Result};
use crate::kernel::{KernelSpec, MemoryLimit};
use crate::multiset::IndexDistribution;
use std::sync::Arc;

/// Default grid of `eta0` for the pilot rule.
pub(crate) const DEFAULT_ETA0_GRID: [f64; 5] = [0.1, 0.3, 1.0, 3.0, 10.0];
/// Default fraction of the budget spent on pilots (all candidates together).
pub(crate) const DEFAULT_PILOT_FRACTION: f64 = 0.1;
/// Default averaging power (`w_k = k^power`).
pub(crate) const DEFAULT_AVERAGING_POWER: f64 = 1.0;
/// Default step decay exponent (`eta_k ~ k^-decay`).
pub(crate) const DEFAULT_STEP_DECAY: f64 = 0.5;

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
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) fn parse(s: &str) -> Result<Sampling> {
        match s.trim().to_ascii_lowercase().as_str() {
            "stoch" | "importance" | "mirror-descent" => Ok(Sampling::Importance),
            "proportional" | "exact" => Ok(Sampling::Proportional),
            "ucd" | "uniform" => Ok(Sampling::Uniform),
            other => Err(Error::param(
                "sampling",
                other,
                "stoch (importance), proportional or ucd (uniform)",
            )),
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
/// large batch buys many more sampled coordinates per second; at `n = 500` a batch much
/// larger than 64 leaves too few iterations (the measurements on Figure 1's tables are in
/// BENCHMARKS.md).
pub(crate) fn auto_batch(n: usize, kernels: f64) -> usize {
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

/// Options of the solver on prepared data ([`solve`](super::solve)).
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
    /// `auto_batch`.
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
    pub(crate) fn validate(&self) -> Result<()> {
        if !(self.lambda > 0.0 && self.lambda.is_finite()) {
            return Err(Error::param("lambda", self.lambda, "a finite number > 0"));
        }
        if self.max_iter == 0 && self.max_seconds.is_none() {
            return Err(Error::param(
                "max_iter",
                0,
                "at least 1 iteration when there is no time budget (max_seconds)",
            ));
        }
        if let Some(s) = self.max_seconds {
            if !pos(s) {
                return Err(Error::param("max_seconds", s, "a number of seconds > 0"));
            }
        }
        match &self.step {
            StepRule::Fixed(e) => {
                if !(*e > 0.0 && e.is_finite()) {
                    return Err(Error::param("eta0", e, "a finite number > 0"));
                }
            }
            StepRule::Pilot { grid, fraction } => {
                if grid.is_empty() || grid.iter().any(|e| !(*e > 0.0 && e.is_finite())) {
                    return Err(Error::param(
                        "eta0",
                        format!("{grid:?}"),
                        "a grid of finite values > 0 (at least one)",
                    ));
                }
                if !(*fraction > 0.0 && *fraction < 1.0) {
                    return Err(Error::param(
                        "pilot_fraction",
                        fraction,
                        "a fraction of the budget in (0, 1)",
                    ));
                }
            }
        }
        match self.eval {
            EvalSchedule::Seconds(s) if !pos(s) => {
                return Err(Error::param("eval", s, "an interval of seconds > 0"))
            }
            EvalSchedule::Geometric { first, factor } if !(first > 0.0 && factor > 1.0) => {
                return Err(Error::param(
                    "eval",
                    format!("first {first} s, factor {factor}"),
                    "a geometric schedule with first > 0 seconds and factor > 1",
                ))
            }
            _ => {}
        }
        if !(0.0..=1.0).contains(&self.step_decay) {
            return Err(Error::param(
                "step_decay",
                self.step_decay,
                "an exponent in [0, 1]",
            ));
        }
        if let Some(p) = self.averaging_power {
            if !p.is_finite() || p < -1.0 {
                return Err(Error::param("averaging_power", p, "a finite number >= -1"));
            }
        }
        Ok(())
    }
}

/// Parameters of `PolyMklModel::fit`: the product kernels
/// (degree `D`, `rho_d^2`, base kernels, memory) and the solver's own options, which
/// `PolyMklModel::fit` hands to [`solve`](super::solve) as
/// they are.
#[derive(Debug, Clone)]
pub struct MirrorDescentParams {
    /// Maximum degree `D` of the product kernels.
    pub degree: usize,
    /// `rho_d^2`, `d = 0..=D`; empty means all 1.
    pub rho2: Vec<f64>,
    /// Base kernels (expanded per feature where asked); default `perfeature:linear`.
    pub base: Vec<KernelSpec>,
    pub memory: MemoryLimit,
    /// Sampling (`Importance`: mirror descent, "Stoch"; `Uniform`: UCD), ridge, budget,
    /// step rule, averaging, batch and seed (the seed also draws the random features of
    /// the base kernels).
    pub solver: SolverOptions,
}

impl Default for MirrorDescentParams {
    fn default() -> Self {
        MirrorDescentParams {
            degree: 3,
            rho2: Vec::new(),
            base: vec![perfeature_linear()],
            memory: MemoryLimit::default(),
            solver: SolverOptions::default(),
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
    pub(crate) fn rho2_full(&self) -> Result<Vec<f64>> {
        if self.rho2.is_empty() {
            Ok(vec![1.0; self.degree + 1])
        } else if self.rho2.len() == self.degree + 1 {
            Ok(self.rho2.clone())
        } else {
            Err(Error::shape(
                format!("rho2 (one value per degree 0..={})", self.degree),
                self.degree + 1,
                self.rho2.len(),
            ))
        }
    }
}
