//! The batch CRF (`learner="lbfgs"`) over parts of the sentences held on other processes
//! (`multikernel.dask.fit_dask` on a `SequenceTagger(learner="lbfgs")`), through
//! `multikernel::estimator::parts::batch`: at each point L-BFGS evaluates, a Python callable
//! returns every part's CRF losses and gradient sums (`CompiledPart.crf_gradient`, run where
//! the parts are), added here in the parts' order ([`fit_tagger_lbfgs_parts`]).

use crate::errors::OrPy;
use crate::fit::run_info;
use crate::interrupt::{self, PyObserver};
use crate::part_calls::{finish, unpack_attributes, Attributes};
use crate::tagger::PyTagger;
use multikernel::estimator::parts::batch::PartGradient;
use multikernel::estimator::parts::CompiledPart;
use multikernel::estimator::tagger::parts::{fit_lbfgs_parts, PartFeaturizer};
use multikernel::estimator::{LearnerKind, Task};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::sync::Mutex;

/// A part's gradient as it crosses to Python: the loss sum, the gradient's indices and
/// values, the sentences.
pub(crate) type GradientOut<'py> = (
    f64,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<f64>>,
    usize,
);

/// `CompiledPart.crf_gradient(w)`.
pub(crate) fn crf_gradient<'py>(
    py: Python<'py>,
    part: &CompiledPart,
    w: PyReadonlyArray1<'py, f64>,
) -> PyResult<GradientOut<'py>> {
    let w = w.as_slice().map_err(|_| {
        PyValueError::new_err(
            "the weights: a contiguous, aligned array (numpy.require(a, requirements=\"AC\"))",
        )
    })?;
    let g = crate::threads::detach(py, || part.crf_gradient(w)).or_py()?;
    Ok((
        g.loss,
        PyArray1::from_vec(py, g.indices),
        PyArray1::from_vec(py, g.values),
        g.examples,
    ))
}

/// A part's gradient from the tuple of [`crf_gradient`] (the indices as a uint64 array,
/// the values as a float64 array).
fn gradient_in(item: &Bound<'_, PyAny>) -> PyResult<PartGradient> {
    let shape = || {
        PyValueError::new_err(
            "a part's gradient: a (loss, indices, values, sentences) tuple, the indices a \
             uint64 array and the values a float64 array",
        )
    };
    let t = item.cast::<PyTuple>().map_err(|_| shape())?;
    if t.len() != 4 {
        return Err(shape());
    }
    let indices: PyReadonlyArray1<'_, u64> = t.get_item(1)?.extract().map_err(|_| shape())?;
    let values: PyReadonlyArray1<'_, f64> = t.get_item(2)?.extract().map_err(|_| shape())?;
    Ok(PartGradient {
        loss: t.get_item(0)?.extract()?,
        indices: indices.as_array().to_vec(),
        values: values.as_array().to_vec(),
        examples: t.get_item(3)?.extract()?,
    })
}

/// Every part's gradient at `w` from the Python callable `evaluate(w)` (None: stop). The
/// callable's exception is kept in `raised`.
fn call_evaluate(
    evaluate: &Py<PyAny>,
    w: &[f64],
    raised: &Mutex<Option<PyErr>>,
) -> multikernel::Result<Option<Vec<PartGradient>>> {
    let out = Python::attach(|py| -> PyResult<Option<Vec<PartGradient>>> {
        let out = evaluate.bind(py).call1((PyArray1::from_slice(py, w),))?;
        if out.is_none() {
            return Ok(None);
        }
        let list = out.cast::<PyList>().map_err(|_| {
            PyValueError::new_err("evaluate must return a list of the parts' gradients")
        })?;
        list.iter()
            .map(|item| gradient_in(&item))
            .collect::<PyResult<Vec<_>>>()
            .map(Some)
    });
    out.map_err(|e| {
        let text = e.to_string();
        *raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
        multikernel::Error::data(format!("the parts' gradients failed: {text}"))
    })
}

/// A tagger by the batch CRF over parts: `featurizer` the parts' merged featurizer (bytes),
/// `n` the sentences, `evaluate(w)` the callable that returns every part's
/// `CompiledPart.crf_gradient(w)` in part order, `attributes` as `fit_tagger_parts`'s; the
/// settings as `fit_tagger`'s with `learner="lbfgs"`. Returns the tagger and the run's dict.
#[pyfunction]
#[pyo3(signature = (
    featurizer, n, evaluate, *, attributes=Vec::new(), c=None, settings=Vec::new(), seed=0,
    verbose=false
))]
#[allow(clippy::too_many_arguments)]
pub fn fit_tagger_lbfgs_parts<'py>(
    py: Python<'py>,
    featurizer: Vec<u8>,
    n: usize,
    evaluate: Py<PyAny>,
    attributes: Attributes<'py>,
    c: Option<f64>,
    settings: Vec<(String, String)>,
    seed: u64,
    verbose: bool,
) -> PyResult<(PyTagger, Bound<'py, PyDict>)> {
    let (spec, _, _) = crate::fit::structured_request(Task::Sequence, "lbfgs", c, settings, seed)?;
    let featurizer = PartFeaturizer::from_bytes(&featurizer).or_py()?;
    let observer = PyObserver::new(verbose);
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let (result, interrupted) = interrupt::run(py, &observer, || {
        let mut call = |w: &[f64]| call_evaluate(&evaluate, w, &raised);
        fit_lbfgs_parts(featurizer, n, &spec, &mut call, &observer)
    });
    let fitted = finish(result, interrupted, raised)?;
    let info = run_info(py, &fitted, LearnerKind::Lbfgs)?;
    crate::fit::set_selection(py, &info, fitted.selection.as_ref())?;
    let attributes = unpack_attributes(&attributes)?;
    Ok((PyTagger::of_model(fitted.model, &attributes)?, info))
}
