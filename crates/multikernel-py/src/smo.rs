//! `svm_dual`: the library's exact SVM dual solver (SMO, `multikernel::solver::smo`) on a
//! precomputed kernel, for checking it against libsvm (scikit-learn's SVC / SVR) on the
//! same matrices.

use crate::arrays::rows;
use crate::errors::OrPy;
use multikernel::estimator::smo::{svc, svr, SmoParams};
use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Solves C-SVC (`kind="svc"`, `y` of +1 / -1) or epsilon-SVR (`kind="svr"`, real `y`) on
/// the training kernel `kernel` (n x n) by SMO to the violation `tol` (libsvm's `tol`).
/// Returns a dict: `coef` (per training row: y_i a_i, or a_i - a*_i), `bias` (decision
/// values are `K_test @ coef + bias`), `gap` (primal minus dual objective), `objective`,
/// `violation`, `iterations`, `status`, `seconds` (the solver alone).
#[pyfunction]
#[pyo3(signature = (kernel, y, *, kind="svc", c=1.0, epsilon=0.1, tol=1e-3, max_iter=None))]
#[allow(clippy::too_many_arguments)]
pub fn svm_dual<'py>(
    py: Python<'py>,
    kernel: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    kind: &str,
    c: f64,
    epsilon: f64,
    tol: f64,
    max_iter: Option<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let k = rows(&kernel, "kernel")?;
    let y = y.as_slice().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err("y: a contiguous float64 array is needed")
    })?;
    let params = SmoParams {
        tol,
        max_iter,
        ..SmoParams::default()
    };
    let start = std::time::Instant::now();
    let fit = match kind {
        "svc" => crate::threads::detach(py, || svc(k, y, c, &params, &())),
        "svr" => crate::threads::detach(py, || svr(k, y, c, epsilon, &params, &())),
        other => return Err(PyValueError::new_err(format!("kind = {other}: svc or svr"))),
    }
    .or_py()?;
    let seconds = start.elapsed().as_secs_f64();
    let out = PyDict::new(py);
    out.set_item("coef", PyArray1::from_vec(py, fit.coef))?;
    out.set_item("bias", fit.bias)?;
    out.set_item("gap", fit.gap)?;
    out.set_item("objective", fit.solution.objective)?;
    out.set_item("violation", fit.solution.violation)?;
    out.set_item("iterations", fit.solution.iterations)?;
    out.set_item("status", fit.solution.status.describe())?;
    out.set_item("seconds", seconds)?;
    Ok(out)
}
