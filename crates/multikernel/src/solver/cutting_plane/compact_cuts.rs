//! The working set's cuts kept compact and cut into chunks ([`CompactCuts`]), and the
//! weights summed from them chunk by chunk ([`CompactCuts::weights_into`]): one storage and
//! one sum for the masters ([`super::block_master::grams::PackedGrams`]) and for the
//! replicas of their point elsewhere ([`super::Replica`]), so both take the same bits.
//!
//! The parameters are cut into ranges of at most [`CHUNK`] that each lie in one template;
//! a cut keeps its entries as 32-bit indices and values in separate arrays, with the offset
//! where each chunk's entries start. The weights `w_j = sum_r (alpha_r f_g(j)) a_r[j]` are
//! then filled chunk by chunk (chunks in parallel): a chunk's slice of `w` stays in a core's
//! cache while every held cut's entries there are added into it, cut after cut, so each
//! `w_j` is the same sum in the same order as cut after cut over the whole vector, without a
//! cache miss per entry.

use super::Cut;
use crate::features::GroupLayout;
use rayon::prelude::*;

/// Parameters in a chunk at most: 256 KiB of a dense vector, which stays in a core's cache
/// while the held cuts are read chunk by chunk.
pub(crate) const CHUNK: usize = 1 << 15;

/// Below this many multiply-adds a call runs on the calling thread: on small working sets
/// (tens of cuts over a few thousand parameters) waking the thread pool costs more than the
/// work.
pub(crate) const PARALLEL_WORK: usize = 1 << 16;

/// A cut's entries as 32-bit indices and values in separate arrays, with the offsets where
/// each chunk's entries start: a pass over the held cuts streams 12 bytes an entry in place
/// of 16, chunk by chunk without a search.
#[derive(Debug, Clone, Default)]
pub(crate) struct CompactCut {
    pub(crate) index: Vec<u32>,
    pub(crate) value: Vec<f64>,
    /// `starts[k]..starts[k + 1]` are chunk `k`'s entries.
    starts: Vec<usize>,
}

impl CompactCut {
    /// `cut`'s entries below `ends`' last, split at the chunks' `ends`.
    pub(crate) fn new(cut: &Cut, ends: &[usize]) -> CompactCut {
        CompactCut::new_where(cut, ends, None)
    }

    /// [`CompactCut::new`] keeping only the entries `j` with `reads[j]` (`None`: all).
    fn new_where(cut: &Cut, ends: &[usize], reads: Option<&[bool]>) -> CompactCut {
        let mut index = Vec::with_capacity(cut.a.len());
        let mut value = Vec::with_capacity(cut.a.len());
        let mut starts = Vec::with_capacity(ends.len() + 1);
        starts.push(0);
        let mut g = 0;
        for (j, v) in cut.a.iter() {
            while g < ends.len() && j >= ends[g] {
                starts.push(index.len());
                g += 1;
            }
            if g == ends.len() {
                break;
            }
            if reads.is_some_and(|r| !r[j]) {
                continue;
            }
            index.push(u32::try_from(j).expect("feature indices fit in 32 bits (checked)"));
            value.push(v);
        }
        while starts.len() <= ends.len() {
            starts.push(index.len());
        }
        CompactCut {
            index,
            value,
            starts,
        }
    }

    /// Chunk `k`'s entries: indices and values.
    pub(crate) fn block(&self, k: usize) -> (&[u32], &[f64]) {
        let (from, to) = (self.starts[k], self.starts[k + 1]);
        (&self.index[from..to], &self.value[from..to])
    }
}

/// The cuts held, compact, over a layout's chunks (module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct CompactCuts {
    cuts: Vec<CompactCut>,
    /// The ends of the chunks, increasing, the last one the number of parameters (none
    /// before [`CompactCuts::set_layout`]).
    chunk_ends: Vec<usize>,
    /// The template of each chunk.
    chunk_group: Vec<usize>,
    /// Parameters in a chunk at most.
    chunk: usize,
}

impl CompactCuts {
    /// No cuts, chunks of at most `chunk` parameters once a layout is set.
    pub(crate) fn with_chunk(chunk: usize) -> CompactCuts {
        CompactCuts {
            chunk: chunk.max(1),
            ..CompactCuts::default()
        }
    }

    /// No cuts over `layout`'s templates, cut into chunks of at most [`CHUNK`].
    pub(crate) fn new(layout: &GroupLayout) -> CompactCuts {
        let mut c = CompactCuts::with_chunk(CHUNK);
        c.set_layout(layout);
        c
    }

    /// Whether the chunks are set.
    pub(crate) fn has_layout(&self) -> bool {
        !self.chunk_ends.is_empty()
    }

    /// Cuts `layout`'s templates into chunks of at most `self.chunk` parameters.
    pub(crate) fn set_layout(&mut self, layout: &GroupLayout) {
        self.chunk_ends.clear();
        self.chunk_group.clear();
        for g in 0..layout.n_groups() {
            let range = layout.range(g);
            let mut start = range.start;
            loop {
                let end = (start + self.chunk).min(range.end);
                self.chunk_ends.push(end);
                self.chunk_group.push(g);
                if end == range.end {
                    break;
                }
                start = end;
            }
        }
    }

    /// The ends of the chunks (the last one the number of parameters).
    pub(crate) fn chunk_ends(&self) -> &[usize] {
        &self.chunk_ends
    }

    /// The template of each chunk.
    pub(crate) fn chunk_group(&self) -> &[usize] {
        &self.chunk_group
    }

    /// The parameters.
    pub(crate) fn dim(&self) -> usize {
        self.chunk_ends.last().copied().unwrap_or(0)
    }

    /// The cuts held, in order.
    pub(crate) fn cuts(&self) -> &[CompactCut] {
        &self.cuts
    }

    /// Holds `cut` last.
    pub(crate) fn push(&mut self, cut: &Cut) {
        self.cuts.push(CompactCut::new(cut, &self.chunk_ends));
    }

    /// Holds last the entries `j` of `cut` with `reads[j]` (`None`: all of them; `reads`
    /// covers the parameters): the weights elsewhere are then summed as 0.
    pub(crate) fn push_where(&mut self, cut: &Cut, reads: Option<&[bool]>) {
        self.cuts
            .push(CompactCut::new_where(cut, &self.chunk_ends, reads));
    }

    /// Keeps the cuts `r` with `keep[r]` (those past `keep` kept).
    pub(crate) fn retain(&mut self, keep: &[bool]) {
        let mut it = keep.iter();
        self.cuts.retain(|_| *it.next().unwrap_or(&true));
    }

    /// `w = sum_r alpha_r f_j a_r^(j)` over the templates `j` (`factors[j] = f_j`; templates
    /// of factor 0 and cuts of multiplier 0 skipped), as a dense vector over every parameter
    /// written into `w` (resized first): filled chunk by chunk in parallel (module docs), each
    /// chunk's slice cleared by the thread that fills it, in its cache. A buffer kept from one
    /// call to the next is not allocated and faulted in again.
    pub(crate) fn weights_into(&self, alpha: &[f64], factors: &[f64], w: Vec<f64>) -> Vec<f64> {
        self.point_into(alpha, factors, None, None, w)
    }

    /// The chunks that hold a weight `j` with `reads[j]`.
    pub(crate) fn chunks_read(&self, reads: &[bool]) -> Vec<bool> {
        let mut lo = 0;
        self.chunk_ends
            .iter()
            .map(|&end| {
                let any = reads[lo..end].iter().any(|&r| r);
                lo = end;
                any
            })
            .collect()
    }

    /// [`CompactCuts::weights_into`], then, with `towards = (b, s)`, the point `b + s (w -
    /// b)` between `b` and the weights ([`between`], entry by entry, in the
    /// chunk while it is in the cache: the weights never go to memory); with `chunks`, only
    /// the chunks `k` with `chunks[k]` are written (the others keep what `w` held).
    pub(crate) fn point_into(
        &self,
        alpha: &[f64],
        factors: &[f64],
        towards: Option<(&[f64], f64)>,
        chunks: Option<&[bool]>,
        mut w: Vec<f64>,
    ) -> Vec<f64> {
        w.resize(self.dim(), 0.0);
        let mut slices = Vec::with_capacity(self.chunk_ends.len());
        let mut rest = w.as_mut_slice();
        let mut lo = 0;
        for (k, &end) in self.chunk_ends.iter().enumerate() {
            let (slice, tail) = rest.split_at_mut(end - lo);
            slices.push((k, lo, factors[self.chunk_group[k]], slice));
            rest = tail;
            lo = end;
        }
        let work: usize = self
            .cuts
            .iter()
            .zip(alpha)
            .filter(|&(_, &a)| a != 0.0)
            .map(|(c, _)| c.index.len())
            .sum();
        map_items(slices, work >= PARALLEL_WORK, |_, (k, lo, f, out)| {
            if chunks.is_some_and(|c| !c[k]) {
                return;
            }
            out.fill(0.0);
            if f != 0.0 {
                for (cut, &a) in self.cuts.iter().zip(alpha) {
                    if a != 0.0 {
                        let scale = a * f;
                        let (idx, val) = cut.block(k);
                        for (&i, v) in idx.iter().zip(val) {
                            out[i as usize - lo] += scale * v;
                        }
                    }
                }
            }
            if let Some((b, s)) = towards {
                let len = out.len();
                for (o, &x) in out.iter_mut().zip(&b[lo..lo + len]) {
                    *o = between(x, *o, s);
                }
            }
        });
        w
    }
}

/// `out = b + s (w - b)`, the point between the best point `b` and the master's `w` that
/// the loop separates: one function for the loop and its replicas ([`super::Replica`]), so both take the same
/// bits.
pub(crate) fn between_into(b: &[f64], w: &[f64], s: f64, out: &mut Vec<f64>) {
    out.clear();
    out.extend(b.iter().zip(w).map(|(&x, &y)| between(x, y, s)));
}

/// `x + s (y - x)`: one entry of [`between_into`].
#[inline]
pub(crate) fn between(x: f64, y: f64, s: f64) -> f64 {
    x + s * (y - x)
}

/// `f(k, item)` for every item, in order: in parallel when `parallel`, else on the calling
/// thread (the same results either way).
pub(crate) fn map_items<T: Send, R: Send>(
    items: Vec<T>,
    parallel: bool,
    f: impl Fn(usize, T) -> R + Sync + Send,
) -> Vec<R> {
    if parallel {
        items
            .into_par_iter()
            .enumerate()
            .map(|(k, t)| f(k, t))
            .collect()
    } else {
        items
            .into_iter()
            .enumerate()
            .map(|(k, t)| f(k, t))
            .collect()
    }
}

/// A random cut over `dim` parameters with each entry present with probability `p` (the
/// tests' cuts, here and in the Gram matrices').
#[cfg(test)]
pub(crate) fn random_cut(rng: &mut impl rand::Rng, dim: usize, p: f64) -> Cut {
    let mut pairs = Vec::new();
    for j in 0..dim {
        if rng.gen_bool(p) {
            pairs.push((j, rng.gen_range(-1.0..1.0)));
        }
    }
    Cut {
        a: crate::features::SparseVector::from_pairs(pairs),
        b: 0.5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn bits(w: &[f64]) -> Vec<u64> {
        w.iter().map(|v| v.to_bits()).collect()
    }

    /// The weights chunk by chunk are, bit for bit, the sum cut after cut over the whole
    /// vector (the obvious twin), for chunks as large as the templates and small enough to
    /// split them, with multipliers and factors of 0 skipped.
    #[test]
    fn chunked_weights_are_the_sum_cut_after_cut() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let layout = GroupLayout::new([40, 1, 0, 75, 30]);
        let dim = layout.total();
        let cuts: Vec<Cut> = (0..9)
            .map(|k| random_cut(&mut rng, dim, [0.5, 0.02, 0.9][k % 3]))
            .collect();
        let alpha: Vec<f64> = (0..9)
            .map(|k| if k == 4 { 0.0 } else { rng.gen_range(0.0..2.0) })
            .collect();
        let factors = [0.7, 1.3, 2.0, 0.0, 0.4];
        let mut want = vec![0.0; dim];
        for (cut, &a) in cuts.iter().zip(&alpha) {
            for (j, v) in cut.a.iter() {
                let g = (0..layout.n_groups())
                    .find(|&g| layout.range(g).contains(&j))
                    .unwrap();
                if a != 0.0 && factors[g] != 0.0 {
                    want[j] += a * factors[g] * v;
                }
            }
        }
        for chunk in [CHUNK, 7, 1] {
            let mut held = CompactCuts::with_chunk(chunk);
            held.set_layout(&layout);
            for cut in &cuts {
                held.push(cut);
            }
            let got = held.weights_into(&alpha, &factors, vec![9.0; 3]);
            let (g, w): (Vec<u64>, Vec<u64>) = got
                .iter()
                .zip(&want)
                .map(|(a, b)| (a.to_bits(), b.to_bits()))
                .unzip();
            assert_eq!(g, w, "chunk {chunk}");
            // The point between a best point and the weights, in the chunk: the same bits as
            // the loop's `between_into` over the whole vectors; chunks not read keep `w`'s.
            let best: Vec<f64> = (0..dim).map(|j| (j as f64).sin()).collect();
            let mut want_between = Vec::new();
            super::between_into(&best, &want, 0.3, &mut want_between);
            let got = held.point_into(&alpha, &factors, Some((&best, 0.3)), None, Vec::new());
            assert_eq!(bits(&got), bits(&want_between), "chunk {chunk}");
            let mut reads = vec![false; dim];
            reads[dim / 2] = true;
            let chunks = held.chunks_read(&reads);
            let got = held.point_into(&alpha, &factors, None, Some(&chunks), vec![7.0; dim]);
            for (k, (&end, &read)) in held.chunk_ends().iter().zip(&chunks).enumerate() {
                let lo = if k == 0 { 0 } else { held.chunk_ends()[k - 1] };
                if read {
                    assert_eq!(bits(&got[lo..end]), bits(&want[lo..end]));
                } else {
                    assert!(got[lo..end].iter().all(|&v| v == 7.0));
                }
            }
            assert!(chunks.iter().any(|&c| c) && (chunk > dim || chunks.iter().any(|&c| !c)));
        }
    }
}
