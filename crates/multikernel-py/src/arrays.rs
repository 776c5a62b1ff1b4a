//! numpy arrays in and out. Inputs are borrowed, never copied: a C-contiguous float64
//! array is viewed in place as the library's row-major [`MatrixRef`] (the Python layer
//! converts any other array once, with `numpy.ascontiguousarray`, before calling in).

use multikernel::data::{Matrix, MatrixRef};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// The values of a C-contiguous 2-D float64 array, row after row, borrowed.
pub fn rows<'a>(x: &'a PyReadonlyArray2<'_, f64>, what: &str) -> PyResult<MatrixRef<'a>> {
    let shape = x.shape();
    let (r, c) = (shape[0], shape[1]);
    // `as_slice` also accepts a Fortran-ordered array, whose values are column after
    // column: only C order is row-major.
    let refuse = || {
        PyTypeError::new_err(format!(
            "{what}: a C-contiguous float64 array is needed (numpy.ascontiguousarray converts it)"
        ))
    };
    if !x.is_c_contiguous() {
        return Err(refuse());
    }
    let data = x.as_slice().map_err(|_| refuse())?;
    MatrixRef::new(r, c, data)
        .ok_or_else(|| PyTypeError::new_err(format!("{what}: {r} x {c} values expected")))
}

/// A library matrix as a new 2-D numpy array (the values are moved, not copied).
pub fn matrix_out(py: Python<'_>, m: Matrix) -> PyResult<Bound<'_, PyArray2<f64>>> {
    let (r, c) = (m.rows, m.cols);
    PyArray1::from_vec(py, m.data).reshape([r, c])
}
