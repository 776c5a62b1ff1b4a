//! Fitted kernels: a [`KernelSpec`] with every data-dependent choice resolved on training data
//! (Gaussian width by the median heuristic, B1-spline support for a target sparsity, trace or
//! variance scale; docs/formulas.md "Kernel helpers"), then applied unchanged to test points.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::compute::{self, FittedKind, Post, Side};
use super::feature_map::{map_seed, nystrom, ApproxMethod, FeatureMap, FittedApprox};
use super::gram::Gram;
use super::heuristics::{bspline_h_for_zeros, median_sigma2, sample_rows};
use super::memory::MemoryLimit;
use super::spec::{expand_specs, KernelKind, KernelSpec, Normalization, DEFAULT_BSPLINE_ZEROS};
use crate::data::Matrix;
use crate::error::{Error, Result};

/// Above this many training points the variance normalization estimates
/// `(1/n^2) sum_ij K_ij` from a sample of this many points (unbiased for the off-diagonal
/// mean; the diagonal is always summed exactly).
pub const VARIANCE_MAX_POINTS: usize = 4000;

/// Below this value (relative to the mean diagonal) a trace or variance is taken as zero.
const DEGENERATE: f64 = 1e-12;

/// Resolves the data-dependent parameters of `kind` on the (feature-restricted) rows `x`.
fn resolve(kind: &KernelKind, x: &Matrix, seed: u64) -> FittedKind {
    match kind {
        KernelKind::Linear => FittedKind::Linear,
        KernelKind::Const => FittedKind::Const,
        KernelKind::Poly { degree, offset } => FittedKind::Poly {
            degree: *degree,
            offset: *offset,
        },
        KernelKind::Rbf { sigma2, scale } => FittedKind::Rbf {
            sigma2: sigma2.unwrap_or_else(|| scale.unwrap_or(1.0) * median_sigma2(x, seed)),
        },
        KernelKind::BSpline { h, zeros } => FittedKind::BSpline {
            h: h.unwrap_or_else(|| {
                bspline_h_for_zeros(x, zeros.unwrap_or(DEFAULT_BSPLINE_ZEROS), seed)
            }),
        },
        KernelKind::Product(fs) => {
            FittedKind::Product(fs.iter().map(|f| resolve(f, x, seed)).collect())
        }
    }
}

/// A kernel ready to evaluate on any rows with the training data's columns.
/// Serializable (it goes into model files).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FittedKernel {
    /// Human-readable, e.g. `rbf(sigma2=3.2)`, `linear[f3:age]`, `poly(degree=2,offset=1)/trace`.
    pub name: String,
    kind: FittedKind,
    norm: Normalization,
    /// Factor applied to raw values for trace / variance normalization (1 otherwise).
    scale: f64,
    features: Option<Vec<usize>>,
    /// Number of input columns at fit time.
    n_features: usize,
    /// The kernel is replaced by this explicit approximate map ([`FittedKernel::feature_map`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    approx: Option<FittedApprox>,
}

impl FittedKernel {
    /// Resolves `spec` on the training rows `x_train` (median heuristic, B1-spline `h`,
    /// trace / variance factor). A spec with `perfeature` must be expanded first
    /// ([`expand_specs`] or [`fit_all`]). A kernel that is constant on the training data has
    /// zero variance (or a zero trace); it is then left unscaled (factor 1) rather than
    /// divided by zero.
    pub fn fit(
        spec: &KernelSpec,
        x_train: &Matrix,
        feature_names: &[String],
        seed: u64,
    ) -> Result<FittedKernel> {
        spec.validate()?;
        if spec.perfeature {
            return Err(Error::unsupported(format!(
                "kernel '{spec}' is per-feature: expand it with expand_specs (or use fit_all)"
            )));
        }
        if x_train.rows == 0 {
            return Err(Error::data(format!(
                "kernel '{spec}': cannot fit on an empty training set"
            )));
        }
        if let Some(f) = &spec.features {
            if let Some(&bad) = f.iter().find(|&&j| j >= x_train.cols) {
                return Err(Error::param(
                    "kernel",
                    spec,
                    format!(
                        "feature {bad} does not exist (the data has {} features, numbered from 0)",
                        x_train.cols
                    ),
                ));
            }
        }
        let side = Side::new(x_train, spec.features.as_deref());
        let kind = resolve(&spec.kind, &side.x, seed);
        // The heuristics (median distance, B1-spline width) overflow on inputs near the
        // largest float: refuse here rather than train on an infinite width.
        if let Err(e) = kind.validate() {
            let msg = match e {
                Error::Model { msg, .. } => msg,
                e => e.to_string(),
            };
            return Err(Error::data(format!(
                "kernel '{spec}': its width fitted on the training rows is not usable ({msg}); \
                 the inputs are too large for it (the kernel overflows): scale or standardize \
                 the features"
            )));
        }
        let mut k = FittedKernel {
            name: String::new(),
            kind,
            norm: spec.norm,
            scale: 1.0,
            features: spec.features.clone(),
            n_features: x_train.cols,
            approx: spec.approx.map(|a| FittedApprox {
                method: a.method,
                dim: a.dim,
                seed: map_seed(seed, &spec.to_string()),
                basis: None,
            }),
        };
        let n = side.rows() as f64;
        match spec.norm {
            Normalization::None | Normalization::Diag => {}
            Normalization::Trace => {
                let mean_diag = k.raw_self_sum(&side) / n;
                if mean_diag > 0.0 && mean_diag.is_finite() {
                    k.scale = 1.0 / mean_diag;
                }
            }
            Normalization::Variance => {
                let diag_sum = k.raw_self_sum(&side);
                let var = k.feature_variance(&side, diag_sum, seed);
                if var > DEGENERATE * (diag_sum / n).abs() && var.is_finite() {
                    k.scale = 1.0 / var;
                }
            }
        }
        if let Some(a) = k.approx.as_mut() {
            if a.method == ApproxMethod::Nystrom {
                // Landmarks from the map's own seed, the exact raw kernel between them.
                let basis = nystrom::fit_basis(&k.kind, &side.x, a.dim, a.seed, &spec.to_string())?;
                a.dim = basis.landmarks.rows;
                a.basis = Some(basis);
            }
        }
        k.name = k.describe(feature_names);
        Ok(k)
    }

    /// `sum_i k_raw(x_i, x_i)`.
    fn raw_self_sum(&self, side: &Side) -> f64 {
        side.norms.iter().map(|&na| self.kind.value(na, 0.0)).sum()
    }

    /// `(1/n) sum_i K_ii - (1/n^2) sum_ij K_ij` of the raw kernel; the double sum is exact
    /// up to [`VARIANCE_MAX_POINTS`] points, estimated from a seeded sample above.
    fn feature_variance(&self, side: &Side, diag_sum: f64, seed: u64) -> f64 {
        let n = side.rows();
        let nf = n as f64;
        let total = if n <= VARIANCE_MAX_POINTS || matches!(self.kind, FittedKind::Linear) {
            compute::raw_sum(&self.kind, side)
        } else {
            let idx = sample_rows(n, VARIANCE_MAX_POINTS, seed);
            let sub = Side {
                x: std::borrow::Cow::Owned(side.x.select_rows(&idx)),
                norms: idx.iter().map(|&i| side.norms[i]).collect(),
            };
            let m = idx.len() as f64;
            let sub_total = compute::raw_sum(&self.kind, &sub);
            let sub_diag = self.raw_self_sum(&sub);
            let off_mean = (sub_total - sub_diag) / (m * (m - 1.0));
            diag_sum + nf * (nf - 1.0) * off_mean
        };
        diag_sum / nf - total / (nf * nf)
    }

    fn describe(&self, feature_names: &[String]) -> String {
        let mut s = self.kind.describe();
        if self.norm != Normalization::None {
            s.push('/');
            s.push_str(&self.norm.to_string());
        }
        if let Some(a) = &self.approx {
            s.push_str(&format!("~{}{}", a.method.as_str(), a.dim));
        }
        if let Some(f) = &self.features {
            let tag = |j: usize| match feature_names.get(j) {
                Some(name) if !name.is_empty() => format!("f{j}:{name}"),
                _ => format!("f{j}"),
            };
            let inner = if f.len() <= 4 {
                f.iter().map(|&j| tag(j)).collect::<Vec<_>>().join(",")
            } else {
                format!(
                    "f{},f{},..,f{} ({} features)",
                    f[0],
                    f[1],
                    f[f.len() - 1],
                    f.len()
                )
            };
            s.push_str(&format!("[{inner}]"));
        }
        s
    }

    /// Checks a kernel read from a model file: valid resolved parameters, a finite positive
    /// normalization factor, and feature indices below the number of features it was fitted
    /// on, so that evaluating it on rows of `n_features()` values cannot panic.
    pub(crate) fn validate(&self) -> Result<()> {
        let origin = || format!("kernel {}", self.name);
        self.kind.validate().map_err(|e| match e {
            Error::Model { msg, .. } => Error::model(origin(), msg),
            e => e,
        })?;
        if !(self.scale.is_finite() && self.scale > 0.0) {
            return Err(Error::model(
                origin(),
                format!(
                    "the normalization factor {} is not a positive number",
                    self.scale
                ),
            ));
        }
        self.validate_approx()?;
        if let Some(f) = &self.features {
            if f.is_empty() {
                return Err(Error::model(origin(), "an empty feature list"));
            }
            if let Some(&j) = f.iter().find(|&&j| j >= self.n_features) {
                return Err(Error::model(
                    origin(),
                    format!(
                        "feature {j} does not exist (fitted on {} features)",
                        self.n_features
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The checks of [`Self::validate`] on the approximation: a method that fits the kernel,
    /// a dimension in range, the Nystrom basis present (only for Nystrom) with the shapes of
    /// the kernel's features and landmarks, finite values.
    fn validate_approx(&self) -> Result<()> {
        let origin = || format!("kernel {}", self.name);
        if let Some(a) = &self.approx {
            let (ok, max) = match a.method {
                ApproxMethod::Rff => (
                    matches!(self.kind, FittedKind::Rbf { .. }),
                    super::feature_map::MAX_APPROX_DIM,
                ),
                ApproxMethod::Nystrom => (!self.kind.is_sparse(), nystrom::MAX_NYSTROM_DIM),
                ApproxMethod::Sketch => (
                    matches!(self.kind, FittedKind::Poly { degree, .. }
                        if degree <= super::feature_map::MAX_SKETCH_DEGREE),
                    super::feature_map::MAX_APPROX_DIM,
                ),
            };
            if !ok || !(1..=max).contains(&a.dim) {
                return Err(Error::model(
                    origin(),
                    format!(
                        "approximation {} of dimension {} does not fit the kernel",
                        a.method.as_str(),
                        a.dim
                    ),
                ));
            }
            match (&a.basis, a.method) {
                (None, ApproxMethod::Rff | ApproxMethod::Sketch) => {}
                (Some(b), ApproxMethod::Nystrom) => {
                    let d_f = self.features.as_ref().map_or(self.n_features, Vec::len);
                    b.validate(a.dim, d_f)
                        .map_err(|msg| Error::model(origin(), msg))?;
                }
                (Some(_), _) => {
                    return Err(Error::model(
                        origin(),
                        format!("approximation {} has Nystrom landmarks", a.method.as_str()),
                    ))
                }
                (None, ApproxMethod::Nystrom) => {
                    return Err(Error::model(
                        origin(),
                        "a Nystrom approximation without its landmarks and projection",
                    ))
                }
            }
        }
        Ok(())
    }

    /// The resolved kernel form.
    pub(crate) fn kind(&self) -> &FittedKind {
        &self.kind
    }

    pub(crate) fn norm(&self) -> Normalization {
        self.norm
    }

    /// The trace / variance factor (1 for other normalizations).
    pub(crate) fn scale(&self) -> f64 {
        self.scale
    }

    /// The input columns the kernel reads (`None` = all).
    pub(crate) fn features(&self) -> Option<&[usize]> {
        self.features.as_deref()
    }

    /// Number of input columns the kernel was fitted on.
    pub(crate) fn n_features(&self) -> usize {
        self.n_features
    }

    /// B1-spline (anywhere in a product) => sparse Gram matrices (never for a kernel
    /// approximated by a feature map).
    pub(crate) fn is_sparse(&self) -> bool {
        self.approx.is_none() && self.kind.is_sparse()
    }

    /// The approximation replacing the kernel, if any (`approx=` in its SPEC).
    pub(crate) fn approx(&self) -> Option<&FittedApprox> {
        self.approx.as_ref()
    }

    /// The explicit feature map `z` with `k(x, x') = z(x) . z(x')` ([`super::feature_map`]):
    /// a kernel with `approx=` (random Fourier features, Nystrom, polynomial sketch: `k` here
    /// is the approximate kernel, what every method computes with it), or a linear kernel
    /// (exact). `None` for the others (and for an approximation that does not fit its kernel,
    /// which `Self::validate` refuses).
    pub fn feature_map(&self) -> Option<FeatureMap> {
        let unit = self.norm == Normalization::Diag;
        let factor = if unit { 1.0 } else { self.scale.sqrt() };
        // A map that does not fit its kernel (a mangled model file) is no map, never one that
        // panics or allocates without bound: the checks of `validate` on the approximation.
        if self.approx.is_some() && self.validate_approx().is_err() {
            return None;
        }
        match (&self.approx, &self.kind) {
            (Some(a), FittedKind::Rbf { sigma2 }) if a.method == ApproxMethod::Rff => {
                Some(FeatureMap::fourier(
                    self.features.clone(),
                    self.n_features,
                    *sigma2,
                    a.dim,
                    a.seed,
                    factor,
                    unit,
                ))
            }
            (Some(a), FittedKind::Poly { degree, offset }) if a.method == ApproxMethod::Sketch => {
                Some(FeatureMap::sketch(
                    self.features.clone(),
                    self.n_features,
                    *degree,
                    *offset,
                    a.dim,
                    a.seed,
                    factor,
                    unit,
                ))
            }
            (Some(a), kind) if a.method == ApproxMethod::Nystrom => a
                .basis
                .as_ref()
                .map(|b| FeatureMap::nystrom(self.features.clone(), kind.clone(), b, factor, unit)),
            (Some(_), _) => None,
            (None, FittedKind::Linear) => Some(FeatureMap::columns(
                self.features.clone(),
                self.n_features,
                factor,
                unit,
            )),
            (None, _) => None,
        }
    }

    /// The map of a kernel that must be computed through it (an approximation).
    fn approx_map(&self) -> Option<FeatureMap> {
        self.approx.as_ref().and(self.feature_map())
    }

    /// `(x . x', ||x - x'||^2)` over the kernel's features.
    #[inline]
    fn pair(&self, a: &[f64], b: &[f64]) -> (f64, f64) {
        let (mut d, mut s) = (0.0, 0.0);
        let mut acc = |x: f64, y: f64| {
            d += x * y;
            s += (x - y) * (x - y);
        };
        match &self.features {
            Some(f) => f.iter().for_each(|&j| acc(a[j], b[j])),
            None => a.iter().zip(b).for_each(|(&x, &y)| acc(x, y)),
        }
        (d, s)
    }

    #[inline]
    fn raw_self(&self, a: &[f64]) -> f64 {
        let na = match &self.features {
            Some(f) => f.iter().map(|&j| a[j] * a[j]).sum(),
            None => a.iter().map(|v| v * v).sum(),
        };
        self.kind.value(na, 0.0)
    }

    /// The normalized kernel value `k(a, b)` of two full input rows (for an approximated
    /// kernel `z(a) . z(b)`, its map drawn anew on each call: slow, for checks).
    pub(crate) fn eval(&self, a: &[f64], b: &[f64]) -> f64 {
        debug_assert!(a.len() >= self.n_features && b.len() >= self.n_features);
        if let Some(map) = self.approx_map() {
            let (mut za, mut zb) = (vec![0.0; map.dim()], vec![0.0; map.dim()]);
            map.map_row(a, &mut za);
            map.map_row(b, &mut zb);
            return crate::linalg::dot(&za, &zb);
        }
        let (d, s) = self.pair(a, b);
        let raw = self.kind.value(d, s);
        match self.norm {
            Normalization::Diag => {
                let q = self.raw_self(a) * self.raw_self(b);
                if q > 0.0 {
                    raw / q.sqrt()
                } else {
                    0.0
                }
            }
            _ => raw * self.scale,
        }
    }

    /// `eval(a, a)` without the pair loop.
    pub(crate) fn self_eval(&self, a: &[f64]) -> f64 {
        if self.approx.is_some() {
            return self.eval(a, a);
        }
        let raw = self.raw_self(a);
        match self.norm {
            Normalization::Diag => {
                if raw > 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
            _ => raw * self.scale,
        }
    }

    /// `k(a_i, a_i)` for every row.
    pub(crate) fn diag(&self, a: &Matrix) -> Vec<f64> {
        if let Some(map) = self.approx_map() {
            let z = map.map_rows(a);
            return (0..z.rows)
                .map(|i| crate::linalg::sq_norm(z.row(i)))
                .collect();
        }
        (0..a.rows).map(|i| self.self_eval(a.row(i))).collect()
    }

    /// `Z_a Z_b^T` of an approximated kernel, memory checked for the result and the maps.
    fn gram_of_map(
        &self,
        map: &FeatureMap,
        a: &Matrix,
        b: Option<&Matrix>,
        limit: &MemoryLimit,
        what: &str,
    ) -> Result<Gram> {
        let rows_b = b.map_or(a.rows, |b| b.rows);
        let bytes = a
            .rows
            .saturating_mul(rows_b)
            .saturating_add((a.rows + rows_b).saturating_mul(map.dim()))
            .saturating_mul(8);
        limit.check(bytes, what)?;
        let za = map.map_rows(a);
        let zbt = match b {
            Some(b) => map.map_rows(b).transpose(),
            None => za.transpose(),
        };
        Ok(Gram::Dense(crate::linalg::matmul(&za, &zbt)))
    }

    fn check_cols(&self, m: &Matrix) -> Result<()> {
        if m.cols != self.n_features {
            return Err(Error::shape(
                format!("features of the data for kernel {}", self.name),
                self.n_features,
                m.cols,
            ));
        }
        Ok(())
    }

    /// Post-scaling of raw values for rows `a` (row side) and `b` (column side).
    fn post(&self, a: &Side, b: Option<&Side>) -> Post {
        match self.norm {
            Normalization::Diag => {
                let inv = |s: &Side| -> Vec<f64> {
                    s.norms
                        .iter()
                        .map(|&na| {
                            let r = self.kind.value(na, 0.0);
                            if r > 0.0 {
                                1.0 / r.sqrt()
                            } else {
                                0.0
                            }
                        })
                        .collect()
                };
                let row = inv(a);
                let col = match b {
                    Some(b) => inv(b),
                    None => row.clone(),
                };
                Post {
                    c: 1.0,
                    row: Some(row),
                    col: Some(col),
                }
            }
            _ => Post {
                c: self.scale,
                row: None,
                col: None,
            },
        }
    }

    /// The `|a| x |b|` Gram matrix `G[i, j] = k(a_i, b_j)`: dense through a matrix product
    /// per row block, or sparse (CSR) for B1-splines; refuses with [`Error::Memory`] when the
    /// result would exceed `limit`.
    pub fn gram(&self, a: &Matrix, b: &Matrix, limit: &MemoryLimit) -> Result<Gram> {
        self.check_cols(a)?;
        self.check_cols(b)?;
        let what = format!(
            "the {} x {} Gram matrix of kernel {}",
            a.rows, b.rows, self.name
        );
        if let Some(map) = self.approx_map() {
            return self.gram_of_map(&map, a, Some(b), limit, &what);
        }
        let sa = Side::new(a, self.features.as_deref());
        let sb = Side::new(b, self.features.as_deref());
        let post = self.post(&sa, Some(&sb));
        if self.is_sparse() {
            compute::sparse(&self.kind, &sa, &sb, &post, None, limit, &what).map(Gram::Sparse)
        } else {
            compute::dense(&self.kind, &sa, &sb, &post, limit, &what).map(Gram::Dense)
        }
    }

    /// The symmetric Gram matrix `G[i, j] = k(a_i, a_j)` (half the work of [`Self::gram`]
    /// for dense kernels; the diagonal is exact). What the learners train on: a value that
    /// is not finite (inputs so large that the kernel overflows) is an [`Error::Data`]
    /// naming the kernel, never a model with NaN weights.
    pub fn gram_sym(&self, a: &Matrix, limit: &MemoryLimit) -> Result<Gram> {
        let g = self.gram_sym_unchecked(a, limit)?;
        if !g.all_finite() {
            let largest = a.data.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            return Err(Error::data(format!(
                "kernel {}: its Gram matrix on the training rows has a non-finite value \
                 (the inputs, up to {largest:e} in magnitude, are too large for it: the kernel \
                 overflows); scale or standardize the features",
                self.name
            )));
        }
        Ok(g)
    }

    fn gram_sym_unchecked(&self, a: &Matrix, limit: &MemoryLimit) -> Result<Gram> {
        self.check_cols(a)?;
        let what = format!(
            "the {} x {} Gram matrix of kernel {}",
            a.rows, a.rows, self.name
        );
        if let Some(map) = self.approx_map() {
            return self.gram_of_map(&map, a, None, limit, &what);
        }
        let sa = Side::new(a, self.features.as_deref());
        let post = self.post(&sa, None);
        let diag = self.diag(a);
        if self.is_sparse() {
            compute::sparse(&self.kind, &sa, &sa, &post, Some(&diag), limit, &what)
                .map(Gram::Sparse)
        } else {
            compute::dense_sym(&self.kind, &sa, &post, &diag, limit, &what).map(Gram::Dense)
        }
    }
}

/// Expands per-feature specs ([`expand_specs`]) and fits every kernel on `x_train`
/// (in parallel, each with `seed`).
pub fn fit_all(
    specs: &[KernelSpec],
    x_train: &Matrix,
    feature_names: &[String],
    seed: u64,
) -> Result<Vec<FittedKernel>> {
    expand_specs(specs, x_train.cols)
        .par_iter()
        .map(|s| FittedKernel::fit(s, x_train, feature_names, seed))
        .collect()
}
