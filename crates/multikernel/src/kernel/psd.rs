//! Is a kernel matrix positive semidefinite? A check for matrices the library did not
//! compute itself (the caller's precomputed kernels): on an indefinite matrix an SVM or MKL
//! dual is not convex, so it has no unique optimum and solvers may cycle or stop anywhere.
//!
//! **The rule.** A symmetric `n x n` matrix `K` with eigenvalues `l_min <= ... <= l_max` is
//! accepted when
//!
//! ```text
//! l_min >= -PSD_TOL * max(|l_min|, |l_max|)        (PSD_TOL = 1e-6; the zero matrix passes)
//! ```
//!
//! The tolerance is relative, so the verdict does not depend on the matrix's scale (`c K`
//! passes exactly when `K` does; there is no absolute floor that would let a tiny indefinite
//! matrix through). Measured with LAPACK's eigenvalues (numpy) on the Gram matrices of the
//! shipped UCI tables and of random tables of up to 3,000 rows and 5,000 features, raw and
//! standardized, rank-deficient ones included (linear on 2 features, polynomial of degree 2
//! on 2 features): RBF, linear and polynomial Grams computed in double precision reach
//! `l_min / max|l| >= -1.7e-14` (eigensolver error is about `n * eps`, `6.7e-13` at
//! `n = 3000`); the same Grams computed in single precision (scikit-learn on `float32`
//! rows) and widened reach `-4.6e-8`. The tolerance keeps a factor of 20 over the latter and
//! seven orders of magnitude over the former. Sigmoid (tanh) kernels on the standardized
//! tables give `-0.018` to `-0.17` for `gamma = 1/d` (offset 0 or 1) and `-1` with offset
//! -1, refused; as the slope goes to 0 a sigmoid matrix tends to a positive semidefinite one
//! (`-1.7e-8` to `-1.8e-7` at `gamma = 0.001/d`, offset 1: accepted, and harmless at that
//! size).
//!
//! **How.** First a Cholesky factorization (`crate::linalg::cholesky_in_place`) of
//! `K + s I` with `s = PSD_TOL * max(max_i |K_ii|, ||K||_F / sqrt(n))`; both terms are lower
//! bounds of `max |l|`, so a factorization that succeeds proves `l_min > -s >= -PSD_TOL *
//! max |l|` (up to the factorization's rounding, about `n * eps * ||K||`): the matrix passes.
//! Only when it fails are the eigenvalues computed (faer's self-adjoint eigenvalue solver:
//! Householder tridiagonalization, then the tridiagonal eigenvalues), which decide by the rule
//! above and give the smallest and largest eigenvalue for the message. Cost: `O(n^3)`, about
//! `n^3 / 3` flops for a matrix that passes and about `4 n^3 / 3` more for one that fails
//! (the eigenvalues cost several times the factorization); memory: one `n x n` copy
//! (`8 n^2` bytes), checked against the [`MemoryLimit`] before it is allocated. faer runs in parallel for one large matrix
//! (`n >= 1500`, outside a rayon pool), as the crate's other factorizations do.
//!
//! Only the lower triangle of `K` is read (as faer's factorizations do); the caller checks
//! symmetry.

use super::memory::{bytes_of, MemoryLimit};
use crate::data::MatrixRef;
use crate::error::{Error, Result};
use crate::linalg::{cholesky_in_place, par_for};
use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::{self_adjoint_evd, self_adjoint_evd_scratch, ComputeEigenvectors};
use faer::{Mat, MatRef};

/// Relative tolerance of [`check_psd`]: the smallest eigenvalue may be as low as
/// `-PSD_TOL` times the largest eigenvalue magnitude (see the module documentation for why).
pub const PSD_TOL: f64 = 1e-6;

/// Refuses a kernel matrix that is not positive semidefinite (the module's rule), under the
/// default [`MemoryLimit`]. `what` names the matrix in the messages (e.g. `kernel 2 (rbf)`).
///
/// Errors: [`Error::ShapeMismatch`] for a matrix that is not square, [`Error::Data`] for a
/// non-finite entry or an indefinite matrix (with its smallest and largest eigenvalue),
/// [`Error::Memory`] when the `n x n` copy does not fit, [`Error::Numerical`] if the
/// eigenvalue iteration does not converge. Costs `O(n^3)`.
pub fn check_psd(k: MatrixRef<'_>, what: &str) -> Result<()> {
    check_psd_with(k, what, &MemoryLimit::default())
}

/// [`check_psd`] under the memory limit `limit` (for its one `n x n` copy).
pub fn check_psd_with(k: MatrixRef<'_>, what: &str, limit: &MemoryLimit) -> Result<()> {
    let n = check_square_finite(k, what)?;
    if n == 0 {
        return Ok(());
    }
    check_memory(n, what, limit)?;
    let shift = PSD_TOL * norm_lower_bound(k);
    if shift > 0.0 && shift.is_finite() && shifted_cholesky_succeeds(k, shift) {
        return Ok(());
    }
    let (lo, hi) = extreme_eigenvalues_unchecked(k, what)?;
    if passes(lo, hi) {
        return Ok(());
    }
    Err(Error::data(format!(
        "{what} is not positive semidefinite: smallest eigenvalue {} (largest {}); an SVM or \
         MKL on it has no unique optimum. Use a valid kernel (a sigmoid/tanh kernel, a \
         distance matrix or a test-by-train matrix is not one) or add c*I to it with c >= {}",
        sig(lo),
        sig(hi),
        sig(-lo)
    )))
}

/// The smallest and largest eigenvalue of the symmetric matrix `k` (lower triangle read), by
/// faer's self-adjoint eigenvalue solver; `O(n^3)`, one `n x n` copy under `limit`. `None`
/// for an empty matrix.
pub fn extreme_eigenvalues(k: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Option<(f64, f64)>> {
    let what = "a kernel matrix";
    let n = check_square_finite(k, what)?;
    if n == 0 {
        return Ok(None);
    }
    check_memory(n, what, limit)?;
    extreme_eigenvalues_unchecked(k, what).map(Some)
}

/// The rule: `lo >= -PSD_TOL * max(|lo|, |hi|)`.
fn passes(lo: f64, hi: f64) -> bool {
    lo >= -PSD_TOL * lo.abs().max(hi.abs())
}

fn check_square_finite(k: MatrixRef<'_>, what: &str) -> Result<usize> {
    let n = k.rows();
    if k.cols() != n {
        return Err(Error::shape(
            format!("columns of {what} (a kernel matrix must be square)"),
            n,
            k.cols(),
        ));
    }
    if let Some(i) = k.data().iter().position(|v| !v.is_finite()) {
        return Err(Error::data(format!(
            "{what}: entry ({}, {}) is {}, not a finite number",
            i / n,
            i % n,
            k.data()[i]
        )));
    }
    Ok(n)
}

/// Bytes of the check's largest allocation: the `n x n` copy (the Cholesky factor's, or the
/// eigenvalue solver's workspace that holds one) and a few vectors.
fn check_memory(n: usize, what: &str, limit: &MemoryLimit) -> Result<()> {
    let evd =
        self_adjoint_evd_scratch::<f64>(n, ComputeEigenvectors::No, par_for(n), Default::default())
            .size_bytes();
    let needed = bytes_of(n, n, 8).max(evd).saturating_add(bytes_of(n, 1, 8));
    limit.check(
        needed,
        &format!("the positive semidefiniteness check of {what} ({n} x {n})"),
    )
}

/// `max(max_i |K_ii|, ||K||_F / sqrt(n))`, two lower bounds of the spectral norm (the
/// Frobenius norm summed with scaling, so that entries near 1e300 do not overflow).
fn norm_lower_bound(k: MatrixRef<'_>) -> f64 {
    let n = k.rows();
    let diag = (0..n).fold(0.0f64, |m, i| m.max(k.get(i, i).abs()));
    let big = k.data().iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if big == 0.0 {
        return 0.0;
    }
    let sum: f64 = k.data().iter().map(|v| (v / big) * (v / big)).sum();
    diag.max(big * (sum / n as f64).sqrt())
}

/// Whether `K + shift I` (lower triangle) has a Cholesky factor with finite positive pivots.
fn shifted_cholesky_succeeds(k: MatrixRef<'_>, shift: f64) -> bool {
    let n = k.rows();
    let mut l = Mat::<f64>::zeros(n, n);
    for i in 0..n {
        for (j, &v) in k.row(i).iter().enumerate().take(i + 1) {
            l[(i, j)] = v;
        }
        l[(i, i)] += shift;
    }
    cholesky_in_place(l.as_mut(), par_for(n)).is_ok()
        && (0..n).all(|i| l[(i, i)].is_finite() && l[(i, i)] > 0.0)
}

/// Smallest and largest eigenvalue of a square, finite, non-empty `k` (memory checked).
fn extreme_eigenvalues_unchecked(k: MatrixRef<'_>, what: &str) -> Result<(f64, f64)> {
    let n = k.rows();
    // Row-major data viewed column-major is the transpose; view it row-major so that the
    // solver's "lower triangle" is the lower triangle of `k`.
    let a = MatRef::from_row_major_slice(k.data(), n, n);
    let par = par_for(n);
    let mut s = Diag::<f64>::zeros(n);
    let mut mem = MemBuffer::new(self_adjoint_evd_scratch::<f64>(
        n,
        ComputeEigenvectors::No,
        par,
        Default::default(),
    ));
    self_adjoint_evd(
        a,
        s.as_mut(),
        None,
        par,
        MemStack::new(&mut mem),
        Default::default(),
    )
    .map_err(|e| {
        Error::Numerical(format!(
            "the eigenvalues of {what} ({n} x {n}) did not converge ({e:?})"
        ))
    })?;
    let values = s.column_vector();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for i in 0..n {
        let v = values[i];
        if !v.is_finite() {
            return Err(Error::Numerical(format!(
                "the eigenvalues of {what} ({n} x {n}) are not finite (entries too large?)"
            )));
        }
        lo = lo.min(v);
        hi = hi.max(v);
    }
    Ok((lo, hi))
}

/// Four significant digits, without an exponent for ordinary magnitudes (`-1.000`,
/// `41.20`, `0.008300`, `-2.000e-9`).
fn sig(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e5).contains(&a) {
        return format!("{v:.3e}");
    }
    let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
    let text = format!("{v:.decimals$}");
    // Rounding may carry into the next decade (0.99999 -> 1.0000): one decimal fewer.
    match text.trim_start_matches('-').parse::<f64>() {
        Ok(r) if decimals > 0 && r >= 10f64.powi(a.log10().floor() as i32 + 1) => {
            format!("{v:.prec$}", prec = decimals - 1)
        }
        _ => text,
    }
}

#[cfg(test)]
mod tests;
