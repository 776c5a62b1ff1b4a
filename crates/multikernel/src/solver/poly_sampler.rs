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

use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::kernel::MemoryLimit;
use crate::linalg::{axpy, dot, dot_body};
use crate::multiset::{count_kernels, orderings, pick, MultiIndex};
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, MatMut, MatRef, Par};
use rand::Rng;
use std::collections::HashMap;

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
    pub fn len(&self) -> usize {
        match self {
            PolyBasis::RankOne { z } => z.rows,
            PolyBasis::Full { grams } => grams.len(),
        }
    }

    /// Whether there is no base kernel.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of training points `n`.
    pub fn points(&self) -> usize {
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
            return Err(Error::invalid(
                "polynomial kernel sampling needs at least one base kernel and one point",
            ));
        }
        if degree == 0 {
            return Err(Error::invalid("the polynomial degree D must be at least 1"));
        }
        if degree > 16 {
            return Err(Error::invalid(format!(
                "polynomial degree {degree} is too large (at most 16)"
            )));
        }
        if rho2.len() != degree + 1 {
            return Err(Error::invalid(format!(
                "rho^2 needs one value per degree 0..={degree}, got {}",
                rho2.len()
            )));
        }
        if rho2.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(Error::invalid("rho^2 values must be finite and > 0"));
        }
        match &basis {
            PolyBasis::RankOne { z } => {
                if z.data.iter().any(|v| !v.is_finite()) {
                    return Err(Error::invalid("base features contain a non-finite value"));
                }
            }
            PolyBasis::Full { grams } => {
                for (j, g) in grams.iter().enumerate() {
                    if g.rows != n || g.cols != n {
                        return Err(Error::invalid(format!(
                            "base kernel {j} is {} x {}, expected {n} x {n}",
                            g.rows, g.cols
                        )));
                    }
                    if g.data.iter().any(|v| !v.is_finite()) {
                        return Err(Error::invalid(format!(
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
    pub fn basis(&self) -> &PolyBasis {
        &self.basis
    }

    /// Number of training points.
    pub fn points(&self) -> usize {
        self.n
    }

    /// Number of base kernels.
    pub fn base_count(&self) -> usize {
        self.r
    }

    /// Maximum degree `D`.
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// `rho_d^-2`.
    pub fn inv_rho2(&self, d: usize) -> f64 {
        self.inv_rho2[d]
    }

    /// Whether the base kernels are rank one.
    pub fn is_rank_one(&self) -> bool {
        matches!(self.basis, PolyBasis::RankOne { .. })
    }

    /// Number of distinct product kernels `C(r + D, D)`.
    pub fn kernel_count(&self) -> f64 {
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
    pub fn masses(&self, alpha: &[f64]) -> (Vec<f64>, Vec<f64>) {
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
    pub fn prepare_with_distinct(&self, alpha: &[f64]) -> (Prepared, f64) {
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
    pub fn add_uniform_kernel(&self, scale: f64, out: &mut [f64]) {
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

    /// The unnormalized conditional weights `pi(j)` of step 6 for the running state and
    /// `e` indices still to draw after this one.
    fn conditional(&self, state: &Running, e: usize) -> Vec<f64> {
        let (n, r) = (self.n, self.r);
        let mut w: Vec<f64> = match state {
            Running::Vector(a) => {
                let PolyBasis::RankOne { z } = &self.basis else {
                    unreachable!("vector state only with a rank-one basis")
                };
                match e {
                    0 => (0..r)
                        .map(|j| {
                            let s = dot(z.row(j), a);
                            s * s
                        })
                        .collect(),
                    1 if r < n => {
                        // G = Z diag(a) Z^T (r x r); pi(j) = ||G e_j||^2.
                        let az = self.scaled_features(a);
                        // G is symmetric: only its lower triangle is formed (half the
                        // products); row j left of the diagonal is column j above it.
                        let mut g = vec![0.0; r * r];
                        triangular::matmul(
                            MatMut::from_column_major_slice_mut(&mut g, r, r),
                            BlockStructure::TriangularLower,
                            Accum::Replace,
                            MatRef::from_column_major_slice(&self.zt, n, r).transpose(),
                            BlockStructure::Rectangular,
                            MatRef::from_column_major_slice(&az, n, r),
                            BlockStructure::Rectangular,
                            1.0,
                            Par::Seq,
                        );
                        let mut w = vec![0.0; r];
                        for (c, col) in g.chunks_exact(r).enumerate() {
                            let v2 = col[c] * col[c];
                            w[c] += v2;
                            for (k, v) in col.iter().enumerate().skip(c + 1) {
                                let v2 = v * v;
                                w[c] += v2;
                                w[k] += v2;
                            }
                        }
                        w
                    }
                    _ => {
                        // W = S^{⊙e} (a ⊙ Z^T) (n x r); pi(j) = (a ⊙ z_j)^T W_j.
                        let az = self.scaled_features(a);
                        let p = self.power(e).expect("e >= 1");
                        let mut wm = vec![0.0; n * r];
                        faer::linalg::matmul::matmul(
                            MatMut::from_column_major_slice_mut(&mut wm, n, r),
                            Accum::Replace,
                            MatRef::from_column_major_slice(p, n, n),
                            MatRef::from_column_major_slice(&az, n, r),
                            1.0,
                            Par::Seq,
                        );
                        az.chunks_exact(n)
                            .zip(wm.chunks_exact(n))
                            .map(|(x, y)| dot(x, y))
                            .collect()
                    }
                }
            }
            Running::Dense(m) => {
                let PolyBasis::Full { grams } = &self.basis else {
                    unreachable!("dense state only with a full basis")
                };
                let b: Vec<f64> = match self.power(e) {
                    None => m.clone(),
                    Some(p) => m.iter().zip(p).map(|(x, y)| x * y).collect(),
                };
                grams.iter().map(|g| dot(&b, &g.data)).collect()
            }
        };
        for v in w.iter_mut() {
            if !pos(*v) {
                *v = 0.0;
            }
        }
        w
    }

    /// `a ⊙ Z^T` (column-major `n x r`: column `j` is `a ⊙ z_j`), rank-one basis.
    fn scaled_features(&self, a: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.zt.len()];
        self.scale_features_into(a, &mut out);
        out
    }

    /// [`PolySampler::scaled_features`] into `out` (plain loops: an iterator chain with
    /// `flat_map` here cost a fifth of a whole iteration at r = 100).
    fn scale_features_into(&self, a: &[f64], out: &mut [f64]) {
        let n = self.n;
        for (zj, o) in self.zt.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
            for ((v, x), y) in o.iter_mut().zip(zj).zip(a) {
                *v = x * y;
            }
        }
    }

    fn start(&self, alpha: &[f64]) -> Running {
        match &self.basis {
            PolyBasis::RankOne { .. } => Running::Vector(alpha.to_vec()),
            PolyBasis::Full { .. } => {
                let n = self.n;
                let mut m = vec![0.0; n * n];
                for (t, &at) in alpha.iter().enumerate() {
                    for (s, &as_) in alpha.iter().enumerate() {
                        m[t * n + s] = at * as_;
                    }
                }
                Running::Dense(m)
            }
        }
    }

    fn advance(&self, state: &mut Running, j: usize) {
        match (state, &self.basis) {
            (Running::Vector(a), PolyBasis::RankOne { z }) => {
                for (v, x) in a.iter_mut().zip(z.row(j)) {
                    *v *= x;
                }
            }
            (Running::Dense(m), PolyBasis::Full { grams }) => {
                for (v, x) in m.iter_mut().zip(&grams[j].data) {
                    *v *= x;
                }
            }
            _ => unreachable!("state matches the basis"),
        }
    }

    /// Algorithm 3: one multi-index (sorted) drawn with probability
    /// [`PolySampler::multiset_prob`]. `None` when all of `delta` is zero (zero gradient).
    pub fn draw<R: Rng + ?Sized>(
        &self,
        prep: &Prepared,
        alpha: &[f64],
        rng: &mut R,
    ) -> Option<MultiIndex> {
        if !pos(prep.total) || !prep.total.is_finite() {
            return None;
        }
        let d = pick(&prep.delta, rng)?;
        let mut state = self.start(alpha);
        let mut out = Vec::with_capacity(d);
        for i in 1..=d {
            let w = self.conditional(&state, d - i);
            let j = pick(&w, rng)?;
            out.push(j as u32);
            if i < d {
                self.advance(&mut state, j);
            }
        }
        out.sort_unstable();
        Some(out)
    }

    /// `count` independent draws of Algorithm 3 for the same `alpha`, run level by level.
    ///
    /// The step-6 weights depend only on the number `e` of indices still to draw and on
    /// the multiset of indices drawn so far (the running state `alpha ⊙ z_j1 ⊙ ...` is a
    /// product), so draws that share both share one computation. At each level the distinct
    /// (e, prefix) pairs not seen yet are computed together: on a rank-one basis every
    /// `O(n^2 r)` product `S^{⊙e} (a ⊙ Z^T)` of the level is one matrix product over all
    /// the prefixes (`S^{⊙e}` is read once per level, not once per draw).
    pub fn draw_batch<R: Rng + ?Sized>(
        &self,
        prep: &Prepared,
        alpha: &[f64],
        rng: &mut R,
        count: usize,
    ) -> Option<Vec<MultiIndex>> {
        if !pos(prep.total) || !prep.total.is_finite() {
            return None;
        }
        let degrees: Vec<usize> = (0..count)
            .map(|_| pick(&prep.delta, rng))
            .collect::<Option<_>>()?;
        let mut paths: Vec<MultiIndex> = degrees.iter().map(|&d| Vec::with_capacity(d)).collect();
        let mut cache: HashMap<(usize, MultiIndex), Vec<f64>> = HashMap::new();
        let top = degrees.iter().copied().max().unwrap_or(0);
        for level in 1..=top {
            // Keys of the draws still running at this level (prefix kept sorted).
            let keys: Vec<Option<(usize, MultiIndex)>> = degrees
                .iter()
                .zip(&paths)
                .map(|(&d, path)| {
                    (d >= level).then(|| {
                        let mut prefix = path.clone();
                        prefix.sort_unstable();
                        (d - level, prefix)
                    })
                })
                .collect();
            let mut missing: Vec<(usize, MultiIndex)> = keys
                .iter()
                .flatten()
                .filter(|k| !cache.contains_key(*k))
                .cloned()
                .collect();
            missing.sort_unstable();
            missing.dedup();
            for (key, w) in self.conditionals(alpha, missing) {
                cache.insert(key, w);
            }
            for (key, path) in keys.iter().zip(paths.iter_mut()) {
                if let Some(key) = key {
                    let j = pick(&cache[key], rng)?;
                    path.push(j as u32);
                }
            }
        }
        for path in paths.iter_mut() {
            path.sort_unstable();
        }
        Some(paths)
    }

    /// The step-6 weights for several `(e, prefix)` pairs (see [`PolySampler::draw_batch`]).
    fn conditionals(
        &self,
        alpha: &[f64],
        keys: Vec<(usize, MultiIndex)>,
    ) -> Vec<((usize, MultiIndex), Vec<f64>)> {
        let state_of = |prefix: &[u32]| {
            let mut state = self.start(alpha);
            for &j in prefix {
                self.advance(&mut state, j as usize);
            }
            state
        };
        if let PolyBasis::Full { .. } = self.basis {
            return self.dense_conditionals(keys, &state_of);
        }
        // Rank-one keys whose weights need `S^{⊙e} (a ⊙ Z^T)`: batched per `e`.
        let batched = |e: usize| {
            matches!(self.basis, PolyBasis::RankOne { .. })
                && (e >= 2 || (e == 1 && self.r >= self.n))
        };
        let (wide, single): (Vec<_>, Vec<_>) = keys.into_iter().partition(|(e, _)| batched(*e));
        let mut out: Vec<((usize, MultiIndex), Vec<f64>)> = single
            .into_iter()
            .map(|(e, prefix)| {
                let w = self.conditional(&state_of(&prefix), e);
                ((e, prefix), w)
            })
            .collect();
        let (n, r) = (self.n, self.r);
        // At most this many prefixes per product (bounds the n x r x m work space).
        let chunk = (BATCH_WORK_DOUBLES / (n * r)).max(1);
        let mut by_e: Vec<(usize, MultiIndex)> = wide;
        by_e.sort_by_key(|(e, _)| *e);
        for group in by_e.chunk_by(|a, b| a.0 == b.0) {
            let e = group[0].0;
            let p = self.power(e).expect("e >= 1");
            for part in group.chunks(chunk) {
                let m = part.len();
                let mut az = vec![0.0; n * r * m];
                for ((_, prefix), block) in part.iter().zip(az.chunks_exact_mut(n * r)) {
                    let Running::Vector(a) = state_of(prefix) else {
                        unreachable!("rank-one basis")
                    };
                    self.scale_features_into(&a, block);
                }
                // x^T P x = 2 x^T (strict lower P) x + sum_t P_tt x_t^2: half the products.
                let mut wm = vec![0.0; n * r * m];
                triangular::matmul(
                    MatMut::from_column_major_slice_mut(&mut wm, n, r * m),
                    BlockStructure::Rectangular,
                    Accum::Replace,
                    MatRef::from_column_major_slice(p, n, n),
                    BlockStructure::StrictTriangularLower,
                    MatRef::from_column_major_slice(&az, n, r * m),
                    BlockStructure::Rectangular,
                    2.0,
                    Par::Seq,
                );
                let diag: Vec<f64> = (0..n).map(|t| p[t * n + t]).collect();
                for ((key, ablock), wblock) in part
                    .iter()
                    .zip(az.chunks_exact(n * r))
                    .zip(wm.chunks_exact(n * r))
                {
                    let w: Vec<f64> = ablock
                        .chunks_exact(n)
                        .zip(wblock.chunks_exact(n))
                        .map(|(x, y)| {
                            let d: f64 = x.iter().zip(&diag).map(|(xv, dv)| dv * xv * xv).sum();
                            let v = dot(x, y) + d;
                            if pos(v) {
                                v
                            } else {
                                0.0
                            }
                        })
                        .collect();
                    out.push((key.clone(), w));
                }
            }
        }
        out
    }

    /// The step-6 weights for several `(e, prefix)` pairs on a full basis: with `B` the
    /// running matrix of a prefix, `pi(j) = <B ⊙ S^{⊙e}, K_j>`, so for `m` prefixes at once
    /// the weights are the `r x m` product of the packed base kernels ([`PolySampler`]'s
    /// `gram_tri`) with the packed `B ⊙ S^{⊙e}` (off-diagonal entries doubled): each base
    /// kernel is read once per `m` prefixes instead of once per prefix.
    fn dense_conditionals(
        &self,
        keys: Vec<(usize, MultiIndex)>,
        state_of: &dyn Fn(&[u32]) -> Running,
    ) -> Vec<((usize, MultiIndex), Vec<f64>)> {
        let (n, r) = (self.n, self.r);
        let nt = n * (n + 1) / 2;
        let chunk = (BATCH_WORK_DOUBLES / nt).max(1);
        let mut out = Vec::with_capacity(keys.len());
        for part in keys.chunks(chunk) {
            let m = part.len();
            let mut packed = vec![0.0; nt * m];
            for ((e, prefix), col) in part.iter().zip(packed.chunks_exact_mut(nt)) {
                let Running::Dense(state) = state_of(prefix) else {
                    unreachable!("dense state with a full basis")
                };
                pack_lower_into(&state, self.power(*e), n, 2.0, col);
            }
            let mut w = vec![0.0; r * m];
            faer::linalg::matmul::matmul(
                MatMut::from_column_major_slice_mut(&mut w, r, m),
                Accum::Replace,
                MatRef::from_column_major_slice(&self.gram_tri, nt, r).transpose(),
                MatRef::from_column_major_slice(&packed, nt, m),
                1.0,
                Par::Seq,
            );
            for (key, col) in part.iter().zip(w.chunks_exact(r)) {
                let weights = col.iter().map(|&v| if pos(v) { v } else { 0.0 }).collect();
                out.push((key.clone(), weights));
            }
        }
        out
    }

    /// A draw from exactly `q_m = |g_m| / ||g||_1` over distinct kernels: Algorithm 3
    /// followed by acceptance with probability `1 / c_m` (`c_m` = [`orderings`]). The
    /// expected number of Algorithm 3 draws is `C' / sum_m |g_m| <= D!`. Gives up (returns
    /// `None`) after `max_tries` rejections.
    pub fn draw_proportional<R: Rng + ?Sized>(
        &self,
        prep: &Prepared,
        alpha: &[f64],
        rng: &mut R,
        max_tries: usize,
    ) -> Option<MultiIndex> {
        for _ in 0..max_tries.max(1) {
            let m = self.draw(prep, alpha, rng)?;
            let c = orderings(&m);
            if c <= 1.0 || rng.gen::<f64>() * c < 1.0 {
                return Some(m);
            }
        }
        None
    }

    /// The probability that Algorithm 3 produces the ordered tuple `path` (product of the
    /// step-4 and step-7 probabilities of the running algorithm; for the tests).
    pub fn path_prob(&self, prep: &Prepared, alpha: &[f64], path: &[u32]) -> f64 {
        if !pos(prep.total) {
            return 0.0;
        }
        let d = path.len();
        if d > self.degree {
            return 0.0;
        }
        let mut p = prep.delta[d] / prep.total;
        let mut state = self.start(alpha);
        for (i, &j) in path.iter().enumerate() {
            let w = self.conditional(&state, d - i - 1);
            let s: f64 = w.iter().sum();
            if !pos(s) {
                return 0.0;
            }
            p *= w[j as usize] / s;
            self.advance(&mut state, j as usize);
        }
        p
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
    pub fn kernel_dense(&self, m: &[u32]) -> Vec<f64> {
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
    pub fn add_kernel(&self, m: &[u32], w: f64, out: &mut [f64]) {
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
    pub fn kernel_quad(&self, m: &[u32], alpha: &[f64]) -> f64 {
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

    /// The probability that [`PolySampler::draw`] returns the multiset `m`:
    /// `c_m rho_d^-2 alpha^T K_m alpha / C'`.
    pub fn multiset_prob(&self, prep: &Prepared, m: &[u32], alpha: &[f64]) -> f64 {
        if !pos(prep.total) || m.len() > self.degree {
            return 0.0;
        }
        orderings(m) * self.grad_mass(m, alpha) / prep.total
    }
}

/// The running matrix `M ⊙ K_{z_1} ⊙ ..` of Algorithm 3: a vector `a` (`M = a a^T`) for a
/// rank-one basis, the dense matrix otherwise.
enum Running {
    Vector(Vec<f64>),
    Dense(Vec<f64>),
}

/// Work space of one batched product in [`PolySampler::draw_batch`], in doubles: the two
/// `n x r x m` blocks of a rank-one level together, or the `n(n+1)/2 x m` packed running
/// matrices of a full-rank level (16 MiB each).
const BATCH_WORK_DOUBLES: usize = 1 << 21;

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

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;
    use crate::multiset::{
        count_of_degree, enumerate_multisets, index_name, DegreeUniform, IndexDistribution,
    };
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use std::collections::HashMap;

    fn random_matrix(rows: usize, cols: usize, rng: &mut ChaCha8Rng) -> Matrix {
        Matrix::from_vec(
            rows,
            cols,
            (0..rows * cols).map(|_| rng.gen_range(-1.0..1.0)).collect(),
        )
    }

    fn gaussian_grams(x: &Matrix) -> Vec<Matrix> {
        // x: n x r; one Gaussian kernel per variable.
        (0..x.cols)
            .map(|j| {
                let n = x.rows;
                let mut g = Matrix::zeros(n, n);
                for a in 0..n {
                    for b in 0..n {
                        let d = x.get(a, j) - x.get(b, j);
                        g.set(a, b, (-d * d / 0.8).exp());
                    }
                }
                g
            })
            .collect()
    }

    /// All ordered tuples of length d over 0..r.
    fn tuples(r: usize, d: usize) -> Vec<Vec<u32>> {
        let mut out = vec![vec![]];
        for _ in 0..d {
            out = out
                .into_iter()
                .flat_map(|t| {
                    (0..r as u32).map(move |j| {
                        let mut u = t.clone();
                        u.push(j);
                        u
                    })
                })
                .collect();
        }
        out
    }

    /// Explicit K_m by Hadamard products of explicit base matrices: the brute-force twin.
    fn brute_kernel(base: &[Matrix], m: &[u32], n: usize) -> Matrix {
        let mut k = Matrix::from_vec(n, n, vec![1.0; n * n]);
        for &j in m {
            for (v, x) in k.data.iter_mut().zip(&base[j as usize].data) {
                *v *= x;
            }
        }
        k
    }

    fn brute_quad(k: &Matrix, a: &[f64]) -> f64 {
        (0..k.rows)
            .map(|i| a[i] * (0..k.cols).map(|j| k.get(i, j) * a[j]).sum::<f64>())
            .sum()
    }

    fn explicit_base(basis: &PolyBasis) -> Vec<Matrix> {
        match basis {
            PolyBasis::RankOne { z } => (0..z.rows)
                .map(|j| {
                    let zj = z.row(j);
                    let n = zj.len();
                    Matrix::from_vec(n, n, (0..n * n).map(|t| zj[t / n] * zj[t % n]).collect())
                })
                .collect(),
            PolyBasis::Full { grams } => grams.clone(),
        }
    }

    /// Sampler probabilities against exact enumeration: every ordered tuple's path
    /// probability equals rho_d^-2 alpha^T K_tuple alpha / sum over all tuples, every
    /// multiset's probability is the sum over its orderings, and the distinct mass and
    /// H_d sums equal the enumerated sums.
    fn check_exact(basis: PolyBasis, degree: usize, rho2: &[f64], alpha: &[f64]) {
        let n = basis.points();
        let r = basis.len();
        let base = explicit_base(&basis);
        let s = PolySampler::new(basis, degree, rho2, &MemoryLimit::default()).unwrap();
        let prep = s.prepare(alpha);
        // Brute-force total over ordered tuples.
        let mut brute_total = 0.0;
        let mut tuple_mass = Vec::new();
        for d in 0..=degree {
            for t in tuples(r, d) {
                let k = brute_kernel(&base, &t, n);
                let v = brute_quad(&k, alpha) / rho2[d];
                brute_total += v;
                tuple_mass.push((t, v));
            }
        }
        assert!((prep.total - brute_total).abs() < 1e-9 * brute_total);
        let mut by_multiset: HashMap<Vec<u32>, f64> = HashMap::new();
        for (t, v) in &tuple_mass {
            let p = s.path_prob(&prep, alpha, t);
            let exact = v / brute_total;
            assert!(
                (p - exact).abs() < 1e-10 + 1e-8 * exact,
                "tuple {t:?}: sampler {p} vs enumeration {exact}"
            );
            let mut m = t.clone();
            m.sort_unstable();
            *by_multiset.entry(m).or_default() += p;
        }
        assert_eq!(by_multiset.len() as f64, s.kernel_count());
        let mut distinct = 0.0;
        for (m, p) in &by_multiset {
            let q = s.multiset_prob(&prep, m, alpha);
            assert!(
                (p - q).abs() < 1e-10 + 1e-8 * q,
                "multiset {m:?}: {p} vs {q}"
            );
            distinct += brute_quad(&brute_kernel(&base, m, n), alpha) / rho2[m.len()];
        }
        let dm = s.distinct_mass(alpha);
        assert!(
            (dm - distinct).abs() < 1e-9 * distinct,
            "{dm} vs {distinct}"
        );
        // Uniform kernel = sum of all distinct kernels.
        let mut u = vec![0.0; n * n];
        s.add_uniform_kernel(1.0, &mut u);
        let mut ub = vec![0.0; n * n];
        for m in by_multiset.keys() {
            let k = brute_kernel(&base, m, n);
            for (o, v) in ub.iter_mut().zip(&k.data) {
                *o += v / rho2[m.len()];
            }
        }
        for (a, b) in u.iter().zip(&ub) {
            assert!((a - b).abs() < 1e-9 * (1.0 + b.abs()));
        }
    }

    #[test]
    fn rank_one_sampler_matches_enumeration() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for (r, degree, n) in [
            (3, 3, 6),
            (4, 2, 5),
            (2, 4, 7),
            (5, 3, 4),
            (2, 6, 5),
            (1, 1, 3),
        ] {
            let z = random_matrix(r, n, &mut rng);
            let alpha: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let rho2: Vec<f64> = (0..=degree).map(|d| 1.0 + 0.5 * d as f64).collect();
            check_exact(PolyBasis::RankOne { z }, degree, &rho2, &alpha);
        }
    }

    #[test]
    fn full_rank_sampler_matches_enumeration() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        for (r, degree, n) in [(3, 3, 5), (2, 2, 6)] {
            let x = random_matrix(n, r, &mut rng);
            let alpha: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let rho2 = vec![1.0; degree + 1];
            check_exact(
                PolyBasis::Full {
                    grams: gaussian_grams(&x),
                },
                degree,
                &rho2,
                &alpha,
            );
        }
    }

    /// Large-sample frequencies of `draw` and `draw_proportional` against the exact
    /// distributions (every cell within 5 standard deviations, and a chi-square bound).
    #[test]
    fn sampling_frequencies_match() {
        let mut rng = ChaCha8Rng::seed_from_u64(13);
        let (r, degree, n) = (3, 3, 6);
        let z = random_matrix(r, n, &mut rng);
        let alpha: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let rho2 = [1.0, 1.0, 2.0, 4.0];
        let s = PolySampler::new(
            PolyBasis::RankOne { z },
            degree,
            &rho2,
            &MemoryLimit::default(),
        )
        .unwrap();
        let prep = s.prepare(&alpha);
        let all: Vec<MultiIndex> = (0..=degree)
            .flat_map(|d| enumerate_multisets(r, d))
            .collect();
        assert_eq!(all.len(), 20);
        let draws = 40_000;
        for mode in 0..3 {
            let proportional = mode == 1;
            let mut counts: HashMap<MultiIndex, usize> = HashMap::new();
            if mode == 2 {
                // Batches share the first-level weights: same distribution.
                for _ in 0..draws / 8 {
                    for m in s.draw_batch(&prep, &alpha, &mut rng, 8).unwrap() {
                        *counts.entry(m).or_default() += 1;
                    }
                }
            }
            for _ in 0..if mode == 2 { 0 } else { draws } {
                let m = if proportional {
                    s.draw_proportional(&prep, &alpha, &mut rng, 1000).unwrap()
                } else {
                    s.draw(&prep, &alpha, &mut rng).unwrap()
                };
                *counts.entry(m).or_default() += 1;
            }
            let distinct = s.distinct_mass(&alpha);
            let chi2 = frequency_chi2(&all, &counts, draws, |m| {
                if proportional {
                    s.grad_mass(m, &alpha) / distinct
                } else {
                    s.multiset_prob(&prep, m, &alpha)
                }
            });
            // 19 degrees of freedom: P(chi2 > 50) < 1e-4.
            assert!(chi2 < 50.0, "chi2 = {chi2}");
        }
    }

    /// Every cell's count within 5 standard deviations of `p(m) draws`; returns the
    /// chi-square statistic over the cells.
    fn frequency_chi2(
        all: &[MultiIndex],
        counts: &HashMap<MultiIndex, usize>,
        draws: usize,
        prob: impl Fn(&MultiIndex) -> f64,
    ) -> f64 {
        let mut chi2 = 0.0;
        for m in all {
            let p = prob(m);
            let c = *counts.get(m).unwrap_or(&0) as f64;
            let e = p * draws as f64;
            let sd = (e * (1.0 - p)).sqrt().max(1.0);
            assert!((c - e).abs() < 5.0 * sd, "{m:?}: {c} vs {e}");
            if e > 0.0 {
                chi2 += (c - e) * (c - e) / e;
            }
        }
        chi2
    }

    /// `draw_batch` on the shapes its batched products handle (rank one: a level with
    /// `e >= 2`, and `e = 1` when `r >= n`, degrees 4 and 5; full-rank Gaussian base
    /// kernels: every level, degrees 2 and 3): frequencies against the exact multiset
    /// probabilities.
    #[test]
    fn batched_draws_match_exact_probabilities() {
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        for (r, degree, n, full) in [
            (4, 4, 3, false),
            (3, 5, 8, false),
            (3, 3, 6, true),
            (4, 2, 5, true),
        ] {
            let alpha: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let rho2: Vec<f64> = (0..=degree).map(|d| 1.0 + 0.3 * d as f64).collect();
            let basis = if full {
                PolyBasis::Full {
                    grams: gaussian_grams(&random_matrix(n, r, &mut rng)),
                }
            } else {
                PolyBasis::RankOne {
                    z: random_matrix(r, n, &mut rng),
                }
            };
            let s = PolySampler::new(basis, degree, &rho2, &MemoryLimit::default()).unwrap();
            let prep = s.prepare(&alpha);
            let draws = 32_000;
            let mut counts: HashMap<MultiIndex, usize> = HashMap::new();
            for _ in 0..draws / 16 {
                for m in s.draw_batch(&prep, &alpha, &mut rng, 16).unwrap() {
                    *counts.entry(m).or_default() += 1;
                }
            }
            let all: Vec<MultiIndex> = (0..=degree)
                .flat_map(|d| enumerate_multisets(r, d))
                .collect();
            let total_p: f64 = all.iter().map(|m| s.multiset_prob(&prep, m, &alpha)).sum();
            let chi2 = frequency_chi2(&all, &counts, draws, |m| s.multiset_prob(&prep, m, &alpha));
            assert!(
                (total_p - 1.0).abs() < 1e-9,
                "probabilities sum to {total_p}"
            );
            // Bound: dof + 6 sqrt(2 dof), far in the tail of the chi-square distribution.
            let dof = (all.len() - 1) as f64;
            assert!(
                chi2 < dof + 6.0 * (2.0 * dof).sqrt(),
                "r {r} D {degree}: chi2 {chi2}"
            );
        }
    }

    /// `add_kernel` (fused for degree <= 2 on a full basis) against `K_m` materialized.
    #[test]
    fn add_kernel_matches_the_dense_kernel() {
        let mut rng = ChaCha8Rng::seed_from_u64(23);
        let (r, n, degree) = (3, 5, 3);
        let x = random_matrix(n, r, &mut rng);
        for basis in [
            PolyBasis::Full {
                grams: gaussian_grams(&x),
            },
            PolyBasis::RankOne {
                z: random_matrix(r, n, &mut rng),
            },
        ] {
            let s = PolySampler::new(basis, degree, &[1.0; 4], &MemoryLimit::default()).unwrap();
            for d in 0..=degree {
                for m in enumerate_multisets(r, d) {
                    let start: Vec<f64> = (0..n * n).map(|_| rng.gen_range(-1.0..1.0)).collect();
                    let mut got = start.clone();
                    s.add_kernel(&m, 0.7, &mut got);
                    let k = s.kernel_dense(&m);
                    for ((g, s0), kv) in got.iter().zip(&start).zip(&k) {
                        assert!((g - (s0 + 0.7 * kv)).abs() < 1e-12, "{m:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn counting_helpers() {
        assert_eq!(count_kernels(100, 3), 176_851.0);
        assert_eq!(count_kernels(30, 5), 324_632.0);
        assert_eq!(count_kernels(40, 3), 12_341.0);
        for (r, d) in [(4, 3), (3, 5), (1, 2)] {
            let e = enumerate_multisets(r, d);
            assert_eq!(e.len() as f64, count_of_degree(r, d));
        }
        assert_eq!(orderings(&[0, 0, 4]), 3.0);
        assert_eq!(orderings(&[1, 2, 3]), 6.0);
        assert_eq!(orderings(&[2, 2, 2]), 1.0);
        assert_eq!(orderings(&[]), 1.0);
        let names: Vec<String> = (1..=5).map(|i| format!("x{i}")).collect();
        assert_eq!(index_name(&[0, 0, 4], &names), "x1^2*x5");
        assert_eq!(index_name(&[], &names), "1");
    }

    #[test]
    fn uniform_distribution_is_uniform() {
        let mut rng = ChaCha8Rng::seed_from_u64(14);
        let dist = DegreeUniform::uniform(3, 2).unwrap();
        let all: Vec<MultiIndex> = (0..=2).flat_map(|d| enumerate_multisets(3, d)).collect();
        assert_eq!(all.len(), 10);
        let total: f64 = all.iter().map(|m| dist.prob(m)).sum();
        assert!((total - 1.0).abs() < 1e-12);
        let mut counts: HashMap<MultiIndex, usize> = HashMap::new();
        let draws = 20_000;
        for _ in 0..draws {
            *counts.entry(dist.draw(&mut rng)).or_default() += 1;
        }
        assert_eq!(counts.len(), 10);
        for m in &all {
            let c = counts[m] as f64;
            assert!(
                (c - 2000.0).abs() < 5.0 * (2000.0f64 * 0.9).sqrt(),
                "{m:?}: {c}"
            );
        }
    }

    #[test]
    fn bad_inputs_are_errors() {
        let z = Matrix::from_vec(2, 3, vec![1.0; 6]);
        let lim = MemoryLimit::default();
        assert!(
            PolySampler::new(PolyBasis::RankOne { z: z.clone() }, 2, &[1.0, 1.0], &lim).is_err()
        );
        assert!(PolySampler::new(PolyBasis::RankOne { z: z.clone() }, 0, &[1.0], &lim).is_err());
        assert!(
            PolySampler::new(PolyBasis::RankOne { z: z.clone() }, 1, &[1.0, -1.0], &lim).is_err()
        );
        let tiny = MemoryLimit { bytes: 10 };
        assert!(matches!(
            PolySampler::new(PolyBasis::RankOne { z }, 1, &[1.0, 1.0], &tiny),
            Err(Error::Memory { .. })
        ));
    }
}
