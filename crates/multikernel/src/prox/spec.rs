//! [`RegSpec`]: the regularizer as written on the command line and stored in model files.

use super::block::{ElasticNet, GroupLasso, L2Sq, L2q, SquaredL21};
use super::composite::{SparseGroupLasso, L1};
use super::regularizer::{BlockRegularizer, Regularizer};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// What `--reg` accepts, for error messages.
const ACCEPTED: &str = "l2, l1, l21, l21sq, l2q:q=Q (Q >= 1, e.g. l2q:q=4/3), elastic:sigma=S, \
                        sparse-group:sigma=S (S in [0, 1])";

/// A regularizer by name and parameters (docs/formulas.md "Notation": `q` is the block norm).
///
/// | spec | text | `Omega(theta)` |
/// | --- | --- | --- |
/// | `L2` | `l2` | `1/2 ||theta||^2` |
/// | `L1` | `l1` | `||theta||_1` |
/// | `L21` | `l21` | `sum_m ||theta_m||` (group lasso) |
/// | `L21Sq` | `l21sq` | `1/2 (sum_m ||theta_m||)^2` (sparse MKL) |
/// | `L2q { q }` | `l2q:q=Q` | `1/q sum_m ||theta_m||^q` (non-sparse MKL) |
/// | `Elastic { sigma }` | `elastic:sigma=S` | `sigma/2 sum_m ||theta_m||^2 + (1-sigma)/2 (sum_m ||theta_m||)^2` |
/// | `SparseGroup { sigma }` | `sparse-group:sigma=S` | `sigma ||theta||_1 + (1-sigma) sum_m ||theta_m||` |
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RegSpec {
    /// Plain l2 (`l2`): the sum of kernels.
    L2,
    /// Lasso (`l1`).
    L1,
    /// Group lasso (`l21`).
    L21,
    /// Squared group lasso (`l21sq`): sparse MKL.
    L21Sq,
    /// Separable l2,q^q (`l2q:q=Q`), block norm `q >= 1`.
    L2q {
        /// Block norm q.
        q: f64,
    },
    /// Elastic-net MKL (`elastic:sigma=S`), `sigma in [0, 1]` weighs the ridge term.
    Elastic {
        /// Ridge weight.
        sigma: f64,
    },
    /// Sparse group lasso (`sparse-group:sigma=S`), `sigma in [0, 1]` weighs the l1 term.
    SparseGroup {
        /// l1 weight.
        sigma: f64,
    },
}

impl RegSpec {
    /// Checks the parameters (`q >= 1` finite, `sigma in [0, 1]`). Parsing already does this;
    /// call it on specs built in code or read from a model file.
    pub(crate) fn validate(&self) -> Result<()> {
        match *self {
            RegSpec::L2q { q } if !(q.is_finite() && q >= 1.0) => Err(Error::param(
                "q",
                q,
                "a finite number >= 1 (the block norm of l2q)",
            )),
            RegSpec::Elastic { sigma } | RegSpec::SparseGroup { sigma }
                if !(0.0..=1.0).contains(&sigma) =>
            {
                Err(Error::param(
                    "sigma",
                    sigma,
                    format!("a number in [0, 1] (the mixing weight of {})", self.name()),
                ))
            }
            _ => Ok(()),
        }
    }

    /// The regularizer. Out-of-range parameters (see [`RegSpec::validate`]) are clamped.
    pub(crate) fn build(&self) -> Box<dyn Regularizer> {
        match *self {
            RegSpec::L2 => Box::new(L2Sq),
            RegSpec::L1 => Box::new(L1),
            RegSpec::L21 => Box::new(GroupLasso),
            RegSpec::L21Sq => Box::new(SquaredL21),
            RegSpec::L2q { q } => Box::new(L2q { q }),
            RegSpec::Elastic { sigma } => Box::new(ElasticNet { sigma }),
            RegSpec::SparseGroup { sigma } => Box::new(SparseGroupLasso { sigma }),
        }
    }

    /// The regularizer as a function of the block norms, when it is one (see
    /// [`RegSpec::is_block`]).
    pub(crate) fn build_block(&self) -> Option<Box<dyn BlockRegularizer>> {
        match *self {
            RegSpec::L2 => Some(Box::new(L2Sq)),
            RegSpec::L21 => Some(Box::new(GroupLasso)),
            RegSpec::L21Sq => Some(Box::new(SquaredL21)),
            RegSpec::L2q { q } => Some(Box::new(L2q { q })),
            RegSpec::Elastic { sigma } => Some(Box::new(ElasticNet { sigma })),
            RegSpec::L1 | RegSpec::SparseGroup { .. } => None,
        }
    }

    /// True when `Omega` depends on each group only through its norm (Prop. 1), so it can
    /// regularize kernelized groups, where only the norms are known: `l2`, `l21`, `l21sq`,
    /// `l2q`, `elastic`. False for `l1` and `sparse-group`, which act inside groups.
    pub(crate) fn is_block(&self) -> bool {
        !matches!(self, RegSpec::L1 | RegSpec::SparseGroup { .. })
    }

    /// The short name (`l2`, `l1`, `l21`, `l21sq`, `l2q`, `elastic`, `sparse-group`).
    pub(crate) fn name(&self) -> &'static str {
        match self {
            RegSpec::L2 => "l2",
            RegSpec::L1 => "l1",
            RegSpec::L21 => "l21",
            RegSpec::L21Sq => "l21sq",
            RegSpec::L2q { .. } => "l2q",
            RegSpec::Elastic { .. } => "elastic",
            RegSpec::SparseGroup { .. } => "sparse-group",
        }
    }

    /// The block norm q of the regularizer (docs/formulas.md "Notation"): 1 for `l1`, `l21`,
    /// `l21sq`, `sparse-group`; `q` for `l2q`; 2 for `l2`; 1 for `elastic` with `sigma < 1`
    /// (2 with `sigma = 1`).
    pub(crate) fn block_norm(&self) -> f64 {
        match *self {
            RegSpec::L2 => 2.0,
            RegSpec::L2q { q } => q,
            RegSpec::Elastic { sigma } if sigma >= 1.0 => 2.0,
            _ => 1.0,
        }
    }

    /// Kernel weights implied by the group norms `||theta_m||` at the end of training
    /// (martins2011 Sec. 2.2: `beta_m ∝ ||theta_m||^(2-q)`), normalized to sum to 1.
    ///
    /// - `l2` (q = 2): uniform, `1/M` each (the sum of kernels), whatever the norms;
    /// - `l1`, `l21`, `l21sq`, `sparse-group` (q = 1): `beta_m ∝ ||theta_m||`;
    /// - `l2q` (1 <= q < 2): `beta_m ∝ ||theta_m||^(2-q)`. For q > 2, where no kernel-weight
    ///   norm p corresponds (p = q/(2-q) < 0), the same formula is applied to the non-zero
    ///   norms and zero norms get weight 0;
    /// - `elastic`: from its variational form `sigma b_m^2 + (1-sigma)(sum_k b_k)^2 =
    ///   min_{eta in simplex} sum_m b_m^2 (sigma + (1-sigma)/eta_m)`, at `eta_m = b_m / sum_k
    ///   b_k`: `beta_m ∝ b_m / (sigma b_m + (1-sigma) sum_k b_k)` (0 where `b_m = 0`, uniform
    ///   for `sigma = 1`; q = 1 for `sigma = 0`).
    ///
    /// The normalization is the l1 one (the simplex of sparse MKL, eq. 5), so weights of
    /// different regularizers compare directly; divide by `||beta||_p` for the `Delta_p`
    /// normalization of lp-MKL. All-zero (or non-finite) raw weights give all zeros. Negative
    /// or NaN norms count as 0.
    pub(crate) fn kernel_weights(&self, norms: &[f64]) -> Vec<f64> {
        let b: Vec<f64> = norms
            .iter()
            .map(|&v| if v > 0.0 && v.is_finite() { v } else { 0.0 })
            .collect();
        let raw: Vec<f64> = match *self {
            RegSpec::L2 => vec![1.0; b.len()],
            RegSpec::Elastic { sigma } => {
                let sigma = if sigma.is_nan() {
                    0.0
                } else {
                    sigma.clamp(0.0, 1.0)
                };
                if sigma >= 1.0 {
                    vec![1.0; b.len()]
                } else {
                    let sum: f64 = b.iter().sum();
                    b.iter()
                        .map(|&v| {
                            if v > 0.0 {
                                v / (sigma * v + (1.0 - sigma) * sum)
                            } else {
                                0.0
                            }
                        })
                        .collect()
                }
            }
            _ => {
                let e = 2.0 - self.block_norm();
                b.iter()
                    .map(|&v| {
                        if e == 0.0 {
                            1.0
                        } else if v > 0.0 {
                            v.powf(e)
                        } else {
                            0.0
                        }
                    })
                    .collect()
            }
        };
        let total: f64 = raw.iter().sum();
        if total > 0.0 && total.is_finite() {
            raw.iter().map(|v| v / total).collect()
        } else {
            vec![0.0; raw.len()]
        }
    }
}

impl std::fmt::Display for RegSpec {
    /// The text form accepted by [`std::str::FromStr`] (round-trips exactly: floats are
    /// printed in their shortest exact form).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegSpec::L2q { q } => write!(f, "l2q:q={q}"),
            RegSpec::Elastic { sigma } => write!(f, "elastic:sigma={sigma}"),
            RegSpec::SparseGroup { sigma } => write!(f, "sparse-group:sigma={sigma}"),
            other => f.write_str(other.name()),
        }
    }
}

impl std::str::FromStr for RegSpec {
    type Err = Error;

    /// Parses `l2`, `l1`, `l21`, `l21sq`, `l2q:q=Q` (Q a number or a fraction `a/b`, >= 1),
    /// `elastic:sigma=S` and `sparse-group:sigma=S` (S in [0, 1]). Case and surrounding
    /// spaces are ignored; the parameter name may be omitted (`l2q:1.5`).
    fn from_str(s: &str) -> Result<RegSpec> {
        let text = s.trim().to_ascii_lowercase();
        let (name, param) = match text.split_once(':') {
            Some((n, p)) => (n.trim(), Some(p.trim())),
            None => (text.as_str(), None),
        };
        let spec = match name {
            "l2" | "l1" | "l21" | "l21sq" => {
                if let Some(p) = param {
                    return Err(Error::param(
                        "regularizer",
                        s,
                        format!("{name} takes no parameter (got '{p}'); accepted: {ACCEPTED}"),
                    ));
                }
                match name {
                    "l2" => RegSpec::L2,
                    "l1" => RegSpec::L1,
                    "l21" => RegSpec::L21,
                    _ => RegSpec::L21Sq,
                }
            }
            "l2q" => RegSpec::L2q {
                q: parse_param(s, name, "q", param)?,
            },
            "elastic" => RegSpec::Elastic {
                sigma: parse_param(s, name, "sigma", param)?,
            },
            "sparse-group" => RegSpec::SparseGroup {
                sigma: parse_param(s, name, "sigma", param)?,
            },
            _ => {
                return Err(Error::param(
                    "regularizer",
                    s,
                    format!("unknown regularizer (expected one of {ACCEPTED})"),
                ))
            }
        };
        spec.validate()
            .map_err(|e| Error::param("regularizer", s, e.to_string()))?;
        Ok(spec)
    }
}

/// Parses `key=value` or `value` (a decimal number or a fraction `a/b`).
fn parse_param(s: &str, name: &str, key: &str, param: Option<&str>) -> Result<f64> {
    let missing = || {
        Error::param(
            "regularizer",
            s,
            format!("{name} needs its parameter, as in {name}:{key}=VALUE; accepted: {ACCEPTED}"),
        )
    };
    let p = param.ok_or_else(missing)?;
    let value = match p.split_once('=') {
        Some((k, v)) => {
            let k = k.trim();
            if k != key {
                return Err(Error::param(
                    "regularizer",
                    s,
                    format!(
                        "{name} has no parameter '{k}', only '{key}' (as in {name}:{key}=VALUE)"
                    ),
                ));
            }
            v.trim()
        }
        None => p,
    };
    if value.is_empty() {
        return Err(missing());
    }
    parse_number(value).ok_or_else(|| {
        Error::param(
            "regularizer",
            s,
            format!("'{value}' is not a number for {key} (write e.g. 1.5 or 4/3)"),
        )
    })
}

/// A finite decimal number or a fraction `a/b` of finite numbers with `b != 0`.
fn parse_number(v: &str) -> Option<f64> {
    let x = match v.split_once('/') {
        Some((a, b)) => {
            let a: f64 = a.trim().parse().ok()?;
            let b: f64 = b.trim().parse().ok()?;
            if b == 0.0 {
                return None;
            }
            a / b
        }
        None => v.parse().ok()?,
    };
    x.is_finite().then_some(x)
}
