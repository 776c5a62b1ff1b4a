//! `fit_precomputed`: lp-MKL, SimpleMKL or Gauss-Seidel on the caller's kernel matrices
//! (`kernels="precomputed"` of the Python estimators), with the library's selection of C.

use crate::errors::OrPy;
use crate::fit::{self, run_info, set_selection, targets};
use crate::interrupt::{self, PyObserver};
use crate::model::PyModel;
use multikernel::estimator::TaskKind;
use multikernel::estimator::{
    fit as fit_rs, parse_p, KernelData, Learner, LearnerKind, LearnerSpec, PrecomputedLearner,
    PrecomputedSpec, Settings, Task,
};
use multikernel::kernel::MemoryLimit;
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Trains on precomputed training kernel matrices (`kernels[m]` is `K_m(X_train,
/// X_train)`, n x n, C-contiguous float64, borrowed; copied once into the solver): lp-MKL
/// (`learner=None`, `"auto"` or `"lp-mkl"`), or SimpleMKL / Gauss-Seidel around the exact
/// SVM (`"simplemkl"`, `"gauss-seidel"`), with the built-in selection of C (and lp-MKL's p
/// when not given) when `c=None`. `settings`: the learner's settings as `(name, text)`
/// pairs of the registry (lp-MKL's `p`; the wrappers' `max_iter`, `epsilon`, `tol`,
/// `svm_tol`). Targets as in `fit`.
#[pyfunction]
#[pyo3(signature = (
    kernels, y, *, n_classes=None, class_names=None, kernel_names=None, learner=None, c=None,
    settings=Vec::new(), bias=true, seed=0, memory_limit_gb=8.0, verbose=false
))]
#[allow(clippy::too_many_arguments)]
pub fn fit_precomputed<'py>(
    py: Python<'py>,
    kernels: Vec<PyReadonlyArray2<'py, f64>>,
    y: PyReadonlyArray1<'py, f64>,
    n_classes: Option<usize>,
    class_names: Option<Vec<String>>,
    kernel_names: Option<Vec<String>>,
    learner: Option<String>,
    c: Option<f64>,
    settings: Vec<(String, String)>,
    bias: bool,
    seed: u64,
    memory_limit_gb: f64,
    verbose: bool,
) -> PyResult<(PyModel, Bound<'py, PyDict>)> {
    let (learner, p) = precomputed_learner(learner.as_deref(), &fit::settings(settings))?;
    let memory = MemoryLimit::try_gib(memory_limit_gb).or_py()?;
    let refs = crate::model::kernel_views(&kernels)?;
    let y = y.as_slice().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err("y: a contiguous float64 array is needed")
    })?;
    let t = targets(y, n_classes, class_names)?;
    let task = match n_classes {
        None => TaskKind::Regression,
        Some(2) => TaskKind::Binary,
        Some(_) => TaskKind::Multiclass,
    };
    let kind = learner.kind();
    let spec = PrecomputedSpec {
        learner,
        p,
        c,
        bias,
        seed,
        memory,
        names: kernel_names,
    };
    let observer = PyObserver::new(verbose);
    let (result, interrupted) = interrupt::run(py, &observer, || {
        let data = KernelData {
            kernels: &refs,
            targets: &t,
            task,
        };
        fit_rs(data, &spec, &observer)
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    let r = result.or_py()?;
    let info = run_info(py, &r, kind)?;
    set_selection(py, &info, r.selection.as_ref())?;
    Ok((PyModel::new(r.model), info))
}

/// The learner of `fit_precomputed` and lp-MKL's p: lp-MKL, or a wrapper with its settings
/// (a setting of another learner is an error naming the learners that take it).
fn precomputed_learner(
    name: Option<&str>,
    given: &Settings,
) -> PyResult<(PrecomputedLearner, Option<f64>)> {
    let kind = match name.map(str::trim) {
        None | Some("auto") => LearnerKind::LpMkl,
        Some(s) => s.parse::<LearnerKind>().or_py()?,
    };
    if !matches!(
        kind,
        LearnerKind::LpMkl | LearnerKind::SimpleMkl | LearnerKind::GaussSeidel
    ) {
        return Err(PyValueError::new_err(format!(
            "kernels='precomputed' trains lp-mkl, simplemkl or gauss-seidel; learner='{kind}' \
             computes its own kernels"
        )));
    }
    given.check_owner(kind).or_py()?;
    if kind == LearnerKind::LpMkl {
        let p = given.text("p").map(parse_p).transpose().or_py()?;
        return Ok((PrecomputedLearner::LpMkl, p));
    }
    let mut spec = LearnerSpec::new(Task::Binary, Learner::default_for(kind));
    spec.set_all(given).or_py()?;
    match spec.learner {
        Learner::SimpleMkl(w) => Ok((PrecomputedLearner::SimpleMkl(w), None)),
        Learner::GaussSeidel(w) => Ok((PrecomputedLearner::GaussSeidel(w), None)),
        _ => unreachable!("a wrapper, checked above"),
    }
}
