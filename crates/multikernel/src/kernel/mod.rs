//! Kernels, normalizations and Gram matrices.
//!
//! - [`KernelSpec`] (parsed from `--kernel` strings such as `rbf:norm=diag` or
//!   `perfeature:linear`) says what the user asked for; [`expand_specs`] turns per-feature
//!   specs into one spec per input column.
//! - [`FittedKernel::fit`] resolves every data-dependent choice on the training rows (the
//!   median heuristic for the Gaussian width, the B1-spline support for a target sparsity,
//!   the trace / variance factors of docs/formulas.md "Kernel helpers") so the same function is
//!   applied to test rows.
//! - [`FittedKernel::gram`] / [`FittedKernel::gram_sym`] compute [`Gram`] matrices: dense ones
//!   through a matrix product per row block (faer) and an elementwise map, in parallel over
//!   row blocks (rayon); B1-spline Grams sparse (CSR). Sizes are checked against a
//!   [`MemoryLimit`] before allocating.
//! - [`FittedKernel::feature_map`] gives the explicit map `z` of a linear kernel (exact) or
//!   of a kernel with `approx=` (random Fourier features): the online learner trains such a
//!   kernel as a group of `D` explicit features instead of an `n x n` Gram matrix.
//! - [`check_psd`] refuses a caller's kernel matrix that is not positive semidefinite (its
//!   smallest eigenvalue in the message; the tolerance [`PSD_TOL`] is relative and argued in
//!   [`psd`]).

pub mod binary;
mod compute;
pub mod dictionary;
pub mod feature_map;
mod fitted;
mod gram;
mod heuristics;
pub mod matrix;
mod memory;
pub mod psd;
mod spec;

#[cfg(test)]
mod tests;

pub use compute::{clear_upper_simd_state, FittedKind};
pub use dictionary::{default_dictionary, dictionary_size, streaming_dictionary};
pub use feature_map::{Approx, ApproxMethod, FeatureMap};
pub use fitted::{fit_all, FittedKernel, VARIANCE_MAX_POINTS};
pub use gram::{Gram, SparseGram};
pub use heuristics::{bspline_h_for_zeros, median_sigma2, HEURISTIC_MAX_POINTS};
pub use matrix::{kernel_matrices, test_kernel_matrix, train_kernel_matrix, KernelMatrix};
pub use memory::MemoryLimit;
pub use psd::{check_psd, check_psd_with, extreme_eigenvalues, PSD_TOL};
pub use spec::{expand_specs, KernelKind, KernelSpec, Normalization, DEFAULT_BSPLINE_ZEROS};
