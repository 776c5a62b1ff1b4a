//! The dual of the 1-slack structural SVM restricted to a working set (Joachims, Finley & Yu
//! 2009, eq. 6-7; mao-tsang problem (6) with one template):
//!
//! ```text
//! max_alpha  D(alpha) = b^T alpha - 1/2 alpha^T G alpha   s.t.  alpha >= 0,  sum_r alpha_r <= C,
//! ```
//!
//! with `G_rs = <a_r, a_s>` the Gram matrix of the cuts, and `w = sum_r alpha_r a_r`.
//!
//! Solved by pairwise coordinate ascent (SMO) on the simplex: a slack coordinate
//! `alpha_0 = C - sum_r alpha_r` (with `b_0 = 0` and a zero row of `G`) turns the cap into
//! `sum = C`; each step moves mass from the coordinate of smallest gradient
//! `g_k = b_k - (G alpha)_k` that has mass to the one of largest gradient, by the exact line
//! search clipped to the mass available. It stops when the duality gap
//!
//! ```text
//! P(w) - D(alpha) = C max(0, max_r g_r) - sum_r alpha_r g_r   (P the restricted primal)
//! ```
//!
//! is at most `tol`. The tests check it against an enumeration of active sets.

/// A solution of the working-set dual.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QpSolution {
    /// One multiplier per cut.
    pub alpha: Vec<f64>,
    /// `D(alpha)`.
    pub value: f64,
    /// The duality gap `P(w) - D(alpha)` at the end.
    pub gap: f64,
    pub iterations: usize,
    /// Whether the gap reached the tolerance.
    pub converged: bool,
}

/// Gradient `g_k = b_k - (G alpha)_k` of the cuts.
fn gradient(gram: &[f64], b: &[f64], alpha: &[f64]) -> Vec<f64> {
    let r = b.len();
    (0..r)
        .map(|k| b[k] - (0..r).map(|s| gram[k * r + s] * alpha[s]).sum::<f64>())
        .collect()
}

/// `D(alpha) = sum_r alpha_r (b_r + g_r) / 2` (since `g = b - G alpha`).
fn dual_value(b: &[f64], g: &[f64], alpha: &[f64]) -> f64 {
    alpha
        .iter()
        .zip(b.iter().zip(g))
        .map(|(a, (bk, gk))| 0.5 * a * (bk + gk))
        .sum()
}

/// `C max(0, max_r g_r) - sum_r alpha_r g_r`.
fn duality_gap(c: f64, g: &[f64], alpha: &[f64]) -> f64 {
    let top = g.iter().cloned().fold(0.0, f64::max);
    c * top - alpha.iter().zip(g).map(|(a, gk)| a * gk).sum::<f64>()
}

/// One pass over the gradient: the pair the next pairwise step moves mass between (`up`, of
/// largest gradient, the slack `r` if none is positive; `down`, of smallest gradient among the
/// coordinates with mass, the slack included when it has some; `usize::MAX` if none), and
/// what the duality gap needs (`max(0, max_k g_k)` and `sum_k alpha_k g_k`). Ties go to the
/// first index, as separate scans would.
struct Scan {
    up: usize,
    g_up: f64,
    down: usize,
    g_down: f64,
    top: f64,
    inner: f64,
}

impl Scan {
    /// The scan of `g` as it is.
    fn of(g: &[f64], alpha: &[f64], slack: f64) -> Scan {
        Scan::update(&mut g.to_vec(), alpha, slack, |_| 0.0)
    }

    /// Subtracts `delta(k)` from every `g_k` and scans the result in the same pass.
    #[inline(always)]
    fn update(g: &mut [f64], alpha: &[f64], slack: f64, delta: impl Fn(usize) -> f64) -> Scan {
        let r = g.len();
        let mut s = Scan {
            up: r,
            g_up: 0.0,
            down: usize::MAX,
            g_down: f64::INFINITY,
            top: 0.0,
            inner: 0.0,
        };
        if slack > 0.0 {
            s.down = r;
            s.g_down = 0.0;
        }
        for (k, (gk, &a)) in g.iter_mut().zip(alpha).enumerate() {
            *gk -= delta(k);
            let v = *gk;
            if v > s.g_up {
                s.up = k;
                s.g_up = v;
            }
            if a > 0.0 && v < s.g_down {
                s.down = k;
                s.g_down = v;
            }
            s.top = s.top.max(v);
            s.inner += a * v;
        }
        s
    }

    /// `C max(0, max_r g_r) - sum_r alpha_r g_r`.
    fn gap(&self, c: f64) -> f64 {
        c * self.top - self.inner
    }
}

/// Solves the working-set dual for `r` cuts (`gram` is `r x r`, row-major, positive
/// semidefinite; `b` has `r` entries) from the warm start `warm` (padded with zeros, scaled
/// into the feasible set), until the duality gap is at most `tol` or after `max_iter` steps.
pub(crate) fn solve(
    gram: &[f64],
    b: &[f64],
    c: f64,
    warm: &[f64],
    tol: f64,
    max_iter: usize,
) -> QpSolution {
    let r = b.len();
    debug_assert_eq!(gram.len(), r * r);
    let mut alpha: Vec<f64> = (0..r)
        .map(|k| warm.get(k).copied().unwrap_or(0.0).max(0.0))
        .collect();
    let total: f64 = alpha.iter().sum();
    if total > c {
        alpha.iter_mut().for_each(|a| *a *= c / total);
    }
    let mut slack = (c - alpha.iter().sum::<f64>()).max(0.0);
    let mut g = gradient(gram, b, &alpha);
    let mut iterations = 0;
    let mut scan = Scan::of(&g, &alpha, slack);
    let mut gap = scan.gap(c);
    // Coordinate `r` is the slack (gradient 0, no row in G).
    while gap > tol && iterations < max_iter {
        iterations += 1;
        let (up, g_up) = (scan.up, scan.g_up);
        let (down, g_down) = (scan.down, scan.g_down);
        if down == usize::MAX || up == down || g_up <= g_down {
            break;
        }
        let diag = |k: usize| if k == r { 0.0 } else { gram[k * r + k] };
        let cross = if up == r || down == r {
            0.0
        } else {
            gram[up * r + down]
        };
        let curvature = diag(up) + diag(down) - 2.0 * cross;
        let room = if down == r { slack } else { alpha[down] };
        let t = if curvature > 0.0 {
            ((g_up - g_down) / curvature).min(room)
        } else {
            room
        };
        if t <= 0.0 {
            break;
        }
        if up == r {
            slack += t;
        } else {
            alpha[up] += t;
        }
        if down == r {
            slack -= t;
        } else {
            alpha[down] -= t;
            if alpha[down] < 1e-300 {
                alpha[down] = 0.0;
            }
        }
        // The gradient moves by -t (G e_up - G e_down); G is symmetric, so its rows `up`
        // and `down` are read (contiguous) in place of its columns. The same pass finds the
        // next pair and the gap.
        let row = |k: usize| (k != r).then(|| &gram[k * r..(k + 1) * r]);
        scan = match (row(up), row(down)) {
            (Some(u), Some(d)) => Scan::update(&mut g, &alpha, slack, |k| t * (u[k] - d[k])),
            (Some(u), None) => Scan::update(&mut g, &alpha, slack, |k| t * u[k]),
            (None, Some(d)) => Scan::update(&mut g, &alpha, slack, |k| -t * d[k]),
            (None, None) => Scan::of(&g, &alpha, slack),
        };
        gap = scan.gap(c);
    }
    // Refresh the gradient to shed accumulated rounding before reporting.
    let g = gradient(gram, b, &alpha);
    let gap = duality_gap(c, &g, &alpha);
    QpSolution {
        value: dual_value(b, &g, &alpha),
        converged: gap <= tol,
        gap,
        alpha,
        iterations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Solves the square system `m x = rhs` by Gaussian elimination with partial pivoting;
    /// `None` when singular.
    fn linear_solve(mut m: Vec<Vec<f64>>, mut rhs: Vec<f64>) -> Option<Vec<f64>> {
        let n = rhs.len();
        for col in 0..n {
            let p = (col..n).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
            if m[p][col].abs() < 1e-12 {
                return None;
            }
            m.swap(col, p);
            rhs.swap(col, p);
            let pivot = m[col].clone();
            for row in col + 1..n {
                let f = m[row][col] / pivot[col];
                for (x, p) in m[row][col..].iter_mut().zip(&pivot[col..]) {
                    *x -= f * p;
                }
                rhs[row] -= f * rhs[col];
            }
        }
        let mut x = vec![0.0; n];
        for row in (0..n).rev() {
            let s: f64 = (row + 1..n).map(|k| m[row][k] * x[k]).sum();
            x[row] = (rhs[row] - s) / m[row][row];
        }
        Some(x)
    }

    /// The slow twin: the optimum lies on a face of the simplex `{alpha, slack >= 0, sum =
    /// C}`, where it solves the equality-constrained KKT system of that face's support.
    /// Enumerate every support, keep the feasible stationary points, take the best.
    fn brute_force(gram: &[f64], b: &[f64], c: f64) -> (Vec<f64>, f64) {
        let r = b.len();
        let value = |a: &[f64]| {
            let mut v = 0.0;
            for i in 0..r {
                v += b[i] * a[i];
                for j in 0..r {
                    v -= 0.5 * a[i] * gram[i * r + j] * a[j];
                }
            }
            v
        };
        let mut best = (vec![0.0; r], 0.0); // all mass on the slack
        for mask in 1u32..(1 << (r + 1)) {
            let support: Vec<usize> = (0..=r).filter(|&k| mask >> k & 1 == 1).collect();
            let s = support.len();
            // [G_SS 1; 1^T 0] [alpha_S; nu] = [b_S; C], slack rows of G are zero.
            let g = |i: usize, j: usize| {
                if i == r || j == r {
                    0.0
                } else {
                    gram[i * r + j]
                }
            };
            let mut m = vec![vec![0.0; s + 1]; s + 1];
            let mut rhs = vec![0.0; s + 1];
            for (a, &i) in support.iter().enumerate() {
                for (bb, &j) in support.iter().enumerate() {
                    m[a][bb] = g(i, j);
                }
                m[a][s] = 1.0;
                m[s][a] = 1.0;
                rhs[a] = if i == r { 0.0 } else { b[i] };
            }
            rhs[s] = c;
            let Some(x) = linear_solve(m, rhs) else {
                continue;
            };
            if x[..s].iter().any(|&v| v < -1e-12) {
                continue;
            }
            let mut alpha = vec![0.0; r];
            for (a, &i) in support.iter().enumerate() {
                if i < r {
                    alpha[i] = x[a].max(0.0);
                }
            }
            let v = value(&alpha);
            if v > best.1 {
                best = (alpha, v);
            }
        }
        best
    }

    /// Random cuts `a_r` in dimension `dim`, their Gram matrix and offsets `b`.
    fn instance(rng: &mut impl Rng, r: usize, dim: usize) -> (Vec<f64>, Vec<f64>) {
        let a: Vec<Vec<f64>> = (0..r)
            .map(|_| (0..dim).map(|_| rng.gen_range(-1.0..1.0)).collect())
            .collect();
        let mut gram = vec![0.0; r * r];
        for i in 0..r {
            for j in 0..r {
                gram[i * r + j] = a[i].iter().zip(&a[j]).map(|(x, y)| x * y).sum();
            }
        }
        let b = (0..r).map(|_| rng.gen_range(-0.5..1.5)).collect();
        (gram, b)
    }

    #[test]
    fn matches_the_enumeration_of_active_sets() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
        for trial in 0..300 {
            let r = 1 + trial % 5;
            // Positive definite (dim >= r) most of the time; rank-deficient sometimes.
            let dim = if trial % 7 == 0 { 1 + r / 2 } else { r + 2 };
            let (gram, b) = instance(&mut rng, r, dim);
            let c = [0.1, 1.0, 10.0][trial % 3];
            let sol = solve(&gram, &b, c, &[], 1e-10 * (1.0 + c), 100_000);
            assert!(sol.converged, "trial {trial}: gap {}", sol.gap);
            assert!(sol.alpha.iter().all(|&a| a >= 0.0));
            assert!(sol.alpha.iter().sum::<f64>() <= c * (1.0 + 1e-12));
            let (alpha, v) = brute_force(&gram, &b, c);
            assert!(
                (sol.value - v).abs() <= 1e-9 * (1.0 + v.abs()),
                "trial {trial}: {} vs {v}",
                sol.value
            );
            if dim >= r {
                // Strictly concave: the maximizer is unique.
                for (x, y) in sol.alpha.iter().zip(&alpha) {
                    assert!(
                        (x - y).abs() < 1e-5 * (1.0 + c),
                        "trial {trial}: {x} vs {y}"
                    );
                }
            }
        }
    }

    /// Strong duality on the working set, and warm starts reach the same optimum.
    #[test]
    fn gap_closes_and_warm_starts_agree() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let (gram, b) = instance(&mut rng, 6, 8);
        let cold = solve(&gram, &b, 2.0, &[], 1e-12, 100_000);
        let warm = solve(&gram, &b, 2.0, &[5.0, 5.0, 0.0, 1.0], 1e-12, 100_000);
        assert!((cold.value - warm.value).abs() < 1e-10);
        // P(w) with w = sum alpha a equals D(alpha) at the optimum.
        let g = gradient(&gram, &b, &cold.alpha);
        let quad: f64 = cold
            .alpha
            .iter()
            .zip(&b)
            .zip(&g)
            .map(|((a, bk), gk)| a * (bk - gk))
            .sum();
        let primal = 0.5 * quad + 2.0 * g.iter().cloned().fold(0.0, f64::max);
        assert!(
            (primal - cold.value).abs() < 1e-10,
            "{primal} vs {}",
            cold.value
        );
        // An iteration cap is reported, not hidden.
        let capped = solve(&gram, &b, 2.0, &[], 0.0, 1);
        assert_eq!(capped.iterations, 1);
        assert!(!capped.converged);
        // No cut: nothing to solve.
        let empty = solve(&[], &[], 1.0, &[], 1e-12, 10);
        assert_eq!((empty.value, empty.alpha.len()), (0.0, 0));
    }
}
