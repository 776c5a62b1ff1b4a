//! Sampling product kernels in proportion to their gradient: Algorithm 3 of Afkanpour et al.
//! (2013), "Polynomial kernel sampling".
//!
//! # The kernel family (Sec. 4)
//! Base kernels `kappa_1..kappa_r` with Gram matrices `K_1..K_r` on the `n` training points.
//! A *multi-index* `m = (j_1 <= ... <= j_d)`, `0 <= d <= D`, names the product kernel
//! `K_m = K_{j_1} ⊙ ... ⊙ K_{j_d}` (`⊙` the Hadamard product; `d = 0` is the constant kernel,
//! which acts as the bias). Permutations give the same kernel, so the distinct kernels are
//! the multisets: `C(r + D, D)` of them. Each carries a weight `rho_d` that depends only on
//! its degree.
//!
//! # What is sampled
//! With `alpha` the dual solution, the gradient of `J` (eq. 12, 15) at kernel `m` is
//! `g_m = -(lambda/2) rho_d^-2 alpha^T K_m alpha`. Algorithm 3 draws an *ordered* tuple
//! `(z_1..z_d)` with probability `rho_d^-2 alpha^T (K_{z_1} ⊙ .. ⊙ K_{z_d}) alpha / C'`,
//! `C' = sum_d delta(d)`, `delta(d) = rho_d^-2 <alpha alpha^T, S^{⊙d}>`, `S = sum_j K_j`
//! (Sec. 4.1: the conditionals telescope because `(sum_j K_j)^{⊙d}` is the sum over ordered
//! tuples). A multiset `m` of degree `d` with multiplicities `mu_1..` has
//! `c_m = d! / prod mu_j!` orderings, so [`PolySampler::draw`] returns `m` with probability
//! `s_m = c_m |g_m| / (lambda/2 C')` — proportional to `|g_m|` up to the factor `c_m`,
//! which the importance weight of eq. 14 (`g_m / s_m`) accounts for exactly
//! ([`PolySampler::multiset_prob`]); [`PolySampler::draw_proportional`] removes the factor by
//! rejection and samples exactly `q_m = |g_m| / ||g||_1`.
//!
//! # Cost
//! The Hadamard powers `S^{⊙e}` (`e = 1..D`) are computed once: `O(n^2 (r + D))`, memory
//! `D n^2` — independent of the number of product kernels, which are never enumerated. One
//! draw costs `O(n^2 D)` for `delta` plus, per drawn index, one `n x n` by `n x r` product:
//! `O(r n^2 d)` (the paper's bound). With per-variable *linear* base kernels
//! (`K_j = z_j z_j^T`, [`PolyBasis::RankOne`]) the running matrix `M ⊙ K_{z_1} ⊙ ..` of
//! Algorithm 3 stays rank one (`a a^T` with `a = alpha ⊙ z_{z_1} ⊙ ..`), so a step is
//! `W = S^{⊙e} (a ⊙ Z)` and `pi(j) = sum_t a_t z_{jt} W_{tj}`; the last step (`e = 0`) is
//! `(z_j^T a)^2` in `O(n r)` and the one before (`e = 1`) `||Z diag(a) z_j||^2` in `O(n r^2)`.
//! Full-rank base kernels (e.g. one Gaussian per variable, [`PolyBasis::Full`]) keep the
//! dense running matrix `B`; there `pi(j) = <B ⊙ S^{⊙e}, K_j>`, and the weights of all the
//! prefixes of a level are one product with the packed lower triangles of the `K_j` (kept
//! once: `r n^2 / 2` more numbers), which reads each base kernel once per level.
//!
//! The sum of all *distinct* kernels of degree `d`, `H_d = sum_{|m| = d} K_m` (the complete
//! homogeneous symmetric polynomial of the `K_j` under `⊙`), follows from Newton's identity
//! `d H_d = sum_{i=1..d} P_i ⊙ H_{d-i}` with the power sums `P_i = sum_j K_j^{⊙i}`; it gives
//! `||g||_1` (for [`PolySampler::distinct_mass`]) without enumeration.
//!
//! # Layout
//! The sampler's construction and the kernel quantities it gives (this file), the draws of
//! Algorithm 3 ([`draw`](PolySampler::draw), [`draw_batch`](PolySampler::draw_batch),
//! [`draw_proportional`](PolySampler::draw_proportional) and their probabilities, in
//! `draw.rs`).

mod draw;
#[cfg(test)]
mod tests;

use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::kernel::MemoryLimit;
use crate::linalg::{axpy, dot, dot_body};
use crate::multiset::count_kernels;
use faer::{Accum, MatMut, MatRef, Par};

/// The base kernels on the training points.
#[derive(Debug, Clone)]
pub enum PolyBasis {
    /// Rank-one base kernels `K_j = z_j z_j^T`; `z` is `r x n`, row `j` is `z_j` (for
    /// per-variable linear kernels, the `j`-th standardized input column).
    RankOne { z: Matrix },
    /// Full base Gram matrices, `n x n` each (symmetric positive semidefinite).
    Full { grams: Vec<Matrix> },
}

impl PolyBasis {
    /// Number of base kernels `r`.
    pub(crate) fn len(&self) -> usize {
        match self {
            PolyBasis::RankOne { z } => z.rows,
            PolyBasis::Full { grams } => grams.len(),
        }
    }

    /// Number of training points `n`.
    pub(crate) fn points(&self) -> usize {
        match self {
            PolyBasis::RankOne { z } => z.cols,
            PolyBasis::Full { grams } => grams.first().map_or(0, |g| g.rows),
        }
    }
}

/// `delta(d)` of Algorithm 3 (step 3) for one `alpha`.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// `delta(d) = rho_d^-2 alpha^T S^{⊙d} alpha`, `d = 0..=D`.
    pub delta: Vec<f64>,
    /// `C' = sum_d delta(d)`: the total mass over ordered tuples.
    pub total: f64,
}

/// The sampler of Algorithm 3 over a fixed basis, degree and `rho`.
#[derive(Debug, Clone)]
pub struct PolySampler {
    basis: PolyBasis,
    n: usize,
    r: usize,
    degree: usize,
    inv_rho2: Vec<f64>,
    /// Power sums `P_i = sum_j K_j^{⊙i}`, `i = 1..=D` (index `i - 1`; `P_1 = S`), `n x n`
    /// symmetric, column-major.
    psums: Vec<Vec<f64>>,
    /// `S^{⊙e}` for `e = 2..D-1` (index `e - 2`): the matrices the conditionals multiply.
    powers: Vec<Vec<f64>>,
    /// Rank-one basis: `Z^T` column-major `n x r` (column `j` is `z_j`).
    zt: Vec<f64>,
    /// Full basis: the lower triangles of `K_1..K_r` packed column by column ([`pack_lower_into`]),
    /// stacked as the columns of an `n(n+1)/2 x r` matrix, so that the step-6 weights of many
    /// prefixes are one matrix product that reads each base kernel once.
    gram_tri: Vec<f64>,
}

impl PolySampler {
    /// Prepares the Hadamard powers of `S = sum_j K_j` and the sums `H_d`.
    ///
    /// `rho2[d]` is `rho_d^2` for `d = 0..=degree`. The dense matrices (`2 D n^2` numbers)
    /// are checked against `limit` first.
    pub fn new(
        basis: PolyBasis,
        degree: usize,
        rho2: &[f64],
        limit: &MemoryLimit,
    ) -> Result<PolySampler> {
        let n = basis.points();
        let r = basis.len();
        if r == 0 || n == 0 {
            return Err(Error::data(
                "polynomial kernel sampling needs at least one base kernel and one point",
            ));
        }
        if degree == 0 {
            return Err(Error::param(
                "degree",
                0,
                "a polynomial degree of at least 1",
            ));
        }
        if degree > 16 {
            return Err(Error::param(
                "degree",
                degree,
                "a polynomial degree of at most 16",
            ));
        }
        if rho2.len() != degree + 1 {
            return Err(Error::shape(
                format!("rho2 (one value per degree 0..={degree})"),
                degree + 1,
                rho2.len(),
            ));
        }
        if rho2.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(Error::param(
                "rho2",
                format!("{rho2:?}"),
                "finite values > 0",
            ));
        }
        match &basis {
            PolyBasis::RankOne { z } => {
                if z.data.iter().any(|v| !v.is_finite()) {
                    return Err(Error::data("the base features contain a non-finite value"));
                }
            }
            PolyBasis::Full { grams } => {
                for (j, g) in grams.iter().enumerate() {
                    if g.rows != n {
                        return Err(Error::shape(format!("rows of base kernel {j}"), n, g.rows));
                    }
                    if g.cols != n {
                        return Err(Error::shape(
                            format!("columns of base kernel {j}"),
                            n,
                            g.cols,
                        ));
                    }
                    if g.data.iter().any(|v| !v.is_finite()) {
                        return Err(Error::data(format!(
                            "base kernel {j} has a non-finite value"
                        )));
                    }
                }
            }
        }
        let mats = 2 * degree;
        let packed = match &basis {
            PolyBasis::RankOne { .. } => 0,
            PolyBasis::Full { .. } => r.saturating_mul(n * (n + 1) / 2),
        };
        limit.check(
            mats.saturating_mul(n)
                .saturating_mul(n)
                .saturating_add(packed)
                .saturating_mul(8),
            &format!(
                "polynomial kernel sampling (degree {degree}, {n} points: {mats} n x n matrices \
                 and the packed base kernels)"
            ),
        )?;

        let nn = n * n;
        let mut zt = Vec::new();
        let mut gram_tri = Vec::new();
        // Power sums P_i = sum_j K_j^{⊙i}, i = 1..=D.
        let mut psums: Vec<Vec<f64>> = Vec::with_capacity(degree);
        match &basis {
            PolyBasis::RankOne { z } => {
                zt = vec![0.0; n * r];
                for j in 0..r {
                    zt[j * n..(j + 1) * n].copy_from_slice(z.row(j));
                }
                let mut zi = zt.clone();
                for i in 1..=degree {
                    if i > 1 {
                        for (v, b) in zi.iter_mut().zip(&zt) {
                            *v *= b;
                        }
                    }
                    let mut p = vec![0.0; nn];
                    let zr = MatRef::from_column_major_slice(&zi, n, r);
                    faer::linalg::matmul::matmul(
                        MatMut::from_column_major_slice_mut(&mut p, n, n),
                        Accum::Replace,
                        zr,
                        zr.transpose(),
                        1.0,
                        Par::Seq,
                    );
                    psums.push(p);
                }
            }
            PolyBasis::Full { grams } => {
                let nt = n * (n + 1) / 2;
                gram_tri = vec![0.0; packed];
                for (g, col) in grams.iter().zip(gram_tri.chunks_exact_mut(nt)) {
                    pack_lower_into(&g.data, None, n, 1.0, col);
                }
                for i in 1..=degree {
                    let mut p = vec![0.0; nn];
                    for g in grams {
                        for (pv, &gv) in p.iter_mut().zip(&g.data) {
                            *pv += gv.powi(i as i32);
                        }
                    }
                    psums.push(p);
                }
            }
        }
        // S^{⊙e}, e = 2..D-1 (S^{⊙D} and the H_d only enter quadratic forms, which
        // [`PolySampler::masses`] computes on the fly from the power sums).
        let mut powers: Vec<Vec<f64>> = Vec::new();
        for e in 2..degree {
            let prev: &[f64] = if e == 2 { &psums[0] } else { &powers[e - 3] };
            let next: Vec<f64> = prev.iter().zip(&psums[0]).map(|(a, b)| a * b).collect();
            powers.push(next);
        }
        Ok(PolySampler {
            basis,
            n,
            r,
            degree,
            inv_rho2: rho2.iter().map(|v| 1.0 / v).collect(),
            psums,
            powers,
            zt,
            gram_tri,
        })
    }

    /// The basis the sampler was built on.
    pub(crate) fn basis(&self) -> &PolyBasis {
        &self.basis
    }

    /// Number of training points.
    pub(crate) fn points(&self) -> usize {
        self.n
    }

    /// Number of base kernels.
    pub fn base_count(&self) -> usize {
        self.r
    }

    /// Maximum degree `D`.
    pub(crate) fn degree(&self) -> usize {
        self.degree
    }

    /// `rho_d^-2`.
    pub(crate) fn inv_rho2(&self, d: usize) -> f64 {
        self.inv_rho2[d]
    }

    /// Number of distinct product kernels `C(r + D, D)`.
    pub(crate) fn kernel_count(&self) -> f64 {
        count_kernels(self.r, self.degree)
    }

    /// `S^{⊙e}` as a column-major slice (`None` for `e = 0`, the all-ones matrix).
    fn power(&self, e: usize) -> Option<&[f64]> {
        match e {
            0 => None,
            1 => Some(&self.psums[0]),
            e => Some(&self.powers[e - 2]),
        }
    }

    /// `alpha^T A alpha` for a symmetric `n x n` column-major `A` (`None` = all ones).
    fn quad(&self, a: Option<&[f64]>, alpha: &[f64]) -> f64 {
        match a {
            None => {
                let s: f64 = alpha.iter().sum();
                s * s
            }
            Some(a) => {
                // Lower triangle only (half the memory traffic): column t below the
                // diagonal is contiguous in column-major storage.
                let n = self.n;
                let mut acc = 0.0;
                for (t, &at) in alpha.iter().enumerate() {
                    if at != 0.0 {
                        let col = &a[t * n + t..(t + 1) * n];
                        acc += at * (2.0 * dot(col, &alpha[t..]) - col[0] * at);
                    }
                }
                acc
            }
        }
    }

    /// `alpha^T S^{⊙d} alpha` and `alpha^T H_d alpha` for `d = 0..=D` in one pass over the
    /// lower triangles of the power sums `P_1..P_D`: per column, the powers of `S = P_1` and
    /// `H_d = (1/d) sum_{i=1..d} P_i ⊙ H_{d-i}` (Newton) are formed in short buffers that
    /// stay in cache.
    pub(crate) fn masses(&self, alpha: &[f64]) -> (Vec<f64>, Vec<f64>) {
        assert_eq!(alpha.len(), self.n, "PolySampler::masses: alpha length");
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                return unsafe { self.masses_avx2(alpha) };
            }
        }
        self.masses_body(alpha)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn masses_avx2(&self, alpha: &[f64]) -> (Vec<f64>, Vec<f64>) {
        self.masses_body(alpha)
    }

    #[inline(always)]
    fn masses_body(&self, alpha: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let n = self.n;
        let deg = self.degree;
        let sum: f64 = alpha.iter().sum();
        let mut pq = vec![0.0; deg + 1];
        let mut hq = vec![0.0; deg + 1];
        pq[0] = sum * sum;
        hq[0] = sum * sum;
        let mut pw = vec![0.0; n];
        // h[d - 1] holds H_d on the current column segment.
        let mut h: Vec<Vec<f64>> = vec![vec![0.0; n]; deg];
        for (t, &at) in alpha.iter().enumerate() {
            if at == 0.0 {
                continue;
            }
            let lo = t * n + t;
            let hi = (t + 1) * n;
            let m = hi - lo;
            let a = &alpha[t..];
            let p1 = &self.psums[0][lo..hi];
            let pw = &mut pw[..m];
            pw.copy_from_slice(p1);
            for d in 1..=deg {
                if d > 1 {
                    for (v, x) in pw.iter_mut().zip(p1) {
                        *v *= x;
                    }
                }
                // Weight 2 off the diagonal, 1 on it (entry 0 of the segment).
                pq[d] += at * (2.0 * dot_body(a, pw) - at * pw[0]);
                let (done, rest) = h.split_at_mut(d - 1);
                let hd = &mut rest[0][..m];
                hd.copy_from_slice(&self.psums[d - 1][lo..hi]);
                for i in 1..d {
                    let pi = &self.psums[i - 1][lo..hi];
                    let hm = &done[d - i - 1][..m];
                    for ((v, x), y) in hd.iter_mut().zip(pi).zip(hm) {
                        *v += x * y;
                    }
                }
                let inv = 1.0 / d as f64;
                for v in hd.iter_mut() {
                    *v *= inv;
                }
                hq[d] += at * (2.0 * dot_body(a, hd) - at * hd[0]);
            }
        }
        (pq, hq)
    }

    /// Step 3 of Algorithm 3: `delta(d)` for `d = 0..=D` and their total `C'`.
    pub fn prepare(&self, alpha: &[f64]) -> Prepared {
        self.prepare_with_distinct(alpha).0
    }

    /// [`PolySampler::prepare`] and [`PolySampler::distinct_mass`] from one pass
    /// ([`PolySampler::masses`]).
    pub(crate) fn prepare_with_distinct(&self, alpha: &[f64]) -> (Prepared, f64) {
        let (pq, hq) = self.masses(alpha);
        let delta: Vec<f64> = pq
            .iter()
            .zip(&self.inv_rho2)
            .map(|(q, r)| (r * q).max(0.0))
            .collect();
        let total = delta.iter().sum();
        let distinct: f64 = hq.iter().zip(&self.inv_rho2).map(|(q, r)| r * q).sum();
        (Prepared { delta, total }, distinct.max(0.0))
    }

    /// `sum over distinct kernels m of rho_d^-2 alpha^T K_m alpha` (so `||g||_1 =
    /// lambda/2` times this), through `H_d` (module docs).
    pub fn distinct_mass(&self, alpha: &[f64]) -> f64 {
        self.prepare_with_distinct(alpha).1
    }

    /// `sum_d rho_d^-2 H_d` times `scale`, added into `out` (`n x n`, column-major): the
    /// sum of all distinct product kernels, i.e. `K_theta` for uniform `theta = scale`.
    pub(crate) fn add_uniform_kernel(&self, scale: f64, out: &mut [f64]) {
        assert_eq!(out.len(), self.n * self.n);
        let deg = self.degree;
        let mut hs = vec![0.0; deg + 1];
        for (idx, o) in out.iter_mut().enumerate() {
            hs[0] = 1.0;
            let mut v = self.inv_rho2[0];
            for d in 1..=deg {
                let mut acc = 0.0;
                for i in 1..=d {
                    acc += self.psums[i - 1][idx] * hs[d - i];
                }
                hs[d] = acc / d as f64;
                v += self.inv_rho2[d] * hs[d];
            }
            *o += scale * v;
        }
    }

    /// The product feature `z_m = z_{j_1} ⊙ .. ⊙ z_{j_d}` (all ones for `d = 0`); rank-one
    /// basis only.
    pub fn feature(&self, m: &[u32]) -> Option<Vec<f64>> {
        let PolyBasis::RankOne { z } = &self.basis else {
            return None;
        };
        let mut f = vec![1.0; self.n];
        for &j in m {
            for (v, x) in f.iter_mut().zip(z.row(j as usize)) {
                *v *= x;
            }
        }
        Some(f)
    }

    /// The dense Gram matrix `K_m` (row-major = column-major, symmetric).
    pub(crate) fn kernel_dense(&self, m: &[u32]) -> Vec<f64> {
        let n = self.n;
        match &self.basis {
            PolyBasis::RankOne { .. } => {
                let f = self.feature(m).expect("rank-one basis");
                let mut k = vec![0.0; n * n];
                for (t, &ft) in f.iter().enumerate() {
                    for (s, &fs) in f.iter().enumerate() {
                        k[t * n + s] = ft * fs;
                    }
                }
                k
            }
            PolyBasis::Full { grams } => {
                let mut k = vec![1.0; n * n];
                for &j in m {
                    for (v, x) in k.iter_mut().zip(&grams[j as usize].data) {
                        *v *= x;
                    }
                }
                k
            }
        }
    }

    /// `out += w K_m` (`n x n`, column-major). On a full basis a kernel of degree `<= 2` is
    /// added in one fused pass, without materializing `K_m`.
    pub(crate) fn add_kernel(&self, m: &[u32], w: f64, out: &mut [f64]) {
        let n = self.n;
        assert_eq!(out.len(), n * n, "PolySampler::add_kernel: output size");
        match &self.basis {
            PolyBasis::RankOne { .. } => {
                let f = self.feature(m).expect("rank-one basis");
                for (t, &ft) in f.iter().enumerate() {
                    axpy(w * ft, &f, &mut out[t * n..(t + 1) * n]);
                }
            }
            PolyBasis::Full { grams } => {
                let g = |j: &u32| &grams[*j as usize].data;
                match m {
                    [] => out.iter_mut().for_each(|v| *v += w),
                    [a] => axpy(w, g(a), out),
                    [rest @ .., last] => {
                        let head;
                        let first: &[f64] = if let [a] = rest {
                            g(a)
                        } else {
                            head = self.kernel_dense(rest);
                            &head
                        };
                        for ((o, x), y) in out.iter_mut().zip(first).zip(g(last)) {
                            *o += w * x * y;
                        }
                    }
                }
            }
        }
    }

    /// `alpha^T K_m alpha` (`(z_m^T alpha)^2` for a rank-one basis).
    pub(crate) fn kernel_quad(&self, m: &[u32], alpha: &[f64]) -> f64 {
        match &self.basis {
            PolyBasis::RankOne { .. } => {
                let f = self.feature(m).expect("rank-one basis");
                let s = dot(&f, alpha);
                s * s
            }
            PolyBasis::Full { .. } => {
                let k = self.kernel_dense(m);
                self.quad(Some(&k), alpha).max(0.0)
            }
        }
    }

    /// `rho_d^-2 alpha^T K_m alpha`: `|g_m|` without the factor `lambda/2`.
    pub fn grad_mass(&self, m: &[u32], alpha: &[f64]) -> f64 {
        self.inv_rho2[m.len()] * self.kernel_quad(m, alpha)
    }
}

/// Packs the lower triangle of the symmetric `a ⊙ b` (`b = None`: `a` alone; both `n x n`)
/// column by column into `out` (`n(n+1)/2` numbers), off-diagonal entries times `off`.
fn pack_lower_into(a: &[f64], b: Option<&[f64]>, n: usize, off: f64, out: &mut [f64]) {
    let mut k = 0;
    for t in 0..n {
        let (lo, hi) = (t * n + t, (t + 1) * n);
        let dst = &mut out[k..k + hi - lo];
        match b {
            None => dst.copy_from_slice(&a[lo..hi]),
            Some(b) => {
                for ((d, x), y) in dst.iter_mut().zip(&a[lo..hi]).zip(&b[lo..hi]) {
                    *d = x * y;
                }
            }
        }
        if off != 1.0 {
            dst[1..].iter_mut().for_each(|v| *v *= off);
        }
        k += hi - lo;
    }
}

/// `v > 0` (false for NaN).
#[inline]
pub(crate) fn pos(v: f64) -> bool {
    v > 0.0
}
