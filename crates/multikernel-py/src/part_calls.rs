//! What crosses between a fit over parts, run here, and the Python callable that reaches
//! the parts on other processes (`tagger_parts`, `parser_parts`, `batch_parts`,
//! `online_parts`): the parts' separation sums and the loop's steps and state as Python
//! tuples, the choice between sending points and steps, the parts' attributes and gold
//! arcs merged, and how such a fit ends (Ctrl-C, the callable's exception, the library's
//! error).

use crate::errors::OrPy;
use multikernel::estimator::parser::parts::PartArcs;
use multikernel::estimator::parts::{LoopCut, LoopState, LoopStep, PartSums, Point};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use std::sync::Mutex;

/// A part's separation sums as Python sees them: `(indices, values, cost, sentences,
/// fingerprint of the loop's steps to the point)`.
pub(crate) type SumsOut<'py> = (
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<f64>>,
    f64,
    usize,
    u64,
);

pub(crate) fn sums_out(py: Python<'_>, s: PartSums) -> PyResult<SumsOut<'_>> {
    {
        Ok((
            PyArray1::from_vec(py, s.indices),
            PyArray1::from_vec(py, s.values),
            s.cost,
            s.examples,
            s.hash,
        ))
    }
}

/// Several parts' sums (`CompiledPart.separate_at`'s tuples) as one part's, when the loop
/// computes the same cut from it to the bit (`PartSums::merged_exactly`: integer sums, one
/// fingerprint); None otherwise.
#[pyfunction]
pub fn merge_part_sums<'py>(
    py: Python<'py>,
    parts: Vec<Bound<'py, PyAny>>,
) -> PyResult<Option<SumsOut<'py>>> {
    let parts = parts.iter().map(part_sums).collect::<PyResult<Vec<_>>>()?;
    match py.detach(|| PartSums::merged_exactly(&parts)) {
        Some(s) => sums_out(py, s).map(Some),
        None => Ok(None),
    }
}

/// One part's sums from what the callable returned.
fn part_sums(item: &Bound<'_, PyAny>) -> PyResult<PartSums> {
    let t = item
        .cast::<PyTuple>()
        .ok()
        .filter(|t| t.len() == 5)
        .ok_or_else(|| {
            PyValueError::new_err(
                "separate must return CompiledPart.separate_at's tuples (indices, values, \
                 cost, sentences, fingerprint)",
            )
        })?;
    let indices: PyReadonlyArray1<u64> = t.get_item(0)?.extract()?;
    let values: PyReadonlyArray1<f64> = t.get_item(1)?.extract()?;
    Ok(PartSums {
        indices: aligned(&indices, "indices")?,
        values: aligned(&values, "values")?,
        cost: t.get_item(2)?.extract()?,
        examples: t.get_item(3)?.extract()?,
        hash: t.get_item(4)?.extract()?,
    })
}

/// The parts' sums at `p` from the Python callable `separate(step, index,
/// separation_step, state)` (module documentation of `fit_tagger_parts`): called with no
/// state, then again with the loop's state when some part's replica missed steps. The
/// callable's exception is kept in `raised` (raised in place of the error it becomes).
pub(crate) fn call_separate(
    separate: &Py<PyAny>,
    p: &Point<'_>,
    raised: &Mutex<Option<PyErr>>,
    points: &mut Points,
) -> multikernel::Result<Option<Vec<PartSums>>> {
    let send_point = points.send(p);
    Python::attach(|py| {
        let f = separate.bind(py);
        if send_point {
            let point = (PyArray1::from_slice(py, p.at), p.hash);
            let out = f.call1((py.None(), p.index, p.separation_step, py.None(), point))?;
            return sums_of(&out, false);
        }
        let step = p.step.map(|s| step_out(py, s)).transpose()?;
        let mut out = f.call1((
            step.clone(),
            p.index,
            p.separation_step,
            py.None(),
            py.None(),
        ))?;
        // Parts whose process missed steps (None): again, with the loop's state.
        let missed = |out: &Bound<'_, PyAny>| -> PyResult<bool> {
            Ok(!out.is_none()
                && out
                    .cast::<PyList>()
                    .map_err(|_| {
                        PyValueError::new_err("separate must return a list of the parts' sums")
                    })?
                    .iter()
                    .any(|item| item.is_none()))
        };
        if missed(&out)? {
            let state = state_out(p.state());
            out = f.call1((step, p.index, p.separation_step, state, py.None()))?;
            return sums_of(&out, true);
        }
        sums_of(&out, false)
    })
    .map_err(|e: PyErr| {
        let text = e.to_string();
        *raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
        multikernel::Error::data(format!("the separation failed: {text}"))
    })
}

/// The parts' sums the callable returned (None: stop); `again`: the call that had the
/// loop's state, which must give every part's.
fn sums_of(out: &Bound<'_, PyAny>, again: bool) -> PyResult<Option<Vec<PartSums>>> {
    if out.is_none() {
        return Ok(None);
    }
    let list = out
        .cast::<PyList>()
        .map_err(|_| PyValueError::new_err("separate must return a list of the parts' sums"))?;
    if list.iter().any(|item| item.is_none()) {
        return Err(PyValueError::new_err(if again {
            "separate returned no sums for a part given the loop's state"
        } else {
            "separate returned no sums for a part given the point"
        }));
    }
    list.iter()
        .map(|item| part_sums(&item))
        .collect::<PyResult<Vec<_>>>()
        .map(Some)
}

/// Whether the callable gets the loop's point itself or the step that moves the parts'
/// replicas (`fit_tagger_parts`'s `points`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Points {
    /// Always the step (the replicas rebuild every point).
    Never,
    /// Always the point.
    Always,
    /// The step, until the first step shows that the point is not much larger than a
    /// step (at most twice its bytes: cuts nearly dense, as a parser's): then the point
    /// for the rest of the fit, which spares the workers the replica's pass over the
    /// working set. `Some(decision)` once decided.
    Auto(Option<bool>),
}

impl Points {
    pub(crate) fn of(points: Option<bool>) -> Points {
        match points {
            None => Points::Auto(None),
            Some(true) => Points::Always,
            Some(false) => Points::Never,
        }
    }

    /// Whether to send the point at `p`.
    fn send(&mut self, p: &Point<'_>) -> bool {
        match self {
            Points::Never => false,
            Points::Always => true,
            Points::Auto(Some(d)) => *d,
            Points::Auto(decided) => {
                let Some(step) = p.step else {
                    return false;
                };
                let step_bytes = 16 * step.cut.indices.len()
                    + 8 * (step.alpha.len() + step.factors.len())
                    + step.keep.len();
                let send = 8 * p.at.len() <= 2 * step_bytes;
                *decided = Some(send);
                send
            }
        }
    }
}

/// A fit over parts as Python sees its end: Ctrl-C, then the callable's own exception,
/// then the library's error.
pub(crate) fn finish<T>(
    result: multikernel::Result<T>,
    interrupted: Option<PyErr>,
    raised: Mutex<Option<PyErr>>,
) -> PyResult<T> {
    if let Some(e) = interrupted {
        return Err(e);
    }
    if let Some(e) = raised.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    result.or_py()
}

/// Every part's attributes as `TagPart.attributes` gives them: the attributes' text, their
/// lengths in bytes, their features' indices.
pub(crate) type Attributes<'py> = Vec<(
    Vec<u8>,
    PyReadonlyArray1<'py, u64>,
    PyReadonlyArray1<'py, u64>,
)>;

/// The parts' attributes (`TagPart.attributes`), one list in the parts' order.
pub(crate) fn unpack_attributes(parts: &Attributes<'_>) -> PyResult<Vec<(String, usize)>> {
    let mut out = Vec::new();
    for (text, lengths, indices) in parts {
        let (lengths, indices) = (aligned(lengths, "lengths")?, aligned(indices, "indices")?);
        if lengths.len() != indices.len() {
            return Err(PyValueError::new_err(
                "attributes: as many lengths as indices",
            ));
        }
        let mut at = 0usize;
        for (&len, &j) in lengths.iter().zip(indices.iter()) {
            let end = at
                .checked_add(len as usize)
                .filter(|&e| e <= text.len())
                .ok_or_else(|| PyValueError::new_err("attributes: lengths past the text"))?;
            let name = std::str::from_utf8(&text[at..end])
                .map_err(|_| PyValueError::new_err("attributes: a name is not UTF-8"))?;
            out.push((name.to_string(), j as usize));
            at = end;
        }
    }
    Ok(out)
}

/// A loop step as Python sees it: `(best_moved, cut indices, cut values, cut b, alpha,
/// factors, keep)`.
type StepOut<'py> = (
    bool,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<f64>>,
    f64,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<bool>>,
);

fn step_out<'py>(py: Python<'py>, s: &LoopStep) -> PyResult<StepOut<'py>> {
    Ok((
        s.best_moved,
        PyArray1::from_slice(py, &s.cut.indices),
        PyArray1::from_slice(py, &s.cut.values),
        s.cut.b,
        PyArray1::from_slice(py, &s.alpha),
        PyArray1::from_slice(py, &s.factors),
        PyArray1::from_slice(py, &s.keep),
    ))
}

fn vec_of<T: numpy::Element + Copy>(item: Bound<'_, PyAny>) -> PyResult<Vec<T>> {
    let a: PyReadonlyArray1<T> = item.extract()?;
    aligned(&a, "a loop step's array")
}

/// The values of a contiguous, aligned 1-D array (an array unpickled from the network may
/// be misaligned: `numpy.require(a, requirements="AC")` copies it into one that is not).
fn aligned<T: numpy::Element + Copy>(a: &PyReadonlyArray1<'_, T>, what: &str) -> PyResult<Vec<T>> {
    a.as_slice().map(<[T]>::to_vec).map_err(|_| {
        PyValueError::new_err(format!(
            "{what}: a contiguous, aligned array is needed (numpy.require(a, requirements=\"AC\"))"
        ))
    })
}

pub(crate) fn step_in(t: &Bound<'_, PyTuple>) -> PyResult<LoopStep> {
    if t.len() != 7 {
        return Err(PyValueError::new_err(
            "a loop step is (best_moved, indices, values, b, alpha, factors, keep)",
        ));
    }
    Ok(LoopStep {
        best_moved: t.get_item(0)?.extract()?,
        cut: LoopCut {
            indices: vec_of(t.get_item(1)?)?,
            values: vec_of(t.get_item(2)?)?,
            b: t.get_item(3)?.extract()?,
        },
        alpha: vec_of(t.get_item(4)?)?,
        factors: vec_of(t.get_item(5)?)?,
        keep: vec_of(t.get_item(6)?)?,
    })
}

/// A loop state as Python sees it: `(separation_step, [(indices, values, b)], alpha,
/// factors, best or None, steps, fingerprint of the steps)`.
pub(crate) type StateOut = (
    f64,
    Vec<(Vec<u64>, Vec<f64>, f64)>,
    Vec<f64>,
    Vec<f64>,
    Option<Vec<f64>>,
    usize,
    u64,
);

fn state_out(s: LoopState) -> StateOut {
    (
        s.separation_step,
        s.cuts
            .into_iter()
            .map(|c| (c.indices, c.values, c.b))
            .collect(),
        s.alpha,
        s.factors,
        s.best,
        s.steps,
        s.hash,
    )
}

/// The parts' gold arcs (each part's bytes, in part order) joined; `None` for none.
pub(crate) fn merged_arcs(arcs: Option<Vec<Vec<u8>>>) -> multikernel::Result<Option<PartArcs>> {
    arcs.map(|parts| {
        parts
            .iter()
            .map(|p| PartArcs::from_bytes(p))
            .reduce(|a, b| Ok(a?.merge(b?)))
            .unwrap_or_else(|| Ok(PartArcs::default()))
    })
    .transpose()
}
