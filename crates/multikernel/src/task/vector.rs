//! Plain vector tasks: binary classification, multiclass classification (the simplest
//! structured case: argmax over classes with 0/1 cost) and regression. One example is one
//! training point.

use crate::error::{Error, Result};
use crate::params::ScaledVec;
use crate::task::online::{ExplicitGroup, Gradient, GroupRole, OnlineTask};
use crate::task::TaskKind;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The loss of a vector task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Loss {
    /// max(0, 1 - y f), y in {-1, +1}.
    Hinge,
    /// log(1 + exp(-y f)).
    Logistic,
    /// Multiclass hinge: max_y' (f_y' + [y' != y]) - f_y (Crammer-Singer, 0/1 cost).
    MulticlassHinge,
    /// Multinomial logistic (softmax) loss: log sum_y' exp(f_y') - f_y.
    MulticlassLogistic,
    /// (f - y)^2 / 2.
    Squared,
}

impl std::str::FromStr for Loss {
    type Err = Error;
    fn from_str(s: &str) -> Result<Loss> {
        Ok(match s {
            "hinge" => Loss::Hinge,
            "logistic" => Loss::Logistic,
            "multiclass-hinge" | "mhinge" => Loss::MulticlassHinge,
            "multiclass-logistic" | "softmax" => Loss::MulticlassLogistic,
            "squared" => Loss::Squared,
            _ => {
                return Err(Error::param(
                    "loss",
                    s,
                    "hinge, logistic, multiclass-hinge, multiclass-logistic or squared",
                ))
            }
        })
    }
}

impl std::fmt::Display for Loss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Loss::Hinge => "hinge",
            Loss::Logistic => "logistic",
            Loss::MulticlassHinge => "multiclass-hinge",
            Loss::MulticlassLogistic => "multiclass-logistic",
            Loss::Squared => "squared",
        })
    }
}

impl Loss {
    /// Number of scores per point: one for binary and regression losses, one per class for
    /// multiclass losses.
    pub(crate) fn n_outputs(self, n_classes: usize) -> usize {
        match self {
            Loss::MulticlassHinge | Loss::MulticlassLogistic => n_classes,
            _ => 1,
        }
    }

    /// Loss and its derivative with respect to each score. `target` is +-1 for binary
    /// losses, the value for regression, the class index for multiclass losses.
    pub(crate) fn eval(self, scores: &[f64], target: f64, grad: &mut [f64]) -> f64 {
        match self {
            Loss::Hinge => {
                let m = target * scores[0];
                if m < 1.0 {
                    grad[0] = -target;
                    1.0 - m
                } else {
                    0.0
                }
            }
            Loss::Logistic => {
                let m = target * scores[0];
                // log(1 + e^-m) computed stably; derivative -y sigma(-m).
                let loss = if m > 0.0 {
                    (-m).exp().ln_1p()
                } else {
                    -m + m.exp().ln_1p()
                };
                grad[0] = -target / (1.0 + m.exp());
                loss
            }
            Loss::MulticlassHinge => {
                let y = target as usize;
                let mut best = y;
                let mut best_v = scores[y];
                for (k, &s) in scores.iter().enumerate() {
                    let v = s + if k == y { 0.0 } else { 1.0 };
                    if v > best_v {
                        best_v = v;
                        best = k;
                    }
                }
                if best != y {
                    grad[best] += 1.0;
                    grad[y] -= 1.0;
                    best_v - scores[y]
                } else {
                    0.0
                }
            }
            Loss::MulticlassLogistic => {
                let y = target as usize;
                let mx = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let z: f64 = scores.iter().map(|s| (s - mx).exp()).sum();
                for (g, s) in grad.iter_mut().zip(scores) {
                    *g = (s - mx).exp() / z;
                }
                grad[y] -= 1.0;
                mx + z.ln() - scores[y]
            }
            Loss::Squared => {
                let r = scores[0] - target;
                grad[0] = r;
                0.5 * r * r
            }
        }
    }

    /// Loss of the zero model on `target` (for the projection radius).
    pub(crate) fn at_zero(self, target: f64, n_outputs: usize) -> f64 {
        let mut g = vec![0.0; n_outputs];
        self.eval(&vec![0.0; n_outputs], target, &mut g)
    }
}

/// The loss a task uses when none is given.
pub fn default_loss(task: TaskKind) -> Loss {
    match task {
        TaskKind::Binary => Loss::Hinge,
        TaskKind::Multiclass => Loss::MulticlassHinge,
        TaskKind::Regression => Loss::Squared,
    }
}

/// Checks that a loss fits the task.
pub(crate) fn check_loss(task: TaskKind, loss: Loss) -> Result<()> {
    let ok = match task {
        TaskKind::Binary => matches!(loss, Loss::Hinge | Loss::Logistic | Loss::Squared),
        TaskKind::Multiclass => matches!(loss, Loss::MulticlassHinge | Loss::MulticlassLogistic),
        TaskKind::Regression => loss == Loss::Squared,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::param(
            "loss",
            loss,
            format!(
                "a loss of the {} task: binary takes hinge, logistic or squared; multiclass \
                 takes multiclass-hinge or multiclass-logistic; regression takes squared",
                match task {
                    TaskKind::Binary => "binary",
                    TaskKind::Multiclass => "multiclass",
                    TaskKind::Regression => "regression",
                }
            ),
        ))
    }
}

/// A vector task over `n` training points: targets coded as +-1 (binary), class index
/// (multiclass) or real value (regression), with an optional unregularized bias per output.
#[derive(Debug, Clone)]
pub(crate) struct VectorTask {
    pub loss: Loss,
    pub targets: Vec<f64>,
    pub n_outputs: usize,
    pub bias: bool,
    /// Row weights (`None`: all 1): row `i`'s loss and its subgradient are scaled by
    /// `w_i`, so the objective is `lambda Omega + (1/N) sum_i w_i L_i`.
    pub weights: Option<Vec<f64>>,
}

impl VectorTask {
    pub(crate) fn new(loss: Loss, targets: Vec<f64>, n_outputs: usize, bias: bool) -> Self {
        VectorTask {
            loss,
            targets,
            n_outputs,
            bias,
            weights: None,
        }
    }
}

impl OnlineTask for VectorTask {
    fn n_examples(&self) -> usize {
        self.targets.len()
    }
    fn n_points(&self) -> usize {
        self.targets.len()
    }
    fn n_labels(&self) -> usize {
        self.n_outputs
    }
    fn points(&self, i: usize) -> Range<usize> {
        i..i + 1
    }
    fn explicit_groups(&self) -> Vec<ExplicitGroup> {
        if self.bias {
            vec![ExplicitGroup {
                name: "bias".into(),
                len: self.n_outputs,
                role: GroupRole::Unregularized,
            }]
        } else {
            Vec::new()
        }
    }
    fn loss_grad(
        &self,
        i: usize,
        scores: &[f64],
        explicit: &[ScaledVec],
        grad: &mut Gradient,
    ) -> f64 {
        let mut s = scores.to_vec();
        if self.bias {
            for (k, v) in s.iter_mut().enumerate() {
                *v += explicit[0].get(k);
            }
        }
        let mut loss = self.loss.eval(&s, self.targets[i], &mut grad.scores);
        if let Some(w) = &self.weights {
            let w = w[i];
            loss *= w;
            grad.scores.iter_mut().for_each(|g| *g *= w);
        }
        if self.bias {
            for (k, &g) in grad.scores.iter().enumerate() {
                if g != 0.0 {
                    grad.explicit.push((0, k, g));
                }
            }
        }
        loss
    }
    fn loss_at_zero(&self) -> f64 {
        self.targets
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                self.loss.at_zero(t, self.n_outputs) * self.weights.as_ref().map_or(1.0, |w| w[i])
            })
            .sum::<f64>()
            / self.targets.len().max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every loss's derivative matches central finite differences away from kinks.
    #[test]
    fn loss_gradients_match_finite_differences() {
        let cases: Vec<(Loss, Vec<f64>, f64)> = vec![
            (Loss::Hinge, vec![0.3], 1.0),
            (Loss::Hinge, vec![-0.7], -1.0),
            (Loss::Logistic, vec![0.3], 1.0),
            (Loss::Logistic, vec![-2.5], -1.0),
            (Loss::Squared, vec![0.3], 2.0),
            (Loss::MulticlassHinge, vec![0.1, 0.5, -0.2], 0.0),
            (Loss::MulticlassLogistic, vec![0.1, 0.5, -0.2], 2.0),
        ];
        for (loss, s, t) in cases {
            let mut g = vec![0.0; s.len()];
            loss.eval(&s, t, &mut g);
            for k in 0..s.len() {
                let h = 1e-6;
                let mut sp = s.clone();
                sp[k] += h;
                let mut sm = s.clone();
                sm[k] -= h;
                let mut tmp = vec![0.0; s.len()];
                let fd = (loss.eval(&sp, t, &mut tmp) - {
                    tmp.iter_mut().for_each(|v| *v = 0.0);
                    loss.eval(&sm, t, &mut tmp)
                }) / (2.0 * h);
                assert!(
                    (fd - g[k]).abs() < 1e-6,
                    "{loss} k={k}: fd {fd} vs {}",
                    g[k]
                );
            }
        }
    }

    #[test]
    fn zero_model_losses() {
        assert_eq!(Loss::Hinge.at_zero(1.0, 1), 1.0);
        assert!((Loss::Logistic.at_zero(-1.0, 1) - 2f64.ln()).abs() < 1e-12);
        assert_eq!(Loss::Squared.at_zero(3.0, 1), 4.5);
        assert_eq!(Loss::MulticlassHinge.at_zero(1.0, 4), 1.0);
    }

    #[test]
    fn loss_names_parse() {
        for l in [
            "hinge",
            "logistic",
            "multiclass-hinge",
            "multiclass-logistic",
            "squared",
        ] {
            assert_eq!(l.parse::<Loss>().unwrap().to_string(), l);
        }
        assert!("hinje"
            .parse::<Loss>()
            .unwrap_err()
            .to_string()
            .contains("hinge"));
    }
}
