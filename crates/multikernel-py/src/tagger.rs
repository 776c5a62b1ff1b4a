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
use pyo3::types::{PyBool, PyBytes, PyDict, PyFrozenSet, PyList, PySet, PyString, PyTuple};

/// Sentences converted from Python.
pub(crate) enum Owned {
    Dicts(Vec<Vec<Vec<(String, FeatureValue)>>>),
    Columns(Vec<Vec<Vec<String>>>),
}

impl Owned {
    pub(crate) fn view(&self) -> Sentences<'_> {
        match self {
            Owned::Dicts(d) => Sentences::Dicts(d),
            Owned::Columns(c) => Sentences::Columns(c),
        }
    }
}

/// A value that python-crfsuite reads as a list of attribute names (a list, tuple or set).
fn is_list(v: &Bound<'_, PyAny>) -> bool {
    v.is_instance_of::<PyList>()
        || v.is_instance_of::<PyTuple>()
        || v.is_instance_of::<PySet>()
        || v.is_instance_of::<PyFrozenSet>()
}

/// A scalar feature value: a bool, a number (also numpy's), or none of them.
fn number(v: &Bound<'_, PyAny>) -> Option<f64> {
    if v.is_instance_of::<PyBool>() {
        v.extract::<bool>().ok().map(f64::from)
    } else if v.is_instance_of::<PyString>() {
        None
    } else {
        v.extract::<f64>().ok()
    }
}

const VALUE_KINDS: &str = "a feature value is a str, a bool, a number, a dict of them or a \
                           list of strings";

/// Appends the attributes of value `v` of key `key` to `out`, named as python-crfsuite
/// flattens them: nested under `name` (the key, then `name:inner` for a nested dict's key
/// and `name:s` for a list's string `s`). `place` names the value in errors (`X[0][1]['a']`).
fn flatten(
    v: &Bound<'_, PyAny>,
    key: &str,
    name: &str,
    place: &str,
    out: &mut Vec<(String, FeatureValue)>,
) -> PyResult<()> {
    let top = name == key;
    if let Ok(text) = v.cast::<PyString>() {
        let text: String = text.extract()?;
        out.push(if top {
            (key.to_string(), FeatureValue::Text(text))
        } else {
            (
                key.to_string(),
                FeatureValue::Attribute(format!("{name}:{text}"), 1.0),
            )
        });
    } else if let Ok(d) = v.cast::<PyDict>() {
        for (k, inner) in d.iter() {
            let k: String = k.extract().map_err(|_| {
                PyTypeError::new_err(format!("{place}: the keys of a nested dict are strings"))
            })?;
            flatten(
                &inner,
                key,
                &format!("{name}:{k}"),
                &format!("{place}['{k}']"),
                out,
            )?;
        }
    } else if is_list(v) {
        for (n, s) in v.try_iter()?.enumerate() {
            let s = s?;
            let s = s.cast::<PyString>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{place}[{n}] is a {}: a list of feature values holds strings (each the \
                     attribute {name}:s with value 1)",
                    s.get_type().name().map_or("?".into(), |n| n.to_string())
                ))
            })?;
            out.push((
                key.to_string(),
                FeatureValue::Attribute(format!("{name}:{}", s.extract::<String>()?), 1.0),
            ));
        }
    } else if let Some(x) = number(v) {
        if v.is_instance_of::<PyBool>() {
            if top {
                out.push((key.to_string(), FeatureValue::Bool(x != 0.0)));
            } else if x != 0.0 {
                out.push((
                    key.to_string(),
                    FeatureValue::Attribute(name.to_string(), 1.0),
                ));
            }
        } else if top {
            out.push((key.to_string(), FeatureValue::Number(x)));
        } else {
            out.push((
                key.to_string(),
                FeatureValue::Attribute(name.to_string(), x),
            ));
        }
    } else {
        return Err(PyTypeError::new_err(format!(
            "{place} is a {}: {VALUE_KINDS}",
            v.get_type().name()?
        )));
    }
    Ok(())
}

/// A token given as strings, each an attribute with value 1 (python-crfsuite's list of
/// names): the group of `k=v` is `k` (the text before the first `=`), of a string without
/// `=` the string itself.
fn attribute_strings(
    tok: &Bound<'_, PyAny>,
    i: usize,
    t: usize,
) -> PyResult<Vec<(String, FeatureValue)>> {
    let mut out = Vec::new();
    for (n, s) in tok.try_iter()?.enumerate() {
        let s = s?;
        let s: String = s.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "X[{i}][{t}][{n}] is a {}: a token given as a list holds strings (attribute \
                 names such as 'word.lower=the' or 'bias')",
                s.get_type().name().map_or("?".into(), |n| n.to_string())
            ))
        })?;
        let key = s.split_once('=').map_or(s.as_str(), |(k, _)| k).to_string();
        out.push((key, FeatureValue::Attribute(s, 1.0)));
    }
    Ok(out)
}

/// `X`: a list of sentences, each a list of tokens. With `columns` (a tagger reading CRF++
/// templates), every token a sequence of column strings; otherwise every token a feature
/// dict (feature name -> str, bool, number, nested dict or list of strings) or a list of
/// attribute names, flattened as python-crfsuite flattens them.
pub(crate) fn sentences(x: &Bound<'_, PyAny>, columns: bool) -> PyResult<Owned> {
    let mut dicts: Vec<Vec<Vec<(String, FeatureValue)>>> = Vec::new();
    let mut cols: Vec<Vec<Vec<String>>> = Vec::new();
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
            if tok.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err(format!(
                    "X[{i}][{t}] is a str: a token is a dict of features, a list of attribute \
                     names, or (with templates) a tuple of column strings"
                )));
            }
            if let Ok(d) = tok.cast::<PyDict>() {
                if columns {
                    return Err(PyTypeError::new_err(format!(
                        "X[{i}][{t}] is a dict: with templates, tokens are sequences of column \
                         strings (without templates, feature dicts)"
                    )));
                }
                let mut feats = Vec::with_capacity(d.len());
                for (k, v) in d.iter() {
                    let key: String = k.extract().map_err(|_| {
                        PyTypeError::new_err(format!("X[{i}][{t}]: feature names are strings"))
                    })?;
                    flatten(&v, &key, &key, &format!("X[{i}][{t}]['{key}']"), &mut feats)?;
                }
                dt.push(feats);
            } else if columns {
                let c: Vec<String> = tok.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "X[{i}][{t}] is a {}: with templates, a token is a sequence of column \
                         strings",
                        tok.get_type().name().map_or("?".into(), |n| n.to_string())
                    ))
                })?;
                ct.push(c);
            } else if tok.try_iter().is_ok() {
                dt.push(attribute_strings(&tok, i, t)?);
            } else {
                return Err(PyTypeError::new_err(format!(
                    "X[{i}][{t}] is a {}: a token is a dict of features or a list of attribute \
                     names",
                    tok.get_type().name()?
                )));
            }
        }
        dicts.push(dt);
        cols.push(ct);
    }
    Ok(if columns {
        Owned::Columns(cols)
    } else {
        Owned::Dicts(dicts)
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
    let x = sentences(x, templates.is_some())?;
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
    // The attributes' names come from the training sentences (the model keeps hashes).
    let state = py.detach(|| inner.state_features(x.view())).ok();
    Ok((PyTagger { inner, state }, info))
}

/// A state feature's weight: (attribute, label, weight).
type StateWeight = (String, String, f64);

/// A trained sequence tagger. Pickles through its model bytes (a tagger's model file) and
/// the state features named at fit.
#[pyclass(module = "multikernel._core", name = "Tagger", frozen)]
pub struct PyTagger {
    inner: SequenceTagger,
    /// The state features over the training sentences' attributes (`None` for a tagger
    /// read from model bytes, which keep hashes of the attributes, not their names).
    state: Option<Vec<StateWeight>>,
}

impl PyTagger {
    /// The tagger of a fitted model, its state features named over `attributes` (the
    /// parts' lists one after the other; none for a model refused them).
    pub(crate) fn of_model(
        model: multikernel::model::Model,
        attributes: &[(String, usize)],
    ) -> PyResult<PyTagger> {
        let inner = SequenceTagger::new(model).or_py()?;
        let state = inner.state_features_of(attributes).ok();
        Ok(PyTagger { inner, state })
    }
}

#[pymethods]
impl PyTagger {
    /// The tagger from model bytes (`to_bytes`, or a tagger's model file).
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<PyTagger> {
        Ok(PyTagger {
            inner: SequenceTagger::from_bytes(data).or_py()?,
            state: None,
        })
    }

    /// The tagger from model bytes and its state features (what pickling stores).
    #[staticmethod]
    #[pyo3(signature = (data, state=None))]
    fn from_parts(data: &[u8], state: Option<Vec<StateWeight>>) -> PyResult<PyTagger> {
        Ok(PyTagger {
            inner: SequenceTagger::from_bytes(data).or_py()?,
            state,
        })
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().or_py()?))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let ctor = py.get_type::<PyTagger>().getattr("from_parts")?;
        let bytes = slf.get().to_bytes(py)?.into_any();
        let state = slf.get().state.clone().into_pyobject(py)?.into_any();
        PyTuple::new(
            py,
            [
                ctor.into_any(),
                PyTuple::new(py, [bytes, state])?.into_any(),
            ],
        )
    }

    /// The non-zero weight of every state feature `(attribute, label, weight)`: over the
    /// training sentences' attributes when `x` is None (kept at fit), else over those of
    /// the sentences `x`. Attributes are named as python-crfsuite names them.
    #[pyo3(signature = (x=None))]
    fn state_features(
        &self,
        py: Python<'_>,
        x: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<StateWeight>> {
        let columns = !self.inner.reads_dicts();
        if let Some(x) = x {
            let x = sentences(x, columns)?;
            return py.detach(|| self.inner.state_features(x.view())).or_py();
        }
        if let Some(s) = &self.state {
            return Ok(s.clone());
        }
        // A refusal for the model's kind (templates with bigram macros) first.
        let none = if columns {
            Owned::Columns(Vec::new())
        } else {
            Owned::Dicts(Vec::new())
        };
        self.inner.state_features(none.view()).or_py()?;
        Err(PyValueError::new_err(
            "this tagger was read from model bytes, which keep hashes of the attributes, not \
             their names: give the training sentences (state_features(X))",
        ))
    }

    /// The non-zero weight of every label pair `(from, to, weight)`.
    fn transition_features(&self) -> Vec<StateWeight> {
        self.inner.transition_features()
    }

    /// The best label sequence of each sentence.
    fn predict(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<String>>> {
        let x = sentences(x, !self.inner.reads_dicts())?;
        crate::threads::detach(py, || self.inner.predict(x.view())).or_py()
    }

    /// Each token's label probabilities, in `classes` order (CRF loss only).
    fn predict_marginals(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<Vec<Vec<f64>>>> {
        let x = sentences(x, !self.inner.reads_dicts())?;
        crate::threads::detach(py, || self.inner.predict_marginals(x.view()))
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
