//! Kernel specifications: what a user asks for (`--kernel rbf:norm=diag`), before any
//! data-dependent choice is resolved (that is [`super::FittedKernel::fit`]).
//!
//! Grammar (whitespace around parts is ignored):
//!
//! ```text
//! SPEC    := ["perfeature:"] KIND [":" KEY=VALUE {"," KEY=VALUE}]
//! KIND    := "linear" | "poly" | "rbf" | "bspline" | "const" | "product(" FACTOR {"*" FACTOR} ")"
//! FACTOR  := KIND [":" KEY=VALUE {"," KEY=VALUE}]     (kernel keys only)
//! keys    := degree, offset (poly); sigma2 (rbf); h, zeros (bspline);
//!            norm=none|diag|trace|variance; features=J{+J} (0-based input columns);
//!            approx=rff|nystrom|sketch [,dim=D] (an explicit approximate map, default
//!            D = 1024: rff for rbf only, D random Fourier features; nystrom for any kernel
//!            but bspline, D landmarks (at most 4096, capped at the training rows); sketch for
//!            poly only (degree <= 10), D random products)
//! ```
//!
//! Examples: `linear`, `poly:degree=3,offset=1,norm=diag`, `rbf:sigma2=5`,
//! `perfeature:rbf:norm=variance`, `bspline:zeros=0.9`, `product(linear*rbf:sigma2=2):norm=diag`,
//! `rbf:approx=rff,dim=2048`, `rbf:approx=nystrom,dim=256`,
//! `poly:degree=2,offset=1,approx=sketch,dim=2048` (explicit maps, [`super::feature_map`]).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::feature_map::{
    Approx, ApproxMethod, APPROX_NAMES, DEFAULT_APPROX_DIM, MAX_APPROX_DIM, MAX_NYSTROM_DIM,
    MAX_SKETCH_DEGREE,
};
use crate::error::{Error, Result};

/// Default target fraction of zero entries of a B1-spline Gram when `h` is not given.
pub const DEFAULT_BSPLINE_ZEROS: f64 = 0.95;

/// The functional form of a kernel (docs/formulas.md, "Kernel helpers").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum KernelKind {
    /// `x . x'`
    Linear,
    /// `(x . x' + offset)^degree`
    Poly { degree: u32, offset: f64 },
    /// `exp(-||x - x'||^2 / (2 sigma2))`; `None` = the median heuristic at fit, times
    /// `scale` when given (`rbf:scale=4`: four times the heuristic's width sigma2).
    Rbf {
        sigma2: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scale: Option<f64>,
    },
    /// Generalized B1-spline `max(0, 1 - ||x - x'|| / h)`; with `h = None`, `h` is chosen at fit
    /// so that a fraction `zeros` (default 0.95) of the off-diagonal training entries are 0.
    /// Positive semi-definite on one input feature (the triangle function); on `d >= 2`
    /// features the Euclidean version is not PSD in general (Askey: `(1 - r)_+^nu` needs
    /// `nu >= (d + 1) / 2`).
    BSpline { h: Option<f64>, zeros: Option<f64> },
    /// The constant 1 (a bias as a kernel).
    Const,
    /// Product of kernels, all on the same input features.
    Product(Vec<KernelKind>),
}

/// How kernel values are rescaled (docs/formulas.md, "Kernel helpers").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Normalization {
    /// Raw kernel values.
    None,
    /// Unit diagonal: `K(x,x') / sqrt(K(x,x) K(x',x'))`.
    Diag,
    /// Unit mean diagonal on the training set: `K / ((1/n) tr K)`.
    Trace,
    /// Unit variance in feature space on the training set:
    /// `K / ((1/n) sum_i K_ii - (1/n^2) sum_ij K_ij)`.
    Variance,
}

impl Normalization {
    fn as_str(self) -> &'static str {
        match self {
            Normalization::None => "none",
            Normalization::Diag => "diag",
            Normalization::Trace => "trace",
            Normalization::Variance => "variance",
        }
    }
}

impl fmt::Display for Normalization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Normalization {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "none" => Ok(Normalization::None),
            "diag" => Ok(Normalization::Diag),
            "trace" => Ok(Normalization::Trace),
            "variance" => Ok(Normalization::Variance),
            other => Err(Error::param(
                "norm",
                other,
                "a normalization (accepted: none, diag, trace, variance)",
            )),
        }
    }
}

/// A kernel as the user asked for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelSpec {
    pub kind: KernelKind,
    pub norm: Normalization,
    /// Expand into one kernel per input feature ([`expand_specs`]).
    pub perfeature: bool,
    /// Restrict the kernel to these input columns (0-based); `None` = all columns.
    pub features: Option<Vec<usize>>,
    /// Replace the kernel by an explicit approximate feature map (`approx=rff,dim=D`,
    /// `approx=nystrom,dim=m`, `approx=sketch,dim=D`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approx: Option<Approx>,
}

impl KernelSpec {
    /// A spec on all features, unnormalized.
    pub fn new(kind: KernelKind) -> Self {
        KernelSpec {
            kind,
            norm: Normalization::None,
            perfeature: false,
            features: None,
            approx: None,
        }
    }

    /// The same spec with normalization `norm`.
    pub(crate) fn with_norm(mut self, norm: Normalization) -> Self {
        self.norm = norm;
        self
    }

    /// Checks parameter ranges (also done by the parser, repeated here for specs built in code).
    pub(crate) fn validate(&self) -> Result<()> {
        validate_kind(&self.kind)?;
        if let Some(f) = &self.features {
            if f.is_empty() {
                return Err(Error::param(
                    "features",
                    "(none)",
                    "at least one 0-based column index",
                ));
            }
        }
        if let Some(a) = &self.approx {
            match (a.method, &self.kind) {
                (ApproxMethod::Rff, KernelKind::Rbf { .. }) => {}
                (ApproxMethod::Rff, _) => {
                    return Err(Error::param(
                        "approx",
                        "rff",
                        "random Fourier features approximate a Gaussian kernel: rbf only",
                    ))
                }
                (ApproxMethod::Nystrom, kind) if has_bspline(kind) => {
                    return Err(Error::param(
                        "approx",
                        "nystrom",
                        "the Nystrom map needs a dense positive semi-definite kernel: any kernel \
                         but bspline (sparse, and not positive semi-definite on several features)",
                    ))
                }
                (ApproxMethod::Nystrom, _) => {}
                (ApproxMethod::Sketch, KernelKind::Poly { degree, .. }) => {
                    if *degree > MAX_SKETCH_DEGREE {
                        return Err(Error::param(
                            "degree",
                            degree,
                            format!(
                                "a degree in 1..={MAX_SKETCH_DEGREE} for approx=sketch (the \
                                 sketch's variance grows like 3^degree)"
                            ),
                        ));
                    }
                }
                (ApproxMethod::Sketch, _) => {
                    return Err(Error::param(
                        "approx",
                        "sketch",
                        "the polynomial sketch approximates a polynomial kernel: poly only",
                    ))
                }
            }
            let max = match a.method {
                ApproxMethod::Nystrom => MAX_NYSTROM_DIM,
                ApproxMethod::Rff | ApproxMethod::Sketch => MAX_APPROX_DIM,
            };
            if !(1..=max).contains(&a.dim) {
                let what = match a.method {
                    ApproxMethod::Nystrom => format!(
                        "a number of Nystrom landmarks in 1..={max} (an m x m eigenproblem)"
                    ),
                    _ => format!("a number of features in 1..={max}"),
                };
                return Err(Error::param("dim", a.dim, what));
            }
        }
        if self.perfeature && matches!(self.kind, KernelKind::Const) {
            return Err(Error::param(
                "kernel",
                self,
                "perfeature:const is the same constant kernel once per feature; use 'const'",
            ));
        }
        Ok(())
    }
}

/// Whether a B1-spline is anywhere in `kind`.
fn has_bspline(kind: &KernelKind) -> bool {
    match kind {
        KernelKind::BSpline { .. } => true,
        KernelKind::Product(fs) => fs.iter().any(has_bspline),
        _ => false,
    }
}

fn validate_kind(kind: &KernelKind) -> Result<()> {
    match kind {
        KernelKind::Linear | KernelKind::Const => Ok(()),
        KernelKind::Poly { degree, offset } => {
            if *degree == 0 || *degree > 1000 {
                return Err(Error::param(
                    "degree",
                    degree,
                    "an integer in 1..=1000 (poly kernel)",
                ));
            }
            if !(offset.is_finite() && *offset >= 0.0) {
                return Err(Error::param(
                    "offset",
                    offset,
                    "a finite number >= 0 (poly kernel; keeps it positive semi-definite)",
                ));
            }
            Ok(())
        }
        KernelKind::Rbf { sigma2, scale } => match (sigma2, scale) {
            (Some(s), _) if !(s.is_finite() && *s > 0.0) => Err(Error::param(
                "sigma2",
                s,
                "a finite number > 0 (rbf kernel; or omit it for the median heuristic)",
            )),
            (_, Some(s)) if !(s.is_finite() && *s > 0.0) => Err(Error::param(
                "scale",
                s,
                "a finite number > 0 (rbf kernel: a multiple of the median heuristic)",
            )),
            (Some(_), Some(_)) => Err(Error::param(
                "scale",
                format!("{}", scale.unwrap_or(0.0)),
                "scale multiplies the median heuristic: give sigma2 or scale, not both",
            )),
            _ => Ok(()),
        },
        KernelKind::BSpline { h, zeros } => {
            if let Some(h) = h {
                if !(h.is_finite() && *h > 0.0) {
                    return Err(Error::param("h", h, "a finite number > 0 (bspline kernel)"));
                }
            }
            if let Some(z) = zeros {
                if !(*z >= 0.0 && *z < 1.0) {
                    return Err(Error::param(
                        "zeros",
                        z,
                        "a fraction in [0, 1) (bspline kernel)",
                    ));
                }
            }
            Ok(())
        }
        KernelKind::Product(fs) => {
            if fs.is_empty() {
                return Err(Error::param(
                    "kernel",
                    "product()",
                    "product() needs at least one factor",
                ));
            }
            fs.iter().try_for_each(validate_kind)
        }
    }
}

/// Expands `perfeature` specs into one spec per input column (`features = Some(vec![j])`,
/// over `0..n_features`, or over the spec's own `features` when given); other specs are
/// passed through unchanged.
pub fn expand_specs(specs: &[KernelSpec], n_features: usize) -> Vec<KernelSpec> {
    let mut out = Vec::new();
    for s in specs {
        if s.perfeature {
            let cols: Vec<usize> = match &s.features {
                Some(f) => f.clone(),
                None => (0..n_features).collect(),
            };
            out.extend(cols.into_iter().map(|j| KernelSpec {
                kind: s.kind.clone(),
                norm: s.norm,
                perfeature: false,
                features: Some(vec![j]),
                approx: s.approx,
            }));
        } else {
            out.push(s.clone());
        }
    }
    out
}

// ---------------------------------------------------------------- Display

fn fmt_kind(kind: &KernelKind) -> (String, Vec<String>) {
    match kind {
        KernelKind::Linear => ("linear".into(), vec![]),
        KernelKind::Const => ("const".into(), vec![]),
        KernelKind::Poly { degree, offset } => (
            "poly".into(),
            vec![format!("degree={degree}"), format!("offset={offset}")],
        ),
        KernelKind::Rbf { sigma2, scale } => (
            "rbf".into(),
            sigma2
                .iter()
                .map(|s| format!("sigma2={s}"))
                .chain(scale.iter().map(|s| format!("scale={s}")))
                .collect(),
        ),
        KernelKind::BSpline { h, zeros } => {
            let mut k = Vec::new();
            if let Some(h) = h {
                k.push(format!("h={h}"));
            }
            if let Some(z) = zeros {
                k.push(format!("zeros={z}"));
            }
            ("bspline".into(), k)
        }
        KernelKind::Product(fs) => {
            let inner: Vec<String> = fs.iter().map(fmt_factor).collect();
            (format!("product({})", inner.join("*")), vec![])
        }
    }
}

fn fmt_factor(kind: &KernelKind) -> String {
    let (name, keys) = fmt_kind(kind);
    if keys.is_empty() {
        name
    } else {
        format!("{name}:{}", keys.join(","))
    }
}

impl fmt::Display for KernelKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&fmt_factor(self))
    }
}

impl fmt::Display for KernelSpec {
    /// The spec in the parser's grammar; `s.to_string().parse() == Ok(s)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, mut keys) = fmt_kind(&self.kind);
        if self.norm != Normalization::None {
            keys.push(format!("norm={}", self.norm));
        }
        if let Some(feat) = &self.features {
            let list: Vec<String> = feat.iter().map(|j| j.to_string()).collect();
            keys.push(format!("features={}", list.join("+")));
        }
        if let Some(a) = &self.approx {
            keys.push(format!("approx={},dim={}", a.method.as_str(), a.dim));
        }
        if self.perfeature {
            f.write_str("perfeature:")?;
        }
        f.write_str(&name)?;
        if !keys.is_empty() {
            write!(f, ":{}", keys.join(","))?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- parsing

const ACCEPTED_KINDS: &str =
    "linear, poly, rbf, bspline, const, product(A*B*...), each optionally prefixed by perfeature:";

fn keys_of(name: &str) -> &'static str {
    match name {
        "poly" => "degree, offset, norm, features, approx, dim",
        "rbf" => "sigma2, scale, norm, features, approx, dim",
        "bspline" => "h, zeros, norm, features",
        _ => "norm, features, approx, dim",
    }
}

/// Splits `s` at `sep` outside parentheses.
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            c if c == sep && depth == 0 => {
                parts.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

fn parse_pairs<'a>(s: &'a str, ctx: &str) -> Result<Vec<(&'a str, &'a str)>> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let Some((k, v)) = part.split_once('=') else {
            return Err(bad(ctx, format!("'{part}' is not a key=value pair")));
        };
        let (k, v) = (k.trim(), v.trim());
        if out.iter().any(|(k0, _)| *k0 == k) {
            return Err(bad(ctx, format!("key '{k}' is given twice")));
        }
        out.push((k, v));
    }
    Ok(out)
}

fn num<T: FromStr>(ctx: &str, key: &str, v: &str, what: &str) -> Result<T> {
    v.parse::<T>()
        .map_err(|_| bad(ctx, format!("{key}={v} is not {what}")))
}

/// [`Error::InvalidParameter`] for the kernel spec `ctx`.
fn bad(ctx: &str, msg: impl Into<String>) -> Error {
    Error::param("kernel", ctx, msg)
}

/// An error found while checking the spec `ctx`, reported as a bad kernel spec (an error
/// that already names the kernel keeps its own message).
fn in_spec(ctx: &str, e: Error) -> Error {
    match e {
        Error::InvalidParameter { name, expected, .. } if name == "kernel" => bad(ctx, expected),
        e => bad(ctx, e.to_string()),
    }
}

/// Parses `NAME[:k=v,...]` (or `product(...)[:k=v,...]`) into a kind plus the keys that are
/// not kernel parameters (norm, features), which the caller handles.
fn parse_kind<'a>(s: &'a str, ctx: &str) -> Result<(KernelKind, Vec<(&'a str, &'a str)>)> {
    let s = s.trim();
    let (head, rest) = if let Some(inner_start) = s.strip_prefix("product(") {
        // Find the parenthesis closing "product(".
        let mut depth = 1i32;
        let mut close = None;
        for (i, c) in inner_start.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else {
            return Err(bad(ctx, "unbalanced parenthesis in product(...)"));
        };
        let after = &inner_start[close + 1..];
        let rest = if after.trim().is_empty() {
            None
        } else if let Some(r) = after.strip_prefix(':') {
            Some(r)
        } else {
            return Err(bad(
                ctx,
                format!("expected ':' or the end after product(...), found '{after}'"),
            ));
        };
        (&s[.."product(".len() + close + 1], rest)
    } else {
        match s.split_once(':') {
            Some((h, r)) => (h.trim(), Some(r)),
            None => (s, None),
        }
    };
    let pairs = match rest {
        Some(r) => parse_pairs(r, ctx)?,
        None => Vec::new(),
    };
    let mut spec_keys = Vec::new();
    let kind = if let Some(inner) = head.strip_prefix("product(") {
        let inner = &inner[..inner.len() - 1];
        if inner.trim().is_empty() {
            return Err(bad(
                ctx,
                "product() needs at least one factor, e.g. product(linear*rbf)",
            ));
        }
        let mut factors = Vec::new();
        for f in split_top(inner, '*') {
            let (k, extra) = parse_kind(f, ctx)?;
            if let Some((key, _)) = extra.first() {
                return Err(bad(
                    ctx,
                    format!("key '{key}' belongs after product(...), not to a factor"),
                ));
            }
            factors.push(k);
        }
        for p in pairs {
            match p.0 {
                "norm" | "features" | "approx" | "dim" => spec_keys.push(p),
                k => {
                    return Err(bad(
                        ctx,
                        format!(
                            "unknown key '{k}' for product (accepted: norm, features, approx, dim)"
                        ),
                    ))
                }
            }
        }
        KernelKind::Product(factors)
    } else {
        let name = match head {
            "gaussian" => "rbf",
            "b1spline" => "bspline",
            "constant" => "const",
            n => n,
        };
        let mut degree = None;
        let mut offset = None;
        let mut sigma2 = None;
        let mut scale = None;
        let mut h = None;
        let mut zeros = None;
        for (k, v) in pairs {
            match (name, k) {
                (_, "norm") | (_, "features") | (_, "approx") | (_, "dim") => {
                    spec_keys.push((k, v))
                }
                ("poly", "degree") => degree = Some(num::<u32>(ctx, k, v, "a positive integer")?),
                ("poly", "offset") => offset = Some(num::<f64>(ctx, k, v, "a number")?),
                ("rbf", "sigma2") => {
                    sigma2 = if v == "median" {
                        None
                    } else {
                        Some(num::<f64>(ctx, k, v, "a number > 0 (or 'median')")?)
                    }
                }
                ("rbf", "scale") => {
                    scale = Some(num::<f64>(
                        ctx,
                        k,
                        v,
                        "a number > 0 (times the median heuristic)",
                    )?)
                }
                ("bspline", "h") => h = Some(num::<f64>(ctx, k, v, "a number > 0")?),
                ("bspline", "zeros") => zeros = Some(num::<f64>(ctx, k, v, "a fraction")?),
                ("linear" | "poly" | "rbf" | "bspline" | "const", k) => {
                    return Err(bad(
                        ctx,
                        format!("unknown key '{k}' for {name} (accepted: {})", keys_of(name)),
                    ))
                }
                _ => break,
            }
        }
        match name {
            "linear" => KernelKind::Linear,
            "const" => KernelKind::Const,
            "poly" => KernelKind::Poly {
                degree: degree.unwrap_or(2),
                offset: offset.unwrap_or(1.0),
            },
            "rbf" => KernelKind::Rbf { sigma2, scale },
            "bspline" => {
                if h.is_some() && zeros.is_some() {
                    return Err(bad(ctx, "give either h or zeros for bspline, not both"));
                }
                KernelKind::BSpline { h, zeros }
            }
            other => {
                return Err(bad(
                    ctx,
                    format!("unknown kernel '{other}' (accepted: {ACCEPTED_KINDS})"),
                ))
            }
        }
    };
    validate_kind(&kind).map_err(|e| in_spec(ctx, e))?;
    Ok((kind, spec_keys))
}

impl FromStr for KernelSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let ctx = s.trim();
        if ctx.is_empty() {
            return Err(bad(
                ctx,
                format!("an empty kernel spec (accepted: {ACCEPTED_KINDS})"),
            ));
        }
        let (perfeature, body) = match ctx.strip_prefix("perfeature:") {
            Some(b) => (true, b),
            None => (false, ctx),
        };
        let (kind, keys) = parse_kind(body, ctx)?;
        let mut spec = KernelSpec {
            kind,
            norm: Normalization::None,
            perfeature,
            features: None,
            approx: None,
        };
        let mut dim = None;
        for (k, v) in keys {
            match k {
                "norm" => spec.norm = v.parse().map_err(|e| in_spec(ctx, e))?,
                "features" => {
                    let list = v
                        .split('+')
                        .map(|j| num::<usize>(ctx, "features", j.trim(), "a 0-based column index"))
                        .collect::<Result<Vec<usize>>>()?;
                    spec.features = Some(list);
                }
                "approx" => {
                    let Some(method) = ApproxMethod::from_name(v) else {
                        return Err(bad(
                            ctx,
                            format!("approx={v} is not a feature map (accepted: {APPROX_NAMES})"),
                        ));
                    };
                    spec.approx = Some(Approx {
                        method,
                        dim: DEFAULT_APPROX_DIM,
                    });
                }
                "dim" => dim = Some(num::<usize>(ctx, "dim", v, "a number of features")?),
                _ => unreachable!("parse_kind only returns norm, features, approx and dim"),
            }
        }
        match (&mut spec.approx, dim) {
            (Some(a), Some(d)) => a.dim = d,
            (None, Some(_)) => return Err(bad(
                ctx,
                "dim= is the dimension of an approximation: give approx= too (approx=rff,dim=D)",
            )),
            _ => {}
        }
        spec.validate().map_err(|e| in_spec(ctx, e))?;
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> KernelSpec {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn spec_parse_values() {
        assert_eq!(p("linear"), KernelSpec::new(KernelKind::Linear));
        assert_eq!(
            p("poly"),
            KernelSpec::new(KernelKind::Poly {
                degree: 2,
                offset: 1.0
            })
        );
        assert_eq!(
            p(" poly:degree=3, offset=0.5 ,norm=diag"),
            KernelSpec::new(KernelKind::Poly {
                degree: 3,
                offset: 0.5
            })
            .with_norm(Normalization::Diag)
        );
        let s = p("perfeature:rbf:sigma2=1,norm=variance");
        assert!(s.perfeature);
        assert_eq!(
            s.kind,
            KernelKind::Rbf {
                sigma2: Some(1.0),
                scale: None
            }
        );
        assert_eq!(s.norm, Normalization::Variance);
        assert_eq!(
            p("rbf:sigma2=median").kind,
            KernelKind::Rbf {
                sigma2: None,
                scale: None
            }
        );
        assert_eq!(
            p("bspline:zeros=0.9").kind,
            KernelKind::BSpline {
                h: None,
                zeros: Some(0.9)
            }
        );
        assert_eq!(p("linear:features=3+1").features, Some(vec![3, 1]));
        assert_eq!(
            p("product(linear*rbf:sigma2=2):norm=trace"),
            KernelSpec::new(KernelKind::Product(vec![
                KernelKind::Linear,
                KernelKind::Rbf {
                    sigma2: Some(2.0),
                    scale: None
                }
            ]))
            .with_norm(Normalization::Trace)
        );
    }

    #[test]
    fn spec_round_trip() {
        let cases = [
            "linear",
            "const",
            "poly:degree=2,offset=1",
            "poly:degree=5,offset=0.125,norm=diag",
            "rbf",
            "rbf:sigma2=3.2,norm=variance",
            "rbf:sigma2=0.1",
            "bspline",
            "bspline:zeros=0.9,norm=trace",
            "bspline:h=1.7",
            "perfeature:linear",
            "perfeature:rbf:sigma2=1,norm=variance",
            "perfeature:poly:degree=3,offset=1,features=0+2",
            "linear:norm=diag,features=4",
            "product(linear*rbf:sigma2=2)",
            "product(poly:degree=2,offset=1*product(bspline:h=1*const)):norm=diag,features=1+2",
        ];
        for c in cases {
            let s = p(c);
            assert_eq!(s.to_string(), c, "display of {c}");
            assert_eq!(p(&s.to_string()), s, "round trip of {c}");
        }
        // Odd floats survive exactly.
        let s = KernelSpec::new(KernelKind::Rbf {
            sigma2: Some(0.1 + 0.2),
            scale: None,
        });
        assert_eq!(p(&s.to_string()), s);
    }

    #[test]
    fn spec_bad_inputs_are_errors_naming_the_part() {
        let cases = [
            ("", "empty"),
            ("linaer", "linaer"),
            ("rbf:sigma=2", "sigma"),
            ("rbf:sigma2=-1", "sigma2"),
            ("rbf:sigma2=abc", "abc"),
            ("poly:degree=0", "degree"),
            ("poly:degree=2.5", "2.5"),
            ("poly:offset=-1", "offset"),
            ("linear:degree=2", "degree"),
            ("linear:norm=unit", "unit"),
            ("linear:norm", "norm"),
            ("linear:norm=diag,norm=trace", "twice"),
            ("bspline:zeros=1.5", "zeros"),
            ("bspline:h=1,zeros=0.9", "either"),
            ("bspline:h=0", "h="),
            ("perfeature:const", "perfeature"),
            ("linear:features=a", "features"),
            ("product()", "factor"),
            ("product(linear*rbf", "parenthesis"),
            ("product(linear:norm=diag)", "norm"),
            ("product(linear)x", "product"),
            ("product(linear):sigma2=1", "sigma2"),
        ];
        for (c, needle) in cases {
            match c.parse::<KernelSpec>() {
                Ok(s) => panic!("'{c}' parsed as {s:?}"),
                Err(e) => {
                    assert!(
                        matches!(&e, Error::InvalidParameter { name, .. } if name == "kernel"),
                        "{c}: {e:?}"
                    );
                    let msg = e.to_string();
                    assert!(
                        msg.contains(needle),
                        "'{c}': message '{msg}' lacks '{needle}'"
                    );
                }
            }
        }
        // Messages say what is accepted.
        let msg = "foo".parse::<KernelSpec>().unwrap_err().to_string();
        assert!(msg.contains("linear, poly, rbf"), "{msg}");
        let msg = "rbf:sigma=1".parse::<KernelSpec>().unwrap_err().to_string();
        assert!(msg.contains("accepted: sigma2"), "{msg}");
    }

    #[test]
    fn expand_specs_one_per_feature() {
        let specs = [
            p("perfeature:rbf:norm=diag"),
            p("linear"),
            p("perfeature:linear:features=4+7"),
        ];
        let e = expand_specs(&specs, 3);
        assert_eq!(e.len(), 3 + 1 + 2);
        for (j, s) in e[..3].iter().enumerate() {
            assert!(!s.perfeature);
            assert_eq!(s.features, Some(vec![j]));
            assert_eq!(s.norm, Normalization::Diag);
            assert_eq!(
                s.kind,
                KernelKind::Rbf {
                    sigma2: None,
                    scale: None
                }
            );
        }
        assert_eq!(e[3], specs[1]);
        assert_eq!(e[4].features, Some(vec![4]));
        assert_eq!(e[5].features, Some(vec![7]));
    }
}
