#![allow(clippy::needless_range_loop)]
use super::*;
use crate::data::Matrix;
use crate::error::Error;
use crate::kernel::{
    fit_all, test_kernel_matrix, train_kernel_matrix, KernelMatrix, KernelSpec, MemoryLimit,
};
use crate::linalg::{dot, matmul};
use crate::run::{Control, Progress, RunStatus, StepUnit, StopFlag};
use crate::solver::ridge::{center_targets, cross_times, decision_weighted};
use engine::lp_norm;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn random_matrix(rows: usize, cols: usize, rng: &mut ChaCha8Rng) -> Matrix {
    Matrix::from_vec(
        rows,
        cols,
        (0..rows * cols).map(|_| rng.gen_range(-1.0..1.0)).collect(),
    )
}

/// A dense PSD kernel of rank `r` and a factor kernel, both from random features.
fn kernels(n: usize, rng: &mut ChaCha8Rng) -> Vec<KernelMatrix> {
    vec![
        KernelMatrix::Dense(KernelMatrix::Factor(random_matrix(n, 4, rng)).to_dense()),
        KernelMatrix::rank_one(random_matrix(n, 1, rng).data),
        KernelMatrix::Factor(random_matrix(n, 2, rng)),
    ]
}

/// Slow twin: dense inverse by Gauss-Jordan elimination.
fn solve_naive(a: &Matrix, b: &Matrix) -> Matrix {
    let n = a.rows;
    let mut m = a.clone();
    let mut x = b.clone();
    for c in 0..n {
        let piv = (c..n)
            .max_by(|&i, &j| m.get(i, c).abs().total_cmp(&m.get(j, c).abs()))
            .unwrap();
        for j in 0..n {
            let t = m.get(c, j);
            m.set(c, j, m.get(piv, j));
            m.set(piv, j, t);
        }
        for j in 0..x.cols {
            let t = x.get(c, j);
            x.set(c, j, x.get(piv, j));
            x.set(piv, j, t);
        }
        let d = m.get(c, c);
        for i in 0..n {
            if i != c {
                let f = m.get(i, c) / d;
                for j in 0..n {
                    m.set(i, j, m.get(i, j) - f * m.get(c, j));
                }
                for j in 0..x.cols {
                    x.set(i, j, x.get(i, j) - f * x.get(c, j));
                }
            }
        }
    }
    for i in 0..n {
        let d = m.get(i, i);
        for j in 0..x.cols {
            x.set(i, j, x.get(i, j) / d);
        }
    }
    x
}

fn naive_objective(ks: &[KernelMatrix], theta: &[f64], y: &Matrix, lambda: f64, bias: bool) -> f64 {
    let n = y.rows;
    let mut a = Matrix::zeros(n, n);
    for (k, t) in ks.iter().zip(theta) {
        let d = if bias {
            k.centered().to_dense()
        } else {
            k.to_dense()
        };
        for (o, v) in a.data.iter_mut().zip(&d.data) {
            *o += t * v;
        }
    }
    for i in 0..n {
        a.set(i, i, a.get(i, i) + lambda);
    }
    let yc = if bias { center_targets(y).1 } else { y.clone() };
    let al = solve_naive(&a, &yc);
    0.5 * lambda * dot(&yc.data, &al.data)
}

#[test]
fn weighted_sum_solve_matches_naive_dense_and_woodbury() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let n = 9;
    let mut ks = kernels(n, &mut rng);
    // A second dense kernel, and a factor of full rank (the dense path with factors only).
    ks.push(KernelMatrix::Dense(
        KernelMatrix::Factor(random_matrix(n, 3, &mut rng)).to_dense(),
    ));
    ks.push(KernelMatrix::Factor(random_matrix(n, n + 1, &mut rng)));
    let y = random_matrix(n, 2, &mut rng);
    for bias in [false, true] {
        let yc = if bias {
            center_targets(&y).1
        } else {
            y.clone()
        };
        // Dense path (a dense kernel is active; two of them), Woodbury path (factors only,
        // rank 3 < 9), and the dense path of factors only (rank 10 >= 9).
        for w in [
            vec![0.7, 0.2, 1.3, 0.0, 0.0],
            vec![0.0, 0.5, 2.0, 0.0, 0.0],
            vec![0.7, 0.0, 0.4, 1.1, 0.0],
            vec![0.0, 0.3, 0.0, 0.0, 0.8],
        ] {
            let got = solve_weighted_sum(&ks, &w, 0.3, bias, &yc).unwrap();
            let mut a = Matrix::zeros(n, n);
            for (k, t) in ks.iter().zip(&w) {
                let d = if bias {
                    k.centered().to_dense()
                } else {
                    k.to_dense()
                };
                for (o, v) in a.data.iter_mut().zip(&d.data) {
                    *o += t * v;
                }
            }
            for i in 0..n {
                a.set(i, i, a.get(i, i) + 0.3);
            }
            let want = solve_naive(&a, &yc);
            for (g, w) in got.data.iter().zip(&want.data) {
                assert!((g - w).abs() < 1e-9, "{g} vs {w}");
            }
        }
    }
}

#[test]
fn objective_decreases_and_theta_on_sphere() {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let n = 12;
    let ks = kernels(n, &mut rng);
    let y = random_matrix(n, 1, &mut rng);
    for p in [1.0, 4.0 / 3.0, 2.0, 4.0] {
        let params = LpMklParams {
            p,
            lambda: 0.2,
            ..LpMklParams::default()
        };
        let sol = lp_mkl(&ks, &y, &params, &()).unwrap().0;
        assert!(sol.objective.len() >= 2);
        for w in sol.objective.windows(2) {
            assert!(w[1] <= w[0] * (1.0 + 1e-10), "J increased: {w:?} (p={p})");
        }
        assert!((lp_norm(&sol.theta, p) - 1.0).abs() < 1e-9);
        let j = objective(&ks, &sol.theta, &y, 0.2, true).unwrap();
        assert!((j - sol.objective.last().unwrap()).abs() < 1e-10 * j.abs());
        let jn = naive_objective(&ks, &sol.theta, &y, 0.2, true);
        assert!((j - jn).abs() < 1e-9 * jn.abs(), "{j} vs {jn}");
    }
}

/// Brute force over the lp sphere for M = 2 (angle grid) and M = 3 (two-angle grid):
/// the fixed point's J is no larger than any grid point's and within grid resolution
/// of the best.
#[test]
fn fixed_point_is_optimal_against_brute_force_on_lp_sphere() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let n = 10;
    for m in [2usize, 3] {
        let ks: Vec<KernelMatrix> = kernels(n, &mut rng).into_iter().take(m).collect();
        let y = random_matrix(n, 2, &mut rng);
        for p in [1.0, 4.0 / 3.0, 2.0, 4.0] {
            let lambda = 0.5;
            let params = LpMklParams {
                p,
                lambda,
                tol: 1e-12,
                max_iter: 20_000,
                ..LpMklParams::default()
            };
            let sol = lp_mkl(&ks, &y, &params, &()).unwrap().0;
            let j = *sol.objective.last().unwrap();
            // Points on the positive part of the lp sphere from a simplex grid.
            let steps = if m == 2 { 2000 } else { 150 };
            let mut best = f64::INFINITY;
            let mut grid = Vec::new();
            if m == 2 {
                for a in 0..=steps {
                    grid.push(vec![a as f64, (steps - a) as f64]);
                }
            } else {
                for a in 0..=steps {
                    for b in 0..=(steps - a) {
                        grid.push(vec![a as f64, b as f64, (steps - a - b) as f64]);
                    }
                }
            }
            for g in grid {
                let norm = lp_norm(&g, p);
                let t: Vec<f64> = g.iter().map(|v| v / norm).collect();
                best = best.min(naive_objective(&ks, &t, &y, lambda, true));
            }
            assert!(
                j <= best * (1.0 + 1e-9),
                "p={p} M={m}: J={j} > grid best {best}"
            );
            assert!(
                j >= best * (1.0 - 1e-3),
                "p={p} M={m}: J={j} far below grid {best}?"
            );
        }
    }
}

#[test]
fn p_inf_gives_uniform_theta_and_sum_kernel_solution() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let n = 8;
    let ks = kernels(n, &mut rng);
    let y = random_matrix(n, 1, &mut rng);
    let params = LpMklParams {
        p: f64::INFINITY,
        lambda: 0.1,
        ..LpMklParams::default()
    };
    let sol = lp_mkl(&ks, &y, &params, &()).unwrap().0;
    assert_eq!(sol.theta, vec![1.0; 3]);
    assert_eq!(sol.iterations, 1);
    let want = naive_objective(&ks, &[1.0; 3], &y, 0.1, true);
    assert!((sol.objective[0] - want).abs() < 1e-9 * want);
    // Large p approaches the uniform weights of p = inf.
    let big = lp_mkl(
        &ks,
        &y,
        &LpMklParams {
            p: 200.0,
            lambda: 0.1,
            ..LpMklParams::default()
        },
        &(),
    )
    .unwrap()
    .0;
    for t in &big.theta {
        assert!((t - 1.0).abs() < 0.05, "{:?}", big.theta);
    }
}

#[test]
fn bias_is_exact_unpenalized_intercept_and_decision_matches_training_fit() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let n = 11;
    let ks = kernels(n, &mut rng);
    let mut y = random_matrix(n, 1, &mut rng);
    y.data.iter_mut().for_each(|v| *v += 5.0);
    let lambda = 0.3;
    let sol = lp_mkl(
        &ks,
        &y,
        &LpMklParams {
            p: 2.0,
            lambda,
            ..LpMklParams::default()
        },
        &(),
    )
    .unwrap()
    .0;
    let s: f64 = sol.alpha.data.iter().sum();
    assert!(s.abs() < 1e-10);
    // On the training points, the residual of an unpenalized-bias ridge is lambda*alpha.
    let f = sol.decision(&ks, &ks_as_test(&ks)).unwrap();
    for i in 0..n {
        let r = y.get(i, 0) - f.get(i, 0);
        assert!((r - lambda * sol.alpha.get(i, 0)).abs() < 1e-9, "{r}");
    }
    // Shifting the targets shifts only the bias.
    let mut y2 = y.clone();
    y2.data.iter_mut().for_each(|v| *v -= 3.0);
    let sol2 = lp_mkl(
        &ks,
        &y2,
        &LpMklParams {
            p: 2.0,
            lambda,
            ..LpMklParams::default()
        },
        &(),
    )
    .unwrap()
    .0;
    assert!((sol.bias[0] - sol2.bias[0] - 3.0).abs() < 1e-9);
    for (a, b) in sol.theta.iter().zip(&sol2.theta) {
        assert!((a - b).abs() < 1e-9);
    }
}

fn ks_as_test(ks: &[KernelMatrix]) -> Vec<KernelMatrix> {
    ks.to_vec()
}

#[test]
fn primal_weights_reproduce_decision_of_factor_kernels() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let n = 15;
    let x = random_matrix(n, 4, &mut rng);
    let ks: Vec<KernelMatrix> = (0..4).map(|j| KernelMatrix::rank_one(x.col(j))).collect();
    let y = random_matrix(n, 2, &mut rng);
    let sol = lp_mkl(
        &ks,
        &y,
        &LpMklParams {
            p: 4.0 / 3.0,
            lambda: 0.05,
            ..LpMklParams::default()
        },
        &(),
    )
    .unwrap()
    .0;
    let xt = random_matrix(5, 4, &mut rng);
    let test: Vec<KernelMatrix> = (0..4).map(|j| KernelMatrix::rank_one(xt.col(j))).collect();
    let f = sol.decision(&ks, &test).unwrap();
    let w = sol.primal_weights(&ks);
    for i in 0..5 {
        for c in 0..2 {
            let mut v = sol.bias[c];
            for j in 0..4 {
                v += xt.get(i, j) * w[j].as_ref().unwrap().get(0, c);
            }
            assert!((v - f.get(i, c)).abs() < 1e-10);
        }
    }
    // Dense cross kernels give the same decision as the factors.
    let dense_train: Vec<KernelMatrix> = ks
        .iter()
        .map(|k| KernelMatrix::Dense(k.to_dense()))
        .collect();
    let dense_test: Vec<KernelMatrix> = (0..4)
        .map(|j| {
            let mut c = Matrix::zeros(5, n);
            for i in 0..5 {
                for t in 0..n {
                    c.set(i, t, xt.get(i, j) * x.get(t, j));
                }
            }
            KernelMatrix::Dense(c)
        })
        .collect();
    let fd =
        decision_weighted(&dense_train, &dense_test, &sol.theta, &sol.alpha, &sol.bias).unwrap();
    for (a, b) in f.data.iter().zip(&fd.data) {
        assert!((a - b).abs() < 1e-10);
    }
}

#[test]
fn parse_p_accepts_the_usual_values_and_rejects_bad_ones() {
    assert_eq!(parse_p("1").unwrap(), 1.0);
    assert!((parse_p("4/3").unwrap() - 4.0 / 3.0).abs() < 1e-15);
    assert!(parse_p("inf").unwrap().is_infinite());
    assert_eq!(p_label(4.0 / 3.0), "4/3");
    assert_eq!(p_label(f64::INFINITY), "inf");
    assert_eq!(p_label(2.0), "2");
    assert!(parse_p("0.5").is_err());
    assert!(parse_p("x").is_err());
    assert!(parse_p("1/0").unwrap().is_infinite());
}

#[test]
fn bad_inputs_are_errors() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let ks = kernels(5, &mut rng);
    let y = random_matrix(6, 1, &mut rng);
    assert!(lp_mkl(&ks, &y, &LpMklParams::default(), &()).is_err());
    let y = random_matrix(5, 1, &mut rng);
    let bad = LpMklParams {
        p: 0.5,
        ..LpMklParams::default()
    };
    assert!(lp_mkl(&ks, &y, &bad, &()).is_err());
    assert!(lp_mkl(&[], &y, &LpMklParams::default(), &()).is_err());
}

fn names(d: usize) -> Vec<String> {
    (0..d).map(|j| format!("x{j}")).collect()
}

/// The explicit factors of linear and constant kernels reproduce the kernel module's
/// Gram matrices (training and cross), for every normalization.
#[test]
fn explicit_factors_match_kernel_module_grams() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let x = random_matrix(12, 3, &mut rng);
    let xt = random_matrix(4, 3, &mut rng);
    let limit = MemoryLimit::default();
    for spec in [
        "perfeature:linear:norm=variance",
        "perfeature:linear:norm=diag",
        "perfeature:linear:norm=trace",
        "linear",
        "const:norm=trace",
        "rbf",
    ] {
        let specs = vec![spec.parse::<KernelSpec>().unwrap()];
        let fitted = fit_all(&specs, &x, &names(3), 0).unwrap();
        for fk in &fitted {
            let train = train_kernel_matrix(fk, &x, &limit).unwrap();
            let is_factor = matches!(train, KernelMatrix::Factor(_));
            assert_eq!(is_factor, !spec.starts_with("rbf"), "{spec}");
            let want = fk.gram_sym(&x, &limit).unwrap().to_dense();
            for (a, b) in train.to_dense().data.iter().zip(&want.data) {
                assert!((a - b).abs() < 1e-12, "{spec}: {a} vs {b}");
            }
            let test = test_kernel_matrix(fk, &xt, &x, &limit).unwrap();
            let a = random_matrix(12, 2, &mut rng);
            let got = cross_times(&train, &test, &a, 0).unwrap();
            let cross = fk.gram(&xt, &x, &limit).unwrap().to_dense();
            let want = matmul(&cross, &a);
            for (g, w) in got.data.iter().zip(&want.data) {
                assert!((g - w).abs() < 1e-12, "{spec}");
            }
        }
    }
}

#[test]
fn model_predicts_like_the_solver_and_survives_json() {
    let limit = MemoryLimit::default();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let x = random_matrix(30, 3, &mut rng);
    let mut y = Matrix::zeros(30, 2);
    for i in 0..30 {
        y.set(i, 0, x.get(i, 0) * 2.0 + 1.0);
        y.set(i, 1, (x.get(i, 1) * 3.0).sin());
    }
    let specs: Vec<KernelSpec> = ["perfeature:linear:norm=variance", "rbf:norm=variance"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    for p in [1.0, f64::INFINITY] {
        let params = LpMklModelParams {
            lp: LpMklParams {
                p,
                lambda: 0.1,
                ..LpMklParams::default()
            },
            ..LpMklModelParams::default()
        };
        let model = LpMklModel::fit(x.view(), &names(3), &y, &specs, &params, &())
            .unwrap()
            .0;
        assert_eq!(model.kernels().len(), 4);
        // Training rows: residual of the unpenalized-bias ridge is lambda * alpha.
        let f = model.predict(x.view(), &limit).unwrap();
        for i in 0..30 {
            for c in 0..2 {
                let r = y.get(i, c) - f.get(i, c);
                assert!((r - 0.1 * model.alpha.get(i, c)).abs() < 1e-9);
            }
        }
        let json = serde_json::to_string(&model).unwrap();
        let back: LpMklModel = serde_json::from_str(&json).unwrap();
        let xt = random_matrix(5, 3, &mut rng);
        assert_eq!(
            back.predict(xt.view(), &limit).unwrap(),
            model.predict(xt.view(), &limit).unwrap()
        );
        let sol_json = serde_json::to_string(&LpMklParams {
            p,
            ..LpMklParams::default()
        })
        .unwrap();
        let p_back: LpMklParams = serde_json::from_str(&sol_json).unwrap();
        assert_eq!(p_back.p, p);
    }
    let bad = LpMklModel::fit(
        x.view(),
        &names(2),
        &y,
        &specs,
        &LpMklModelParams::default(),
        &(),
    );
    assert!(bad.is_err());
}

// ---------------------------------------------------------------------------------------
// Run contract.

#[test]
fn run_status_is_converged_or_the_iteration_limit() {
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let ks = kernels(12, &mut rng);
    let y = random_matrix(12, 2, &mut rng);
    let params = LpMklParams {
        p: 1.5,
        lambda: 0.1,
        ..LpMklParams::default()
    };
    let (sol, info) = lp_mkl(&ks, &y, &params, &()).unwrap();
    assert_eq!(info.status, RunStatus::Converged);
    assert!(sol.converged);
    assert_eq!(
        (info.unit, info.steps as usize),
        (StepUnit::Iteration, sol.iterations)
    );
    let traced: Vec<f64> = info.trace.iter().map(|t| t.objective).collect();
    assert_eq!(traced, sol.objective);

    let capped = LpMklParams {
        max_iter: 2,
        tol: 0.0,
        ..params.clone()
    };
    let (sol, info) = lp_mkl(&ks, &y, &capped, &()).unwrap();
    assert_eq!(
        (info.status, info.steps, sol.converged),
        (RunStatus::IterationLimit, 2, false)
    );
    // p = inf has nothing to alternate: converged after one solve.
    let inf = LpMklParams {
        p: f64::INFINITY,
        ..params
    };
    let info = lp_mkl(&ks, &y, &inf, &()).unwrap().1;
    assert_eq!((info.status, info.steps), (RunStatus::Converged, 1));
}

/// Rows, targets and kernel specs for the model-level tests.
fn model_problem() -> (Matrix, Matrix, Vec<KernelSpec>) {
    let mut rng = ChaCha8Rng::seed_from_u64(32);
    let x = random_matrix(25, 3, &mut rng);
    let mut y = Matrix::zeros(25, 2);
    for i in 0..25 {
        y.set(i, 0, x.get(i, 0) * 2.0 + 1.0);
        y.set(i, 1, (x.get(i, 1) * 3.0).sin());
    }
    let specs = [
        "perfeature:linear:norm=variance",
        "rbf",
        "bspline",
        "const:norm=trace",
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect();
    (x, y, specs)
}

fn model_params() -> LpMklModelParams {
    LpMklModelParams {
        lp: LpMklParams {
            p: 4.0 / 3.0,
            lambda: 0.1,
            ..LpMklParams::default()
        },
        ..LpMklModelParams::default()
    }
}

#[test]
fn an_observer_stops_the_run_after_the_first_alternation() {
    let stop_after_one = |p: &Progress| {
        assert_eq!((p.unit, p.total), (StepUnit::Iteration, Some(500)));
        assert!(p.objective.is_some());
        if p.step >= 1 {
            Control::Stop
        } else {
            Control::Continue
        }
    };
    let mut rng = ChaCha8Rng::seed_from_u64(33);
    let ks = kernels(12, &mut rng);
    let y = random_matrix(12, 1, &mut rng);
    let params = LpMklParams {
        p: 1.0,
        lambda: 0.1,
        ..LpMklParams::default()
    };
    let (sol, info) = lp_mkl(&ks, &y, &params, &stop_after_one).unwrap();
    assert_eq!(
        (info.status, info.steps, sol.iterations),
        (RunStatus::Cancelled, 1, 1)
    );
    // The weights and coefficients belong together: the coefficients solve the system of
    // the returned weights.
    let alpha = solve_weighted_sum(&ks, &sol.theta, 0.1, true, &center_targets(&y).1).unwrap();
    for (a, b) in alpha.data.iter().zip(&sol.alpha.data) {
        assert!((a - b).abs() < 1e-12);
    }

    let (x, y, specs) = model_problem();
    let (model, info) = LpMklModel::fit(
        x.view(),
        &names(3),
        &y,
        &specs,
        &model_params(),
        &stop_after_one,
    )
    .unwrap();
    assert_eq!(
        (info.status, model.objective.len()),
        (RunStatus::Cancelled, 1)
    );
    model.validate().unwrap();
    let f = model.predict(x.view(), &MemoryLimit::default()).unwrap();
    assert_eq!((f.rows, f.cols), (25, 2));
    assert!(f.data.iter().all(|v| v.is_finite()));
}

#[test]
fn a_stop_flag_set_before_the_run_stops_it_at_the_first_poll() {
    let flag = StopFlag::new();
    flag.stop();
    let (x, y, specs) = model_problem();
    let (model, info) =
        LpMklModel::fit(x.view(), &names(3), &y, &specs, &model_params(), &flag).unwrap();
    assert_eq!((info.status, info.steps), (RunStatus::Cancelled, 0));
    assert!(model.objective.is_empty());
    model.validate().unwrap();
    // No solve yet: the model predicts the mean of each target.
    let f = model.predict(x.view(), &MemoryLimit::default()).unwrap();
    for c in 0..2 {
        let mean = y.col(c).iter().sum::<f64>() / 25.0;
        assert!((0..25).all(|i| (f.get(i, c) - mean).abs() < 1e-12));
    }
}

// ---------------------------------------------------------------------------------------
// Validation of stored models.

#[test]
fn validate_accepts_fitted_models_and_refuses_mangled_copies() {
    let (x, y, specs) = model_problem();
    let (model, _) =
        LpMklModel::fit(x.view(), &names(3), &y, &specs, &model_params(), &()).unwrap();
    model.validate().unwrap();
    let refused = |f: &dyn Fn(&mut LpMklModel)| {
        let mut m = model.clone();
        f(&mut m);
        m.validate().unwrap_err()
    };
    assert!(matches!(
        refused(&|m| {
            m.theta.pop();
        }),
        Error::ShapeMismatch { .. }
    ));
    refused(&|m| {
        m.alpha.data.pop();
    });
    refused(&|m| {
        let (r, c) = (m.alpha.rows, m.alpha.cols);
        (m.alpha.rows, m.alpha.cols) = (c, r);
    });
    refused(&|m| {
        m.bias.push(0.0);
    });
    refused(&|m| {
        m.kernels.pop();
    });
    refused(&|m| m.theta[0] = -1.0);
    refused(&|m| m.alpha.data[0] = f64::NAN);
    refused(&|m| m.p = "0.5".into());
    refused(&|m| {
        m.x_train.cols += 1;
    });
    let mut v = serde_json::to_value(&model).unwrap();
    v["kernels"][0]["features"] = serde_json::json!([3]);
    let bad: LpMklModel = serde_json::from_value(v).unwrap();
    assert!(matches!(bad.validate(), Err(Error::Model { .. })));
}

#[test]
fn predict_never_panics_on_a_model_that_validates() {
    let (x, y, specs) = model_problem();
    let (model, _) =
        LpMklModel::fit(x.view(), &names(3), &y, &specs, &model_params(), &()).unwrap();
    let limit = MemoryLimit::default();
    let v = serde_json::to_value(&model).unwrap();
    let (refused, accepted) = crate::solver::check::mangle::check_copies(
        &v,
        400,
        2,
        LpMklModel::validate,
        |m: &LpMklModel| m.predict(x.view(), &limit),
    );
    assert!(
        refused > 100 && accepted > 10,
        "{refused} refused, {accepted} accepted"
    );
}

/// Slow twin of the quadratic form on a dense kernel (which reads only its lower triangle):
/// `sum_c a_c^T K a_c` by the full double sum.
#[test]
fn the_quadratic_form_matches_the_double_sum() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let n = 11;
    for k in kernels(n, &mut rng) {
        let d = k.to_dense();
        let mut a = random_matrix(n, 3, &mut rng);
        a.set(4, 1, 0.0); // a zero coefficient is skipped
        let mut want = 0.0;
        for c in 0..a.cols {
            for i in 0..n {
                for j in 0..n {
                    want += a.get(i, c) * d.get(i, j) * a.get(j, c);
                }
            }
        }
        let got = k.quad_form(&a);
        assert!(
            (got - want).abs() <= 1e-12 * want.abs().max(1.0),
            "{got} vs {want}"
        );
    }
}

/// One kernel's weight is 1 on every lp sphere: lp-MKL stops after its first solve, with
/// the kernel ridge solution of that kernel.
#[test]
fn one_kernel_is_one_solve() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let n = 10;
    let ks = vec![kernels(n, &mut rng).swap_remove(0)];
    let y = random_matrix(n, 1, &mut rng);
    for init in [None, Some(vec![0.3])] {
        let params = LpMklParams {
            p: 4.0 / 3.0,
            lambda: 0.5,
            init_theta: init,
            ..LpMklParams::default()
        };
        let (sol, info) = lp_mkl(&ks, &y, &params, &()).unwrap();
        assert_eq!(sol.theta, vec![1.0]);
        assert_eq!(sol.iterations, 1);
        assert_eq!(info.status, RunStatus::Converged);
        let want = solve_weighted_sum(&ks, &[1.0], 0.5, true, &center_targets(&y).1).unwrap();
        for (g, w) in sol.alpha.data.iter().zip(&want.data) {
            assert!((g - w).abs() < 1e-12, "{g} vs {w}");
        }
    }
}
