//! The draws of Algorithm 3 (steps 4-7): one ordered tuple at a time ([`PolySampler::draw`]),
//! a batch of draws level by level sharing every step-6 computation
//! ([`PolySampler::draw_batch`]), exact proportional sampling by rejection, and the
//! probabilities of a path and of a multiset.

use super::{pack_lower_into, pos, PolyBasis, PolySampler, Prepared};
use crate::linalg::dot;
use crate::multiset::{orderings, pick, MultiIndex};
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, MatMut, MatRef, Par};
use rand::Rng;
use std::collections::HashMap;

impl PolySampler {
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
    pub(crate) fn draw_batch<R: Rng + ?Sized>(
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
    pub(crate) fn draw_proportional<R: Rng + ?Sized>(
        &self,
        prep: &Prepared,
        alpha: &[f64],
        rng: &mut R,
        max_tries: usize,
    ) -> Option<MultiIndex> {
        for _ in 0..max_tries.max(1) {
            let m = self.draw(prep, alpha, rng)?;
            let c = orderings(&m);
            if c <= 1.0 || rng.r#gen::<f64>() * c < 1.0 {
                return Some(m);
            }
        }
        None
    }

    /// The probability that Algorithm 3 produces the ordered tuple `path` (product of the
    /// step-4 and step-7 probabilities of the running algorithm; for the tests).
    #[cfg(test)]
    pub(crate) fn path_prob(&self, prep: &Prepared, alpha: &[f64], path: &[u32]) -> f64 {
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

    /// The probability that [`PolySampler::draw`] returns the multiset `m`:
    /// `c_m rho_d^-2 alpha^T K_m alpha / C'`.
    #[cfg(test)]
    pub(crate) fn multiset_prob(&self, prep: &Prepared, m: &[u32], alpha: &[f64]) -> f64 {
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
