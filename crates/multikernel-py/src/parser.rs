//! The dependency parser for Python (`multikernel.DependencyParser`): sentences given as
//! CoNLL-U text, a file path, or one CoNLL-U block per sentence (the Python side writes a
//! `conllu.TokenList` as its block), read and parsed by `multikernel::estimator::parser`
//! with the GIL released (Ctrl-C stops a fit as for the table estimators,
//! [`crate::interrupt`]).

use crate::errors::OrPy;
use crate::fit::run_info;
use crate::interrupt::{self, PyObserver};
use multikernel::data::conllu::Heads;
use multikernel::estimator::parser::{training_data, DependencyParser, Treebank};
use multikernel::estimator::Task;
use multikernel::estimator::{fit, FitRequest};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use std::path::Path;

/// One sentence's parse for Python: heads, and relations (`None` without a labeler).
type SentenceParse = (Vec<usize>, Option<Vec<String>>);

/// The sentences of `x`: CoNLL-U text (or, with `is_path`, a file's path) or a list of
/// CoNLL-U blocks, one per sentence.
fn treebank(
    py: Python<'_>,
    x: &Bound<'_, PyAny>,
    is_path: bool,
    heads: Heads,
) -> PyResult<Treebank> {
    if x.is_instance_of::<PyString>() {
        let s: String = x.extract()?;
        return if is_path {
            crate::threads::detach(py, || Treebank::read(Path::new(&s), heads)).or_py()
        } else {
            crate::threads::detach(py, || Treebank::parse(&s, "<text>", heads)).or_py()
        };
    }
    let blocks: Vec<String> = x.extract().map_err(|_| {
        PyTypeError::new_err(
            "X: CoNLL-U text, a path, or a list of sentences (each a CoNLL-U block)",
        )
    })?;
    crate::threads::detach(py, || Treebank::from_blocks(&blocks, heads)).or_py()
}

/// Trains a parser on the sentences `x` (see [`treebank`]; gold heads required).
/// `templates`: arc template text (`templates_origin` names it in errors); `None` the
/// default templates. Returns the parser and the run's dict (as `fit`).
#[pyfunction]
#[pyo3(signature = (
    x, *, is_path=false, templates=None, templates_origin=None, projective=false,
    learner="auto", c=None, settings=Vec::new(), seed=0, verbose=false
))]
#[allow(clippy::too_many_arguments)]
pub fn fit_parser<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    is_path: bool,
    templates: Option<String>,
    templates_origin: Option<String>,
    projective: bool,
    learner: &str,
    c: Option<f64>,
    settings: Vec<(String, String)>,
    seed: u64,
    verbose: bool,
) -> PyResult<(PyParser, Bound<'py, PyDict>)> {
    let (spec, plan, kind) =
        crate::fit::structured_request(Task::Parsing, learner, c, settings, seed)?;
    let train = treebank(py, x, is_path, Heads::Required)?;
    let origin = templates_origin.unwrap_or_else(|| "<templates>".into());
    let observer = PyObserver::new(verbose);
    let (result, interrupted) = interrupt::run(py, &observer, || {
        let t = templates.as_deref().map(|t| (t, origin.as_str()));
        fit(
            &training_data(&train, t, projective)?,
            FitRequest::new(&spec).select_structured(plan.as_ref()),
            &observer,
        )
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    let fitted = result.or_py()?;
    let kind = fitted.selection.as_ref().map_or(kind, |s| s.learner);
    let info = run_info(py, &fitted, kind)?;
    crate::fit::set_selection(py, &info, fitted.selection.as_ref())?;
    let inner = DependencyParser::new(fitted.model).or_py()?;
    Ok((PyParser { inner }, info))
}

/// A trained dependency parser. Pickles through its model bytes (a parser's model file).
#[pyclass(module = "multikernel._core", name = "Parser", frozen)]
pub struct PyParser {
    pub(crate) inner: DependencyParser,
}

#[pymethods]
impl PyParser {
    /// The parser from model bytes (`to_bytes`, or a parser's model file).
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<PyParser> {
        Ok(PyParser {
            inner: DependencyParser::from_bytes(data).or_py()?,
        })
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().or_py()?))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let ctor = py.get_type::<PyParser>().getattr("from_bytes")?;
        let bytes = slf.get().to_bytes(py)?;
        PyTuple::new(py, [ctor.into_any(), PyTuple::new(py, [bytes])?.into_any()])
    }

    /// Each sentence's heads (0 = the root) and relations (`None` without a labeler).
    #[pyo3(signature = (x, *, is_path=false))]
    fn parse(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        is_path: bool,
    ) -> PyResult<Vec<SentenceParse>> {
        let tb = treebank(py, x, is_path, Heads::Optional)?;
        let parses = crate::threads::detach(py, || self.inner.parse(&tb)).or_py()?;
        Ok(parses.into_iter().map(|p| (p.heads, p.deprels)).collect())
    }

    /// The sentences parsed, written back: CoNLL-U text for text or a path, a list of
    /// blocks for a list (comments, multi-word ranges and empty nodes kept).
    #[pyo3(signature = (x, *, is_path=false))]
    fn write<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        is_path: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let tb = treebank(py, x, is_path, Heads::Optional)?;
        let blocks =
            crate::threads::detach(py, || tb.to_blocks(&self.inner.parse(&tb)?)).or_py()?;
        if x.is_instance_of::<PyString>() {
            Ok(PyString::new(py, &blocks.concat()).into_any())
        } else {
            Ok(PyList::new(py, blocks)?.into_any())
        }
    }

    /// Attachment scores against the gold trees of `x`, as `multikernel eval` prints them:
    /// `{"uas", "las" (None without relations), "uas_no_ig" (None without ig arcs),
    /// "tokens" (scored), "sentences"}`, in percent.
    #[pyo3(signature = (x, *, is_path=false))]
    fn attachment_scores<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        is_path: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let tb = treebank(py, x, is_path, Heads::Required)?;
        let s = crate::threads::detach(py, || self.inner.score(&tb)).or_py()?;
        let d = PyDict::new(py);
        d.set_item("uas", s.uas)?;
        d.set_item("las", s.las)?;
        d.set_item("uas_no_ig", s.uas_no_ig)?;
        d.set_item("tokens", s.tokens)?;
        d.set_item("sentences", tb.len())?;
        Ok(d)
    }

    /// The relations it predicts, sorted (empty without a labeler).
    #[getter]
    fn classes(&self) -> Vec<String> {
        self.inner.classes()
    }

    #[getter]
    fn labeled(&self) -> bool {
        self.inner.labeled()
    }

    #[getter]
    fn projective(&self) -> bool {
        self.inner.projective()
    }

    /// The arc templates, one feature group each.
    #[getter]
    fn templates(&self) -> Vec<String> {
        self.inner.templates()
    }

    /// Each template's weight (the norm of its weights), in `templates` order.
    #[getter]
    fn template_weights(&self) -> Vec<f64> {
        self.inner.template_weights()
    }

    /// The model's summary as JSON (as `Model.summary_json`).
    fn summary_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.inner.model().summary())
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    fn __str__(&self) -> String {
        self.inner.model().summary().to_string()
    }
}
