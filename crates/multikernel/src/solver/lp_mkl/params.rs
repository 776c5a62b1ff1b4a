//! Parameters of lp-MKL: the engine's ([`LpMklParams`], with the kernel-weight norm `p`
//! and its text forms) and the model fit's ([`LpMklModelParams`]).

use crate::error::{Error, Result};
use crate::kernel::MemoryLimit;
use serde::{Deserialize, Serialize};

/// Parameters of [`lp_mkl`](super::lp_mkl).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LpMklParams {
    /// Kernel-weight norm p >= 1 (`f64::INFINITY` for the uniform sum of kernels; JSON
    /// `"inf"`).
    #[serde(with = "p_serde")]
    pub p: f64,
    /// Regularization: `alpha = (K_theta + lambda I)^-1 y`.
    pub lambda: f64,
    /// Unpenalized bias per output by centering (see the module documentation).
    pub bias: bool,
    /// Maximum number of alternating steps.
    pub max_iter: usize,
    /// Stop when `|J_old - J| <= tol * |J|`.
    pub tol: f64,
    /// Starting weights (warm start along a lambda grid); rescaled onto the lp sphere.
    /// `None`: uniform `M^(-1/p)`. The update is multiplicative (`theta_m` enters
    /// `||w_m||`), so a weight that starts at exactly 0 stays 0: floor warm starts at a
    /// small positive value.
    pub init_theta: Option<Vec<f64>>,
}

impl Default for LpMklParams {
    fn default() -> Self {
        LpMklParams {
            p: 2.0,
            lambda: 1.0,
            bias: true,
            max_iter: 500,
            tol: 1e-8,
            init_theta: None,
        }
    }
}

impl LpMklParams {
    /// Rejects parameters no run could use.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.p.is_nan() || self.p < 1.0 {
            return Err(Error::param(
                "p",
                self.p,
                "a kernel-weight norm >= 1 (or inf)",
            ));
        }
        if !(self.lambda > 0.0 && self.lambda.is_finite()) {
            return Err(Error::param(
                "lambda",
                self.lambda,
                "a positive finite number",
            ));
        }
        if self.max_iter == 0 {
            return Err(Error::param("max_iter", 0, "at least 1"));
        }
        if self.tol.is_nan() || self.tol < 0.0 {
            return Err(Error::param("tol", self.tol, "a number >= 0"));
        }
        Ok(())
    }
}

/// JSON has no infinity: p is written as a number, or `"inf"`; read as a number or by
/// [`parse_p`] (the same grammar as the command line's `--p`). The lp-MKL model and the
/// learner spec (`estimator::LpMklSpec`) both store p this way.
pub(crate) mod p_serde {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(p: &f64, s: S) -> Result<S::Ok, S::Error> {
        if p.is_finite() {
            s.serialize_f64(*p)
        } else {
            s.serialize_str("inf")
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum P {
            Num(f64),
            Text(String),
        }
        match P::deserialize(d)? {
            P::Num(v) => Ok(v),
            P::Text(t) => super::parse_p(&t).map_err(serde::de::Error::custom),
        }
    }
}

/// Parses a kernel-weight norm: a number >= 1, a fraction such as `4/3`, or `inf`.
pub fn parse_p(s: &str) -> Result<f64> {
    let t = s.trim().to_ascii_lowercase();
    let not_a_number = || Error::param("p", s, "a number, a fraction a/b or inf");
    let p = if matches!(t.as_str(), "inf" | "infinity" | "∞") {
        f64::INFINITY
    } else if let Some((a, b)) = t.split_once('/') {
        let a: f64 = a.trim().parse().map_err(|_| not_a_number())?;
        let b: f64 = b.trim().parse().map_err(|_| not_a_number())?;
        a / b
    } else {
        t.parse().map_err(|_| not_a_number())?
    };
    if p.is_nan() || p < 1.0 {
        return Err(Error::param("p", s, "a kernel-weight norm >= 1 (or inf)"));
    }
    Ok(p)
}

/// A short label for p: `1`, `4/3`, `2`, `inf`, else the number.
pub fn p_label(p: f64) -> String {
    if p.is_infinite() {
        "inf".to_string()
    } else if (p - 4.0 / 3.0).abs() < 1e-12 {
        "4/3".to_string()
    } else if p.fract() == 0.0 {
        format!("{}", p as i64)
    } else {
        format!("{p}")
    }
}

/// Everything [`LpMklModel::fit`](super::LpMklModel::fit) needs besides the data.
#[derive(Debug, Clone)]
pub struct LpMklModelParams {
    pub lp: LpMklParams,
    /// Standardize the features on the training rows before fitting kernels.
    pub standardize: bool,
    /// Seed of the kernels' data-dependent choices (median heuristic samples).
    pub seed: u64,
    pub memory: MemoryLimit,
}

impl Default for LpMklModelParams {
    fn default() -> Self {
        LpMklModelParams {
            lp: LpMklParams::default(),
            standardize: true,
            seed: 0,
            memory: MemoryLimit::default(),
        }
    }
}
