//! The sequence tagger for Python (`multikernel.SequenceTagger`): sentences as lists of
//! tokens (feature dicts or column tuples) converted once with the GIL held, then trained
//! and tagged by `multikernel::estimator::tagger` with the GIL released (Ctrl-C stops a fit
//! as for the table estimators, [`crate::interrupt`]).

use crate::errors::OrPy;
use crate::fit::run_info;
use crate::interrupt::{self, PyObserver};
use multikernel::estimator::tagger::{
    tag_scores, training_data, FeatureValue, Sentences, SequenceTagger,
};
use multikernel::estimator::{fit, FitRequest, Task};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyString, PyTuple};

/// Sentences converted from Python.
enum Owned {
    Dicts(Vec<Vec<Vec<(String, FeatureValue)>>>),
    Columns(Vec<Vec<Vec<String>>>),
}

impl Owned {
    fn view(&self) -> Sentences<'_> {
        match self {
            Owned::Dicts(d) => Sentences::Dicts(d),
            Owned::Columns(c) => Sentences::Columns(c),
        }
    }
}

fn value(v: &Bound<'_, PyAny>, i: usize, t: usize, key: &str) -> PyResult<FeatureValue> {
    if v.is_instance_of::<PyBool>() {
        Ok(FeatureValue::Bool(v.extract()?))
    } else if v.is_instance_of::<PyString>() {
        Ok(FeatureValue::Text(v.extract()?))
    } else if v.is_instance_of::<PyInt>() || v.is_instance_of::<PyFloat>() {
        Ok(FeatureValue::Number(v.extract()?))
    } else if let Ok(x) = v.extract::<f64>() {
        Ok(FeatureValue::Number(x))
    } else {
        Err(PyTypeError::new_err(format!(
            "X[{i}][{t}]['{key}'] is a {}: a feature value is a str, a bool or a number",
            v.get_type().name()?
        )))
    }
}

/// `X`: a list of sentences, each a list of tokens, every token a dict (feature name ->
/// str, bool or number) or every token a sequence of strings (columns).
fn sentences(x: &Bound<'_, PyAny>) -> PyResult<Owned> {
    let mut dicts: Vec<Vec<Vec<(String, FeatureValue)>>> = Vec::new();
    let mut columns: Vec<Vec<Vec<String>>> = Vec::new();
    let mut as_dicts: Option<bool> = None;
    for (i, s) in x.try_iter()?.enumerate() {
        let s = s?;
        if s.is_instance_of::<PyString>() || s.is_instance_of::<PyDict>() {
            return Err(PyTypeError::new_err(format!(
                "X[{i}] is a {}: each sentence is a list of tokens",
                s.get_type().name()?
            )));
        }
        let mut dt = Vec::new();
        let mut ct = Vec::new();
        for (t, tok) in s.try_iter()?.enumerate() {
            let tok = tok?;
            let is_dict = tok.is_instance_of::<PyDict>();
            match as_dicts {
                None => as_dicts = Some(is_dict),
                Some(d) if d != is_dict => {
                    return Err(PyTypeError::new_err(format!(
                        "X[{i}][{t}] is a {}; the first token is a {}: tokens are all feature \
                         dicts or all column tuples",
                        tok.get_type().name()?,
                        if d { "dict" } else { "sequence of strings" }
                    )))
                }
                Some(_) => {}
            }
            if is_dict {
                let d = tok.cast::<PyDict>()?;
                let mut feats = Vec::with_capacity(d.len());
                for (k, v) in d.iter() {
                    let key: String = k.extract().map_err(|_| {
                        PyTypeError::new_err(format!("X[{i}][{t}]: feature names are strings"))
                    })?;
                    let val = value(&v, i, t, &key)?;
                    feats.push((key, val));
                }
                dt.push(feats);
            } else {
                if tok.is_instance_of::<PyString>() {
                    return Err(PyTypeError::new_err(format!(
                        "X[{i}][{t}] is a str: a token is a dict of features or a tuple of \
                         column strings"
                    )));
                }
                let cols: Vec<String> = tok.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "X[{i}][{t}]: a token is a dict of features or a sequence of strings"
                    ))
                })?;
                ct.push(cols);
            }
        }
        dicts.push(dt);
        columns.push(ct);
    }
    Ok(if as_dicts.unwrap_or(true) {
        Owned::Dicts(dicts)
    } else {
        Owned::Columns(columns)
    })
}

/// Trains a tagger on sentences `x` with labels `y` (a list of label lists). `templates`:
/// CRF++ template text for tokens given as columns (`templates_origin` names it in
/// errors). Returns the tagger and the run's dict (as `fit`).
#[pyfunction]
#[pyo3(signature = (
    x, y, *, templates=None, templates_origin=None, learner="auto", c=None, settings=Vec::new(),
    seed=0, verbose=false
))]
#[allow(clippy::too_many_arguments)]
pub fn fit_tagger<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    y: Vec<Vec<String>>,
    templates: Option<String>,
    templates_origin: Option<String>,
    learner: &str,
    c: Option<f64>,
    settings: Vec<(String, String)>,
    seed: u64,
    verbose: bool,
) -> PyResult<(PyTagger, Bound<'py, PyDict>)> {
    let (spec, plan, kind) =
        crate::fit::structured_request(Task::Sequence, learner, c, settings, seed)?;
    let x = sentences(x)?;
    let origin = templates_origin.unwrap_or_else(|| "<templates>".into());
    let observer = PyObserver::new(verbose);
    let (result, interrupted) = interrupt::run(py, &observer, || {
        let t = templates.as_deref().map(|t| (t, origin.as_str()));
        fit(
            &training_data(x.view(), &y, t)?,
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
    let inner = SequenceTagger::new(fitted.model).or_py()?;
    Ok((PyTagger { inner }, info))
}

/// A trained sequence tagger. Pickles through its model bytes (a tagger's model file).
#[pyclass(module = "multikernel._core", name = "Tagger", frozen)]
pub struct PyTagger {
    inner: SequenceTagger,
}

#[pymethods]
impl PyTagger {
    /// The tagger from model bytes (`to_bytes`, or a tagger's model file).
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<PyTagger> {
        Ok(PyTagger {
            inner: SequenceTagger::from_bytes(data).or_py()?,
        })
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().or_py()?))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let ctor = py.get_type::<PyTagger>().getattr("from_bytes")?;
        let bytes = slf.get().to_bytes(py)?;
        PyTuple::new(py, [ctor.into_any(), PyTuple::new(py, [bytes])?.into_any()])
    }

    /// The best label sequence of each sentence.
    fn predict(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<String>>> {
        let x = sentences(x)?;
        py.detach(|| self.inner.predict(x.view())).or_py()
    }

    /// Each token's label probabilities, in `classes` order (CRF loss only).
    fn predict_marginals(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<Vec<Vec<f64>>>> {
        let x = sentences(x)?;
        py.detach(|| self.inner.predict_marginals(x.view()))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    #[getter]
    fn classes(&self) -> Vec<String> {
        self.inner.classes()
    }

    /// The feature groups: `B` (label pairs), then each key or template line.
    #[getter]
    fn templates(&self) -> Vec<String> {
        self.inner.templates()
    }

    /// Each group's weight (MTL's mu, or SPOM's group norm), in `templates` order.
    #[getter]
    fn template_weights(&self) -> Vec<f64> {
        self.inner.template_weights()
    }

    #[getter]
    fn is_crf(&self) -> bool {
        self.inner.is_crf()
    }

    #[getter]
    fn reads_dicts(&self) -> bool {
        self.inner.reads_dicts()
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

/// Token and chunk counts of predicted label lists against gold ones: `(tokens,
/// correct_tokens, gold_chunks, predicted_chunks, correct_chunks)`, chunks as conlleval
/// counts them (`multikernel score`).
#[pyfunction]
pub fn tag_counts(
    y_true: Vec<Vec<String>>,
    y_pred: Vec<Vec<String>>,
) -> PyResult<(usize, usize, usize, usize, usize)> {
    let s = tag_scores(&y_true, &y_pred).or_py()?;
    Ok((
        s.tokens,
        s.correct,
        s.chunks.gold,
        s.chunks.predicted,
        s.chunks.correct,
    ))
}
