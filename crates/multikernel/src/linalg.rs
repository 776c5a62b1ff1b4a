//! Shared dense numerics: the one dot product and axpy, the one Cholesky wrapper
//! ([`cholesky_in_place`] over faer's, used by [`SpdFactor`] and the crate's kernel-system
//! solves), plain products and the conversions between the row-major [`Matrix`] and faer's
//! matrices.
//!
//! faer runs sequentially ([`Par::Seq`]) unless the crate's `par_for` says a single
//! factorization is large enough: on a two-core machine one factorization gains nothing from
//! threads, and callers parallelize over independent problems (kernels, folds, examples)
//! instead.

use crate::data::Matrix;
use crate::error::{Error, Result};
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::llt;
use faer::{Accum, Mat, MatMut, MatRef, Par};

/// Squared Euclidean distance of two equal-length slices.
#[inline]
pub(crate) fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let d = x - y;
            d * d
        })
        .sum()
}

/// Squared Euclidean norm, summed in order (the rows' norms that kernels and their Gram
/// matrices are built from).
#[inline]
pub(crate) fn sq_norm(a: &[f64]) -> f64 {
    a.iter().map(|x| x * x).sum()
}

/// Dot product with eight independent accumulators, so that it vectorizes (the plain
/// iterator sum is a serial chain of additions); AVX2 when the CPU has it.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        if a.len() >= 64 && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { dot_avx2(a, b) };
        }
    }
    dot_body(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_avx2(a: &[f64], b: &[f64]) -> f64 {
    dot_body(a, b)
}

/// `y += a * x`, vectorized (AVX2 when the CPU has it).
#[inline]
pub(crate) fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if y.len() >= 64 && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { axpy_avx2(a, x, y) };
        }
    }
    axpy_body(a, x, y)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn axpy_avx2(a: f64, x: &[f64], y: &mut [f64]) {
    axpy_body(a, x, y)
}

#[inline(always)]
fn axpy_body(a: f64, x: &[f64], y: &mut [f64]) {
    for (v, w) in y.iter_mut().zip(x) {
        *v += a * w;
    }
}

#[inline(always)]
pub(crate) fn dot_body(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 8];
    let ca = a.chunks_exact(8);
    let cb = b.chunks_exact(8);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    let mut s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// A Cholesky factor `L` of a symmetric positive definite `A + shift I`.
#[derive(Debug, Clone)]
pub struct SpdFactor {
    /// Lower triangle holds `L`; the strict upper triangle is scratch.
    l: Mat<f64>,
}

impl SpdFactor {
    /// Factors `a + shift I`; only the lower triangle of `a` is read.
    ///
    /// Fails with [`Error::Numerical`] when the matrix is not (numerically) positive
    /// definite.
    pub fn new(a: MatRef<'_, f64>, shift: f64) -> Result<SpdFactor> {
        let n = a.nrows();
        if a.ncols() != n {
            return Err(Error::shape(
                "columns of a matrix to factor (it must be square)",
                n,
                a.ncols(),
            ));
        }
        let mut l = Mat::<f64>::zeros(n, n);
        for j in 0..n {
            for i in j..n {
                l[(i, j)] = a[(i, j)];
            }
            l[(j, j)] += shift;
        }
        Self::factor_in_place(l)
    }

    /// Factors `a + shift I` for a row-major [`Matrix`] (lower triangle read).
    pub(crate) fn from_matrix(a: &Matrix, shift: f64) -> Result<SpdFactor> {
        if a.rows != a.cols {
            return Err(Error::shape(
                "columns of a matrix to factor (it must be square)",
                a.rows,
                a.cols,
            ));
        }
        // Row-major data read as column-major is the transpose: its lower triangle is the
        // upper triangle of `a`, equal to the lower one for a symmetric matrix. Read the
        // lower triangle explicitly instead to honour the contract above.
        let n = a.rows;
        let mut l = Mat::<f64>::zeros(n, n);
        for i in 0..n {
            let row = a.row(i);
            for (j, &v) in row.iter().enumerate().take(i + 1) {
                l[(i, j)] = v;
            }
            l[(i, i)] += shift;
        }
        Self::factor_in_place(l)
    }

    fn factor_in_place(mut l: Mat<f64>) -> Result<SpdFactor> {
        let n = l.nrows();
        cholesky_in_place(l.as_mut(), Par::Seq).map_err(|index| {
            Error::Numerical(format!(
                "Cholesky factorization: matrix of order {n} is not positive definite \
                 (pivot {index}); increase lambda"
            ))
        })?;
        if (0..n).any(|i| !l[(i, i)].is_finite()) {
            return Err(Error::Numerical(
                "Cholesky factorization produced non-finite values (non-finite kernel values?)"
                    .into(),
            ));
        }
        Ok(SpdFactor { l })
    }

    /// Order of the matrix.
    pub(crate) fn dim(&self) -> usize {
        self.l.nrows()
    }

    /// Overwrites `b` with `(L L^T)^-1 b`.
    pub(crate) fn solve_in_place(&self, b: &mut [f64]) {
        let n = self.dim();
        assert_eq!(b.len(), n, "SpdFactor::solve_in_place: length mismatch");
        let mut rhs = MatMut::from_column_major_slice_mut(b, n, 1);
        let l = self.l.as_ref();
        faer::linalg::triangular_solve::solve_lower_triangular_in_place(l, rhs.as_mut(), Par::Seq);
        faer::linalg::triangular_solve::solve_upper_triangular_in_place(
            l.transpose(),
            rhs.as_mut(),
            Par::Seq,
        );
    }

    /// `(L L^T)^-1 b` as a new vector.
    pub fn solve(&self, b: &[f64]) -> Vec<f64> {
        let mut x = b.to_vec();
        self.solve_in_place(&mut x);
        x
    }

    /// Turns the factor of `A` into the factor of `A + F diag(w) F^T` in `O(n^2 k)`, with
    /// `F` given column-major (`n x k`, `f.len() = n k`) and all `w > 0`.
    pub fn rank_update(&mut self, f: &[f64], w: &[f64]) -> Result<()> {
        let n = self.dim();
        let k = w.len();
        assert_eq!(f.len(), n * k, "SpdFactor::rank_update: shape mismatch");
        if k == 0 {
            return Ok(());
        }
        let mut ff = Mat::<f64>::from_fn(n, k, |i, j| f[j * n + i]);
        let mut a = faer::Col::<f64>::from_fn(k, |j| w[j]);
        llt::update::rank_r_update_clobber(self.l.as_mut(), ff.as_mut(), a.as_diagonal_mut())
            .map_err(|_| Error::Numerical("rank update lost positive definiteness".into()))
    }

    /// Turns the factor of `A` into the factor of `A + w z z^T` in `O(n^2)` (`w > 0`).
    #[cfg(test)]
    pub(crate) fn rank_one_update(&mut self, z: &[f64], w: f64) -> Result<()> {
        let n = self.dim();
        assert_eq!(z.len(), n, "SpdFactor::rank_one_update: length mismatch");
        if w == 0.0 {
            return Ok(());
        }
        let mut zz = Mat::<f64>::from_fn(n, 1, |i, _| z[i]);
        let mut a = faer::Col::<f64>::from_fn(1, |_| w);
        llt::update::rank_r_update_clobber(self.l.as_mut(), zz.as_mut(), a.as_diagonal_mut())
            .map_err(|_| {
                Error::Numerical("rank-one Cholesky update lost positive definiteness".into())
            })
    }
}

/// Plain row-major product through faer.
pub(crate) fn matmul(a: &Matrix, b: &Matrix) -> Matrix {
    debug_assert_eq!(a.cols, b.rows);
    let mut out = Mat::<f64>::zeros(a.rows, b.cols);
    faer::linalg::matmul::matmul(
        out.as_mut(),
        Accum::Replace,
        as_faer(a),
        as_faer(b),
        1.0,
        par_for(a.rows.max(b.cols)),
    );
    from_faer(out.as_ref())
}

/// A view of a row-major matrix.
pub(crate) fn as_faer(a: &Matrix) -> MatRef<'_, f64> {
    MatRef::from_row_major_slice(&a.data, a.rows, a.cols)
}

pub(crate) fn to_faer(a: &Matrix) -> Mat<f64> {
    Mat::from_fn(a.rows, a.cols, |i, j| a.get(i, j))
}

pub(crate) fn from_faer(a: MatRef<'_, f64>) -> Matrix {
    let mut out = Matrix::zeros(a.nrows(), a.ncols());
    for i in 0..a.nrows() {
        for j in 0..a.ncols() {
            out.set(i, j, a[(i, j)]);
        }
    }
    out
}

/// Parts of a parallel faer routine: a fixed number, not the pool's thread count. faer cuts a
/// product or a triangular solve into as many parts as it is told threads, and the parts'
/// partial sums, hence the last bits of the result, depend on that number; a fixed number
/// keeps results bit-identical whatever `RAYON_NUM_THREADS` says (the parts run on however
/// many threads the pool has). 2 is this project's reference machine's core count, so the
/// recorded `reproduce` numbers stay the same.
pub(crate) const PAR_PARTS: usize = 2;

/// Parallel faer only for large single factorizations (on 2 cores the outer loops over
/// kernels are parallelized instead), cut into [`PAR_PARTS`] parts.
pub(crate) fn par_for(n: usize) -> Par {
    if n >= 1500 && rayon::current_thread_index().is_none() {
        Par::rayon(PAR_PARTS)
    } else {
        Par::Seq
    }
}

/// The one Cholesky factorization of the library: overwrites the lower triangle of the
/// symmetric positive definite `a` with `L` (`a = L L^T`; the strict upper triangle holds
/// leftovers and must be ignored). Fails with the index of the first non-positive pivot.
pub(crate) fn cholesky_in_place(a: MatMut<'_, f64>, par: Par) -> std::result::Result<(), usize> {
    let n = a.nrows();
    let mut mem = MemBuffer::new(llt::factor::cholesky_in_place_scratch::<f64>(
        n,
        par,
        Default::default(),
    ));
    let stack = MemStack::new(&mut mem);
    match llt::factor::cholesky_in_place(a, Default::default(), par, stack, Default::default()) {
        Ok(_) => Ok(()),
        Err(llt::factor::LltError::NonPositivePivot { index }) => Err(index),
    }
}

/// The Cholesky factor of a kernel system `a` (see [`cholesky_in_place`]), with an error that
/// says what to check.
pub(crate) fn cholesky(mut a: Mat<f64>, par: Par) -> Result<Mat<f64>> {
    let n = a.nrows();
    cholesky_in_place(a.as_mut(), par).map_err(|index| {
        Error::Numerical(format!(
            "Cholesky factorization of a {n}x{n} kernel system failed (non-positive pivot \
             {index}); is every kernel positive semidefinite and lambda > 0?"
        ))
    })?;
    Ok(a)
}

/// Solves `L L^T x = b` in place.
pub(crate) fn chol_solve_in_place(l: &Mat<f64>, b: &mut Mat<f64>, par: Par) {
    let mut mem = MemBuffer::new(StackReq::EMPTY);
    let stack = MemStack::new(&mut mem);
    faer::linalg::cholesky::llt::solve::solve_in_place(l.as_ref(), b.as_mut(), par, stack);
}

/// Solves `L x = b` in place (forward substitution with the lower factor).
pub(crate) fn lower_solve_in_place(l: &Mat<f64>, b: &mut Mat<f64>, par: Par) {
    faer::linalg::triangular_solve::solve_lower_triangular_in_place(l.as_ref(), b.as_mut(), par);
}
