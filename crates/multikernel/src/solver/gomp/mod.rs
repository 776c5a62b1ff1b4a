//! MKL-GOMP: greedy sparse kernel selection by group orthogonal matching pursuit in a
//! dictionary of RKHSs (Sindhwani & Lozano 2012, Sec. 3, the algorithm box and its
//! remarks), for regularized least squares.
//!
//! With `R(g; r) = (1/l) ||r - g||^2 + lambda ||g||_H^2` over the `l` training points,
//! `min_{g in H_j} R(g; r) = lambda r^T (K_j + lambda l I)^-1 r`, so the improvement of
//! kernel `j` on the residual `r` is (docs/formulas.md, "MKL-GOMP improvement")
//!
//! ```text
//! I_j = (1/l) ||r||^2 - lambda r^T (K_j + lambda l I)^-1 r
//!     = (1/l) r^T (I - lambda l (K_j + lambda l I)^-1) r        >= 0.
//! ```
//!
//! Each iteration (the algorithm box): 1. compute `I_j` for every kernel not yet chosen
//! (or a random subsample of them, a remark of Sec. 3); 2. stop when the best `I_j <= eps`
//! or `s` kernels are chosen; 3. refit `alpha = (sum_{j in G} K_j + lambda l I)^-1 y`;
//! 4. residual `r = y - K_G alpha` (which equals `lambda l alpha`). Every refit is kept, so
//! the sparsity level can be chosen on validation data afterwards ([`GompPath::decision_path`]).
//!
//! **Multivariate mode** (the remark after the algorithm, as in Multivariate Group-OMP):
//! `y` has several columns (one-hot targets of a multiclass problem); all outputs form one
//! group, `I_j` sums the improvements over the columns, and one kernel set serves them all.
//! A single column is the plain algorithm.
//!
//! **Bias** (on by default): an unpenalized bias per output, exactly, by centering the
//! targets and every kernel in feature space (`H K H`, factors `H Z`), as in
//! [`super::lp_mkl`]. The improvement is then that of `g + b` with a free constant `b`.
//!
//! **Evaluating `I_j`**, fastest first:
//! - rank-one kernels (`K = z z^T`, e.g. one per-feature linear kernel):
//!   `I_j = (1/l) sum_c (z^T r_c)^2 / (||z||^2 + lambda l)`, all of them at once by one
//!   product `Z^T R`;
//! - low-rank factors `Z` (`n x q`): `I_j = (1/l) ||L^-1 Z^T R||^2` with
//!   `L L^T = Z^T Z + lambda l I` (Woodbury), O(nq) per evaluation;
//! - dense kernels with [`Precompute::Cholesky`], the precomputed `Q_j` of the remarks in
//!   Cholesky form: `L_j L_j^T = K_j + lambda l I` once per kernel, then
//!   `I_j = (1/l) (||r||^2 - lambda l ||L_j^-1 r||^2)`, one triangular solve (O(l^2)) per
//!   evaluation — the cost of `||Q_j r||^2` without an eigendecomposition;
//! - dense kernels with [`Precompute::None`]: a fresh factorization per evaluation
//!   (O(l^3), no memory beyond one matrix per thread).
//!
//! Candidates are evaluated in parallel over kernels with rayon.
//!
//! # Run contract
//! A step is one kernel chosen ([`StepUnit::Kernel`](crate::run::StepUnit), at most
//! `max_kernels`), its objective the training residual `(1/l) ||r||^2` after the refit. The
//! observer is polled between candidate evaluations (also on rayon's worker threads); a
//! stopped run returns the path chosen so far ([`GompStop::Cancelled`]). The run's status is
//! `Converged` when the best improvement is `<= eps` or every kernel is chosen, `Completed`
//! when `max_kernels` kernels are chosen, `Cancelled` when the observer stopped it.
//!
//! # Layout
//! `params.rs`: the parameters and their checks ([`GompParams`], [`GompModelParams`]);
//! `engine.rs`: the algorithm on kernel matrices ([`gomp`], [`GompPath`]); `model.rs`: the
//! trained model on raw rows ([`GompModel`]: fit, predict, validate); `tests.rs`. The kernel
//! ridge refits and raw-row predictions come from [`super::ridge`], shared with lp-MKL.

mod engine;
mod model;
mod params;
#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) use engine::improvement;
pub use engine::{gomp, GompPath};
#[cfg(test)]
pub(crate) use model::best_index;
pub(crate) use model::GompModel;
pub use model::ValidationMetric;
pub(crate) use params::GompModelParams;
pub use params::{GompParams, Precompute};
