//! The per-template Gram matrices of the cuts, `Q^j_rs = <a_r^(j), a_s^(j)>`, kept as packed
//! lower triangles (row `r` holds `s = 0..=r` at offset `r (r + 1) / 2`) and grown by one row
//! per cut: nothing is copied or factored when a cut arrives. The working-set solvers read
//! them through three operations: the combination `sum_j mu_j Q^j` (a dense matrix for the
//! pairwise QP), the quadratic forms `alpha^T Q^j alpha` over the support of `alpha`, and the
//! products `Q^j alpha`. The cuts themselves are kept compact ([`CompactCuts`]) for the next
//! rows and for the weights `w = sum_r alpha_r f_j a_r^(j)`.
//!
//! A new row is computed chunk by chunk: the parameters are cut into ranges of at most
//! [`CHUNK`] that each lie in one template; for each chunk (chunks in parallel) the new cut's
//! entries there are scattered into that chunk's slice of a dense vector, which then stays in
//! the core's cache while every held cut's entries in the chunk are gathered from it. The
//! partial products of a template's chunks are summed in order.

use super::super::compact_cuts::{map_items, CompactCut, CompactCuts, CHUNK, PARALLEL_WORK};
use super::super::Cut;
use crate::features::GroupLayout;

/// `Q^j` for every template `j`, packed (module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct PackedGrams {
    tri: Vec<Vec<f64>>,
    n: usize,
    /// The cuts held, compact, for the next rows and the weights; chunked by the first
    /// [`PackedGrams::extend`].
    held: CompactCuts,
    /// A dense vector over every parameter, all zeros between calls: the new cut is
    /// scattered into it and the held cuts gathered from it. Kept, so that its pages are
    /// not allocated and faulted in again at every cut.
    scratch: Vec<f64>,
}

/// The search and the gather of a held cut's chunk against the new cut's.
trait ChunkDot {
    fn chunk_dot(&self, k: usize, b: (&[u32], &[f64]), b_dense: &[f64], lo: usize) -> f64;
}

impl ChunkDot for CompactCut {
    /// `<a^(k), b^(k)>` over chunk `k`, `b`'s entries there given also scattered into
    /// `b_dense` (the chunk's slice of the dense vector, from global index `lo`): gathered from
    /// it over this cut's entries, or, where `b` has far fewer entries, each of `b`'s searched
    /// among this cut's (the sorted indices).
    fn chunk_dot(&self, k: usize, b: (&[u32], &[f64]), b_dense: &[f64], lo: usize) -> f64 {
        let (idx, val) = self.block(k);
        if idx.len() > SEARCH_RATIO * b.0.len() {
            sorted_dot(idx, val, b.0, b.1)
        } else {
            gather_dot(idx, val, b_dense, lo)
        }
    }
}

/// A held cut's template block is gathered from the dense scatter of the new cut unless it
/// has this many times more entries than the new cut's block; then the new cut's entries are
/// searched in it (a binary search costs about this many gathers).
const SEARCH_RATIO: usize = 16;

/// `sum_k val_k dense[idx_k - lo]`, in four running sums (so that the additions do not wait
/// on each other) added at the end.
fn gather_dot(idx: &[u32], val: &[f64], dense: &[f64], lo: usize) -> f64 {
    let mut acc = [0.0; 4];
    let (mut ic, mut vc) = (idx.chunks_exact(4), val.chunks_exact(4));
    for (i4, v4) in (&mut ic).zip(&mut vc) {
        for k in 0..4 {
            acc[k] += v4[k] * dense[i4[k] as usize - lo];
        }
    }
    let tail: f64 = ic
        .remainder()
        .iter()
        .zip(vc.remainder())
        .map(|(&i, v)| v * dense[i as usize - lo])
        .sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `sum_k a_k b_k` over the indices two sorted sparse vectors share, each entry of the
/// shorter one searched in the longer one (the searches move forward only).
fn sorted_dot(ai: &[u32], av: &[f64], bi: &[u32], bv: &[f64]) -> f64 {
    let (si, sv, li, lv) = if ai.len() <= bi.len() {
        (ai, av, bi, bv)
    } else {
        (bi, bv, ai, av)
    };
    let mut sum = 0.0;
    let mut from = 0;
    for (i, v) in si.iter().zip(sv) {
        from += li[from..].partition_point(|x| x < i);
        if from == li.len() {
            break;
        }
        if li[from] == *i {
            sum += v * lv[from];
        }
    }
    sum
}

/// Offset of row `r` in a packed lower triangle.
fn row_start(r: usize) -> usize {
    r * (r + 1) / 2
}

impl PackedGrams {
    /// No cuts yet, `groups` templates.
    pub(crate) fn new(groups: usize) -> PackedGrams {
        PackedGrams::with_chunk(groups, CHUNK)
    }

    /// [`PackedGrams::new`] with chunks of at most `chunk` parameters (the tests' small
    /// chunks).
    fn with_chunk(groups: usize, chunk: usize) -> PackedGrams {
        PackedGrams {
            tri: vec![Vec::new(); groups],
            n: 0,
            held: CompactCuts::with_chunk(chunk),
            scratch: Vec::new(),
        }
    }

    /// Cuts held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.n
    }

    /// Templates.
    pub(crate) fn groups(&self) -> usize {
        self.tri.len()
    }

    /// `Q^j_rs` (any order of `r`, `s`).
    #[cfg(test)]
    pub(crate) fn get(&self, j: usize, r: usize, s: usize) -> f64 {
        let (hi, lo) = if r >= s { (r, s) } else { (s, r) };
        self.tri[j][row_start(hi) + lo]
    }

    /// Appends the rows of the cuts `self.len()..cuts.len()`: for each new cut `r`, its
    /// product with every cut `s <= r`, template by template, computed chunk by chunk in
    /// parallel (module docs). Feature indices must fit in 32 bits (the master checks).
    pub(crate) fn extend(&mut self, cuts: &[Cut], layout: &GroupLayout) {
        if !self.held.has_layout() {
            self.held.set_layout(layout);
        }
        debug_assert_eq!(self.held.dim(), layout.total());
        self.scratch.resize(layout.total(), 0.0);
        for cut in &cuts[self.n..] {
            self.held.push(cut);
            let held = self.held.cuts();
            let new = &held[held.len() - 1];
            // The dense vector cut into the chunks' slices, each chunk's partial row computed
            // in its own slice.
            let ends = self.held.chunk_ends();
            let mut slices = Vec::with_capacity(ends.len());
            let mut rest = self.scratch.as_mut_slice();
            let mut lo = 0;
            for &end in ends {
                let (slice, tail) = rest.split_at_mut(end - lo);
                slices.push((lo, slice));
                rest = tail;
                lo = end;
            }
            let work: usize = held.iter().map(|c| c.index.len()).sum();
            let partial: Vec<Option<Vec<f64>>> =
                map_items(slices, work >= PARALLEL_WORK, |k, (lo, dense)| {
                    let b = new.block(k);
                    if b.0.is_empty() {
                        return None;
                    }
                    for (&i, &v) in b.0.iter().zip(b.1) {
                        dense[i as usize - lo] = v;
                    }
                    let row = held.iter().map(|s| s.chunk_dot(k, b, dense, lo)).collect();
                    for &i in b.0 {
                        dense[i as usize - lo] = 0.0;
                    }
                    Some(row)
                });
            let width = held.len();
            let from: Vec<usize> = self.tri.iter().map(Vec::len).collect();
            for (tri, &f) in self.tri.iter_mut().zip(&from) {
                tri.resize(f + width, 0.0);
            }
            for (row, &g) in partial.iter().zip(self.held.chunk_group()) {
                if let Some(row) = row {
                    for (t, v) in self.tri[g][from[g]..].iter_mut().zip(row) {
                        *t += v;
                    }
                }
            }
        }
        self.n = cuts.len();
    }

    /// `w = sum_r alpha_r f_j a_r^(j)` over the templates `j` (`factors[j] = f_j`; templates
    /// of factor 0 and cuts of multiplier 0 skipped), as a dense vector over every parameter:
    /// filled chunk by chunk in parallel (module docs), each chunk's slice staying in a core's
    /// cache while the held cuts' entries there are added into it.
    #[cfg(test)]
    pub(crate) fn weights(&self, alpha: &[f64], factors: &[f64]) -> Vec<f64> {
        self.weights_into(alpha, factors, Vec::new())
    }

    /// [`PackedGrams::weights`] written into `w` (resized first; [`CompactCuts::weights_into`]).
    pub(crate) fn weights_into(&self, alpha: &[f64], factors: &[f64], w: Vec<f64>) -> Vec<f64> {
        self.held.weights_into(alpha, factors, w)
    }

    /// Keeps the cuts `r` with `keep[r]`.
    pub(crate) fn retain(&mut self, keep: &[bool]) {
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
        self.held.retain(keep);
        self.n = kept.len();
    }

    /// `sum_j weights_j Q^j` as a dense row-major `n x n` matrix (templates of weight 0
    /// skipped).
    pub(crate) fn combine(&self, weights: &[f64]) -> Vec<f64> {
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
    pub(crate) fn quad_forms(&self, alpha: &[f64]) -> Vec<f64> {
        let support: Vec<usize> = (0..self.n).filter(|&r| alpha[r] != 0.0).collect();
        let work = self.tri.len() * support.len() * support.len() / 2;
        let tris: Vec<&Vec<f64>> = self.tri.iter().collect();
        map_items(tris, work >= PARALLEL_WORK, |_, tri| {
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
    }

    /// `Q^j alpha` for every template (templates in parallel).
    pub(crate) fn products(&self, alpha: &[f64]) -> Vec<Vec<f64>> {
        let n = self.n;
        let work = self.tri.len() * n * n / 2;
        let tris: Vec<&Vec<f64>> = self.tri.iter().collect();
        map_items(tris, work >= PARALLEL_WORK, |_, tri| {
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
    }

    /// `Q^j` as a dense row-major matrix (the tests' twin).
    #[cfg(test)]
    pub(crate) fn dense(&self, j: usize) -> Vec<f64> {
        let mut w = vec![0.0; self.tri.len()];
        w[j] = 1.0;
        self.combine(&w)
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::compact_cuts::random_cut;
    use super::*;
    use rand::SeedableRng;

    fn dense(cut: &Cut, dim: usize) -> Vec<f64> {
        let mut d = vec![0.0; dim];
        cut.a.add_scaled_to(&mut d, 1.0);
        d
    }

    /// The search and the gather against the dense dot product.
    #[test]
    fn searched_and_gathered_dots_are_the_dense_dot_product() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let dim = 2_000;
        for (p, q) in [
            (0.3, 0.3),
            (0.5, 0.01),
            (0.002, 0.8),
            (0.0, 0.4),
            (1.0, 1.0),
            (0.9, 0.02),
        ] {
            let (x, y) = (random_cut(&mut rng, dim, p), random_cut(&mut rng, dim, q));
            let (cx, cy) = (CompactCut::new(&x, &[dim]), CompactCut::new(&y, &[dim]));
            let want: f64 = dense(&x, dim)
                .iter()
                .zip(dense(&y, dim))
                .map(|(a, b)| a * b)
                .sum();
            let got = sorted_dot(&cx.index, &cx.value, &cy.index, &cy.value);
            assert!(
                (got - want).abs() <= 1e-12 * (1.0 + want.abs()),
                "{p} {q}: {got} vs {want}"
            );
            // The gather, over the whole dense vector and over a slice of it that starts at
            // a global offset `lo` (the entries of `x` from `lo` on).
            let (xd, yd) = (dense(&x, dim), dense(&y, dim));
            let got = gather_dot(&cx.index, &cx.value, &yd, 0);
            assert!((got - want).abs() <= 1e-12 * (1.0 + want.abs()));
            let lo = 5;
            let from = cx.index.partition_point(|&i| (i as usize) < lo);
            let got = gather_dot(&cx.index[from..], &cx.value[from..], &yd[lo..], lo);
            let want: f64 = (lo..dim).map(|k| xd[k] * yd[k]).sum();
            assert!((got - want).abs() <= 1e-12 * (1.0 + want.abs()));
        }
    }

    /// Every `Q^j_rs` equals the dense product of the cuts restricted to template `j`, after
    /// cuts arrive in two batches and some are dropped; the weights equal
    /// `sum_r alpha_r f_j a_r^(j)` summed densely.
    #[test]
    fn grams_and_weights_match_dense_sums() {
        // Chunks as large as the templates, and small enough to split them.
        for chunk in [CHUNK, 7, 1] {
            grams_and_weights_match_dense_sums_in_chunks(chunk);
        }
    }

    fn grams_and_weights_match_dense_sums_in_chunks(chunk: usize) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(8);
        let layout = GroupLayout::new([40, 1, 0, 75, 30]);
        let dim = layout.total();
        // Densities far apart, so that both the gather and the search paths run.
        let mut cuts: Vec<Cut> = (0..7)
            .map(|k| random_cut(&mut rng, dim, [0.5, 0.02, 0.9][k % 3]))
            .collect();
        let mut grams = PackedGrams::with_chunk(layout.n_groups(), chunk);
        grams.extend(&cuts[..3], &layout);
        grams.extend(&cuts, &layout);
        let keep = [true, false, true, true, false, true, true];
        grams.retain(&keep);
        let mut it = keep.iter();
        cuts.retain(|_| *it.next().unwrap());
        assert_eq!(grams.len(), cuts.len());
        for j in 0..layout.n_groups() {
            let range = layout.range(j);
            for r in 0..cuts.len() {
                for s in 0..cuts.len() {
                    let (x, y) = (dense(&cuts[r], dim), dense(&cuts[s], dim));
                    let want: f64 = range.clone().map(|k| x[k] * y[k]).sum();
                    assert!((grams.get(j, r, s) - want).abs() <= 1e-12 * (1.0 + want.abs()));
                }
            }
        }
        let alpha = [0.3, 0.0, 1.2, 0.7, 0.05];
        let factors = [2.0, 0.5, 1.0, 0.0, 0.25];
        let w = grams.weights(&alpha, &factors);
        for (j, f) in factors.iter().enumerate() {
            for k in layout.range(j) {
                let want: f64 = cuts
                    .iter()
                    .zip(&alpha)
                    .map(|(c, a)| a * f * dense(c, dim)[k])
                    .sum();
                assert!((w[k] - want).abs() <= 1e-12, "{k}: {} vs {want}", w[k]);
            }
        }
        // A kept buffer full of another solve's values (and longer, or shorter) gives the
        // same weights.
        for len in [dim + 3, dim / 2] {
            let dirty = grams.weights_into(&alpha, &factors, vec![f64::NAN; len]);
            assert_eq!(
                dirty.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                w.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
        }
    }
}
