//! The library's errors as Python exceptions, with the library's messages unchanged.
//!
//! | `multikernel::Error`                        | Python        |
//! |---------------------------------------------|---------------|
//! | `Io`                                        | `OSError`     |
//! | `Memory` (an allocation above the limit)    | `MemoryError` |
//! | every other kind (bad parameter, shape, data, unsupported, model bytes, numerical) | `ValueError` |
//!
//! Arrays of the wrong type or layout are refused before the library sees them, with
//! `TypeError` ([`crate::arrays`]).

use multikernel::Error;
use pyo3::exceptions::{PyMemoryError, PyOSError, PyValueError};
use pyo3::PyErr;

/// The Python exception of a library error.
pub fn to_py(err: Error) -> PyErr {
    let msg = err.to_string();
    match err {
        Error::Io { .. } => PyOSError::new_err(msg),
        Error::Memory { .. } => PyMemoryError::new_err(msg),
        _ => PyValueError::new_err(msg),
    }
}

/// `?` for library results inside the bindings.
pub trait OrPy<T> {
    fn or_py(self) -> pyo3::PyResult<T>;
}

impl<T> OrPy<T> for multikernel::Result<T> {
    fn or_py(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}
