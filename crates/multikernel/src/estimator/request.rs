//! [`fit`]: the way to train on data in memory, for every learner and task, as a
//! [`FitRequest`] says (the spec, and for a table the built-in selection or validation
//! rows).

use super::auto::{fit_auto, AutoConfig};
use super::fit::{fit_checked, TrainingData};
use super::fitted::Fitted;
use super::precomputed::{fit_precomputed, PrecomputedSpec};
use super::spec::{CheckedSpec, LearnerSpec};
use super::structured_auto::{fit_structured_auto, StructuredData, StructuredPlan};
use crate::data::TableRef;
use crate::error::{Error, Result};
use crate::run::Observer;

/// How to train: the learner's spec (as given, already checked, or for precomputed
/// kernels), and for a table the built-in selection or validation rows. A `&LearnerSpec`
/// converts into the plain request.
#[derive(Debug, Clone, Copy)]
pub struct FitRequest<'a> {
    spec: SpecRef<'a>,
    select: Option<&'a AutoConfig>,
    structured: Option<&'a StructuredPlan>,
    validation: Option<TableRef<'a>>,
}

#[derive(Debug, Clone, Copy)]
enum SpecRef<'a> {
    Given(&'a LearnerSpec),
    Checked(&'a CheckedSpec),
    Precomputed(&'a PrecomputedSpec),
}

impl<'a> FitRequest<'a> {
    /// Trains `spec` as it is (checked first).
    pub fn new(spec: &'a LearnerSpec) -> FitRequest<'a> {
        FitRequest {
            spec: SpecRef::Given(spec),
            select: None,
            structured: None,
            validation: None,
        }
    }

    /// Trains a spec already checked (no second check).
    pub(crate) fn checked(spec: &'a CheckedSpec) -> FitRequest<'a> {
        FitRequest {
            spec: SpecRef::Checked(spec),
            select: None,
            structured: None,
            validation: None,
        }
    }

    /// Trains on precomputed kernel matrices ([`TrainingData::Kernels`]); without `C` in
    /// the spec, C (and lp-MKL's p) are selected by cross-validation.
    pub(crate) fn precomputed(spec: &'a PrecomputedSpec) -> FitRequest<'a> {
        FitRequest {
            spec: SpecRef::Precomputed(spec),
            select: None,
            structured: None,
            validation: None,
        }
    }

    /// Runs the built-in selection on a table first ([`super::auto`]): the spec gives the
    /// task, kernels, seed, memory limit and the named learner's other settings; its
    /// strength is chosen. `None` keeps the plain fit.
    pub fn select(self, cfg: Option<&'a AutoConfig>) -> FitRequest<'a> {
        FitRequest {
            select: cfg,
            ..self
        }
    }

    /// Runs the structured selection of a template tagger or a parser first
    /// ([`super::structured_auto`]): the learner, C and q chosen on development sentences.
    /// Other data (OCR sequences, tables) trains the spec as it is. `None` keeps the plain
    /// fit.
    pub fn select_structured(self, plan: Option<&'a StructuredPlan>) -> FitRequest<'a> {
        FitRequest {
            structured: plan,
            ..self
        }
    }

    /// Held-out rows: MKL-GOMP keeps the path length with the lowest validation error
    /// (squared error for regression, error rate for classification); the other learners do
    /// not take validation rows.
    pub(crate) fn validation(self, rows: TableRef<'a>) -> FitRequest<'a> {
        FitRequest {
            validation: Some(rows),
            ..self
        }
    }
}

impl<'a> From<&'a LearnerSpec> for FitRequest<'a> {
    fn from(spec: &'a LearnerSpec) -> Self {
        FitRequest::new(spec)
    }
}

impl<'a> From<&'a CheckedSpec> for FitRequest<'a> {
    fn from(spec: &'a CheckedSpec) -> Self {
        FitRequest::checked(spec)
    }
}

impl<'a> From<&'a PrecomputedSpec> for FitRequest<'a> {
    fn from(spec: &'a PrecomputedSpec) -> Self {
        FitRequest::precomputed(spec)
    }
}

/// Trains on `data` in memory as `request` says: the learner of a spec (a `&LearnerSpec`,
/// checked first), with the built-in selection or validation rows when asked
/// ([`FitRequest`]). `observer` sees the progress and may stop the run: the model reached
/// so far is returned, with [`RunStatus::Cancelled`](crate::run::RunStatus::Cancelled).
/// One of the three ways to train, with [`Loaded::fit`](super::Loaded::fit) (a data
/// source) and [`IncrementalFit`](super::incremental::IncrementalFit) (chunk by chunk).
///
/// ```
/// use multikernel::prelude::*;
///
/// let data = read_table(std::path::Path::new("../../data/uci/sonar.csv"), None,
///                       TargetKind::Classes, None, None)?;
/// let spec = LearnerSpec::new(Task::Binary, Learner::default_for(LearnerKind::LpMkl))
///     .with_kernels(vec!["rbf".parse()?, "linear".parse()?]);
/// let fitted = fit(&data, &spec, &())?;
/// let score = fitted.model.score_with(data.x.view(), &data.targets, &MemoryLimit::default())?;
/// assert!(score.value > 0.8);
/// # Ok::<(), multikernel::Error>(())
/// ```
pub fn fit<'d, 'r>(
    data: impl Into<TrainingData<'d>>,
    request: impl Into<FitRequest<'r>>,
    observer: &dyn Observer,
) -> Result<Fitted> {
    let request = request.into();
    let data = data.into();
    let spec =
        match (request.spec, data) {
            (SpecRef::Precomputed(p), TrainingData::Kernels(k)) => {
                if request.select.is_some() || request.validation.is_some() {
                    return Err(Error::unsupported(
                        "precomputed kernels select C themselves when the spec has none, and take \
                     no validation rows",
                    ));
                }
                return fit_precomputed(k.kernels, k.targets, k.task, p, observer);
            }
            (SpecRef::Precomputed(_), _) => {
                return Err(Error::data(
                    "a precomputed-kernel spec trains on kernel matrices (TrainingData::Kernels)",
                ))
            }
            (_, TrainingData::Kernels(_)) => return Err(Error::data(
                "kernel matrices train with a precomputed-kernel spec (FitRequest::precomputed)",
            )),
            (SpecRef::Given(s), _) => std::borrow::Cow::Owned(s.check()?),
            (SpecRef::Checked(c), _) => std::borrow::Cow::Borrowed(c),
        };
    if let Some(plan) = request.structured {
        let structured = match data {
            TrainingData::Tagged(d) => Some(StructuredData::Tagged(d)),
            TrainingData::Treebank(d) => Some(StructuredData::Treebank(d)),
            _ => None,
        };
        if let Some(d) = structured {
            if request.select.is_some() || request.validation.is_some() {
                return Err(Error::unsupported(
                    "the structured selection takes no table selection or validation rows",
                ));
            }
            return fit_structured_auto(d, &spec, plan, observer);
        }
    }
    match (request.select, request.validation, data) {
        (Some(_), Some(_), _) => Err(Error::unsupported(
            "validation rows choose MKL-GOMP's path length; the built-in selection uses its \
             own folds (give one or the other)",
        )),
        (Some(cfg), None, TrainingData::Table(t)) => Ok(fit_auto(t, &spec, cfg, observer)?.into()),
        (Some(_), None, _) => Err(Error::unsupported(
            "built-in selection scores the rows of a table (binary, multiclass, regression)",
        )),
        (None, validation, data) => fit_checked(data, validation, &spec, observer),
    }
}
