//! Kernel expansions and Gram matrices fast: [`expansion_scores`] (`sum_k K_k(x, support)
//! C_k` streamed by blocks of rows, with an explicit form for linear kernels) and, on 0/1
//! inputs such as OCR pixels, [`binary_grams`] (every kernel read from a table indexed by the
//! integer dot product, computed once per pair by popcount).

use crate::data::{Matrix, MatrixRef};
use crate::error::{Error, Result};
use crate::kernel::{FittedKernel, FittedKind, Gram, MemoryLimit, Normalization, SparseGram};
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;

/// Rows of test points per block of [`expansion_scores`].
const SCORE_BLOCK: usize = 256;

/// `S = sum_k K_k(x, support) C_k` (`x.rows x cols`) for per-kernel coefficient matrices
/// `C_k` (`n_support x cols`, `None` = kernel unused), streaming blocks of test rows so that
/// only one block's cross Gram per kernel is held at a time.
///
/// Fast paths, each checked against pairwise kernel sums in the tests:
/// - a linear kernel (all features) is applied in its explicit form,
///   `K C = diag(r) X (X_s^T diag(r_s) C)`, O(d) per test row instead of O(n_support);
/// - on 0/1 inputs (OCR pixels) every other kernel reads its value from a table indexed by
///   the integer dot product and squared distance, the dot product computed once per pair
///   for all kernels by popcount (`BitRows`).
///
/// `x` is read in place (a [`MatrixRef`], or a `&Matrix`): only blocks of its rows are ever
/// copied.
pub fn expansion_scores<'x>(
    kernels: &[FittedKernel],
    support: &Matrix,
    coefs: &[Option<Matrix>],
    cols: usize,
    x: impl Into<MatrixRef<'x>>,
    limit: &MemoryLimit,
) -> Result<Matrix> {
    scores_of_view(kernels, support, coefs, cols, x.into(), limit)
}

/// [`expansion_scores`] on a view.
fn scores_of_view(
    kernels: &[FittedKernel],
    support: &Matrix,
    coefs: &[Option<Matrix>],
    cols: usize,
    x: MatrixRef<'_>,
    limit: &MemoryLimit,
) -> Result<Matrix> {
    let mut out = Matrix::zeros(x.rows(), cols);
    if support.rows == 0 || x.rows() == 0 {
        return Ok(out);
    }
    if coefs.len() != kernels.len() {
        return Err(Error::shape(
            "coefficient blocks (one per kernel)",
            kernels.len(),
            coefs.len(),
        ));
    }
    for (k, c) in coefs.iter().enumerate() {
        if let Some(c) = c {
            if c.rows != support.rows {
                return Err(Error::shape(
                    format!("rows of the coefficients of kernel {k} (support points)"),
                    support.rows,
                    c.rows,
                ));
            }
            if c.cols != cols {
                return Err(Error::shape(
                    format!("columns of the coefficients of kernel {k} (outputs)"),
                    cols,
                    c.cols,
                ));
            }
        }
    }
    let used = coefs
        .iter()
        .zip(kernels)
        .filter_map(|(c, k)| c.as_ref().map(|_| k));
    check_features(used.clone(), x.cols())?;
    check_features(used, support.cols)?;
    let mut rest: Vec<(usize, &Matrix)> = Vec::new();
    for (k, c) in coefs.iter().enumerate() {
        let Some(c) = c else { continue };
        if is_plain_linear(&kernels[k]) {
            add_linear_scores(&kernels[k], support.view(), c, x, &mut out);
        } else {
            rest.push((k, c));
        }
    }
    if rest.is_empty() {
        return Ok(out);
    }
    let packed = match (BitRows::pack(x), BitRows::pack(support.view())) {
        (Some(a), Some(b)) => {
            let tables: Option<Vec<TableKernel>> = rest
                .iter()
                .map(|&(k, _)| TableKernel::new(&kernels[k], x.cols()))
                .collect();
            tables.map(|t| (a, b, t))
        }
        _ => None,
    };
    let block = SCORE_BLOCK.min(x.rows());
    let n = support.rows;
    let dense = rest
        .iter()
        .filter(|&&(k, _)| !kernels[k].is_sparse())
        .count();
    limit.check(
        rayon::current_num_threads()
            .max(1)
            .saturating_mul(block)
            .saturating_mul(n)
            .saturating_mul(8 * dense.max(1) + 4),
        "the cross Gram blocks of the test scores",
    )?;
    match packed {
        Some((a, b, tables)) => {
            let fa: Vec<Vec<f64>> = rest
                .iter()
                .zip(&tables)
                .map(|(&(k, _), t)| t.factors(&kernels[k], &a.norms))
                .collect();
            let fb: Vec<Vec<f64>> = rest
                .iter()
                .zip(&tables)
                .map(|(&(k, _), t)| t.factors(&kernels[k], &b.norms))
                .collect();
            out.data
                .par_chunks_mut(block * cols)
                .enumerate()
                .for_each(|(blk, chunk)| {
                    let r0 = blk * block;
                    let h = chunk.len() / cols;
                    let mut idx = vec![0u32; h * n];
                    for r in 0..h {
                        b.index_row(&a, r0 + r, tables[0].d1, &mut idx[r * n..(r + 1) * n]);
                    }
                    let mut buf = Vec::new();
                    for (t, (&(_, c), tk)) in rest.iter().zip(&tables).enumerate() {
                        if tk.sparse {
                            for r in 0..h {
                                let ri = fa[t][r0 + r] * tk.c;
                                let o = &mut chunk[r * cols..(r + 1) * cols];
                                for (j, &ix) in idx[r * n..(r + 1) * n].iter().enumerate() {
                                    let v = tk.table[ix as usize] * ri * fb[t][j];
                                    if v != 0.0 {
                                        for (o, &cv) in o.iter_mut().zip(c.row(j)) {
                                            *o += v * cv;
                                        }
                                    }
                                }
                            }
                        } else {
                            buf.resize(h * n, 0.0);
                            for r in 0..h {
                                tk.fill_row(
                                    &idx[r * n..(r + 1) * n],
                                    fa[t][r0 + r],
                                    &fb[t],
                                    &mut buf[r * n..(r + 1) * n],
                                );
                            }
                            add_dense_times(&buf, h, n, c, chunk);
                        }
                    }
                });
        }
        None => {
            out.data
                .par_chunks_mut(block * cols)
                .enumerate()
                .try_for_each(|(blk, chunk)| -> Result<()> {
                    let r0 = blk * block;
                    let h = chunk.len() / cols;
                    let ids: Vec<usize> = (r0..r0 + h).collect();
                    let xb = x.select_rows(&ids);
                    for &(k, c) in &rest {
                        let g = kernels[k].gram(&xb, support, limit)?;
                        add_gram_times(&g, c, chunk);
                    }
                    Ok(())
                })?;
        }
    }
    Ok(out)
}

/// Every kernel must have been fitted on rows with `cols` columns.
fn check_features<'a>(
    mut kernels: impl Iterator<Item = &'a FittedKernel>,
    cols: usize,
) -> Result<()> {
    match kernels.find(|k| k.n_features() != cols) {
        Some(k) => Err(Error::shape(
            format!("features of the data for kernel {}", k.name),
            k.n_features(),
            cols,
        )),
        None => Ok(()),
    }
}

/// A linear kernel over all features (any normalization): applied in explicit form.
fn is_plain_linear(k: &FittedKernel) -> bool {
    matches!(k.kind(), FittedKind::Linear) && k.features().is_none()
}

/// Per-row factors of a linear kernel: `1/||x||` for unit diagonal, else the trace /
/// variance scale (applied on one side only).
fn linear_factors(k: &FittedKernel, x: MatrixRef<'_>, row_side: bool) -> Vec<f64> {
    (0..x.rows())
        .map(|i| {
            if k.norm() == Normalization::Diag {
                let r = x.row(i);
                let n2 = crate::linalg::sq_norm(r);
                if n2 > 0.0 {
                    1.0 / n2.sqrt()
                } else {
                    0.0
                }
            } else if row_side {
                k.scale()
            } else {
                1.0
            }
        })
        .collect()
}

/// `out += K C` for a linear kernel in explicit form: `W = X_s^T diag(f_s) C`, then
/// `out_i += f_i x_i^T W`.
fn add_linear_scores(
    k: &FittedKernel,
    support: MatrixRef<'_>,
    c: &Matrix,
    x: MatrixRef<'_>,
    out: &mut Matrix,
) {
    let d = support.cols();
    let cols = c.cols;
    let fs = linear_factors(k, support, false);
    let fx = linear_factors(k, x, true);
    let mut w = Matrix::zeros(d, cols);
    for (j, &f) in fs.iter().enumerate() {
        let cj = c.row(j);
        if f == 0.0 {
            continue;
        }
        for (p, &xv) in support.row(j).iter().enumerate() {
            if xv != 0.0 {
                let wr = w.row_mut(p);
                for (o, &cv) in wr.iter_mut().zip(cj) {
                    *o += f * xv * cv;
                }
            }
        }
    }
    out.data
        .par_chunks_mut(cols)
        .enumerate()
        .for_each(|(i, o)| {
            let f = fx[i];
            if f == 0.0 {
                return;
            }
            for (p, &xv) in x.row(i).iter().enumerate() {
                if xv != 0.0 {
                    for (o, &wv) in o.iter_mut().zip(w.row(p)) {
                        *o += f * xv * wv;
                    }
                }
            }
        });
}

/// `out += G C` for a dense row-major block `G` (`h x n`) and `C` (`n x cols`).
fn add_dense_times(g: &[f64], h: usize, n: usize, c: &Matrix, out: &mut [f64]) {
    let lhs = MatRef::from_row_major_slice(g, h, n);
    let rhs = MatRef::from_row_major_slice(&c.data, c.rows, c.cols);
    let dst = MatMut::from_row_major_slice_mut(out, h, c.cols);
    faer::linalg::matmul::matmul(dst, Accum::Add, lhs, rhs, 1.0, Par::Seq);
}

/// `out += G C` for a Gram block `G` (`h x n`) and coefficients `C` (`n x cols`).
pub(crate) fn add_gram_times(g: &Gram, c: &Matrix, out: &mut [f64]) {
    let cols = c.cols;
    match g {
        Gram::Dense(m) => add_dense_times(&m.data, m.rows, m.cols, c, out),
        Gram::Sparse(s) => {
            for i in 0..s.rows {
                let (idx, val) = s.row(i);
                let o = &mut out[i * cols..(i + 1) * cols];
                for (&j, &v) in idx.iter().zip(val) {
                    let r = c.row(j as usize);
                    for (o, &cv) in o.iter_mut().zip(r) {
                        *o += v * cv;
                    }
                }
            }
        }
    }
}

/// Largest input dimension for which kernels of 0/1 inputs are tabulated.
const MAX_TABLE_DIM: usize = 1024;

/// Rows of 0/1 values packed into bits, with their numbers of ones (squared norms).
#[derive(Debug, Clone)]
pub(crate) struct BitRows {
    pub rows: usize,
    words: usize,
    bits: Vec<u64>,
    pub norms: Vec<u32>,
}

impl BitRows {
    /// Packs the rows of `x`; `None` when some value is neither 0 nor 1 or the rows are too
    /// wide for the kernel tables.
    pub(crate) fn pack(x: MatrixRef<'_>) -> Option<BitRows> {
        if x.cols() > MAX_TABLE_DIM {
            return None;
        }
        let words = x.cols().div_ceil(64).max(1);
        let mut bits = vec![0u64; x.rows() * words];
        let mut norms = vec![0u32; x.rows()];
        for i in 0..x.rows() {
            for (j, &v) in x.row(i).iter().enumerate() {
                if v == 1.0 {
                    bits[i * words + j / 64] |= 1u64 << (j % 64);
                    norms[i] += 1;
                } else if v != 0.0 {
                    return None;
                }
            }
        }
        Some(BitRows {
            rows: x.rows(),
            words,
            bits,
            norms,
        })
    }

    /// Table indices `dot * d1 + sqdist` of row `i` of `a` against every row of `self`.
    fn index_row(&self, a: &BitRows, i: usize, d1: usize, out: &mut [u32]) {
        let w = self.words;
        let ra = &a.bits[i * w..(i + 1) * w];
        let na = a.norms[i];
        let d1 = d1 as u32;
        if w == 2 {
            let (a0, a1) = (ra[0], ra[1]);
            for ((o, rb), &nb) in out
                .iter_mut()
                .zip(self.bits.chunks_exact(2))
                .zip(&self.norms)
            {
                let d = (a0 & rb[0]).count_ones() + (a1 & rb[1]).count_ones();
                *o = d * d1 + na + nb - 2 * d;
            }
        } else {
            for ((o, rb), &nb) in out
                .iter_mut()
                .zip(self.bits.chunks_exact(w))
                .zip(&self.norms)
            {
                let d: u32 = ra.iter().zip(rb).map(|(x, y)| (x & y).count_ones()).sum();
                *o = d * d1 + na + nb - 2 * d;
            }
        }
    }
}

/// A kernel of 0/1 inputs as a table of its raw values over (dot product, squared distance),
/// both integers in `0..=d`, with its normalization.
struct TableKernel {
    table: Vec<f64>,
    d1: usize,
    diag: bool,
    /// Constant factor (trace / variance scale; 1 for unit diagonal).
    c: f64,
    sparse: bool,
}

impl TableKernel {
    /// `None` for a kernel restricted to some features or approximated by a feature map.
    fn new(k: &FittedKernel, d: usize) -> Option<TableKernel> {
        if k.features().is_some() || k.approx().is_some() || d > MAX_TABLE_DIM {
            return None;
        }
        let d1 = d + 1;
        let mut table = vec![0.0; d1 * d1];
        for dot in 0..d1 {
            for s in 0..d1 {
                table[dot * d1 + s] = k.kind().value(dot as f64, s as f64);
            }
        }
        let diag = k.norm() == Normalization::Diag;
        Some(TableKernel {
            table,
            d1,
            diag,
            c: if diag { 1.0 } else { k.scale() },
            sparse: k.is_sparse(),
        })
    }

    /// Per-row normalization factors: `1 / sqrt(k_raw(x, x))` for unit diagonal, else 1.
    fn factors(&self, k: &FittedKernel, norms: &[u32]) -> Vec<f64> {
        norms
            .iter()
            .map(|&n| {
                if self.diag {
                    let r = k.kind().value(f64::from(n), 0.0);
                    if r > 0.0 {
                        1.0 / r.sqrt()
                    } else {
                        0.0
                    }
                } else {
                    1.0
                }
            })
            .collect()
    }

    #[inline]
    fn fill_row(&self, idx: &[u32], fa: f64, fb: &[f64], out: &mut [f64]) {
        let ri = fa * self.c;
        for ((o, &ix), &cf) in out.iter_mut().zip(idx).zip(fb) {
            *o = self.table[ix as usize] * ri * cf;
        }
    }
}

/// Gram matrices of several kernels on 0/1 inputs at once (`b = None`: the symmetric Gram of
/// `a`, diagonal set to the exact self-evaluations): the dot product of each pair computed
/// once by popcount, each kernel's value read from its table. Dense kernels give dense
/// matrices, B1-splines CSR. `Ok(None)` when the inputs are not 0/1 or a kernel is restricted
/// to some features (use [`FittedKernel::gram`] then).
pub fn binary_grams(
    kernels: &[FittedKernel],
    a: &Matrix,
    b: Option<&Matrix>,
    limit: &MemoryLimit,
) -> Result<Option<Vec<Gram>>> {
    if let Some(b) = b.filter(|b| b.cols != a.cols) {
        return Err(Error::shape(
            "columns of the second rows of a Gram matrix",
            a.cols,
            b.cols,
        ));
    }
    check_features(kernels.iter(), a.cols)?;
    if kernels.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let Some(pa) = BitRows::pack(a.view()) else {
        return Ok(None);
    };
    let pb = match b {
        Some(b) => match BitRows::pack(b.view()) {
            Some(p) => p,
            None => return Ok(None),
        },
        None => pa.clone(),
    };
    let Some(tables) = kernels
        .iter()
        .map(|k| TableKernel::new(k, a.cols))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    let (n, m) = (pa.rows, pb.rows);
    let dense_count = tables.iter().filter(|t| !t.sparse).count();
    limit.check(
        dense_count
            .saturating_mul(n)
            .saturating_mul(m)
            .saturating_mul(8),
        &format!("{dense_count} dense Gram matrices of {n} x {m}"),
    )?;
    let fa: Vec<Vec<f64>> = tables
        .iter()
        .zip(kernels)
        .map(|(t, k)| t.factors(k, &pa.norms))
        .collect();
    let fb: Vec<Vec<f64>> = tables
        .iter()
        .zip(kernels)
        .map(|(t, k)| t.factors(k, &pb.norms))
        .collect();
    let diags: Option<Vec<Vec<f64>>> = b
        .is_none()
        .then(|| kernels.iter().map(|k| k.diag(a)).collect());
    let mut dense: Vec<Matrix> = tables
        .iter()
        .map(|t| {
            if t.sparse {
                Matrix::zeros(0, 0)
            } else {
                Matrix::zeros(n, m)
            }
        })
        .collect();
    let br = (n.div_ceil(8 * rayon::current_num_threads().max(1))).clamp(1, 64);
    let n_blocks = n.div_ceil(br);
    // Block-major mutable views of the dense outputs.
    let mut views: Vec<Vec<&mut [f64]>> = (0..n_blocks).map(|_| Vec::new()).collect();
    for d in dense.iter_mut() {
        if d.rows == 0 {
            continue;
        }
        for (blk, chunk) in d.data.chunks_mut(br * m).enumerate() {
            views[blk].push(chunk);
        }
    }
    type Csr = (Vec<usize>, Vec<u32>, Vec<f64>);
    let sparse_parts: Vec<Vec<Csr>> = views
        .into_par_iter()
        .enumerate()
        .map(|(blk, mut chunks)| {
            let r0 = blk * br;
            let h = br.min(n - r0);
            let mut idx = vec![0u32; m];
            let mut parts: Vec<Csr> = Vec::new();
            for r in 0..h {
                let i = r0 + r;
                pb.index_row(&pa, i, tables[0].d1, &mut idx);
                let mut di = 0;
                let mut si = 0;
                for (t, tk) in tables.iter().enumerate() {
                    if tk.sparse {
                        if parts.len() <= si {
                            parts.push((Vec::with_capacity(h), Vec::new(), Vec::new()));
                        }
                        let (lens, cols, vals) = &mut parts[si];
                        let before = cols.len();
                        let ri = fa[t][i] * tk.c;
                        for (j, &ix) in idx.iter().enumerate() {
                            let v = if diags.is_some() && j == i {
                                diags.as_ref().map_or(0.0, |d| d[t][i])
                            } else {
                                tk.table[ix as usize] * ri * fb[t][j]
                            };
                            if v != 0.0 {
                                cols.push(j as u32);
                                vals.push(v);
                            }
                        }
                        lens.push(cols.len() - before);
                        si += 1;
                    } else {
                        let row = &mut chunks[di][r * m..(r + 1) * m];
                        tk.fill_row(&idx, fa[t][i], &fb[t], row);
                        if let Some(d) = &diags {
                            row[i] = d[t][i];
                        }
                        di += 1;
                    }
                }
            }
            parts
        })
        .collect();
    let mut out = Vec::with_capacity(kernels.len());
    let mut si = 0;
    for (tk, d) in tables.iter().zip(dense) {
        if !tk.sparse {
            out.push(Gram::Dense(d));
            continue;
        }
        let nnz: usize = sparse_parts.iter().map(|p| p[si].1.len()).sum();
        limit.check(
            nnz.saturating_mul(12),
            &format!("a sparse Gram matrix of {n} x {m}"),
        )?;
        let mut indptr = Vec::with_capacity(n + 1);
        let mut indices = Vec::with_capacity(nnz);
        let mut values = Vec::with_capacity(nnz);
        indptr.push(0);
        for p in &sparse_parts {
            let (lens, c, v) = &p[si];
            for &l in lens {
                let last = indptr.last().copied().unwrap_or(0);
                indptr.push(last + l);
            }
            indices.extend_from_slice(c);
            values.extend_from_slice(v);
        }
        out.push(Gram::Sparse(SparseGram {
            rows: n,
            cols: m,
            indptr,
            indices,
            values,
        }));
        si += 1;
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::KernelSpec;
    use rand::{Rng, SeedableRng};

    fn random_binary(n: usize, d: usize, seed: u64) -> Matrix {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        Matrix::from_vec(
            n,
            d,
            (0..n * d).map(|_| f64::from(rng.gen_bool(0.3))).collect(),
        )
    }

    /// Scores from the blocked expansion equal the kernel sums written out pair by pair.
    #[test]
    fn expansion_scores_match_pairwise_sums() {
        let sup = random_binary(40, 12, 1);
        let x = random_binary(1500, 12, 2);
        let specs = ["linear:norm=diag", "rbf:sigma2=5", "bspline"];
        let kernels: Vec<FittedKernel> = specs
            .iter()
            .map(|s| FittedKernel::fit(&s.parse::<KernelSpec>().unwrap(), &sup, &[], 0).unwrap())
            .collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let coefs: Vec<Option<Matrix>> = vec![
            Some(Matrix::from_vec(
                40,
                3,
                (0..120).map(|_| rng.gen_range(-1.0..1.0)).collect(),
            )),
            None,
            Some(Matrix::from_vec(
                40,
                3,
                (0..120).map(|_| rng.gen_range(-1.0..1.0)).collect(),
            )),
        ];
        let s = expansion_scores(&kernels, &sup, &coefs, 3, &x, &MemoryLimit::default()).unwrap();
        for i in (0..x.rows).step_by(37) {
            for y in 0..3 {
                let mut want = 0.0;
                for (k, c) in coefs.iter().enumerate() {
                    if let Some(c) = c {
                        for j in 0..sup.rows {
                            want += kernels[k].eval(x.row(i), sup.row(j)) * c.get(j, y);
                        }
                    }
                }
                assert!(
                    (s.get(i, y) - want).abs() < 1e-9,
                    "{} vs {want}",
                    s.get(i, y)
                );
            }
        }
    }

    /// The popcount / table Grams equal the kernels evaluated pair by pair, dense and sparse,
    /// symmetric and cross, for every normalization.
    #[test]
    fn binary_grams_match_kernel_eval() {
        let a = random_binary(70, 130, 4);
        let b = random_binary(33, 130, 5);
        let specs = [
            "linear:norm=diag",
            "poly:degree=2,offset=1,norm=diag",
            "rbf:sigma2=5",
            "bspline",
            "poly:degree=3,offset=0.5,norm=trace",
            "rbf:norm=variance",
        ];
        let kernels: Vec<FittedKernel> = specs
            .iter()
            .map(|s| FittedKernel::fit(&s.parse::<KernelSpec>().unwrap(), &a, &[], 0).unwrap())
            .collect();
        let lim = MemoryLimit::default();
        let sym = binary_grams(&kernels, &a, None, &lim).unwrap().unwrap();
        let cross = binary_grams(&kernels, &b, Some(&a), &lim).unwrap().unwrap();
        for (k, kern) in kernels.iter().enumerate() {
            assert_eq!(sym[k].is_sparse(), kern.is_sparse());
            for i in 0..a.rows {
                for j in 0..a.rows {
                    let want = kern.eval(a.row(i), a.row(j));
                    let got = sym[k].get(i, j);
                    assert!(
                        (got - want).abs() < 1e-12 * (1.0 + want.abs()),
                        "{} sym",
                        kern.name
                    );
                }
                assert_eq!(sym[k].get(i, i), kern.self_eval(a.row(i)));
            }
            for i in 0..b.rows {
                for j in 0..a.rows {
                    let want = kern.eval(b.row(i), a.row(j));
                    let got = cross[k].get(i, j);
                    assert!(
                        (got - want).abs() < 1e-12 * (1.0 + want.abs()),
                        "{} cross",
                        kern.name
                    );
                }
            }
        }
        // Not 0/1: no fast path.
        let mut c = a.clone();
        c.data[3] = 0.5;
        assert!(binary_grams(&kernels, &c, None, &lim).unwrap().is_none());
    }

    /// The fast score paths (explicit linear, tables) agree with the generic per-kernel Gram
    /// path on the same data made non-binary by a factor that the unit-diagonal kernels
    /// ignore.
    #[test]
    fn fast_and_generic_score_paths_agree() {
        let sup = random_binary(50, 20, 6);
        let x = random_binary(300, 20, 7);
        let kernels: Vec<FittedKernel> = ["linear:norm=diag", "poly:degree=2,offset=0,norm=diag"]
            .iter()
            .map(|s| FittedKernel::fit(&s.parse::<KernelSpec>().unwrap(), &sup, &[], 0).unwrap())
            .collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
        let coefs: Vec<Option<Matrix>> = (0..2)
            .map(|_| {
                Some(Matrix::from_vec(
                    50,
                    4,
                    (0..200).map(|_| rng.gen_range(-1.0..1.0)).collect(),
                ))
            })
            .collect();
        let lim = MemoryLimit::default();
        let fast = expansion_scores(&kernels, &sup, &coefs, 4, &x, &lim).unwrap();
        // Scaling x by 2 leaves both unit-diagonal kernels unchanged but disables the tables.
        let mut x2 = x.clone();
        x2.data.iter_mut().for_each(|v| *v *= 2.0);
        let slow = expansion_scores(&kernels, &sup, &coefs, 4, &x2, &lim).unwrap();
        for (a, b) in fast.data.iter().zip(&slow.data) {
            assert!((a - b).abs() < 1e-10, "{a} vs {b}");
        }
    }

    /// A view of some rows of a larger buffer scores exactly as an owned copy of those rows,
    /// on every path (explicit linear, tables, generic Gram blocks).
    #[test]
    fn views_score_like_owned_rows() {
        let sup = random_binary(30, 16, 9);
        let big = random_binary(700, 16, 10);
        let kernels: Vec<FittedKernel> = ["linear:norm=diag", "rbf:sigma2=3", "bspline"]
            .iter()
            .map(|s| FittedKernel::fit(&s.parse::<KernelSpec>().unwrap(), &sup, &[], 0).unwrap())
            .collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let coefs: Vec<Option<Matrix>> = (0..3)
            .map(|_| {
                Some(Matrix::from_vec(
                    30,
                    2,
                    (0..60).map(|_| rng.gen_range(-1.0..1.0)).collect(),
                ))
            })
            .collect();
        let lim = MemoryLimit::default();
        for scale in [1.0, 3.0] {
            let mut big = big.clone();
            big.data.iter_mut().for_each(|v| *v *= scale);
            let (r0, r1) = (100, 650);
            let view = MatrixRef::new(r1 - r0, 16, &big.data[r0 * 16..r1 * 16]).unwrap();
            let owned = big.select_rows(&(r0..r1).collect::<Vec<_>>());
            let a = expansion_scores(&kernels, &sup, &coefs, 2, view, &lim).unwrap();
            let b = expansion_scores(&kernels, &sup, &coefs, 2, &owned, &lim).unwrap();
            assert_eq!(a, b, "scale {scale}");
            assert_eq!(a.rows, r1 - r0);
            assert!(a.data.iter().any(|v| *v != 0.0));
        }
    }
}
