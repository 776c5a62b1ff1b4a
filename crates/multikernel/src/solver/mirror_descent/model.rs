//! The trained models on raw rows: polynomial-kernel MKL by mirror descent or UCD
//! ([`PolyMklModel`], fitted through a reusable [`PolyProblem`]) and the uniform polynomial
//! kernel baseline of Sec. 5.3 ([`UniformPolyModel`]).

use super::engine::{solve, MdSolution};
use super::params::{MirrorDescentParams, SolverOptions};
use super::sampler::{PolyBasis, PolySampler};
use crate::data::standardize::{Standardizer, TargetScaler};
use crate::data::{Matrix, MatrixRef};
use crate::error::{Error, Result};
use crate::kernel::{expand_specs, fit_all, FittedKernel, FittedKind, MemoryLimit, Normalization};
use crate::linalg::dot;
use crate::multiset::index_name;
use crate::run::{Observer, RunInfo};
use crate::solver::check;
use crate::trained::summary::{num, value_rows, SHOWN_KERNELS};
use crate::trained::{BatchInput, BatchLearner, DecisionFunction, Summary};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

const ORIGIN: &str = "polynomial MKL";

/// Rows standardized by `s` (a copy), after checking their number of columns.
fn standardize(s: &Standardizer, x: MatrixRef<'_>) -> Result<Matrix> {
    check::len(
        || "features of the data (the model's training features)".into(),
        s.n_features(),
        x.cols(),
    )?;
    let mut xs = x.to_matrix();
    for i in 0..xs.rows {
        s.apply_row(xs.row_mut(i));
    }
    Ok(xs)
}

/// How the trained model predicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PolyPredictor {
    /// Rank-one (per-variable linear) base kernels: `f(x) = sum_m w_m prod_{j in m} z_j(x)`
    /// with `z_j(x) = base_scale[j] * x_std[base_feature[j]]` (explicit monomial weights,
    /// aligned with `terms`).
    /// When every other kernel carries the weight `uniform_weight > 0`, the model adds
    /// `uniform_weight * sum_t alpha_t U(z(x_t), z(x))`, `U` the sum of all product kernels
    /// ([`uniform_value`]) over the training features `z_train` (`n x r`); the `coef` then
    /// hold `(theta_m - uniform_weight) rho_d^-2 z_m^T alpha`.
    Monomials {
        base_feature: Vec<usize>,
        base_scale: Vec<f64>,
        coef: Vec<f64>,
        uniform: Option<(Vec<f64>, Matrix)>,
    },
    /// General base kernels: `f(x) = sum_t alpha_t K_theta(x_t, x)` with
    /// `K_theta = uniform_weight U + sum_m (theta_m - uniform_weight) rho_d^-2 prod_{j in m}
    /// kappa_j` over the standardized training rows.
    Dual {
        base: Vec<FittedKernel>,
        x_train: Matrix,
        alpha: Vec<f64>,
    },
}

/// One learned product kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolyTerm {
    /// Base-kernel indices (0-based, sorted).
    pub index: Vec<u32>,
    /// Kernel weight `theta_m` (the weights have unit l2 norm).
    pub weight: f64,
}

/// Training data prepared for the polynomial family: standardized inputs and targets, the
/// fitted base kernels and the sampler (reusable across `lambda` values).
pub struct PolyProblem {
    pub standardizer: Standardizer,
    pub target: TargetScaler,
    /// Standardized targets.
    pub y: Vec<f64>,
    pub base: Vec<FittedKernel>,
    /// `Some((feature, scale))` per base kernel when all are rank one.
    pub rank_one: Option<Vec<(usize, f64)>>,
    pub base_names: Vec<String>,
    pub x_train: Matrix,
    pub sampler: PolySampler,
    pub degree: usize,
    pub rho2: Vec<f64>,
}

/// `Some((feature, sqrt(scale)))` when the kernel is `scale * x_j x'_j`.
fn rank_one_of(k: &FittedKernel) -> Option<(usize, f64)> {
    match (k.kind(), k.features(), k.norm()) {
        (FittedKind::Linear, Some([j]), norm) if norm != Normalization::Diag => {
            let s = k.scale();
            (s > 0.0 && s.is_finite()).then(|| (*j, s.sqrt()))
        }
        _ => None,
    }
}

impl PolyProblem {
    /// Standardizes `x` and `y`, fits the base kernels on the standardized rows and builds
    /// the sampler (Algorithm 3's Hadamard powers).
    pub fn new(x: MatrixRef<'_>, y: &[f64], params: &MirrorDescentParams) -> Result<PolyProblem> {
        check::len(|| "targets (one per row)".into(), x.rows(), y.len())?;
        if x.rows() < 2 {
            return Err(Error::data("training needs at least two rows"));
        }
        if x.data().iter().chain(y).any(|v| !v.is_finite()) {
            return Err(Error::data("the training data contain a non-finite value"));
        }
        let rho2 = params.rho2_full()?;
        let mut xs = x.to_matrix();
        let standardizer = Standardizer::fit(&xs);
        for i in 0..xs.rows {
            standardizer.apply_row(xs.row_mut(i));
        }
        let target = TargetScaler::fit(y);
        let ys = target.apply_all(y);
        let specs = expand_specs(&params.base, x.cols());
        if specs.is_empty() {
            return Err(Error::param("base", "none", "at least one base kernel"));
        }
        let names: Vec<String> = (1..=x.cols()).map(|i| format!("x{i}")).collect();
        let base = fit_all(&specs, &xs, &names, params.solver.seed)?;
        let ro: Option<Vec<(usize, f64)>> = base.iter().map(rank_one_of).collect();
        let n = xs.rows;
        let (basis, base_names) = match &ro {
            Some(list) => {
                let mut z = Matrix::zeros(list.len(), n);
                for (j, &(f, s)) in list.iter().enumerate() {
                    for t in 0..n {
                        z.set(j, t, s * xs.get(t, f));
                    }
                }
                let nm = list.iter().map(|&(f, _)| names[f].clone()).collect();
                (PolyBasis::RankOne { z }, nm)
            }
            None => {
                params.memory.check(
                    base.len().saturating_mul(n * n * 8),
                    &format!("{} base Gram matrices of {n} x {n}", base.len()),
                )?;
                let grams = base
                    .iter()
                    .map(|k| Ok(k.gram_sym(&xs, &params.memory)?.to_dense()))
                    .collect::<Result<Vec<Matrix>>>()?;
                let nm = base.iter().map(|k| format!("[{}]", k.name)).collect();
                (PolyBasis::Full { grams }, nm)
            }
        };
        let sampler = PolySampler::new(basis, params.degree, &rho2, &params.memory)?;
        Ok(PolyProblem {
            standardizer,
            target,
            y: ys,
            base,
            rank_one: ro,
            base_names,
            x_train: xs,
            sampler,
            degree: params.degree,
            rho2,
        })
    }

    /// Runs the solver ([`solve`], under its run contract) and wraps the result as a model;
    /// the solution and the run's information come with it.
    pub fn fit(
        &self,
        opts: &SolverOptions,
        observer: &dyn Observer,
    ) -> Result<(PolyMklModel, MdSolution, RunInfo)> {
        let (sol, info) = solve(&self.sampler, &self.y, opts, observer)?;
        let u = sol.uniform_weight;
        let predictor = match &self.rank_one {
            Some(list) => {
                let coef = sol
                    .terms
                    .iter()
                    .map(|(m, th)| {
                        let f = self.sampler.feature(m).expect("rank-one basis");
                        (th - u) * self.sampler.inv_rho2(m.len()) * dot(&f, &sol.alpha)
                    })
                    .collect();
                let uniform = (u > 0.0).then(|| {
                    let PolyBasis::RankOne { z } = self.sampler.basis() else {
                        unreachable!("rank-one basis")
                    };
                    (sol.alpha.clone(), z.transpose())
                });
                PolyPredictor::Monomials {
                    base_feature: list.iter().map(|p| p.0).collect(),
                    base_scale: list.iter().map(|p| p.1).collect(),
                    coef,
                    uniform,
                }
            }
            None => PolyPredictor::Dual {
                base: self.base.clone(),
                x_train: self.x_train.clone(),
                alpha: sol.alpha.clone(),
            },
        };
        let model = PolyMklModel {
            standardizer: self.standardizer.clone(),
            target: self.target.clone(),
            degree: self.degree,
            lambda: opts.lambda,
            rho2: self.rho2.clone(),
            base_names: self.base_names.clone(),
            terms: sol
                .terms
                .iter()
                .map(|(m, w)| PolyTerm {
                    index: m.clone(),
                    weight: *w,
                })
                .collect(),
            uniform_weight: u,
            kernel_count: self.sampler.kernel_count(),
            predictor,
            objective: sol.objective,
            iterations: sol.iterations,
            eta0: sol.eta0,
            sampling: opts.sampling.name().to_string(),
        };
        Ok((model, sol, info))
    }

    /// Every product kernel of degree `<= degree` (`C(r + D, D)` of them) on rank-one base
    /// kernels, or `None` for general base kernels.
    pub(crate) fn product_kernel_count(&self) -> Option<usize> {
        self.rank_one.as_ref()?;
        let count = crate::multiset::count_kernels(self.sampler.base_count(), self.degree);
        // Saturates far above anything that could fit in memory.
        Some(if count < 1e15 {
            count as usize
        } else {
            usize::MAX
        })
    }

    /// Bytes [`PolyProblem::fit_lp`] needs: the explicit list of `count` rank-one product
    /// kernels (their features, the solver's centered copy and the stacked factor) and two
    /// `n x n` matrices.
    pub(crate) fn lp_bytes(&self) -> Option<usize> {
        let n = self.y.len();
        let count = self.product_kernel_count()?;
        Some(
            3usize
                .saturating_mul(n)
                .saturating_mul(count)
                .saturating_mul(8)
                .saturating_add(2usize.saturating_mul(n).saturating_mul(n).saturating_mul(8)),
        )
    }

    /// The same objective solved exactly (Afkanpour et al. 2013 Sec. 2: p = 2 of Kloft's
    /// lp-MKL over the product kernels `rho_d^-2 K_m`): lp-MKL with p = 2 and no separate bias
    /// (the constant product kernel is the bias) over the explicit list of every product
    /// kernel, each rank one (`z_m = prod_{j in m} z_j` scaled by `rho_d^-1`). Refuses general
    /// base kernels and a list above `memory`. The model predicts through explicit monomial
    /// weights `theta_m rho_d^-2 z_m^T alpha`, as a mirror-descent model with no uniform part.
    pub(crate) fn fit_lp(
        &self,
        lambda: f64,
        memory: &MemoryLimit,
        observer: &dyn Observer,
    ) -> Result<(PolyMklModel, RunInfo)> {
        let Some(list) = &self.rank_one else {
            return Err(Error::unsupported(
                "lp-MKL over explicit product kernels needs rank-one (per-feature linear) base \
                 kernels",
            ));
        };
        let bytes = self.lp_bytes().unwrap_or(usize::MAX);
        let count = self.product_kernel_count().unwrap_or(usize::MAX);
        memory.check(
            bytes,
            &format!(
                "lp-MKL over {count} product kernels on {} points",
                self.y.len()
            ),
        )?;
        let idx: Vec<Vec<u32>> = (0..=self.degree)
            .flat_map(|d| crate::multiset::enumerate_multisets(self.sampler.base_count(), d))
            .collect();
        let scale: Vec<f64> = idx
            .iter()
            .map(|m| self.sampler.inv_rho2(m.len()).sqrt())
            .collect();
        let kernels: Vec<crate::kernel::KernelMatrix> = idx
            .iter()
            .zip(&scale)
            .map(|(m, &s)| {
                let mut z = self.sampler.feature(m).expect("rank-one basis");
                z.iter_mut().for_each(|v| *v *= s);
                crate::kernel::KernelMatrix::rank_one(z)
            })
            .collect();
        let y = Matrix::from_vec(self.y.len(), 1, self.y.clone());
        let params = crate::solver::lp_mkl::LpMklParams {
            p: 2.0,
            lambda,
            bias: false,
            max_iter: 500,
            tol: 1e-9,
            init_theta: None,
        };
        let (sol, info) = crate::solver::lp_mkl::lp_mkl(&kernels, &y, &params, observer)?;
        // Explicit monomial weights theta_m s_m (s_m z_m)^T alpha, largest kernel weight first.
        let mut order: Vec<usize> = (0..idx.len()).collect();
        order.sort_by(|&a, &b| sol.theta[b].total_cmp(&sol.theta[a]).then(a.cmp(&b)));
        let coef: Vec<f64> = order
            .iter()
            .map(|&m| {
                let crate::kernel::KernelMatrix::Factor(z) = &kernels[m] else {
                    unreachable!("rank one")
                };
                sol.theta[m] * scale[m] * dot(&z.data, &sol.alpha.data)
            })
            .collect();
        let model = PolyMklModel {
            standardizer: self.standardizer.clone(),
            target: self.target.clone(),
            degree: self.degree,
            lambda,
            rho2: self.rho2.clone(),
            base_names: self.base_names.clone(),
            terms: order
                .iter()
                .map(|&m| PolyTerm {
                    index: idx[m].clone(),
                    weight: sol.theta[m],
                })
                .collect(),
            uniform_weight: 0.0,
            kernel_count: self.sampler.kernel_count(),
            predictor: PolyPredictor::Monomials {
                base_feature: list.iter().map(|p| p.0).collect(),
                base_scale: list.iter().map(|p| p.1).collect(),
                coef,
                uniform: None,
            },
            objective: sol.objective.last().copied().unwrap_or(f64::NAN),
            iterations: sol.iterations as u64,
            eta0: 0.0,
            sampling: "lp-mkl".into(),
        };
        Ok((model, info))
    }
}

/// A trained polynomial-kernel MKL model (mirror descent or UCD).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolyMklModel {
    pub standardizer: Standardizer,
    pub target: TargetScaler,
    pub degree: usize,
    pub lambda: f64,
    pub rho2: Vec<f64>,
    /// A name per base kernel (`x3` for the linear kernel of input 3).
    pub base_names: Vec<String>,
    /// Weights of the kernels the solver touched, largest first.
    pub terms: Vec<PolyTerm>,
    /// Weight of each of the other `kernel_count - terms.len()` product kernels.
    pub uniform_weight: f64,
    /// Number of product kernels `C(r + D, D)`.
    pub kernel_count: f64,
    pub predictor: PolyPredictor,
    /// `J` of the returned weights on the (standardized) training data.
    pub objective: f64,
    pub iterations: u64,
    pub eta0: f64,
    /// `stoch`, `ucd`, ...
    pub sampling: String,
}

impl PolyMklModel {
    /// Standardizes, trains with [`solve`] (under its run contract: a cancelled run gives
    /// the model of the iterate reached) and keeps what predicts.
    pub fn fit(
        x: MatrixRef<'_>,
        y: &[f64],
        params: &MirrorDescentParams,
        observer: &dyn Observer,
    ) -> Result<(PolyMklModel, RunInfo)> {
        let problem = PolyProblem::new(x, y, params)?;
        let (model, _, info) = problem.fit(&params.solver, observer)?;
        Ok((model, info))
    }

    /// Number of feature columns a row must have.
    pub(crate) fn n_features(&self) -> usize {
        self.standardizer.n_features()
    }

    /// Predictions (original target units) for raw rows, as one column. Prediction goes row
    /// by row, so `limit` is not needed; it is taken for the same signature as the other
    /// batch models.
    pub fn predict(&self, x: MatrixRef<'_>, _limit: &MemoryLimit) -> Result<Matrix> {
        let xs = standardize(&self.standardizer, x)?;
        let inv_rho2: Vec<f64> = self.rho2.iter().map(|v| 1.0 / v).collect();
        let u = self.uniform_weight;
        let raw: Vec<f64> = match &self.predictor {
            PolyPredictor::Monomials {
                base_feature,
                base_scale,
                coef,
                uniform,
            } => (0..xs.rows)
                .into_par_iter()
                .map(|i| {
                    let row = xs.row(i);
                    let z: Vec<f64> = base_feature
                        .iter()
                        .zip(base_scale)
                        .map(|(&f, &s)| s * row[f])
                        .collect();
                    let mut f: f64 = self
                        .terms
                        .iter()
                        .zip(coef)
                        .map(|(t, &c)| c * t.index.iter().map(|&j| z[j as usize]).product::<f64>())
                        .sum();
                    if let Some((alpha, z_train)) = uniform {
                        let mut kv = vec![0.0; z.len()];
                        let mut acc = 0.0;
                        for (t, &at) in alpha.iter().enumerate() {
                            for ((v, a), b) in kv.iter_mut().zip(&z).zip(z_train.row(t)) {
                                *v = a * b;
                            }
                            acc += at * uniform_value(&kv, &inv_rho2);
                        }
                        f += u * acc;
                    }
                    f
                })
                .collect(),
            PolyPredictor::Dual {
                base,
                x_train,
                alpha,
            } => (0..xs.rows)
                .into_par_iter()
                .map(|i| {
                    let row = xs.row(i);
                    let mut f = 0.0;
                    let mut kv = vec![0.0; base.len()];
                    for (t, &at) in alpha.iter().enumerate() {
                        let xt = x_train.row(t);
                        for (v, k) in kv.iter_mut().zip(base) {
                            *v = k.eval(row, xt);
                        }
                        let mut ksum: f64 = self
                            .terms
                            .iter()
                            .map(|term| {
                                (term.weight - u)
                                    * inv_rho2[term.index.len()]
                                    * term.index.iter().map(|&j| kv[j as usize]).product::<f64>()
                            })
                            .sum();
                        if u > 0.0 {
                            ksum += u * uniform_value(&kv, &inv_rho2);
                        }
                        f += at * ksum;
                    }
                    f
                })
                .collect(),
        };
        let out = raw.iter().map(|&v| self.target.invert(v)).collect();
        Ok(Matrix::from_vec(xs.rows, 1, out))
    }

    /// Checks that every stored array agrees with the others (features, base kernels,
    /// degrees, multi-indices, predictor) and holds finite numbers, so that
    /// [`PolyMklModel::predict`] on rows of the right width cannot fail on the model's
    /// account (run it on a model read from a file).
    pub(crate) fn validate(&self) -> Result<()> {
        self.standardizer.validate()?;
        self.target.validate()?;
        let d = self.n_features();
        let degree = self.degree;
        if !(1..=16).contains(&degree) {
            return Err(Error::model(
                ORIGIN,
                format!("degree {degree} is not in 1..=16"),
            ));
        }
        check::len(
            || format!("{ORIGIN}: rho2 (one per degree 0..={degree})"),
            degree + 1,
            self.rho2.len(),
        )?;
        for (deg, &r) in self.rho2.iter().enumerate() {
            check::positive(ORIGIN, &format!("rho2 of degree {deg}"), r)?;
        }
        check::positive(ORIGIN, "lambda", self.lambda)?;
        let r = self.base_names.len();
        if r == 0 {
            return Err(Error::model(ORIGIN, "the model has no base kernel"));
        }
        for (t, term) in self.terms.iter().enumerate() {
            if term.index.len() > degree {
                return Err(Error::model(
                    ORIGIN,
                    format!("kernel {t} has degree {}, above {degree}", term.index.len()),
                ));
            }
            for &j in &term.index {
                check::index(
                    ORIGIN,
                    || format!("a base kernel of kernel {t}"),
                    j as usize,
                    r,
                )?;
            }
            if !term.weight.is_finite() {
                return Err(Error::model(
                    ORIGIN,
                    format!("the weight of kernel {t} is not finite"),
                ));
            }
        }
        if !(self.uniform_weight.is_finite() && self.uniform_weight >= 0.0) {
            return Err(Error::model(
                ORIGIN,
                format!("the weight of the other kernels is {}", self.uniform_weight),
            ));
        }
        if !(self.kernel_count.is_finite() && self.kernel_count >= self.terms.len() as f64) {
            return Err(Error::model(
                ORIGIN,
                format!(
                    "{} product kernels, fewer than the {} with a weight",
                    self.kernel_count,
                    self.terms.len()
                ),
            ));
        }
        match &self.predictor {
            PolyPredictor::Monomials {
                base_feature,
                base_scale,
                coef,
                uniform,
            } => {
                check::len(
                    || format!("{ORIGIN}: base features (one per base kernel)"),
                    r,
                    base_feature.len(),
                )?;
                check::len(
                    || format!("{ORIGIN}: base scales (one per base kernel)"),
                    r,
                    base_scale.len(),
                )?;
                for (j, &f) in base_feature.iter().enumerate() {
                    check::index(ORIGIN, || format!("the feature of base kernel {j}"), f, d)?;
                }
                check::finite(ORIGIN, || "the base scales".into(), base_scale)?;
                check::len(
                    || format!("{ORIGIN}: monomial coefficients (one per kernel)"),
                    self.terms.len(),
                    coef.len(),
                )?;
                check::finite(ORIGIN, || "the monomial coefficients".into(), coef)?;
                if let Some((alpha, z_train)) = uniform {
                    check::finite(ORIGIN, || "the coefficients".into(), alpha)?;
                    check::matrix(ORIGIN, "the training features", z_train, alpha.len(), r)?;
                }
            }
            PolyPredictor::Dual {
                base,
                x_train,
                alpha,
            } => {
                check::len(
                    || format!("{ORIGIN}: base kernels (one per name)"),
                    r,
                    base.len(),
                )?;
                for (j, k) in base.iter().enumerate() {
                    k.validate()?;
                    check::len(
                        || format!("{ORIGIN}: features of base kernel {j} ({})", k.name),
                        d,
                        k.n_features(),
                    )?;
                }
                check::finite(ORIGIN, || "the coefficients".into(), alpha)?;
                check::matrix(ORIGIN, "the training rows", x_train, alpha.len(), d)?;
            }
        }
        Ok(())
    }

    /// The learned kernels as readable multi-indices (`x1^2*x5`, `1` for the constant) with
    /// their weights, largest first; when the other kernels share a positive weight, a last
    /// entry `(each of the other K kernels)` gives it.
    pub(crate) fn kernels(&self) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = self
            .terms
            .iter()
            .map(|t| (index_name(&t.index, &self.base_names), t.weight))
            .collect();
        let others = self.kernel_count - self.terms.len() as f64;
        if self.uniform_weight > 0.0 && others > 0.0 {
            out.push((
                format!("(each of the other {others} kernels)"),
                self.uniform_weight,
            ));
        }
        out
    }
}

/// `sum_{d=0..D} rho_d^-2 h_d(k_1, .., k_r)`: the sum of all distinct product kernels of
/// degree `<= D` at one pair of points, from the base kernel values `k_j` by Newton's
/// identity (`d h_d = sum_{i=1..d} p_i h_{d-i}`, `p_i = sum_j k_j^i`).
pub(crate) fn uniform_value(k: &[f64], inv_rho2: &[f64]) -> f64 {
    let deg = inv_rho2.len().saturating_sub(1);
    let mut p = vec![0.0; deg + 1];
    let mut pw: Vec<f64> = k.to_vec();
    for (i, pi) in p.iter_mut().enumerate().skip(1) {
        if i > 1 {
            for (v, x) in pw.iter_mut().zip(k) {
                *v *= x;
            }
        }
        *pi = pw.iter().sum();
    }
    let mut h = vec![0.0; deg + 1];
    h[0] = 1.0;
    let mut v = inv_rho2[0];
    for d in 1..=deg {
        let mut acc = 0.0;
        for i in 1..=d {
            acc += p[i] * h[d - i];
        }
        h[d] = acc / d as f64;
        v += inv_rho2[d] * h[d];
    }
    v
}

/// The uniform polynomial kernel `(sum_{j=0..r} kappa_j)^D = (1 + x . x')^D` over the
/// standardized inputs (the constant feature `kappa_0 = 1` included, Sec. 5) with kernel
/// ridge regression `alpha = (K + lambda I)^-1 y`: the "Uniform" baseline of Sec. 5.3.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UniformPolyModel {
    pub standardizer: Standardizer,
    pub target: TargetScaler,
    pub degree: usize,
    pub lambda: f64,
    /// Standardized training rows.
    pub x_train: Matrix,
    pub alpha: Vec<f64>,
}

impl UniformPolyModel {
    /// Standardizes `x` and `y` and solves the ridge system.
    pub fn fit(
        x: MatrixRef<'_>,
        y: &[f64],
        degree: usize,
        lambda: f64,
    ) -> Result<UniformPolyModel> {
        check::len(|| "targets (one per row)".into(), x.rows(), y.len())?;
        if x.rows() == 0 {
            return Err(Error::data("no training rows"));
        }
        if degree == 0 {
            return Err(Error::param(
                "degree",
                0,
                "a polynomial degree of at least 1",
            ));
        }
        let mut xs = x.to_matrix();
        let standardizer = Standardizer::fit(&xs);
        for i in 0..xs.rows {
            standardizer.apply_row(xs.row_mut(i));
        }
        let target = TargetScaler::fit(y);
        let ys = target.apply_all(y);
        let n = xs.rows;
        let mut k = Matrix::zeros(n, n);
        for a in 0..n {
            for b in 0..=a {
                let v = (1.0 + dot(xs.row(a), xs.row(b))).powi(degree as i32);
                k.set(a, b, v);
                k.set(b, a, v);
            }
        }
        let (_, alpha) = super::objective::objective(&k, &ys, lambda)?;
        Ok(UniformPolyModel {
            standardizer,
            target,
            degree,
            lambda,
            x_train: xs,
            alpha,
        })
    }

    /// Predictions (original target units) for raw rows.
    pub fn predict(&self, x: MatrixRef<'_>) -> Result<Vec<f64>> {
        let xs = standardize(&self.standardizer, x)?;
        Ok((0..xs.rows)
            .into_par_iter()
            .map(|i| {
                let row = xs.row(i);
                let f: f64 = (0..self.x_train.rows)
                    .map(|t| {
                        self.alpha[t]
                            * (1.0 + dot(row, self.x_train.row(t))).powi(self.degree as i32)
                    })
                    .sum();
                self.target.invert(f)
            })
            .collect())
    }
}

impl DecisionFunction for PolyMklModel {
    /// One output (the model is squared-loss regression); the memory limit is not needed
    /// (prediction goes row by row).
    fn decision(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Matrix> {
        self.predict(x, limit)
    }
    fn n_outputs(&self) -> usize {
        1
    }
    fn validate(&self) -> Result<()> {
        PolyMklModel::validate(self)
    }
}

impl BatchLearner for PolyMklModel {
    fn input(&self) -> BatchInput<'_> {
        BatchInput::Rows(self)
    }

    /// The notes name the input of each factor `x1`, `x2`, ... (the first
    /// [`SHOWN_KERNELS`] of `feature_names`).
    fn describe(&self, s: &mut Summary, feature_names: &[String]) {
        let ucd = self.sampling == "ucd";
        let lp = self.sampling == "lp-mkl";
        s.learner = if ucd {
            "polynomial product-kernel MKL by uniform coordinate descent (Afkanpour et al. 2013)"
        } else if lp {
            "polynomial product-kernel MKL by lp-MKL (p = 2) over the explicit product kernels \
             (the objective of Afkanpour et al. 2013)"
        } else {
            "polynomial product-kernel MKL by randomized mirror descent (Afkanpour et al. 2013)"
        }
        .into();
        let count = if self.kernel_count < 9.0e15 {
            format!("{}", self.kernel_count as u64)
        } else {
            format!("{:e}", self.kernel_count)
        };
        s.settings = vec![
            ("sampling".into(), self.sampling.clone()),
            ("degree".into(), self.degree.to_string()),
            ("lambda".into(), num(self.lambda)),
            ("eta0".into(), format!("{}", self.eta0)),
            ("iterations".into(), self.iterations.to_string()),
        ];
        if !self.rho2.is_empty() {
            let r: Vec<String> = self.rho2.iter().map(|v| v.to_string()).collect();
            s.settings.push(("rho2".into(), r.join(",")));
        }
        s.headline = if lp {
            format!(
                "lp-MKL (p = 2): degree {}, lambda {}, {count} product kernels, {} alternating \
                 steps, objective {:.6}",
                self.degree,
                num(self.lambda),
                self.iterations,
                self.objective,
            )
        } else {
            format!(
                "{}: degree {}, lambda {}, {count} product kernels, {} iterations (eta0 {}), \
                 objective {:.6}",
                if ucd { "UCD" } else { "mirror descent" },
                self.degree,
                num(self.lambda),
                self.iterations,
                self.eta0,
                self.objective,
            )
        };
        s.notes.push(format!(
            "kernels with their own weight: {}",
            self.terms.len()
        ));
        s.columns = vec!["weight".into()];
        s.kernels = value_rows(self.kernels());
        if self.base_names.first().is_some_and(|n| n.starts_with('x')) {
            let legend: Vec<String> = feature_names
                .iter()
                .take(SHOWN_KERNELS)
                .enumerate()
                .map(|(i, f)| format!("x{} = {f}", i + 1))
                .collect();
            let more = if feature_names.len() > SHOWN_KERNELS {
                format!(", ... {} more", feature_names.len() - SHOWN_KERNELS)
            } else {
                String::new()
            };
            s.notes.push(format!("inputs: {}{more}", legend.join(", ")));
        }
    }
}
