//! `reproduce gomp`: MKL-GOMP against lp-norm MKL (Sindhwani & Lozano 2012, Sec. 5.1 and
//! Figure 1), then the same learners on the glass table.
//!
//! **Simulation (Sec. 5.1, after Kloft et al. 2011).** Two Gaussian classes in `d = 50`
//! dimensions, identity covariance, means `+-1.75 theta / ||theta||` with `theta` a binary
//! vector whose fraction of zeros is `v` in {0, 44, 66, 82, 92, 98}%; 50 training points
//! (25 per class), 10,000 validation and 10,000 test points (half per class). One linear
//! kernel per feature (rank one), normalized to uniform variance in feature space on the
//! training points. Squared loss for every method on +-1 targets, an unpenalized bias
//! (centering), classification by the sign. MKL-GOMP: lambda from [`gomp_lambda_grid`] and
//! the number of kernels chosen together on the validation set (the whole path of 50
//! kernels is computed once per lambda). lp-MKL for p in {1, 4/3, 2, 4, inf}: lambda from
//! [`lp_lambda_grid`] on the validation set (warm starts along the grid). Bayes error: the
//! rule `sign(mu^T x)` on the test points (analytically `Phi(-1.75) = 4.0%`).
//!
//! **Glass** (UCI, 214 rows, 9 features, 6 classes): 10 stratified 70/30 splits; features
//! standardized on the training part; kernels: one linear and one Gaussian (median width)
//! kernel per feature, and Gaussian kernels on all features at 1/4, 1 and 4 times the
//! median width, all normalized to uniform variance; one-hot targets (multivariate mode
//! for GOMP, shared kernel weights for lp-MKL), prediction by the largest output.
//! Hyper-parameters (lambda; GOMP's number of kernels) by 3-fold stratified
//! cross-validation on the training part (kernels fitted once on the training part:
//! the folds share the median widths and normalization factors, which see no labels).
//!
//! Rows (`"experiment": "gomp"`): dataset `simulation`, methods `gomp`, `lp-1`, `lp-4/3`,
//! `lp-2`, `lp-4`, `lp-inf`, `bayes`, metric `test_error` (a fraction) with the extra field
//! `noise_fraction`, and for `gomp` `kernels_selected` (mean) and `lambda` (median chosen);
//! dataset `glass`, metric `accuracy`.

use crate::plot::{LinePlot, Series};
use crate::{mean_std, median, Report, Row};
use multikernel::data::split::{stratified_kfold, stratified_split};
use multikernel::data::standardize::Standardizer;
use multikernel::data::{Dataset, Matrix, Targets};
use multikernel::engine::select::{Mean, Search};
use multikernel::engine::solver::gomp::{gomp, GompParams, GompPath, ValidationMetric};
use multikernel::engine::solver::lp_mkl::{lp_mkl, p_label, LpMklParams, LpMklSolution};
use multikernel::error::{Error, Result};
use multikernel::kernel::{
    fit_all, median_sigma2, KernelKind, KernelSpec, MemoryLimit, Normalization,
};
use multikernel::kernel::{kernel_matrices, test_kernel_matrix, KernelMatrix};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

/// Fractions of zero components of `theta` (the paper's v, Figure 1).
pub const LEVELS: [f64; 6] = [0.0, 0.44, 0.66, 0.82, 0.92, 0.98];
/// The numpy reference of the issue: GOMP test error (%) per level.
pub const REFERENCE_GOMP: [f64; 6] = [6.3, 6.6, 6.0, 4.7, 4.0, 4.1];
/// The numpy reference: the best lp-MKL test error (%) per level and which p gave it.
pub const REFERENCE_BEST_LP: [(f64, &str); 6] = [
    (6.3, "inf"),
    (6.7, "inf"),
    (6.6, "4"),
    (6.1, "2, 4"),
    (4.6, "2"),
    (4.1, "1, 4/3"),
];

/// Half-decade grid `10^a, 10^(a+1/2), ..., 10^b`.
pub fn log_grid(a: f64, b: f64) -> Vec<f64> {
    let steps = ((b - a) * 2.0).round() as i64;
    (0..=steps)
        .map(|k| 10f64.powf(a + k as f64 / 2.0))
        .collect()
}

/// MKL-GOMP's lambda grid (`R = (1/l)||r - g||^2 + lambda ||g||^2`): 10^-5 .. 10^3.
pub fn gomp_lambda_grid() -> Vec<f64> {
    log_grid(-5.0, 3.0)
}

/// lp-MKL's lambda grid (`(K_theta + lambda I)^-1 y`): 10^-3 .. 10^5.
pub fn lp_lambda_grid() -> Vec<f64> {
    log_grid(-3.0, 5.0)
}

/// The kernel-weight norms compared: 1, 4/3, 2, 4, inf.
pub fn p_values() -> Vec<f64> {
    vec![1.0, 4.0 / 3.0, 2.0, 4.0, f64::INFINITY]
}

/// Settings of `reproduce gomp`.
#[derive(Debug, Clone)]
pub struct GompConfig {
    /// Repetitions per sparsity level (the paper: 10).
    pub reps: usize,
    pub seed: u64,
    pub dim: usize,
    pub n_train: usize,
    pub n_val: usize,
    pub n_test: usize,
    /// `||mu||` (1.75: Bayes error Phi(-1.75) = 4.0%).
    pub separation: f64,
    pub levels: Vec<f64>,
    pub gomp_lambdas: Vec<f64>,
    pub lp_lambdas: Vec<f64>,
    pub ps: Vec<f64>,
    /// lp-MKL's relative tolerance on J and iteration cap.
    pub lp_tol: f64,
    pub lp_max_iter: usize,
    /// The glass table (`data/uci/glass.csv`, read by the caller); `None` skips it.
    pub glass: Option<Dataset>,
    pub glass_splits: usize,
    pub glass_folds: usize,
    /// Where the CSV and SVG files go (`None`: nowhere).
    pub out_dir: Option<PathBuf>,
    pub memory: MemoryLimit,
}

impl Default for GompConfig {
    fn default() -> Self {
        GompConfig {
            reps: 10,
            seed: 1,
            dim: 50,
            n_train: 50,
            n_val: 10_000,
            n_test: 10_000,
            separation: 1.75,
            levels: LEVELS.to_vec(),
            gomp_lambdas: gomp_lambda_grid(),
            lp_lambdas: lp_lambda_grid(),
            ps: p_values(),
            lp_tol: 1e-6,
            lp_max_iter: 2000,
            glass: None,
            glass_splits: 10,
            glass_folds: 3,
            out_dir: None,
            memory: MemoryLimit::default(),
        }
    }
}

impl GompConfig {
    fn validate(&self) -> Result<()> {
        let at_least = |name: &str, value: usize, min: usize| {
            if value < min {
                Err(Error::param(name, value, format!("at least {min}")))
            } else {
                Ok(())
            }
        };
        at_least("reps", self.reps, 1)?;
        at_least("dim", self.dim, 1)?;
        at_least("n_train", self.n_train, 4)?;
        at_least("n_val", self.n_val, 2)?;
        at_least("n_test", self.n_test, 2)?;
        at_least("gomp_lambdas", self.gomp_lambdas.len(), 1)?;
        at_least("lp_lambdas", self.lp_lambdas.len(), 1)?;
        if let Some(v) = self.levels.iter().find(|v| !(0.0..1.0).contains(*v)) {
            return Err(Error::param(
                "levels",
                v,
                "fractions of zero components in [0, 1)",
            ));
        }
        if self.glass.is_some() {
            at_least("glass_splits", self.glass_splits, 1)?;
            at_least("glass_folds", self.glass_folds, 2)?;
        }
        Ok(())
    }
}

/// Standard normal CDF (complementary error function, Numerical Recipes' Chebyshev fit,
/// relative error below 1.2e-7).
pub fn normal_cdf(x: f64) -> f64 {
    let z = -x / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * z.abs());
    let y = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    let erfc = if z >= 0.0 { y } else { 2.0 - y };
    0.5 * erfc
}

/// One simulated data set: `n` points, the first half of class +1.
fn sample(n: usize, mu: &[f64], rng: &mut ChaCha8Rng) -> (Matrix, Matrix) {
    let d = mu.len();
    let mut x = Matrix::zeros(n, d);
    let mut y = Matrix::zeros(n, 1);
    for i in 0..n {
        let s = if i < n.div_ceil(2) { 1.0 } else { -1.0 };
        y.set(i, 0, s);
        for (j, v) in x.row_mut(i).iter_mut().enumerate() {
            let e: f64 = StandardNormal.sample(rng);
            *v = s * mu[j] + e;
        }
    }
    (x, y)
}

fn class_error(pred: &Matrix, truth: &Matrix) -> f64 {
    ValidationMetric::ClassificationError.loss(pred, truth)
}

/// Results of one repetition at one sparsity level.
#[derive(Debug, Clone)]
struct SimRep {
    gomp_err: f64,
    gomp_kernels: usize,
    gomp_lambda: f64,
    gomp_secs: f64,
    /// Per p: test error, chosen lambda, seconds of the chosen fit.
    lp: Vec<(f64, f64, f64)>,
    bayes_err: f64,
}

fn simulate_rep(cfg: &GompConfig, level: usize, rep: usize) -> Result<SimRep> {
    let d = cfg.dim;
    let seed = cfg
        .seed
        .wrapping_mul(1_000_003)
        .wrapping_add((level * 10_007 + rep) as u64);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let zeros = ((cfg.levels[level] * d as f64).round() as usize).min(d - 1);
    let mut idx: Vec<usize> = (0..d).collect();
    idx.shuffle(&mut rng);
    let mut theta = vec![0.0; d];
    for &j in &idx[..d - zeros] {
        theta[j] = 1.0;
    }
    let norm = ((d - zeros) as f64).sqrt();
    let mu: Vec<f64> = theta.iter().map(|t| cfg.separation * t / norm).collect();
    let (xtr, ytr) = sample(cfg.n_train, &mu, &mut rng);
    let (xva, yva) = sample(cfg.n_val, &mu, &mut rng);
    let (xte, yte) = sample(cfg.n_test, &mu, &mut rng);

    // Bayes rule sign(mu^T x).
    let bayes = Matrix::from_vec(
        cfg.n_test,
        1,
        (0..cfg.n_test)
            .map(|i| multikernel::engine::linalg::dot(xte.row(i), &mu))
            .collect(),
    );
    let bayes_err = class_error(&bayes, &yte);

    let names: Vec<String> = (0..d).map(|j| format!("x{j}")).collect();
    let spec: KernelSpec = KernelSpec {
        kind: KernelKind::Linear,
        norm: Normalization::Variance,
        perfeature: true,
        features: None,
        approx: None,
    };
    let fitted = fit_all(&[spec], &xtr, &names, seed)?;
    let train = kernel_matrices(&fitted, &xtr, &cfg.memory)?;
    let val: Vec<KernelMatrix> = fitted
        .iter()
        .map(|fk| test_kernel_matrix(fk, &xva, &xtr, &cfg.memory))
        .collect::<Result<_>>()?;
    let test: Vec<KernelMatrix> = fitted
        .iter()
        .map(|fk| test_kernel_matrix(fk, &xte, &xtr, &cfg.memory))
        .collect::<Result<_>>()?;

    // MKL-GOMP: (lambda, path length) on the validation set: each lambda's greedy path is
    // computed once and scored at every length; the lowest error wins (the first in grid
    // order, lambda outer and path length inner).
    let validation = [()];
    let gomp_sel = Search::new(&cfg.gomp_lambdas, &validation).minimize().run(
        |&lambda, _| -> Result<(Vec<f64>, (GompPath, f64))> {
            let params = GompParams {
                lambda,
                max_kernels: d,
                eps: 0.0,
                memory_bytes: cfg.memory.bytes,
                ..GompParams::default()
            };
            let t0 = Instant::now();
            let (path, _) = gomp(&train, &ytr, &params, &())?;
            let secs = t0.elapsed().as_secs_f64();
            let preds = path.decision_path(&train, &|j| Ok(val[j].clone()), cfg.n_val)?;
            let errors = preds.iter().map(|p| class_error(p, &yva)).collect();
            Ok((errors, (path, secs)))
        },
        &(),
    )?;
    let best = gomp_sel
        .best()
        .ok_or_else(|| Error::Numerical("no GOMP path gave a finite validation error".into()))?;
    let (gli, gs) = (best.candidate, best.point);
    let (gpath, gsecs) = gomp_sel
        .best_output(0)
        .ok_or_else(|| Error::Numerical("the chosen GOMP path was not kept".into()))?;
    let gpred = gpath.decision(gs, &train, &|j| Ok(test[j].clone()), cfg.n_test)?;
    let gomp_err = class_error(&gpred, &yte);
    let gsecs = *gsecs;

    // lp-MKL per p: lambda on the validation set, the grid in order, each solve started
    // from the previous lambda's (floored) kernel weights; the lowest error wins (the first).
    let mut lp = Vec::with_capacity(cfg.ps.len());
    for &p in &cfg.ps {
        let sel = Search::new(&cfg.lp_lambdas, &validation)
            .minimize()
            .run_warm(
                |_| Ok(None),
                |&lambda, _, warm: &mut Option<Vec<f64>>| -> Result<(f64, (LpMklSolution, f64))> {
                    let params = LpMklParams {
                        p,
                        lambda,
                        bias: true,
                        max_iter: cfg.lp_max_iter,
                        tol: cfg.lp_tol,
                        init_theta: warm.clone(),
                    };
                    let t0 = Instant::now();
                    let (sol, _) = lp_mkl(&train, &ytr, &params, &())?;
                    let secs = t0.elapsed().as_secs_f64();
                    let e = class_error(&sol.decision(&train, &val)?, &yva);
                    *warm = Some(floor_weights(&sol.theta));
                    Ok((e, (sol, secs)))
                },
                &(),
            )?;
        let li = sel.best().map(|b| b.candidate).ok_or_else(|| {
            Error::Numerical(format!(
                "no lp-MKL model (p = {}) gave a finite validation error",
                p_label(p)
            ))
        })?;
        let (sol, secs) = sel
            .best_output(0)
            .ok_or_else(|| Error::Numerical("the chosen lp-MKL model was not kept".into()))?;
        let e = class_error(&sol.decision(&train, &test)?, &yte);
        lp.push((e, cfg.lp_lambdas[li], *secs));
    }
    Ok(SimRep {
        gomp_err,
        gomp_kernels: gs,
        gomp_lambda: cfg.gomp_lambdas[gli],
        gomp_secs: gsecs,
        lp,
        bayes_err,
    })
}

/// Warm start for the next lambda: the multiplicative lp-MKL update keeps exact zeros, so
/// weights are floored at 1e-6 of the largest.
fn floor_weights(theta: &[f64]) -> Vec<f64> {
    let m = theta.iter().cloned().fold(0.0, f64::max);
    theta.iter().map(|t| t.max(1e-6 * m)).collect()
}

/// Results of one glass split.
#[derive(Debug, Clone)]
struct GlassRep {
    gomp_acc: f64,
    gomp_kernels: usize,
    gomp_secs: f64,
    /// Per p: test accuracy and seconds of the final fit.
    lp: Vec<(f64, f64)>,
}

/// Rows `rows` and columns `cols` of a kernel (a factor keeps its columns).
fn sub_kernel(k: &KernelMatrix, rows: &[usize], cols: &[usize]) -> KernelMatrix {
    match k {
        KernelMatrix::Dense(m) => {
            let mut s = Matrix::zeros(rows.len(), cols.len());
            for (a, &i) in rows.iter().enumerate() {
                let src = m.row(i);
                for (b, &j) in cols.iter().enumerate() {
                    s.set(a, b, src[j]);
                }
            }
            KernelMatrix::Dense(s)
        }
        KernelMatrix::Factor(z) => KernelMatrix::Factor(z.select_rows(rows)),
    }
}

fn one_hot(y: &[usize], classes: usize) -> Matrix {
    let mut m = Matrix::zeros(y.len(), classes);
    for (i, &c) in y.iter().enumerate() {
        m.set(i, c, 1.0);
    }
    m
}

fn glass_kernels(x: &Matrix, seed: u64) -> Vec<KernelSpec> {
    let mut specs = vec![
        KernelSpec {
            kind: KernelKind::Linear,
            norm: Normalization::Variance,
            perfeature: true,
            features: None,
            approx: None,
        },
        KernelSpec {
            kind: KernelKind::Rbf {
                sigma2: None,
                scale: None,
            },
            norm: Normalization::Variance,
            perfeature: true,
            features: None,
            approx: None,
        },
    ];
    let m = median_sigma2(x, seed);
    for f in [0.25, 1.0, 4.0] {
        specs.push(KernelSpec {
            kind: KernelKind::Rbf {
                sigma2: Some(f * m),
                scale: None,
            },
            norm: Normalization::Variance,
            perfeature: false,
            features: None,
            approx: None,
        });
    }
    specs
}

fn glass_split(cfg: &GompConfig, data: &Dataset, split: usize) -> Result<GlassRep> {
    let (classes, y) = match &data.targets {
        Targets::Classes { classes, y } => (classes.len(), y),
        Targets::Real(_) => {
            return Err(Error::data(
                "the glass table must have class labels (it has real targets)",
            ))
        }
    };
    let seed = cfg.seed.wrapping_mul(7919).wrapping_add(split as u64);
    let (tr, te) = stratified_split(y, 0.7, seed);
    let st = Standardizer::fit(&data.x.select_rows(&tr));
    let xtr = st.apply(&data.x.select_rows(&tr));
    let xte = st.apply(&data.x.select_rows(&te));
    let ytr_idx: Vec<usize> = tr.iter().map(|&i| y[i]).collect();
    let ytr = one_hot(&ytr_idx, classes);
    let yte = one_hot(&te.iter().map(|&i| y[i]).collect::<Vec<_>>(), classes);
    let specs = glass_kernels(&xtr, seed);
    let fitted = fit_all(&specs, &xtr, &data.feature_names, seed)?;
    let train = kernel_matrices(&fitted, &xtr, &cfg.memory)?;
    let test: Vec<KernelMatrix> = fitted
        .iter()
        .map(|fk| test_kernel_matrix(fk, &xte, &xtr, &cfg.memory))
        .collect::<Result<_>>()?;
    let m = train.len();
    let folds = stratified_kfold(&ytr_idx, cfg.glass_folds, seed ^ 0x5eed);
    let fold_data: Vec<(Vec<KernelMatrix>, Vec<KernelMatrix>, Matrix, Matrix)> = folds
        .iter()
        .map(|(ftr, fva)| {
            let ktr: Vec<KernelMatrix> = train.iter().map(|k| sub_kernel(k, ftr, ftr)).collect();
            let kva: Vec<KernelMatrix> = train.iter().map(|k| sub_kernel(k, fva, ftr)).collect();
            (ktr, kva, ytr.select_rows(ftr), ytr.select_rows(fva))
        })
        .collect();

    // GOMP: mean CV accuracy per (lambda, path length), each fold's share added in fold
    // order; lengths beyond a fold's path reuse its last model. The best by more than 1e-12
    // wins (lambda outer, path length inner).
    let gomp_sel = Search::new(&cfg.gomp_lambdas, &fold_data)
        .mean(Mean::Shares)
        .tolerance(1e-12)
        .run(
            |&lambda, (ktr, kva, yf, yv)| -> Result<Vec<f64>> {
                let params = GompParams {
                    lambda,
                    max_kernels: m,
                    eps: 0.0,
                    memory_bytes: cfg.memory.bytes,
                    ..GompParams::default()
                };
                let (path, _) = gomp(ktr, yf, &params, &())?;
                let preds = path.decision_path(ktr, &|j| Ok(kva[j].clone()), yv.rows)?;
                Ok((0..=m)
                    .map(|s| 1.0 - class_error(&preds[s.min(preds.len() - 1)], yv))
                    .collect())
            },
            &(),
        )?;
    let best = gomp_sel.best().ok_or_else(|| {
        Error::Numerical("no GOMP setting gave a finite validation accuracy".into())
    })?;
    let (li, s) = (best.candidate, best.point);
    let params = GompParams {
        lambda: cfg.gomp_lambdas[li],
        max_kernels: s.max(1),
        eps: 0.0,
        memory_bytes: cfg.memory.bytes,
        ..GompParams::default()
    };
    let t0 = Instant::now();
    let (path, _) = gomp(&train, &ytr, &params, &())?;
    let gomp_secs = t0.elapsed().as_secs_f64();
    let s = s.min(path.steps.len());
    let pred = path.decision(s, &train, &|j| Ok(test[j].clone()), xte.rows)?;
    let gomp_acc = 1.0 - class_error(&pred, &yte);

    let mut lp = Vec::with_capacity(cfg.ps.len());
    for &p in &cfg.ps {
        // Mean CV accuracy per lambda (shares in fold order), the best by more than 1e-12.
        let sel = Search::new(&cfg.lp_lambdas, &fold_data)
            .mean(Mean::Shares)
            .tolerance(1e-12)
            .run(
                |&lambda, (ktr, kva, yf, yv)| -> Result<f64> {
                    let params = LpMklParams {
                        p,
                        lambda,
                        bias: true,
                        max_iter: cfg.lp_max_iter,
                        tol: cfg.lp_tol,
                        init_theta: None,
                    };
                    let (sol, _) = lp_mkl(ktr, yf, &params, &())?;
                    Ok(1.0 - class_error(&sol.decision(ktr, kva)?, yv))
                },
                &(),
            )?;
        let li = sel.best().map(|b| b.candidate).ok_or_else(|| {
            Error::Numerical(format!(
                "no lp-MKL setting (p = {}) gave a finite validation accuracy",
                p_label(p)
            ))
        })?;
        let params = LpMklParams {
            p,
            lambda: cfg.lp_lambdas[li],
            bias: true,
            max_iter: cfg.lp_max_iter,
            tol: cfg.lp_tol,
            init_theta: None,
        };
        let t0 = Instant::now();
        let (sol, _) = lp_mkl(&train, &ytr, &params, &())?;
        let secs = t0.elapsed().as_secs_f64();
        lp.push((1.0 - class_error(&sol.decision(&train, &test)?, &yte), secs));
    }
    Ok(GlassRep {
        gomp_acc,
        gomp_kernels: s,
        gomp_secs,
        lp,
    })
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{:.1}", 100.0 * x))
}

fn pm(values: &[f64]) -> String {
    let (m, s) = mean_std(values);
    match (m, s) {
        (Some(m), Some(s)) => format!("{:.1} ± {:.1}", 100.0 * m, 100.0 * s),
        _ => "-".into(),
    }
}

/// Runs the study; `progress` gets one line per finished level / split.
pub fn run(cfg: &GompConfig, progress: &mut dyn FnMut(&str)) -> Result<Report> {
    cfg.validate()?;
    let methods: Vec<String> = std::iter::once("gomp".to_string())
        .chain(cfg.ps.iter().map(|&p| format!("lp-{}", p_label(p))))
        .collect();
    let mut rows = Vec::new();
    let mut table = String::new();
    table.push_str(&format!(
        "## MKL-GOMP vs lp-MKL, simulation of Sec. 5.1 (d = {}, {} training / {} validation / \
         {} test points, {} repetitions): test error in %, mean ± std\n\n",
        cfg.dim, cfg.n_train, cfg.n_val, cfg.n_test, cfg.reps
    ));
    let mut header = String::from("| v (%) |");
    for m in &methods {
        header.push_str(&format!(" {m} |"));
    }
    header.push_str(
        " best lp | Bayes | GOMP kernels | GOMP lambda (median) | ref. GOMP | ref. best lp |\n",
    );
    table.push_str(&header);
    table.push_str(&format!("|{}\n", "---|".repeat(methods.len() + 7)));

    let mut csv_rows: Vec<Vec<String>> = Vec::new();
    let mut curves: Vec<Vec<(f64, f64)>> = vec![Vec::new(); methods.len() + 1];
    let mut kernel_curve = Vec::new();
    let mut lambda_curve = Vec::new();
    let mut within = 0usize;
    let mut at_or_below = 0usize;
    for (li, &v) in cfg.levels.iter().enumerate() {
        let reps: Vec<SimRep> = (0..cfg.reps)
            .into_par_iter()
            .map(|r| simulate_rep(cfg, li, r))
            .collect::<Result<_>>()?;
        let vpct = 100.0 * v;
        let gomp_errs: Vec<f64> = reps.iter().map(|r| r.gomp_err).collect();
        let ks: Vec<f64> = reps.iter().map(|r| r.gomp_kernels as f64).collect();
        let lams: Vec<f64> = reps.iter().map(|r| r.gomp_lambda).collect();
        let (kmean, kstd) = mean_std(&ks);
        let lam_med = median(&lams);
        let mut row = Row::from_values("simulation", "gomp", "test_error", &gomp_errs)
            .with("noise_fraction", v)
            .with("kernels_selected", kmean.unwrap_or(0.0))
            .with("kernels_selected_std", kstd.unwrap_or(0.0))
            .with("lambda", lam_med.unwrap_or(f64::NAN));
        if let Some(r) = LEVELS.iter().position(|l| (l - v).abs() < 1e-9) {
            row = row.with("reference_mean", REFERENCE_GOMP[r] / 100.0);
        }
        row.train_seconds = median(&reps.iter().map(|r| r.gomp_secs).collect::<Vec<_>>());
        let gmean = row.mean;
        rows.push(row);
        let mut line = format!("| {vpct:.0} | {} |", pm(&gomp_errs));
        curves[0].push((vpct, 100.0 * gmean.unwrap_or(f64::NAN)));
        csv_rows.push(vec![
            format!("{v}"),
            "gomp".into(),
            format!("{}", gmean.unwrap_or(f64::NAN)),
            format!("{}", mean_std(&gomp_errs).1.unwrap_or(f64::NAN)),
            format!("{}", kmean.unwrap_or(f64::NAN)),
            format!("{}", lam_med.unwrap_or(f64::NAN)),
        ]);
        let mut envelope = f64::INFINITY;
        for (pi, &p) in cfg.ps.iter().enumerate() {
            let errs: Vec<f64> = reps.iter().map(|r| r.lp[pi].0).collect();
            let lam: Vec<f64> = reps.iter().map(|r| r.lp[pi].1).collect();
            let mut row = Row::from_values("simulation", &methods[pi + 1], "test_error", &errs)
                .with("noise_fraction", v)
                .with("p", p_label(p))
                .with("lambda", median(&lam).unwrap_or(f64::NAN));
            row.train_seconds = median(&reps.iter().map(|r| r.lp[pi].2).collect::<Vec<_>>());
            let m = row.mean.unwrap_or(f64::NAN);
            envelope = envelope.min(m);
            rows.push(row);
            line.push_str(&format!(" {} |", pm(&errs)));
            curves[pi + 1].push((vpct, 100.0 * m));
            csv_rows.push(vec![
                format!("{v}"),
                methods[pi + 1].clone(),
                format!("{m}"),
                format!("{}", mean_std(&errs).1.unwrap_or(f64::NAN)),
                String::new(),
                format!("{}", median(&lam).unwrap_or(f64::NAN)),
            ]);
        }
        let bayes: Vec<f64> = reps.iter().map(|r| r.bayes_err).collect();
        let analytic = normal_cdf(-cfg.separation);
        let brow = Row::from_values("simulation", "bayes", "test_error", &bayes)
            .with("noise_fraction", v)
            .with("analytic", analytic);
        let bmean = brow.mean.unwrap_or(f64::NAN);
        rows.push(brow);
        curves[methods.len()].push((vpct, 100.0 * bmean));
        csv_rows.push(vec![
            format!("{v}"),
            "bayes".into(),
            format!("{bmean}"),
            format!("{}", mean_std(&bayes).1.unwrap_or(f64::NAN)),
            String::new(),
            String::new(),
        ]);
        let g = gmean.unwrap_or(f64::NAN);
        if g <= envelope + 0.005 {
            within += 1;
        }
        if g <= envelope + 1e-12 {
            at_or_below += 1;
        }
        kernel_curve.push((vpct, 100.0 * kmean.unwrap_or(f64::NAN) / cfg.dim as f64));
        lambda_curve.push((vpct, lam_med.unwrap_or(f64::NAN)));
        let (rg, rl) = match LEVELS.iter().position(|l| (l - v).abs() < 1e-9) {
            Some(r) => (
                format!("{:.1}", REFERENCE_GOMP[r]),
                format!("{:.1} ({})", REFERENCE_BEST_LP[r].0, REFERENCE_BEST_LP[r].1),
            ),
            None => ("-".into(), "-".into()),
        };
        line.push_str(&format!(
            " {} | {} (Phi: {:.1}) | {:.1} ± {:.1} | {} | {rg} | {rl} |\n",
            pct(Some(envelope)),
            pm(&bayes),
            100.0 * analytic,
            kmean.unwrap_or(f64::NAN),
            kstd.unwrap_or(f64::NAN),
            lam_med.map_or("-".into(), |l| format!("{l:.2e}")),
        ));
        table.push_str(&line);
        progress(&format!(
            "simulation v = {vpct:.0}%: GOMP {:.1}% (best lp {:.1}%, Bayes {:.1}%), {:.1} kernels",
            100.0 * g,
            100.0 * envelope,
            100.0 * bmean,
            kmean.unwrap_or(f64::NAN)
        ));
    }
    table.push_str(&format!(
        "\nGOMP within 0.5 points of the lp-MKL lower envelope at {within}/{} levels, at or \
         below it at {at_or_below}/{} (target: 6/6 and >= 5/6).\n",
        cfg.levels.len(),
        cfg.levels.len()
    ));

    // Glass.
    let mut glass_csv: Vec<Vec<String>> = Vec::new();
    if let Some(data) = &cfg.glass {
        let reps: Vec<GlassRep> = (0..cfg.glass_splits)
            .into_par_iter()
            .map(|s| glass_split(cfg, data, s))
            .collect::<Result<_>>()?;
        table.push_str(&format!(
            "\n## glass ({} rows, {} features): test accuracy in %, {} stratified 70/30 splits, \
             {}-fold CV for lambda (and GOMP's number of kernels)\n\n| method | accuracy | \
             kernels |\n|---|---|---|\n",
            data.x.rows, data.x.cols, cfg.glass_splits, cfg.glass_folds
        ));
        let acc: Vec<f64> = reps.iter().map(|r| r.gomp_acc).collect();
        let ks: Vec<f64> = reps.iter().map(|r| r.gomp_kernels as f64).collect();
        let (km, _) = mean_std(&ks);
        let mut row = Row::from_values("glass", "gomp", "accuracy", &acc)
            .with("kernels_selected", km.unwrap_or(0.0));
        row.train_seconds = median(&reps.iter().map(|r| r.gomp_secs).collect::<Vec<_>>());
        table.push_str(&format!(
            "| gomp | {} | {:.1} |\n",
            pm(&acc),
            km.unwrap_or(f64::NAN)
        ));
        glass_csv.push(vec![
            "gomp".into(),
            format!("{}", row.mean.unwrap_or(f64::NAN)),
            format!("{}", row.std.unwrap_or(f64::NAN)),
            format!("{}", km.unwrap_or(f64::NAN)),
        ]);
        rows.push(row);
        for (pi, &p) in cfg.ps.iter().enumerate() {
            let acc: Vec<f64> = reps.iter().map(|r| r.lp[pi].0).collect();
            let mut row =
                Row::from_values("glass", &methods[pi + 1], "accuracy", &acc).with("p", p_label(p));
            row.train_seconds = median(&reps.iter().map(|r| r.lp[pi].1).collect::<Vec<_>>());
            table.push_str(&format!("| {} | {} | all |\n", methods[pi + 1], pm(&acc)));
            glass_csv.push(vec![
                methods[pi + 1].clone(),
                format!("{}", row.mean.unwrap_or(f64::NAN)),
                format!("{}", row.std.unwrap_or(f64::NAN)),
                String::new(),
            ]);
            rows.push(row);
        }
        progress(&format!(
            "glass: GOMP accuracy {}",
            pm(&reps.iter().map(|r| r.gomp_acc).collect::<Vec<_>>())
        ));
    }

    if let Some(dir) = &cfg.out_dir {
        multikernel::io::create_dir(dir)?;
        multikernel::io::write_csv(
            &dir.join("gomp_simulation.csv"),
            &[
                "noise_fraction",
                "method",
                "test_error",
                "std",
                "kernels_selected",
                "lambda",
            ],
            &csv_rows,
        )?;
        let mut series: Vec<Series> = methods
            .iter()
            .zip(&curves)
            .map(|(m, pts)| Series {
                name: m.clone(),
                points: pts.clone(),
            })
            .collect();
        series.push(Series {
            name: "Bayes".into(),
            points: curves[methods.len()].clone(),
        });
        let plot = LinePlot {
            title: "Sec. 5.1 simulation: test error against sparsity".into(),
            x_label: "v = fraction of noise kernels (%)".into(),
            y_label: "test error (%)".into(),
            log_x: false,
            log_y: false,
            series,
        };
        multikernel::io::write_atomic(&dir.join("gomp_simulation.svg"), plot.to_svg().as_bytes())?;
        let plot = LinePlot {
            title: "MKL-GOMP: kernels selected".into(),
            x_label: "v = fraction of noise kernels (%)".into(),
            y_label: "kernels selected (%)".into(),
            log_x: false,
            log_y: false,
            series: vec![Series {
                name: "GOMP".into(),
                points: kernel_curve,
            }],
        };
        multikernel::io::write_atomic(&dir.join("gomp_kernels.svg"), plot.to_svg().as_bytes())?;
        let plot = LinePlot {
            title: "MKL-GOMP: chosen lambda (median)".into(),
            x_label: "v = fraction of noise kernels (%)".into(),
            y_label: "lambda".into(),
            log_x: false,
            log_y: true,
            series: vec![Series {
                name: "GOMP".into(),
                points: lambda_curve,
            }],
        };
        multikernel::io::write_atomic(&dir.join("gomp_lambda.svg"), plot.to_svg().as_bytes())?;
        if !glass_csv.is_empty() {
            multikernel::io::write_csv(
                &dir.join("gomp_glass.csv"),
                &["method", "accuracy", "std", "kernels_selected"],
                &glass_csv,
            )?;
        }
    }
    // Non-finite extras (a median of nothing) become JSON null through serde_json.
    Ok(Report {
        experiment: "gomp".into(),
        rows,
        table,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_cdf_matches_known_values() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(-1.75) - 0.040_059_156).abs() < 1e-7);
        assert!((normal_cdf(1.96) - 0.975_002_105).abs() < 1e-7);
        // Slow twin: trapezoidal integration of the density.
        let x = -0.7;
        let steps = 200_000;
        let a = -12.0;
        let h = (x - a) / steps as f64;
        let pdf = |t: f64| (-t * t / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
        let mut s = 0.5 * (pdf(a) + pdf(x));
        for k in 1..steps {
            s += pdf(a + k as f64 * h);
        }
        assert!((normal_cdf(x) - s * h).abs() < 1e-7);
    }

    #[test]
    fn bad_settings_are_refused_by_name() {
        let name = |cfg: GompConfig| match run(&cfg, &mut |_| {}).unwrap_err() {
            Error::InvalidParameter { name, .. } => name,
            e => panic!("{e}"),
        };
        let d = GompConfig::default;
        assert_eq!(name(GompConfig { reps: 0, ..d() }), "reps");
        assert_eq!(name(GompConfig { n_train: 3, ..d() }), "n_train");
        assert_eq!(name(GompConfig { n_test: 1, ..d() }), "n_test");
        let empty = GompConfig {
            lp_lambdas: Vec::new(),
            ..d()
        };
        assert_eq!(name(empty), "lp_lambdas");
        let levels = GompConfig {
            levels: vec![0.5, 1.0],
            ..d()
        };
        assert_eq!(name(levels), "levels");
        let glass = Dataset {
            x: Matrix::zeros(4, 1),
            targets: Targets::Real(vec![0.0; 4]),
            feature_names: vec!["a".into()],
        };
        let folds = GompConfig {
            glass: Some(glass.clone()),
            glass_folds: 1,
            ..d()
        };
        assert_eq!(name(folds), "glass_folds");
        // Real targets where glass needs class labels: a data error (after a tiny
        // simulation).
        let cfg = GompConfig {
            reps: 1,
            n_val: 20,
            n_test: 20,
            levels: vec![0.5],
            gomp_lambdas: vec![1e-2],
            lp_lambdas: vec![1.0],
            ps: vec![2.0],
            glass: Some(glass),
            glass_splits: 1,
            ..d()
        };
        let e = run(&cfg, &mut |_| {}).unwrap_err();
        assert!(
            matches!(&e, Error::Data(m) if m.contains("class labels")),
            "{e}"
        );
    }

    #[test]
    fn log_grid_is_half_decades() {
        let g = log_grid(-1.0, 1.0);
        assert_eq!(g.len(), 5);
        assert!((g[0] - 0.1).abs() < 1e-15 && (g[4] - 10.0).abs() < 1e-12);
        assert!((g[1] - 10f64.powf(-0.5)).abs() < 1e-15);
    }

    /// A small run of the whole study: rows in the format, GOMP near the Bayes
    /// error on the sparsest problem, files written.
    #[test]
    fn small_study_produces_rows_and_files() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = GompConfig {
            reps: 2,
            n_val: 2000,
            n_test: 2000,
            levels: vec![0.0, 0.98],
            gomp_lambdas: log_grid(-3.0, 0.0),
            lp_lambdas: log_grid(-1.0, 2.0),
            out_dir: Some(dir.path().to_path_buf()),
            ..GompConfig::default()
        };
        let mut lines = Vec::new();
        let report = run(&cfg, &mut |l| lines.push(l.to_string())).unwrap();
        assert_eq!(report.experiment, "gomp");
        assert_eq!(lines.len(), 2);
        // 7 rows per level.
        assert_eq!(report.rows.len(), 14);
        let methods: Vec<&str> = report.rows[..7].iter().map(|r| r.method.as_str()).collect();
        assert_eq!(
            methods,
            ["gomp", "lp-1", "lp-4/3", "lp-2", "lp-4", "lp-inf", "bayes"]
        );
        for r in &report.rows {
            assert_eq!(r.dataset, "simulation");
            assert_eq!(r.metric, "test_error");
            assert_eq!(r.n, 2);
            let e = r.mean.unwrap();
            assert!((0.0..0.5).contains(&e), "{} {e}", r.method);
            assert!(r.extra.contains_key("noise_fraction"));
        }
        assert!(report.rows[0].extra.contains_key("kernels_selected"));
        // v = 98%: a single informative feature; GOMP picks few kernels and is near Bayes.
        let sparse = &report.rows[7];
        let k = sparse.extra["kernels_selected"].as_f64().unwrap();
        assert!(k <= 10.0, "{k}");
        assert!(sparse.mean.unwrap() < 0.08, "{:?}", sparse.mean);
        let json = report.to_json();
        assert!(json.contains("\"noise_fraction\": 0.98"));
        for f in [
            "gomp_simulation.csv",
            "gomp_simulation.svg",
            "gomp_kernels.svg",
            "gomp_lambda.svg",
        ] {
            assert!(dir.path().join(f).exists(), "{f}");
        }
        assert!(report.table.contains("| 98 |"));
    }

    #[test]
    fn glass_rows_on_a_synthetic_table() {
        // A 3-class table with well separated classes stands in for glass.
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let n = 60;
        let mut x = Matrix::zeros(n, 3);
        let mut y = Vec::new();
        for i in 0..n {
            let c = i % 3;
            y.push(c);
            for j in 0..3 {
                let e: f64 = StandardNormal.sample(&mut rng);
                x.set(i, j, if j == c { 3.0 } else { 0.0 } + 0.5 * e);
            }
        }
        let data = Dataset {
            x,
            targets: Targets::Classes {
                classes: vec!["a".into(), "b".into(), "c".into()],
                y,
            },
            feature_names: vec!["f0".into(), "f1".into(), "f2".into()],
        };
        let cfg = GompConfig {
            reps: 1,
            n_val: 200,
            n_test: 200,
            levels: vec![0.5],
            gomp_lambdas: log_grid(-3.0, -1.0),
            lp_lambdas: log_grid(-1.0, 1.0),
            glass: Some(data),
            glass_splits: 2,
            ..GompConfig::default()
        };
        let report = run(&cfg, &mut |_| {}).unwrap();
        let glass: Vec<&Row> = report
            .rows
            .iter()
            .filter(|r| r.dataset == "glass")
            .collect();
        assert_eq!(glass.len(), 6);
        for r in glass {
            assert_eq!(r.metric, "accuracy");
            assert!(r.mean.unwrap() > 0.8, "{} {:?}", r.method, r.mean);
        }
    }
}
