//! Data sets and their readers. Readers never learn; learners never read files.

mod matrix;
pub use matrix::{Matrix, MatrixRef};

pub mod columns;
pub mod conllu;
pub mod csv;
pub mod libsvm;
pub(crate) mod lines;
pub mod model_stream;
pub mod read;
pub(crate) mod rows;
pub mod split;
pub mod standardize;
pub mod stream;
pub mod weights;

pub use csv::{parse_csv, read_csv, to_csv};
pub use libsvm::{parse_libsvm, read_libsvm};
pub use model_stream::{ModelChunk, ModelStream};
pub use read::{parse_for_model, parse_table, read_for_model, read_table, Format};
pub use rows::{ModelRows, Schema, TargetKind, TargetSchema};

use serde::{Deserialize, Serialize};

/// What is predicted for each row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Targets {
    /// Class labels as indices into `classes` (labels are strings, even when they look
    /// like numbers).
    Classes { classes: Vec<String>, y: Vec<usize> },
    /// Real-valued targets (regression).
    Real(Vec<f64>),
}

impl Targets {
    pub fn len(&self) -> usize {
        match self {
            Targets::Classes { y, .. } => y.len(),
            Targets::Real(y) => y.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The targets of the rows whose indices are given (class list kept whole).
    pub fn select(&self, idx: &[usize]) -> Targets {
        match self {
            Targets::Classes { classes, y } => Targets::Classes {
                classes: classes.clone(),
                y: idx.iter().map(|&i| y[i]).collect(),
            },
            Targets::Real(y) => Targets::Real(idx.iter().map(|&i| y[i]).collect()),
        }
    }
}

/// A table of real features with one target per row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dataset {
    /// `n x d` features.
    pub x: Matrix,
    pub targets: Targets,
    /// One name per feature column.
    pub feature_names: Vec<String>,
}

impl Dataset {
    pub fn len(&self) -> usize {
        self.x.rows
    }

    pub fn is_empty(&self) -> bool {
        self.x.rows == 0
    }

    pub fn n_features(&self) -> usize {
        self.x.cols
    }

    /// The rows whose indices are given.
    pub fn select(&self, idx: &[usize]) -> Dataset {
        Dataset {
            x: self.x.select_rows(idx),
            targets: self.targets.select(idx),
            feature_names: self.feature_names.clone(),
        }
    }
}

/// A borrowed table: the caller's feature rows, targets and column names, checked to agree.
#[derive(Debug, Clone, Copy)]
pub struct TableRef<'a> {
    x: MatrixRef<'a>,
    targets: &'a Targets,
    feature_names: &'a [String],
    /// Row weights (`None`: every row weighs 1; all-ones weights are stored as `None`).
    weights: Option<&'a [f64]>,
}

impl<'a> TableRef<'a> {
    /// Views rows `x`, one target per row and one name per column.
    pub fn new(
        x: MatrixRef<'a>,
        targets: &'a Targets,
        feature_names: &'a [String],
    ) -> crate::error::Result<TableRef<'a>> {
        if targets.len() != x.rows() {
            return Err(crate::error::Error::shape(
                "targets (one per row)",
                x.rows(),
                targets.len(),
            ));
        }
        if feature_names.len() != x.cols() {
            return Err(crate::error::Error::shape(
                "feature names (one per column)",
                x.cols(),
                feature_names.len(),
            ));
        }
        Ok(TableRef {
            x,
            targets,
            feature_names,
            weights: None,
        })
    }

    /// The same rows with a weight per row (scikit-learn's `sample_weight`): the learner
    /// minimizes `C sum_i w_i loss_i + 1/2 ||f||^2`, so an integer weight `k` counts the row
    /// `k` times and a zero weight drops it. Weights must be finite and `>= 0`, one per row,
    /// at least one positive; weights all 1 are the unweighted table (the same model).
    pub fn with_weights(self, weights: &'a [f64]) -> crate::error::Result<TableRef<'a>> {
        weights::check_row_weights(weights, self.len())?;
        let ones = weights.iter().all(|w| *w == 1.0);
        Ok(TableRef {
            weights: (!ones).then_some(weights),
            ..self
        })
    }

    /// The row weights (`None`: unweighted).
    pub(crate) fn weights(&self) -> Option<&'a [f64]> {
        self.weights
    }

    /// The weights of the rows `idx` (`None` when unweighted).
    pub(crate) fn select_weights(&self, idx: &[usize]) -> Option<Vec<f64>> {
        self.weights.map(|w| idx.iter().map(|&i| w[i]).collect())
    }

    pub(crate) fn x(&self) -> MatrixRef<'a> {
        self.x
    }

    pub(crate) fn targets(&self) -> &'a Targets {
        self.targets
    }

    pub(crate) fn feature_names(&self) -> &'a [String] {
        self.feature_names
    }

    pub(crate) fn len(&self) -> usize {
        self.x.rows()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.x.rows() == 0
    }

    pub(crate) fn n_features(&self) -> usize {
        self.x.cols()
    }
}

impl Dataset {
    /// The data set as a borrowed table.
    pub fn view(&self) -> TableRef<'_> {
        TableRef {
            x: self.x.view(),
            targets: &self.targets,
            feature_names: &self.feature_names,
            weights: None,
        }
    }
}

pub mod ocr;
pub mod sequence;
pub mod synthetic;

pub use sequence::SequenceData;
