//! A plain dense row-major matrix: the one container for feature tables and Gram matrices.

use serde::{Deserialize, Serialize};

/// Dense row-major matrix of `f64`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Matrix {
    pub rows: usize,
    pub cols: usize,
    /// `rows * cols` values, row after row.
    pub data: Vec<f64>,
}

impl Matrix {
    /// A `rows x cols` matrix of zeros.
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Matrix {
            rows,
            cols,
            data: vec![0.0; rows * cols],
        }
    }

    /// Wraps row-major data; panics only on a programming error (length mismatch).
    pub fn from_vec(rows: usize, cols: usize, data: Vec<f64>) -> Self {
        assert_eq!(data.len(), rows * cols, "Matrix::from_vec: length mismatch");
        Matrix { rows, cols, data }
    }

    /// Builds a matrix from rows of equal length.
    pub fn from_rows(rows: &[Vec<f64>]) -> Self {
        let cols = rows.first().map_or(0, |r| r.len());
        let mut data = Vec::with_capacity(rows.len() * cols);
        for r in rows {
            assert_eq!(r.len(), cols, "Matrix::from_rows: ragged rows");
            data.extend_from_slice(r);
        }
        Matrix {
            rows: rows.len(),
            cols,
            data,
        }
    }

    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    #[inline]
    pub fn row_mut(&mut self, i: usize) -> &mut [f64] {
        &mut self.data[i * self.cols..(i + 1) * self.cols]
    }

    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.data[i * self.cols + j]
    }

    #[inline]
    pub fn set(&mut self, i: usize, j: usize, v: f64) {
        self.data[i * self.cols + j] = v;
    }

    /// The rows whose indices are given, in that order.
    pub fn select_rows(&self, idx: &[usize]) -> Matrix {
        let mut data = Vec::with_capacity(idx.len() * self.cols);
        for &i in idx {
            data.extend_from_slice(self.row(i));
        }
        Matrix {
            rows: idx.len(),
            cols: self.cols,
            data,
        }
    }

    /// The columns whose indices are given, in that order.
    pub fn select_cols(&self, idx: &[usize]) -> Matrix {
        let mut data = Vec::with_capacity(self.rows * idx.len());
        for i in 0..self.rows {
            let r = self.row(i);
            data.extend(idx.iter().map(|&j| r[j]));
        }
        Matrix {
            rows: self.rows,
            cols: idx.len(),
            data,
        }
    }

    /// Column `j` as a vector.
    pub fn col(&self, j: usize) -> Vec<f64> {
        (0..self.rows).map(|i| self.get(i, j)).collect()
    }

    /// Transpose.
    pub fn transpose(&self) -> Matrix {
        let mut t = Matrix::zeros(self.cols, self.rows);
        for i in 0..self.rows {
            for j in 0..self.cols {
                t.data[j * self.rows + i] = self.data[i * self.cols + j];
            }
        }
        t
    }
}

/// A borrowed row-major matrix: the caller's memory (a numpy array, a slice of a larger
/// table) read in place. Learners take views, so a caller never copies its data to call
/// them; [`Matrix::view`] gives the view of an owned matrix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatrixRef<'a> {
    rows: usize,
    cols: usize,
    data: &'a [f64],
}

impl<'a> MatrixRef<'a> {
    /// Views `rows * cols` row-major values; `None` when the length does not match.
    pub fn new(rows: usize, cols: usize, data: &'a [f64]) -> Option<MatrixRef<'a>> {
        (rows.checked_mul(cols) == Some(data.len())).then_some(MatrixRef { rows, cols, data })
    }

    #[inline]
    pub fn rows(&self) -> usize {
        self.rows
    }

    #[inline]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The values, row after row.
    #[inline]
    pub(crate) fn data(&self) -> &'a [f64] {
        self.data
    }

    #[inline]
    pub(crate) fn row(&self, i: usize) -> &'a [f64] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    #[inline]
    pub(crate) fn get(&self, i: usize, j: usize) -> f64 {
        self.data[i * self.cols + j]
    }

    /// An owned copy.
    pub fn to_matrix(&self) -> Matrix {
        Matrix {
            rows: self.rows,
            cols: self.cols,
            data: self.data.to_vec(),
        }
    }

    /// The rows whose indices are given, copied.
    pub(crate) fn select_rows(&self, idx: &[usize]) -> Matrix {
        let mut data = Vec::with_capacity(idx.len() * self.cols);
        for &i in idx {
            data.extend_from_slice(self.row(i));
        }
        Matrix {
            rows: idx.len(),
            cols: self.cols,
            data,
        }
    }
}

impl Matrix {
    /// A borrowed view of the whole matrix.
    #[inline]
    pub fn view(&self) -> MatrixRef<'_> {
        MatrixRef {
            rows: self.rows,
            cols: self.cols,
            data: &self.data,
        }
    }
}

impl<'a> From<&'a Matrix> for MatrixRef<'a> {
    fn from(m: &'a Matrix) -> MatrixRef<'a> {
        m.view()
    }
}
