//! A trained model for Python: predictions on borrowed numpy arrays with the GIL released,
//! its summary, and its bytes (the versioned model-file format), which are also how it
//! pickles.

use crate::arrays::{matrix_out, rows};
use crate::errors::OrPy;
use multikernel::data::Targets;
use multikernel::kernel::MemoryLimit;
use multikernel::model::Model;
use numpy::{PyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

/// A trained multikernel model (any learner, a vector task). Pickles through its bytes.
#[pyclass(module = "multikernel._core", name = "Model", frozen)]
pub struct PyModel {
    pub inner: Model,
}

impl PyModel {
    pub fn new(inner: Model) -> PyModel {
        PyModel { inner }
    }
}

/// Predictions as numpy: class indices (int64) or values (float64).
fn targets_out(py: Python<'_>, t: Targets) -> Bound<'_, PyAny> {
    match t {
        Targets::Classes { y, .. } => {
            let codes: Vec<i64> = y.into_iter().map(|c| c as i64).collect();
            PyArray1::from_vec(py, codes).into_any()
        }
        Targets::Real(v) => PyArray1::from_vec(py, v).into_any(),
    }
}

/// Borrowed views of kernel matrices.
pub fn kernel_views<'a>(
    kernels: &'a [PyReadonlyArray2<'_, f64>],
) -> PyResult<Vec<multikernel::data::MatrixRef<'a>>> {
    kernels
        .iter()
        .enumerate()
        .map(|(m, k)| rows(k, &format!("kernel {m}")))
        .collect()
}

fn limit(memory_limit_gb: Option<f64>) -> PyResult<MemoryLimit> {
    match memory_limit_gb {
        None => Ok(MemoryLimit::default()),
        Some(g) => MemoryLimit::try_gib(g).or_py(),
    }
}

#[pymethods]
impl PyModel {
    /// The model from the bytes of a model file (`to_bytes`, or a file `multikernel train`
    /// wrote). Raises ValueError on bytes of another format or version.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<PyModel> {
        Ok(PyModel::new(Model::from_bytes(data).or_py()?))
    }

    /// The model as the bytes of a model file (JSON in a versioned envelope).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.inner.to_bytes().or_py()?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Pickling goes through the model bytes, never through a refit.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let ctor = py.get_type::<PyModel>().getattr("from_bytes")?;
        let bytes = slf.get().to_bytes(py)?;
        PyTuple::new(py, [ctor.into_any(), PyTuple::new(py, [bytes])?.into_any()])
    }

    /// Decision values, `rows x outputs` (one column for binary and regression; one per
    /// class for multiclass). Binary: positive means the second class. `x` is borrowed
    /// (C-contiguous float64), the GIL released while the model works.
    #[pyo3(signature = (x, memory_limit_gb=None))]
    fn decision_function<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        memory_limit_gb: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let lim = limit(memory_limit_gb)?;
        let xr = rows(&x, "X")?;
        let m =
            crate::threads::detach(py, || self.inner.decision_function_with(xr, &lim)).or_py()?;
        Ok(matrix_out(py, m)?.into_any())
    }

    /// Predictions: class indices into `classes` (int64) or values (float64).
    #[pyo3(signature = (x, memory_limit_gb=None))]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f64>,
        memory_limit_gb: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let lim = limit(memory_limit_gb)?;
        let xr = rows(&x, "X")?;
        let t = crate::threads::detach(py, || self.inner.predict_with(xr, &lim)).or_py()?;
        Ok(targets_out(py, t))
    }

    /// Decision values from test-by-train kernel matrices (`kernels[m]` is `K_m(X_test,
    /// X_train)`, C-contiguous float64, borrowed) of a model trained on precomputed kernels.
    fn decision_kernels<'py>(
        &self,
        py: Python<'py>,
        kernels: Vec<PyReadonlyArray2<'py, f64>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let refs = kernel_views(&kernels)?;
        let m = crate::threads::detach(py, || self.inner.decision_kernels(&refs)).or_py()?;
        Ok(matrix_out(py, m)?.into_any())
    }

    /// Predictions from test-by-train kernel matrices: class indices (int64) or values.
    fn predict_kernels<'py>(
        &self,
        py: Python<'py>,
        kernels: Vec<PyReadonlyArray2<'py, f64>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let refs = kernel_views(&kernels)?;
        let t = crate::threads::detach(py, || self.inner.predict_kernels(&refs)).or_py()?;
        Ok(targets_out(py, t))
    }

    /// `binary`, `multiclass` or `regression` (`sequence`, `parsing` for models read from
    /// files of those tasks).
    #[getter]
    fn task(&self) -> &'static str {
        self.inner.task_name()
    }

    /// The class names the model was trained with (empty for regression).
    #[getter]
    fn classes(&self) -> Vec<String> {
        self.inner.classes().to_vec()
    }

    #[getter]
    fn n_features(&self) -> usize {
        self.inner.n_features()
    }

    #[getter]
    fn feature_names(&self) -> Vec<String> {
        self.inner.feature_names().to_vec()
    }

    /// The model's self-description as JSON: learner, task, settings, headline, the kernel
    /// table (`columns`, `kernels` with `name` and `values`), notes.
    fn summary_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.inner.summary())
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
    }

    /// The kernels with one weight each (`Summary::kernel_weights`: lp-MKL's theta, the
    /// online learner's normalized group norms, ...), as (name, weight) pairs.
    fn kernel_weights(&self) -> Vec<(String, f64)> {
        self.inner.summary().kernel_weights()
    }

    /// The summary as `multikernel inspect` prints it.
    fn __str__(&self) -> String {
        self.inner.summary().to_string()
    }

    fn __repr__(&self) -> String {
        let s = self.inner.summary();
        format!(
            "<multikernel Model: {} ({}), {} kernels>",
            s.learner,
            s.task,
            s.kernels.len()
        )
    }
}
