#![allow(clippy::needless_range_loop)]
use super::objective::objective;
use super::*;
use crate::data::synthetic::MonomialProblem;
use crate::data::{Matrix, Targets};
use crate::error::Error;
use crate::kernel::{KernelSpec, MemoryLimit};
use crate::multiset::{enumerate_multisets, MultiIndex};
use crate::run::{Control, Progress, RunStatus, StepUnit, StopFlag};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

pub(super) fn rank_one_sampler(
    n: usize,
    r: usize,
    degree: usize,
    seed: u64,
) -> (PolySampler, Vec<f64>, Matrix) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Matrix::from_vec(n, r, (0..n * r).map(|_| rng.gen_range(-1.0..1.0)).collect());
    let z = x.transpose();
    let y: Vec<f64> = (0..n)
        .map(|i| x.get(i, 0) * x.get(i, 1) + 0.5 * x.get(i, 2) + 0.1 * rng.gen_range(-1.0..1.0))
        .collect();
    let s = PolySampler::new(
        PolyBasis::RankOne { z: z.clone() },
        degree,
        &vec![1.0; degree + 1],
        &MemoryLimit::default(),
    )
    .unwrap();
    (s, y, z)
}

/// Every product kernel's weight: the touched terms, the uniform weight elsewhere.
fn full_weights(sol: &MdSolution, r: usize, degree: usize) -> Vec<(MultiIndex, f64)> {
    let map: HashMap<MultiIndex, f64> = sol.terms.iter().cloned().collect();
    (0..=degree)
        .flat_map(|d| enumerate_multisets(r, d))
        .map(|m| {
            let w = map.get(&m).copied().unwrap_or(sol.uniform_weight);
            (m, w)
        })
        .collect()
}

/// Brute force: K_theta of the returned terms from explicit monomial features.
fn brute_k(terms: &[(MultiIndex, f64)], z: &Matrix, n: usize) -> Matrix {
    let mut k = Matrix::zeros(n, n);
    for (m, w) in terms {
        let f: Vec<f64> = (0..n)
            .map(|t| m.iter().map(|&j| z.get(j as usize, t)).product())
            .collect();
        for a in 0..n {
            for b in 0..n {
                k.set(a, b, k.get(a, b) + w * f[a] * f[b]);
            }
        }
    }
    k
}

#[test]
fn incremental_state_matches_recomputation() {
    // The returned objective and alpha equal a from-scratch computation on the returned
    // weights, for every sampling and averaging choice.
    let (s, y, z) = rank_one_sampler(30, 4, 3, 1);
    for (sampling, init) in [
        (Sampling::Importance, Init::Zero),
        (Sampling::Importance, Init::Uniform),
        (Sampling::Uniform, Init::Uniform),
        (Sampling::Proportional, Init::Zero),
    ] {
        for (power, batch) in [(None, 1), (Some(-0.5), 3), (Some(1.0), 1)] {
            let opts = SolverOptions {
                init,
                batch,
                sampling: sampling.clone(),
                lambda: 1e-3,
                max_iter: 300,
                step: StepRule::Fixed(1.0),
                averaging_power: power,
                ..SolverOptions::default()
            };
            let sol = solve(&s, &y, &opts, &()).unwrap().0;
            assert_eq!(sol.uniform_weight > 0.0, init == Init::Uniform);
            let all = full_weights(&sol, 4, 3);
            let norm: f64 = all.iter().map(|t| t.1 * t.1).sum::<f64>().sqrt();
            assert!((norm - 1.0).abs() < 1e-9);
            let k = brute_k(&all, &z, 30);
            let (j, alpha) = objective(&k, &y, 1e-3).unwrap();
            assert!(
                (j - sol.objective).abs() < 1e-6 * j,
                "{j} vs {}",
                sol.objective
            );
            for (a, b) in alpha.iter().zip(&sol.alpha) {
                assert!((a - b).abs() < 1e-5 * (1.0 + a.abs()));
            }
            assert_eq!(sol.iterations, 300);
            assert!(sol.stats.rank_one_updates >= 299 * batch as u64 - 5);
        }
    }
}

/// Against lp-MKL-free ground truth: the optimum over the (few) explicit kernels by
/// projected full-gradient descent on the sphere, Stoch gets within 2% in a short run.
#[test]
fn stoch_approaches_the_optimum() {
    let (s, y, z) = rank_one_sampler(40, 3, 2, 3);
    let lambda = 1e-2;
    let kernels: Vec<MultiIndex> = (0..=2).flat_map(|d| enumerate_multisets(3, d)).collect();
    // Reference: theta ∝ |g| fixed point iteration (KKT on the sphere) from uniform.
    let mut theta = vec![1.0 / (kernels.len() as f64).sqrt(); kernels.len()];
    let mut jref = f64::INFINITY;
    for _ in 0..3000 {
        let terms: Vec<(MultiIndex, f64)> =
            kernels.iter().cloned().zip(theta.iter().copied()).collect();
        let (j, alpha) = objective(&brute_k(&terms, &z, 40), &y, lambda).unwrap();
        jref = jref.min(j);
        let g: Vec<f64> = kernels
            .iter()
            .zip(&theta)
            .map(|(m, t)| t * t * s.grad_mass(m, &alpha))
            .collect();
        // lp-MKL p = 2 closed form: theta ∝ ||w||^(2/3).
        let new: Vec<f64> = g.iter().map(|v| v.powf(1.0 / 3.0)).collect();
        let nn = new.iter().map(|v| v * v).sum::<f64>().sqrt();
        theta = new.iter().map(|v| v / nn).collect();
    }
    let opts = SolverOptions {
        lambda,
        max_iter: 3000,
        ..SolverOptions::default()
    };
    let sol = solve(&s, &y, &opts, &()).unwrap().0;
    assert!(
        sol.objective >= jref * (1.0 - 1e-6),
        "{} < optimum {jref}",
        sol.objective
    );
    assert!(
        sol.objective <= jref * 1.02,
        "{} vs optimum {jref}",
        sol.objective
    );
    assert_eq!(sol.pilot.len(), DEFAULT_ETA0_GRID.len());
}

#[test]
fn model_predicts_a_polynomial() {
    let limit = MemoryLimit::default();
    let p = MonomialProblem::new(4, 5, 3, 9).unwrap();
    let train = p.generate(150, 1);
    let test = p.generate(100, 2);
    let Targets::Real(ytr) = &train.targets else {
        panic!()
    };
    let Targets::Real(yte) = &test.targets else {
        panic!()
    };
    let params = MirrorDescentParams {
        solver: SolverOptions {
            lambda: 1e-4,
            max_iter: 1500,
            init: Init::Uniform,
            ..SolverOptions::default()
        },
        ..MirrorDescentParams::default()
    };
    let model = PolyMklModel::fit(train.x.view(), ytr, &params, &())
        .unwrap()
        .0;
    let pred = model.predict(test.x.view(), &limit).unwrap().data;
    let var = yte.iter().map(|v| v * v).sum::<f64>() / yte.len() as f64;
    let mse = pred
        .iter()
        .zip(yte)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f64>()
        / yte.len() as f64;
    assert!(mse < 0.05 * var, "mse {mse} vs variance {var}");
    let names = model.kernels();
    assert!(!names.is_empty());
    // The model survives serialization.
    let json = serde_json::to_string(&model).unwrap();
    let back: PolyMklModel = serde_json::from_str(&json).unwrap();
    assert_eq!(back.predict(test.x.view(), &limit).unwrap().data, pred);
    // Monomial predictor equals the dual form sum_t alpha_t K_theta(x_t, x).
    let prob = PolyProblem::new(train.x.view(), ytr, &params).unwrap();
    let (m2, sol, _) = prob.fit(&params.solver, &()).unwrap();
    assert!(sol.uniform_weight > 0.0);
    let all = full_weights(&sol, 4, 3);
    let xs = prob.standardizer.apply(&test.x);
    for i in 0..5 {
        let mut f = 0.0;
        for (t, a) in sol.alpha.iter().enumerate() {
            let kv: f64 = all
                .iter()
                .map(|(m, w)| {
                    w * m
                        .iter()
                        .map(|&j| xs.get(i, j as usize) * prob.x_train.get(t, j as usize))
                        .product::<f64>()
                })
                .sum();
            f += a * kv;
        }
        let direct = prob.target.invert(f);
        let via = m2
            .predict(test.x.select_rows(&[i]).view(), &limit)
            .unwrap()
            .data[0];
        assert!((direct - via).abs() < 1e-8 * (1.0 + direct.abs()));
    }
}

#[test]
fn gaussian_base_kernels_train_and_predict() {
    let limit = MemoryLimit::default();
    let p = MonomialProblem::new(3, 4, 2, 5).unwrap();
    let train = p.generate(60, 3);
    let Targets::Real(ytr) = &train.targets else {
        panic!()
    };
    let mut base = KernelSpec::new(crate::kernel::KernelKind::Rbf {
        sigma2: Some(1.0),
        scale: None,
    });
    base.perfeature = true;
    let params = MirrorDescentParams {
        degree: 2,
        base: vec![base],
        solver: SolverOptions {
            lambda: 1e-3,
            max_iter: 150,
            ..SolverOptions::default()
        },
        ..MirrorDescentParams::default()
    };
    let prob = PolyProblem::new(train.x.view(), ytr, &params).unwrap();
    assert!(prob.rank_one.is_none());
    let (model, sol, _) = prob.fit(&params.solver, &()).unwrap();
    // Dual prediction on the training rows equals K_theta alpha.
    let pred = model.predict(train.x.view(), &limit).unwrap().data;
    let n = 60;
    let mut k = vec![0.0; n * n];
    for (m, w) in &full_weights(&sol, 3, 2) {
        let km = prob.sampler.kernel_dense(m);
        for (a, b) in k.iter_mut().zip(&km) {
            *a += w * b;
        }
    }
    for i in 0..n {
        let f: f64 = (0..n).map(|t| k[i * n + t] * sol.alpha[t]).sum();
        assert!((prob.target.invert(f) - pred[i]).abs() < 1e-8);
    }
    let mse = pred
        .iter()
        .zip(ytr)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f64>()
        / n as f64;
    let var = ytr.iter().map(|v| v * v).sum::<f64>() / n as f64;
    assert!(mse < 0.1 * var);
}

#[test]
fn uniform_kernel_equals_sum_over_ordered_products() {
    // (1 + x.x')^D is the sum over ordered tuples of the base kernels with the constant
    // feature: checked against explicit expansion on a tiny problem.
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let x = Matrix::from_vec(6, 2, (0..12).map(|_| rng.gen_range(-1.0..1.0)).collect());
    let y: Vec<f64> = (0..6).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let m = UniformPolyModel::fit(x.view(), &y, 2, 0.1).unwrap();
    let xs = &m.x_train;
    let mut k = Matrix::zeros(6, 6);
    for a in 0..6 {
        for b in 0..6 {
            let f = |i: usize, j: usize| if j == 0 { 1.0 } else { xs.get(i, j - 1) };
            let mut v = 0.0;
            for j1 in 0..3 {
                for j2 in 0..3 {
                    v += f(a, j1) * f(b, j1) * f(a, j2) * f(b, j2);
                }
            }
            k.set(a, b, v);
        }
    }
    let ys = m.target.apply_all(&y);
    let (_, alpha) = objective(&k, &ys, 0.1).unwrap();
    for (p, q) in alpha.iter().zip(&m.alpha) {
        assert!((p - q).abs() < 1e-9 * (1.0 + p.abs()));
    }
    let pred = m.predict(x.view()).unwrap();
    for i in 0..6 {
        let f: f64 = (0..6).map(|t| k.get(i, t) * alpha[t]).sum();
        assert!((m.target.invert(f) - pred[i]).abs() < 1e-9);
    }
    assert!(UniformPolyModel::fit(x.view(), &y, 0, 0.1).is_err());
}

#[test]
fn auto_batch_follows_the_measured_rule() {
    // 32768 / n clamped to [16, 512], never more than the number of kernels.
    assert_eq!(auto_batch(500, 176_851.0), 65);
    assert_eq!(auto_batch(140, 7770.0), 234);
    assert_eq!(auto_batch(83, 39_711.0), 394);
    assert_eq!(auto_batch(20, 1e6), 512);
    assert_eq!(auto_batch(5000, 1e6), 16);
    assert_eq!(auto_batch(40, 10.0), 10);
    // The default start is Algorithm 2's theta = 0: nothing outside the sampled terms.
    let (s, y, _) = rank_one_sampler(30, 4, 3, 5);
    let opts = SolverOptions {
        max_iter: 20,
        step: StepRule::Fixed(1.0),
        ..SolverOptions::default()
    };
    let sol = solve(&s, &y, &opts, &()).unwrap().0;
    assert_eq!(sol.uniform_weight, 0.0);
    assert!(sol.terms.len() <= 20 * auto_batch(30, s.kernel_count()));
    // A batch this large against n = 30 refactors instead of updating (RANK_UPDATE_RATIO).
    assert_eq!(sol.stats.rank_one_updates, 0);
    assert!(sol.stats.factorizations >= 20);
}

#[test]
fn invalid_options_are_rejected() {
    let (s, y, _) = rank_one_sampler(10, 3, 2, 4);
    let bad = [
        SolverOptions {
            lambda: 0.0,
            ..SolverOptions::default()
        },
        SolverOptions {
            step: StepRule::Fixed(-1.0),
            ..SolverOptions::default()
        },
        SolverOptions {
            step: StepRule::Pilot {
                grid: vec![],
                fraction: 0.1,
            },
            ..SolverOptions::default()
        },
        SolverOptions {
            max_seconds: Some(0.0),
            ..SolverOptions::default()
        },
    ];
    for o in bad {
        assert!(solve(&s, &y, &o, &()).is_err());
    }
    assert!(solve(&s, &y[..5], &SolverOptions::default(), &()).is_err());
    assert!(Sampling::parse("nope").is_err());
    // Zero targets: zero gradient, nothing to learn.
    let sol = solve(&s, &[0.0; 10], &SolverOptions::default(), &())
        .unwrap()
        .0;
    assert!(sol.converged);
}

// ---------------------------------------------------------------------------------------
// Run contract.

fn fixed_options(max_iter: u64) -> SolverOptions {
    SolverOptions {
        lambda: 1e-3,
        max_iter,
        step: StepRule::Fixed(1.0),
        batch: 2,
        ..SolverOptions::default()
    }
}

/// Every iteration is a step; the objective comes with the steps the evaluation schedule
/// evaluates; the status says what ended the run.
#[test]
fn run_status_and_progress_follow_the_budget() {
    let (s, y, _) = rank_one_sampler(20, 3, 2, 41);
    let seen = AtomicU64::new(0);
    let count = |p: &Progress| {
        assert_eq!((p.unit, p.total), (StepUnit::Iteration, Some(30)));
        assert_eq!(
            p.objective.is_some(),
            p.step.is_multiple_of(10),
            "step {}",
            p.step
        );
        seen.fetch_add(1, Ordering::SeqCst);
        Control::Continue
    };
    let opts = SolverOptions {
        eval: EvalSchedule::Iterations(10),
        ..fixed_options(30)
    };
    let (sol, info) = solve(&s, &y, &opts, &count).unwrap();
    assert_eq!(
        (info.status, info.steps, sol.iterations),
        (RunStatus::Completed, 30, 30)
    );
    assert_eq!(seen.load(Ordering::SeqCst), 30);
    let traced: Vec<f64> = info.trace.iter().map(|t| t.objective).collect();
    let evaluated: Vec<f64> = sol.trace[1..].iter().map(|c| c.objective).collect();
    assert_eq!(traced, evaluated);
    assert_eq!(info.objective, Some(sol.objective));

    // A time budget that ends the run before its first iteration, without an iteration cap.
    let opts = SolverOptions {
        max_iter: 0,
        max_seconds: Some(1e-12),
        ..fixed_options(0)
    };
    let info = solve(&s, &y, &opts, &()).unwrap().1;
    assert_eq!(info.status, RunStatus::TimeBudget);
    // A time-budgeted run ended by its iteration cap; with pilots, the steps count the
    // chosen pilot's iterations too.
    let opts = SolverOptions {
        max_seconds: Some(1e6),
        step: StepRule::default(),
        ..fixed_options(40)
    };
    let (sol, info) = solve(&s, &y, &opts, &()).unwrap();
    assert_eq!(
        (info.status, info.steps, sol.iterations),
        (RunStatus::IterationLimit, 40, 40)
    );
    // Zero targets: the gradient vanishes at once.
    let info = solve(&s, &[0.0; 20], &fixed_options(30), &()).unwrap().1;
    assert_eq!((info.status, info.steps), (RunStatus::Converged, 0));
}

fn stop_after_one(p: &Progress) -> Control {
    if p.step >= 1 {
        Control::Stop
    } else {
        Control::Continue
    }
}

fn model_params(sampling: Sampling) -> MirrorDescentParams {
    MirrorDescentParams {
        degree: 2,
        solver: SolverOptions {
            sampling,
            lambda: 1e-2,
            max_iter: 300,
            ..SolverOptions::default()
        },
        ..MirrorDescentParams::default()
    }
}

/// Rows and targets of a small polynomial problem.
fn model_data() -> (Matrix, Vec<f64>) {
    let p = MonomialProblem::new(3, 4, 2, 7).unwrap();
    let d = p.generate(40, 1);
    let Targets::Real(y) = d.targets else {
        panic!()
    };
    (d.x, y)
}

#[test]
fn an_observer_stops_the_run_after_the_first_iteration() {
    let (s, y, _) = rank_one_sampler(20, 3, 2, 42);
    let (sol, info) = solve(&s, &y, &fixed_options(50), &stop_after_one).unwrap();
    assert_eq!(
        (info.status, info.steps, sol.iterations),
        (RunStatus::Cancelled, 1, 1)
    );
    assert!(sol.objective.is_finite());

    let (x, y) = model_data();
    for sampling in [Sampling::Importance, Sampling::Uniform] {
        let (model, info) =
            PolyMklModel::fit(x.view(), &y, &model_params(sampling), &stop_after_one).unwrap();
        assert_eq!(info.status, RunStatus::Cancelled);
        // The pilot's iterations plus the one reported.
        assert_eq!(model.iterations, info.steps);
        assert!(info.steps < 300);
        model.validate().unwrap();
        let f = model.predict(x.view(), &MemoryLimit::default()).unwrap();
        assert_eq!((f.rows, f.cols), (40, 1));
        assert!(f.data.iter().all(|v| v.is_finite()));
    }
}

/// A stop flag set before the run stops it at its first poll, in the first eta0 pilot: the
/// model of `theta = 0` predicts the mean of the targets.
#[test]
fn a_stop_flag_set_before_the_run_stops_it_at_the_first_poll() {
    let flag = StopFlag::new();
    flag.stop();
    let (x, y) = model_data();
    let (model, info) =
        PolyMklModel::fit(x.view(), &y, &model_params(Sampling::Importance), &flag).unwrap();
    assert_eq!(
        (info.status, info.steps, model.iterations),
        (RunStatus::Cancelled, 0, 0)
    );
    assert!(model.terms.is_empty());
    model.validate().unwrap();
    let f = model.predict(x.view(), &MemoryLimit::default()).unwrap();
    let mean = y.iter().sum::<f64>() / y.len() as f64;
    assert!(
        f.data.iter().all(|v| (v - mean).abs() < 1e-9),
        "{:?}",
        &f.data[..3]
    );
}

// ---------------------------------------------------------------------------------------
// Validation of stored models.

/// A model with the monomial predictor (and the uniform weight of the other kernels) and
/// one with the dual predictor over Gaussian base kernels.
fn both_predictors() -> Vec<PolyMklModel> {
    let (x, y) = model_data();
    let mut mono = model_params(Sampling::Importance);
    mono.solver.init = Init::Uniform;
    let mut rbf = KernelSpec::new(crate::kernel::KernelKind::Rbf {
        sigma2: None,
        scale: None,
    });
    rbf.perfeature = true;
    let mut dual = MirrorDescentParams {
        base: vec![rbf],
        ..model_params(Sampling::Uniform)
    };
    dual.solver.max_iter = 60;
    [mono, dual]
        .iter()
        .map(|p| PolyMklModel::fit(x.view(), &y, p, &()).unwrap().0)
        .collect()
}

#[test]
fn validate_accepts_fitted_models_and_refuses_mangled_copies() {
    let models = both_predictors();
    assert!(matches!(
        models[0].predictor,
        PolyPredictor::Monomials {
            uniform: Some(_),
            ..
        }
    ));
    assert!(matches!(models[1].predictor, PolyPredictor::Dual { .. }));
    for model in &models {
        model.validate().unwrap();
        let refused = |f: &dyn Fn(&mut PolyMklModel)| {
            let mut m = model.clone();
            f(&mut m);
            m.validate().unwrap_err()
        };
        assert!(matches!(
            refused(&|m| {
                m.rho2.pop();
            }),
            Error::ShapeMismatch { .. }
        ));
        refused(&|m| m.terms[0].index = vec![0; m.degree + 1]);
        refused(&|m| m.terms[0].index = vec![m.base_names.len() as u32]);
        refused(&|m| {
            m.base_names.pop();
        });
        refused(&|m| {
            m.standardizer.mean.pop();
        });
        refused(&|m| m.target.scale = 0.0);
        refused(&|m| m.degree = 0);
        refused(&|m| m.kernel_count = 0.0);
        refused(&|m| match &mut m.predictor {
            PolyPredictor::Monomials { coef, .. } => {
                coef.pop();
            }
            PolyPredictor::Dual { alpha, .. } => {
                alpha.pop();
            }
        });
        refused(&|m| match &mut m.predictor {
            PolyPredictor::Monomials { base_feature, .. } => base_feature[0] = 3,
            PolyPredictor::Dual { x_train, .. } => {
                let (r, c) = (x_train.rows, x_train.cols);
                (x_train.rows, x_train.cols) = (c, r);
            }
        });
    }
}

#[test]
fn predict_never_panics_on_a_model_that_validates() {
    let (x, _) = model_data();
    let limit = MemoryLimit::default();
    for (seed, model) in both_predictors().iter().enumerate() {
        let v = serde_json::to_value(model).unwrap();
        let (refused, accepted) = crate::solver::check::mangle::check_copies(
            &v,
            300,
            seed as u64 + 3,
            PolyMklModel::validate,
            |m: &PolyMklModel| m.predict(x.view(), &limit),
        );
        assert!(
            refused > 50 && accepted > 10,
            "{refused} refused, {accepted} accepted"
        );
    }
}
