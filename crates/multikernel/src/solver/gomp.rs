//! MKL-GOMP: greedy sparse kernel selection by group orthogonal matching pursuit in a
//! dictionary of RKHSs (Sindhwani & Lozano 2012, Sec. 3, the algorithm box and its
//! remarks), for regularized least squares.
//!
//! With `R(g; r) = (1/l) ||r - g||^2 + lambda ||g||_H^2` over the `l` training points,
//! `min_{g in H_j} R(g; r) = lambda r^T (K_j + lambda l I)^-1 r`, so the improvement of
//! kernel `j` on the residual `r` is (FORMULAS.md, "MKL-GOMP improvement")
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

use super::lp_mkl::{
    center_targets, check_inputs, cross_times, predict_rows_std, prepare_rows, Prepared,
};
use crate::data::standardize::Standardizer;
use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::kernel::matrix::{center_factor, factor_t_times, kernel_matrices, KernelMatrix};
use crate::kernel::{fit_all, FittedKernel, KernelSpec, MemoryLimit};
use crate::linalg::{cholesky, lower_solve_in_place, matmul};
use faer::{Mat, Par};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
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

/// Parameters of [`gomp`].
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
    pub fn validate(&self) -> Result<()> {
        if !(self.lambda > 0.0 && self.lambda.is_finite()) {
            return Err(Error::invalid(format!(
                "MKL-GOMP: lambda must be positive and finite (the kernel selection is \
                 ill-posed without it, Sec. 3), got {}",
                self.lambda
            )));
        }
        if self.max_kernels == 0 {
            return Err(Error::invalid("MKL-GOMP: max_kernels must be at least 1"));
        }
        if self.eps.is_nan() || self.eps < 0.0 {
            return Err(Error::invalid(format!(
                "MKL-GOMP: eps must be >= 0, got {}",
                self.eps
            )));
        }
        if self.subsample == Some(0) {
            return Err(Error::invalid("MKL-GOMP: subsample must be at least 1"));
        }
        Ok(())
    }
}

/// Why the greedy loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GompStop {
    /// The best improvement was `<= eps`.
    Eps,
    /// `max_kernels` kernels were chosen.
    MaxKernels,
    /// Every kernel of the dictionary was chosen.
    Exhausted,
}

/// One step of the path: the kernel added and the refitted model on the chosen set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GompStep {
    /// Index of the chosen kernel in the dictionary.
    pub kernel: usize,
    /// Its improvement `I_j` when chosen.
    pub improvement: f64,
    /// Dual coefficients `n x outputs` of the refit on the chosen kernels.
    pub alpha: Matrix,
    /// Bias per output.
    pub bias: Vec<f64>,
    /// Training residual `(1/l) ||r||^2` after the refit (summed over outputs).
    pub residual: f64,
}

/// The whole MKL-GOMP path: one model per number of chosen kernels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GompPath {
    pub steps: Vec<GompStep>,
    pub stop: GompStop,
    pub lambda: f64,
    /// The empty model's prediction (mean targets with bias, zeros without).
    pub intercept: Vec<f64>,
    /// `(1/l) ||r^(0)||^2`.
    pub initial_residual: f64,
}

impl GompPath {
    /// Chosen kernels in order.
    pub fn selected(&self) -> Vec<usize> {
        self.steps.iter().map(|s| s.kernel).collect()
    }

    /// Keeps the first `s` steps.
    pub fn truncate(&mut self, s: usize) {
        self.steps.truncate(s);
    }

    /// Decision values `n_test x outputs` of the model with `s` kernels (`s = 0`: the
    /// intercept). `test(j)` gives kernel `j`'s test side (cross Gram `n_test x n` or test
    /// factor), asked only for chosen kernels.
    pub fn decision(
        &self,
        s: usize,
        train: &[KernelMatrix],
        test: &(dyn Fn(usize) -> Result<KernelMatrix> + Sync),
        n_test: usize,
    ) -> Result<Matrix> {
        if s > self.steps.len() {
            return Err(Error::invalid(format!(
                "the path has {} kernels, asked for {s}",
                self.steps.len()
            )));
        }
        let k = self.intercept.len();
        let mut out = Matrix::zeros(n_test, k);
        let (alpha, bias) = match s {
            0 => {
                for i in 0..n_test {
                    out.row_mut(i).copy_from_slice(&self.intercept);
                }
                return Ok(out);
            }
            _ => (&self.steps[s - 1].alpha, &self.steps[s - 1].bias),
        };
        for i in 0..n_test {
            out.row_mut(i).copy_from_slice(bias);
        }
        for step in &self.steps[..s] {
            let j = step.kernel;
            let t = test(j)?;
            let c = cross_times(kernel_at(train, j)?, &t, alpha, j)?;
            add_checked(&mut out, &c, j)?;
        }
        Ok(out)
    }

    /// Decision values of every model on the path, `[0..=steps]` (index = number of
    /// kernels), computed together: each chosen kernel's test side is built once and
    /// multiplied by all later coefficient vectors in one product.
    pub fn decision_path(
        &self,
        train: &[KernelMatrix],
        test: &(dyn Fn(usize) -> Result<KernelMatrix> + Sync),
        n_test: usize,
    ) -> Result<Vec<Matrix>> {
        let k = self.intercept.len();
        let big_s = self.steps.len();
        let mut outs: Vec<Matrix> = Vec::with_capacity(big_s + 1);
        let mut first = Matrix::zeros(n_test, k);
        for i in 0..n_test {
            first.row_mut(i).copy_from_slice(&self.intercept);
        }
        outs.push(first);
        for st in &self.steps {
            let mut o = Matrix::zeros(n_test, k);
            for i in 0..n_test {
                o.row_mut(i).copy_from_slice(&st.bias);
            }
            outs.push(o);
        }
        // Contribution of the kernel chosen at step t to every model s >= t.
        let contribs: Vec<Result<(usize, Matrix)>> = (0..big_s)
            .into_par_iter()
            .map(|t| {
                let j = self.steps[t].kernel;
                let n = self.steps[t].alpha.rows;
                let width = k * (big_s - t);
                let mut a = Matrix::zeros(n, width);
                for (q, st) in self.steps[t..].iter().enumerate() {
                    for i in 0..n {
                        for c in 0..k {
                            a.set(i, q * k + c, st.alpha.get(i, c));
                        }
                    }
                }
                let tk = test(j)?;
                Ok((t, cross_times(kernel_at(train, j)?, &tk, &a, j)?))
            })
            .collect();
        for r in contribs {
            let (t, c) = r?;
            if c.rows != n_test {
                return Err(Error::invalid(format!(
                    "test side of kernel {} has {} rows, expected {n_test}",
                    self.steps[t].kernel, c.rows
                )));
            }
            for (q, out) in outs[t + 1..].iter_mut().enumerate() {
                for i in 0..n_test {
                    let row = c.row(i);
                    for (cc, o) in out.row_mut(i).iter_mut().enumerate() {
                        *o += row[q * k + cc];
                    }
                }
            }
        }
        Ok(outs)
    }
}

fn kernel_at(train: &[KernelMatrix], j: usize) -> Result<&KernelMatrix> {
    train.get(j).ok_or_else(|| {
        Error::invalid(format!(
            "kernel {j} of the path is not in the given dictionary of {}",
            train.len()
        ))
    })
}

fn add_checked(out: &mut Matrix, c: &Matrix, j: usize) -> Result<()> {
    if c.rows != out.rows || c.cols != out.cols {
        return Err(Error::invalid(format!(
            "test side of kernel {j} gives {}x{}, expected {}x{}",
            c.rows, c.cols, out.rows, out.cols
        )));
    }
    for (o, v) in out.data.iter_mut().zip(&c.data) {
        *o += v;
    }
    Ok(())
}

/// The improvement formula for one kernel, by a fresh factorization:
/// `I = (1/l) sum_c r_c^T (I - lambda l (K + lambda l I)^-1) r_c` with `l = r.rows`.
/// The kernel is used as given (center it first for a model with bias).
pub fn improvement(kernel: &KernelMatrix, r: &Matrix, lambda: f64) -> Result<f64> {
    check_inputs(std::slice::from_ref(kernel), r)?;
    let l = r.rows as f64;
    let c = lambda * l;
    match kernel {
        KernelMatrix::Dense(k) => {
            dense_improvement_fresh(k, r, c, false, &mut Mat::zeros(k.rows, k.rows))
        }
        KernelMatrix::Factor(z) => Ok(factor_improvement(z, &factor_gram_chol(z, c)?, r, l)),
    }
}

/// Cholesky factor of `Z^T Z + c I`.
fn factor_gram_chol(z: &Matrix, c: f64) -> Result<Mat<f64>> {
    let q = z.cols;
    let zt = z.transpose();
    let mut g = Mat::<f64>::zeros(q, q);
    for a in 0..q {
        for b in 0..=a {
            let v = crate::linalg::dot(zt.row(a), zt.row(b));
            g[(a, b)] = v;
            g[(b, a)] = v;
        }
        g[(a, a)] += c;
    }
    cholesky(g, Par::Seq)
}

/// `(1/l) ||L^-1 Z^T R||_F^2`.
fn factor_improvement(z: &Matrix, l_chol: &Mat<f64>, r: &Matrix, l: f64) -> f64 {
    let ztr = factor_t_times(z, r);
    let mut v = Mat::from_fn(ztr.rows, ztr.cols, |i, j| ztr.get(i, j));
    lower_solve_in_place(l_chol, &mut v, Par::Seq);
    sq_frob(&v) / l
}

/// The lower Cholesky factor of `K + c I` (K centered in feature space when `center`),
/// packed column by column (`n(n+1)/2` numbers: column `j` holds rows `j..n`), so the cache
/// of the remarks' precompute takes half the memory of full storage.
#[derive(Debug, Clone)]
struct PackedChol {
    n: usize,
    data: Vec<f64>,
}

impl PackedChol {
    /// Factors in the caller's scratch matrix (`n x n`, reused across kernels) and packs.
    fn new(k: &Matrix, c: f64, center: bool, scratch: &mut Mat<f64>) -> Result<PackedChol> {
        let n = k.rows;
        fill_shifted(k, c, center, scratch);
        crate::linalg::cholesky_in_place(scratch.as_mut(), Par::Seq).map_err(|index| {
            Error::Numerical(format!(
                "Cholesky factorization of a {n}x{n} kernel system failed (non-positive pivot \
                 {index}); is every kernel positive semidefinite?"
            ))
        })?;
        let mut data = Vec::with_capacity(n * (n + 1) / 2);
        for j in 0..n {
            match scratch.col(j).try_as_col_major() {
                Some(col) => data.extend_from_slice(&col.as_slice()[j..]),
                None => data.extend((j..n).map(|i| scratch[(i, j)])),
            }
        }
        Ok(PackedChol { n, data })
    }

    /// `||L^-1 R||_F^2` by forward substitution (column-oriented, one pass over the factor
    /// for all outputs). `r` is `n x k` row-major.
    fn inv_sq_norm(&self, r: &Matrix, work: &mut Vec<f64>) -> f64 {
        let n = self.n;
        let k = r.cols;
        work.clear();
        work.extend_from_slice(&r.data);
        let x = &mut work[..];
        let mut off = 0;
        let mut total = 0.0;
        for j in 0..n {
            let col = &self.data[off..off + (n - j)];
            off += n - j;
            let d = col[0];
            if k == 1 {
                let xj = x[j] / d;
                x[j] = xj;
                total += xj * xj;
                if xj != 0.0 {
                    for (xi, l) in x[j + 1..].iter_mut().zip(&col[1..]) {
                        *xi -= xj * l;
                    }
                }
            } else {
                let (head, tail) = x.split_at_mut((j + 1) * k);
                let xj = &mut head[j * k..];
                for v in xj.iter_mut() {
                    *v /= d;
                    total += *v * *v;
                }
                for (row, l) in tail.chunks_exact_mut(k).zip(&col[1..]) {
                    for (xi, v) in row.iter_mut().zip(xj.iter()) {
                        *xi -= v * l;
                    }
                }
            }
        }
        total
    }

    /// `(1/l)(||R||^2 - c ||L^-1 R||^2)`.
    fn improvement(&self, r: &Matrix, c: f64, work: &mut Vec<f64>) -> f64 {
        let l = r.rows as f64;
        let rr: f64 = r.data.iter().map(|x| x * x).sum();
        ((rr - c * self.inv_sq_norm(r, work)) / l).max(0.0)
    }
}

/// `scratch = K (+ centering) + c I` in one pass (K symmetric row-major; scratch
/// column-major).
fn fill_shifted(k: &Matrix, c: f64, center: bool, scratch: &mut Mat<f64>) {
    let n = k.rows;
    if scratch.nrows() != n || scratch.ncols() != n {
        *scratch = Mat::zeros(n, n);
    }
    let (means, grand) = if center {
        let nf = n.max(1) as f64;
        let m: Vec<f64> = (0..n).map(|i| k.row(i).iter().sum::<f64>() / nf).collect();
        let g = m.iter().sum::<f64>() / nf;
        (m, g)
    } else {
        (vec![0.0; n], 0.0)
    };
    for j in 0..n {
        // Column j of K is row j (symmetry).
        let kj = k.row(j);
        let shift = grand - means[j];
        match scratch.as_mut().col_mut(j).try_as_col_major_mut() {
            Some(col) => {
                for ((d, v), m) in col.as_slice_mut().iter_mut().zip(kj).zip(&means) {
                    *d = v + shift - m;
                }
            }
            None => {
                for i in 0..n {
                    scratch[(i, j)] = kj[i] + shift - means[i];
                }
            }
        }
        scratch[(j, j)] += c;
    }
}

/// Improvement of a dense kernel by a fresh factorization in `scratch`.
fn dense_improvement_fresh(
    k: &Matrix,
    r: &Matrix,
    c: f64,
    center: bool,
    scratch: &mut Mat<f64>,
) -> Result<f64> {
    let ch = PackedChol::new(k, c, center, scratch)?;
    let mut work = Vec::new();
    Ok(ch.improvement(r, c, &mut work))
}

fn sq_frob(v: &Mat<f64>) -> f64 {
    let mut s = 0.0;
    for j in 0..v.ncols() {
        for i in 0..v.nrows() {
            s += v[(i, j)] * v[(i, j)];
        }
    }
    s
}

/// How one dictionary entry is scored.
enum Scorer {
    /// Index into the packed rank-one matrix.
    RankOne(usize),
    /// Centered factor and the Cholesky factor of `Z^T Z + c I`.
    Factor(Matrix, Mat<f64>),
    /// Dense: cached Cholesky factor of the centered `K + c I` (filled lazily).
    Dense(Option<PackedChol>),
}

/// Runs MKL-GOMP (Sec. 3) on a dictionary of kernels over the `l = y.rows` training points.
/// `y` is `l x outputs`; several columns give the multivariate mode.
pub fn gomp(kernels: &[KernelMatrix], y: &Matrix, params: &GompParams) -> Result<GompPath> {
    gomp_with_progress(kernels, y, params, &mut |_| {})
}

/// [`gomp`] reporting each chosen step to `progress`.
pub fn gomp_with_progress(
    kernels: &[KernelMatrix],
    y: &Matrix,
    params: &GompParams,
    progress: &mut dyn FnMut(&GompStep),
) -> Result<GompPath> {
    params.validate()?;
    let n = check_inputs(kernels, y)?;
    let l = n as f64;
    let c = params.lambda * l;
    let k_out = y.cols;
    let (ymean, yc) = if params.bias {
        center_targets(y)
    } else {
        (vec![0.0; k_out], y.clone())
    };

    // Rank-one kernels packed in one matrix (centered), scored by one product.
    let mut rank_one_cols: Vec<usize> = Vec::new();
    let mut scorers: Vec<Scorer> = Vec::with_capacity(kernels.len());
    for (j, k) in kernels.iter().enumerate() {
        match k {
            KernelMatrix::Factor(z) if z.cols == 1 => {
                scorers.push(Scorer::RankOne(rank_one_cols.len()));
                rank_one_cols.push(j);
            }
            KernelMatrix::Factor(_) => scorers.push(Scorer::Dense(None)), // replaced below
            KernelMatrix::Dense(_) => scorers.push(Scorer::Dense(None)),
        }
    }
    let factor_scorers: Vec<(usize, Result<Scorer>)> = kernels
        .par_iter()
        .enumerate()
        .filter_map(|(j, k)| match k {
            KernelMatrix::Factor(z) if z.cols > 1 => {
                let zc = if params.bias {
                    center_factor(z)
                } else {
                    z.clone()
                };
                Some((j, factor_gram_chol(&zc, c).map(|ch| Scorer::Factor(zc, ch))))
            }
            _ => None,
        })
        .collect();
    for (j, s) in factor_scorers {
        scorers[j] = s?;
    }
    // Packed rank-one columns: zt is m1 x n (row q = centered z of kernel rank_one_cols[q]).
    let m1 = rank_one_cols.len();
    let mut zt = Matrix::zeros(m1, n);
    let mut denom = vec![0.0; m1];
    for (q, &j) in rank_one_cols.iter().enumerate() {
        if let KernelMatrix::Factor(z) = &kernels[j] {
            let mean = if params.bias {
                z.data.iter().sum::<f64>() / l
            } else {
                0.0
            };
            let row = zt.row_mut(q);
            for (i, v) in row.iter_mut().enumerate() {
                *v = z.get(i, 0) - mean;
            }
            denom[q] = row.iter().map(|v| v * v).sum::<f64>() + c;
        }
    }

    let n_dense = kernels
        .iter()
        .filter(|k| matches!(k, KernelMatrix::Dense(_)))
        .count();
    // Packed factors: n(n+1)/2 numbers per dense kernel (all of them in the worst case).
    let need = (n_dense as u128) * (n as u128) * (n as u128 + 1) / 2 * 8;
    let cache = match params.precompute {
        Precompute::Cholesky => true,
        Precompute::None => false,
        Precompute::Auto => need <= params.memory_bytes as u128,
    };
    if params.precompute == Precompute::Cholesky && need > params.memory_bytes as u128 {
        return Err(Error::Memory {
            what: format!(
                "MKL-GOMP: caching {n_dense} Cholesky factors of {n}x{n} (the no-precompute \
                 mode needs none)"
            ),
            needed: usize::try_from(need).unwrap_or(usize::MAX),
            limit: params.memory_bytes,
        });
    }

    let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
    let mut chosen = vec![false; kernels.len()];
    let mut chosen_list: Vec<usize> = Vec::new();
    let mut col_means: Vec<Vec<f64>> = Vec::new();
    let mut steps: Vec<GompStep> = Vec::new();
    let mut r = yc.clone();
    let initial_residual = r.data.iter().map(|v| v * v).sum::<f64>() / l;
    let stop;
    loop {
        if steps.len() >= params.max_kernels {
            stop = GompStop::MaxKernels;
            break;
        }
        let mut cand: Vec<usize> = (0..kernels.len()).filter(|&j| !chosen[j]).collect();
        if cand.is_empty() {
            stop = GompStop::Exhausted;
            break;
        }
        if let Some(q) = params.subsample {
            if q < cand.len() {
                let mut pick: Vec<usize> = rand::seq::index::sample(&mut rng, cand.len(), q)
                    .into_iter()
                    .map(|i| cand[i])
                    .collect();
                pick.sort_unstable();
                cand = pick;
            }
        }
        // Fill missing cached factors of dense candidates, in parallel.
        if cache {
            let mut is_cand = vec![false; kernels.len()];
            for &j in &cand {
                is_cand[j] = true;
            }
            scorers
                .par_iter_mut()
                .enumerate()
                .filter(|(j, s)| is_cand[*j] && matches!(s, Scorer::Dense(None)))
                .try_for_each_init(
                    || Mat::<f64>::zeros(n, n),
                    |scratch, (j, s)| -> Result<()> {
                        if let KernelMatrix::Dense(k) = &kernels[j] {
                            *s = Scorer::Dense(Some(PackedChol::new(k, c, params.bias, scratch)?));
                        }
                        Ok(())
                    },
                )?;
        }
        // Rank-one scores at once: Z^T R.
        let r1_scores: Vec<f64> = if m1 > 0 {
            let ztr = matmul(&zt, &r);
            (0..m1)
                .map(|q| ztr.row(q).iter().map(|v| v * v).sum::<f64>() / denom[q] / l)
                .collect()
        } else {
            Vec::new()
        };
        let scores: Vec<Result<f64>> = cand
            .par_iter()
            .map_init(
                || (Vec::new(), Mat::<f64>::zeros(0, 0)),
                |(work, scratch), &j| match &scorers[j] {
                    Scorer::RankOne(q) => Ok(r1_scores[*q]),
                    Scorer::Factor(zc, ch) => Ok(factor_improvement(zc, ch, &r, l)),
                    Scorer::Dense(Some(ch)) => Ok(ch.improvement(&r, c, work)),
                    Scorer::Dense(None) => match &kernels[j] {
                        KernelMatrix::Dense(k) => {
                            dense_improvement_fresh(k, &r, c, params.bias, scratch)
                        }
                        KernelMatrix::Factor(_) => Err(Error::Numerical(
                            "internal: factor kernel without a scorer".into(),
                        )),
                    },
                },
            )
            .collect();
        let mut best: Option<(usize, f64)> = None;
        for (&j, s) in cand.iter().zip(scores) {
            let s = s?;
            match best {
                Some((_, b)) if s <= b => {}
                _ => best = Some((j, s)),
            }
        }
        let (j, imp) = match best {
            Some(b) => b,
            None => {
                stop = GompStop::Exhausted;
                break;
            }
        };
        if imp <= params.eps {
            stop = GompStop::Eps;
            break;
        }
        chosen[j] = true;
        chosen_list.push(j);
        if params.bias {
            col_means.push(kernels[j].col_means());
        }
        // Refit on the chosen kernels: alpha = (sum K_G + lambda l I)^-1 y.
        let refs: Vec<&KernelMatrix> = chosen_list.iter().map(|&q| &kernels[q]).collect();
        let prepared = Prepared::from_refs(refs, params.bias);
        let ones = vec![1.0; chosen_list.len()];
        let alpha = prepared.solve(&ones, c, &yc)?;
        // Residual y - K_G alpha = lambda l alpha.
        r = alpha.clone();
        r.data.iter_mut().for_each(|v| *v *= c);
        let residual = r.data.iter().map(|v| v * v).sum::<f64>() / l;
        let bias = if params.bias {
            let mut b = ymean.clone();
            for cm in &col_means {
                for (o, bo) in b.iter_mut().enumerate() {
                    let s: f64 = (0..n).map(|i| cm[i] * alpha.get(i, o)).sum();
                    *bo -= s;
                }
            }
            b
        } else {
            vec![0.0; k_out]
        };
        let step = GompStep {
            kernel: j,
            improvement: imp,
            alpha,
            bias,
            residual,
        };
        progress(&step);
        steps.push(step);
    }
    Ok(GompPath {
        steps,
        stop,
        lambda: params.lambda,
        intercept: ymean,
        initial_residual,
    })
}

// ---------------------------------------------------------------------------------------
// The trained model on raw rows (CLI: `train --algo gomp`, `inspect`).

/// How a path length is scored on validation data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ValidationMetric {
    /// Mean squared error over rows and outputs.
    SquaredError,
    /// Fraction of wrong classes: sign for one output (targets +-1), largest output
    /// against the one-hot target for several.
    ClassificationError,
}

impl ValidationMetric {
    /// The loss of decision values `pred` against targets `truth` (both `n x outputs`).
    pub fn loss(&self, pred: &Matrix, truth: &Matrix) -> f64 {
        let n = pred.rows.min(truth.rows);
        if n == 0 {
            return 0.0;
        }
        match self {
            ValidationMetric::SquaredError => {
                let s: f64 = pred
                    .data
                    .iter()
                    .zip(&truth.data)
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum();
                s / pred.data.len().max(1) as f64
            }
            ValidationMetric::ClassificationError => {
                let wrong = (0..n)
                    .filter(|&i| {
                        if pred.cols == 1 {
                            (pred.get(i, 0) > 0.0) != (truth.get(i, 0) > 0.0)
                        } else {
                            crate::metrics::argmax(pred.row(i))
                                != crate::metrics::argmax(truth.row(i))
                        }
                    })
                    .count();
                wrong as f64 / n as f64
            }
        }
    }
}

/// Everything [`GompModel::fit`] needs besides the data.
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

/// One model of the path (after `k` kernels were chosen).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GompPathModel {
    /// `n_train x outputs`.
    pub alpha: Matrix,
    pub bias: Vec<f64>,
    /// Training residual `(1/l)||r||^2` after the refit.
    pub residual: f64,
}

/// A trained MKL-GOMP model on raw rows: the chosen kernels in order with the improvement
/// each brought, and one refitted model per number of kernels (the path), so the sparsity
/// level can be changed ([`GompModel::truncate`], [`GompModel::select_on_validation`])
/// without retraining.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GompModel {
    pub feature_names: Vec<String>,
    pub standardizer: Option<Standardizer>,
    /// Training rows as the kernels see them (standardized when `standardizer` is set).
    pub x_train: Matrix,
    /// Number of kernels in the dictionary searched.
    pub dictionary_size: usize,
    /// The chosen kernels, in the order they were chosen.
    pub kernels: Vec<FittedKernel>,
    /// Index of each chosen kernel in the (expanded) dictionary.
    pub dictionary_index: Vec<usize>,
    /// The improvement `I_j` each chosen kernel brought.
    pub improvements: Vec<f64>,
    /// `path[k-1]` uses the first `k` chosen kernels.
    pub path: Vec<GompPathModel>,
    /// The empty model (mean targets with bias).
    pub intercept: Vec<f64>,
    pub lambda: f64,
    pub eps: f64,
    pub stop: GompStop,
}

impl GompModel {
    /// Runs MKL-GOMP on raw rows `x` (`n x d`) with real targets `y` (`n x outputs`;
    /// one-hot columns for multiclass, the multivariate mode).
    pub fn fit(
        x: &Matrix,
        feature_names: &[String],
        y: &Matrix,
        kernels: &[KernelSpec],
        params: &GompModelParams,
    ) -> Result<GompModel> {
        params.gomp.validate()?;
        if kernels.is_empty() {
            return Err(Error::invalid("MKL-GOMP: no kernels given"));
        }
        let (standardizer, xs) = prepare_rows(x, feature_names, y, params.standardize)?;
        let fitted = fit_all(kernels, &xs, feature_names, params.seed)?;
        let mats = kernel_matrices(&fitted, &xs, &params.memory)?;
        let gp = GompParams {
            memory_bytes: params.memory.bytes,
            ..params.gomp.clone()
        };
        let path = gomp(&mats, y, &gp)?;
        Ok(GompModel::from_path(
            feature_names.to_vec(),
            standardizer,
            xs,
            &fitted,
            path,
            gp.eps,
        ))
    }

    /// Assembles a model from a path computed on `fitted` kernels over rows `x_train`.
    pub fn from_path(
        feature_names: Vec<String>,
        standardizer: Option<Standardizer>,
        x_train: Matrix,
        fitted: &[FittedKernel],
        path: GompPath,
        eps: f64,
    ) -> GompModel {
        GompModel {
            feature_names,
            standardizer,
            x_train,
            dictionary_size: fitted.len(),
            kernels: path
                .steps
                .iter()
                .map(|s| fitted[s.kernel].clone())
                .collect(),
            dictionary_index: path.selected(),
            improvements: path.steps.iter().map(|s| s.improvement).collect(),
            path: path
                .steps
                .into_iter()
                .map(|s| GompPathModel {
                    alpha: s.alpha,
                    bias: s.bias,
                    residual: s.residual,
                })
                .collect(),
            intercept: path.intercept,
            lambda: path.lambda,
            eps,
            stop: path.stop,
        }
    }

    /// Number of kernels the model uses (the path length).
    pub fn n_kernels(&self) -> usize {
        self.path.len()
    }

    pub fn n_outputs(&self) -> usize {
        self.intercept.len()
    }

    /// Decision values `n x outputs` of raw rows with all kernels of the (possibly
    /// truncated) path.
    pub fn predict(&self, x: &Matrix) -> Result<Matrix> {
        self.predict_with_limit(x, &MemoryLimit::default())
    }

    /// [`GompModel::predict`] with an explicit memory limit for the cross Gram matrices.
    pub fn predict_with_limit(&self, x: &Matrix, limit: &MemoryLimit) -> Result<Matrix> {
        let xs = self.standardize_rows(x)?;
        let s = self.path.len();
        if s == 0 {
            let mut out = Matrix::zeros(x.rows, self.n_outputs());
            for i in 0..x.rows {
                out.row_mut(i).copy_from_slice(&self.intercept);
            }
            return Ok(out);
        }
        let last = &self.path[s - 1];
        let coef: Vec<&Matrix> = vec![&last.alpha; s];
        predict_rows_std(&self.kernels, &coef, &last.bias, &self.x_train, &xs, limit)
    }

    /// Decision values of every model of the path on raw rows: index `k` uses the first
    /// `k` kernels (`0`: the intercept alone).
    pub fn predict_path(&self, x: &Matrix, limit: &MemoryLimit) -> Result<Vec<Matrix>> {
        let xs = self.standardize_rows(x)?;
        let k = self.n_outputs();
        let s_all = self.path.len();
        let mut outs = Vec::with_capacity(s_all + 1);
        let fill = |b: &[f64]| {
            let mut o = Matrix::zeros(x.rows, k);
            for i in 0..x.rows {
                o.row_mut(i).copy_from_slice(b);
            }
            o
        };
        outs.push(fill(&self.intercept));
        for p in &self.path {
            outs.push(fill(&p.bias));
        }
        let n = self.x_train.rows;
        for t in 0..s_all {
            // Kernel t contributes K_t(x, X) alpha_s to every model s >= t + 1.
            let width = k * (s_all - t);
            let mut a = Matrix::zeros(n, width);
            for (q, p) in self.path[t..].iter().enumerate() {
                for i in 0..n {
                    for c in 0..k {
                        a.set(i, q * k + c, p.alpha.get(i, c));
                    }
                }
            }
            let zero = vec![0.0; width];
            let c = predict_rows_std(
                std::slice::from_ref(&self.kernels[t]),
                &[&a],
                &zero,
                &self.x_train,
                &xs,
                limit,
            )?;
            for (q, out) in outs[t + 1..].iter_mut().enumerate() {
                for i in 0..x.rows {
                    let row = c.row(i);
                    for (cc, o) in out.row_mut(i).iter_mut().enumerate() {
                        *o += row[q * k + cc];
                    }
                }
            }
        }
        Ok(outs)
    }

    /// Keeps the first `s` kernels of the path (no retraining: their refit is stored).
    pub fn truncate(&mut self, s: usize) {
        let s = s.min(self.path.len());
        self.path.truncate(s);
        self.kernels.truncate(s);
        self.dictionary_index.truncate(s);
        self.improvements.truncate(s);
    }

    /// Chooses the path length with the smallest validation loss (the fewest kernels among
    /// ties), truncates the model to it and returns it with the loss of every length
    /// `0..=path.len()`.
    pub fn select_on_validation(
        &mut self,
        x_val: &Matrix,
        y_val: &Matrix,
        metric: ValidationMetric,
        limit: &MemoryLimit,
    ) -> Result<(usize, Vec<f64>)> {
        if y_val.rows != x_val.rows || y_val.cols != self.n_outputs() {
            return Err(Error::invalid(format!(
                "validation targets are {}x{}, expected {}x{}",
                y_val.rows,
                y_val.cols,
                x_val.rows,
                self.n_outputs()
            )));
        }
        let preds = self.predict_path(x_val, limit)?;
        let losses: Vec<f64> = preds.iter().map(|p| metric.loss(p, y_val)).collect();
        let best = best_index(&losses);
        self.truncate(best);
        Ok((best, losses))
    }

    /// The chosen kernels in order with the improvement each brought (for `inspect`).
    pub fn kernels(&self) -> Vec<(String, f64)> {
        self.kernels
            .iter()
            .zip(&self.improvements)
            .map(|(k, i)| (k.name.clone(), *i))
            .collect()
    }

    fn standardize_rows(&self, x: &Matrix) -> Result<Matrix> {
        if x.cols != self.x_train.cols {
            return Err(Error::invalid(format!(
                "the model was trained on {} features, the data has {}",
                self.x_train.cols, x.cols
            )));
        }
        Ok(match &self.standardizer {
            Some(s) => s.apply(x),
            None => x.clone(),
        })
    }
}

/// Index of the smallest value (the first among ties).
pub fn best_index(losses: &[f64]) -> usize {
    let mut best = 0;
    for (i, &l) in losses.iter().enumerate() {
        if l < losses[best] {
            best = i;
        }
    }
    best
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;
    use crate::kernel::test_kernel_matrix;
    use rand::Rng;

    fn random_matrix(rows: usize, cols: usize, rng: &mut ChaCha8Rng) -> Matrix {
        Matrix::from_vec(
            rows,
            cols,
            (0..rows * cols).map(|_| rng.gen_range(-1.0..1.0)).collect(),
        )
    }

    /// Slow twin of `min_g R(g; r)` for `K = Phi Phi^T`, in the primal: with
    /// `w = (Phi^T Phi + lambda l I)^-1 Phi^T r` (normal equations by Gauss-Jordan),
    /// `R = (1/l)||r - Phi w||^2 + lambda ||w||^2`; with `bias` a free unpenalized
    /// intercept is added as an extra column whose penalty is zero.
    fn rls_objective(phi: &Matrix, r: &[f64], lambda: f64, bias: bool) -> f64 {
        let l = r.len();
        let q = phi.cols + usize::from(bias);
        let feat = |i: usize, a: usize| if a < phi.cols { phi.get(i, a) } else { 1.0 };
        let mut a = vec![vec![0.0; q + 1]; q];
        for (ai, row) in a.iter_mut().enumerate() {
            for b in 0..q {
                row[b] = (0..l).map(|i| feat(i, ai) * feat(i, b)).sum::<f64>() / l as f64;
            }
            if ai < phi.cols {
                row[ai] += lambda;
            }
            row[q] = (0..l).map(|i| feat(i, ai) * r[i]).sum::<f64>() / l as f64;
        }
        // Gauss-Jordan with partial pivoting.
        for col in 0..q {
            let piv = (col..q)
                .max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
                .unwrap();
            a.swap(col, piv);
            for row in 0..q {
                if row != col {
                    let f = a[row][col] / a[col][col];
                    for k in col..=q {
                        let v = a[col][k];
                        a[row][k] -= f * v;
                    }
                }
            }
        }
        let w: Vec<f64> = (0..q).map(|i| a[i][q] / a[i][i]).collect();
        let mut loss = 0.0;
        for (i, ri) in r.iter().enumerate() {
            let f: f64 = (0..q).map(|b| feat(i, b) * w[b]).sum();
            loss += (ri - f) * (ri - f);
        }
        let pen: f64 = w[..phi.cols].iter().map(|v| v * v).sum();
        loss / l as f64 + lambda * pen
    }

    fn gram(phi: &Matrix) -> Matrix {
        KernelMatrix::Factor(phi.clone()).to_dense()
    }

    #[test]
    fn improvement_equals_difference_of_rls_objectives() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let l = 14;
        for q in [1usize, 3, 20] {
            let phi = random_matrix(l, q, &mut rng);
            let r = random_matrix(l, 1, &mut rng);
            for lambda in [1e-3, 0.1, 2.0] {
                let direct = r.data.iter().map(|v| v * v).sum::<f64>() / l as f64
                    - rls_objective(&phi, &r.data, lambda, false);
                let dense = improvement(&KernelMatrix::Dense(gram(&phi)), &r, lambda).unwrap();
                let fact = improvement(&KernelMatrix::Factor(phi.clone()), &r, lambda).unwrap();
                assert!((dense - direct).abs() < 1e-10, "{dense} vs {direct}");
                assert!((fact - direct).abs() < 1e-10, "{fact} vs {direct}");
                assert!(direct >= 0.0);
            }
        }
    }

    /// The first step's improvement (with bias: centered kernels and targets) equals the
    /// brute-force RLS difference with a free intercept, for each kind of kernel, and is
    /// the maximum over the dictionary; later steps likewise on the refit's residual.
    #[test]
    fn path_improvements_match_brute_force_with_bias() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        let l = 16;
        let phis: Vec<Matrix> = vec![
            random_matrix(l, 1, &mut rng),
            random_matrix(l, 3, &mut rng),
            random_matrix(l, 6, &mut rng),
            random_matrix(l, 1, &mut rng),
            random_matrix(l, 2, &mut rng),
        ];
        let dict: Vec<KernelMatrix> = phis
            .iter()
            .enumerate()
            .map(|(j, p)| {
                if j % 2 == 0 && p.cols > 1 {
                    KernelMatrix::Dense(gram(p))
                } else {
                    KernelMatrix::Factor(p.clone())
                }
            })
            .collect();
        let mut y = random_matrix(l, 1, &mut rng);
        y.data.iter_mut().for_each(|v| *v += 2.0);
        let lambda = 0.05;
        for precompute in [Precompute::Cholesky, Precompute::None] {
            let params = GompParams {
                lambda,
                max_kernels: 4,
                eps: 0.0,
                precompute,
                ..GompParams::default()
            };
            let path = gomp(&dict, &y, &params).unwrap();
            assert_eq!(path.steps.len(), 4);
            // Residual before each step, by the brute-force definition y - f.
            let mut resid: Vec<f64> = y.data.clone();
            for (t, step) in path.steps.iter().enumerate() {
                let rr = resid.iter().map(|v| v * v).sum::<f64>() / l as f64;
                let rmean = resid.iter().sum::<f64>() / l as f64;
                let r0 = rr - rmean * rmean; // R(constant; r), the free intercept alone
                let imps: Vec<f64> = (0..dict.len())
                    .map(|j| r0 - rls_objective(&phis[j], &resid, lambda, true))
                    .collect();
                let chosen_before: Vec<usize> = path.steps[..t].iter().map(|s| s.kernel).collect();
                let best = (0..dict.len())
                    .filter(|j| !chosen_before.contains(j))
                    .max_by(|&a, &b| imps[a].total_cmp(&imps[b]))
                    .unwrap();
                assert_eq!(step.kernel, best, "step {t}: {imps:?}");
                assert!(
                    (step.improvement - imps[best]).abs() < 1e-10,
                    "{} vs {}",
                    step.improvement,
                    imps[best]
                );
                // Refit by brute force on the stacked features of the chosen kernels.
                let sel: Vec<usize> = path.steps[..=t].iter().map(|s| s.kernel).collect();
                let cols: usize = sel.iter().map(|&j| phis[j].cols).sum();
                let mut stacked = Matrix::zeros(l, cols);
                let mut off = 0;
                for &j in &sel {
                    for i in 0..l {
                        for a in 0..phis[j].cols {
                            stacked.set(i, off + a, phis[j].get(i, a));
                        }
                    }
                    off += phis[j].cols;
                }
                let train = path
                    .decision(t + 1, &dict, &|j| Ok(dict[j].clone()), l)
                    .unwrap();
                let fitted_obj = {
                    let mut loss = 0.0;
                    for i in 0..l {
                        loss += (y.get(i, 0) - train.get(i, 0)).powi(2);
                    }
                    let a = &step.alpha;
                    let pen: f64 = sel.iter().map(|&j| dict[j].quad_form(a)).sum();
                    loss / l as f64 + lambda * pen
                };
                let brute = rls_objective(&stacked, &y.data, lambda, true);
                assert!(
                    (fitted_obj - brute).abs() < 1e-10,
                    "{fitted_obj} vs {brute}"
                );
                for i in 0..l {
                    resid[i] = y.get(i, 0) - train.get(i, 0);
                }
                let res_step: f64 = resid.iter().map(|v| v * v).sum::<f64>() / l as f64;
                assert!((res_step - step.residual).abs() < 1e-10);
            }
        }
    }

    /// Good and bad kernels on mutually orthogonal feature columns (coherence 0, so the
    /// recovery condition of Theorem 2 holds): the path picks exactly the good kernels and
    /// then stops on eps.
    #[test]
    fn exact_recovery_on_orthogonal_supports() {
        let l = 32;
        // Orthonormal columns orthogonal to the constant vector: Walsh-Hadamard rows.
        let walsh = |k: usize, i: usize| -> f64 {
            if (k & i).count_ones() & 1 == 0 {
                1.0
            } else {
                -1.0
            }
        };
        let col = |k: usize| -> Vec<f64> { (0..l).map(|i| walsh(k, i)).collect() };
        let mut rng = ChaCha8Rng::seed_from_u64(13);
        // Kernel supports: each kernel owns distinct Walsh functions 1..31.
        let supports: Vec<Vec<usize>> = vec![
            vec![1, 2],       // good, dense
            vec![3],          // bad, rank one
            vec![4, 5, 6],    // bad, dense
            vec![7],          // good, rank one
            vec![8, 9],       // bad, factor
            vec![10, 11, 12], // good, factor
            vec![13],         // bad, rank one
            vec![14, 15],     // bad, dense
        ];
        let good = [0usize, 3, 5];
        let phis: Vec<Matrix> = supports
            .iter()
            .map(|s| {
                let mut m = Matrix::zeros(l, s.len());
                for (a, &k) in s.iter().enumerate() {
                    let scale = rng.gen_range(0.5..2.0);
                    for (i, v) in col(k).into_iter().enumerate() {
                        m.set(i, a, scale * v);
                    }
                }
                m
            })
            .collect();
        let dict: Vec<KernelMatrix> = phis
            .iter()
            .enumerate()
            .map(|(j, p)| match j {
                0 | 2 | 7 => KernelMatrix::Dense(gram(p)),
                _ => KernelMatrix::Factor(p.clone()),
            })
            .collect();
        let mut y = vec![0.3; l];
        for (g, &j) in good.iter().enumerate() {
            for a in 0..phis[j].cols {
                let w = rng.gen_range(0.5..1.5) * (g + 1) as f64;
                for (i, yi) in y.iter_mut().enumerate() {
                    *yi += w * phis[j].get(i, a);
                }
            }
        }
        let y = Matrix::from_vec(l, 1, y);
        for precompute in [Precompute::Cholesky, Precompute::None] {
            let params = GompParams {
                lambda: 1e-3,
                max_kernels: 8,
                eps: 1e-12,
                precompute,
                ..GompParams::default()
            };
            let path = gomp(&dict, &y, &params).unwrap();
            let mut sel = path.selected();
            sel.sort_unstable();
            assert_eq!(sel, good.to_vec());
            assert_eq!(path.stop, GompStop::Eps);
        }
    }

    #[test]
    fn multivariate_with_one_output_equals_plain_and_sums_outputs() {
        let mut rng = ChaCha8Rng::seed_from_u64(14);
        let l = 20;
        let dict: Vec<KernelMatrix> = (0..6)
            .map(|j| {
                let p = random_matrix(l, 1 + j % 3, &mut rng);
                if j % 2 == 0 {
                    KernelMatrix::Dense(gram(&p))
                } else {
                    KernelMatrix::Factor(p)
                }
            })
            .collect();
        let y1 = random_matrix(l, 1, &mut rng);
        let params = GompParams {
            lambda: 0.02,
            max_kernels: 4,
            eps: 0.0,
            ..GompParams::default()
        };
        let plain = gomp(&dict, &y1, &params).unwrap();
        // The same column among zero columns: the zero outputs add nothing.
        let mut y3 = Matrix::zeros(l, 3);
        for i in 0..l {
            y3.set(i, 1, y1.get(i, 0));
        }
        let multi = gomp(&dict, &y3, &params).unwrap();
        assert_eq!(plain.selected(), multi.selected());
        for (a, b) in plain.steps.iter().zip(&multi.steps) {
            assert!((a.improvement - b.improvement).abs() < 1e-12);
            for i in 0..l {
                assert!((a.alpha.get(i, 0) - b.alpha.get(i, 1)).abs() < 1e-12);
                assert_eq!(b.alpha.get(i, 0), 0.0);
            }
            assert!((a.bias[0] - b.bias[1]).abs() < 1e-12);
        }
        // Two different outputs: the first step's improvement is the sum of the per-output
        // improvements (brute force per column), and the choice maximizes that sum.
        let y2 = random_matrix(l, 2, &mut rng);
        let two = gomp(&dict, &y2, &params).unwrap();
        let (_, yc) = center_targets(&y2);
        let sums: Vec<f64> = dict
            .iter()
            .map(|k| {
                let kc = k.centered();
                (0..2)
                    .map(|c| {
                        let col = Matrix::from_vec(l, 1, yc.col(c));
                        improvement(&kc, &col, 0.02).unwrap()
                    })
                    .sum()
            })
            .collect();
        let best = (0..dict.len())
            .max_by(|&a, &b| sums[a].total_cmp(&sums[b]))
            .unwrap();
        assert_eq!(two.steps[0].kernel, best);
        assert!((two.steps[0].improvement - sums[best]).abs() < 1e-10);
    }

    #[test]
    fn decision_path_matches_single_decisions_and_subsample_is_seeded() {
        let mut rng = ChaCha8Rng::seed_from_u64(15);
        let l = 18;
        let x = random_matrix(l + 7, 5, &mut rng);
        let train_x = Matrix::from_vec(l, 5, x.data[..l * 5].to_vec());
        let test_x = Matrix::from_vec(7, 5, x.data[l * 5..].to_vec());
        let dict: Vec<KernelMatrix> = (0..5)
            .map(|j| KernelMatrix::rank_one(train_x.col(j)))
            .collect();
        let test = |j: usize| Ok(KernelMatrix::rank_one(test_x.col(j)));
        let y = random_matrix(l, 2, &mut rng);
        let params = GompParams {
            lambda: 0.01,
            max_kernels: 5,
            eps: 0.0,
            ..GompParams::default()
        };
        let path = gomp(&dict, &y, &params).unwrap();
        assert_eq!(path.stop, GompStop::MaxKernels);
        let all = path.decision_path(&dict, &test, 7).unwrap();
        assert_eq!(all.len(), 6);
        for (s, m) in all.iter().enumerate() {
            let one = path.decision(s, &dict, &test, 7).unwrap();
            for (a, b) in one.data.iter().zip(&m.data) {
                assert!((a - b).abs() < 1e-12);
            }
        }
        let sub = GompParams {
            subsample: Some(2),
            seed: 9,
            ..params.clone()
        };
        let a = gomp(&dict, &y, &sub).unwrap();
        let b = gomp(&dict, &y, &sub).unwrap();
        assert_eq!(a.selected(), b.selected());
        assert_eq!(a.steps.len(), 5);
        let mut dedup = a.selected();
        dedup.sort_unstable();
        dedup.dedup();
        assert_eq!(dedup.len(), 5);
    }

    #[test]
    fn invalid_parameters_and_memory_limit_are_errors() {
        let mut rng = ChaCha8Rng::seed_from_u64(16);
        let l = 6;
        let dict = vec![KernelMatrix::Dense(gram(&random_matrix(l, 2, &mut rng)))];
        let y = random_matrix(l, 1, &mut rng);
        let bad = GompParams {
            lambda: 0.0,
            ..GompParams::default()
        };
        assert!(gomp(&dict, &y, &bad).is_err());
        let tight = GompParams {
            precompute: Precompute::Cholesky,
            memory_bytes: 10,
            ..GompParams::default()
        };
        assert!(matches!(gomp(&dict, &y, &tight), Err(Error::Memory { .. })));
        let auto = GompParams {
            precompute: Precompute::Auto,
            memory_bytes: 10,
            ..GompParams::default()
        };
        assert!(gomp(&dict, &y, &auto).is_ok());
    }

    fn names(d: usize) -> Vec<String> {
        (0..d).map(|j| format!("x{j}")).collect()
    }

    #[test]
    fn model_matches_solver_path_and_selects_on_validation() {
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        let (n, d) = (40, 6);
        let x = random_matrix(n + 30, d, &mut rng);
        let mut y = Matrix::zeros(n + 30, 1);
        for i in 0..n + 30 {
            let v = 2.0 * x.get(i, 1) - x.get(i, 4) + 0.1 * rng.gen_range(-1.0..1.0);
            y.set(i, 0, v);
        }
        let idx_tr: Vec<usize> = (0..n).collect();
        let idx_va: Vec<usize> = (n..n + 30).collect();
        let (xtr, ytr) = (x.select_rows(&idx_tr), y.select_rows(&idx_tr));
        let (xva, yva) = (x.select_rows(&idx_va), y.select_rows(&idx_va));
        let specs: Vec<KernelSpec> = ["perfeature:linear:norm=variance", "rbf:norm=variance"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let params = GompModelParams {
            gomp: GompParams {
                lambda: 1e-3,
                max_kernels: 5,
                eps: 0.0,
                ..GompParams::default()
            },
            ..GompModelParams::default()
        };
        let mut model = GompModel::fit(&xtr, &names(d), &ytr, &specs, &params).unwrap();
        assert_eq!(model.dictionary_size, d + 1);
        assert_eq!(model.n_kernels(), 5);
        // Solver-level path on the same kernel matrices gives the same decisions.
        let limit = MemoryLimit::default();
        let st = model.standardizer.clone().unwrap();
        let (xs, xvs) = (st.apply(&xtr), st.apply(&xva));
        let fitted = fit_all(&specs, &xs, &names(d), 0).unwrap();
        let mats = kernel_matrices(&fitted, &xs, &limit).unwrap();
        let path = gomp(&mats, &ytr, &params.gomp).unwrap();
        assert_eq!(path.selected(), model.dictionary_index);
        let test = |j: usize| test_kernel_matrix(&fitted[j], &xvs, &xs, &limit);
        let want = path.decision_path(&mats, &test, 30).unwrap();
        let got = model.predict_path(&xva, &limit).unwrap();
        assert_eq!(got.len(), 6);
        for (a, b) in got.iter().zip(&want) {
            for (u, v) in a.data.iter().zip(&b.data) {
                assert!((u - v).abs() < 1e-10);
            }
        }
        let full = model.predict(&xva).unwrap();
        for (u, v) in full.data.iter().zip(&got[5].data) {
            assert!((u - v).abs() < 1e-10);
        }
        // JSON round trip.
        let back: GompModel =
            serde_json::from_str(&serde_json::to_string(&model).unwrap()).unwrap();
        assert_eq!(back.predict(&xva).unwrap(), full);
        // Validation selection: the argmin of the per-length losses, then truncated.
        let (s, losses) = model
            .select_on_validation(&xva, &yva, ValidationMetric::SquaredError, &limit)
            .unwrap();
        assert_eq!(losses.len(), 6);
        assert_eq!(s, best_index(&losses));
        assert!(s >= 1 && losses[s] < 0.5 * losses[0], "{losses:?}");
        assert_eq!(model.n_kernels(), s);
        assert_eq!(model.kernels().len(), s);
        let again = model.predict(&xva).unwrap();
        let l = ValidationMetric::SquaredError.loss(&again, &yva);
        assert!((l - losses[s]).abs() < 1e-12);
    }

    #[test]
    fn classification_error_metric() {
        let pred = Matrix::from_rows(&[vec![0.3], vec![-0.2], vec![0.1]]);
        let truth = Matrix::from_rows(&[vec![1.0], vec![1.0], vec![-1.0]]);
        assert!(
            (ValidationMetric::ClassificationError.loss(&pred, &truth) - 2.0 / 3.0).abs() < 1e-15
        );
        let pred = Matrix::from_rows(&[vec![0.3, 0.5, 0.1], vec![0.9, 0.2, 0.0]]);
        let truth = Matrix::from_rows(&[vec![0.0, 1.0, 0.0], vec![0.0, 0.0, 1.0]]);
        assert!((ValidationMetric::ClassificationError.loss(&pred, &truth) - 0.5).abs() < 1e-15);
    }
}
