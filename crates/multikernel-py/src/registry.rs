//! The registry and the kernels as Python sees them: the learner settings
//! (`learner_settings`, from which the estimators build their parameters' constraints), the
//! default and streaming kernel dictionaries, and kernel SPEC strings checked.

use crate::errors::OrPy;
use multikernel::estimator::registry::{self, Domain};
use multikernel::kernel::{default_dictionary, streaming_dictionary, KernelSpec};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The default kernel dictionary for `n_features` inputs, as SPEC strings.
#[pyfunction]
pub fn dictionary(n_features: usize) -> Vec<String> {
    default_dictionary(n_features)
        .iter()
        .map(|k| k.to_string())
        .collect()
}

/// The kernels of an incremental fit with `kernels="auto"` (explicit maps only), as SPEC
/// strings: the library's streaming dictionary.
#[pyfunction]
pub fn streaming_kernels() -> Vec<String> {
    streaming_dictionary()
        .iter()
        .map(|k| k.to_string())
        .collect()
}

/// The learner registry (`multikernel::estimator::registry`): one dict per setting with its
/// `name`, `flag`, `learners`, `domain` (`positive_real`, `non_negative_real`, `norm`,
/// `count`, `choice`, `text`, `switch`), `choices`, `default`, `doc`, `python` (a keyword
/// of the table estimators) and `tagger` (a keyword of `SequenceTagger`), `parser` (of `DependencyParser`). The estimators build their parameter constraints from it.
#[pyfunction]
pub fn learner_settings(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    registry::SETTINGS
        .iter()
        .map(|s| {
            let d = PyDict::new(py);
            d.set_item("name", s.name)?;
            d.set_item("flag", s.flag)?;
            d.set_item(
                "learners",
                s.learners.iter().map(|k| k.name()).collect::<Vec<_>>(),
            )?;
            let (domain, choices): (&str, &[&str]) = match s.domain {
                Domain::PositiveReal => ("positive_real", &[]),
                Domain::NonNegativeReal => ("non_negative_real", &[]),
                Domain::Norm => ("norm", &[]),
                Domain::Count => ("count", &[]),
                Domain::Choice(c) => ("choice", c),
                Domain::Text => ("text", &[]),
                Domain::Switch => ("switch", &[]),
                _ => ("text", &[]),
            };
            d.set_item("domain", domain)?;
            d.set_item("choices", choices.to_vec())?;
            d.set_item("default", s.default)?;
            d.set_item("doc", s.doc)?;
            d.set_item("python", s.python)?;
            let structured = registry::STRUCTURED_SETTINGS.contains(&s.name);
            d.set_item("tagger", structured)?;
            d.set_item("parser", structured)?;
            Ok(d)
        })
        .collect()
}

/// Checks a kernel SPEC string and returns it in its canonical spelling; ValueError with
/// what is accepted otherwise.
#[pyfunction]
pub fn parse_kernel(spec: &str) -> PyResult<String> {
    Ok(spec.parse::<KernelSpec>().or_py()?.to_string())
}
