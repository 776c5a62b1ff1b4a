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
    /// settle. `OnlineSteps::eta` returns `eta0`; the per-coordinate scale is the learner's
    /// (`crate::solver::adagrad`: template taggers with the l2 regularizer).
    AdaGrad,
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

/// The online learner's settings of its rounds and epochs (Alg. 1 of martins2011): the step
/// size, how long it runs, what it returns and how an epoch is cut for parallel work. Each
/// is declared and defaulted here once: the estimator's spec holds them as they are
/// (`OnlineSpec`, whose JSON lists them among its own keys) and the engine reads them from
/// [`OnlineParams::steps`]. One check of their values runs in the spec's check and again
/// when the engine starts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OnlineSteps {
    /// Initial learning rate eta0 (the step size of round 1; `OnlineSteps::eta`).
    pub eta0: f64,
    /// How the step size falls with the rounds.
    pub schedule: StepSchedule,
    /// Passes over the training examples.
    pub epochs: usize,
    /// Return the average of the iterates instead of the last one.
    pub averaging: bool,
    /// Project onto the ball of radius gamma = sqrt(2 L(0) / lambda) after each round.
    pub projection: bool,
    /// Sequences: learn the weight beta0 of the label-pair group inside the MKL regularizer
    /// (`crate::task::sequence`); the other tasks have no such group.
    pub learn_beta0: bool,
    /// Shards of an epoch: 1 runs Alg. 1 round after round; `N > 1` cuts each epoch's order
    /// into `N` contiguous shards, runs one pass per shard in parallel from the same
    /// parameters and mixes them (iterative parameter mixing,
    /// `crate::solver::online::engine`'s `shards` module; sequences and parsing). Written
    /// only when not 1, so the files of sequential runs keep their bytes.
    #[serde(skip_serializing_if = "is_one")]
    pub shards: usize,
    /// Mini-batch of an epoch: 1 runs Alg. 1 round after round; `B > 1` computes the losses
    /// and gradients (decodings) of `B` consecutive examples in parallel against the same
    /// parameters, then applies them in order, one round each
    /// (`crate::solver::online::engine`'s `batch` module; sequences and parsing). Written
    /// only when not 1.
    #[serde(skip_serializing_if = "is_one")]
    pub batch: usize,
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

impl Default for OnlineSteps {
    fn default() -> Self {
        OnlineSteps {
            eta0: 1.0,
            schedule: StepSchedule::InvSqrt,
            epochs: 20,
            averaging: false,
            projection: true,
            learn_beta0: false,
            shards: 1,
            batch: 1,
        }
    }
}

impl OnlineSteps {
    /// The step size eta_t of round `t` (from 1; Alg. 1 of martins2011) by the schedule,
    /// from `eta0` and the regularization constant `lambda`.
    pub(crate) fn eta(&self, t: u64, lambda: f64) -> f64 {
        let (t, eta0) = (t as f64, self.eta0);
        match self.schedule {
            StepSchedule::Constant => eta0,
            StepSchedule::InvSqrt => eta0 / t.sqrt(),
            StepSchedule::Inv { sigma } => 1.0 / (sigma.unwrap_or(lambda) * t),
            StepSchedule::Bottou => eta0 / (1.0 + eta0 * lambda * t),
            StepSchedule::AdaGrad => eta0,
        }
    }

    /// Checks the values before any work starts: the one check of these settings, run by
    /// the spec's check and by the engine ([`OnlineParams::validate`]).
    pub(crate) fn validate(&self) -> Result<()> {
        if !(self.eta0.is_finite() && self.eta0 > 0.0) {
            return Err(Error::param("eta0", self.eta0, "a positive number"));
        }
        if self.epochs == 0 {
            return Err(Error::param("epochs", 0, "at least 1"));
        }
        if let StepSchedule::Inv { sigma: Some(s) } = self.schedule {
            if !(s.is_finite() && s > 0.0) {
                return Err(Error::param("sigma", s, "a positive number"));
            }
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
        Ok(())
    }
}

/// Hyper-parameters of Alg. 1: the regularized objective, the order of the rounds and the
/// [`OnlineSteps`].
///
/// Written to JSON (an incremental fit's state) with the steps' keys among its own, in the
/// order `lambda`, `reg`, `eta0`, `schedule`, `epochs`, `seed`, `averaging`, `projection`,
/// `shuffle`, `shards`, `batch`; `learn_beta0` (after `projection`) only when true, `shards`
/// and `batch` only when not 1.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct OnlineParams {
    /// Regularization constant lambda of lambda*Omega + (1/N) sum L (C = 1 / (lambda N)).
    pub lambda: f64,
    pub reg: RegSpec,
    /// Step size, epochs, averaging, projection, shards and mini-batches.
    #[serde(flatten)]
    pub steps: OnlineSteps,
    pub seed: u64,
    /// Visit examples in a fresh random order each epoch.
    pub shuffle: bool,
}

impl Serialize for OnlineParams {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let t = &self.steps;
        let fields =
            9 + usize::from(t.learn_beta0) + usize::from(t.shards != 1) + usize::from(t.batch != 1);
        let mut s = serializer.serialize_struct("OnlineParams", fields)?;
        s.serialize_field("lambda", &self.lambda)?;
        s.serialize_field("reg", &self.reg)?;
        s.serialize_field("eta0", &t.eta0)?;
        s.serialize_field("schedule", &t.schedule)?;
        s.serialize_field("epochs", &t.epochs)?;
        s.serialize_field("seed", &self.seed)?;
        s.serialize_field("averaging", &t.averaging)?;
        s.serialize_field("projection", &t.projection)?;
        if t.learn_beta0 {
            s.serialize_field("learn_beta0", &t.learn_beta0)?;
        }
        s.serialize_field("shuffle", &self.shuffle)?;
        if t.shards != 1 {
            s.serialize_field("shards", &t.shards)?;
        }
        if t.batch != 1 {
            s.serialize_field("batch", &t.batch)?;
        }
        s.end()
    }
}

impl OnlineParams {
    /// Checks the values before any work starts: lambda, then the steps
    /// ([`OnlineSteps`]'s one check).
    pub(crate) fn validate(&self) -> Result<()> {
        if !(self.lambda.is_finite() && self.lambda > 0.0) {
            return Err(Error::param(
                "lambda",
                self.lambda,
                "a positive number (C = 1/(lambda N) > 0)",
            ));
        }
        self.steps.validate()
    }
}

impl Default for OnlineParams {
    fn default() -> Self {
        OnlineParams {
            lambda: 1e-3,
            reg: RegSpec::L21Sq,
            steps: OnlineSteps::default(),
            seed: 0,
            shuffle: true,
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
        let b = OnlineSteps {
            eta0: 0.5,
            schedule: StepSchedule::Bottou,
            ..OnlineSteps::default()
        };
        assert_eq!(b.eta(0, 1e-3), 0.5);
        assert!((b.eta(2000, 1e-3) - 0.25).abs() < 1e-15);
        let t = 1u64 << 40;
        assert!((b.eta(t, 1e-3) * 1e-3 * t as f64 - 1.0).abs() < 1e-8);
    }

    /// The params' JSON (an incremental fit's state) keeps its key order, writes
    /// `learn_beta0` only when true and `shards` / `batch` only when not 1, and reads back
    /// to the same params.
    #[test]
    fn params_write_their_keys_in_order() {
        let json = |p: &OnlineParams| serde_json::to_string(p).unwrap();
        let default = OnlineParams::default();
        assert_eq!(
            json(&default),
            r#"{"lambda":0.001,"reg":"L21Sq","eta0":1.0,"schedule":"InvSqrt","epochs":20,"seed":0,"averaging":false,"projection":true,"shuffle":true}"#
        );
        let sharded = OnlineParams {
            steps: OnlineSteps {
                eta0: 0.5,
                schedule: StepSchedule::Inv { sigma: None },
                shards: 3,
                ..OnlineSteps::default()
            },
            seed: 7,
            shuffle: false,
            ..OnlineParams::default()
        };
        assert_eq!(
            json(&sharded),
            r#"{"lambda":0.001,"reg":"L21Sq","eta0":0.5,"schedule":{"Inv":{"sigma":null}},"epochs":20,"seed":7,"averaging":false,"projection":true,"shuffle":false,"shards":3}"#
        );
        let batched = OnlineParams {
            steps: OnlineSteps {
                batch: 5,
                ..OnlineSteps::default()
            },
            ..OnlineParams::default()
        };
        assert_eq!(
            json(&batched),
            r#"{"lambda":0.001,"reg":"L21Sq","eta0":1.0,"schedule":"InvSqrt","epochs":20,"seed":0,"averaging":false,"projection":true,"shuffle":true,"batch":5}"#
        );
        let beta0 = OnlineParams {
            steps: OnlineSteps {
                learn_beta0: true,
                ..OnlineSteps::default()
            },
            ..OnlineParams::default()
        };
        assert!(json(&beta0).contains(r#""projection":true,"learn_beta0":true,"shuffle""#));
        for p in [&default, &sharded, &batched, &beta0] {
            assert_eq!(&serde_json::from_str::<OnlineParams>(&json(p)).unwrap(), p);
        }
    }

    /// One check of the steps, run by the engine's params: each bad value is named.
    #[test]
    fn bad_steps_name_the_setting() {
        let name = |steps: OnlineSteps| {
            let p = OnlineParams {
                steps,
                ..OnlineParams::default()
            };
            match p.validate().unwrap_err() {
                Error::InvalidParameter { name, .. } => name,
                e => panic!("{e}"),
            }
        };
        let ok = OnlineSteps::default;
        assert_eq!(name(OnlineSteps { eta0: 0.0, ..ok() }), "eta0");
        assert_eq!(name(OnlineSteps { epochs: 0, ..ok() }), "epochs");
        assert_eq!(name(OnlineSteps { shards: 0, ..ok() }), "shards");
        assert_eq!(name(OnlineSteps { batch: 0, ..ok() }), "batch");
        let both = OnlineSteps {
            shards: 2,
            batch: 2,
            ..ok()
        };
        assert_eq!(name(both), "batch");
        let sigma = OnlineSteps {
            schedule: StepSchedule::Inv { sigma: Some(-1.0) },
            ..ok()
        };
        assert_eq!(name(sigma), "sigma");
        assert!(OnlineParams::default().validate().is_ok());
    }
}
