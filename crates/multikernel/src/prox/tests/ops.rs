//! Elementary operators: Alg. 2, Alg. 4, the scalar l2,q step, soft threshold, ball projection.

use super::brute::{brute_minimize, golden, max_abs_diff, norm2};
use super::kkt::check_weighted_sq_l1;
use crate::prox::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// Random vector of random scale with some exact zeros and repeated magnitudes.
fn random_vec(rng: &mut ChaCha8Rng) -> Vec<f64> {
    let n = rng.gen_range(1..=12);
    let scale = 10f64.powf(rng.gen_range(-4.0..4.0));
    let mut x: Vec<f64> = (0..n)
        .map(|_| {
            scale * {
                let v: f64 = StandardNormal.sample(rng);
                v
            }
        })
        .collect();
    for i in 0..n {
        match rng.gen_range(0..10) {
            0 => x[i] = 0.0,
            1 if i > 0 => x[i] = -x[i - 1],
            _ => {}
        }
    }
    x
}

fn random_tau(rng: &mut ChaCha8Rng, x: &[f64]) -> f64 {
    let taus = [0.0, 1e-14, 1e-8, 1e-2, 1.0, 1e2, 1e8, 1e14];
    if rng.gen_bool(0.3) {
        taus[rng.gen_range(0..taus.len())]
    } else {
        10f64.powf(rng.gen_range(-4.0..4.0)) / (1.0 + norm2(x))
    }
}

/// Independent twin of the weighted squared l1 prox: `z_i = soft(x_i, d_i T)` with `T` the
/// root of the decreasing `T - tau sum_i d_i (|x_i| - d_i T)_+`, found by bisection.
fn weighted_sq_l1_by_bisection(x: &[f64], d: &[f64], tau: f64) -> Vec<f64> {
    let h = |t: f64| {
        t - tau
            * x.iter()
                .zip(d)
                .map(|(v, w)| w * (v.abs() - w * t).max(0.0))
                .sum::<f64>()
    };
    let mut lo = 0.0;
    let mut hi = x
        .iter()
        .zip(d)
        .filter(|(_, w)| **w > 0.0)
        .map(|(v, w)| v.abs() / w)
        .fold(0.0, f64::max);
    for _ in 0..300 {
        let mid = 0.5 * (lo + hi);
        if h(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t = 0.5 * (lo + hi);
    x.iter().zip(d).map(|(v, w)| soft(*v, w * t)).collect()
}

#[test]
fn soft_threshold_matches_definition() {
    let mut x = vec![3.0, -3.0, 0.5, -0.5, 0.0, 1.0];
    soft_threshold(&mut x, 1.0);
    assert_eq!(x, vec![2.0, -2.0, 0.0, 0.0, 0.0, 0.0]);
    let mut y = vec![1.0, -2.0];
    soft_threshold(&mut y, -1.0);
    assert_eq!(y, vec![1.0, -2.0], "negative tau acts as 0");
    assert_eq!(soft(-5.0, f64::INFINITY), 0.0);
}

#[test]
fn squared_l1_matches_bisection_twin_and_kkt() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for _ in 0..3000 {
        let x = random_vec(&mut rng);
        let tau = random_tau(&mut rng, &x);
        let mut z = x.clone();
        prox_squared_l1(&mut z, tau);
        let ones = vec![1.0; x.len()];
        let twin = weighted_sq_l1_by_bisection(&x, &ones, tau);
        let scale = norm2(&x);
        assert!(
            max_abs_diff(&z, &twin) <= 1e-12 * scale,
            "Alg. 2 {z:?} vs bisection {twin:?} for x {x:?} tau {tau}"
        );
        check_weighted_sq_l1(&x, &z, &ones, tau);
        for (zi, xi) in z.iter().zip(&x) {
            assert!(zi.abs() <= xi.abs() && (*zi == 0.0 || zi.signum() == xi.signum()));
        }
    }
}

#[test]
fn squared_l1_worked_example() {
    // x = (3, 1), tau = 1: rho = 1 (1 - 4/3 < 0), t = 3/2, z = (1.5, 0).
    let mut z = vec![3.0, -1.0];
    prox_squared_l1(&mut z, 1.0);
    assert_eq!(z, vec![1.5, 0.0]);
    // x = (3, 2), tau = 0.5: j=2: 2 - 0.5/2 * 5 = 0.75 > 0, t = 1.25, z = (1.75, 0.75);
    // check: t = tau * (1.75 + 0.75) = 1.25.
    let mut z = vec![3.0, 2.0];
    prox_squared_l1(&mut z, 0.5);
    assert!(max_abs_diff(&z, &[1.75, 0.75]) < 1e-15);
    // Extreme steps: identity at 0, zero at +inf.
    let mut z = vec![3.0, 2.0];
    prox_squared_l1(&mut z, 0.0);
    assert_eq!(z, vec![3.0, 2.0]);
    prox_squared_l1(&mut z, f64::INFINITY);
    assert_eq!(z, vec![0.0, 0.0]);
}

#[test]
fn squared_l1_beats_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for _ in 0..40 {
        let mut x = random_vec(&mut rng);
        x.truncate(6);
        let tau = random_tau(&mut rng, &x);
        let mut z = x.clone();
        prox_squared_l1(&mut z, tau);
        let f = |v: &[f64]| {
            let d: f64 = v.iter().zip(&x).map(|(a, b)| (a - b) * (a - b)).sum();
            let s: f64 = v.iter().map(|a| a.abs()).sum();
            0.5 * d + if tau > 0.0 { 0.5 * tau * s * s } else { 0.0 }
        };
        let groups = Groups::singletons(x.len());
        let starts = vec![x.clone(), z.clone()];
        let (_, brute) = brute_minimize(&f, &starts, &groups, norm2(&x).max(1e-12), 8, &mut rng);
        let ours = f(&z);
        assert!(ours <= brute + 1e-9 * brute + 1e-300, "{ours} > {brute}");
    }
}

#[test]
fn weighted_with_unit_weights_is_alg2() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    for _ in 0..2000 {
        let x = random_vec(&mut rng);
        let tau = random_tau(&mut rng, &x);
        let mut a = x.clone();
        prox_squared_l1(&mut a, tau);
        let mut b = x.clone();
        prox_weighted_squared_l1(&mut b, &vec![1.0; x.len()], tau);
        assert!(
            max_abs_diff(&a, &b) <= 1e-14 * norm2(&x),
            "Alg. 4 with d = 1 {b:?} differs from Alg. 2 {a:?}"
        );
    }
}

#[test]
fn weighted_squared_l1_matches_twin_kkt_and_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    for it in 0..2000 {
        let x = random_vec(&mut rng);
        let d: Vec<f64> = (0..x.len())
            .map(|_| {
                if rng.gen_bool(0.1) {
                    0.0
                } else {
                    10f64.powf(rng.gen_range(-2.0..2.0))
                }
            })
            .collect();
        let tau = random_tau(&mut rng, &x);
        let mut z = x.clone();
        prox_weighted_squared_l1(&mut z, &d, tau);
        let twin = weighted_sq_l1_by_bisection(&x, &d, tau);
        assert!(
            max_abs_diff(&z, &twin) <= 1e-11 * norm2(&x),
            "Alg. 4 {z:?} vs bisection {twin:?}; x {x:?} d {d:?} tau {tau}"
        );
        check_weighted_sq_l1(&x, &z, &d, tau);
        for i in 0..x.len() {
            if d[i] == 0.0 {
                assert_eq!(z[i], x[i], "unweighted coordinate changed");
            }
        }
        if it < 30 {
            let f = |v: &[f64]| {
                let q: f64 = v.iter().zip(&x).map(|(a, b)| (a - b) * (a - b)).sum();
                let s: f64 = v.iter().zip(&d).map(|(a, w)| w * a.abs()).sum();
                0.5 * q + if tau > 0.0 { 0.5 * tau * s * s } else { 0.0 }
            };
            let starts = vec![x.clone(), z.clone()];
            let g = Groups::singletons(x.len());
            let (_, brute) = brute_minimize(&f, &starts, &g, norm2(&x).max(1e-12), 6, &mut rng);
            let ours = f(&z);
            assert!(ours <= brute + 1e-9 * brute + 1e-300, "{ours} > {brute}");
        }
    }
}

#[test]
fn weighted_squared_l1_constant_weights_rescale_tau() {
    // 1/2 (sum c|z_i|)^2 = c^2 * 1/2 (sum |z_i|)^2.
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    for _ in 0..500 {
        let x = random_vec(&mut rng);
        let c = 10f64.powf(rng.gen_range(-2.0..2.0));
        let tau = random_tau(&mut rng, &x);
        let mut a = x.clone();
        prox_weighted_squared_l1(&mut a, &vec![c; x.len()], tau);
        let mut b = x.clone();
        prox_squared_l1(&mut b, tau * c * c);
        assert!(max_abs_diff(&a, &b) <= 1e-12 * norm2(&x));
    }
}

#[test]
fn prox_power_solves_its_equation_and_minimizes() {
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    let qs = [
        1.0,
        1.0001,
        1.05,
        4.0 / 3.0,
        1.5,
        1.999,
        2.0,
        2.5,
        3.0,
        4.0,
        8.0,
    ];
    for it in 0..4000 {
        let q = if it % 2 == 0 {
            qs[rng.gen_range(0..qs.len())]
        } else {
            rng.gen_range(1.0..6.0)
        };
        let b0 = 10f64.powf(rng.gen_range(-6.0..6.0));
        let tau = 10f64.powf(rng.gen_range(-8.0..8.0));
        let b = prox_power(b0, tau, q);
        assert!((0.0..=b0).contains(&b), "q {q} b0 {b0} tau {tau}: b {b}");
        // Twin: golden-section minimization of 1/2 (b - b0)^2 + tau b^q / q on [0, b0].
        let f = |v: f64| 0.5 * (v - b0) * (v - b0) + tau * v.powf(q) / q;
        let (bg, fg) = golden(f, 0.0, b0, 200);
        assert!(
            f(b) <= fg + 1e-12 * fg.abs() + 1e-300,
            "q {q} b0 {b0} tau {tau}: f(ours {b}) = {} > f(golden {bg}) = {fg}",
            f(b)
        );
        if q > 1.0 && b > 0.0 {
            // Relative residual of b - b0 + tau b^(q-1) = 0, measured against its terms.
            let r = (b - b0 + tau * b.powf(q - 1.0)).abs();
            assert!(r <= 1e-12 * b0, "q {q} b0 {b0} tau {tau}: residual {r:e}");
        }
        if q == 1.0 {
            assert_eq!(b, (b0 - tau).max(0.0));
        }
    }
    // Tiny roots keep full relative accuracy: q = 1.1, b0 = 1, tau = 1e6: b ~ 1e-60.
    let b = prox_power(1.0, 1e6, 1.1);
    assert!(b > 0.0 && b < 1e-50);
    let r = (b - 1.0 + 1e6 * b.powf(0.1)).abs();
    assert!(r < 1e-12, "residual {r}");
    let b = prox_power(1.0, 1e6, 1.1);
    let approx = (1e-6f64).powf(10.0);
    assert!((b / approx - 1.0).abs() < 1e-6, "{b} vs {approx}");
    assert_eq!(prox_power(0.0, 1.0, 1.5), 0.0);
    assert_eq!(prox_power(2.0, 0.0, 1.5), 2.0);
    assert_eq!(prox_power(2.0, 1.0, 2.0), 1.0);
}

#[test]
fn ball_projection() {
    assert_eq!(ball_factor(0.0, 1.0), 1.0);
    assert_eq!(ball_factor(0.5, 1.0), 1.0);
    assert_eq!(ball_factor(4.0, 2.0), 0.5);
    assert_eq!(ball_factor(4.0, 0.0), 0.0);
    let mut x = vec![3.0, 4.0];
    project_l2_ball(&mut x, 1.0);
    assert!(max_abs_diff(&x, &[0.6, 0.8]) < 1e-15);
    let mut y = vec![0.3, 0.4];
    project_l2_ball(&mut y, 1.0);
    assert_eq!(y, vec![0.3, 0.4]);
    // Brute force: the projection is the closest point of the ball among many random ones.
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    for _ in 0..200 {
        let x: Vec<f64> = (0..3)
            .map(|_| {
                3.0 * {
                    let v: f64 = StandardNormal.sample(&mut rng);
                    v
                }
            })
            .collect();
        let gamma = rng.gen_range(0.1..4.0);
        let mut p = x.clone();
        project_l2_ball(&mut p, gamma);
        assert!(norm2(&p) <= gamma * (1.0 + 1e-15));
        let dp = norm2(&p.iter().zip(&x).map(|(a, b)| a - b).collect::<Vec<_>>());
        for _ in 0..50 {
            let mut c: Vec<f64> = (0..3).map(|_| StandardNormal.sample(&mut rng)).collect();
            let r = gamma * rng.r#gen::<f64>().cbrt() / norm2(&c);
            c.iter_mut().for_each(|v| *v *= r);
            let dc = norm2(&c.iter().zip(&x).map(|(a, b)| a - b).collect::<Vec<_>>());
            assert!(dp <= dc + 1e-12);
        }
    }
}

/// Long vectors (where Alg. 2 first discards entries that cannot be active) against the
/// bisection twin and the optimality conditions, from almost-all-active to one-active steps,
/// with ties and duplicated magnitudes.
#[test]
fn squared_l1_long_vectors() {
    let mut rng = ChaCha8Rng::seed_from_u64(18);
    for it in 0..60 {
        let n = rng.gen_range(64..5000);
        let mut x: Vec<f64> = (0..n)
            .map(|_| {
                let v: f64 = StandardNormal.sample(&mut rng);
                v.exp()
            })
            .collect();
        if it % 3 == 0 {
            // Many exact ties.
            x.iter_mut().for_each(|v| *v = (*v * 4.0).round() / 4.0);
        }
        let s: f64 = x.iter().sum();
        let tau = 10f64.powf(rng.gen_range(-3.0..3.0)) / s;
        let mut z = x.clone();
        prox_squared_l1(&mut z, tau);
        let ones = vec![1.0; n];
        let twin = weighted_sq_l1_by_bisection(&x, &ones, tau);
        assert!(
            max_abs_diff(&z, &twin) <= 1e-11 * norm2(&x),
            "n {n} tau {tau}: differs from the bisection twin by {}",
            max_abs_diff(&z, &twin)
        );
        check_weighted_sq_l1(&x, &z, &ones, tau);
        let mut w = x.clone();
        prox_weighted_squared_l1(&mut w, &ones, tau);
        assert!(max_abs_diff(&z, &w) <= 1e-13 * norm2(&x));
    }
}
