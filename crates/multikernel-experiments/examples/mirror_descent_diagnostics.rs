//! Diagnostics of `reproduce mirror-descent` (Afkanpour et al. 2013), the measurements behind
//! BENCHMARKS.md's mirror-descent sections that the reproduction itself does not print:
//!
//! - `sweep`: where Stoch, UCD and lp-MKL each win over the number of inputs r and the degree
//!   D: Figure 1's race on Sec. 5.2's synthetic data, 500 points, lambda = 1e-5, `DIAG_SECS`
//!   (default 10) seconds per stochastic method, lp-MKL under a 0.5 GiB limit; a table.
//! - `fig1`: Figure 1's tables with other solver settings (the step rules, the start, the
//!   variance factor of uniform sampling); env `DIAG_DS`, `DIAG_SECS`, `DIAG_ITERS`,
//!   `DIAG_ZERO`, `DIAG_BATCH`, `DIAG_POWER`, `DIAG_DECAY`, `DIAG_ETAS`, `DIAG_UCD`.
//! - `fig2`: why Stoch's test MSE grows with r in Figure 2 (the true terms' share of the
//!   gradient, the oracle objective); env `DIAG_R`, `DIAG_ITERS`, `DIAG_LAMBDA`,
//!   `DIAG_LAMBDAS`, `DIAG_BATCH`, `DIAG_ZERO`. lp-MKL's test MSE at r: `reproduce
//!   mirror-descent --figures 2 --r R`.
//! - `errors`: where the test error of a uniform polynomial fit comes from.
//!
//! Run: `cargo run --release -p multikernel --example mirror_descent_diagnostics -- sweep`
//! (or `fig1`, `fig2`, `errors`), from the repository's root (the tables are read from
//! `data/uci`).

use multikernel::data::split::three_way_split;
use multikernel::data::synthetic::{class_values, ringnorm, waveform, MonomialProblem};
use multikernel::data::{Matrix, Targets};
use multikernel::engine::multiset::{count_kernels, enumerate_multisets, MultiIndex};
use multikernel::engine::solver::mirror_descent::{
    perfeature_linear, solve, EvalSchedule, Init, MirrorDescentParams, PolyProblem, Sampling,
    SolverOptions, StepRule, UniformPolyModel,
};
use multikernel::kernel::MemoryLimit;
use multikernel::run::{Control, Progress};
use multikernel::{Error, Result};
use multikernel_experiments::mirror_descent::{
    load_tables, lp_over_monomials, MdTable, FIG1_LAMBDA, REAL_TABLES,
};
use std::path::Path;
use std::time::Instant;

fn env(k: &str, default: f64) -> f64 {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(default)
}

fn env_list(k: &str) -> Option<Vec<f64>> {
    std::env::var(k)
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
}

/// Training and test parts with numeric targets, split as the reproduction splits them (the
/// validation part is set aside).
struct Split {
    xtr: Matrix,
    ytr: Vec<f64>,
    xte: Matrix,
    yte: Vec<f64>,
}

/// A convergence curve: (seconds, J).
type Curve = Vec<(f64, f64)>;

/// Real targets as they are; two classes as -1 / +1, more as 1, 2, 3, ...
fn numeric(targets: &Targets) -> Result<Vec<f64>> {
    match targets {
        Targets::Real(y) => Ok(y.clone()),
        Targets::Classes { classes, .. } => {
            let values: Vec<f64> = if classes.len() == 2 {
                vec![-1.0, 1.0]
            } else {
                (1..=classes.len()).map(|c| c as f64).collect()
            };
            class_values(targets, &values)
        }
    }
}

/// The reproduction's split of table `name` for seed `seed`: ringnorm and waveform
/// generated (500 training, 1000 validation rows), the real tables by [`REAL_TABLES`].
fn split(tables: &[MdTable], name: &str, seed: u64) -> Result<Split> {
    let (ds, ntr, nva) = match name {
        "ringnorm" => (ringnorm(3500, seed), 500, 1000),
        "waveform" => (waveform(3500, seed), 500, 1000),
        _ => {
            let t = tables.iter().find(|t| t.name == name);
            let sizes = REAL_TABLES.iter().find(|r| r.0 == name);
            let (Some(t), Some(&(_, ntr, nva))) = (t, sizes) else {
                return Err(Error::data(format!("no table '{name}'")));
            };
            (t.data.clone(), ntr, nva)
        }
    };
    let (tr, _validation, te) = three_way_split(ds.len(), ntr, nva, seed);
    let part = |idx: &[usize]| -> Result<(Matrix, Vec<f64>)> {
        let d = ds.select(idx);
        let y = numeric(&d.targets)?;
        Ok((d.x, y))
    };
    let (xtr, ytr) = part(&tr)?;
    let (xte, yte) = part(&te)?;
    Ok(Split { xtr, ytr, xte, yte })
}

/// MSE in units of the training targets' variance.
fn scaled_mse(pred: &[f64], truth: &[f64], scale: f64) -> f64 {
    let n = truth.len().max(1) as f64;
    pred.iter()
        .zip(truth)
        .map(|(p, t)| (p - t) * (p - t))
        .sum::<f64>()
        / n
        / (scale * scale)
}

fn stoch_params(degree: usize, seed: u64) -> MirrorDescentParams {
    MirrorDescentParams {
        degree,
        base: vec![perfeature_linear()],
        solver: SolverOptions {
            seed,
            ..SolverOptions::default()
        },
        ..MirrorDescentParams::default()
    }
}

fn all_monomials(r: usize, degree: usize) -> Vec<MultiIndex> {
    (0..=degree)
        .flat_map(|d| enumerate_multisets(r, d))
        .collect()
}

fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(x) => format!("{x:.digits$}"),
        None => "—".to_string(),
    }
}

/// One convergence race (as Figure 1's): Stoch and UCD for `secs` seconds each, then lp-MKL
/// over all product kernels of degree `<= degree`, refused (an empty curve) beyond `limit`.
fn race(
    prob: &PolyProblem,
    degree: usize,
    secs: f64,
    seed: u64,
    limit: &MemoryLimit,
) -> Result<Vec<(&'static str, Curve)>> {
    let mut curves = Vec::new();
    for (method, sampling) in [("stoch", Sampling::Importance), ("ucd", Sampling::Uniform)] {
        let opts = SolverOptions {
            sampling,
            lambda: FIG1_LAMBDA,
            max_iter: 0,
            max_seconds: Some(secs),
            step: StepRule::default(),
            eval: EvalSchedule::Geometric {
                first: 0.02,
                factor: 1.15,
            },
            seed,
            ..SolverOptions::default()
        };
        let (sol, _) = solve(&prob.sampler, &prob.y, &opts, &())?;
        eprintln!(
            "  {method}: {} iterations, eta0 {}, J {:.6e}",
            sol.iterations, sol.eta0, sol.objective
        );
        curves.push((
            method,
            sol.trace.iter().map(|c| (c.seconds, c.objective)).collect(),
        ));
    }
    let idx = all_monomials(prob.sampler.base_count(), degree);
    // The factors, their copy in the solver and the stacked factor matrix, two n x n.
    let n = prob.y.len();
    let bytes = (3 * n * idx.len() + 2 * n * n) * 8;
    let what = format!("lp-MKL over {} product kernels", idx.len());
    let lp_curve = match limit.check(bytes, &what) {
        Ok(()) => {
            let t = Instant::now();
            let sol = lp_over_monomials(prob, &idx, FIG1_LAMBDA, 1e-9)?;
            let per = t.elapsed().as_secs_f64() / sol.objective.len().max(1) as f64;
            // J of iterate k is known after k + 1 solves; time per solve averaged.
            sol.objective
                .iter()
                .enumerate()
                .map(|(k, &j)| ((k + 1) as f64 * per, j))
                .filter(|(t, _)| *t <= secs)
                .collect()
        }
        Err(e) => {
            eprintln!("  lp-mkl refused: {e}");
            Vec::new()
        }
    };
    curves.push(("lp-mkl", lp_curve));
    Ok(curves)
}

/// `sweep`: the (r, D) table of BENCHMARKS.md.
fn sweep() -> Result<()> {
    let secs = env("DIAG_SECS", 10.0);
    let limit = MemoryLimit::gib(0.5);
    println!(
        "| r | D | kernels | best J | stoch s | ucd s | lp-mkl s | stoch J/best | ucd J/best |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (r, degree) in [
        (10, 2),
        (10, 3),
        (10, 4),
        (10, 5),
        (20, 2),
        (20, 3),
        (20, 4),
        (20, 5),
        (40, 2),
        (40, 3),
        (40, 4),
    ] {
        let seed = 5;
        let problem = MonomialProblem::new(r, 10, 3, seed)?;
        let d = problem.generate(500, 1);
        let y = numeric(&d.targets)?;
        let mut params = stoch_params(degree, seed);
        params.solver.lambda = FIG1_LAMBDA;
        let prob = PolyProblem::new(d.x.view(), &y, &params)?;
        eprintln!("r {r} D {degree}:");
        let curves = race(&prob, degree, secs, seed, &limit)?;
        let best = curves
            .iter()
            .flat_map(|c| c.1.iter().map(|p| p.1))
            .fold(f64::INFINITY, f64::min);
        let t1: Vec<String> = curves
            .iter()
            .map(|(m, c)| {
                if *m == "lp-mkl" && c.is_empty() {
                    "refused".into()
                } else {
                    fmt_opt(c.iter().find(|p| p.1 <= 1.01 * best).map(|p| p.0), 2)
                }
            })
            .collect();
        let fin: Vec<String> = curves[..2]
            .iter()
            .map(|c| fmt_opt(c.1.last().map(|p| p.1 / best), 4))
            .collect();
        println!(
            "| {r} | {degree} | {} | {best:.4e} | {} | {} | {} | {} | {} |",
            count_kernels(r, degree),
            t1[0],
            t1[1],
            t1[2],
            fin[0],
            fin[1]
        );
    }
    Ok(())
}

/// `fig1`: Figure 1's race with the solver's settings from the environment.
fn fig1(tables: &[MdTable]) -> Result<()> {
    let names = std::env::var("DIAG_DS").unwrap_or("ionosphere,sonar,ringnorm,waveform".into());
    let secs = env("DIAG_SECS", 5.0);
    let seed = 1;
    for name in names.split(',') {
        let s = split(tables, name, seed)?;
        let mut params = stoch_params(3, seed);
        params.solver.lambda = FIG1_LAMBDA;
        let prob = PolyProblem::new(s.xtr.view(), &s.ytr, &params)?;
        let idx = all_monomials(prob.sampler.base_count(), 3);
        let lp = lp_over_monomials(&prob, &idx, FIG1_LAMBDA, 1e-9)?;
        let best = lp.objective.iter().copied().fold(f64::INFINITY, f64::min);
        let mut opts = SolverOptions {
            sampling: if env("DIAG_UCD", 0.0) > 0.0 {
                Sampling::Uniform
            } else {
                Sampling::Importance
            },
            lambda: FIG1_LAMBDA,
            max_iter: env("DIAG_ITERS", 0.0) as u64,
            max_seconds: if env("DIAG_ITERS", 0.0) > 0.0 {
                None
            } else {
                Some(secs)
            },
            eval: EvalSchedule::Geometric {
                first: 0.02,
                factor: 1.15,
            },
            seed,
            batch: env("DIAG_BATCH", 0.0) as usize,
            step_decay: env("DIAG_DECAY", 0.5),
            averaging_power: Some(env("DIAG_POWER", 1.0)),
            init: if env("DIAG_ZERO", 0.0) > 0.0 {
                Init::Zero
            } else {
                Init::Uniform
            },
            ..SolverOptions::default()
        };
        if let Some(grid) = env_list("DIAG_ETAS") {
            opts.step = StepRule::Pilot {
                grid,
                fraction: 0.1,
            };
        }
        let (sol, _) = solve(&prob.sampler, &prob.y, &opts, &())?;
        let curve: Curve = sol.trace.iter().map(|c| (c.seconds, c.objective)).collect();
        let t1 = curve.iter().find(|p| p.1 <= 1.01 * best).map(|p| p.0);
        // Second moment of the eq.-14 estimate under uniform sampling relative to sampling
        // by |g| (which is 1): N sum_m q_m^2, q = |g| / ||g||_1 at the end.
        let tot = prob.sampler.distinct_mass(&sol.alpha);
        let sq: f64 = idx
            .iter()
            .map(|m| (prob.sampler.grad_mass(m, &sol.alpha) / tot).powi(2))
            .sum();
        println!(
            "{name}: N sum q^2 = {:.2} (uniform-sampling variance factor)",
            idx.len() as f64 * sq
        );
        let at = |t: f64| {
            curve
                .iter()
                .rfind(|p| p.0 <= t)
                .map_or(f64::NAN, |p| p.1 / best)
        };
        println!(
            "{name}: n {} N {} lp best {best:.4e}; {} iters, eta0 {}, t1pct {t1:?}, J/best at 0.5s {:.4} 1s {:.4} 2s {:.4} end {:.4}",
            s.xtr.rows,
            idx.len(),
            sol.iterations,
            sol.eta0,
            at(0.5),
            at(1.0),
            at(2.0),
            sol.objective / best
        );
    }
    Ok(())
}

/// `fig2`: Figure 2 at one `r`: the oracle, the true terms' share of `||g||_1`, Stoch's fits.
fn fig2() -> Result<()> {
    let r = env("DIAG_R", 100.0) as usize;
    let iters = env("DIAG_ITERS", 1000.0) as u64;
    let lambda = env("DIAG_LAMBDA", 1e-4);
    let batch = env("DIAG_BATCH", 0.0) as usize;
    let seed = 1000 + r as u64;
    let problem = MonomialProblem::new(r, 10, 3, seed)?;
    let draw = |n: usize, k: u64| -> Result<(Matrix, Vec<f64>)> {
        let d = problem.generate(n, seed.wrapping_mul(7).wrapping_add(k));
        let y = numeric(&d.targets)?;
        Ok((d.x, y))
    };
    let (xtr, ytr) = draw(500, 1)?;
    let (xva, yva) = draw(1000, 2)?;
    let (xte, yte) = draw(1000, 3)?;
    println!("true terms: {:?}", problem.terms);
    let prob = PolyProblem::new(xtr.view(), &ytr, &stoch_params(3, seed))?;
    // Oracle: lp-MKL over the true monomials (and the constant).
    let mut idx = problem.terms.clone();
    if !idx.contains(&vec![]) {
        idx.push(vec![]);
    }
    let oracle = lp_over_monomials(&prob, &idx, lambda, 1e-10)?;
    println!(
        "oracle J (lp-MKL over the true terms) {:.6e}",
        oracle.objective.last().copied().unwrap_or(f64::NAN)
    );
    let share = |alpha: &[f64]| {
        let tot = prob.sampler.distinct_mass(alpha);
        let rel: f64 = problem
            .terms
            .iter()
            .map(|m| prob.sampler.grad_mass(m, alpha))
            .sum();
        rel / tot
    };
    println!(
        "true-term share of ||g||_1 at theta = 0: {:.4}",
        share(&prob.y)
    );
    let init = if env("DIAG_ZERO", 0.0) > 0.0 {
        Init::Zero
    } else {
        Init::Uniform
    };
    let limit = MemoryLimit::default();
    for lambda in env_list("DIAG_LAMBDAS").unwrap_or_else(|| vec![lambda]) {
        let t = Instant::now();
        let opts = SolverOptions {
            sampling: Sampling::Importance,
            lambda,
            max_iter: iters,
            seed,
            batch,
            init,
            eval: EvalSchedule::Iterations((iters / 5).max(1)),
            ..SolverOptions::default()
        };
        let trace = |p: &Progress| {
            if let Some(j) = p.objective {
                println!("  it {} {:.2}s J {j:.6e}", p.step, p.seconds);
            }
            Control::Continue
        };
        let (model, sol, _) = prob.fit(&opts, &trace)?;
        println!(
            "stoch lambda {lambda:e}: {:.2} s, eta0 {}, pilot {:?}, J {:.6e}, touched {}, uniform weight {:.3e}",
            t.elapsed().as_secs_f64(),
            sol.eta0,
            sol.pilot,
            sol.objective,
            sol.terms.len(),
            sol.uniform_weight,
        );
        for (m, w) in sol.terms.iter().take(12) {
            let mark = if problem.terms.contains(m) {
                "TRUE"
            } else {
                ""
            };
            println!("  {m:?} {w:.4} {mark}");
        }
        println!(
            "true-term share of ||g||_1 at the end: {:.4}",
            share(&sol.alpha)
        );
        let scale = prob.target.scale;
        let mse = |x: &Matrix, y: &[f64]| -> Result<f64> {
            Ok(scaled_mse(&model.predict(x.view(), &limit)?.data, y, scale))
        };
        println!(
            "stoch lambda {lambda:e} val {:.4} test {:.4}",
            mse(&xva, &yva)?,
            mse(&xte, &yte)?
        );
    }
    Ok(())
}

/// `errors`: how the test error of a uniform polynomial fit spreads over the points.
fn errors(tables: &[MdTable]) -> Result<()> {
    for (name, degree, lambda) in [("ionosphere", 2, 10.0), ("ringnorm", 3, 100.0)] {
        let s = split(tables, name, 101)?;
        let m = UniformPolyModel::fit(s.xtr.view(), &s.ytr, degree, lambda)?;
        let pred = m.predict(s.xte.view())?;
        let scale = m.target.scale;
        let mut err: Vec<f64> = pred
            .iter()
            .zip(&s.yte)
            .map(|(p, t)| (p - t) * (p - t) / (scale * scale))
            .collect();
        err.sort_by(|a, b| b.total_cmp(a));
        let total: f64 = err.iter().sum();
        let top: f64 = err.iter().take(err.len() / 20).sum();
        let tr = m.predict(s.xtr.view())?;
        println!(
            "{name} uniform-d{degree} lambda {lambda}: test MSE {:.3}, worst 5% of points carry {:.0}% of it, max {:.1}; train MSE {:.4}",
            total / err.len() as f64,
            100.0 * top / total,
            err[0],
            scaled_mse(&tr, &s.ytr, scale)
        );
    }
    Ok(())
}

fn main() {
    let what = std::env::args().nth(1).unwrap_or_default();
    let tables = || load_tables(Path::new("data/uci"));
    let done = match what.as_str() {
        "sweep" => sweep(),
        "fig1" => tables().and_then(|t| fig1(&t)),
        "fig2" => fig2(),
        "errors" => tables().and_then(|t| errors(&t)),
        _ => Err(Error::param(
            "diagnostic",
            what,
            "sweep, fig1, fig2 or errors",
        )),
    };
    if let Err(e) = done {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
