//! What the batch learners' fits on a table share: the model around a learner, the
//! validation rows' targets and the check that squared targets stay finite.

use crate::data::{Matrix, TableRef, Targets};
use crate::error::{Error, Result};
use crate::model::BatchModel;
use crate::task::targets::encode_targets;
use crate::task::TaskKind;

/// The batch model of `learner` trained on `table`.
pub(super) fn batch<L>(
    table: TableRef<'_>,
    task: TaskKind,
    classes: Vec<String>,
    learner: L,
) -> BatchModel<L> {
    BatchModel {
        task,
        classes,
        feature_names: table.feature_names().to_vec(),
        learner,
        selection: None,
    }
}

/// The validation rows' squared-loss targets, checked against the training table.
pub(super) fn validation_targets(
    train: TableRef<'_>,
    validation: TableRef<'_>,
    task: TaskKind,
    classes: &[String],
) -> Result<Matrix> {
    if validation.n_features() != train.n_features() {
        return Err(Error::shape(
            "features of the validation rows (the training rows')",
            train.n_features(),
            validation.n_features(),
        ));
    }
    if validation.is_empty() {
        return Err(Error::data("the validation set has no rows"));
    }
    if let Targets::Classes { classes: c, .. } = validation.targets() {
        if c.as_slice() != classes {
            return Err(Error::data(format!(
                "the validation rows' classes ({}) are not the training classes ({})",
                c.join(", "),
                classes.join(", ")
            )));
        }
    }
    Ok(encode_targets(task, validation.targets())?.1)
}

/// MKL-GOMP and lp-MKL work with squared residuals of the (encoded) targets: targets whose
/// squares overflow (regression values near 1e300) are refused with a clear error instead
/// of giving a model of NaN weights.
pub(super) fn check_squares_finite(y: &Matrix, learner: &str) -> Result<()> {
    if y.data.iter().map(|v| v * v).sum::<f64>().is_finite() {
        return Ok(());
    }
    let largest = y.data.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    Err(Error::data(format!(
        "the targets, up to {largest:e} in magnitude, are too large for {learner}: the sum of \
         their squares overflows; scale the targets"
    )))
}
