//! Many sparse vectors in one buffer (compressed sparse rows): the explicit features of all
//! parts of an example, scored by one sparse matrix-vector product.

use super::SparseVector;
use serde::{Deserialize, Serialize};

/// Sparse rows stored contiguously: row `r` holds `entries[offsets[r]..offsets[r + 1]]`,
/// each row sorted by index with unique indices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SparseRows {
    offsets: Vec<usize>,
    entries: Vec<(usize, f64)>,
}

impl Default for SparseRows {
    fn default() -> Self {
        SparseRows {
            offsets: vec![0],
            entries: Vec::new(),
        }
    }
}

impl SparseRows {
    /// No rows.
    pub(crate) fn new() -> SparseRows {
        SparseRows::default()
    }

    /// No rows, with room for `rows` rows and `entries` entries (no reallocation up to
    /// them): [`SparseRows::bytes_for`] bytes.
    pub(crate) fn with_capacity(rows: usize, entries: usize) -> SparseRows {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        SparseRows {
            offsets,
            entries: Vec::with_capacity(entries),
        }
    }

    /// Heap bytes of rows holding `rows` rows and `entries` entries in all: 8 per row (and
    /// one more offset) and 16 per `(index, value)` entry. Saturates instead of overflowing.
    pub(crate) fn bytes_for(rows: usize, entries: usize) -> usize {
        rows.saturating_add(1)
            .saturating_mul(std::mem::size_of::<usize>())
            .saturating_add(entries.saturating_mul(std::mem::size_of::<(usize, f64)>()))
    }

    /// Heap bytes allocated (the capacity of both buffers, which [`SparseRows::with_capacity`]
    /// sets to [`SparseRows::bytes_for`]).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.offsets.capacity() * std::mem::size_of::<usize>()
            + self.entries.capacity() * std::mem::size_of::<(usize, f64)>()
    }

    /// Appends a row.
    pub(crate) fn push(&mut self, row: &SparseVector) {
        self.entries.extend_from_slice(row.entries());
        self.offsets.push(self.entries.len());
    }

    /// Appends a row from entries sorted by index with unique indices.
    pub(crate) fn push_entries(&mut self, entries: &[(usize, f64)]) {
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
        self.entries.extend_from_slice(entries);
        self.offsets.push(self.entries.len());
    }

    /// Stored entries of all rows.
    pub(crate) fn n_entries(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn n_rows(&self) -> usize {
        self.offsets.len() - 1
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.n_rows() == 0
    }

    /// The entries of row `r`, sorted by index.
    #[inline]
    pub(crate) fn row(&self, r: usize) -> &[(usize, f64)] {
        &self.entries[self.offsets[r]..self.offsets[r + 1]]
    }

    /// Row `r` as a sparse vector.
    #[cfg(test)]
    pub(crate) fn row_vector(&self, r: usize) -> SparseVector {
        SparseVector::from_sorted(self.row(r).to_vec()).unwrap_or_default()
    }

    /// The largest index of any row plus one (0 without entries).
    pub(crate) fn dim(&self) -> usize {
        self.entries.iter().map(|&(j, _)| j + 1).max().unwrap_or(0)
    }

    /// `out[r] = <row r, dense>` for every row, each summed in index order (appended to
    /// `out`). Panics if an index is outside `dense`.
    pub(crate) fn mul_dense(&self, dense: &[f64], out: &mut Vec<f64>) {
        out.reserve(self.n_rows());
        for w in self.offsets.windows(2) {
            let mut s = 0.0;
            for &(j, v) in &self.entries[w[0]..w[1]] {
                s += v * dense[j];
            }
            out.push(s);
        }
    }
}

impl FromIterator<SparseVector> for SparseRows {
    fn from_iter<I: IntoIterator<Item = SparseVector>>(iter: I) -> Self {
        let mut rows = SparseRows::new();
        for v in iter {
            rows.push(&v);
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_multiply_like_their_vectors() {
        let vs = [
            SparseVector::from_pairs(vec![(2, 1.5), (0, -1.0)]),
            SparseVector::new(),
            SparseVector::unit(3, 2.0),
        ];
        let rows: SparseRows = vs.iter().cloned().collect();
        assert_eq!(rows.n_rows(), 3);
        assert_eq!(rows.dim(), 4);
        let dense = [1.0, 2.0, 3.0, 4.0];
        let mut out = vec![9.0];
        rows.mul_dense(&dense, &mut out);
        assert_eq!(out, vec![9.0, 3.5, 0.0, 8.0]);
        for (r, v) in vs.iter().enumerate() {
            assert_eq!(&rows.row_vector(r), v);
            assert_eq!(out[r + 1], v.dot(&dense));
        }
        assert!(SparseRows::new().is_empty());
    }

    #[test]
    fn capacity_is_what_bytes_for_says() {
        let mut rows = SparseRows::with_capacity(3, 4);
        assert_eq!(rows.heap_bytes(), SparseRows::bytes_for(3, 4));
        assert_eq!(SparseRows::bytes_for(3, 4), 4 * 8 + 4 * 16);
        rows.push_entries(&[(0, 1.0), (5, 2.0)]);
        rows.push_entries(&[]);
        rows.push_entries(&[(1, 1.0), (2, 1.0)]);
        assert_eq!(
            rows.heap_bytes(),
            SparseRows::bytes_for(3, 4),
            "no reallocation"
        );
        assert_eq!(rows.n_rows(), 3);
        assert_eq!(SparseRows::bytes_for(usize::MAX, 1), usize::MAX);
    }
}
