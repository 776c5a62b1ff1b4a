//! The merged featurizers of a fit over parts, read once per worker and fit: a tagger's
//! (`PartFeaturizer`, from `merge_tag_counts`) and a parser's (`ParseFeaturizer`, from
//! `parse_featurizer`), and the layout of the weights of either.

use crate::errors::OrPy;
use multikernel::estimator::parser::parts::ParseFeaturizer;
use multikernel::estimator::parts::PartLayout;
use multikernel::estimator::tagger::parts::PartFeaturizer;
use pyo3::prelude::*;

/// The featurizer of all the parts (read once per worker and fit).
#[pyclass(module = "multikernel._core", name = "PartFeaturizer", frozen)]
pub struct PyPartFeaturizer {
    pub(crate) inner: PartFeaturizer,
}

#[pymethods]
impl PyPartFeaturizer {
    /// The featurizer from the bytes of `merge_tag_counts`.
    #[new]
    fn new(py: Python<'_>, data: Vec<u8>) -> PyResult<PyPartFeaturizer> {
        let inner = py.detach(|| PartFeaturizer::from_bytes(&data)).or_py()?;
        Ok(PyPartFeaturizer { inner })
    }

    /// The number of weights of a model over these features.
    #[getter]
    fn dim(&self) -> usize {
        self.inner.dim()
    }
}

/// A parser's featurizer of all the parts (read once per worker and fit).
#[pyclass(module = "multikernel._core", name = "ParseFeaturizer", frozen)]
pub struct PyParseFeaturizer {
    pub(crate) inner: ParseFeaturizer,
}

#[pymethods]
impl PyParseFeaturizer {
    /// The featurizer from the bytes of `parse_featurizer`.
    #[new]
    fn new(py: Python<'_>, data: Vec<u8>) -> PyResult<PyParseFeaturizer> {
        let inner = py.detach(|| ParseFeaturizer::from_bytes(&data)).or_py()?;
        Ok(PyParseFeaturizer { inner })
    }

    /// The number of arc weights.
    #[getter]
    fn dim(&self) -> usize {
        self.inner.dim()
    }
}

/// The weights of a tagger's or a parser's merged featurizer.
pub(crate) fn layout_of(featurizer: &Bound<'_, PyAny>) -> PyResult<PartLayout> {
    if let Ok(f) = featurizer.cast::<PyPartFeaturizer>() {
        return Ok(f.get().inner.layout());
    }
    if let Ok(f) = featurizer.cast::<PyParseFeaturizer>() {
        return Ok(f.get().inner.layout());
    }
    Err(pyo3::exceptions::PyTypeError::new_err(
        "featurizer: a PartFeaturizer (a tagger's) or a ParseFeaturizer (a parser's)",
    ))
}
