//! `train --weight-column NAME` and `--class-weight`: the table read with its row weights
//! (`FileSource::read_weighted_table`), for the table learners that take them (the
//! library's `TableRef::with_weights`).

use crate::cli::TrainArgs;
use anyhow::{bail, Result};
use multikernel::data::Dataset;
use multikernel::estimator::Task;

/// The table and its row weights when `--weight-column` or `--class-weight` is given
/// (`None` otherwise): a table task, not streamed, without validation rows.
pub fn weighted_table(a: &TrainArgs) -> Result<Option<(Dataset, Vec<f64>)>> {
    if a.weight_column.is_none() && a.class_weight.is_none() {
        return Ok(None);
    }
    if matches!(a.task, Task::Sequence | Task::Parsing) {
        bail!("--weight-column and --class-weight weigh the rows of a table (binary, multiclass, regression)");
    }
    if a.class_weight.is_some() && a.task == Task::Regression {
        bail!("--class-weight weighs classes; --task regression has none");
    }
    if a.stream {
        bail!("--weight-column and --class-weight train in memory, not with --stream");
    }
    if a.settings.text("validation").is_some() || a.structured.validation_folds.is_some() {
        bail!("--weight-column and --class-weight take no validation rows");
    }
    let file = crate::data::file_source(&a.data, &a.structured.train_folds)?;
    Ok(Some(file.read_weighted_table(
        a.task,
        a.weight_column.as_deref(),
        a.class_weight.as_ref(),
    )?))
}
