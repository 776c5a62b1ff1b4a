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
        shrinking: true,
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
        shrinking: true,
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

/// A Gaussian kernel on `n` random points of the plane: smooth, so at large C with noisy
/// labels most variables end at a bound.
fn gaussian_kernel(n: usize, gamma: f64, seed: u64) -> (Matrix, Vec<[f64; 2]>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<[f64; 2]> = (0..n)
        .map(|_| [rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)])
        .collect();
    let mut k = Matrix::zeros(n, n);
    for (i, a) in x.iter().enumerate() {
        for (j, b) in x.iter().enumerate() {
            let d = (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2);
            k.set(i, j, (-gamma * d).exp());
        }
    }
    (k, x)
}

fn with_shrinking(shrinking: bool) -> SmoParams {
    SmoParams {
        tol: 1e-9,
        max_iter: None,
        shrinking,
    }
}

/// Decision values on the training rows: `sum_t y_t a_t K(index[t], r) - rho`.
fn decision(pr: &SmoProblem<'_>, sol: &SmoSolution) -> Vec<f64> {
    let n = pr.kernel.rows();
    let mut coef = vec![0.0; n];
    for t in 0..pr.index.len() {
        coef[pr.index[t]] += pr.y[t] * sol.alpha[t];
    }
    (0..n)
        .map(|r| {
            let row = pr.kernel.row(r);
            (0..n).map(|s| row[s] * coef[s]).sum::<f64>() - sol.rho
        })
        .collect()
}

/// Shrinking on and off reach the same point: the objective within 1e-9 relative, the
/// decision values within 1e-6; and most variables end at a bound (shrinking had work).
fn same_with_and_without_shrinking(pr: &SmoProblem<'_>) -> (SmoSolution, SmoSolution) {
    let on = smo(pr, &with_shrinking(true), &()).unwrap();
    let off = smo(pr, &with_shrinking(false), &()).unwrap();
    for sol in [&on, &off] {
        assert_eq!(sol.status, RunStatus::Converged);
        assert!(sol.violation < 1e-9, "violation {}", sol.violation);
    }
    let rel = (on.objective - off.objective).abs() / off.objective.abs().max(1.0);
    assert!(rel < 1e-9, "{} vs {}", on.objective, off.objective);
    let (f_on, f_off) = (decision(pr, &on), decision(pr, &off));
    for (u, v) in f_on.iter().zip(&f_off) {
        assert!((u - v).abs() < 1e-6, "decision {u} vs {v}");
    }
    let at_bound = on
        .alpha
        .iter()
        .zip(&pr.c)
        .filter(|(a, c)| **a <= 0.0 || *a >= c)
        .count();
    assert!(
        at_bound * 2 > on.alpha.len(),
        "{at_bound} of {} at a bound",
        on.alpha.len()
    );
    (on, off)
}

fn noisy_svc<'a>(k: &'a Matrix, x: &[[f64; 2]], c: f64, seed: u64) -> SmoProblem<'a> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = x.len();
    let y: Vec<f64> = x
        .iter()
        .map(|p| {
            let clean = p[0] * p[1] + 0.3 * p[0] > 0.0;
            if clean != rng.gen_bool(0.2) {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    SmoProblem {
        kernel: k.view(),
        index: (0..n).collect(),
        y,
        p: vec![-1.0; n],
        c: vec![c; n],
        start: None,
    }
}

fn noisy_svr<'a>(k: &'a Matrix, x: &[[f64; 2]], c: f64, eps: f64, seed: u64) -> SmoProblem<'a> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = x.len();
    let z: Vec<f64> = x
        .iter()
        .map(|p| (3.0 * p[0]).sin() + p[1] + rng.gen_range(-0.5..0.5))
        .collect();
    let mut p: Vec<f64> = z.iter().map(|z| eps - z).collect();
    p.extend(z.iter().map(|z| eps + z));
    SmoProblem {
        kernel: k.view(),
        index: (0..n).chain(0..n).collect(),
        y: [vec![1.0; n], vec![-1.0; n]].concat(),
        p,
        c: vec![c; 2 * n],
        start: None,
    }
}

#[test]
fn shrinking_reaches_the_same_svc_solution() {
    for (seed, c, gamma) in [(21u64, 100.0, 2.0), (22, 10.0, 5.0), (23, 1000.0, 1.0)] {
        let (k, x) = gaussian_kernel(300, gamma, seed);
        let pr = noisy_svc(&k, &x, c, seed + 1);
        same_with_and_without_shrinking(&pr);
    }
}

#[test]
fn shrinking_reaches_the_same_svr_solution() {
    for (seed, c, eps, gamma) in [(31u64, 100.0, 0.1, 2.0), (32, 10.0, 0.3, 5.0)] {
        let (k, x) = gaussian_kernel(250, gamma, seed);
        let pr = noisy_svr(&k, &x, c, eps, seed + 1);
        same_with_and_without_shrinking(&pr);
    }
}

#[test]
fn a_warm_start_with_shrinking_reaches_the_cold_optimum() {
    // The wrappers' warm start: the solution at other kernel weights (here another width).
    let (k0, x) = gaussian_kernel(300, 1.0, 41);
    let (k1, _) = gaussian_kernel(300, 3.0, 41);
    let first = noisy_svc(&k0, &x, 100.0, 42);
    let prev = smo(&first, &with_shrinking(true), &()).unwrap();
    let cold = noisy_svc(&k1, &x, 100.0, 42);
    let warm = SmoProblem {
        start: Some(prev.alpha.clone()),
        ..cold.clone()
    };
    let (on, off) = same_with_and_without_shrinking(&warm);
    let reference = smo(&cold, &with_shrinking(false), &()).unwrap();
    let rel = (on.objective - reference.objective).abs() / reference.objective.abs();
    assert!(rel < 1e-9, "{} vs {}", on.objective, reference.objective);
    for (u, v) in decision(&warm, &on)
        .iter()
        .zip(&decision(&cold, &reference))
    {
        assert!((u - v).abs() < 1e-6, "decision {u} vs {v}");
    }
    assert!(off.iterations > 0 && on.iterations > 0);
    // SVR too, warm from the solution on the other kernel.
    let first = noisy_svr(&k0, &x, 100.0, 0.1, 43);
    let prev = smo(&first, &with_shrinking(true), &()).unwrap();
    let warm = SmoProblem {
        start: Some(prev.alpha),
        ..noisy_svr(&k1, &x, 100.0, 0.1, 43)
    };
    same_with_and_without_shrinking(&warm);
}

#[test]
fn the_rebuilt_gradient_is_the_gradient() {
    // Shrink at a point with many variables at a bound, iterate on the active set, rebuild:
    // the gradient of every variable equals Q a + p computed afresh.
    let (k, x) = gaussian_kernel(200, 2.0, 51);
    let mut pr = noisy_svc(&k, &x, 100.0, 52);
    let loose = SmoParams {
        tol: 1e-2,
        ..with_shrinking(false)
    };
    pr.start = Some(smo(&pr, &loose, &()).unwrap().alpha);
    let mut st = super::state::State::new(&pr);
    let mut unshrunk = true;
    st.shrink(1e-9, &mut unshrunk);
    let shrunk = st.active;
    assert!(shrunk < 200, "nothing shrunk");
    for _ in 0..50 {
        let pick = st.select();
        let Some((i, j)) = pick.pair else { break };
        st.step(i, j);
    }
    assert_eq!(st.active, shrunk);
    st.reconstruct();
    assert_eq!(st.active, 200);
    let fresh = super::state::State::new(&SmoProblem {
        start: Some(st.alpha()),
        ..pr.clone()
    });
    let (g, g_fresh) = (st.gradient(), fresh.gradient());
    for (v, (x, z)) in g.iter().zip(&g_fresh).enumerate() {
        assert!((x - z).abs() < 1e-9, "gradient of {v}: {x} vs {z}");
    }
    for (pos, &v) in st.var.iter().enumerate() {
        assert!((st.vbar[pos] - fresh.vbar[v]).abs() < 1e-9);
    }
}
