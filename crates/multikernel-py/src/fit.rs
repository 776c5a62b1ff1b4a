//! `fit`: a [`LearnerSpec`] from keyword arguments, trained on a borrowed table, with the
//! library's built-in selection (`multikernel::estimator::auto`) when no `C` is given, as
//! `multikernel train` does.

use crate::arrays::rows;
use crate::errors::OrPy;
use crate::interrupt::{self, PyObserver};
use crate::model::PyModel;
use multikernel::data::{TableRef, Targets};
use multikernel::estimator::parser::PARSER_SETTINGS;
use multikernel::estimator::registry::{self, Domain};
use multikernel::estimator::tagger::TAGGER_SETTINGS;
use multikernel::estimator::RegSpec;
use multikernel::estimator::TaskKind;
use multikernel::estimator::{
    fit_auto, fit_checked, fit_precomputed as fit_precomputed_rs, selection_plan, Budget, Learner,
    LearnerKind, LearnerSpec, LossKind, PrecomputedLearner, PrecomputedSpec, SelectionRecord,
    SelectionRequest, Task, TrainingData, WrapperSpec,
};
use multikernel::kernel::{default_dictionary, streaming_dictionary, KernelSpec, MemoryLimit};
use multikernel::run::RunStatus;
use multikernel::Error;
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// Mirror descent and UCD run this many iterations unless told otherwise: a fixed number
/// (not the CLI's 10-second budget), so that the same `random_state` gives the same model.
pub const POLY_ITERATIONS: u64 = 1000;

/// Keyword arguments of [`fit`] that configure a learner.
struct LearnerArgs {
    eta0: Option<f64>,
    epochs: Option<usize>,
    loss: Option<String>,
    regularizer: Option<String>,
    p: Option<f64>,
    max_kernels: Option<usize>,
    degree: Option<usize>,
    max_iter: Option<u64>,
    epsilon: Option<f64>,
    tol: Option<f64>,
    svm_tol: Option<f64>,
}

impl LearnerArgs {
    /// The settings given with their text, as the command line would take them (numbers as
    /// Rust prints them), for the selection's rule.
    fn texts(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let mut note = |name, text: Option<String>| {
            if let Some(t) = text {
                out.push((name, t))
            }
        };
        note("eta0", self.eta0.map(|v| v.to_string()));
        note("epochs", self.epochs.map(|v| v.to_string()));
        note("loss", self.loss.clone());
        note("regularizer", self.regularizer.clone());
        note("p", self.p.map(|v| v.to_string()));
        note("max_kernels", self.max_kernels.map(|v| v.to_string()));
        note("degree", self.degree.map(|v| v.to_string()));
        note("max_iter", self.max_iter.map(|v| v.to_string()));
        note("epsilon", self.epsilon.map(|v| v.to_string()));
        note("tol", self.tol.map(|v| v.to_string()));
        note("svm_tol", self.svm_tol.map(|v| v.to_string()));
        out
    }

    fn given(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        let mut note = |on: bool, name| {
            if on {
                out.push(name)
            }
        };
        note(self.eta0.is_some(), "eta0");
        note(self.epochs.is_some(), "epochs");
        note(self.loss.is_some(), "loss");
        note(self.regularizer.is_some(), "regularizer");
        note(self.p.is_some(), "p");
        note(self.max_kernels.is_some(), "max_kernels");
        note(self.degree.is_some(), "degree");
        note(self.max_iter.is_some(), "max_iter");
        note(self.epsilon.is_some(), "epsilon");
        note(self.tol.is_some(), "tol");
        note(self.svm_tol.is_some(), "svm_tol");
        out
    }

    /// The learner of `kind` with these settings; a setting of another family is an error.
    fn learner(&self, kind: LearnerKind) -> PyResult<Learner> {
        for name in self.given() {
            let owners = registry::owners(name);
            if !owners.contains(&kind) {
                return Err(PyValueError::new_err(format!(
                    "{name} is a setting of the {} learner, not of {}",
                    owners
                        .iter()
                        .map(|k| k.name())
                        .collect::<Vec<_>>()
                        .join(" / "),
                    kind.name()
                )));
            }
        }
        let mut learner = Learner::default_for(kind);
        match &mut learner {
            Learner::Online(o) => {
                if let Some(e) = self.eta0 {
                    o.eta0 = e;
                }
                if let Some(e) = self.epochs {
                    o.epochs = e;
                }
                if let Some(l) = &self.loss {
                    o.loss = Some(l.parse::<LossKind>().or_py()?);
                }
                if let Some(r) = &self.regularizer {
                    o.reg = Some(r.parse::<RegSpec>().or_py()?);
                }
            }
            Learner::LpMkl(l) => {
                if let Some(p) = self.p {
                    l.p = p;
                }
            }
            Learner::Gomp(g) => {
                if let Some(k) = self.max_kernels {
                    g.max_kernels = k;
                }
            }
            Learner::MirrorDescent(s) | Learner::Ucd(s) | Learner::Poly(s) => {
                if let Some(d) = self.degree {
                    s.degree = d;
                }
                s.budget = Budget::Iterations(self.max_iter.unwrap_or(POLY_ITERATIONS));
            }
            Learner::SimpleMkl(w) | Learner::GaussSeidel(w) => {
                if let Some(m) = self.max_iter {
                    w.max_iter = usize::try_from(m).unwrap_or(usize::MAX);
                }
                if let Some(e) = self.epsilon {
                    w.epsilon = e;
                }
                if let Some(t) = self.tol {
                    w.tol = t;
                }
                if let Some(t) = self.svm_tol {
                    w.svm_tol = t;
                }
            }
            _ => {}
        }
        Ok(learner)
    }
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
fn targets(y: &[f64], n_classes: Option<usize>, names: Option<Vec<String>>) -> PyResult<Targets> {
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
/// any type, and may name them with `class_names`); regression: `n_classes=None`. With `c=None` and `select=True` the built-in
/// selection picks C (and the learner when `learner=None`, lp-MKL's p, the online eta0) by
/// seeded 5-fold cross-validation; otherwise one fit with `c` (default 1).
///
/// Returns the model and a dict on the run: `learner`, `status`, `steps`, `unit`,
/// `seconds`, `lambda`, `notes`, `selection` (headline, grid lines, seconds) or None.
/// Ctrl-C stops the fit within a poll of the learner and raises KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (
    x, y, *, n_classes=None, learner=None, kernels=None, c=None, select=true,
    eta0=None, epochs=None, loss=None, regularizer=None, p=None, max_kernels=None,
    degree=None, max_iter=None, epsilon=None, tol=None, svm_tol=None, bias=true,
    standardize=true, seed=0, memory_limit_gb=8.0, verbose=false, feature_names=None,
    class_names=None
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
    eta0: Option<f64>,
    epochs: Option<usize>,
    loss: Option<String>,
    regularizer: Option<String>,
    p: Option<f64>,
    max_kernels: Option<usize>,
    degree: Option<usize>,
    max_iter: Option<u64>,
    epsilon: Option<f64>,
    tol: Option<f64>,
    svm_tol: Option<f64>,
    bias: bool,
    standardize: bool,
    seed: u64,
    memory_limit_gb: f64,
    verbose: bool,
    feature_names: Option<Vec<String>>,
    class_names: Option<Vec<String>>,
) -> PyResult<(PyModel, Bound<'py, PyDict>)> {
    let args = LearnerArgs {
        eta0,
        epochs,
        loss,
        regularizer,
        p,
        max_kernels,
        degree,
        max_iter,
        epsilon,
        tol,
        svm_tol,
    };
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
    let settings = args.texts();
    let request = SelectionRequest {
        task,
        learner: named,
        strength_given: c.is_some(),
        streaming: false,
        settings: &settings,
    };
    let plan = if select {
        selection_plan(&request)
    } else {
        None
    };
    // The base spec's learner: the plan's, or the online learner when the settings given are
    // its own (as on the command line: a restated default such as `loss="squared"` joins the
    // online candidates), or lp-MKL.
    let online_settings = args
        .given()
        .iter()
        .all(|n| registry::owners(n).contains(&LearnerKind::Online));
    let kind = match &plan {
        Some(p) => p.learner.unwrap_or(if online_settings {
            LearnerKind::Online
        } else {
            LearnerKind::LpMkl
        }),
        None => named.unwrap_or(LearnerKind::Online),
    };
    let memory = MemoryLimit::try_gib(memory_limit_gb).or_py()?;
    let mut spec = LearnerSpec::new(task, args.learner(kind)?)
        .with_kernels(parse_kernels(kernels)?)
        .with_seed(seed);
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
    let table = TableRef::new(xr, &t, &names).or_py()?;
    let observer = PyObserver::new(verbose);
    let (result, interrupted) = interrupt::run(py, &observer, || {
        if let Some(cfg) = &plan {
            fit_auto(table, &spec, cfg, &observer)
                .map(|a| (a.fitted, a.learner, Some((a.record, a.select_seconds))))
        } else {
            fit_checked(TrainingData::Table(table), None, &checked, &observer)
                .map(|f| (f, kind, None))
        }
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    let (fitted, learner, selection) = result.or_py()?;
    let info = run_info(py, &fitted, learner)?;
    set_selection(py, &info, selection)?;
    Ok((PyModel::new(fitted.model), info))
}

/// Trains on precomputed training kernel matrices (`kernels[m]` is `K_m(X_train,
/// X_train)`, n x n, C-contiguous float64, borrowed; copied once into the solver): lp-MKL
/// (`learner=None`, `"auto"` or `"lp-mkl"`), or SimpleMKL / Gauss-Seidel around the exact
/// SVM (`"simplemkl"`, `"gauss-seidel"`, with `max_iter`, `epsilon`, `tol` and `svm_tol`),
/// with the built-in selection of C (and lp-MKL's p when not given) when `c=None`. Targets
/// as in `fit`.
#[pyfunction]
#[pyo3(signature = (
    kernels, y, *, n_classes=None, class_names=None, kernel_names=None, learner=None, c=None,
    p=None, max_iter=None, epsilon=None, tol=None, svm_tol=None, bias=true, seed=0,
    memory_limit_gb=8.0, verbose=false
))]
#[allow(clippy::too_many_arguments)]
pub fn fit_precomputed<'py>(
    py: Python<'py>,
    kernels: Vec<PyReadonlyArray2<'py, f64>>,
    y: PyReadonlyArray1<'py, f64>,
    n_classes: Option<usize>,
    class_names: Option<Vec<String>>,
    kernel_names: Option<Vec<String>>,
    learner: Option<String>,
    c: Option<f64>,
    p: Option<f64>,
    max_iter: Option<u64>,
    epsilon: Option<f64>,
    tol: Option<f64>,
    svm_tol: Option<f64>,
    bias: bool,
    seed: u64,
    memory_limit_gb: f64,
    verbose: bool,
) -> PyResult<(PyModel, Bound<'py, PyDict>)> {
    let learner = precomputed_learner(learner.as_deref(), max_iter, epsilon, tol, svm_tol)?;
    let memory = MemoryLimit::try_gib(memory_limit_gb).or_py()?;
    let refs = crate::model::kernel_views(&kernels)?;
    let y = y.as_slice().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err("y: a contiguous float64 array is needed")
    })?;
    let t = targets(y, n_classes, class_names)?;
    let task = match n_classes {
        None => TaskKind::Regression,
        Some(2) => TaskKind::Binary,
        Some(_) => TaskKind::Multiclass,
    };
    let kind = learner.kind();
    let spec = PrecomputedSpec {
        learner,
        p,
        c,
        bias,
        seed,
        memory,
        names: kernel_names,
    };
    let observer = PyObserver::new(verbose);
    let (result, interrupted) = interrupt::run(py, &observer, || {
        fit_precomputed_rs(&refs, &t, task, &spec, &observer)
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    let r = result.or_py()?;
    let info = run_info(py, &r.fitted, kind)?;
    set_selection(py, &info, r.selection.map(|s| (s, r.select_seconds)))?;
    Ok((PyModel::new(r.fitted.model), info))
}

/// The learner of `fit_precomputed`: lp-MKL, or a wrapper with its settings (a wrapper
/// setting given to lp-MKL is an error).
fn precomputed_learner(
    name: Option<&str>,
    max_iter: Option<u64>,
    epsilon: Option<f64>,
    tol: Option<f64>,
    svm_tol: Option<f64>,
) -> PyResult<PrecomputedLearner> {
    let kind = match name.map(str::trim) {
        None | Some("auto") => LearnerKind::LpMkl,
        Some(s) => s.parse::<LearnerKind>().or_py()?,
    };
    let mut w = WrapperSpec::default();
    if let Some(m) = max_iter {
        w.max_iter = usize::try_from(m).unwrap_or(usize::MAX);
    }
    w.epsilon = epsilon.unwrap_or(w.epsilon);
    w.tol = tol.unwrap_or(w.tol);
    w.svm_tol = svm_tol.unwrap_or(w.svm_tol);
    match kind {
        LearnerKind::LpMkl => {
            let given = [
                ("max_iter", max_iter.is_some()),
                ("epsilon", epsilon.is_some()),
                ("tol", tol.is_some()),
                ("svm_tol", svm_tol.is_some()),
            ];
            if let Some((name, _)) = given.iter().find(|(_, on)| *on) {
                return Err(PyValueError::new_err(format!(
                    "{name} is a setting of the simplemkl / gauss-seidel learners, not of \
                     lp-mkl"
                )));
            }
            Ok(PrecomputedLearner::LpMkl)
        }
        LearnerKind::SimpleMkl => Ok(PrecomputedLearner::SimpleMkl(w)),
        LearnerKind::GaussSeidel => Ok(PrecomputedLearner::GaussSeidel(w)),
        other => Err(PyValueError::new_err(format!(
            "kernels='precomputed' trains lp-mkl, simplemkl or gauss-seidel; learner='{other}' \
             computes its own kernels"
        ))),
    }
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
fn set_selection(
    py: Python<'_>,
    info: &Bound<'_, PyDict>,
    selection: Option<(SelectionRecord, f64)>,
) -> PyResult<()> {
    match selection {
        Some((record, seconds)) => {
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
            d.set_item("tagger", TAGGER_SETTINGS.contains(&s.name))?;
            d.set_item("parser", PARSER_SETTINGS.contains(&s.name))?;
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
