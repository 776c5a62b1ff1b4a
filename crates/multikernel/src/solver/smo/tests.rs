//! SMO against its slow twin: the exact optimum of the small dual found by enumerating
//! every face of the box (each variable at 0, at C or free) and solving the face's
//! equality-constrained problem through its KKT system.

use super::*;
use crate::data::Matrix;
use crate::run::RunStatus;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `A A^T + ridge I` for a random `n x 3` matrix A: positive definite.
fn random_kernel(n: usize, seed: u64) -> Matrix {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let a: Vec<f64> = (0..n * 3).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let mut k = Matrix::zeros(n, n);
    for i in 0..n {
        for j in 0..n {
            let v: f64 = (0..3).map(|c| a[i * 3 + c] * a[j * 3 + c]).sum();
            k.set(i, j, v + if i == j { 0.1 } else { 0.0 });
        }
    }
    k
}

/// Gaussian elimination with partial pivoting; `None` when singular.
#[allow(clippy::needless_range_loop)]
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        for r in col + 1..n {
            let f = a[r][col] / a[col][col];
            for c in col..n {
                a[r][c] -= f * a[col][c];
            }
            b[r] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|c| a[r][c] * x[c]).sum();
        x[r] = (b[r] - s) / a[r][r];
    }
    Some(x)
}

/// The exact minimum of the dual and its minimizer, by enumerating the faces.
fn brute_force(pr: &SmoProblem<'_>) -> (f64, Vec<f64>) {
    let m = pr.index.len();
    let q = |t: usize, s: usize| pr.y[t] * pr.y[s] * pr.kernel.row(pr.index[t])[pr.index[s]];
    let obj = |a: &[f64]| {
        let mut v = 0.0;
        for t in 0..m {
            v += pr.p[t] * a[t];
            for s in 0..m {
                v += 0.5 * a[t] * q(t, s) * a[s];
            }
        }
        v
    };
    let mut best = (f64::INFINITY, vec![]);
    for code in 0..3usize.pow(m as u32) {
        let state: Vec<usize> = (0..m).map(|t| (code / 3usize.pow(t as u32)) % 3).collect();
        let mut a: Vec<f64> = (0..m)
            .map(|t| if state[t] == 1 { pr.c[t] } else { 0.0 })
            .collect();
        let free: Vec<usize> = (0..m).filter(|&t| state[t] == 2).collect();
        let r: f64 = -(0..m)
            .filter(|&t| state[t] != 2)
            .map(|t| pr.y[t] * a[t])
            .sum::<f64>();
        if free.is_empty() {
            if r.abs() > 1e-12 {
                continue;
            }
        } else {
            let f = free.len();
            let mut mat = vec![vec![0.0; f + 1]; f + 1];
            let mut rhs = vec![0.0; f + 1];
            for (u, &t) in free.iter().enumerate() {
                for (v, &s) in free.iter().enumerate() {
                    mat[u][v] = q(t, s);
                }
                mat[u][f] = pr.y[t];
                mat[f][u] = pr.y[t];
                rhs[u] = -pr.p[t]
                    - (0..m)
                        .filter(|&s| state[s] != 2)
                        .map(|s| q(t, s) * a[s])
                        .sum::<f64>();
            }
            rhs[f] = r;
            let Some(x) = solve(mat, rhs) else { continue };
            for (u, &t) in free.iter().enumerate() {
                a[t] = x[u];
            }
            if free
                .iter()
                .any(|&t| a[t] < -1e-12 || a[t] > pr.c[t] + 1e-12)
            {
                continue;
            }
        }
        let v = obj(&a);
        if v < best.0 {
            best = (v, a);
        }
    }
    best
}

fn tight() -> SmoParams {
    SmoParams {
        tol: 1e-10,
        max_iter: None,
    }
}

#[test]
fn svc_reaches_the_enumerated_optimum() {
    for (seed, c) in [(1u64, 1.0), (2, 0.3), (3, 10.0), (4, 0.05)] {
        let n = 8;
        let k = random_kernel(n, seed);
        let mut rng = ChaCha8Rng::seed_from_u64(seed + 100);
        let mut y: Vec<f64> = (0..n)
            .map(|_| if rng.gen_bool(0.5) { 1.0 } else { -1.0 })
            .collect();
        y[0] = 1.0;
        y[1] = -1.0;
        let pr = SmoProblem {
            kernel: k.view(),
            index: (0..n).collect(),
            y: y.clone(),
            p: vec![-1.0; n],
            c: vec![c; n],
            start: None,
        };
        let (best, a) = brute_force(&pr);
        let sol = smo(&pr, &tight(), &()).unwrap();
        assert_eq!(sol.status, RunStatus::Converged);
        assert!(
            (sol.objective - best).abs() < 1e-9 * best.abs().max(1.0),
            "{} vs {best}",
            sol.objective
        );
        for (x, z) in sol.alpha.iter().zip(&a) {
            assert!((x - z).abs() < 1e-5, "alpha {x} vs {z}");
        }
        // The duality gap closes: the bias is optimal too.
        let fit = svc(k.view(), &y, c, &tight(), &()).unwrap();
        assert!(fit.gap.abs() < 1e-7, "gap {}", fit.gap);
    }
}

#[test]
fn svr_reaches_the_enumerated_optimum() {
    for (seed, c, eps) in [(5u64, 1.0, 0.1), (6, 5.0, 0.0), (7, 0.2, 0.3)] {
        let n = 4; // 8 dual variables, 3^8 faces
        let k = random_kernel(n, seed);
        let mut rng = ChaCha8Rng::seed_from_u64(seed + 200);
        let z: Vec<f64> = (0..n).map(|_| rng.gen_range(-2.0..2.0)).collect();
        let mut p: Vec<f64> = z.iter().map(|z| eps - z).collect();
        p.extend(z.iter().map(|z| eps + z));
        let pr = SmoProblem {
            kernel: k.view(),
            index: (0..n).chain(0..n).collect(),
            y: [vec![1.0; n], vec![-1.0; n]].concat(),
            p,
            c: vec![c; 2 * n],
            start: None,
        };
        let (best, _) = brute_force(&pr);
        let fit = svr(k.view(), &z, c, eps, &tight(), &()).unwrap();
        let sol = &fit.solution;
        assert!(
            (sol.objective - best).abs() < 1e-9 * best.abs().max(1.0),
            "{} vs {best}",
            sol.objective
        );
        assert!(fit.gap.abs() < 1e-7, "gap {}", fit.gap);
    }
}

#[test]
fn a_warm_start_reaches_the_same_optimum_in_fewer_iterations() {
    let n = 40;
    let k = random_kernel(n, 9);
    let y: Vec<f64> = (0..n)
        .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
        .collect();
    let cold = svc(k.view(), &y, 1.0, &tight(), &()).unwrap();
    let pr = SmoProblem {
        kernel: k.view(),
        index: (0..n).collect(),
        y: y.clone(),
        p: vec![-1.0; n],
        c: vec![1.0; n],
        start: Some(cold.solution.alpha.clone()),
    };
    let warm = smo(&pr, &tight(), &()).unwrap();
    assert!(warm.iterations < cold.solution.iterations / 2 + 1);
    assert!((warm.objective - cold.solution.objective).abs() < 1e-10);
}

#[test]
fn limits_and_bad_input_are_a_status_or_a_clear_error() {
    let n = 30;
    let k = random_kernel(n, 11);
    let y: Vec<f64> = (0..n)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let capped = SmoParams {
        tol: 1e-12,
        max_iter: Some(3),
    };
    let fit = svc(k.view(), &y, 100.0, &capped, &()).unwrap();
    assert_eq!(fit.solution.status, RunStatus::IterationLimit);
    assert_eq!(fit.solution.iterations, 3);
    let err = |r: crate::error::Result<SvmFit>| r.unwrap_err().to_string();
    assert!(err(svc(k.view(), &y, 0.0, &tight(), &())).contains("C = 0"));
    assert!(err(svc(k.view(), &y, -1.0, &tight(), &())).contains("positive"));
    assert!(err(svc(k.view(), &y[..5], 1.0, &tight(), &())).contains("n x n"));
    let mut bad = k.clone();
    bad.set(2, 3, f64::NAN);
    assert!(err(svc(bad.view(), &y, 1.0, &tight(), &())).contains("non-finite"));
    assert!(err(svr(k.view(), &vec![0.0; n], 1.0, -0.1, &tight(), &())).contains("epsilon"));
    let stop = crate::run::StopFlag::new();
    stop.stop();
    let fit = svc(k.view(), &y, 1.0, &tight(), &stop).unwrap();
    assert_eq!(fit.solution.status, RunStatus::Cancelled);
}
