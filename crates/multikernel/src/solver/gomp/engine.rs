//! The MKL-GOMP engine on kernel matrices: the greedy loop of Sec. 3's algorithm box with
//! the improvement `I_j` evaluated by the fastest route a kernel allows (module docs of
//! [`super`]), and the path of refitted models it returns.

use super::params::{GompParams, Precompute};
use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::kernel::matrix::{center_factor, factor_t_times, KernelMatrix};
use crate::linalg::{cholesky, lower_solve_in_place, matmul};
use crate::run::{Control, Observer, RunInfo, RunRecorder, RunStatus, StepUnit};
use crate::solver::ridge::{center_targets, check_inputs, cross_times, Prepared};
use faer::{Mat, Par};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Why the greedy loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GompStop {
    /// The best improvement was `<= eps`.
    Eps,
    /// `max_kernels` kernels were chosen.
    MaxKernels,
    /// Every kernel of the dictionary was chosen.
    Exhausted,
    /// The observer stopped the run; the path holds the kernels chosen until then.
    Cancelled,
}

impl GompStop {
    /// The run status this reason gives: `Converged` (eps, every kernel chosen),
    /// `Completed` (`max_kernels` chosen) or `Cancelled`.
    pub(crate) fn status(self) -> RunStatus {
        match self {
            GompStop::Eps | GompStop::Exhausted => RunStatus::Converged,
            GompStop::MaxKernels => RunStatus::Completed,
            GompStop::Cancelled => RunStatus::Cancelled,
        }
    }
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
    pub(crate) fn selected(&self) -> Vec<usize> {
        self.steps.iter().map(|s| s.kernel).collect()
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
            return Err(Error::param(
                "s",
                s,
                format!(
                    "at most {}, the number of kernels on the path",
                    self.steps.len()
                ),
            ));
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
                return Err(Error::shape(
                    format!("rows of the test side of kernel {}", self.steps[t].kernel),
                    n_test,
                    c.rows,
                ));
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
        Error::shape(
            format!("kernels of the dictionary (the path uses kernel {j})"),
            j + 1,
            train.len(),
        )
    })
}

fn add_checked(out: &mut Matrix, c: &Matrix, j: usize) -> Result<()> {
    if c.rows != out.rows {
        return Err(Error::shape(
            format!("rows of the test side of kernel {j}"),
            out.rows,
            c.rows,
        ));
    }
    if c.cols != out.cols {
        return Err(Error::shape(
            format!("outputs of the test side of kernel {j}"),
            out.cols,
            c.cols,
        ));
    }
    for (o, v) in out.data.iter_mut().zip(&c.data) {
        *o += v;
    }
    Ok(())
}

/// The improvement formula for one kernel, by a fresh factorization:
/// `I = (1/l) sum_c r_c^T (I - lambda l (K + lambda l I)^-1) r_c` with `l = r.rows`.
/// The kernel is used as given (center it first for a model with bias).
#[cfg(test)]
pub(crate) fn improvement(kernel: &KernelMatrix, r: &Matrix, lambda: f64) -> Result<f64> {
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

/// What a run stopped before its first candidate evaluation returns: the path of no kernel
/// (its intercept the mean of each target with bias, zero without).
pub(super) fn not_started(y: &Matrix, params: &GompParams) -> (GompPath, RunInfo) {
    let (intercept, yc) = if params.bias {
        center_targets(y)
    } else {
        (vec![0.0; y.cols], y.clone())
    };
    let path = GompPath {
        steps: Vec::new(),
        stop: GompStop::Cancelled,
        lambda: params.lambda,
        intercept,
        initial_residual: yc.data.iter().map(|v| v * v).sum::<f64>() / y.rows.max(1) as f64,
    };
    let rec = RunRecorder::new(StepUnit::Kernel, Some(params.max_kernels as u64));
    (path, rec.finish(RunStatus::Cancelled))
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
///
/// A step is one kernel chosen; `observer` sees the training residual after each refit and
/// is polled between candidate evaluations (on rayon's worker threads too). The run's
/// status follows `GompStop::status`; a stopped run returns the path chosen so far.
pub fn gomp(
    kernels: &[KernelMatrix],
    y: &Matrix,
    params: &GompParams,
    observer: &dyn Observer,
) -> Result<(GompPath, RunInfo)> {
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
    if observer.should_stop() {
        return Ok(not_started(y, params));
    }

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

    let mut rec = RunRecorder::new(StepUnit::Kernel, Some(params.max_kernels as u64));
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
        if observer.should_stop() {
            stop = GompStop::Cancelled;
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
        // Fill missing cached factors of dense candidates, in parallel (a factor left out
        // when the observer stops the run is built the next time, if ever).
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
                        if observer.should_stop() {
                            return Ok(());
                        }
                        if let KernelMatrix::Dense(k) = &kernels[j] {
                            *s = Scorer::Dense(Some(PackedChol::new(k, c, params.bias, scratch)?));
                        }
                        Ok(())
                    },
                )?;
            if observer.should_stop() {
                stop = GompStop::Cancelled;
                break;
            }
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
        // Improvements of the candidates; `None` once the observer asked to stop.
        let scores: Vec<Result<Option<f64>>> = cand
            .par_iter()
            .map_init(
                || (Vec::new(), Mat::<f64>::zeros(0, 0)),
                |(work, scratch), &j| {
                    if observer.should_stop() {
                        return Ok(None);
                    }
                    match &scorers[j] {
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
                    }
                    .map(Some)
                },
            )
            .collect();
        let scores: Vec<Option<f64>> = scores.into_iter().collect::<Result<_>>()?;
        if scores.iter().any(Option::is_none) {
            stop = GompStop::Cancelled;
            break;
        }
        let mut best: Option<(usize, f64)> = None;
        for (&j, s) in cand.iter().zip(scores) {
            let s = s.unwrap_or(f64::NEG_INFINITY);
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
        steps.push(step);
        let done = steps.len() >= params.max_kernels || steps.len() == kernels.len();
        if rec.step(Some(residual), observer) == Control::Stop && !done {
            stop = GompStop::Cancelled;
            break;
        }
    }
    let path = GompPath {
        steps,
        stop,
        lambda: params.lambda,
        intercept: ymean,
        initial_residual,
    };
    Ok((path, rec.finish(stop.status())))
}
