//! Checks the trained models' `validate` share: stored arrays of the lengths and shapes the
//! rest of the model implies, and finite numbers where a prediction needs them. Lengths that
//! disagree give [`Error::ShapeMismatch`]; other inconsistencies [`Error::Model`] with the
//! model's name as origin (a caller that read the model from a file names the file).

use crate::data::Matrix;
use crate::error::{Error, Result};

/// `found == expected`, else a shape error about `what`.
pub(crate) fn len(what: impl FnOnce() -> String, expected: usize, found: usize) -> Result<()> {
    if found == expected {
        Ok(())
    } else {
        Err(Error::shape(what(), expected, found))
    }
}

/// Every value finite, else a model error naming `what`.
pub(crate) fn finite(origin: &str, what: impl FnOnce() -> String, values: &[f64]) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(Error::model(
            origin,
            format!("{} has a non-finite value at {i}", what()),
        )),
    }
}

/// A `rows x cols` matrix whose stored values are as many as its shape says, all finite.
pub(crate) fn matrix(origin: &str, what: &str, m: &Matrix, rows: usize, cols: usize) -> Result<()> {
    len(|| format!("{origin}: rows of {what}"), rows, m.rows)?;
    len(|| format!("{origin}: columns of {what}"), cols, m.cols)?;
    // `rows * cols` cannot overflow by itself: a stored vector of that length exists.
    let expected = rows
        .checked_mul(cols)
        .ok_or_else(|| Error::model(origin, format!("{what} is {rows} x {cols}: too large")))?;
    len(
        || format!("{origin}: values of {what}"),
        expected,
        m.data.len(),
    )?;
    finite(origin, || what.to_string(), &m.data)
}

/// `index < bound`, else a model error: `what` refers to something that does not exist.
pub(crate) fn index(
    origin: &str,
    what: impl FnOnce() -> String,
    i: usize,
    bound: usize,
) -> Result<()> {
    if i < bound {
        Ok(())
    } else {
        Err(Error::model(
            origin,
            format!("{} is {i}, not below {bound}", what()),
        ))
    }
}

/// A number that must be finite and positive (a ridge, a scale), else a model error.
pub(crate) fn positive(origin: &str, what: &str, v: f64) -> Result<()> {
    if v > 0.0 && v.is_finite() {
        Ok(())
    } else {
        Err(Error::model(
            origin,
            format!("{what} is {v}, not a positive finite number"),
        ))
    }
}
