//! Slow, obviously-correct twins: a derivative-free minimizer of the prox objective, random
//! test cases, and helpers.

use crate::prox::{Groups, Regularizer};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// Prox objective `1/2 ||z - x||^2 + tau Omega(z)`.
pub(crate) fn prox_objective(
    reg: &dyn Regularizer,
    z: &[f64],
    x: &[f64],
    g: &Groups,
    tau: f64,
) -> f64 {
    let d: f64 = z.iter().zip(x).map(|(a, b)| (a - b) * (a - b)).sum();
    let r = if tau > 0.0 {
        tau * reg.value(z, g)
    } else {
        0.0
    };
    0.5 * d + r
}

/// Minimizes the convex 1-D function `phi` on `[lo, hi]` by golden-section search.
pub(crate) fn golden(
    phi: impl Fn(f64) -> f64,
    mut lo: f64,
    mut hi: f64,
    iters: usize,
) -> (f64, f64) {
    let r = 0.5 * (5f64.sqrt() - 1.0);
    let mut a = hi - r * (hi - lo);
    let mut b = lo + r * (hi - lo);
    let (mut fa, mut fb) = (phi(a), phi(b));
    for _ in 0..iters {
        if fa <= fb {
            hi = b;
            b = a;
            fb = fa;
            a = hi - r * (hi - lo);
            fa = phi(a);
        } else {
            lo = a;
            a = b;
            fa = fb;
            b = lo + r * (hi - lo);
            fb = phi(b);
        }
    }
    if fa <= fb {
        (a, fa)
    } else {
        (b, fb)
    }
}

/// Derivative-free minimization of a convex `f` from several starts: rounds of exact
/// (golden-section) line searches along coordinate axes, random directions, the radial
/// direction and random directions inside each group, and the direction towards the origin
/// of each group. Returns the best point and value found.
pub(crate) fn brute_minimize(
    f: &dyn Fn(&[f64]) -> f64,
    starts: &[Vec<f64>],
    groups: &Groups,
    scale: f64,
    rounds: usize,
    rng: &mut ChaCha8Rng,
) -> (Vec<f64>, f64) {
    let n = starts[0].len();
    let mut best = (starts[0].clone(), f(&starts[0]));
    for start in starts {
        let mut z = start.clone();
        let mut fz = f(&z);
        let mut reach = scale.max(1e-300);
        for round in 0..rounds {
            let mut dirs: Vec<Vec<f64>> = Vec::new();
            for i in 0..n {
                let mut d = vec![0.0; n];
                d[i] = 1.0;
                dirs.push(d);
            }
            for _ in 0..2 * n {
                dirs.push((0..n).map(|_| StandardNormal.sample(rng)).collect());
            }
            for g in &groups.members {
                let mut radial = vec![0.0; n];
                let mut inside = vec![0.0; n];
                for &i in g {
                    radial[i] = z[i];
                    inside[i] = StandardNormal.sample(rng);
                }
                dirs.push(radial);
                dirs.push(inside);
            }
            for d in dirs {
                let norm = d.iter().map(|v| v * v).sum::<f64>().sqrt();
                if norm == 0.0 {
                    continue;
                }
                let d: Vec<f64> = d.iter().map(|v| v / norm).collect();
                let point =
                    |t: f64| -> Vec<f64> { z.iter().zip(&d).map(|(a, b)| a + t * b).collect() };
                let (t, ft) = golden(|t| f(&point(t)), -reach, reach, 90);
                if ft < fz {
                    z = point(t);
                    fz = ft;
                }
            }
            // Alternate wide and narrow brackets so both far moves and fine steps happen.
            reach = if round % 2 == 0 { scale * 1e-4 } else { scale };
        }
        if fz < best.1 {
            best = (z, fz);
        }
    }
    best
}

/// A random prox test case.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    pub x: Vec<f64>,
    pub groups: Groups,
    pub tau: f64,
}

/// Random groups (sizes 1..=3, 1..=4 groups, optionally one ungrouped coordinate at the end)
/// and a random `x` of random scale with zero and tiny blocks, and a random `tau` (including
/// 0, tiny and huge values).
pub(crate) fn random_case(rng: &mut ChaCha8Rng, allow_ungrouped: bool) -> Case {
    let m = rng.gen_range(1..=4);
    let sizes: Vec<usize> = (0..m).map(|_| rng.gen_range(1..=3)).collect();
    let groups = Groups::contiguous(&sizes);
    let extra = usize::from(allow_ungrouped && rng.gen_bool(0.2));
    let n = sizes.iter().sum::<usize>() + extra;
    let scale = 10f64.powf(rng.gen_range(-3.0..3.0));
    let mut x: Vec<f64> = (0..n)
        .map(|_| {
            scale * {
                let v: f64 = StandardNormal.sample(rng);
                v
            }
        })
        .collect();
    for g in &groups.members {
        let u: f64 = rng.r#gen();
        if u < 0.25 {
            for &i in g {
                x[i] = 0.0;
            }
        } else if u < 0.35 {
            for &i in g {
                x[i] *= 1e-9;
            }
        }
    }
    let taus = [0.0, 1e-12, 1e-6, 1e-3, 0.1, 1.0, 10.0, 1e3, 1e6];
    let tau = if rng.gen_bool(0.4) {
        taus[rng.gen_range(0..taus.len())]
    } else {
        scale * 10f64.powf(rng.gen_range(-3.0..2.0))
    };
    Case { x, groups, tau }
}

pub(crate) fn norm2(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>().sqrt()
}

pub(crate) fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(u, v)| (u - v).abs())
        .fold(0.0, f64::max)
}

/// Checks that our prox is no worse than the brute-force minimizer started from `x`, from
/// zero and from our answer (1e-9 relative), and returns our answer.
pub(crate) fn check_against_brute(
    reg: &dyn Regularizer,
    case: &Case,
    rounds: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<f64> {
    let mut z = case.x.clone();
    reg.prox(&mut z, &case.groups, case.tau);
    let f = |v: &[f64]| prox_objective(reg, v, &case.x, &case.groups, case.tau);
    let ours = f(&z);
    let starts = vec![case.x.clone(), vec![0.0; z.len()], z.clone()];
    let scale = norm2(&case.x).max(1e-12);
    let (_, brute) = brute_minimize(&f, &starts, &case.groups, scale, rounds, rng);
    assert!(
        ours <= brute + 1e-9 * brute.abs() + 1e-300,
        "{reg:?}: prox objective {ours:e} above brute force {brute:e}; case {case:?}, z {z:?}"
    );
    z
}
