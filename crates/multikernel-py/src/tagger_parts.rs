//! A tagger's cutting-plane fit over parts of its sentences held on other processes
//! (`multikernel.dask.fit_dask` on a `SequenceTagger(learner="mtl")`), through
//! `multikernel::estimator::tagger::parts`: the parts' keys and counts merged here, each part
//! compiled and kept where it is (`TagPart`, `CompiledPart`), and the loop run here
//! ([`fit_tagger_parts`]) with a Python callable that returns every part's separation sums
//! at a point. The model is the one `fit_tagger` trains on all the sentences.

use crate::compiled_part::PyCompiledPart;
use crate::errors::OrPy;
use crate::fit::run_info;
use crate::interrupt::{self, PyObserver};
use crate::part_calls::{call_separate, finish, unpack_attributes, Attributes, Points};
use crate::part_featurizers::PyPartFeaturizer;
use crate::tagger::{sentences, PyTagger};
use multikernel::estimator::parts::Point;
use multikernel::estimator::tagger::parts::{
    fit_parts, PartFeaturizer, PartFormat, PartKeys, TagCounts, TagPart,
};
use multikernel::estimator::{LearnerKind, Task};
use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::Mutex;

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
