//! Randomized mirror descent MKL over polynomial kernels: Algorithm 2 of Afkanpour et al.
//! (2013) ("projected stochastic gradient") with the gradient sampled by Algorithm 3
//! ([`sampler`]), and the uniform-coordinate-descent (UCD) baseline.
//!
//! # Problem
//! Minimize `J(theta) = (lambda/2) y^T (K_theta + lambda I)^-1 y` ([`objective`]) over
//! the positive part of the unit l2 ball (`Psi = 1/2 ||.||_2^2`, `K = Delta_2`: block norm
//! q = 4/3, kernel-weight norm p = 2 in docs/formulas.md's notation), one weight per distinct
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
//!   the number of orderings of `m` (see [`sampler`]); the importance ratio
//!   `q_m / s_m = C' / (c_m ||g||_1)` is exact.
//! - [`Sampling::Proportional`]: exactly `q_m = |g_m| / ||g||_1` (Algorithm 3 plus rejection).
//! - [`Sampling::Uniform`] (UCD): uniform over all `C(r + D, D)` kernels.
//! - [`Sampling::User`]: any [`IndexDistribution`](crate::multiset::IndexDistribution).
//!
//! Step size: `eta_k = eta0 / (||g^(k-1)||_1 sqrt(k))`, i.e. `theta_m` grows by
//! `eta0 / sqrt(k) * q_m / s_m`. Corollary 3.3's step is `1 / sqrt(B T)` with
//! `B = C^2 max q/s / 2`, `C` a bound on `||g||_1`: using the current `||g||_1` instead of its
//! bound makes `eta0` scale free (the objective's scale, `lambda` and `n` drop out), so one
//! grid of `eta0` serves every data set. `eta0` is fixed ([`StepRule::Fixed`]) or picked by a
//! pilot ([`StepRule::Pilot`]): every candidate runs a short budget from `theta^(0)` with the
//! same random numbers, the one with the lowest objective continues, the others' time counts.
//!
//! Other step rules (decay exponents, averaging powers, a wider `eta0` grid, a step scaled by
//! `||theta||_1`) were measured against these defaults on the Figure 1 tables and were not
//! better on all of them (BENCHMARKS.md, "Mirror descent: measurements behind the
//! defaults"). What limits the accuracy after a few seconds is the number of sampled
//! coordinates per kernel: the optimum is dense, its `theta*_m` estimated by how often `m`
//! was drawn, so the batch rule ([`auto_batch`]) matters most. The same density bounds what
//! importance sampling can gain over UCD: the second moment of the eq.-14 estimate under
//! uniform sampling is `N sum_m q_m^2` times that under sampling by `|g|`, a small factor
//! when `q` is spread, while a UCD iteration is cheaper (no Algorithm 3 draws).
//!
//! Start: `theta^(0) = 0` as printed ([`Init::Zero`], the default); the uniform start
//! `N^{-1/2} 1` ([`Init::Uniform`]) is an option. The uniform start gives every kernel the
//! weight `N^{-1/2}`, i.e. the whole unit norm to the uniform kernel, which the averaged
//! iterate forgets slowly (worse `J` and test error at large `N`; BENCHMARKS.md); with a
//! batch, `K_theta` is full rank after `n / B` iterations, so the rank deficiency of the zero
//! start costs a handful of iterations.
//!
//! One choice departs from Algorithm 2 as printed, an option whose printed form remains
//! available:
//! - **Batch** ([`SolverOptions::batch`]): `B` coordinates drawn i.i.d. per iteration, the
//!   gradient estimate the average of their eq.-14 estimates (still unbiased, variance / B).
//!   An iteration costs a fixed number of `O(n^2)` passes (the masses of Algorithm 3, the
//!   solve for `alpha`, the averaged kernel) plus a rank-`B` change of `K_phi`; the draws of
//!   Algorithm 3 run level by level and share every step-6 computation whose state they
//!   share ([`PolySampler::draw_batch`]). `B = 1` is the paper's algorithm; the default
//!   is [`auto_batch`] (chosen on the Figure 1 tables, BENCHMARKS.md).
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
//! (`8 B > n`): a rank-`B` update then costs more than a new factorization (BENCHMARKS.md;
//! `cargo bench --bench mirror_descent -- rank_update`), which also makes the solve direct.
//! Full-rank product kernels (e.g. Gaussian base kernels) refactor every iteration
//! (`O(n^3)`). The averaged `K_theta_bar` is accumulated the same
//! way (`O(n^2)` per iteration), and per-kernel averages lazily (`O(1)` per iteration), so
//! memory is `O(n^2 D)` plus one entry per kernel ever sampled — never per kernel of the
//! family.

//!
//! # Run contract
//! A step is one iteration ([`StepUnit::Iteration`](crate::run::StepUnit)) of the returned
//! run; every step is reported, with the objective of the returned iterate where the
//! evaluation schedule ([`EvalSchedule`]) computes it. The observer is polled before every
//! iteration, the eta0 pilots' included. The status is `Completed` when a run given a number
//! of iterations does them all, `TimeBudget` when `max_seconds` ends it, `IterationLimit` when
//! the iteration cap ends a time-budgeted run, `Converged` when the gradient vanishes and
//! `Cancelled` when the observer stops it (the model of the iterate reached is returned).
//!
//! # Layout
//! `params.rs`: the options and their checks ([`SolverOptions`], [`MirrorDescentParams`]);
//! `engine.rs`: Algorithm 2 on the sampler ([`solve`]); `model.rs`: the trained models on raw
//! rows ([`PolyMklModel`]: fit, predict, validate; [`UniformPolyModel`]); [`objective`]: `J`
//! and its gradient on explicit kernel lists (the slow twins of the tests and the uniform
//! baseline); [`sampler`]: Algorithm 3; `tests.rs`. The objective and the sampler live here,
//! not beside the solver folders, because nothing else uses them: they are this family's
//! numerics.

mod engine;
mod model;
pub(crate) mod objective;
mod params;
pub(crate) mod sampler;
#[cfg(test)]
mod tests;

pub use engine::solve;
#[cfg(test)]
pub(crate) use engine::MdSolution;
pub(crate) use model::PolyMklModel;
#[cfg(test)]
pub(crate) use model::PolyPredictor;
pub use model::{PolyProblem, UniformPolyModel};
#[cfg(test)]
pub(crate) use params::{auto_batch, DEFAULT_ETA0_GRID};
pub use params::{
    perfeature_linear, EvalSchedule, Init, MirrorDescentParams, Sampling, SolverOptions, StepRule,
};
pub use sampler::{PolyBasis, PolySampler};
