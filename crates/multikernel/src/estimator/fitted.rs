//! What a fit returns: the model, its run, and what the path it took reports besides (the
//! built-in selection, MKL-GOMP's path choice, a stream's passes).

use super::kinds::LearnerKind;
use crate::model::Model;
use crate::run::RunInfo;
use crate::select::SelectionRecord;

/// The choice of MKL-GOMP's path length on validation rows.
#[derive(Debug, Clone, PartialEq)]
pub struct PathChoice {
    /// Validation rows.
    pub rows: usize,
    /// The path length kept (kernels).
    pub chosen: usize,
    /// The path length before the choice.
    pub of: usize,
    /// `squared error` or `error rate`.
    pub metric: &'static str,
    /// The validation loss of every path length `0..=of`.
    pub losses: Vec<f64>,
}

/// A trained model with what its run did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Fitted {
    pub model: Model,
    pub run: RunInfo,
    /// The regularization constant the learner used, on its own scale.
    pub lambda: f64,
    /// MKL-GOMP with validation rows: the path length they chose.
    pub path_choice: Option<PathChoice>,
    /// Settings the learner ignored, with why (e.g. mirror descent always standardizes).
    pub notes: Vec<String>,
    /// The built-in selection, when it ran ([`FitRequest::select`](super::FitRequest::select), or precomputed kernels
    /// without C).
    pub selection: Option<Selection>,
    /// A streamed fit's rows, first pass and losses by epoch.
    pub stream: Option<StreamReport>,
}

impl Fitted {
    /// A fit's result with no path choice, notes, selection or stream report.
    pub(crate) fn new(model: Model, run: RunInfo, lambda: f64) -> Fitted {
        Fitted {
            model,
            run,
            lambda,
            path_choice: None,
            notes: Vec::new(),
            selection: None,
            stream: None,
        }
    }
}

/// What the built-in selection did: its record (also stored in the model), its seconds
/// (the refit excluded) and the learner it fitted (chosen, or the one asked for).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Selection {
    pub record: SelectionRecord,
    pub seconds: f64,
    pub learner: LearnerKind,
}

/// What a streamed fit did besides the model.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamReport {
    /// Rows in the file.
    pub rows: usize,
    /// Seconds of the first pass.
    pub scan_seconds: f64,
    /// The progressive average loss of each epoch.
    pub epoch_losses: Vec<f64>,
}
