//! Gram matrices: dense (row-major [`Matrix`]) or sparse (CSR, only the non-zeros; what a
//! B1-spline kernel gives).

use crate::data::Matrix;

/// A sparse matrix in compressed sparse row form. Row `i` holds the entries
/// `indices[indptr[i]..indptr[i+1]]` (strictly increasing columns) with values
/// `values[indptr[i]..indptr[i+1]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseGram {
    pub rows: usize,
    pub cols: usize,
    /// `rows + 1` offsets into `indices` / `values`.
    pub indptr: Vec<usize>,
    /// Column of each stored entry (`u32`: Gram matrices have fewer than 2^32 columns).
    pub indices: Vec<u32>,
    pub values: Vec<f64>,
}

impl SparseGram {
    /// The stored columns and values of row `i`.
    #[inline]
    pub(crate) fn row(&self, i: usize) -> (&[u32], &[f64]) {
        let (s, e) = (self.indptr[i], self.indptr[i + 1]);
        (&self.indices[s..e], &self.values[s..e])
    }

    /// Entry `(i, j)` (0 when not stored); binary search in row `i`.
    pub(crate) fn get(&self, i: usize, j: usize) -> f64 {
        let (idx, val) = self.row(i);
        match idx.binary_search(&(j as u32)) {
            Ok(p) => val[p],
            Err(_) => 0.0,
        }
    }

    /// Bytes held by the three arrays.
    pub fn bytes(&self) -> usize {
        self.indptr.len() * std::mem::size_of::<usize>()
            + self.indices.len() * std::mem::size_of::<u32>()
            + self.values.len() * std::mem::size_of::<f64>()
    }
}

/// A Gram matrix `G[i, j] = k(a_i, b_j)`.
#[derive(Debug, Clone, PartialEq)]
pub enum Gram {
    Dense(Matrix),
    Sparse(SparseGram),
}

impl Gram {
    /// Whether every stored value is finite (a kernel on inputs near the largest float, such
    /// as 1e300, overflows to infinity or NaN).
    pub(crate) fn all_finite(&self) -> bool {
        match self {
            Gram::Dense(m) => m.data.iter().all(|v| v.is_finite()),
            Gram::Sparse(s) => s.values.iter().all(|v| v.is_finite()),
        }
    }

    pub(crate) fn rows(&self) -> usize {
        match self {
            Gram::Dense(m) => m.rows,
            Gram::Sparse(s) => s.rows,
        }
    }

    pub(crate) fn cols(&self) -> usize {
        match self {
            Gram::Dense(m) => m.cols,
            Gram::Sparse(s) => s.cols,
        }
    }

    /// Entry `(i, j)`.
    #[inline]
    pub(crate) fn get(&self, i: usize, j: usize) -> f64 {
        match self {
            Gram::Dense(m) => m.get(i, j),
            Gram::Sparse(s) => s.get(i, j),
        }
    }

    /// `sum_j G[i, j] v[j]`.
    #[inline]
    #[cfg(test)]
    pub(crate) fn row_dot(&self, i: usize, v: &[f64]) -> f64 {
        match self {
            // In order, as the sparse rows below: both forms give the same bits.
            Gram::Dense(m) => m.row(i).iter().zip(v).map(|(g, x)| g * x).sum(),
            Gram::Sparse(s) => {
                let (idx, val) = s.row(i);
                idx.iter().zip(val).map(|(&j, &g)| g * v[j as usize]).sum()
            }
        }
    }

    /// Calls `f(j, G[i, j])` for the stored entries of row `i` (every `j` for dense), in
    /// increasing `j`.
    #[inline]
    pub(crate) fn for_each_in_row(&self, i: usize, mut f: impl FnMut(usize, f64)) {
        match self {
            Gram::Dense(m) => m.row(i).iter().enumerate().for_each(|(j, &g)| f(j, g)),
            Gram::Sparse(s) => {
                let (idx, val) = s.row(i);
                idx.iter().zip(val).for_each(|(&j, &g)| f(j as usize, g));
            }
        }
    }

    /// Stored entries (`rows * cols` for dense).
    #[cfg(test)]
    pub(crate) fn nnz(&self) -> usize {
        match self {
            Gram::Dense(m) => m.data.len(),
            Gram::Sparse(s) => s.values.len(),
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        match self {
            Gram::Dense(m) => m.data.len() * std::mem::size_of::<f64>(),
            Gram::Sparse(s) => s.bytes(),
        }
    }

    /// The diagonal `G[i, i]`, `i < min(rows, cols)`.
    pub fn diagonal(&self) -> Vec<f64> {
        (0..self.rows().min(self.cols()))
            .map(|i| self.get(i, i))
            .collect()
    }

    /// A dense copy.
    pub fn to_dense(&self) -> Matrix {
        match self {
            Gram::Dense(m) => m.clone(),
            Gram::Sparse(s) => {
                let mut m = Matrix::zeros(s.rows, s.cols);
                for i in 0..s.rows {
                    let (idx, val) = s.row(i);
                    let r = m.row_mut(i);
                    for (&j, &g) in idx.iter().zip(val) {
                        r[j as usize] = g;
                    }
                }
                m
            }
        }
    }

    /// Whether this is the sparse variant.
    #[cfg(test)]
    pub(crate) fn is_sparse(&self) -> bool {
        matches!(self, Gram::Sparse(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_and_dense_accessors_agree() {
        // [[1, 0, 2], [0, 0, 0], [0, 3, 4]]
        let sp = SparseGram {
            rows: 3,
            cols: 3,
            indptr: vec![0, 2, 2, 4],
            indices: vec![0, 2, 1, 2],
            values: vec![1.0, 2.0, 3.0, 4.0],
        };
        let dense = Matrix::from_rows(&[
            vec![1.0, 0.0, 2.0],
            vec![0.0, 0.0, 0.0],
            vec![0.0, 3.0, 4.0],
        ]);
        let gs = Gram::Sparse(sp);
        let gd = Gram::Dense(dense.clone());
        assert_eq!(gs.to_dense(), dense);
        assert_eq!(gs.nnz(), 4);
        assert_eq!(gd.nnz(), 9);
        assert_eq!(gs.bytes(), 4 * 8 + 4 * 4 + 4 * 8);
        assert_eq!(gd.bytes(), 72);
        let v = [0.5, -1.0, 2.0];
        for i in 0..3 {
            assert_eq!(gs.row_dot(i, &v), gd.row_dot(i, &v));
            let mut a = vec![0.0; 3];
            gs.for_each_in_row(i, |j, g| a[j] += g);
            assert_eq!(a, dense.row(i));
            for j in 0..3 {
                assert_eq!(gs.get(i, j), dense.get(i, j));
            }
        }
        assert_eq!(gs.diagonal(), vec![1.0, 0.0, 4.0]);
        assert_eq!((gs.rows(), gs.cols()), (3, 3));
    }
}
