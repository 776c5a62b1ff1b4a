//! `IncrementalFit`: the online learner trained chunk by chunk
//! ([`multikernel::pipeline::table::incremental`]), for `partial_fit` and for data-parallel
//! training by iterative parameter mixing (`multikernel.dask.fit_dask`).
//!
//! A fit is set up on its first chunk ([`PyIncrementalFit::start`]: classes,
//! standardization, the regression targets' scale and the kernels' data-dependent
//! parameters come from it), then [`PyIncrementalFit::partial_fit`] runs one round of Alg.
//! 1 per row of each chunk, in the chunk's order, with the GIL released. Every kernel needs
//! an explicit map (`linear`, or `approx=rff` / `nystroem` ...): exact kernels are refused
//! (ValueError), since the fit keeps no rows.
//!
//! The fit serializes (JSON through serde: `to_bytes` / `from_bytes`, and so it pickles),
//! and [`PyIncrementalFit::mix`] averages fits that started from the same one (parameter
//! averaging, then one proximal step of the regularizer).

use crate::arrays::rows;
use crate::errors::{to_py, OrPy};
use crate::interrupt::{self, PyObserver};
use crate::model::PyModel;
use multikernel::data::{TableRef, Targets};
use multikernel::estimator::incremental::VectorFitConfig;
use multikernel::estimator::incremental::{Given, IncrementalFit};
use multikernel::estimator::{Learner, LearnerKind, LearnerSpec, Task};
use multikernel::kernel::{KernelSpec, MemoryLimit};
use multikernel::model::Model;
use multikernel::Error;
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

/// An incremental fit of the online learner (module docs). Pickles through its JSON bytes.
#[pyclass(module = "multikernel._core", name = "IncrementalFit")]
pub struct PyIncrementalFit {
    inner: IncrementalFit,
}

/// `y` as a contiguous float64 slice of one value per row.
fn target_values<'a>(y: &'a PyReadonlyArray1<'_, f64>, n_rows: usize) -> PyResult<&'a [f64]> {
    let y = y
        .as_slice()
        .map_err(|_| PyTypeError::new_err("y: a contiguous float64 array is needed"))?;
    if y.len() != n_rows {
        return Err(to_py(Error::shape(
            "targets (one per row of X)",
            n_rows,
            y.len(),
        )));
    }
    Ok(y)
}

/// The targets of a chunk: class codes `0..classes.len()` named by `classes`, or real
/// values (`classes=None`).
fn chunk_targets(y: &[f64], classes: Option<&[String]>) -> PyResult<Targets> {
    match classes {
        None => Ok(Targets::Real(y.to_vec())),
        Some(names) => {
            let k = names.len();
            let codes = y
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    if v.fract() == 0.0 && v >= 0.0 && v < k as f64 {
                        Ok(v as usize)
                    } else {
                        Err(PyValueError::new_err(format!(
                            "y[{i}] = {v}: a class code in 0..{k}"
                        )))
                    }
                })
                .collect::<PyResult<Vec<usize>>>()?;
            Ok(Targets::Classes {
                classes: names.to_vec(),
                y: codes,
            })
        }
    }
}

fn column_names(given: Option<Vec<String>>, n_features: usize) -> Vec<String> {
    given.unwrap_or_else(|| (0..n_features).map(|j| format!("x{j}")).collect())
}

#[pymethods]
impl PyIncrementalFit {
    /// Sets a fit up on its first chunk `x` (C-contiguous float64) and `y` (class codes
    /// `0..n_classes` as float64, or real values with `n_classes=None`); it does not train
    /// on it: call `partial_fit` with the chunk next.
    ///
    /// `class_names` names every class (`n_classes` of them, distinct): later chunks are
    /// coded against them, and a first chunk may lack some. `kernels` are SPEC strings with
    /// an explicit map each (`"linear"`, `"rbf:scale=4,approx=rff,dim=1024"`). The
    /// regularization is `lambda = 1 / (c * n_rows)`, as in the whole-table fit where `c`
    /// weighs the loss of each row: `n_rows` is the number of rows the caller means to
    /// stream (per pass), the first chunk's rows when not given. `settings` (the online
    /// learner's, as `(name, text)` pairs of the registry), `bias`, `standardize` (on the
    /// first chunk) and `seed` are `fit`'s.
    #[staticmethod]
    #[pyo3(signature = (
        x, y, *, kernels, n_classes=None, class_names=None, c=1.0, n_rows=None,
        settings=Vec::new(), bias=true, standardize=true, seed=0, feature_names=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn start(
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray1<'_, f64>,
        kernels: Vec<String>,
        n_classes: Option<usize>,
        class_names: Option<Vec<String>>,
        c: f64,
        n_rows: Option<usize>,
        settings: Vec<(String, String)>,
        bias: bool,
        standardize: bool,
        seed: u64,
        feature_names: Option<Vec<String>>,
    ) -> PyResult<PyIncrementalFit> {
        let task = match n_classes {
            None => Task::Regression,
            Some(2) => Task::Binary,
            Some(k) if k > 2 => Task::Multiclass,
            Some(k) => {
                return Err(PyValueError::new_err(format!(
                    "n_classes = {k}: a classifier needs at least 2 classes"
                )))
            }
        };
        let names = match (n_classes, class_names) {
            (None, _) => None,
            (Some(k), None) => Some((0..k).map(|c| c.to_string()).collect::<Vec<_>>()),
            (Some(k), Some(n)) => {
                let distinct: std::collections::HashSet<&String> = n.iter().collect();
                if n.len() != k || distinct.len() != k {
                    return Err(PyValueError::new_err(format!(
                        "class_names: {k} distinct names expected (one per class), found {:?}",
                        n
                    )));
                }
                Some(n)
            }
        };
        if kernels.is_empty() {
            return Err(PyValueError::new_err(
                "kernels = []: at least one kernel with an explicit map",
            ));
        }
        let specs = kernels
            .iter()
            .map(|s| s.parse::<KernelSpec>().or_py())
            .collect::<PyResult<Vec<_>>>()?;
        let given = crate::fit::settings(settings);
        let mut spec = LearnerSpec::new(task, Learner::default_for(LearnerKind::Online))
            .with_kernels(specs)
            .with_seed(seed)
            .with_c(c);
        spec.set_all(&given).or_py()?;
        spec.bias = bias;
        spec.standardize = standardize;
        let checked = spec.check().or_py()?;
        let Learner::Online(o) = &checked.learner else {
            return Err(PyValueError::new_err(
                "the incremental fit is the online learner's",
            ));
        };
        let kind = task
            .vector_kind()
            .ok_or_else(|| PyValueError::new_err("a vector task is needed"))?;
        let xr = rows(&x, "X")?;
        let y = target_values(&y, xr.rows())?;
        if n_rows == Some(0) {
            return Err(PyValueError::new_err("n_rows = 0: at least one row"));
        }
        let n = n_rows.unwrap_or(xr.rows());
        let cfg = VectorFitConfig {
            task: kind,
            loss: o
                .loss
                .ok_or_else(|| PyValueError::new_err("no loss"))?
                .vector_loss(kind)
                .or_py()?,
            kernels: checked.kernels_for(xr.cols()),
            params: {
                let mut params = checked.online_params(n).or_py()?;
                params.steps.epochs = 1;
                params.shuffle = false;
                params
            },
            bias,
            standardize,
            memory: MemoryLimit::default(),
            explicit_linear: true,
        };
        let t = chunk_targets(y, names.as_deref())?;
        let fnames = column_names(feature_names, xr.cols());
        let table = TableRef::new(xr, &t, &fnames).or_py()?;
        let given = Given {
            classes: names,
            ..Given::default()
        };
        let mut inner = IncrementalFit::start(&cfg, table, given).or_py()?;
        inner.pass_rows = n as u64;
        Ok(PyIncrementalFit { inner })
    }

    /// One round of the online learner per row of `x`, in order (the caller shuffles); `y`
    /// as in `start` (class codes against the fit's classes, or real values). The GIL is
    /// released; Ctrl-C stops the pass and raises KeyboardInterrupt, leaving the fit as it
    /// was. Returns the pass's average progressive loss (None on an empty chunk). On an
    /// error (wrong number of features, a bad class code) the fit is unchanged.
    fn partial_fit(
        &mut self,
        py: Python<'_>,
        x: PyReadonlyArray2<'_, f64>,
        y: PyReadonlyArray1<'_, f64>,
    ) -> PyResult<Option<f64>> {
        let xr = rows(&x, "X")?;
        let y = target_values(&y, xr.rows())?;
        let classes = (self.inner.task != multikernel::estimator::TaskKind::Regression)
            .then(|| self.inner.classes.clone());
        let t = chunk_targets(y, classes.as_deref())?;
        let names = self.inner.feature_names.clone();
        if xr.cols() != names.len() {
            return Err(to_py(Error::shape(
                "features of a chunk",
                names.len(),
                xr.cols(),
            )));
        }
        let table = TableRef::new(xr, &t, &names).or_py()?;
        let observer = PyObserver::new(false);
        let mut work = self.inner.clone();
        let (result, interrupted) = interrupt::run(py, &observer, || {
            let pass = work.partial_fit(table, &observer)?;
            Ok::<_, Error>((pass, work))
        });
        if let Some(e) = interrupted {
            return Err(e);
        }
        let (pass, work) = result.or_py()?;
        self.inner = work;
        Ok((pass.rounds > 0).then(|| pass.average_loss()))
    }

    /// The model of the fit so far (the existing `Model`: predicts, summary, bytes).
    fn model(&self, py: Python<'_>) -> PyResult<PyModel> {
        let machine = crate::threads::detach(py, || self.inner.model()).or_py()?;
        Ok(PyModel::new(Model::KernelMachine(machine)))
    }

    /// Iterative parameter mixing: the average of `fits`, which must have started from the
    /// same fit (the same kernels, classes, standardization and settings), then one proximal
    /// step of the regularizer. Rows seen since the last mix add up.
    #[staticmethod]
    fn mix(py: Python<'_>, fits: Vec<PyRef<'_, PyIncrementalFit>>) -> PyResult<PyIncrementalFit> {
        let parts: Vec<IncrementalFit> = fits.iter().map(|f| f.inner.clone()).collect();
        let inner = crate::threads::detach(py, || IncrementalFit::mix(&parts)).or_py()?;
        Ok(PyIncrementalFit { inner })
    }

    /// The fit as bytes (JSON).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = serde_json::to_vec(&self.inner)
            .map_err(|e| PyValueError::new_err(format!("serializing the fit: {e}")))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The fit from `to_bytes`; ValueError on other bytes.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<PyIncrementalFit> {
        let inner: IncrementalFit = serde_json::from_slice(data)
            .map_err(|e| PyValueError::new_err(format!("not the bytes of a fit: {e}")))?;
        Ok(PyIncrementalFit { inner })
    }

    /// Pickling goes through `to_bytes`.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let ctor = py.get_type::<PyIncrementalFit>().getattr("from_bytes")?;
        let bytes = slf.borrow().to_bytes(py)?;
        PyTuple::new(py, [ctor.into_any(), PyTuple::new(py, [bytes])?.into_any()])
    }

    /// Rows trained on so far (over all calls; added up over mixed fits).
    #[getter]
    fn rows_seen(&self) -> u64 {
        self.inner.rows_seen
    }

    /// `partial_fit` calls so far (the most of the mixed fits').
    #[getter]
    fn chunks_seen(&self) -> u64 {
        self.inner.chunks_seen
    }

    /// The average progressive loss of the last `partial_fit` (averaged over mixed fits).
    #[getter]
    fn last_loss(&self) -> Option<f64> {
        self.inner.last_loss
    }

    /// The regularization strength lambda.
    #[getter]
    fn lambda_(&self) -> f64 {
        self.inner.params.lambda
    }

    /// The class names (empty for regression).
    #[getter]
    fn classes(&self) -> Vec<String> {
        self.inner.classes.clone()
    }

    #[getter]
    fn n_features(&self) -> usize {
        self.inner.feature_names.len()
    }

    /// The kernels with their data-dependent parameters fitted on the first chunk.
    #[getter]
    fn kernels(&self) -> Vec<String> {
        self.inner.kernels.iter().map(|k| k.name.clone()).collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "<multikernel IncrementalFit: {} kernels, {} rows seen>",
            self.inner.kernels.len(),
            self.inner.rows_seen
        )
    }
}
