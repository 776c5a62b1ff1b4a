//! The wrappers against their slow twins: `J(d)` on a grid over the simplex (each point an
//! exact SVM solve), finite differences of `J` for the gradient, and the two methods against
//! each other.

use super::gauss_seidel::closed_form_weights;
use super::simplemkl::descent_direction;
use super::svm_inner::{SvmInner, SvmTask};
use super::*;
use crate::data::Matrix;
use crate::run::StopFlag;
use crate::solver::smo::SmoParams;
use rand::{Rng, SeedableRng};

/// Rows whose label is the sign of `sin(3 x_0)` (flipped for 5% of them), with four noise
/// features; kernels: a Gaussian on x_0 alone, a Gaussian on the noise, the linear kernel of
/// the noise.
fn one_kernel_table(n: usize, seed: u64) -> (Vec<Matrix>, Vec<f64>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<[f64; 5]> = (0..n)
        .map(|_| std::array::from_fn(|_| rng.gen_range(-1.0..1.0)))
        .collect();
    let y: Vec<f64> = x
        .iter()
        .map(|r| {
            let s = if (3.0 * r[0]).sin() >= 0.0 { 1.0 } else { -1.0 };
            if rng.gen_bool(0.05) {
                -s
            } else {
                s
            }
        })
        .collect();
    let gram = |f: &dyn Fn(&[f64; 5], &[f64; 5]) -> f64| {
        let mut k = Matrix::zeros(n, n);
        for i in 0..n {
            for j in 0..n {
                k.set(i, j, f(&x[i], &x[j]));
            }
        }
        k
    };
    let kernels = vec![
        gram(&|a, b| (-(a[0] - b[0]).powi(2) * 4.0).exp()),
        gram(&|a, b| {
            let d: f64 = (1..5).map(|j| (a[j] - b[j]).powi(2)).sum();
            (-d / 4.0).exp()
        }),
        gram(&|a, b| (1..5).map(|j| a[j] * b[j]).sum::<f64>() / 4.0),
    ];
    (kernels, y)
}

fn tight() -> SmoParams {
    SmoParams {
        tol: 1e-8,
        ..SmoParams::default()
    }
}

fn j_at(kernels: &[Matrix], task: &SvmTask, c: f64, d: &[f64]) -> (f64, Vec<f64>) {
    let mut inner = SvmInner::new(kernels, task.clone(), c, tight()).unwrap();
    let s = inner.solve(d, None, &()).unwrap();
    (s.objective, s.gradient)
}

fn no_hook<S>() -> impl FnMut(&WrapperStep, &InnerSolve<S>) -> Control {
    |_, _| Control::Continue
}

/// The gradient of J is -1/2 beta^T K_m beta: central differences of J along each
/// coordinate (J off the simplex is defined by the same SVM with kernel sum d_m K_m).
#[test]
fn gradient_matches_finite_differences() {
    let (kernels, y) = one_kernel_table(40, 1);
    for task in [
        SvmTask::Binary(y.clone()),
        SvmTask::Regression {
            z: y.iter().map(|v| v * 0.7 + 0.1).collect(),
            epsilon: 0.1,
        },
    ] {
        let d = [0.5, 0.3, 0.2];
        let (_, g) = j_at(&kernels, &task, 2.0, &d);
        for m in 0..3 {
            let h = 1e-5;
            let mut dp = d;
            dp[m] += h;
            let mut dm = d;
            dm[m] -= h;
            let fd =
                (j_at(&kernels, &task, 2.0, &dp).0 - j_at(&kernels, &task, 2.0, &dm).0) / (2.0 * h);
            assert!(
                (fd - g[m]).abs() < 1e-4 * (1.0 + g[m].abs()),
                "kernel {m}: finite difference {fd}, gradient {}",
                g[m]
            );
        }
    }
}

/// The reduced-gradient direction keeps the weights on the simplex (sums to zero, does
/// not push a zero weight below zero) and descends.
#[test]
fn descent_direction_is_feasible_and_descends() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for _ in 0..200 {
        let m = rng.gen_range(2..6);
        let mut d: Vec<f64> = (0..m)
            .map(|_| {
                if rng.gen_bool(0.3) {
                    0.0
                } else {
                    rng.gen_range(0.0..1.0)
                }
            })
            .collect();
        d[0] += 0.1;
        let s: f64 = d.iter().sum();
        d.iter_mut().for_each(|v| *v /= s);
        let g: Vec<f64> = (0..m).map(|_| -rng.gen_range(0.0..5.0)).collect();
        if let Some((dir, mu)) = descent_direction(&d, &g) {
            assert!(dir.iter().sum::<f64>().abs() < 1e-12);
            assert!(d[mu] >= d.iter().cloned().fold(0.0, f64::max));
            for k in 0..m {
                assert!(d[k] > 0.0 || dir[k] >= 0.0, "{d:?} {dir:?}");
            }
            let slope: f64 = dir.iter().zip(&g).map(|(a, b)| a * b).sum();
            assert!(slope < 0.0, "slope {slope}: {d:?} {g:?} {dir:?}");
        }
    }
}

/// SimpleMKL and Gauss-Seidel reach the minimum of J over the simplex found by a grid of
/// exact solves (step 1/20; within their gap), and agree with each other; the weight goes to the kernel the
/// labels depend on.
#[test]
fn wrappers_reach_the_grid_minimum_and_find_the_informative_kernel() {
    let (kernels, y) = one_kernel_table(80, 2);
    let c = 1.0;
    let task = SvmTask::Binary(y);
    let mut grid_min = f64::INFINITY;
    let steps = 20;
    for a in 0..=steps {
        for b in 0..=steps - a {
            let d = [
                a as f64 / steps as f64,
                b as f64 / steps as f64,
                (steps - a - b) as f64 / steps as f64,
            ];
            grid_min = grid_min.min(j_at(&kernels, &task, c, &d).0);
        }
    }
    let params = WrapperParams {
        tol: 1e-4,
        max_iter: 500,
        ..WrapperParams::default()
    };
    let mut results = Vec::new();
    for method in [WrapperMethod::SimpleMkl, WrapperMethod::GaussSeidel] {
        let mut inner = SvmInner::new(&kernels, task.clone(), c, tight()).unwrap();
        let r = match method {
            WrapperMethod::SimpleMkl => simplemkl(&mut inner, &params, &(), &mut no_hook()),
            WrapperMethod::GaussSeidel => gauss_seidel(&mut inner, &params, &(), &mut no_hook()),
        }
        .unwrap();
        // The MKL duality gap bounds J - min J: at most tol relative at convergence.
        let j = r.solve.objective;
        let gap = r.steps.last().unwrap().gap;
        assert!(gap <= params.tol, "{method:?}: gap {gap}");
        assert!(
            j <= grid_min + params.tol * j.abs(),
            "{method:?}: J {j} above the grid's minimum {grid_min}"
        );
        assert!((r.weights.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(r.weights.iter().all(|w| *w >= 0.0));
        assert!(
            r.weights[0] > 0.8,
            "{method:?}: weights {:?} (status {:?})",
            r.weights,
            r.run.status
        );
        assert_eq!(r.run.status, RunStatus::Converged, "{method:?}");
        // J never rises along the accepted iterates (up to the solver's tolerance).
        for w in r.steps.windows(2) {
            assert!(w[1].objective <= w[0].objective + 1e-6 * w[0].objective.abs());
        }
        results.push(j);
    }
    assert!(
        (results[0] - results[1]).abs() < 1e-3 * results[0].abs(),
        "{results:?}"
    );
}

/// Multiclass one-vs-rest shares one d: J and its gradient are sums over the machines.
#[test]
fn one_vs_rest_sums_the_machines() {
    let (kernels, y) = one_kernel_table(45, 3);
    let classes: Vec<usize> = y
        .iter()
        .enumerate()
        .map(|(i, v)| if *v > 0.0 { i % 2 } else { 2 })
        .collect();
    let d = [0.2, 0.5, 0.3];
    let (j, g) = j_at(
        &kernels,
        &SvmTask::OneVsRest {
            classes: classes.clone(),
            k: 3,
        },
        1.0,
        &d,
    );
    let mut js = 0.0;
    let mut gs = [0.0; 3];
    for class in 0..3 {
        let yb: Vec<f64> = classes
            .iter()
            .map(|&l| if l == class { 1.0 } else { -1.0 })
            .collect();
        let (jc, gc) = j_at(&kernels, &SvmTask::Binary(yb), 1.0, &d);
        js += jc;
        for m in 0..3 {
            gs[m] += gc[m];
        }
    }
    assert!((j - js).abs() < 1e-9 * js.abs());
    for m in 0..3 {
        assert!((g[m] - gs[m]).abs() < 1e-9 * (1.0 + gs[m].abs()));
    }
}

#[test]
fn closed_form_weights_are_normalized_block_norms() {
    let d = [0.5, 0.25, 0.25, 0.0];
    let g = [-2.0, -8.0, -0.5, -3.0];
    // ||w_m|| = d_m sqrt(-2 g_m): 0.5 * 2, 0.25 * 4, 0.25 * 1, 0.
    let w = closed_form_weights(&d, &g).unwrap();
    let expect = [1.0, 1.0, 0.25, 0.0].map(|v| v / 2.25);
    for (a, b) in w.iter().zip(expect) {
        assert!((a - b).abs() < 1e-12);
    }
    assert!(closed_form_weights(&d, &[0.0; 4]).is_none());
}

/// Bad settings and inputs are errors naming the problem; caps and stops are statuses.
#[test]
fn bad_input_errors_and_statuses() {
    let (kernels, y) = one_kernel_table(20, 4);
    let task = SvmTask::Binary(y.clone());
    for c in [0.0, -1.0, f64::NAN] {
        assert!(matches!(
            SvmInner::new(&kernels, task.clone(), c, tight()),
            Err(Error::InvalidParameter { name, .. }) if name == "C"
        ));
    }
    assert!(matches!(
        SvmInner::new(&[], task.clone(), 1.0, tight()),
        Err(Error::InvalidParameter { name, .. }) if name == "kernels"
    ));
    let mut bad = kernels.clone();
    bad[1].set(3, 4, f64::NAN);
    let e = SvmInner::new(&bad, task.clone(), 1.0, tight())
        .err()
        .unwrap();
    assert!(e.to_string().contains("kernel matrix 1"), "{e}");
    assert!(SvmInner::new(&kernels, SvmTask::Binary(vec![1.0; 19]), 1.0, tight()).is_err());
    let mut inner = SvmInner::new(&kernels, task.clone(), 1.0, tight()).unwrap();
    let params = WrapperParams {
        start: Some(vec![1.0, -1.0, 1.0]),
        ..WrapperParams::default()
    };
    assert!(simplemkl(&mut inner, &params, &(), &mut no_hook()).is_err());
    // One outer iteration at most: the cap is a status.
    let params = WrapperParams {
        tol: 1e-12,
        max_iter: 1,
        ..WrapperParams::default()
    };
    let r = gauss_seidel(&mut inner, &params, &(), &mut no_hook()).unwrap();
    assert_eq!(r.run.status, RunStatus::IterationLimit);
    // A stop before the start: the first solve's model, cancelled.
    let flag = StopFlag::new();
    flag.stop();
    let r = simplemkl(&mut inner, &WrapperParams::default(), &flag, &mut no_hook()).unwrap();
    assert_eq!(r.run.status, RunStatus::Cancelled);
}
