//! `fit`: a [`LearnerSpec`] from a table's settings given by name, trained on a borrowed
//! table, with the library's built-in selection (`multikernel::estimator::auto`) when no
//! `C` is given, by the rule `multikernel train` applies (`estimator::selection_plan`).
//!
//! The learner settings come as `(name, text)` pairs ([`Settings`]), the registry's names
//! and the command line's text, so a new setting needs no edit here.

use crate::arrays::rows;
use crate::errors::OrPy;
use crate::interrupt::{self, PyObserver};
use crate::model::PyModel;
use multikernel::data::{TableRef, Targets};
use multikernel::estimator::registry;
use multikernel::estimator::{
    fit as fit_rs, selection_plan, FitRequest, Learner, LearnerKind, LearnerSpec, Selection,
    SelectionRequest, Settings, Task,
};
use multikernel::kernel::{KernelSpec, MemoryLimit};
use multikernel::run::RunStatus;
use multikernel::Error;
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// Mirror descent and UCD run this many iterations unless told otherwise: a fixed number
/// (not the CLI's 10-second budget), so that the same `random_state` gives the same model.
pub const POLY_ITERATIONS: u64 = 1000;

/// The `settings` argument of the doors: `(name, text)` pairs, the registry's names with
/// the command line's text (the Python layer writes numbers with `repr`).
pub(crate) fn settings(given: Vec<(String, String)>) -> Settings {
    given
        .into_iter()
        .fold(Settings::new(), |all, (name, text)| all.with(&name, text))
}

/// A tagger's or a parser's request: the spec, the structured selection when it runs (the
/// library's rule, as `train` applies it: `learner="auto"`, `C=None`, no learner setting),
/// and the learner the spec names. `learner="auto"` without the selection is the online
/// learner (the Python default before the selection), or multi-template learning when a
/// setting only it takes is given (`q`, `eps`, `max_iter`, ...); `C=None` is 1.
pub(crate) fn structured_request(
    task: Task,
    learner: &str,
    c: Option<f64>,
    given: Vec<(String, String)>,
    seed: u64,
) -> PyResult<(
    multikernel::estimator::LearnerSpec,
    Option<multikernel::estimator::StructuredPlan>,
    LearnerKind,
)> {
    let given = settings(given);
    let named: Option<LearnerKind> = match learner.trim() {
        "auto" => None,
        s => Some(s.parse::<LearnerKind>().or_py()?),
    };
    let plan = multikernel::estimator::structured_plan(&SelectionRequest {
        task,
        learner: named,
        strength_given: c.is_some(),
        c,
        streaming: false,
        settings: &given,
    });
    let mtl_only = given.iter().next().is_some()
        && given
            .iter()
            .all(|(n, _)| registry::owners(n) == [LearnerKind::Mtl]);
    let kind = named.unwrap_or(if mtl_only {
        LearnerKind::Mtl
    } else {
        LearnerKind::Online
    });
    let spec = given
        .structured_spec(task, kind, c.unwrap_or(1.0), seed)
        .or_py()?;
    Ok((spec, plan, kind))
}

/// Kernel SPEC strings (`"rbf"`, `"poly:degree=2"`, `"perfeature:linear"`, ...); `None`
/// or `"auto"` for the learner's default (the kernel dictionary on tables).
fn parse_kernels(kernels: Option<Vec<String>>) -> PyResult<Vec<KernelSpec>> {
    match kernels {
        None => Ok(Vec::new()),
        Some(list) if list.len() == 1 && list[0].trim() == "auto" => Ok(Vec::new()),
        Some(list) if list.is_empty() => Err(PyValueError::new_err(
            "kernels = []: at least one kernel, or \"auto\" for the default dictionary",
        )),
        Some(list) => list
            .iter()
            .map(|s| s.parse::<KernelSpec>().or_py())
            .collect(),
    }
}

/// The targets: class codes `0..n_classes` (as float64) or real values. `names` name the
/// classes in the model (its summary, `multikernel inspect`); the codes when absent.
pub(crate) fn targets(
    y: &[f64],
    n_classes: Option<usize>,
    names: Option<Vec<String>>,
) -> PyResult<Targets> {
    match n_classes {
        None => Ok(Targets::Real(y.to_vec())),
        Some(k) => {
            let mut codes = Vec::with_capacity(y.len());
            for (i, &v) in y.iter().enumerate() {
                if v.fract() != 0.0 || v < 0.0 || v >= k as f64 {
                    return Err(PyValueError::new_err(format!(
                        "y[{i}] = {v}: a class code in 0..{k}"
                    )));
                }
                codes.push(v as usize);
            }
            let classes = match names {
                Some(n) if n.len() == k => {
                    let distinct: std::collections::HashSet<&String> = n.iter().collect();
                    if distinct.len() == k {
                        n
                    } else {
                        (0..k).map(|c| c.to_string()).collect()
                    }
                }
                Some(n) => {
                    return Err(PyValueError::new_err(format!(
                        "class_names: {k} names expected (one per class), found {}",
                        n.len()
                    )))
                }
                None => (0..k).map(|c| c.to_string()).collect(),
            };
            Ok(Targets::Classes { classes, y: codes })
        }
    }
}

/// Trains a model on rows `x` (C-contiguous float64, borrowed) and targets `y`.
///
/// Classification: `y` holds class codes `0..n_classes` (the Python layer encodes labels of
/// any type, and may name them with `class_names`); regression: `n_classes=None`.
/// `settings`: the learner settings given, as `(name, text)` pairs of the registry. With
/// `c=None` and `select=True` the built-in selection picks C (and the learner when
/// `learner=None`, lp-MKL's p, the online eta0) by seeded 5-fold cross-validation, where the
/// library's rule says it runs; otherwise one fit with `c` (default 1).
///
/// Returns the model and a dict on the run: `learner`, `status`, `steps`, `unit`,
/// `seconds`, `lambda`, `notes`, `selection` (headline, grid lines, seconds) or None.
/// Ctrl-C stops the fit within a poll of the learner and raises KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (
    x, y, *, n_classes=None, learner=None, kernels=None, c=None, select=true,
    settings=Vec::new(), bias=true, standardize=true, seed=0, memory_limit_gb=8.0,
    verbose=false, feature_names=None, class_names=None, sample_weight=None
))]
#[allow(clippy::too_many_arguments)]
pub fn fit<'py>(
    py: Python<'py>,
    x: PyReadonlyArray2<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
    n_classes: Option<usize>,
    learner: Option<String>,
    kernels: Option<Vec<String>>,
    c: Option<f64>,
    select: bool,
    settings: Vec<(String, String)>,
    bias: bool,
    standardize: bool,
    seed: u64,
    memory_limit_gb: f64,
    verbose: bool,
    feature_names: Option<Vec<String>>,
    class_names: Option<Vec<String>>,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
) -> PyResult<(PyModel, Bound<'py, PyDict>)> {
    let mut given = self::settings(settings);
    let task = match n_classes {
        None => Task::Regression,
        Some(2) => Task::Binary,
        Some(_) => Task::Multiclass,
    };
    let named: Option<LearnerKind> = match &learner {
        None => None,
        Some(s) if s.trim() == "auto" => None,
        Some(s) => Some(s.parse::<LearnerKind>().or_py()?),
    };
    // Whether the selection runs, and over which learners: the library's rule, the one the
    // command line applies (a setting that restates its default is no choice).
    let request = SelectionRequest {
        task,
        learner: named,
        strength_given: c.is_some(),
        c,
        streaming: false,
        settings: &given,
    };
    let plan = if select {
        selection_plan(&request)
    } else {
        None
    };
    // The base spec's learner: the plan's, or the online learner when the settings given are
    // its own (as on the command line: a restated online default joins the online
    // candidates), or lp-MKL.
    let online_settings = given
        .iter()
        .all(|(n, _)| registry::owners(n).contains(&LearnerKind::Online));
    let kind = match &plan {
        Some(p) => p.learner.unwrap_or(if online_settings {
            LearnerKind::Online
        } else {
            LearnerKind::LpMkl
        }),
        None => named.unwrap_or(LearnerKind::Online),
    };
    let poly = matches!(
        kind,
        LearnerKind::MirrorDescent | LearnerKind::Ucd | LearnerKind::Poly
    );
    if poly && given.text("max_iter").is_none() {
        given.push("max_iter", POLY_ITERATIONS.to_string());
    }
    let memory = MemoryLimit::try_gib(memory_limit_gb).or_py()?;
    let mut spec = LearnerSpec::new(task, Learner::default_for(kind))
        .with_kernels(parse_kernels(kernels)?)
        .with_seed(seed);
    spec.set_all(&given).or_py()?;
    if let Some(c) = c {
        spec = spec.with_c(c);
    }
    spec.bias = bias;
    spec.standardize = standardize;
    spec.memory = memory;
    let checked = spec.check().or_py()?;

    let xr = rows(&x, "X")?;
    let y = y.as_slice().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err("y: a contiguous float64 array is needed")
    })?;
    if y.len() != xr.rows() {
        return Err(crate::errors::to_py(Error::shape(
            "targets (one per row of X)",
            xr.rows(),
            y.len(),
        )));
    }
    let t = targets(y, n_classes, class_names)?;
    let names: Vec<String> = match feature_names {
        Some(n) => n,
        None => (0..xr.cols()).map(|j| format!("x{j}")).collect(),
    };
    let mut table = TableRef::new(xr, &t, &names).or_py()?;
    if let Some(w) = &sample_weight {
        let w = w.as_slice().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(
                "sample_weight: a contiguous float64 array is needed",
            )
        })?;
        table = table.with_weights(w).or_py()?;
    }
    let observer = PyObserver::new(verbose);
    let (result, interrupted) = interrupt::run(py, &observer, || match &plan {
        Some(cfg) => fit_rs(table, FitRequest::new(&spec).select(Some(cfg)), &observer),
        None => fit_rs(table, &checked, &observer),
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    let fitted = result.or_py()?;
    let learner = fitted.selection.as_ref().map_or(kind, |s| s.learner);
    let info = run_info(py, &fitted, learner)?;
    set_selection(py, &info, fitted.selection.as_ref())?;
    Ok((PyModel::new(fitted.model), info))
}

/// The dict on a run that `fit` and `fit_precomputed` return (without `selection`).
pub(crate) fn run_info<'py>(
    py: Python<'py>,
    fitted: &multikernel::estimator::Fitted,
    learner: LearnerKind,
) -> PyResult<Bound<'py, PyDict>> {
    let info = PyDict::new(py);
    info.set_item("learner", learner.name())?;
    info.set_item("status", fitted.run.status.describe())?;
    info.set_item("cancelled", fitted.run.status == RunStatus::Cancelled)?;
    info.set_item("steps", fitted.run.steps)?;
    info.set_item("unit", fitted.run.unit.name())?;
    info.set_item("seconds", fitted.run.seconds)?;
    info.set_item("lambda", fitted.lambda)?;
    info.set_item("notes", fitted.notes.clone())?;
    Ok(info)
}

/// `info["selection"]`: the record's headline, grid lines, choice and seconds, or None.
pub(crate) fn set_selection(
    py: Python<'_>,
    info: &Bound<'_, PyDict>,
    selection: Option<&Selection>,
) -> PyResult<()> {
    match selection {
        Some(Selection {
            record, seconds, ..
        }) => {
            let s = PyDict::new(py);
            s.set_item("headline", record.headline())?;
            s.set_item("learner_choice", record.learner_choice.clone())?;
            s.set_item("lines", record.grid_lines())?;
            s.set_item("seconds", seconds)?;
            let chosen = record.chosen.and_then(|i| record.grid.get(i));
            s.set_item("C", chosen.map(|g| g.c))?;
            s.set_item("setting", chosen.map(|g| g.setting.clone()))?;
            // Issue 28: the candidates (name, family, loss, C, mean, se, fold scores, fits,
            // why stopped), the chosen one's index and why, for `cv_results_`.
            let cands = PyList::empty(py);
            for c in &record.candidates {
                let d = PyDict::new(py);
                d.set_item("name", &c.name)?;
                d.set_item("family", &c.family)?;
                d.set_item("loss", &c.loss)?;
                d.set_item("C", c.c)?;
                d.set_item("mean", c.mean)?;
                d.set_item("se", c.se)?;
                d.set_item("folds", c.folds.clone())?;
                d.set_item("fits", c.fits)?;
                d.set_item("stopped", c.stopped.clone())?;
                cands.append(d)?;
            }
            s.set_item("candidates", cands)?;
            let per = record.grid.len() / record.candidates.len().max(1);
            s.set_item(
                "chosen_candidate",
                record
                    .chosen
                    .filter(|_| !record.candidates.is_empty() && per > 0)
                    .map(|i| i / per),
            )?;
            s.set_item("why", record.why.clone())?;
            s.set_item("metric", record.metric.clone())?;
            info.set_item("selection", s)
        }
        None => info.set_item("selection", py.None()),
    }
}
