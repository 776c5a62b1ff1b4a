//! Losses over any [`StructuredTask`], with their gradients in part space (martins2011 Sec.
//! 2.2):
//! - structured hinge (eq. 4): `L = max_y' [s(y') + c(y_i, y')] - s(y_i)`, subgradient
//!   `Phi(x_i, y_hat) - Phi(x_i, y_i)` with `y_hat` from loss-augmented decoding;
//! - CRF (eq. 3): `L = log sum_y' exp s(y') - s(y_i)`, gradient `E_p[Phi] - Phi(x_i, y_i)`.

use super::StructuredTask;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The loss of a structured task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StructLoss {
    /// Structured hinge with the task's cost: `max_y' s(y') + c(y_i, y') - s(y_i)` (eq. 4).
    Hinge,
    /// CRF (log) loss: `log sum_y' exp s(y') - s(y_i)` (eq. 3).
    Crf,
}

impl std::str::FromStr for StructLoss {
    type Err = Error;
    fn from_str(s: &str) -> Result<StructLoss> {
        match s {
            "hinge" | "structured-hinge" | "svm" => Ok(StructLoss::Hinge),
            "crf" | "logistic" => Ok(StructLoss::Crf),
            _ => Err(Error::param(
                "loss",
                s,
                "hinge (structured SVM) or crf (conditional random field)",
            )),
        }
    }
}

impl std::fmt::Display for StructLoss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StructLoss::Hinge => "hinge",
            StructLoss::Crf => "crf",
        })
    }
}

/// Loss of example `i` given its part scores; writes `dL/ds` into `grad` (one entry per part,
/// overwritten). Negative values from rounding are clipped to 0. A CRF loss on a task without
/// marginals for this example gives NaN and a zero gradient (learners call
/// [`try_loss_grad`], which says so).
pub(crate) fn loss_grad<T: StructuredTask + ?Sized>(
    task: &T,
    loss: StructLoss,
    i: usize,
    scores: &[f64],
    grad: &mut [f64],
) -> f64 {
    try_loss_grad(task, loss, i, scores, grad).unwrap_or(f64::NAN)
}

/// [`loss_grad`], `None` (and a zero gradient) when the loss cannot be computed: the CRF
/// loss of an example the task has no marginals for (no tree allowed by the scores, or a
/// score of `+inf`).
pub(crate) fn try_loss_grad<T: StructuredTask + ?Sized>(
    task: &T,
    loss: StructLoss,
    i: usize,
    scores: &[f64],
    grad: &mut [f64],
) -> Option<f64> {
    grad.iter_mut().for_each(|g| *g = 0.0);
    let gold = task.gold(i);
    let gold_score = task.score(i, scores, gold);
    match loss {
        StructLoss::Hinge => {
            let aug = task.loss_augmented_decode(i, scores);
            if aug.output == *gold {
                return Some(0.0);
            }
            aug.feature.add_scaled_to(grad, 1.0);
            task.joint_feature(i, gold).add_scaled_to(grad, -1.0);
            Some((aug.score - gold_score).max(0.0))
        }
        StructLoss::Crf => {
            let m = task.marginals(i, scores)?;
            grad.copy_from_slice(&m.expected);
            task.joint_feature(i, gold).add_scaled_to(grad, -1.0);
            Some((m.log_z - gold_score).max(0.0))
        }
    }
}
