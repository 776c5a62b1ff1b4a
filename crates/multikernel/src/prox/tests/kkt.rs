//! Optimality conditions `x - z in tau dOmega(z)` of the proxes, written out per regularizer.

use super::brute::norm2;
use crate::prox::Groups;

/// Tolerance: 1e-8 relative to the size of `x` (every subgradient term is at most 2||x||).
pub(crate) fn tol(x: &[f64]) -> f64 {
    1e-8 * norm2(x) + 1e-300
}

/// KKT of a block regularizer `phi(b)` on disjoint groups. `deriv(m, b_z)` is
/// `tau d phi / d b_m` at the block norms `b_z` of `z`; at `b_m = 0` it must be the upper end
/// of the subdifferential interval `[-c, c]` (e.g. `tau` for the group lasso). For a non-zero
/// block: `x_m - z_m = deriv z_m / ||z_m||`; for a zero block: `||x_m|| <= deriv`. Coordinates
/// in no group must be unchanged.
pub(crate) fn check_block(
    what: &str,
    x: &[f64],
    z: &[f64],
    groups: &Groups,
    deriv: impl Fn(usize, &[f64]) -> f64,
) {
    let t = tol(x);
    let bz = groups.norms(z);
    let mut grouped = vec![false; x.len()];
    for (m, g) in groups.members.iter().enumerate() {
        let c = deriv(m, &bz);
        let bx = g.iter().map(|&i| x[i] * x[i]).sum::<f64>().sqrt();
        if bz[m] > 0.0 {
            let r: f64 = g
                .iter()
                .map(|&i| {
                    let e = x[i] - z[i] - c * z[i] / bz[m];
                    e * e
                })
                .sum::<f64>()
                .sqrt();
            assert!(
                r <= t,
                "{what}: stationarity residual {r:e} > {t:e} in group {m}; x {x:?} z {z:?}"
            );
        } else {
            assert!(
                bx <= c * (1.0 + 1e-12) + t,
                "{what}: zero group {m} with ||x_m|| = {bx:e} > bound {c:e}; x {x:?} z {z:?}"
            );
        }
        for &i in g {
            grouped[i] = true;
        }
    }
    for i in 0..x.len() {
        if !grouped[i] {
            assert_eq!(x[i], z[i], "{what}: ungrouped coordinate {i} changed");
        }
    }
}

/// KKT of the weighted squared l1 `1/2 (sum_i d_i |z_i|)^2`, with `S = sum_i d_i |z_i|`:
/// `x_i - z_i = tau S d_i sign(z_i)` where `z_i != 0`, `|x_i| <= tau S d_i` where `z_i = 0`.
pub(crate) fn check_weighted_sq_l1(x: &[f64], z: &[f64], d: &[f64], tau: f64) {
    let t = tol(x);
    let s: f64 = z.iter().zip(d).map(|(v, w)| w.abs() * v.abs()).sum();
    for i in 0..x.len() {
        let c = tau * s * d[i].abs();
        if z[i] != 0.0 {
            assert!(
                z[i].signum() == x[i].signum(),
                "weighted sq l1: sign flip at {i}"
            );
            let r = (x[i] - z[i] - c * z[i].signum()).abs();
            assert!(
                r <= t,
                "weighted sq l1: residual {r:e} at {i}; x {x:?} z {z:?}"
            );
        } else {
            assert!(
                x[i].abs() <= c * (1.0 + 1e-12) + t,
                "weighted sq l1: zero at {i} with |x_i| {} > {c}; x {x:?} z {z:?}",
                x[i].abs()
            );
        }
    }
}

/// KKT of `tau (sigma ||z||_1 + (1 - sigma) sum_m ||z_m||)` on disjoint groups.
/// With `a = tau sigma`, `c = tau (1 - sigma)`: for a non-zero block,
/// `x_i - z_i = a sign(z_i) + c z_i / ||z_m||` where `z_i != 0` and `|x_i| <= a` where
/// `z_i = 0`; for a zero block, `||soft(x_m, a)|| <= c` (some `s in [-1,1]^m` has
/// `||x_m - a s|| <= c`). Ungrouped coordinates: plain soft threshold by `a`.
pub(crate) fn check_sparse_group(x: &[f64], z: &[f64], groups: &Groups, tau: f64, sigma: f64) {
    let t = tol(x);
    let (a, c) = (tau * sigma, tau * (1.0 - sigma));
    let mut grouped = vec![false; x.len()];
    for (m, g) in groups.members.iter().enumerate() {
        let bz = g.iter().map(|&i| z[i] * z[i]).sum::<f64>().sqrt();
        if bz > 0.0 {
            for &i in g {
                if z[i] != 0.0 {
                    let r = (x[i] - z[i] - a * z[i].signum() - c * z[i] / bz).abs();
                    assert!(
                        r <= t,
                        "sparse group: residual {r:e} at {i}; x {x:?} z {z:?}"
                    );
                } else {
                    assert!(
                        x[i].abs() <= a * (1.0 + 1e-12) + t,
                        "sparse group: zero at {i}"
                    );
                }
            }
        } else {
            let soft_norm = g
                .iter()
                .map(|&i| (x[i].abs() - a).max(0.0).powi(2))
                .sum::<f64>()
                .sqrt();
            assert!(
                soft_norm <= c * (1.0 + 1e-12) + t,
                "sparse group: zero group {m} with ||soft(x_m)|| {soft_norm:e} > {c:e}"
            );
        }
        for &i in g {
            grouped[i] = true;
        }
    }
    for i in 0..x.len() {
        if !grouped[i] {
            let expect = crate::prox::soft(x[i], a);
            assert!((z[i] - expect).abs() <= t, "sparse group: ungrouped {i}");
        }
    }
}
