//! Parameters of MKL-GOMP: the engine's ([`GompParams`]) and the model fit's
//! ([`GompModelParams`]), checked before any work starts.

use crate::error::{Error, Result};
use crate::kernel::MemoryLimit;
use serde::{Deserialize, Serialize};

/// How improvements of dense kernels are evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Precompute {
    /// Cholesky factors cached when they fit in `memory_bytes`, else [`Precompute::None`].
    Auto,
    /// Cache one Cholesky factor of `K_j + lambda l I` per dense kernel (the `Q_j`
    /// precompute of Sec. 3's remarks), built the first time the kernel is a candidate.
    Cholesky,
    /// Factor `K_j + lambda l I` afresh at every evaluation.
    None,
}

/// Parameters of [`gomp`](super::gomp).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GompParams {
    /// Smoothness: `R(g; r) = (1/l)||r - g||^2 + lambda ||g||^2`.
    pub lambda: f64,
    /// Sparsity: at most this many kernels (the path length s).
    pub max_kernels: usize,
    /// Stop when the best improvement is `<= eps` (units of `(1/l)||r||^2`).
    pub eps: f64,
    /// Unpenalized bias per output by centering.
    pub bias: bool,
    pub precompute: Precompute,
    /// Search only a random subsample of this many not-yet-chosen kernels per iteration.
    pub subsample: Option<usize>,
    /// Seed of the subsample.
    pub seed: u64,
    /// Memory the cached factors may use (bytes).
    pub memory_bytes: usize,
}

impl Default for GompParams {
    fn default() -> Self {
        GompParams {
            lambda: 1e-2,
            max_kernels: 20,
            eps: 1e-8,
            bias: true,
            precompute: Precompute::Auto,
            subsample: None,
            seed: 0,
            memory_bytes: 8 << 30,
        }
    }
}

impl GompParams {
    /// Rejects parameters no run could use.
    pub(crate) fn validate(&self) -> Result<()> {
        if !(self.lambda > 0.0 && self.lambda.is_finite()) {
            return Err(Error::param(
                "lambda",
                self.lambda,
                "a positive finite number (MKL-GOMP's kernel selection is ill-posed without \
                 it, Sec. 3)",
            ));
        }
        if self.max_kernels == 0 {
            return Err(Error::param("max_kernels", 0, "at least 1"));
        }
        if self.eps.is_nan() || self.eps < 0.0 {
            return Err(Error::param("eps", self.eps, "a number >= 0"));
        }
        if self.subsample == Some(0) {
            return Err(Error::param(
                "subsample",
                0,
                "at least 1 kernel per iteration",
            ));
        }
        Ok(())
    }
}

/// Everything [`GompModel::fit`](super::GompModel::fit) needs besides the data.
#[derive(Debug, Clone)]
pub struct GompModelParams {
    pub gomp: GompParams,
    /// Standardize the features on the training rows before fitting kernels.
    pub standardize: bool,
    /// Seed of the kernels' data-dependent choices (median heuristic samples).
    pub seed: u64,
    /// Limit for the training kernel matrices and prediction blocks; the cached Cholesky
    /// factors get the same budget (`gomp.memory_bytes` is overridden by it).
    pub memory: MemoryLimit,
}

impl Default for GompModelParams {
    fn default() -> Self {
        GompModelParams {
            gomp: GompParams::default(),
            standardize: true,
            seed: 0,
            memory: MemoryLimit::default(),
        }
    }
}
