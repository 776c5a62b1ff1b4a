//! What a vector task predicts ([`TaskKind`], [`Prediction`]) and how class labels and real
//! targets become the numbers a learner fits: `-1/+1`, class indices or standardized values
//! for the online learner ([`online_targets`]); `-1/+1`, one-hot columns or raw values for the
//! squared-loss batch learners ([`encode_targets`]), with [`decode`] mapping their decision
//! values back to predictions.

use crate::data::standardize::TargetScaler;
use crate::data::{Matrix, Targets};
use crate::error::{Error, Result};
use crate::metrics::argmax;
use serde::{Deserialize, Serialize};

/// What the model predicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskKind {
    Binary,
    Multiclass,
    Regression,
}

/// A prediction: a class (index into the model's class list) or a real value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Prediction {
    Class(usize),
    Value(f64),
}

impl Prediction {
    /// The class index (`usize::MAX`, never a valid class, for a real value).
    pub(crate) fn class(&self) -> usize {
        match self {
            Prediction::Class(c) => *c,
            Prediction::Value(_) => usize::MAX,
        }
    }

    /// The real value (NaN for a class).
    pub(crate) fn value(&self) -> f64 {
        match self {
            Prediction::Value(v) => *v,
            Prediction::Class(_) => f64::NAN,
        }
    }
}

/// The test metric of predictions against targets: `("accuracy", fraction)` for class
/// labels, `("mse", mean squared error)` for real targets.
pub fn prediction_metric(pred: &[Prediction], targets: &Targets) -> (&'static str, f64) {
    match targets {
        Targets::Classes { y, .. } => {
            let p: Vec<usize> = pred.iter().map(Prediction::class).collect();
            ("accuracy", crate::metrics::accuracy(&p, y))
        }
        Targets::Real(y) => {
            let p: Vec<f64> = pred.iter().map(Prediction::value).collect();
            ("mse", crate::metrics::mse(&p, y))
        }
    }
}

/// Number of decision columns of a task: the number of classes for multiclass, else 1.
pub(crate) fn expected_outputs(task: TaskKind, n_classes: usize) -> usize {
    match task {
        TaskKind::Multiclass => n_classes,
        _ => 1,
    }
}

/// Checks that targets fit a task: class labels for classification (exactly two for a
/// binary task, at least two for multiclass, every index in range), values for regression.
pub(crate) fn check_targets(task: TaskKind, targets: &Targets) -> Result<()> {
    match (task, targets) {
        (TaskKind::Regression, Targets::Real(_)) => Ok(()),
        (TaskKind::Binary, Targets::Classes { classes, .. }) if classes.len() != 2 => {
            Err(Error::data(format!(
                "a binary task needs exactly 2 classes, the data has {} ({}); the multiclass \
                 task takes more",
                classes.len(),
                classes.join(", ")
            )))
        }
        (TaskKind::Multiclass, Targets::Classes { classes, .. }) if classes.len() < 2 => {
            Err(Error::data(format!(
                "a multiclass task needs at least 2 classes, the data has {}",
                classes.len()
            )))
        }
        (_, Targets::Classes { classes, y }) if task != TaskKind::Regression => {
            match y.iter().position(|&c| c >= classes.len()) {
                Some(i) => Err(Error::data(format!(
                    "row {}: class index {} outside the {} classes",
                    i + 1,
                    y[i],
                    classes.len()
                ))),
                None => Ok(()),
            }
        }
        (TaskKind::Regression, Targets::Classes { .. }) => Err(Error::data(
            "regression needs real targets, the data has class labels",
        )),
        _ => Err(Error::data(
            "a classification task needs class labels, the data has real targets",
        )),
    }
}

/// The squared-loss targets of a task (module docs): regression `n x 1` as given, binary
/// `n x 1` in `{-1, +1}`, multiclass one-hot `n x classes`. Returns the class names too
/// (empty for regression). Errors when the targets do not fit the task
/// ([`check_targets`]).
pub(crate) fn encode_targets(task: TaskKind, targets: &Targets) -> Result<(Vec<String>, Matrix)> {
    check_targets(task, targets)?;
    Ok(match (task, targets) {
        (TaskKind::Binary, Targets::Classes { classes, y }) => {
            let t = y.iter().map(|&c| if c == 1 { 1.0 } else { -1.0 }).collect();
            (classes.clone(), Matrix::from_vec(y.len(), 1, t))
        }
        (TaskKind::Multiclass, Targets::Classes { classes, y }) => {
            let mut m = Matrix::zeros(y.len(), classes.len());
            for (i, &c) in y.iter().enumerate() {
                m.set(i, c, 1.0);
            }
            (classes.clone(), m)
        }
        (_, Targets::Real(y)) => (Vec::new(), Matrix::from_vec(y.len(), 1, y.clone())),
        (TaskKind::Regression, Targets::Classes { .. }) => unreachable!("refused by check"),
    })
}

/// Predictions from decision values (module docs): the value (regression), the sign
/// (binary: `> 0` is class 1), the largest output (multiclass).
pub(crate) fn decode(task: TaskKind, f: &Matrix) -> Result<Vec<Prediction>> {
    let want_one = task != TaskKind::Multiclass;
    if want_one && f.cols != 1 {
        return Err(Error::shape("decision columns", 1, f.cols));
    }
    if f.cols == 0 {
        return Err(Error::shape("decision columns (one per class)", 2, 0));
    }
    Ok((0..f.rows)
        .map(|i| match task {
            TaskKind::Regression => Prediction::Value(f.get(i, 0)),
            TaskKind::Binary => Prediction::Class(usize::from(f.get(i, 0) > 0.0)),
            TaskKind::Multiclass => Prediction::Class(argmax(f.row(i))),
        })
        .collect())
}

/// Targets as the online task wants them: +-1 (binary), class index (multiclass), scaled
/// value (regression). Errors when the targets do not fit the task ([`check_targets`]).
pub(crate) fn online_targets(
    task: TaskKind,
    targets: &Targets,
) -> Result<(Vec<String>, Vec<f64>, Option<TargetScaler>)> {
    check_targets(task, targets)?;
    Ok(match targets {
        Targets::Classes { classes, y } if task == TaskKind::Binary => (
            classes.clone(),
            y.iter().map(|&c| if c == 1 { 1.0 } else { -1.0 }).collect(),
            None,
        ),
        Targets::Classes { classes, y } => {
            (classes.clone(), y.iter().map(|&c| c as f64).collect(), None)
        }
        Targets::Real(y) => {
            let s = TargetScaler::fit(y);
            (Vec::new(), y.iter().map(|&v| s.apply(v)).collect(), Some(s))
        }
    })
}
