//! The online learner over parts of the sentences held on other processes, by iterative
//! parameter mixing (`multikernel.dask.fit_dask` on a `SequenceTagger(learner="online")` or
//! a `DependencyParser(learner="online")`), through
//! `multikernel::estimator::parts::online`: the plan made here ([`online_plan`]) with every
//! part's share of `L(0)` ([`online_plan_with_zero`]), each epoch's passes run where the
//! parts are (`CompiledPart.online_pass`) and mixed here ([`fit_tagger_passes`],
//! [`fit_parser_passes`]) from a Python callable that returns them. States and passes
//! travel as bytes.

use crate::errors::OrPy;
use crate::fit::run_info;
use crate::interrupt::{self, PyObserver};
use crate::parser::PyParser;
use crate::part_calls::{finish, merged_arcs, unpack_attributes, Attributes};
use crate::tagger::PyTagger;
use multikernel::estimator::parser::parts::{fit_parser_passes as fit_parser, ParseFeaturizer};
use multikernel::estimator::parser::DependencyParser;
use multikernel::estimator::parts::online::{OnlinePlan, PassParts};
use multikernel::estimator::parts::CompiledPart;
use multikernel::estimator::tagger::parts::{fit_passes as fit_tagger, PartFeaturizer};
use multikernel::estimator::Fitted;
use multikernel::estimator::{LearnerKind, LearnerSpec, Task};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::sync::Mutex;

fn task_of(task: &str) -> PyResult<Task> {
    match task {
        "sequence" => Ok(Task::Sequence),
        "parsing" => Ok(Task::Parsing),
        other => Err(PyValueError::new_err(format!(
            "task {other:?}: \"sequence\" or \"parsing\""
        ))),
    }
}

fn spec_of(
    task: Task,
    c: Option<f64>,
    settings: Vec<(String, String)>,
    seed: u64,
) -> PyResult<LearnerSpec> {
    Ok(crate::fit::structured_request(task, "online", c, settings, seed)?.0)
}

/// The plan of the online learner over `n` sentences held in parts (`task`: "sequence" or
/// "parsing"; `c`, `settings` and `seed` as the estimator's), as bytes, without `L(0)`.
#[pyfunction]
#[pyo3(signature = (task, n, *, c=None, settings=Vec::new(), seed=0))]
pub fn online_plan<'py>(
    py: Python<'py>,
    task: &str,
    n: usize,
    c: Option<f64>,
    settings: Vec<(String, String)>,
    seed: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    let spec = spec_of(task_of(task)?, c, settings, seed)?;
    let plan = OnlinePlan::new(&spec, n)
        .and_then(|p| p.to_bytes())
        .or_py()?;
    Ok(PyBytes::new(py, &plan))
}

/// The plan with `L(0)` of all the data from the parts' totals (in part order).
#[pyfunction]
pub fn online_plan_with_zero<'py>(
    py: Python<'py>,
    plan: Vec<u8>,
    totals: Vec<f64>,
) -> PyResult<Bound<'py, PyBytes>> {
    let plan = OnlinePlan::from_bytes(&plan)
        .and_then(|p| p.with_loss_at_zero(&totals))
        .and_then(|p| p.to_bytes())
        .or_py()?;
    Ok(PyBytes::new(py, &plan))
}

/// `CompiledPart.loss_at_zero_total(plan)`.
pub(crate) fn loss_at_zero_total(
    py: Python<'_>,
    part: &CompiledPart,
    plan: &[u8],
) -> PyResult<f64> {
    py.detach(|| OnlinePlan::from_bytes(plan).map(|p| part.loss_at_zero_total(&p)))
        .or_py()
}

/// `CompiledPart.online_pass(plan, state, epoch, part)`: the pass's bytes.
pub(crate) fn online_pass<'py>(
    py: Python<'py>,
    compiled: &CompiledPart,
    plan: &[u8],
    state: Option<&[u8]>,
    epoch: usize,
    part: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = crate::threads::detach(py, || {
        let plan = OnlinePlan::from_bytes(plan)?;
        compiled.online_pass(&plan, state, epoch, part)
    })
    .or_py()?;
    Ok(PyBytes::new(py, &bytes))
}

/// Each epoch's passes from the Python callable `passes(state, epoch)` (`state`: the
/// loop's state as bytes, None in the first epoch) that returns every part's pass bytes in
/// part order (None: stop). The callable's exception is kept in `raised`.
fn call_passes(
    passes: &Py<PyAny>,
    state: Option<&[u8]>,
    epoch: usize,
    raised: &Mutex<Option<PyErr>>,
) -> multikernel::Result<Option<Vec<Vec<u8>>>> {
    let out = Python::attach(|py| -> PyResult<Option<Vec<Vec<u8>>>> {
        let state = state.map(|s| PyBytes::new(py, s));
        let out = passes.bind(py).call1((state, epoch))?;
        if out.is_none() {
            return Ok(None);
        }
        let list = out
            .cast::<PyList>()
            .map_err(|_| PyValueError::new_err("passes must return a list of the parts' passes"))?;
        list.iter()
            .map(|item| item.extract::<Vec<u8>>())
            .collect::<PyResult<Vec<_>>>()
            .map(Some)
    });
    out.map_err(|e| {
        let text = e.to_string();
        *raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
        multikernel::Error::data(format!("the parts' passes failed: {text}"))
    })
}

/// `fit` (a tagger's or a parser's fit over passes) with the passes of the Python callable
/// `passes`, on the thread Ctrl-C can stop: the fitted model and its run's information. The
/// callable's own exception is raised in place of the library's error it became.
fn run_fit<'py>(
    py: Python<'py>,
    passes: &Py<PyAny>,
    verbose: bool,
    fit: impl FnOnce(&mut PassParts<'_>, &PyObserver) -> multikernel::Result<Fitted> + Send,
) -> PyResult<(Fitted, Bound<'py, PyDict>)> {
    let observer = PyObserver::new(verbose);
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let (result, interrupted) = interrupt::run(py, &observer, || {
        let mut call = |s: Option<&[u8]>, e: usize| call_passes(passes, s, e, &raised);
        fit(&mut call, &observer)
    });
    let fitted = finish(result, interrupted, raised)?;
    let info = run_info(py, &fitted, LearnerKind::Online)?;
    crate::fit::set_selection(py, &info, fitted.selection.as_ref())?;
    Ok((fitted, info))
}

/// A tagger by the online learner over parts: `featurizer` the parts' merged featurizer,
/// `plan` the plan with `L(0)` the parts ran with (made from the same `c`, `settings` and
/// `seed`), `passes` the callable of [`call_passes`], `attributes` as `fit_tagger_parts`'s.
#[pyfunction]
#[pyo3(signature = (
    featurizer, plan, passes, *, attributes=Vec::new(), c=None, settings=Vec::new(), seed=0,
    verbose=false
))]
#[allow(clippy::too_many_arguments)]
pub fn fit_tagger_passes<'py>(
    py: Python<'py>,
    featurizer: Vec<u8>,
    plan: Vec<u8>,
    passes: Py<PyAny>,
    attributes: Attributes<'py>,
    c: Option<f64>,
    settings: Vec<(String, String)>,
    seed: u64,
    verbose: bool,
) -> PyResult<(PyTagger, Bound<'py, PyDict>)> {
    let spec = spec_of(Task::Sequence, c, settings, seed)?;
    let featurizer = PartFeaturizer::from_bytes(&featurizer).or_py()?;
    let plan = OnlinePlan::from_bytes(&plan).or_py()?;
    let (fitted, info) = run_fit(py, &passes, verbose, |call, observer| {
        fit_tagger(featurizer, &spec, &plan, call, observer)
    })?;
    let attributes = unpack_attributes(&attributes)?;
    Ok((PyTagger::of_model(fitted.model, &attributes)?, info))
}

/// A parser by the online learner over parts: as [`fit_tagger_passes`], with `arcs` the
/// parts' gold arcs as `fit_parser_parts` takes them.
#[pyfunction]
#[pyo3(signature = (
    featurizer, plan, passes, *, arcs=None, c=None, settings=Vec::new(), seed=0, verbose=false
))]
#[allow(clippy::too_many_arguments)]
pub fn fit_parser_passes<'py>(
    py: Python<'py>,
    featurizer: Vec<u8>,
    plan: Vec<u8>,
    passes: Py<PyAny>,
    arcs: Option<Vec<Vec<u8>>>,
    c: Option<f64>,
    settings: Vec<(String, String)>,
    seed: u64,
    verbose: bool,
) -> PyResult<(PyParser, Bound<'py, PyDict>)> {
    let spec = spec_of(Task::Parsing, c, settings, seed)?;
    let (featurizer, arcs) = py
        .detach(|| -> multikernel::Result<_> {
            Ok((
                ParseFeaturizer::from_bytes(&featurizer)?,
                merged_arcs(arcs)?,
            ))
        })
        .or_py()?;
    let plan = OnlinePlan::from_bytes(&plan).or_py()?;
    let (fitted, info) = run_fit(py, &passes, verbose, |call, observer| {
        fit_parser(featurizer, &spec, &plan, call, arcs, observer)
    })?;
    let inner = DependencyParser::new(fitted.model).or_py()?;
    Ok((PyParser { inner }, info))
}
