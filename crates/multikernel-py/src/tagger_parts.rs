//! A tagger's cutting-plane fit over parts of its sentences held on other processes
//! (`multikernel.dask.fit_dask` on a `SequenceTagger(learner="mtl")`), through
//! `multikernel::estimator::tagger::parts`: the parts' keys and counts merged here, each part
//! compiled and kept where it is (`TagPart`, `CompiledPart`), and the loop run here
//! ([`fit_tagger_parts`]) with a Python callable that returns every part's separation sums
//! at a point. The model is the one `fit_tagger` trains on all the sentences.

use crate::errors::OrPy;
use crate::fit::run_info;
use crate::interrupt::{self, PyObserver};
use crate::tagger::{sentences, PyTagger};
use multikernel::estimator::parts::{
    CompiledPart, LoopCut, LoopState, LoopStep, PartLayout, PartSums, Point, PointReplica,
};
use multikernel::estimator::tagger::parts::{
    fit_parts, PartFeaturizer, PartFormat, PartKeys, TagCounts, TagPart,
};
use multikernel::estimator::{LearnerKind, Task};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use std::sync::{Mutex, RwLock};

/// The feature keys of a part's sentences of feature dicts, as bytes.
#[pyfunction]
pub fn part_keys<'py>(py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let x = sentences(x, false)?;
    let keys = PartKeys::of(x.view()).or_py()?;
    Ok(PyBytes::new(py, &keys.to_bytes().or_py()?))
}

/// The keys of the parts (bytes of [`part_keys`], in the parts' order), merged.
#[pyfunction]
pub fn merge_part_keys<'py>(py: Python<'py>, parts: Vec<Vec<u8>>) -> PyResult<Bound<'py, PyBytes>> {
    let mut merged: Option<PartKeys> = None;
    for p in &parts {
        let k = PartKeys::from_bytes(p).or_py()?;
        merged = Some(match merged {
            None => k,
            Some(m) => m.merge(k),
        });
    }
    let merged = merged.ok_or_else(|| PyValueError::new_err("no parts"))?;
    Ok(PyBytes::new(py, &merged.to_bytes().or_py()?))
}

/// The parts' expansion counts (bytes of `TagPart.counts`), merged into the featurizer
/// (expansions seen at least `min_count` times): its bytes and its number of weights.
#[pyfunction]
#[pyo3(signature = (parts, min_count=1))]
pub fn merge_tag_counts<'py>(
    py: Python<'py>,
    parts: Vec<Vec<u8>>,
    min_count: usize,
) -> PyResult<(Bound<'py, PyBytes>, usize)> {
    let featurizer = py
        .detach(|| -> multikernel::Result<PartFeaturizer> {
            let mut merged: Option<TagCounts> = None;
            for p in &parts {
                let c = TagCounts::from_bytes(p)?;
                merged = Some(match merged {
                    None => c,
                    Some(m) => m.merge(c)?,
                });
            }
            merged
                .ok_or_else(|| multikernel::Error::data("the training set has no sentences"))?
                .part_featurizer(min_count)
        })
        .or_py()?;
    let dim = featurizer.dim();
    Ok((PyBytes::new(py, &featurizer.to_bytes().or_py()?), dim))
}

/// The featurizer of all the parts (read once per worker and fit).
#[pyclass(module = "multikernel._core", name = "PartFeaturizer", frozen)]
pub struct PyPartFeaturizer {
    inner: PartFeaturizer,
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

/// A part of a tagger's training sentences in its columns.
#[pyclass(module = "multikernel._core", name = "TagPart", frozen)]
pub struct PyTagPart {
    inner: TagPart,
}

#[pymethods]
impl PyTagPart {
    /// The part's sentences `x` and label lists `y`: with `templates` (CRF++ template
    /// text), tokens of column strings; with `keys` (bytes of `merge_part_keys`), feature
    /// dicts.
    #[new]
    #[pyo3(signature = (x, y, *, templates=None, templates_origin=None, keys=None))]
    fn new(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: Vec<Vec<String>>,
        templates: Option<String>,
        templates_origin: Option<String>,
        keys: Option<Vec<u8>>,
    ) -> PyResult<PyTagPart> {
        let owned = sentences(x, templates.is_some())?;
        let origin = templates_origin.unwrap_or_else(|| "<templates>".into());
        let keys = keys.map(|k| PartKeys::from_bytes(&k)).transpose().or_py()?;
        if templates.is_some() == keys.is_some() {
            return Err(PyValueError::new_err(
                "a part takes templates (tokens of columns) or keys (feature dicts), one of them",
            ));
        }
        let inner = py
            .detach(|| {
                let format = match (&templates, &keys) {
                    (Some(text), _) => PartFormat::Templates {
                        text,
                        origin: &origin,
                    },
                    (None, k) => PartFormat::Keys(k.as_ref().expect("checked above")),
                };
                TagPart::new(owned.view(), &y, format)
            })
            .or_py()?;
        Ok(PyTagPart { inner })
    }

    /// The attributes of the part's sentences that `featurizer` has features of, with
    /// their features' indices, packed for the network (`fit_tagger_parts`'s
    /// `attributes`): the names' UTF-8 one after the other, each name's length in bytes,
    /// each feature's index.
    fn attributes<'py>(
        &self,
        py: Python<'py>,
        featurizer: &PyPartFeaturizer,
    ) -> (
        Bound<'py, PyBytes>,
        Bound<'py, PyArray1<u64>>,
        Bound<'py, PyArray1<u64>>,
    ) {
        let (text, lengths, indices) = py.detach(|| {
            let mut text = Vec::new();
            let mut lengths = Vec::new();
            let mut indices = Vec::new();
            for (name, j) in self.inner.attributes(&featurizer.inner) {
                text.extend_from_slice(name.as_bytes());
                lengths.push(name.len() as u64);
                indices.push(j as u64);
            }
            (text, lengths, indices)
        });
        (
            PyBytes::new(py, &text),
            PyArray1::from_vec(py, lengths),
            PyArray1::from_vec(py, indices),
        )
    }

    /// The part's expansion counts, as bytes for `merge_tag_counts`.
    fn counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = crate::threads::detach(py, || self.inner.counts()?.to_bytes()).or_py()?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The part's sentences featurized by the merged featurizer.
    fn compile(&self, py: Python<'_>, featurizer: &PyPartFeaturizer) -> PyResult<PyCompiledPart> {
        let inner = crate::threads::detach(py, || self.inner.compile(&featurizer.inner)).or_py()?;
        Ok(PyCompiledPart { inner })
    }
}

/// A part's featurized sentences, kept on its worker.
#[pyclass(module = "multikernel._core", name = "CompiledPart", frozen)]
pub struct PyCompiledPart {
    pub(crate) inner: CompiledPart,
}

/// A part's separation sums as Python sees them: `(indices, values, cost, sentences,
/// fingerprint of the loop's steps to the point)`.
type SumsOut<'py> = (
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<f64>>,
    f64,
    usize,
    u64,
);

#[pymethods]
impl PyCompiledPart {
    /// How many of the model's weights the part's sentences are scored with (what a
    /// worker's replica of the point holds for this part).
    #[getter]
    fn weights_read(&self, py: Python<'_>) -> usize {
        py.detach(|| self.inner.weights_read())
    }

    /// The part's separation sums at the point of `replica`.
    fn separate_at<'py>(
        &self,
        py: Python<'py>,
        replica: &PyPointReplica,
    ) -> PyResult<SumsOut<'py>> {
        let s = crate::threads::detach(py, || {
            let r = replica.inner.read().unwrap_or_else(|e| e.into_inner());
            self.inner.separate_at(&r)
        })
        .or_py()?;
        sums_out(py, s)
    }

    /// The part's sentences' losses at the zero model, summed (its share of `L(0)` in the
    /// online learner's `plan`, bytes of `online_plan`).
    fn loss_at_zero_total(&self, py: Python<'_>, plan: Vec<u8>) -> PyResult<f64> {
        crate::online_parts::loss_at_zero_total(py, &self.inner, &plan)
    }

    /// One pass of the online learner over the part's sentences in `epoch` (from 1) from
    /// `state` (the loop's state as bytes; None: zeros), the part being number `part`: the
    /// pass's bytes (`fit_tagger_passes`, `fit_parser_passes`).
    #[pyo3(signature = (plan, state, epoch, part))]
    fn online_pass<'py>(
        &self,
        py: Python<'py>,
        plan: Vec<u8>,
        state: Option<Vec<u8>>,
        epoch: usize,
        part: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        crate::online_parts::online_pass(py, &self.inner, &plan, state.as_deref(), epoch, part)
    }

    /// The part's CRF losses summed and their gradients' sum at the weights `w`: `(loss,
    /// indices, values, sentences)`, the non-zero entries (`fit_tagger_lbfgs_parts`).
    fn crf_gradient<'py>(
        &self,
        py: Python<'py>,
        w: PyReadonlyArray1<'py, f64>,
    ) -> PyResult<crate::batch_parts::GradientOut<'py>> {
        crate::batch_parts::crf_gradient(py, &self.inner, w)
    }

    /// The part's separation sums at the loop's point itself (`point`: the weights and the
    /// fingerprint `fit_tagger_parts` hands its callable when it sends points).
    fn separate_point<'py>(
        &self,
        py: Python<'py>,
        w: PyReadonlyArray1<'py, f64>,
        hash: u64,
    ) -> PyResult<SumsOut<'py>> {
        let w = w.as_slice().map_err(|_| {
            PyValueError::new_err(
                "the point: a contiguous, aligned array (numpy.require(a, requirements=\"AC\"))",
            )
        })?;
        let s = crate::threads::detach(py, || self.inner.separate_point(w, hash)).or_py()?;
        sums_out(py, s)
    }
}

fn sums_out(py: Python<'_>, s: PartSums) -> PyResult<SumsOut<'_>> {
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

/// Multi-template learning over `n` sentences held in parts: `featurizer` (bytes of
/// `merge_tag_counts`), and `separate(step, index, separation_step, state, point)`, a
/// callable that returns every part's `CompiledPart.separate_at(replica)` (a list, each
/// sentence in one part), or None to stop, where each part's `PointReplica` has followed
/// the loop's `step` (a `PointReplica.apply` tuple; None at the first separation, `index`
/// 0). A part whose replica missed steps is None in the list: the callable is then called
/// again with the loop's `state` (a `PointReplica(featurizer, step, state)` tuple) for
/// those parts. When the fit sends points (`points`: True always, False never, None when
/// the first step shows the dense point to be at most twice a step's bytes), `step` is
/// None and `point` the loop's weights and fingerprint, for
/// `CompiledPart.separate_point(*point)`. `attributes`: every part's `TagPart.attributes`, in the parts' order, which name the
/// state features as one process names them over all the sentences. The
/// settings as `fit_tagger`'s with `learner="mtl"`. Returns the tagger and the run's dict.
#[pyfunction]
#[pyo3(signature = (
    featurizer, n, separate, *, attributes=Vec::new(), c=None, settings=Vec::new(), seed=0,
    verbose=false, points=None
))]
#[allow(clippy::too_many_arguments)]
pub fn fit_tagger_parts<'py>(
    py: Python<'py>,
    featurizer: Vec<u8>,
    n: usize,
    separate: Py<PyAny>,
    attributes: Attributes<'py>,
    c: Option<f64>,
    settings: Vec<(String, String)>,
    seed: u64,
    verbose: bool,
    points: Option<bool>,
) -> PyResult<(PyTagger, Bound<'py, PyDict>)> {
    let (spec, _, _) = crate::fit::structured_request(Task::Sequence, "mtl", c, settings, seed)?;
    let featurizer = PartFeaturizer::from_bytes(&featurizer).or_py()?;
    let observer = PyObserver::new(verbose);
    // The callable's own exception, raised in place of the library's error it became.
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let (result, interrupted) = interrupt::run(py, &observer, || {
        let mut points = Points::of(points);
        let mut call = |p: &Point<'_>| call_separate(&separate, p, &raised, &mut points);
        fit_parts(featurizer, n, &spec, &mut call, &observer)
    });
    let fitted = finish(result, interrupted, raised)?;
    let info = run_info(py, &fitted, LearnerKind::Mtl)?;
    crate::fit::set_selection(py, &info, fitted.selection.as_ref())?;
    let attributes = unpack_attributes(&attributes)?;
    Ok((PyTagger::of_model(fitted.model, &attributes)?, info))
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

fn step_in(t: &Bound<'_, PyTuple>) -> PyResult<LoopStep> {
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

/// The weights of a tagger's or a parser's merged featurizer.
fn layout_of(featurizer: &Bound<'_, PyAny>) -> PyResult<PartLayout> {
    if let Ok(f) = featurizer.cast::<PyPartFeaturizer>() {
        return Ok(f.get().inner.layout());
    }
    if let Ok(f) = featurizer.cast::<crate::parser_parts::PyParseFeaturizer>() {
        return Ok(f.get().inner.layout());
    }
    Err(pyo3::exceptions::PyTypeError::new_err(
        "featurizer: a PartFeaturizer (a tagger's) or a ParseFeaturizer (a parser's)",
    ))
}

/// The loop's point rebuilt from its steps where the parts are (one per worker and fit).
#[pyclass(module = "multikernel._core", name = "PointReplica", frozen)]
pub struct PyPointReplica {
    inner: RwLock<PointReplica>,
}

/// A loop state as Python sees it: `(separation_step, [(indices, values, b)], alpha,
/// factors, best or None, steps, fingerprint of the steps)`.
type StateOut = (
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

#[pymethods]
impl PyPointReplica {
    /// The loop before its first separation, over the weights of `featurizer`; with
    /// `state` (the tuple `fit_tagger_parts` hands its callable), the loop at that state.
    /// With `parts` (a list of `CompiledPart`), it holds only the weights they read.
    #[new]
    #[pyo3(signature = (featurizer, separation_step, state=None, parts=None))]
    fn new(
        py: Python<'_>,
        featurizer: &Bound<'_, PyAny>,
        separation_step: f64,
        state: Option<StateOut>,
        parts: Option<Vec<PyRef<'_, PyCompiledPart>>>,
    ) -> PyResult<PyPointReplica> {
        let parts: Option<Vec<&CompiledPart>> =
            parts.as_ref().map(|p| p.iter().map(|c| &c.inner).collect());
        let layout = layout_of(featurizer)?;
        let inner = py
            .detach(|| {
                let f = &layout;
                let state =
                    state.map(
                        |(step, cuts, alpha, factors, best, steps, hash)| LoopState {
                            separation_step: step,
                            cuts: cuts
                                .into_iter()
                                .map(|(indices, values, b)| LoopCut { indices, values, b })
                                .collect(),
                            alpha,
                            factors,
                            best,
                            steps,
                            hash,
                        },
                    );
                match state {
                    None => PointReplica::new(f, separation_step, parts.as_deref()),
                    Some(s) => PointReplica::from_state(f, s, parts.as_deref()),
                }
            })
            .or_py()?;
        Ok(PyPointReplica {
            inner: RwLock::new(inner),
        })
    }

    /// Follows the loop through `step` (the tuple `fit_tagger_parts` hands its callable).
    fn apply(&self, py: Python<'_>, step: &Bound<'_, PyTuple>) -> PyResult<()> {
        let step = step_in(step)?;
        py.detach(|| {
            let mut r = self.inner.write().unwrap_or_else(|e| e.into_inner());
            r.apply(step)
        })
        .or_py()
    }

    /// Holds also the weights `part` reads: True when it does, False (no change) when a cut
    /// held already dropped some of them (a replica from the loop's state then serves it).
    fn widen(&self, py: Python<'_>, part: &PyCompiledPart) -> PyResult<bool> {
        py.detach(|| {
            let mut r = self.inner.write().unwrap_or_else(|e| e.into_inner());
            r.widen(&part.inner)
        })
        .or_py()
    }

    /// The loop's solves followed so far.
    #[getter]
    fn steps(&self) -> usize {
        self.inner.read().unwrap_or_else(|e| e.into_inner()).steps()
    }
}
