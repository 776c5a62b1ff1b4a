//! The check against slow, obviously-correct twins: cyclic Jacobi rotations written out
//! (every eigenvalue of a small symmetric matrix), the closed form of 2 x 2 eigenvalues,
//! and the minimum of `v^T K v` over random unit vectors; valid kernels' Grams (rank-deficient
//! ones included) pass, sigmoid ones and `[[1, 2], [2, 1]]` do not.

use super::*;
use crate::data::Matrix;
use crate::kernel::{FittedKernel, KernelSpec};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Every eigenvalue of the symmetric `a` by cyclic Jacobi rotations (each zeroes one
/// off-diagonal pair; the diagonal converges to the eigenvalues), on `a / max|a_ij|`.
fn jacobi_eigenvalues(a: &Matrix) -> Vec<f64> {
    let n = a.rows;
    let big = a.data.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if big == 0.0 {
        return vec![0.0; n];
    }
    let mut m: Vec<Vec<f64>> = (0..n)
        .map(|i| a.row(i).iter().map(|v| v / big).collect())
        .collect();
    for _sweep in 0..100 {
        let mut off = 0.0;
        for (i, row) in m.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                if i != j {
                    off += v * v;
                }
            }
        }
        if off < 1e-34 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                if m[p][q] == 0.0 {
                    continue;
                }
                let theta = (m[q][q] - m[p][p]) / (2.0 * m[p][q]);
                let t = if theta.abs() > 1e150 {
                    0.5 / theta
                } else {
                    theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt())
                };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                // m <- J^T m J with J the rotation in the (p, q) plane.
                for row in m.iter_mut() {
                    let (kp, kq) = (row[p], row[q]);
                    row[p] = c * kp - s * kq;
                    row[q] = s * kp + c * kq;
                }
                let (rp, rq) = (m[p].clone(), m[q].clone());
                for k in 0..n {
                    m[p][k] = c * rp[k] - s * rq[k];
                    m[q][k] = s * rp[k] + c * rq[k];
                }
            }
        }
    }
    let mut ev: Vec<f64> = (0..n).map(|i| m[i][i] * big).collect();
    ev.sort_by(f64::total_cmp);
    ev
}

/// The rule on eigenvalues found by the twin.
fn rule(ev: &[f64]) -> bool {
    let lo = ev[0];
    let hi = ev[ev.len() - 1];
    lo >= -PSD_TOL * lo.abs().max(hi.abs())
}

/// `Q diag(lambda) Q^T` with `Q` orthogonal (Gram-Schmidt on random columns).
fn planted(lambda: &[f64], rng: &mut ChaCha8Rng) -> Matrix {
    let n = lambda.len();
    let mut q: Vec<Vec<f64>> = Vec::new();
    while q.len() < n {
        let mut v: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        for _ in 0..2 {
            for u in &q {
                let d: f64 = u.iter().zip(&v).map(|(a, b)| a * b).sum();
                for (x, y) in v.iter_mut().zip(u) {
                    *x -= d * y;
                }
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm > 1e-3 {
            q.push(v.iter().map(|x| x / norm).collect());
        }
    }
    let mut k = Matrix::zeros(n, n);
    for i in 0..n {
        for j in 0..n {
            let v: f64 = (0..n).map(|r| q[r][i] * lambda[r] * q[r][j]).sum();
            k.set(i, j, v);
        }
    }
    symmetrize(&mut k);
    k
}

fn symmetrize(k: &mut Matrix) {
    for i in 0..k.rows {
        for j in 0..i {
            let v = 0.5 * (k.get(i, j) + k.get(j, i));
            k.set(i, j, v);
            k.set(j, i, v);
        }
    }
}

fn lim() -> MemoryLimit {
    MemoryLimit::default()
}

#[test]
fn psd_extreme_eigenvalues_match_jacobi_on_random_symmetric_matrices() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for case in 0..300 {
        let n = 1 + case % 8;
        let mut k = Matrix::zeros(n, n);
        for v in k.data.iter_mut() {
            *v = rng.gen_range(-1.0..1.0);
        }
        symmetrize(&mut k);
        let ev = jacobi_eigenvalues(&k);
        let (lo, hi) = extreme_eigenvalues(k.view(), &lim()).unwrap().unwrap();
        let scale = ev[0].abs().max(ev[n - 1].abs());
        assert!(
            (lo - ev[0]).abs() <= 1e-12 * scale,
            "{case}: {lo} vs {}",
            ev[0]
        );
        assert!(
            (hi - ev[n - 1]).abs() <= 1e-12 * scale,
            "{case}: {hi} vs {}",
            ev[n - 1]
        );
        assert_eq!(check_psd(k.view(), "k").is_ok(), rule(&ev), "case {case}");
    }
}

#[test]
fn psd_verdict_matches_jacobi_around_the_tolerance_at_every_scale() {
    // Planted spectra: positive, rank-deficient (zeros), and a smallest eigenvalue a factor
    // f of the tolerance below zero (f < 1 passes, f > 1 fails), at scales 1e-200 to 1e200.
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let mut seen = [0usize; 2];
    for case in 0..400 {
        let n = 2 + case % 7;
        let scale = 10f64.powi(rng.gen_range(-200..=200));
        let mut lambda: Vec<f64> = (0..n).map(|_| rng.gen_range(0.0..1.0)).collect();
        lambda[0] = 1.0;
        match case % 4 {
            0 => {}
            1 => lambda[n - 1] = 0.0,
            _ => {
                let f = [0.1, 0.5, 2.0, 10.0, 1e3, 1e6][rng.gen_range(0..6)];
                lambda[n - 1] = -f * PSD_TOL;
            }
        }
        let lambda: Vec<f64> = lambda.iter().map(|l| l * scale).collect();
        let k = planted(&lambda, &mut rng);
        let ev = jacobi_eigenvalues(&k);
        let want = rule(&ev);
        seen[want as usize] += 1;
        let got = check_psd(k.view(), "planted");
        assert_eq!(
            got.is_ok(),
            want,
            "case {case}: {lambda:?}, twin {ev:?}: {got:?}"
        );
        // The twin agrees with the planted spectrum (the construction is accurate).
        let mut planted_sorted = lambda.clone();
        planted_sorted.sort_by(f64::total_cmp);
        for (a, b) in ev.iter().zip(&planted_sorted) {
            assert!((a - b).abs() <= 1e-13 * scale, "case {case}: {a} vs {b}");
        }
    }
    assert!(seen[0] > 50 && seen[1] > 50, "{seen:?}");
}

#[test]
fn psd_two_by_two_eigenvalues_by_formula_and_random_vectors() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for case in 0..500 {
        let (a, b, c) = (
            rng.gen_range(-2.0..2.0),
            rng.gen_range(-2.0..2.0),
            rng.gen_range(-2.0..2.0),
        );
        let k = Matrix::from_vec(2, 2, vec![a, b, b, c]);
        let mid = 0.5 * (a + c);
        let rad = (0.25 * (a - c) * (a - c) + b * b).sqrt();
        let (lo, hi) = extreme_eigenvalues(k.view(), &lim()).unwrap().unwrap();
        assert!((lo - (mid - rad)).abs() < 1e-14 && (hi - (mid + rad)).abs() < 1e-14);
        // Brute force: the smallest v^T K v over unit vectors on a fine circle is the
        // smallest eigenvalue.
        let brute = (0..20_000)
            .map(|t| {
                let phi = std::f64::consts::PI * t as f64 / 20_000.0;
                let (x, y) = (phi.cos(), phi.sin());
                a * x * x + 2.0 * b * x * y + c * y * y
            })
            .fold(f64::INFINITY, f64::min);
        assert!((brute - lo).abs() < 1e-6, "case {case}: {brute} vs {lo}");
        assert_eq!(
            check_psd(k.view(), "k").is_ok(),
            rule(&[mid - rad, mid + rad]),
            "case {case}"
        );
    }
}

#[test]
fn psd_indefinite_three_by_three_found_by_random_unit_vectors() {
    // The verdict against the brute-force minimum of v^T K v over many random unit vectors,
    // on matrices whose smallest eigenvalue is far from the tolerance.
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut fails = 0;
    for case in 0..200 {
        let lambda = [
            rng.gen_range(0.5..2.0),
            rng.gen_range(0.0..1.0),
            if case % 2 == 0 {
                rng.gen_range(-1.0..-0.05)
            } else {
                rng.gen_range(0.0..0.5)
            },
        ];
        let k = planted(&lambda, &mut rng);
        let brute = (0..20_000)
            .map(|_| {
                let v: Vec<f64> = (0..3).map(|_| rng.gen_range(-1.0..1.0)).collect();
                let vv: f64 = v.iter().map(|x| x * x).sum();
                let q: f64 = (0..3)
                    .map(|i| v[i] * (0..3).map(|j| k.get(i, j) * v[j]).sum::<f64>())
                    .sum();
                q / vv
            })
            .fold(f64::INFINITY, f64::min);
        let ok = check_psd(k.view(), "k").is_ok();
        assert_eq!(ok, brute >= -1e-12, "case {case}: brute {brute}");
        fails += usize::from(!ok);
    }
    assert_eq!(fails, 100);
}

#[test]
fn psd_message_gives_the_eigenvalues_and_the_remedy() {
    let k = Matrix::from_vec(2, 2, vec![1.0, 2.0, 2.0, 1.0]);
    let err = check_psd(k.view(), "kernel 2 (sigmoid)").unwrap_err();
    assert!(matches!(err, Error::Data(_)), "{err:?}");
    let msg = err.to_string();
    for want in [
        "kernel 2 (sigmoid) is not positive semidefinite",
        "smallest eigenvalue -1.000 (largest 3.000)",
        "no unique optimum",
        "add c*I to it with c >= 1.000",
    ] {
        assert!(msg.contains(want), "{want:?} not in {msg}");
    }
    // Scale does not matter: tiny and huge indefinite matrices fail, huge PSD ones pass.
    for s in [1e-300, 1e-8, 1e8, 1e300] {
        let ks = Matrix::from_vec(2, 2, k.data.iter().map(|v| v * s).collect());
        assert!(check_psd(ks.view(), "k").is_err(), "{s}");
        let p = Matrix::from_vec(2, 2, vec![2.0 * s, s, s, 2.0 * s]);
        assert!(check_psd(p.view(), "k").is_ok(), "{s}");
    }
    // Negative definite, a negative 1 x 1, a zero off-diagonal pair on a zero diagonal.
    for m in [
        Matrix::from_vec(2, 2, vec![-1.0, 0.0, 0.0, -2.0]),
        Matrix::from_vec(1, 1, vec![-1e-3]),
        Matrix::from_vec(2, 2, vec![0.0, 1.0, 1.0, 0.0]),
    ] {
        assert!(check_psd(m.view(), "k").is_err(), "{m:?}");
    }
    // Zero, empty, 1 x 1 zero and identity pass.
    for m in [
        Matrix::zeros(5, 5),
        Matrix::zeros(0, 0),
        Matrix::zeros(1, 1),
        Matrix::from_vec(2, 2, vec![1.0, 0.0, 0.0, 1.0]),
    ] {
        assert!(check_psd(m.view(), "k").is_ok(), "{m:?}");
    }
    assert_eq!(
        extreme_eigenvalues(Matrix::zeros(0, 0).view(), &lim()).unwrap(),
        None
    );
}

#[test]
fn psd_bad_shapes_values_and_memory_are_refused() {
    let err = check_psd(Matrix::zeros(3, 2).view(), "kernel 1 (x)").unwrap_err();
    assert!(
        matches!(
            err,
            Error::ShapeMismatch {
                expected: 3,
                found: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("kernel 1 (x)"), "{err}");
    let mut k = Matrix::zeros(3, 3);
    k.set(2, 1, f64::NAN);
    let msg = check_psd(k.view(), "kernel 0 (K0)")
        .unwrap_err()
        .to_string();
    assert!(msg.contains("kernel 0 (K0): entry (2, 1) is NaN"), "{msg}");
    k.set(2, 1, f64::INFINITY);
    assert!(check_psd(k.view(), "k").is_err());
    let big = Matrix::zeros(200, 200);
    let err = check_psd_with(
        big.view(),
        "kernel 3 (rbf)",
        &MemoryLimit { bytes: 100_000 },
    )
    .unwrap_err();
    assert!(matches!(err, Error::Memory { .. }), "{err}");
    assert!(
        err.to_string().contains("kernel 3 (rbf) (200 x 200)"),
        "{err}"
    );
    assert!(check_psd_with(big.view(), "k", &MemoryLimit { bytes: 1 << 20 }).is_ok());
}

#[test]
fn psd_message_numbers_have_four_significant_digits() {
    for (v, want) in [
        (-1.0, "-1.000"),
        (-0.999_999_999_9, "-1.000"),
        (41.2, "41.20"),
        (99.999_99, "100.0"),
        (0.0083, "0.008300"),
        (12345.6, "12346"),
        (-2e-9, "-2.000e-9"),
        (3e7, "3.000e7"),
        (0.0, "0"),
    ] {
        assert_eq!(sig(v), want, "{v}");
    }
}

fn random(n: usize, d: usize, seed: u64) -> Matrix {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Matrix::from_vec(n, d, (0..n * d).map(|_| rng.gen_range(-1.5..2.0)).collect())
}

#[test]
fn psd_grams_of_valid_kernels_pass_rank_deficient_ones_included() {
    // Low-rank Grams (linear on 2 features: rank 2 of 300; a degree-2 polynomial on 2
    // features: rank 6; a very wide RBF: numerically rank-deficient; duplicated rows) have
    // eigenvalues at round-off level on both sides of zero, and must pass.
    let narrow = random(300, 2, 5);
    let offset = Matrix::from_vec(
        300,
        2,
        narrow.data.iter().map(|v| 1e3 + v).collect(), // far from the origin
    );
    let mut dup = random(150, 4, 6);
    let copy = dup.data.clone();
    dup.data.extend_from_slice(&copy);
    dup.rows = 300;
    let wide = random(300, 8, 7);
    let cases: [(&str, &Matrix); 9] = [
        ("linear", &narrow),
        ("linear", &offset),
        ("poly:degree=2,offset=1", &narrow),
        ("poly:degree=3,offset=0", &offset),
        ("rbf:sigma2=1e6", &wide),
        ("rbf", &dup),
        ("rbf:sigma2=0.01", &wide),
        ("product(linear*rbf)", &narrow),
        ("linear:norm=diag", &wide),
    ];
    for (s, x) in cases {
        let spec: KernelSpec = s.parse().unwrap();
        let k = FittedKernel::fit(&spec, x, &[], 0).unwrap();
        let g = k.gram_sym(x, &lim()).unwrap().to_dense();
        check_psd(g.view(), s).unwrap_or_else(|e| panic!("{s}: {e}"));
        // The twin agrees that the negative part is round-off only.
        let (lo, hi) = extreme_eigenvalues(g.view(), &lim()).unwrap().unwrap();
        assert!(lo >= -1e-12 * hi, "{s}: {lo} vs {hi}");
    }
}

#[test]
fn psd_sigmoid_kernel_matrices_fail() {
    // tanh(gamma x.y + c0) is not a kernel for these settings: its Gram on random rows is
    // indefinite.
    let x = random(200, 5, 8);
    for (gamma, c0) in [(0.2, 1.0), (1.0, 0.0), (0.2, -1.0)] {
        let mut k = Matrix::zeros(200, 200);
        for i in 0..200 {
            for j in 0..200 {
                let d: f64 = x.row(i).iter().zip(x.row(j)).map(|(a, b)| a * b).sum();
                k.set(i, j, (gamma * d + c0).tanh());
            }
        }
        let msg = check_psd(k.view(), "kernel 0 (sigmoid)")
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("is not positive semidefinite: smallest eigenvalue -"),
            "{msg}"
        );
    }
}
