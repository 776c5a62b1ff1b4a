//! Elementary proximity operators on plain vectors (martins2011 Sec. 3.2; martins2010 App. F):
//! soft thresholding (eq. 11), the squared l1 prox (Alg. 2) and its weighted form (Alg. 4),
//! the scalar prox of `b^q / q` used by the separable l2,q^q regularizer, and the projection
//! on an l2 ball (line 9 of Alg. 1).
//!
//! Every `tau` is a step size `>= 0`; a negative or NaN `tau` is treated as 0 (identity) and
//! `tau = +inf` gives the limit (zero for the sparsity-inducing operators).

/// Scalar soft threshold `sign(v) max(0, |v| - t)` (martins2011 eq. 11).
#[inline]
pub(crate) fn soft(v: f64, t: f64) -> f64 {
    let a = v.abs() - t;
    if a > 0.0 {
        a.copysign(v)
    } else {
        0.0
    }
}

/// In place soft threshold of every coordinate: `x_i <- sign(x_i) max(0, |x_i| - t)`, the
/// prox of `t ||.||_1` (martins2011 eq. 11).
pub(crate) fn soft_threshold(x: &mut [f64], t: f64) {
    let t = sanitize(t);
    if t == 0.0 {
        return;
    }
    for v in x.iter_mut() {
        *v = soft(*v, t);
    }
}

/// Solution of the squared l1 prox found by Alg. 2 / Alg. 4: the active set `1..=rho` of the
/// sorted ratios, `N = sum_{k<=rho} d_k |x_k|`, `Q = sum_{k<=rho} d_k^2` (`d = 1` for Alg. 2),
/// the smallest and largest active ratio and `D1 = sum_{k<=rho} d_k^2 (u_max - u_k)`.
struct SqL1 {
    inv_tau: f64,
    num: f64,
    den: f64,
    u_min: f64,
    u_max: f64,
    d1: f64,
}

impl SqL1 {
    /// `tau S_rho`: the amount `t` with `z_i = soft(x_i, d_i t)`.
    fn threshold(&self) -> f64 {
        self.num / (self.inv_tau + self.den)
    }

    /// `|z_i|` for a coordinate with `|x_i| = a`, weight `w > 0` and ratio `u = a / w`.
    ///
    /// For `tau Q <= 1` this is `a - w t`. For larger steps `a - w t` cancels (`t` is close
    /// to `u`), so it is rewritten as `(a / tau + w D_i) / (1 / tau + Q)` with
    /// `D_i = sum_{k<=rho} d_k^2 (u_i - u_k) = D1 - Q (u_max - u_i)`, whose terms are small
    /// differences of nearby ratios; this keeps the relative accuracy of `z` for huge `tau`.
    #[inline]
    fn magnitude(&self, a: f64, w: f64, u: f64) -> f64 {
        if u < self.u_min {
            0.0
        } else if self.inv_tau >= self.den {
            (a - w * self.threshold()).max(0.0)
        } else {
            let d = self.d1 - self.den * (self.u_max - u);
            ((a * self.inv_tau + w * d) / (self.inv_tau + self.den)).max(0.0)
        }
    }

    /// Scans the ratios `u` (sorted decreasingly) with their weights `w` and magnitudes `a`:
    /// `rho = max{ j : u_j - tau S_j > 0 }`, `S_j = (sum_{k<=j} w_k a_k) / (1 + tau sum_{k<=j}
    /// w_k^2)`. `rho >= 1` always (`u_1 - tau S_1 = u_1 / (1 + tau w_1^2) > 0` exactly, even
    /// where rounding says otherwise for a huge `tau`). `None` when there is nothing to scan.
    fn scan(items: impl Iterator<Item = (f64, f64, f64)> + Clone, tau: f64) -> Option<SqL1> {
        let inv_tau = 1.0 / tau;
        let (mut num, mut den) = (0.0, 0.0);
        let mut best: Option<(usize, f64, f64, f64)> = None;
        for (j, (u, w, a)) in items.clone().enumerate() {
            num += w * a;
            den += w * w;
            // tau S_j, written so that a huge (or infinite) tau does not overflow.
            if j == 0 || u - num / (inv_tau + den) > 0.0 {
                best = Some((j + 1, num, den, u));
            }
        }
        let (rho, num, den, u_min) = best?;
        let mut u_max = 0.0;
        let mut d1 = 0.0;
        for (j, (u, w, _)) in items.take(rho).enumerate() {
            if j == 0 {
                u_max = u;
            }
            d1 += w * w * (u_max - u);
        }
        Some(SqL1 {
            inv_tau,
            num,
            den,
            u_min,
            u_max,
            d1,
        })
    }
}

/// Sorted magnitudes and the Alg. 2 scan.
fn solve_squared_l1(x: &[f64], tau: f64) -> Option<SqL1> {
    let tau = sanitize(tau);
    if tau == 0.0 {
        return None;
    }
    let mut y: Vec<f64> = x.iter().map(|v| v.abs()).filter(|&v| v > 0.0).collect();
    prefilter_inactive(&mut y, tau);
    // Positive floats order like their bit patterns: an integer sort is faster than a
    // float comparator. Ascending, scanned from the end.
    let mut bits: Vec<u64> = y.iter().map(|v| v.to_bits()).collect();
    bits.sort_unstable();
    SqL1::scan(
        bits.iter().rev().map(|&b| {
            let v = f64::from_bits(b);
            (v, 1.0, v)
        }),
        tau,
    )
}

/// Drops magnitudes that cannot be active before Alg. 2 sorts, so that only a superset of
/// the active set is sorted (the scan's prefix sums up to rho are unchanged).
///
/// For any set A containing the active set, `t(A) = tau sum_A y / (1 + tau |A|)` is at most
/// the final threshold (the terms of A outside the active set are `<= t*`, so they only lower
/// the sum's excess), hence entries `<= t(A)` are inactive; and `{y > t(A)}` again contains the
/// active set. A few such passes (Michelot's projection iteration) usually leave a small
/// set. The bound is lowered by the worst-case rounding of the sum.
fn prefilter_inactive(y: &mut Vec<f64>, tau: f64) {
    let inv_tau = 1.0 / tau;
    for _ in 0..4 {
        let n = y.len();
        if n < 64 {
            return;
        }
        let sum: f64 = y.iter().sum();
        let bound = sum / (inv_tau + n as f64) * (1.0 - 4.0 * f64::EPSILON * n as f64);
        if bound.is_nan() || bound <= 0.0 || !y.iter().any(|&v| v > bound) {
            return;
        }
        y.retain(|&v| v > bound);
        if y.len() * 10 > n * 9 {
            return;
        }
    }
}

/// In place prox of the squared l1 norm, `x <- argmin_z 1/2 ||z - x||^2 + tau/2 (sum_i
/// |z_i|)^2` (Alg. 2 of martins2011; correctness in its App. E): `soft(x, t)` with `t` from
/// [`squared_l1_threshold`]. O(n log n) by sorting. For `rho tau > 1` the surviving entries
/// are computed without the cancellation of `|x_i| - t` (see the source), so they keep their
/// relative accuracy even for a huge `tau`.
pub(crate) fn prox_squared_l1(x: &mut [f64], tau: f64) {
    let Some(sol) = solve_squared_l1(x, tau) else {
        return;
    };
    for v in x.iter_mut() {
        let a = v.abs();
        *v = with_sign(sol.magnitude(a, 1.0, a), *v);
    }
}

/// In place prox of the weighted squared l1 norm, `Omega(z) = 1/2 (sum_i d_i |z_i|)^2`
/// (Alg. 4 of martins2010, App. F; docs/formulas.md "Proximity operators").
///
/// Sorts the ratios `u_i = |x_i| / d_i` decreasingly (carrying `d`),
/// `S_j = (sum_{k<=j} d_k |x_k|) / (1 + tau sum_{k<=j} d_k^2)`,
/// `rho = max{ j : u_j - tau S_j > 0 }`, and returns
/// `z_i = sign(x_i) max(0, |x_i| - tau d_i S_rho)`. With `d = 1` this is Alg. 2.
///
/// The weights enter through `|d_i|`; a coordinate with `d_i = 0` is unregularized and left
/// unchanged. `d` must have the length of `x` (panics otherwise: a programming error).
#[cfg(test)]
pub(crate) fn prox_weighted_squared_l1(x: &mut [f64], d: &[f64], tau: f64) {
    assert_eq!(
        x.len(),
        d.len(),
        "prox_weighted_squared_l1: x and d differ in length"
    );
    let tau = sanitize(tau);
    if tau == 0.0 {
        return;
    }
    // (u_i, d_i, |x_i|) for the coordinates that can be non-zero and are regularized.
    let mut items: Vec<(f64, f64, f64)> = x
        .iter()
        .zip(d)
        .filter_map(|(&xi, &di)| {
            let (a, w) = (xi.abs(), di.abs());
            (a > 0.0 && w > 0.0).then(|| (a / w, w, a))
        })
        .collect();
    items.sort_unstable_by(|p, q| q.0.total_cmp(&p.0));
    let Some(sol) = SqL1::scan(items.iter().copied(), tau) else {
        return;
    };
    for (v, &di) in x.iter_mut().zip(d) {
        let (a, w) = (v.abs(), di.abs());
        if a > 0.0 && w > 0.0 {
            *v = with_sign(sol.magnitude(a, w, a / w), *v);
        }
    }
}

/// Scalar prox of `tau/q b^q` on `b >= 0`: the root `b in [0, b0]` of
/// `b - b0 + tau b^(q-1) = 0` (martins2011 Sec. 3.2, "Non-Sparse MKL"), `q >= 1`.
///
/// Closed forms for `q = 1` (`max(0, b0 - tau)`) and `q = 2` (`b0 / (1 + tau)`); otherwise
/// Newton's method safeguarded by a bracket that shrinks every iteration (bisection, in log
/// scale when the bracket spans orders of magnitude). The bracket starts at
/// `[min(b0/2, c 2^(-1/(q-1))), min(b0, c)]` with `c = (b0/tau)^(1/(q-1))`. A `q < 1` or NaN
/// is treated as 1.
pub(crate) fn prox_power(b0: f64, tau: f64, q: f64) -> f64 {
    let tau = sanitize(tau);
    if b0.is_nan() || b0 <= 0.0 {
        return 0.0;
    }
    if tau == 0.0 {
        return b0;
    }
    let q = if q.is_nan() || q < 1.0 { 1.0 } else { q };
    if q == 1.0 {
        return (b0 - tau).max(0.0);
    }
    if q == 2.0 {
        return b0 / (1.0 + tau);
    }
    if tau.is_infinite() {
        return 0.0;
    }
    let e = 1.0 / (q - 1.0);
    let c = (b0 / tau).powf(e);
    let g = |b: f64| b - b0 + tau * b.powf(q - 1.0);
    let dg = |b: f64| 1.0 + tau * (q - 1.0) * b.powf(q - 2.0);
    let mut hi = b0.min(c);
    let mut lo = (0.5 * b0).min(c * 0.5f64.powf(e));
    if hi <= 0.0 {
        return 0.0;
    }
    if lo.is_nan() || lo <= 0.0 || g(lo) > 0.0 {
        lo = 0.0;
    }
    let mut x = hi;
    for _ in 0..200 {
        let gx = g(x);
        if gx == 0.0 {
            return x;
        }
        if gx < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        if hi - lo <= 4.0 * f64::EPSILON * hi {
            break;
        }
        let step = gx / dg(x);
        if step.abs() <= 2.0 * f64::EPSILON * x {
            // Newton has converged to the resolution of x.
            x -= step;
            break;
        }
        let mut next = x - step;
        if next.is_nan() || next <= lo || next >= hi {
            next = if lo > 0.0 && hi > 4.0 * lo {
                (lo * hi).sqrt()
            } else {
                0.5 * (lo + hi)
            };
        }
        x = next;
    }
    x.clamp(0.0, b0)
}

/// Factor `min(1, gamma / norm)` that projects a vector of norm `norm` on the ball of radius
/// `gamma` (1 when `norm <= gamma`, in particular for `norm = 0`; 0 when `gamma <= 0`).
#[inline]
#[cfg(test)]
pub(crate) fn ball_factor(norm: f64, gamma: f64) -> f64 {
    if norm > gamma {
        if gamma > 0.0 {
            gamma / norm
        } else {
            0.0
        }
    } else {
        1.0
    }
}

/// In place Euclidean projection on the ball `{ z : ||z|| <= gamma }`: `x * min(1, gamma /
/// ||x||)` (line 9 of Alg. 1, martins2011; radius from martins2010 App. E).
#[cfg(test)]
pub(crate) fn project_l2_ball(x: &mut [f64], gamma: f64) {
    let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    let f = ball_factor(norm, gamma);
    if f != 1.0 {
        for v in x.iter_mut() {
            *v *= f;
        }
    }
}

/// `m` with the sign of `v` (`+0` when `m = 0`).
#[inline]
fn with_sign(m: f64, v: f64) -> f64 {
    if m > 0.0 {
        m.copysign(v)
    } else {
        0.0
    }
}

/// A step size: negative or NaN becomes 0.
#[inline]
pub(crate) fn sanitize(tau: f64) -> f64 {
    if tau > 0.0 {
        tau
    } else {
        0.0
    }
}
