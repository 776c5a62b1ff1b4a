//! A parser's cutting-plane fit over parts of its sentences held on other processes
//! (`multikernel.dask.fit_dask` on a `DependencyParser(learner="mtl")`), through
//! `multikernel::estimator::parser::parts`: the parts' attribute values and feature keys
//! merged here, each part compiled and kept where it is (`ParsePart`, `CompiledPart`), the
//! loop run here ([`fit_parser_parts`]) with the Python callable of `fit_tagger_parts`
//! (`part_calls::call_separate`), and the relation labeler trained here on the parts'
//! gold arcs. The model is the one `fit_parser` trains on all the sentences.

use crate::compiled_part::PyCompiledPart;
use crate::errors::OrPy;
use crate::fit::run_info;
use crate::interrupt::{self, PyObserver};
use crate::parser::PyParser;
use crate::part_calls::{call_separate, finish, merged_arcs, Points};
use crate::part_featurizers::PyParseFeaturizer;
use multikernel::estimator::parser::parts::{
    fit_parser_parts as fit_parts, ParseFeaturizer, ParsePart, PartArcKeys, PartValues,
};
use multikernel::estimator::parser::DependencyParser;
use multikernel::estimator::parts::Point;
use multikernel::estimator::{LearnerKind, Task};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::Mutex;

/// A part of a parser's training sentences (one CoNLL-U block each, with its tree).
#[pyclass(module = "multikernel._core", name = "ParsePart", frozen)]
pub struct PyParsePart {
    inner: ParsePart,
}

#[pymethods]
impl PyParsePart {
    /// The part's sentences `blocks` under the arc `templates` (their text; None: the
    /// default templates), projective trees or any.
    #[new]
    #[pyo3(signature = (blocks, *, templates=None, templates_origin=None, projective=false))]
    fn new(
        py: Python<'_>,
        blocks: Vec<String>,
        templates: Option<String>,
        templates_origin: Option<String>,
        projective: bool,
    ) -> PyResult<PyParsePart> {
        let origin = templates_origin.unwrap_or_else(|| "<templates>".into());
        let inner = crate::threads::detach(py, || {
            ParsePart::new(
                &blocks,
                templates.as_deref().map(|t| (t, origin.as_str())),
                projective,
            )
        })
        .or_py()?;
        Ok(PyParsePart { inner })
    }

    /// The attribute values of the part's sentences, as bytes for `merge_parse_values`.
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.detach(|| self.inner.values().to_bytes()).or_py()?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The feature keys of the part's sentences under the merged `values` (bytes of
    /// `merge_parse_values`), as bytes for `merge_parse_keys`.
    fn keys<'py>(&self, py: Python<'py>, values: Vec<u8>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py
            .detach(|| {
                self.inner
                    .keys(&PartValues::from_bytes(&values)?)?
                    .to_bytes()
            })
            .or_py()?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The part's sentences featurized by the merged featurizer.
    fn compile(&self, py: Python<'_>, featurizer: &PyParseFeaturizer) -> PyResult<PyCompiledPart> {
        let inner = crate::threads::detach(py, || self.inner.compile(&featurizer.inner)).or_py()?;
        Ok(PyCompiledPart { inner })
    }

    /// The part's gold arcs with their relations and the labeler's features, as bytes for
    /// `fit_parser_parts` (None when the parser does not label arcs).
    fn gold_arcs<'py>(
        &self,
        py: Python<'py>,
        featurizer: &PyParseFeaturizer,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let bytes = py
            .detach(|| {
                self.inner
                    .gold_arcs(&featurizer.inner)?
                    .map(|a| a.to_bytes())
                    .transpose()
            })
            .or_py()?;
        Ok(bytes.map(|b| PyBytes::new(py, &b)))
    }
}

/// The parts' messages (bytes, in the parts' order) read by `read`, merged in order by
/// `merge`, as bytes.
fn merged<T>(
    py: Python<'_>,
    parts: Vec<Vec<u8>>,
    read: fn(&[u8]) -> multikernel::Result<T>,
    merge: fn(T, T) -> T,
    write: fn(&T) -> multikernel::Result<Vec<u8>>,
) -> PyResult<Bound<'_, PyBytes>> {
    let bytes = py
        .detach(|| -> multikernel::Result<Vec<u8>> {
            let all = parts
                .iter()
                .map(|p| read(p))
                .reduce(|a, b| Ok(merge(a?, b?)))
                .ok_or_else(|| multikernel::Error::data("no parts"))??;
            write(&all)
        })
        .or_py()?;
    Ok(PyBytes::new(py, &bytes))
}

/// The parts' values (bytes of `ParsePart.values`, in the parts' order), merged.
#[pyfunction]
pub fn merge_parse_values(py: Python<'_>, parts: Vec<Vec<u8>>) -> PyResult<Bound<'_, PyBytes>> {
    merged(
        py,
        parts,
        PartValues::from_bytes,
        PartValues::merge,
        PartValues::to_bytes,
    )
}

/// The parts' keys (bytes of `ParsePart.keys`, in the parts' order), merged.
#[pyfunction]
pub fn merge_parse_keys(py: Python<'_>, parts: Vec<Vec<u8>>) -> PyResult<Bound<'_, PyBytes>> {
    merged(
        py,
        parts,
        PartArcKeys::from_bytes,
        PartArcKeys::merge,
        PartArcKeys::to_bytes,
    )
}

/// The featurizer of all the parts from their merged `values` and `keys`, under the
/// parts' templates and trees: its bytes and its number of arc weights.
#[pyfunction]
#[pyo3(signature = (values, keys, *, templates=None, templates_origin=None, projective=false))]
pub fn parse_featurizer<'py>(
    py: Python<'py>,
    values: Vec<u8>,
    keys: Vec<u8>,
    templates: Option<String>,
    templates_origin: Option<String>,
    projective: bool,
) -> PyResult<(Bound<'py, PyBytes>, usize)> {
    let origin = templates_origin.unwrap_or_else(|| "<templates>".into());
    let (bytes, dim) = py
        .detach(|| -> multikernel::Result<(Vec<u8>, usize)> {
            let f = ParseFeaturizer::of_parts(
                templates.as_deref().map(|t| (t, origin.as_str())),
                projective,
                PartValues::from_bytes(&values)?,
                PartArcKeys::from_bytes(&keys)?,
            )?;
            Ok((f.to_bytes()?, f.dim()))
        })
        .or_py()?;
    Ok((PyBytes::new(py, &bytes), dim))
}

/// Multi-template learning for a parser over `n` sentences held in parts: `featurizer`
/// (bytes of `parse_featurizer`), `separate` as `fit_tagger_parts`'s (every part's
/// `CompiledPart.separate_at(replica)`, with replicas `PointReplica(ParseFeaturizer, ...)`),
/// and `arcs` every part's `ParsePart.gold_arcs` in the parts' order (None when the parser
/// does not label arcs). The settings as `fit_parser`'s with `learner="mtl"`. Returns the
/// parser and the run's dict.
#[pyfunction]
#[pyo3(signature = (
    featurizer, n, separate, *, arcs=None, c=None, settings=Vec::new(), seed=0, verbose=false,
    points=None
))]
#[allow(clippy::too_many_arguments)]
pub fn fit_parser_parts<'py>(
    py: Python<'py>,
    featurizer: Vec<u8>,
    n: usize,
    separate: Py<PyAny>,
    arcs: Option<Vec<Vec<u8>>>,
    c: Option<f64>,
    settings: Vec<(String, String)>,
    seed: u64,
    verbose: bool,
    points: Option<bool>,
) -> PyResult<(PyParser, Bound<'py, PyDict>)> {
    let (spec, _, _) = crate::fit::structured_request(Task::Parsing, "mtl", c, settings, seed)?;
    let (featurizer, arcs) = py
        .detach(|| -> multikernel::Result<_> {
            Ok((
                ParseFeaturizer::from_bytes(&featurizer)?,
                merged_arcs(arcs)?,
            ))
        })
        .or_py()?;
    let observer = PyObserver::new(verbose);
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let (result, interrupted) = interrupt::run(py, &observer, || {
        let mut points = Points::of(points);
        let mut call = |p: &Point<'_>| call_separate(&separate, p, &raised, &mut points);
        fit_parts(featurizer, n, &spec, &mut call, arcs, &observer)
    });
    let fitted = finish(result, interrupted, raised)?;
    let info = run_info(py, &fitted, LearnerKind::Mtl)?;
    crate::fit::set_selection(py, &info, fitted.selection.as_ref())?;
    let inner = DependencyParser::new(fitted.model).or_py()?;
    Ok((PyParser { inner }, info))
}
