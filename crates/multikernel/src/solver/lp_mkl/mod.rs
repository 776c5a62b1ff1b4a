//! lp-norm multiple kernel learning for the squared loss (Kloft et al. 2011, "lp-norm
//! multiple kernel learning", JMLR 12), by the alternating closed form of docs/formulas.md
//! ("lp-MKL for the squared loss"). This is the one lp-MKL solver of the library: the
//! MKL-GOMP baselines (Sindhwani & Lozano 2012, Sec. 5.1, their "lq-MKL") and the mirror
//! descent baselines (Afkanpour et al. 2013) both call [`lp_mkl`].
//!
//! # Problem
//! With kernel weights `theta` on the lp sphere (`p` is the *kernel-weight* norm of
//! docs/formulas.md: p = 1 sparse MKL, p = inf the plain sum of kernels) and
//! `K_theta = sum_m theta_m K_m`,
//!
//! ```text
//! J(theta) = min_w 1/2 ||y - f_w||^2 + lambda/2 sum_m ||w_m||^2 / theta_m
//!          = (lambda/2) y^T (K_theta + lambda I)^-1 y,
//! ```
//!
//! summed over the columns of `y` for several outputs (one-hot targets of a multiclass
//! problem share the kernel weights). Note the scale: `lambda` multiplies the identity
//! directly (not `lambda * n` as in MKL-GOMP's R(g; r)); both learners choose lambda from
//! a grid, so only the grids differ.
//!
//! # Algorithm (alternating minimization)
//! Start at the uniform `theta_m = M^(-1/p)`; repeat
//! 1. `alpha = (K_theta + lambda I)^-1 y`, `J(theta) = (lambda/2) <y, alpha>`;
//! 2. block norms `||w_m||^2 = theta_m^2 alpha^T K_m alpha`;
//! 3. `theta_m = ||w_m||^(2/(p+1)) / (sum_k ||w_k||^(2p/(p+1)))^(1/p)` (p = inf: theta = 1),
//!
//! until J changes by less than `tol` relatively. Each step is an exact block minimization
//! of a jointly convex function, so J never increases ([`LpMklSolution::objective`] holds
//! J per iteration).
//!
//! # Bias
//! On by default (`bias: true`): an *unpenalized* bias per output, solved exactly by
//! centering: targets are centered and every kernel is centered in feature space
//! (`H K H`, `H = I - 11^T/n`; a factor `Z` becomes `H Z`). Then `1^T alpha = 0` and
//! `b = mean(y) - (1/n) 1^T K_theta alpha` with the *uncentered* kernels, so prediction uses
//! plain cross kernels: `f(x) = sum_m theta_m k_m(x, X) alpha + b`.
//!
//! # Row weights
//! With row weights `w_i >= 0` (scikit-learn's `sample_weight`), the loss is
//! `1/2 sum_i w_i (y_i - f(x_i) - b)^2`, so an integer weight is a repeated row. With
//! `W = diag(w)`, `D = W^(1/2)`, `S = sum_i w_i` and `H_d = I - d d^T / S` (`d = sqrt(w)`),
//! the bias is the weighted mean `b = w^T (y - f) / S`, and the problem is the unweighted
//! one without a bias in the kernels `H_d D K_m D H_d` and the targets `D (y - ybar_w)`:
//! `beta = (H_d D K_theta D H_d + lambda I)^-1 D (y - ybar_w)`, `alpha = D beta`, i.e.
//! `(K_theta + lambda W^-1) alpha = y - b` on the rows of positive weight (alpha = 0 on
//! the others) with `w^T`-weighted centering; the block norms use the raw kernels
//! (`beta^T K'_m beta = alpha^T K_m alpha`) and `b = ybar_w - (1/S) w^T K_theta alpha`
//! (`weighted.rs`; weights all 1 run the unweighted code).
//!
//! # Kernels
//! A base kernel on the `n` training points is a
//! [`KernelMatrix`](crate::kernel::KernelMatrix): a dense Gram matrix, or a factor `Z`
//! (`n x r`, `K = Z Z^T`). A rank-one kernel (one monomial feature `z`, one
//! per-feature linear kernel) is a factor with `r = 1`: thousands of them stay cheap, since
//! only `n x sum(r)` numbers are stored and, when the total rank is below `n`, the solve
//! goes through the Woodbury identity in O(n R^2).
//!
//! # Usage
//! ```
//! use multikernel::data::Matrix;
//! use multikernel::kernel::KernelMatrix;
//! use multikernel::engine::solver::lp_mkl::{lp_mkl, LpMklParams};
//!
//! // Three rank-one kernels (one per feature) over four training points.
//! let x = Matrix::from_rows(&[
//!     vec![1.0, 0.5, -1.0],
//!     vec![-1.0, 0.2, 0.3],
//!     vec![0.8, -0.4, 0.9],
//!     vec![-0.9, 0.1, -0.2],
//! ]);
//! let kernels: Vec<KernelMatrix> = (0..3).map(|j| KernelMatrix::rank_one(x.col(j))).collect();
//! let y = Matrix::from_vec(4, 1, vec![1.0, -1.0, 1.0, -1.0]);
//! let params = LpMklParams { p: 4.0 / 3.0, lambda: 0.1, ..LpMklParams::default() };
//! // `&()` watches nothing; any `run::Observer` can see each alternation and stop the run.
//! let (sol, info) = lp_mkl(&kernels, &y, &params, &()).unwrap();
//! assert_eq!(info.steps as usize, sol.iterations);
//! assert!(sol.objective.windows(2).all(|w| w[1] <= w[0] * (1.0 + 1e-9)));
//! let norm: f64 = sol.theta.iter().map(|t| t.powf(params.p)).sum();
//! assert!((norm - 1.0).abs() < 1e-9);
//! // Predictions on new rows: the test-side kernels (factors for rank-one kernels,
//! // cross Gram matrices n_test x n for dense ones).
//! let test: Vec<KernelMatrix> = (0..3).map(|j| KernelMatrix::rank_one(vec![0.5 * x.get(0, j)])).collect();
//! let f = sol.decision(&kernels, &test).unwrap();
//! assert_eq!((f.rows, f.cols), (1, 1));
//! ```
//!
//! # Run contract
//! A step is one alternation ([`StepUnit::Iteration`](crate::run::StepUnit), at most
//! `max_iter`) with its objective `J`; the observer is polled before each solve. The status
//! is `Converged` when J changes by less than `tol` relatively (at once for p = inf),
//! `IterationLimit` at `max_iter`, `Cancelled` when the observer stopped the run (the
//! solution then holds the last weights and their coefficients).
//!
//! # Layout
//! `params.rs`: the parameters and their checks ([`LpMklParams`], [`LpMklModelParams`],
//! [`parse_p`]); `engine.rs`: the algorithm on kernel matrices ([`lp_mkl`], [`objective`]);
//! `model.rs`: the trained model on raw rows ([`LpMklModel`]: fit, predict, validate);
//! `tests.rs`. The weighted-sum solves and raw-row predictions come from [`super::ridge`].

mod engine;
mod model;
mod params;
mod precomputed;
#[cfg(test)]
mod tests;
mod weighted;

#[cfg(test)]
use crate::solver::ridge::solve_weighted_sum;
#[cfg(test)]
pub(crate) use engine::objective;
pub use engine::{lp_mkl, LpMklSolution};
pub(crate) use engine::{lp_mkl_on, lp_mkl_weighted};
pub(crate) use model::LpMklModel;
pub(crate) use params::p_serde;
pub(crate) use params::LpMklModelParams;
pub use params::{p_label, parse_p, LpMklParams};
pub(crate) use precomputed::{check_train_kernels, PrecomputedLpModel};
