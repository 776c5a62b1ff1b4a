//! The Gram engine. Every kernel here is a function of `(x . x', ||x||^2, ||x'||^2)`, so a block
//! of Gram rows is one matrix product (faer's matmul, sequential inside a block) followed by an
//! elementwise map; row blocks run in parallel with rayon. Sparse (B1-spline) Grams keep only
//! the non-zeros of each row block and are concatenated into CSR.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};

use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::gram::SparseGram;
use super::memory::{bytes_of, MemoryLimit};
use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::linalg::sq_norm;

/// Largest scratch buffer (in `f64` entries) of one row block (sparse Grams, sums).
const SCRATCH_ELEMS: usize = 1 << 20;
/// Largest output of one row block of a dense Gram (written in place, no scratch).
const DENSE_BLOCK_ELEMS: usize = 1 << 22;
/// At most this many rows per block.
const MAX_BLOCK_ROWS: usize = 256;

/// A kernel kind with all parameters resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FittedKind {
    Linear,
    Poly { degree: u32, offset: f64 },
    Rbf { sigma2: f64 },
    BSpline { h: f64 },
    Const,
    Product(Vec<FittedKind>),
}

impl FittedKind {
    /// The raw kernel value from the dot product `x . x'` and the squared distance
    /// `||x - x'||^2` of the two (feature-restricted) inputs.
    #[inline]
    pub(crate) fn value(&self, dot: f64, sqd: f64) -> f64 {
        match self {
            FittedKind::Linear => dot,
            FittedKind::Poly { degree, offset } => (dot + offset).powi(*degree as i32),
            FittedKind::Rbf { sigma2 } => (-sqd / (2.0 * sigma2)).exp(),
            FittedKind::BSpline { h } => (1.0 - sqd.sqrt() / h).max(0.0),
            FittedKind::Const => 1.0,
            FittedKind::Product(fs) => fs.iter().map(|f| f.value(dot, sqd)).product(),
        }
    }

    /// Whether the value depends on the inputs (everything but a constant).
    pub(crate) fn needs_dot(&self) -> bool {
        match self {
            FittedKind::Const => false,
            FittedKind::Product(fs) => fs.iter().any(FittedKind::needs_dot),
            _ => true,
        }
    }

    /// Checks resolved parameters read from a model file: the ranges
    /// [`KernelSpec`](super::KernelSpec) accepts, with every data-dependent value resolved
    /// (finite, positive widths).
    pub(crate) fn validate(&self) -> Result<()> {
        let bad = |msg: String| Err(Error::model("kernel", msg));
        match self {
            FittedKind::Linear | FittedKind::Const => Ok(()),
            FittedKind::Poly { degree, offset } => {
                if !((1..=1000).contains(degree) && offset.is_finite() && *offset >= 0.0) {
                    return bad(format!(
                        "degree {degree} and offset {offset}: 1..=1000 and a finite number >= 0 \
                         expected"
                    ));
                }
                Ok(())
            }
            FittedKind::Rbf { sigma2 } if !(sigma2.is_finite() && *sigma2 > 0.0) => {
                bad(format!("sigma2 {sigma2}: a finite number > 0 expected"))
            }
            FittedKind::BSpline { h } if !(h.is_finite() && *h > 0.0) => {
                bad(format!("h {h}: a finite number > 0 expected"))
            }
            FittedKind::Rbf { .. } | FittedKind::BSpline { .. } => Ok(()),
            FittedKind::Product(fs) => {
                if fs.is_empty() {
                    return bad("a product of no factor".into());
                }
                fs.iter().try_for_each(FittedKind::validate)
            }
        }
    }

    /// Whether Gram matrices are mostly zeros (a B1-spline anywhere in a product).
    pub(crate) fn is_sparse(&self) -> bool {
        match self {
            FittedKind::BSpline { .. } => true,
            FittedKind::Product(fs) => fs.iter().any(FittedKind::is_sparse),
            _ => false,
        }
    }

    /// The squared support radius: values vanish for `||x - x'||^2 >= support_sq()` (the
    /// smallest `h^2` of the B1-spline factors; infinite without one).
    pub(crate) fn support_sq(&self) -> f64 {
        match self {
            FittedKind::BSpline { h } => h * h,
            FittedKind::Product(fs) => fs
                .iter()
                .map(FittedKind::support_sq)
                .fold(f64::INFINITY, f64::min),
            _ => f64::INFINITY,
        }
    }

    pub(super) fn describe(&self) -> String {
        match self {
            FittedKind::Linear => "linear".into(),
            FittedKind::Const => "const".into(),
            FittedKind::Poly { degree, offset } => {
                format!("poly(degree={degree},offset={})", sig(*offset))
            }
            FittedKind::Rbf { sigma2 } => format!("rbf(sigma2={})", sig(*sigma2)),
            FittedKind::BSpline { h } => format!("bspline(h={})", sig(*h)),
            FittedKind::Product(fs) => {
                let parts: Vec<String> = fs.iter().map(FittedKind::describe).collect();
                format!("product({})", parts.join("*"))
            }
        }
    }
}

/// `v` with 4 significant digits, trailing zeros removed.
fn sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let e = v.abs().log10().floor() as i32;
    if !(-3..=5).contains(&e) {
        return format!("{v:.3e}");
    }
    let decimals = (3 - e).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// One side of a Gram product: the feature-restricted rows and their squared norms.
pub(crate) struct Side<'a> {
    pub x: Cow<'a, Matrix>,
    pub norms: Vec<f64>,
}

impl<'a> Side<'a> {
    pub(crate) fn new(x: &'a Matrix, features: Option<&[usize]>) -> Self {
        let x = match features {
            Some(f) => Cow::Owned(x.select_cols(f)),
            None => Cow::Borrowed(x),
        };
        let norms = (0..x.rows)
            .into_par_iter()
            .with_min_len(1024)
            .map(|i| {
                let r = x.row(i);
                sq_norm(r)
            })
            .collect();
        Side { x, norms }
    }

    pub(crate) fn rows(&self) -> usize {
        self.x.rows
    }
}

/// Post-scaling of raw kernel values: `G[i, j] = raw * c * row[i] * col[j]` (the vectors are
/// present only for unit-diagonal normalization).
pub(crate) struct Post {
    pub c: f64,
    pub row: Option<Vec<f64>>,
    pub col: Option<Vec<f64>>,
}

impl Post {
    #[inline]
    fn row_factor(&self, i: usize) -> f64 {
        match &self.row {
            Some(r) => self.c * r[i],
            None => self.c,
        }
    }
}

/// Rows per block for `rows x cols` outputs: at most `max_elems` entries per block, several
/// blocks per thread (load balance), at most [`MAX_BLOCK_ROWS`] rows.
fn block_rows(rows: usize, cols: usize, per_thread: usize, max_elems: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    let by_mem = max_elems / cols.max(1);
    let by_balance = rows.div_ceil(per_thread * threads);
    by_mem.min(by_balance).clamp(1, MAX_BLOCK_ROWS)
}

/// `out[r, c - c0] = a_r . b_c` for the `h` rows of `a_rows` (row-major, `d` columns) and
/// columns `c0..b.rows` of `b`; `out` rows are `stride` apart.
fn dots_into(
    a_rows: &[f64],
    h: usize,
    d: usize,
    b: &Matrix,
    c0: usize,
    out: &mut [f64],
    stride: usize,
) {
    let w = b.rows - c0;
    if h == 0 || w == 0 {
        return;
    }
    if d == 0 {
        for r in 0..h {
            out[r * stride..r * stride + w].fill(0.0);
        }
        return;
    }
    let lhs = MatRef::from_row_major_slice(a_rows, h, d);
    let rhs = MatRef::from_row_major_slice(&b.data[c0 * d..], w, d).transpose();
    // Row-major h x w with row stride `stride` = the transpose of a column-major w x h view.
    // (Not `MatMut::from_row_major_slice_with_stride_mut`: in faer 0.24.4 it builds a
    // column-major view with column stride `stride` after checking row-major bounds, and
    // writes out of bounds.)
    let dst = MatMut::from_column_major_slice_with_stride_mut(out, w, h, stride).transpose_mut();
    faer::linalg::matmul::matmul(dst, Accum::Replace, lhs, rhs, 1.0, Par::Seq);
    clear_upper_simd_state();
}

/// Zeroes the upper halves of the AVX registers (`vzeroupper`) on x86-64 CPUs with AVX.
///
/// faer 0.24's x86 matmul micro-kernels (hand-written assembly) return with those halves
/// dirty; every later SSE instruction on the thread (all scalar `f64` code, libm's `exp`)
/// then pays a state-transition penalty, which dominated the cost of RBF Gram matrices
/// (BENCHMARKS.md, "Measurements moved from module documentation"). Call this after faer
/// routines on a thread that goes on to do scalar floating-point work.
#[inline]
pub fn clear_upper_simd_state() {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx") {
            // SAFETY: the CPU supports AVX (checked just above). `vzeroupper` only clears the
            // upper 128 bits of the YMM registers; code compiled without AVX (this crate)
            // keeps no values there.
            unsafe { std::arch::x86_64::_mm256_zeroupper() }
        }
    }
}

/// Applies `f(dot, na, nb_j)` and the post-scaling to a row of dot products.
#[inline(always)]
fn apply<F: Fn(f64, f64, f64) -> f64>(
    row: &mut [f64],
    na: f64,
    nb: &[f64],
    ci: f64,
    colf: Option<&[f64]>,
    f: F,
) {
    match colf {
        None => {
            for (g, &nbj) in row.iter_mut().zip(nb) {
                *g = f(*g, na, nbj) * ci;
            }
        }
        Some(cf) => {
            for ((g, &nbj), &c) in row.iter_mut().zip(nb).zip(cf) {
                *g = f(*g, na, nbj) * (ci * c);
            }
        }
    }
}

#[inline(always)]
fn sqd(d: f64, na: f64, nb: f64) -> f64 {
    (na + nb - 2.0 * d).max(0.0)
}

/// Turns a row of dot products into kernel values in place (one tight loop per kernel kind).
pub(crate) fn map_row(
    kind: &FittedKind,
    row: &mut [f64],
    na: f64,
    nb: &[f64],
    ci: f64,
    colf: Option<&[f64]>,
) {
    match kind {
        FittedKind::Linear => apply(row, na, nb, ci, colf, |d, _, _| d),
        FittedKind::Poly { degree, offset } => {
            let (p, o) = (*degree as i32, *offset);
            apply(row, na, nb, ci, colf, move |d, _, _| (d + o).powi(p))
        }
        FittedKind::Rbf { sigma2 } => {
            let g = -0.5 / sigma2;
            apply(row, na, nb, ci, colf, move |d, a, b| {
                (sqd(d, a, b) * g).exp()
            })
        }
        FittedKind::BSpline { h } => {
            let ih = 1.0 / h;
            apply(row, na, nb, ci, colf, move |d, a, b| {
                (1.0 - sqd(d, a, b).sqrt() * ih).max(0.0)
            })
        }
        other => apply(row, na, nb, ci, colf, |d, a, b| {
            other.value(d, sqd(d, a, b))
        }),
    }
}

/// `(x . x', ||x - x'||^2)` computed directly (symmetric in its arguments, bit for bit).
#[inline]
fn pair_exact(a: &[f64], b: &[f64]) -> (f64, f64) {
    let (mut d, mut s) = (0.0, 0.0);
    for (&x, &y) in a.iter().zip(b) {
        d += x * y;
        s += (x - y) * (x - y);
    }
    (d, s)
}

/// Appends the non-zero kernel values of row `xa` against the rows of `b` to `idx` / `val`.
/// The dot products from the matrix product (`dots`) only screen the candidates (squared
/// distance below the support `supp`, with slack for rounding); their values are recomputed
/// from the rows, because `||x||^2 + ||x'||^2 - 2 x.x'` loses its accuracy for close points
/// and the B1-spline takes its square root.
#[allow(clippy::too_many_arguments)]
fn sparse_row(
    kind: &FittedKind,
    supp: f64,
    xa: &[f64],
    na: f64,
    b: &Side,
    dots: Option<&[f64]>,
    ci: f64,
    colf: Option<&[f64]>,
    idx: &mut Vec<u32>,
    val: &mut Vec<f64>,
) {
    for j in 0..b.rows() {
        if let Some(dots) = dots {
            let nbj = b.norms[j];
            if sqd(dots[j], na, nbj) >= supp + 1e-9 * (na + nbj) {
                continue;
            }
        }
        let (d, s) = pair_exact(xa, b.x.row(j));
        let v = kind.value(d, s) * (ci * colf.map_or(1.0, |c| c[j]));
        if v != 0.0 {
            idx.push(j as u32);
            val.push(v);
        }
    }
}

/// Dense `G[i, j] = k(a_i, b_j)` for all pairs.
pub(crate) fn dense(
    kind: &FittedKind,
    a: &Side,
    b: &Side,
    post: &Post,
    limit: &MemoryLimit,
    what: &str,
) -> Result<Matrix> {
    let (n, m, d) = (a.rows(), b.rows(), a.x.cols);
    limit.check(bytes_of(n, m, 8), what)?;
    let mut out = Matrix::zeros(n, m);
    if n == 0 || m == 0 {
        return Ok(out);
    }
    let br = block_rows(n, m, 4, DENSE_BLOCK_ELEMS);
    let needs_dot = kind.needs_dot();
    let colf = post.col.as_deref();
    out.data
        .par_chunks_mut(br * m)
        .enumerate()
        .for_each(|(blk, chunk)| {
            let r0 = blk * br;
            let h = chunk.len() / m;
            if needs_dot {
                dots_into(&a.x.data[r0 * d..(r0 + h) * d], h, d, &b.x, 0, chunk, m);
            }
            for (r, row) in chunk.chunks_mut(m).enumerate() {
                let i = r0 + r;
                map_row(kind, row, a.norms[i], &b.norms, post.row_factor(i), colf);
            }
        });
    Ok(out)
}

/// Dense symmetric `G[i, j] = k(a_i, a_j)`: the upper triangle by blocks, then mirrored; the
/// diagonal is set from `diag` (exact self-evaluations).
pub(crate) fn dense_sym(
    kind: &FittedKind,
    a: &Side,
    post: &Post,
    diag: &[f64],
    limit: &MemoryLimit,
    what: &str,
) -> Result<Matrix> {
    let (n, d) = (a.rows(), a.x.cols);
    limit.check(bytes_of(n, n, 8), what)?;
    let mut out = Matrix::zeros(n, n);
    if n == 0 {
        return Ok(out);
    }
    let br = block_rows(n, n, 8, DENSE_BLOCK_ELEMS);
    let needs_dot = kind.needs_dot();
    let colf = post.col.as_deref();
    out.data
        .par_chunks_mut(br * n)
        .enumerate()
        .for_each(|(blk, chunk)| {
            let r0 = blk * br;
            let h = chunk.len() / n;
            if needs_dot {
                let xa = &a.x.data[r0 * d..(r0 + h) * d];
                dots_into(xa, h, d, &a.x, r0, &mut chunk[r0..], n);
            }
            for (r, row) in chunk.chunks_mut(n).enumerate() {
                let i = r0 + r;
                map_row(
                    kind,
                    &mut row[i..],
                    a.norms[i],
                    &a.norms[i..],
                    post.row_factor(i),
                    colf.map(|c| &c[i..]),
                );
                row[i] = diag[i];
            }
        });
    mirror_upper(&mut out.data, n);
    Ok(out)
}

/// Copies the upper triangle of a row-major `n x n` matrix onto its lower triangle, by tiles.
fn mirror_upper(g: &mut [f64], n: usize) {
    const T: usize = 64;
    for bi in (0..n).step_by(T) {
        for bj in (0..=bi).step_by(T) {
            for i in bi..(bi + T).min(n) {
                for j in bj..(bj + T).min(i) {
                    g[i * n + j] = g[j * n + i];
                }
            }
        }
    }
}

/// Sparse (CSR) `G[i, j] = k(a_i, b_j)` keeping the non-zeros; with `diag = Some(..)` (a
/// symmetric Gram, `b` = `a`) the diagonal entries are set exactly. The bytes of the stored
/// entries are counted as blocks finish and the computation stops with [`Error::Memory`] once
/// they (twice: blocks, then the concatenation) exceed `limit`.
pub(crate) fn sparse(
    kind: &FittedKind,
    a: &Side,
    b: &Side,
    post: &Post,
    diag: Option<&[f64]>,
    limit: &MemoryLimit,
    what: &str,
) -> Result<SparseGram> {
    let (n, m, d) = (a.rows(), b.rows(), a.x.cols);
    if m > u32::MAX as usize {
        return Err(Error::unsupported(format!(
            "{what}: {m} columns exceed the sparse Gram limit of 2^32"
        )));
    }
    let threads = rayon::current_num_threads().max(1);
    let br = block_rows(n, m, 4, SCRATCH_ELEMS);
    let needs_dot = kind.needs_dot();
    let supp = kind.support_sq();
    let scratch = bytes_of(threads * br, m, 8);
    let indptr_bytes = bytes_of(n + 1, 1, 8);
    limit.check(scratch + indptr_bytes, &format!("{what} (scratch)"))?;
    let used = AtomicUsize::new(scratch + indptr_bytes);
    let colf = post.col.as_deref();
    let n_blocks = n.div_ceil(br);
    type Block = (Vec<usize>, Vec<u32>, Vec<f64>);
    let blocks: Vec<Block> = (0..n_blocks)
        .into_par_iter()
        .map(|blk| -> Result<Block> {
            let r0 = blk * br;
            let h = br.min(n - r0);
            let mut dots = vec![0.0; if needs_dot { h * m } else { 0 }];
            if needs_dot {
                dots_into(&a.x.data[r0 * d..(r0 + h) * d], h, d, &b.x, 0, &mut dots, m);
            }
            let mut lens = Vec::with_capacity(h);
            let (mut idx, mut val) = (Vec::new(), Vec::new());
            for r in 0..h {
                let i = r0 + r;
                let before = idx.len();
                sparse_row(
                    kind,
                    supp,
                    a.x.row(i),
                    a.norms[i],
                    b,
                    needs_dot.then(|| &dots[r * m..(r + 1) * m]),
                    post.row_factor(i),
                    colf,
                    &mut idx,
                    &mut val,
                );
                if let Some(dg) = diag {
                    let missing = set_sparse_diag(&mut idx[before..], &mut val[before..], i, dg[i]);
                    if let Some((j, v)) = missing {
                        // The diagonal was not stored (raw value 0 there): insert it.
                        let p = before + idx[before..].partition_point(|&c| c < j);
                        idx.insert(p, j);
                        val.insert(p, v);
                    }
                }
                lens.push(idx.len() - before);
            }
            // Stored entries count twice: once here, once in the concatenated CSR.
            let add = 2 * (idx.len() * 4 + val.len() * 8);
            let total = used.fetch_add(add, Ordering::Relaxed) + add;
            limit.check(total, what)?;
            Ok((lens, idx, val))
        })
        .collect::<Result<_>>()?;
    let nnz: usize = blocks.iter().map(|b| b.1.len()).sum();
    let mut indptr = Vec::with_capacity(n + 1);
    let mut indices = Vec::with_capacity(nnz);
    let mut values = Vec::with_capacity(nnz);
    indptr.push(0);
    for (lens, idx, val) in blocks {
        for l in lens {
            let last = *indptr.last().unwrap_or(&0);
            indptr.push(last + l);
        }
        indices.extend_from_slice(&idx);
        values.extend_from_slice(&val);
    }
    Ok(SparseGram {
        rows: n,
        cols: m,
        indptr,
        indices,
        values,
    })
}

/// Overwrites entry `i` of a sorted sparse row with `v`; returns `Some((i, v))` when the row
/// has no entry `i` and `v != 0` (the caller inserts it).
fn set_sparse_diag(idx: &mut [u32], val: &mut [f64], i: usize, v: f64) -> Option<(u32, f64)> {
    match idx.binary_search(&(i as u32)) {
        Ok(p) => {
            val[p] = v;
            None
        }
        Err(_) if v != 0.0 => Some((i as u32, v)),
        Err(_) => None,
    }
}

/// `sum_{i,j} k_raw(x_i, x_j)` (unnormalized), streaming row blocks without storing the Gram.
pub(crate) fn raw_sum(kind: &FittedKind, a: &Side) -> f64 {
    let (n, d) = (a.rows(), a.x.cols);
    if n == 0 {
        return 0.0;
    }
    if let FittedKind::Linear = kind {
        // sum_ij x_i . x_j = ||sum_i x_i||^2, exactly.
        let mut s = vec![0.0; d];
        for i in 0..n {
            for (acc, &v) in s.iter_mut().zip(a.x.row(i)) {
                *acc += v;
            }
        }
        return sq_norm(&s);
    }
    // Symmetric: each block of rows r0..r0+h evaluates only columns r0..n and keeps, per row
    // i, the diagonal once and the entries j > i twice (half the kernel evaluations).
    let br = block_rows(n, n, 4, SCRATCH_ELEMS);
    let needs_dot = kind.needs_dot();
    (0..n.div_ceil(br))
        .into_par_iter()
        .map(|blk| {
            let r0 = blk * br;
            let h = br.min(n - r0);
            let w = n - r0;
            let mut buf = vec![0.0; h * w];
            if needs_dot {
                dots_into(&a.x.data[r0 * d..(r0 + h) * d], h, d, &a.x, r0, &mut buf, w);
            }
            let mut s = 0.0;
            for (r, row) in buf.chunks_mut(w).enumerate() {
                let tail = &mut row[r..];
                map_row(kind, tail, a.norms[r0 + r], &a.norms[r0 + r..], 1.0, None);
                s += tail[0] + 2.0 * tail[1..].iter().sum::<f64>();
            }
            s
        })
        .collect::<Vec<f64>>()
        // Summed in block order: the same result whatever the thread schedule.
        .iter()
        .sum()
}
