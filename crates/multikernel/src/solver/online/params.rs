//! Hyper-parameters of the online proximal learner (Alg. 1 of Martins et al. 2011) and what
//! it reports after each epoch.

use crate::error::{Error, Result};
use crate::prox::RegSpec;
use serde::{Deserialize, Serialize};

/// Learning-rate schedule; t counts examples processed, from 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum StepSchedule {
    /// eta_t = eta0.
    Constant,
    /// eta_t = eta0 / sqrt(t).
    InvSqrt,
    /// eta_t = 1 / (sigma t) (strongly convex objectives; sigma defaults to lambda).
    Inv { sigma: Option<f64> },
    /// eta_t = eta0 / (1 + eta0 lambda t): eta0 at first, 1/(lambda t) in the end (Bottou
    /// 2012, "Stochastic gradient descent tricks", eq. 10; the schedule of his crfsgd and of
    /// CRFsuite's l2sgd). With a small lambda it stays near eta0 for many epochs, so the
    /// iterates are best averaged (averaged SGD, Xu 2011).
    Bottou,
    /// Diagonal AdaGrad with the composite (proximal) step (Duchi, Hazan & Singer 2011, JMLR
    /// 12, eq. 4 with `H_t = diag(sqrt(sum_s g_s^2))`, the "AdaGrad" update of their Sec. 1 and
    /// 5.2): coordinate `j` takes the step `eta0 / sqrt(G_j)`, `G_j` the sum of the squared
    /// loss gradients it has received, so rare features keep large steps while frequent ones
    /// settle. [`StepSchedule::eta`] returns `eta0`; the per-coordinate scale is the learner's
    /// (`crate::solver::adagrad`: template taggers with the l2 regularizer).
    AdaGrad,
}

impl StepSchedule {
    /// The step size of round `t` (from 1) for `eta0` and the regularization constant
    /// `lambda`.
    pub fn eta(&self, t: u64, eta0: f64, lambda: f64) -> f64 {
        let t = t as f64;
        match self {
            StepSchedule::Constant => eta0,
            StepSchedule::InvSqrt => eta0 / t.sqrt(),
            StepSchedule::Inv { sigma } => 1.0 / (sigma.unwrap_or(lambda) * t),
            StepSchedule::Bottou => eta0 / (1.0 + eta0 * lambda * t),
            StepSchedule::AdaGrad => eta0,
        }
    }
}

impl std::fmt::Display for StepSchedule {
    /// `const`, `sqrt`, `inv`, `inv:sigma=S`, `bottou` or `adagrad`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepSchedule::Constant => f.write_str("const"),
            StepSchedule::InvSqrt => f.write_str("sqrt"),
            StepSchedule::Inv { sigma: None } => f.write_str("inv"),
            StepSchedule::Inv { sigma: Some(s) } => write!(f, "inv:sigma={s}"),
            StepSchedule::Bottou => f.write_str("bottou"),
            StepSchedule::AdaGrad => f.write_str("adagrad"),
        }
    }
}

impl std::str::FromStr for StepSchedule {
    type Err = Error;
    /// `sqrt` (eta0/sqrt(t)), `const` (eta0), `inv` (1/(lambda t)), `inv:sigma=S`
    /// (1/(S t)), `bottou` (eta0/(1 + eta0 lambda t)) or `adagrad` (eta0/sqrt(G_j) per
    /// coordinate); also the names written by version-1 model files (`InvSqrt`, `Constant`,
    /// `Inv { sigma: None }`, `Inv { sigma: Some(S) }`).
    fn from_str(s: &str) -> Result<StepSchedule> {
        let t = s.trim();
        let bad = || {
            Error::param(
                "schedule",
                s,
                "sqrt, const, inv, inv:sigma=S (S > 0), bottou or adagrad",
            )
        };
        let sigma = |v: &str| -> Result<StepSchedule> {
            let v: f64 = v.trim().parse().map_err(|_| bad())?;
            if v.is_finite() && v > 0.0 {
                Ok(StepSchedule::Inv { sigma: Some(v) })
            } else {
                Err(bad())
            }
        };
        match t {
            "sqrt" | "InvSqrt" => Ok(StepSchedule::InvSqrt),
            "const" | "constant" | "Constant" => Ok(StepSchedule::Constant),
            "inv" | "Inv { sigma: None }" => Ok(StepSchedule::Inv { sigma: None }),
            "bottou" | "Bottou" => Ok(StepSchedule::Bottou),
            "adagrad" | "AdaGrad" => Ok(StepSchedule::AdaGrad),
            _ => {
                if let Some(v) = t.strip_prefix("inv:sigma=") {
                    sigma(v)
                } else if let Some(v) = t
                    .strip_prefix("Inv { sigma: Some(")
                    .and_then(|r| r.strip_suffix(") }"))
                {
                    sigma(v)
                } else {
                    Err(bad())
                }
            }
        }
    }
}

/// Hyper-parameters of Alg. 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OnlineParams {
    /// Regularization constant lambda of lambda*Omega + (1/N) sum L (C = 1 / (lambda N)).
    pub lambda: f64,
    pub reg: RegSpec,
    pub eta0: f64,
    pub schedule: StepSchedule,
    pub epochs: usize,
    pub seed: u64,
    /// Return the average of the iterates instead of the last one.
    pub averaging: bool,
    /// Project onto the ball of radius gamma = sqrt(2 L(0) / lambda) after each round.
    pub projection: bool,
    /// Visit examples in a fresh random order each epoch.
    pub shuffle: bool,
    /// Shards of an epoch: 1 runs Alg. 1 round after round; `N > 1` cuts each epoch's order
    /// into `N` contiguous shards, runs one pass per shard in parallel from the same
    /// parameters and mixes them (iterative parameter mixing,
    /// `crate::solver::online::engine`'s `shards` module). Written to a file only when
    /// not 1, so the files of sequential runs keep their bytes.
    #[serde(default = "one_shard", skip_serializing_if = "is_one_shard")]
    pub shards: usize,
    /// Mini-batch of an epoch: 1 runs Alg. 1 round after round; `B > 1` computes the losses
    /// and gradients (decodings) of `B` consecutive examples in parallel against the same
    /// parameters, then applies them in order, one round each
    /// (`crate::solver::online::engine`'s `batch` module). Written to a file only when
    /// not 1.
    #[serde(default = "one_shard", skip_serializing_if = "is_one_shard")]
    pub batch: usize,
}

fn one_shard() -> usize {
    1
}

fn is_one_shard(n: &usize) -> bool {
    *n == 1
}

impl OnlineParams {
    /// Checks the values before any work starts.
    pub fn validate(&self) -> Result<()> {
        if !(self.lambda.is_finite() && self.lambda > 0.0) {
            return Err(Error::param(
                "lambda",
                self.lambda,
                "a positive number (C = 1/(lambda N) > 0)",
            ));
        }
        if !(self.eta0.is_finite() && self.eta0 > 0.0) {
            return Err(Error::param("eta0", self.eta0, "a positive number"));
        }
        if self.epochs == 0 {
            return Err(Error::param("epochs", 0, "at least 1"));
        }
        if self.shards == 0 {
            return Err(Error::param("shards", 0, "at least 1"));
        }
        if self.batch == 0 {
            return Err(Error::param("batch", 0, "at least 1"));
        }
        if self.batch > 1 && self.shards > 1 {
            return Err(Error::param(
                "batch",
                self.batch,
                "1 with shards above 1 (parallel shards or parallel mini-batches, not both)",
            ));
        }
        if let StepSchedule::Inv { sigma: Some(s) } = self.schedule {
            if !(s.is_finite() && s > 0.0) {
                return Err(Error::param("sigma", s, "a positive number"));
            }
        }
        Ok(())
    }
}

impl Default for OnlineParams {
    fn default() -> Self {
        OnlineParams {
            lambda: 1e-3,
            reg: RegSpec::L21Sq,
            eta0: 1.0,
            schedule: StepSchedule::InvSqrt,
            epochs: 20,
            seed: 0,
            averaging: false,
            projection: true,
            shuffle: true,
            shards: 1,
            batch: 1,
        }
    }
}

/// What is reported after each epoch.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EpochReport {
    pub epoch: usize,
    /// lambda Omega(theta) + (1/N) sum_i L(theta; x_i, y_i) at the end of the epoch (last
    /// iterate).
    pub objective: f64,
    pub average_loss: f64,
    /// Norm of each regularized group (kernels first, then regularized explicit groups).
    pub group_norms: Vec<f64>,
    /// Kernel weights implied by the norms (see [`RegSpec::kernel_weights`]).
    pub weights: Vec<f64>,
    pub seconds: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_round_trip_through_text() {
        for s in [
            StepSchedule::Constant,
            StepSchedule::InvSqrt,
            StepSchedule::Inv { sigma: None },
            StepSchedule::Inv { sigma: Some(0.25) },
            StepSchedule::Bottou,
            StepSchedule::AdaGrad,
        ] {
            assert_eq!(s.to_string().parse::<StepSchedule>().unwrap(), s);
            assert_eq!(format!("{s:?}").parse::<StepSchedule>().unwrap(), s);
        }
        assert!("inv:sigma=0".parse::<StepSchedule>().is_err());
        assert!("fast".parse::<StepSchedule>().is_err());
        // Bottou's schedule: eta0 at t = 0, half of it at t = 1/(eta0 lambda), 1/(lambda t)
        // in the end.
        let b = StepSchedule::Bottou;
        assert_eq!(b.eta(0, 0.5, 1e-3), 0.5);
        assert!((b.eta(2000, 0.5, 1e-3) - 0.25).abs() < 1e-15);
        let t = 1u64 << 40;
        assert!((b.eta(t, 0.5, 1e-3) * 1e-3 * t as f64 - 1.0).abs() < 1e-8);
    }
}
