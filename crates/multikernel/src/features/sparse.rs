//! Sparse vectors: sorted `(index, value)` entries with unique indices.

use serde::{Deserialize, Serialize};

/// A sparse vector: entries sorted by index, each index at most once. Zeros may be stored
/// (a feature with value 0 is still a feature); [`SparseVector::from_pairs`] keeps them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SparseVector {
    entries: Vec<(usize, f64)>,
}

impl SparseVector {
    /// The empty (zero) vector.
    #[cfg(test)]
    pub(crate) fn new() -> SparseVector {
        SparseVector::default()
    }

    /// From entries in any order; repeated indices are summed (in the order given).
    pub(crate) fn from_pairs(mut pairs: Vec<(usize, f64)>) -> SparseVector {
        pairs.sort_by_key(|&(i, _)| i); // stable: repeated indices keep their order
        let mut entries: Vec<(usize, f64)> = Vec::with_capacity(pairs.len());
        for (i, v) in pairs {
            match entries.last_mut() {
                Some(last) if last.0 == i => last.1 += v,
                _ => entries.push((i, v)),
            }
        }
        SparseVector { entries }
    }

    /// From entries already sorted by strictly increasing index; `None` otherwise.
    pub(crate) fn from_sorted(entries: Vec<(usize, f64)>) -> Option<SparseVector> {
        entries
            .windows(2)
            .all(|w| w[0].0 < w[1].0)
            .then_some(SparseVector { entries })
    }

    /// A vector with one entry.
    #[cfg(test)]
    pub(crate) fn unit(index: usize, value: f64) -> SparseVector {
        SparseVector {
            entries: vec![(index, value)],
        }
    }

    /// Stored entries.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The entries, sorted by index.
    pub(crate) fn entries(&self) -> &[(usize, f64)] {
        &self.entries
    }

    /// Iterates over `(index, value)` in index order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.entries.iter().copied()
    }

    /// The largest index plus one (0 for the empty vector): the dense length it needs.
    #[cfg(test)]
    pub(crate) fn dim(&self) -> usize {
        self.entries.last().map_or(0, |&(i, _)| i + 1)
    }

    /// The value at `index` (0 when not stored).
    #[cfg(test)]
    pub(crate) fn get(&self, index: usize) -> f64 {
        self.entries
            .binary_search_by_key(&index, |&(i, _)| i)
            .map_or(0.0, |k| self.entries[k].1)
    }

    /// `<self, dense>`, summed in index order. Panics if an index is outside `dense`.
    #[inline]
    pub fn dot(&self, dense: &[f64]) -> f64 {
        let mut s = 0.0;
        for &(i, v) in &self.entries {
            s += v * dense[i];
        }
        s
    }

    /// `<self, other>` of two sparse vectors (a merge of the sorted entries).
    #[cfg(test)]
    pub(crate) fn dot_sparse(&self, other: &SparseVector) -> f64 {
        let (a, b) = (&self.entries, &other.entries);
        let (mut i, mut j, mut s) = (0, 0, 0.0);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    s += a[i].1 * b[j].1;
                    i += 1;
                    j += 1;
                }
            }
        }
        s
    }

    /// `dense += a * self`. Panics if an index is outside `dense`.
    #[inline]
    pub(crate) fn add_scaled_to(&self, dense: &mut [f64], a: f64) {
        for &(i, v) in &self.entries {
            dense[i] += a * v;
        }
    }

    /// `a * self + b * other` as a new sparse vector (entries that cancel are kept as zeros
    /// only where both vectors have the index).
    pub(crate) fn combine(&self, a: f64, other: &SparseVector, b: f64) -> SparseVector {
        let (x, y) = (&self.entries, &other.entries);
        let mut out = Vec::with_capacity(x.len() + y.len());
        let (mut i, mut j) = (0, 0);
        while i < x.len() || j < y.len() {
            let take_x = j >= y.len() || (i < x.len() && x[i].0 < y[j].0);
            let take_y = i >= x.len() || (j < y.len() && y[j].0 < x[i].0);
            if take_x {
                out.push((x[i].0, a * x[i].1));
                i += 1;
            } else if take_y {
                out.push((y[j].0, b * y[j].1));
                j += 1;
            } else {
                out.push((x[i].0, a * x[i].1 + b * y[j].1));
                i += 1;
                j += 1;
            }
        }
        SparseVector { entries: out }
    }

    /// `||self||^2`.
    #[cfg(test)]
    pub(crate) fn sqnorm(&self) -> f64 {
        self.entries.iter().map(|&(_, v)| v * v).sum()
    }

    /// The vector with every value multiplied by `a`.
    #[cfg(test)]
    pub(crate) fn scaled(&self, a: f64) -> SparseVector {
        SparseVector {
            entries: self.entries.iter().map(|&(i, v)| (i, a * v)).collect(),
        }
    }

    /// The vector without stored zeros.
    pub(crate) fn pruned(mut self) -> SparseVector {
        self.entries.retain(|&(_, v)| v != 0.0);
        self
    }

    /// The dense form of length `len` (at least [`SparseVector::dim`]).
    #[cfg(test)]
    pub(crate) fn to_dense(&self, len: usize) -> Vec<f64> {
        let mut d = vec![0.0; len.max(self.dim())];
        self.add_scaled_to(&mut d, 1.0);
        d
    }
}

impl FromIterator<(usize, f64)> for SparseVector {
    fn from_iter<I: IntoIterator<Item = (usize, f64)>>(iter: I) -> Self {
        SparseVector::from_pairs(iter.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn random(rng: &mut impl Rng, dim: usize, nnz: usize) -> Vec<(usize, f64)> {
        (0..nnz)
            .map(|_| (rng.gen_range(0..dim), rng.gen_range(-2.0..2.0)))
            .collect()
    }

    /// Every operation equals the same operation on the dense forms.
    #[test]
    fn operations_match_dense_arithmetic() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for _ in 0..200 {
            let dim = rng.gen_range(1..12);
            let (na, nb) = (rng.gen_range(0..8), rng.gen_range(0..8));
            let pa = random(&mut rng, dim, na);
            let pb = random(&mut rng, dim, nb);
            let mut da = vec![0.0; dim];
            for &(i, v) in &pa {
                da[i] += v;
            }
            let mut db = vec![0.0; dim];
            for &(i, v) in &pb {
                db[i] += v;
            }
            let a = SparseVector::from_pairs(pa);
            let b = SparseVector::from_pairs(pb);
            assert!(a.entries().windows(2).all(|w| w[0].0 < w[1].0));
            for (x, y) in a.to_dense(dim).iter().zip(&da) {
                assert!((x - y).abs() < 1e-12);
            }
            let dot: f64 = da.iter().zip(&db).map(|(x, y)| x * y).sum();
            assert!((a.dot(&db) - dot).abs() < 1e-9);
            assert!((a.dot_sparse(&b) - dot).abs() < 1e-9);
            assert!((a.sqnorm() - da.iter().map(|v| v * v).sum::<f64>()).abs() < 1e-9);
            let c = a.combine(2.0, &b, -0.5);
            for k in 0..dim {
                assert!((c.get(k) - (2.0 * da[k] - 0.5 * db[k])).abs() < 1e-12);
            }
            let mut acc = db.clone();
            a.add_scaled_to(&mut acc, 3.0);
            for k in 0..dim {
                assert!((acc[k] - (db[k] + 3.0 * da[k])).abs() < 1e-12);
            }
            assert!((a.scaled(-2.0).get(0) + 2.0 * da[0]).abs() < 1e-12);
        }
    }

    #[test]
    fn construction_and_pruning() {
        let v = SparseVector::from_pairs(vec![(3, 1.0), (1, 2.0), (3, -1.0), (0, 0.5)]);
        assert_eq!(v.entries(), &[(0, 0.5), (1, 2.0), (3, 0.0)]);
        assert_eq!(v.dim(), 4);
        assert_eq!(v.clone().pruned().len(), 2);
        assert!(SparseVector::from_sorted(vec![(1, 1.0), (1, 2.0)]).is_none());
        assert!(SparseVector::from_sorted(vec![(1, 1.0), (4, 2.0)]).is_some());
        assert_eq!(SparseVector::unit(2, 5.0).get(2), 5.0);
        assert_eq!(SparseVector::new().dim(), 0);
        let collected: SparseVector = [(2, 1.0), (0, 1.0)].into_iter().collect();
        assert_eq!(collected.entries(), &[(0, 1.0), (2, 1.0)]);
    }
}
