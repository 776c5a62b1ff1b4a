//! The per-template Gram matrices of the cuts, `Q^j_rs = <a_r^(j), a_s^(j)>`, kept as packed
//! lower triangles (row `r` holds `s = 0..=r` at offset `r (r + 1) / 2`) and grown by one row
//! per cut: nothing is copied or factored when a cut arrives. The working-set solvers read
//! them through three operations: the combination `sum_j mu_j Q^j` (a dense matrix for the
//! pairwise QP), the quadratic forms `alpha^T Q^j alpha` over the support of `alpha`, and the
//! products `Q^j alpha`.

use super::super::Cut;
use crate::features::GroupLayout;
use rayon::prelude::*;

/// `Q^j` for every template `j`, packed (module docs).
#[derive(Debug, Clone, Default)]
pub struct PackedGrams {
    tri: Vec<Vec<f64>>,
    n: usize,
}

/// Offset of row `r` in a packed lower triangle.
fn row_start(r: usize) -> usize {
    r * (r + 1) / 2
}

impl PackedGrams {
    /// No cuts yet, `groups` templates.
    pub fn new(groups: usize) -> PackedGrams {
        PackedGrams {
            tri: vec![Vec::new(); groups],
            n: 0,
        }
    }

    /// Cuts held.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether no cut is held.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Templates.
    pub fn groups(&self) -> usize {
        self.tri.len()
    }

    /// `Q^j_rs` (any order of `r`, `s`).
    pub fn get(&self, j: usize, r: usize, s: usize) -> f64 {
        let (hi, lo) = if r >= s { (r, s) } else { (s, r) };
        self.tri[j][row_start(hi) + lo]
    }

    /// Appends the rows of the cuts `self.len()..cuts.len()`: for each new cut `r`, its
    /// entries scattered into a dense vector, then every cut `s <= r` gathered from it by
    /// template (cuts in parallel).
    pub fn extend(&mut self, cuts: &[Cut], layout: &GroupLayout, dim: usize) {
        let ng = self.tri.len();
        let ends: Vec<usize> = (0..ng).map(|g| layout.range(g).end).collect();
        let mut dense = vec![0.0; dim];
        for r in self.n..cuts.len() {
            cuts[r].a.add_scaled_to(&mut dense, 1.0);
            let rows: Vec<Vec<f64>> = (0..=r)
                .into_par_iter()
                .map(|s| {
                    let mut per = vec![0.0; ng];
                    let mut g = 0;
                    for (j, v) in cuts[s].a.iter() {
                        while g < ng && j >= ends[g] {
                            g += 1;
                        }
                        if g < ng {
                            per[g] += v * dense[j];
                        }
                    }
                    per
                })
                .collect();
            for (g, tri) in self.tri.iter_mut().enumerate() {
                tri.extend(rows.iter().map(|p| p[g]));
            }
            for (j, _) in cuts[r].a.iter() {
                dense[j] = 0.0;
            }
        }
        self.n = cuts.len();
    }

    /// Keeps the cuts `r` with `keep[r]`.
    pub fn retain(&mut self, keep: &[bool]) {
        let kept: Vec<usize> = (0..self.n).filter(|&r| keep[r]).collect();
        for tri in &mut self.tri {
            let mut out = Vec::with_capacity(row_start(kept.len()));
            for (i, &r) in kept.iter().enumerate() {
                for &s in &kept[..=i] {
                    out.push(tri[row_start(r) + s]);
                }
            }
            *tri = out;
        }
        self.n = kept.len();
    }

    /// `sum_j weights_j Q^j` as a dense row-major `n x n` matrix (templates of weight 0
    /// skipped).
    pub fn combine(&self, weights: &[f64]) -> Vec<f64> {
        let n = self.n;
        let mut packed = vec![0.0; row_start(n)];
        for (tri, &m) in self.tri.iter().zip(weights) {
            if m != 0.0 {
                for (p, q) in packed.iter_mut().zip(tri) {
                    *p += m * q;
                }
            }
        }
        let mut dense = vec![0.0; n * n];
        for r in 0..n {
            let row = &packed[row_start(r)..row_start(r) + r + 1];
            for (s, &v) in row.iter().enumerate() {
                dense[r * n + s] = v;
                dense[s * n + r] = v;
            }
        }
        dense
    }

    /// `alpha^T Q^j alpha` for every template, over the support of `alpha` (templates in
    /// parallel).
    pub fn quad_forms(&self, alpha: &[f64]) -> Vec<f64> {
        let support: Vec<usize> = (0..self.n).filter(|&r| alpha[r] != 0.0).collect();
        self.tri
            .par_iter()
            .map(|tri| {
                let mut sum = 0.0;
                for (i, &r) in support.iter().enumerate() {
                    let row = &tri[row_start(r)..];
                    let mut cross = 0.0;
                    for &s in &support[..i] {
                        cross += row[s] * alpha[s];
                    }
                    sum += alpha[r] * (2.0 * cross + row[r] * alpha[r]);
                }
                sum.max(0.0)
            })
            .collect()
    }

    /// `Q^j alpha` for every template (templates in parallel).
    pub fn products(&self, alpha: &[f64]) -> Vec<Vec<f64>> {
        let n = self.n;
        self.tri
            .par_iter()
            .map(|tri| {
                let mut y = vec![0.0; n];
                for r in 0..n {
                    let row = &tri[row_start(r)..row_start(r) + r + 1];
                    let ar = alpha[r];
                    let mut acc = 0.0;
                    for (s, &v) in row[..r].iter().enumerate() {
                        acc += v * alpha[s];
                        y[s] += v * ar;
                    }
                    y[r] += acc + row[r] * ar;
                }
                y
            })
            .collect()
    }

    /// `Q^j` as a dense row-major matrix (the tests' twin).
    pub fn dense(&self, j: usize) -> Vec<f64> {
        let mut w = vec![0.0; self.tri.len()];
        w[j] = 1.0;
        self.combine(&w)
    }
}
