//! Arc marginals and the log partition function of the Gibbs distribution over dependency
//! trees, `p(y) = exp(s(y) - log Z)` with `s(y) = sum_m a(h(m), m)`: what the CRF loss (eq. 3
//! of martins2011) needs, since its gradient in arc space is `mu(h, m) - [h(m) = h]` with
//! `mu(h, m) = p(h(m) = h) = d log Z / d a(h, m)`.
//!
//! - [`matrix_tree`]: every tree, projective or not, by the matrix-tree theorem (Koo et al.
//!   2007; Smith & Smith 2007; McDonald & Satta 2007). With `theta(h, m) = exp a(h, m)`, the
//!   Laplacian over tokens `1..=n` is
//!
//!   ```text
//!   L[h, m] = -theta(h, m)                 (h != m)
//!   L[m, m] = sum_{h' != m} theta(h', m)   (h' over 1..=n with one root child, 0..=n without)
//!   ```
//!
//!   Several root children: `Z = det L` with the root's arcs in the diagonal (Koo et al. Sec.
//!   3.1). One root child (Koo et al. Sec. 3.3, their `L-hat`): the first row of `L` is
//!   replaced by the root's arcs, `L[1, m] = theta(0, m)`, and again `Z = det L`. Marginals
//!   are `d log det L / d a = theta * (derivative of L's entries) . L^-T`, i.e. for one root
//!   child
//!
//!   ```text
//!   mu(0, m) = theta(0, m) [L^-1]_{m,1}
//!   mu(h, m) = theta(h, m) ([m != 1] [L^-1]_{m,m} - [h != 1] [L^-1]_{m,h})
//!   ```
//!
//!   and `mu(0, m) = theta(0, m) [L^-1]_{m,m}`, `mu(h, m) = theta(h, m) ([L^-1]_{m,m} -
//!   [L^-1]_{m,h})` for several. Numerically safe for long sentences: column `m` of `L`
//!   holds only arcs into `m`, so the scores of column `m` are shifted by a constant `c_m`:
//!   by the best tree's arc into `m` (Chu-Liu-Edmonds), so that the best tree weighs 1 and
//!   `det L >= 1` (no underflow, even when the best arcs into the tokens form cycles far above
//!   every tree; if a weight overflows, by `max_h a(h, m)` instead), `log Z = log |det L| +
//!   sum_m c_m`, the determinant read off faer's LU with partial pivoting as a sum of logarithms,
//!   the inverse from the same factorization. When those cycles outweigh every tree by more
//!   than the precision keeps (tens of nats; CRF training on the Turkish Web Treebank reaches
//!   1600), the determinant and the marginals are differences of large numbers: an answer
//!   whose marginals leave `[0, 1]` or whose heads do not sum to 1 within `1e-10` is then
//!   recomputed by elimination without subtraction ([`matrix_tree_exact`],
//!   `elimination.rs`: the GTH algorithm in log space, marginals as escape
//!   probabilities), exact to rounding at any magnitude but about 15 times slower.
//! - [`inside_outside`]: projective trees, over Eisner's chart ([`super::eisner`]) with
//!   `log-sum-exp` in place of `max` (the inside pass, in log space) and the outside pass as
//!   reverse-mode differentiation of the inside pass: each chart item passes its adjoint
//!   `d log Z / d item` to the terms of its sum in proportion `exp(term - item) <= 1`, so the
//!   outside quantities are probabilities and never overflow. The adjoint of the incomplete
//!   span `[s, t]` is the marginal of its arc (Eisner 1996; Paskin 2001). One root child:
//!   `log Z = log sum_r exp(a(0, r) + C_left[1, r] + C_right[r, n])` over a chart of the
//!   tokens alone.
//!
//! Forbidden arcs (`-inf`, NaN) get probability exactly 0; `None` when no tree is left or
//! when an arc scores `+inf`.

use super::TreeDecoder;
use crate::task::structured::PartMarginals;
use faer::linalg::solvers::DenseSolveCore;
use faer::Mat;

/// `log sum_k exp v_k` (`-inf` for an empty or all `-inf` input).
/// The scores with NaN read as `-inf` (a forbidden arc); `None` if one is `+inf`.
fn forbid_nan(arc: &[f64]) -> Option<Vec<f64>> {
    if arc.contains(&f64::INFINITY) {
        return None;
    }
    Some(
        arc.iter()
            .map(|&v| if v.is_nan() { f64::NEG_INFINITY } else { v })
            .collect(),
    )
}

fn log_sum_exp(values: &[f64]) -> f64 {
    let m = values.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + values.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
}

/// `log Z` and the arc marginals (layout of `arc`: row = head, column = modifier, `(n + 1)^2`)
/// over every tree rooted at 0, by the matrix-tree theorem (Koo et al. 2007, Sec. 3.1 and, for
/// `single_root`, Sec. 3.3).
pub(crate) fn matrix_tree(n: usize, arc: &[f64], single_root: bool) -> Option<PartMarginals> {
    let n1 = n + 1;
    if n == 0 {
        return Some(PartMarginals {
            log_z: 0.0,
            expected: vec![0.0; n1 * n1],
        });
    }
    let arc = forbid_nan(arc)?;
    if (1..n1).any(|m| (0..n1).all(|h| h == m || arc[h * n1 + m] == f64::NEG_INFINITY)) {
        // A token with no allowed head: no tree.
        return None;
    }
    // Shift by the best tree's arcs, so that it weighs 1 and `det L >= 1` (no underflow,
    // even when the best arcs into the tokens form cycles far above every tree); should a
    // weight overflow or the result fail its checks, elimination without subtraction.
    let best = super::ChuLiuEdmonds { single_root }.decode(n, &arc);
    let mut tree_shift = vec![0.0; n1];
    for (k, &h) in best.iter().enumerate() {
        tree_shift[k + 1] = arc[h * n1 + k + 1];
    }
    matrix_tree_shifted(n, &arc, single_root, &tree_shift)
        .or_else(|| exact_marginals(n, &arc, single_root))
}

/// [`matrix_tree`] by elimination without subtraction alone (`elimination.rs`): exact
/// to rounding at any score magnitude, in `O(n^3)` logarithms and exponentials (the LU's
/// slower, safe twin; [`matrix_tree`] uses it when the LU's answer fails its checks).
#[cfg(test)]
pub(crate) fn matrix_tree_exact(n: usize, arc: &[f64], single_root: bool) -> Option<PartMarginals> {
    if n == 0 {
        return matrix_tree(0, arc, single_root);
    }
    exact_marginals(n, &forbid_nan(arc)?, single_root)
}

fn exact_marginals(n: usize, arc: &[f64], single_root: bool) -> Option<PartMarginals> {
    let (log_z, expected) = super::elimination::exact(n, arc, single_root)?;
    log_z
        .is_finite()
        .then_some(PartMarginals { log_z, expected })
}

/// [`matrix_tree`] with the scores of the arcs into `m` lowered by `shift[m]`.
fn matrix_tree_shifted(
    n: usize,
    arc: &[f64],
    single_root: bool,
    shift: &[f64],
) -> Option<PartMarginals> {
    let n1 = n + 1;
    let theta = |h: usize, m: usize| (arc[h * n1 + m] - shift[m]).exp();
    // Row i / column j of the matrix are tokens i + 1 / j + 1.
    let lap = Mat::<f64>::from_fn(n, n, |i, j| {
        let (h, m) = (i + 1, j + 1);
        if single_root && h == 1 {
            theta(0, m)
        } else if h == m {
            let first = if single_root { 1 } else { 0 };
            (first..n1).filter(|&k| k != m).map(|k| theta(k, m)).sum()
        } else {
            -theta(h, m)
        }
    });
    let lu = lap.partial_piv_lu();
    let u = lu.U();
    let mut log_det = 0.0;
    let mut negative = false;
    for k in 0..n {
        let d = u[(k, k)];
        if d == 0.0 || !d.is_finite() {
            return None;
        }
        log_det += d.abs().ln();
        negative ^= d < 0.0;
    }
    negative ^= odd_permutation(lu.P().arrays().0);
    if negative {
        return None;
    }
    let inv = lu.inverse();
    // The marginals subtract entries of the inverse, whose rounding grows with the
    // condition number `||L||_1 ||L^-1||_1`: past `MAX_CONDITION`, an arc's marginal may be
    // off by more than the checks below can see (an arc that shifted scores put e^146 above
    // the best tree's arc into its token once gave a certain arc 0.996, every column still
    // summing to 1), so the caller eliminates without subtraction.
    let norm1 = |f: &dyn Fn(usize, usize) -> f64| {
        (0..n)
            .map(|j| (0..n).map(|i| f(i, j).abs()).sum::<f64>())
            .fold(0.0, f64::max)
    };
    let condition = norm1(&|i, j| lap[(i, j)]) * norm1(&|i, j| inv[(i, j)]);
    if condition.is_nan() || condition > MAX_CONDITION {
        return None;
    }
    let mut expected = vec![0.0; n1 * n1];
    for m in 1..n1 {
        let j = m - 1;
        expected[m] = theta(0, m)
            * if single_root {
                inv[(j, 0)]
            } else {
                inv[(j, j)]
            };
        for h in (1..n1).filter(|&h| h != m) {
            let diag = if single_root && m == 1 {
                0.0
            } else {
                inv[(j, j)]
            };
            let off = if single_root && h == 1 {
                0.0
            } else {
                inv[(j, h - 1)]
            };
            expected[h * n1 + m] = theta(h, m) * (diag - off);
        }
    }
    // Rounding in an ill-conditioned matrix shows as marginals outside [0, 1] or tokens
    // without exactly one head in expectation (the caller then eliminates without
    // subtraction).
    let tol = 1e-10;
    if expected.iter().any(|v| !(-tol..=1.0 + tol).contains(v))
        || (1..n1).any(|m| ((0..n1).map(|h| expected[h * n1 + m]).sum::<f64>() - 1.0).abs() > tol)
    {
        return None;
    }
    expected.iter_mut().for_each(|v| *v = v.clamp(0.0, 1.0));
    Some(PartMarginals {
        log_z: log_det + shift.iter().sum::<f64>(),
        expected,
    })
}

/// The largest condition number of the shifted Laplacian whose LU answer [`matrix_tree`]
/// keeps: its rounding then stays below about `1e-10` in the marginals (`MAX_CONDITION`
/// times the unit roundoff, `2.2e-16`).
const MAX_CONDITION: f64 = 4.0e5;

/// Whether a permutation (as `perm[i]` = image of `i`) is odd: `n` minus its cycles.
fn odd_permutation(perm: &[usize]) -> bool {
    let mut seen = vec![false; perm.len()];
    let mut transpositions = 0;
    for start in 0..perm.len() {
        let mut len = 0usize;
        let mut k = start;
        while !seen[k] {
            seen[k] = true;
            k = perm[k];
            len += 1;
        }
        transpositions += len.saturating_sub(1);
    }
    transpositions % 2 == 1
}

/// The inside chart over Eisner's spans in log space (row-major `(n + 1) x (n + 1)`).
struct Inside {
    c_left: Vec<f64>,
    c_right: Vec<f64>,
    i_left: Vec<f64>,
    i_right: Vec<f64>,
    /// `log sum_q exp(C_right[s, q] + C_left[q + 1, t])`: the incomplete spans without their arc.
    split: Vec<f64>,
}

impl Inside {
    /// Eisner's recursions with `log-sum-exp` over positions `lo..=n` (`lo` = 0: the root
    /// takes part, no arc enters it; 1: tokens only).
    fn fill(n: usize, arc: &[f64], lo: usize) -> Inside {
        let n1 = n + 1;
        let mut c = Inside {
            c_left: vec![0.0; n1 * n1],
            c_right: vec![0.0; n1 * n1],
            i_left: vec![f64::NEG_INFINITY; n1 * n1],
            i_right: vec![f64::NEG_INFINITY; n1 * n1],
            split: vec![f64::NEG_INFINITY; n1 * n1],
        };
        let mut terms = Vec::with_capacity(n1);
        for k in 1..=n - lo {
            for s in lo..=n - k {
                let t = s + k;
                terms.clear();
                terms.extend((s..t).map(|q| c.c_right[s * n1 + q] + c.c_left[(q + 1) * n1 + t]));
                let v = log_sum_exp(&terms);
                c.split[s * n1 + t] = v;
                c.i_right[s * n1 + t] = v + arc[s * n1 + t];
                c.i_left[s * n1 + t] = if s == 0 {
                    f64::NEG_INFINITY
                } else {
                    v + arc[t * n1 + s]
                };
                terms.clear();
                terms.extend((s..t).map(|q| c.c_left[s * n1 + q] + c.i_left[q * n1 + t]));
                c.c_left[s * n1 + t] = log_sum_exp(&terms);
                terms.clear();
                terms.extend((s + 1..=t).map(|q| c.i_right[s * n1 + q] + c.c_right[q * n1 + t]));
                c.c_right[s * n1 + t] = log_sum_exp(&terms);
            }
        }
        c
    }
}

/// Adds `g exp(term - total)` to `*adj` (nothing when the weight is 0).
#[inline]
fn pass(adj: &mut f64, g: f64, term: f64, total: f64) {
    let w = (term - total).exp();
    if w > 0.0 {
        *adj += g * w;
    }
}

/// `log Z` and the arc marginals over *projective* trees rooted at 0 (one root child with
/// `single_root`), by inside-outside over Eisner's chart in log space.
pub(crate) fn inside_outside(n: usize, arc: &[f64], single_root: bool) -> Option<PartMarginals> {
    let n1 = n + 1;
    let mut expected = vec![0.0; n1 * n1];
    if n == 0 {
        return Some(PartMarginals {
            log_z: 0.0,
            expected,
        });
    }
    let arc = forbid_nan(arc)?;
    let lo = usize::from(single_root);
    let ch = Inside::fill(n, &arc, lo);
    // Adjoints d log Z / d item.
    let mut g_cl = vec![0.0; n1 * n1];
    let mut g_cr = vec![0.0; n1 * n1];
    let mut g_il = vec![0.0; n1 * n1];
    let mut g_ir = vec![0.0; n1 * n1];
    let log_z = if single_root {
        let root: Vec<f64> = (1..=n)
            .map(|r| arc[r] + ch.c_left[n1 + r] + ch.c_right[r * n1 + n])
            .collect();
        let log_z = log_sum_exp(&root);
        for (r, &v) in (1..=n).zip(&root) {
            let w = (v - log_z).exp();
            expected[r] = w;
            g_cl[n1 + r] += w;
            g_cr[r * n1 + n] += w;
        }
        log_z
    } else {
        g_cr[n] = 1.0;
        ch.c_right[n]
    };
    if !log_z.is_finite() {
        return None;
    }
    // Longest spans first; within a span the complete items first (they use the incomplete
    // item of the same span).
    for k in (1..=n - lo).rev() {
        for s in lo..=n - k {
            let t = s + k;
            let st = s * n1 + t;
            let g = g_cl[st];
            if g != 0.0 {
                for q in s..t {
                    let term = ch.c_left[s * n1 + q] + ch.i_left[q * n1 + t];
                    let w = (term - ch.c_left[st]).exp();
                    if w > 0.0 {
                        g_cl[s * n1 + q] += g * w;
                        g_il[q * n1 + t] += g * w;
                    }
                }
            }
            let g = g_cr[st];
            if g != 0.0 {
                for q in s + 1..=t {
                    let term = ch.i_right[s * n1 + q] + ch.c_right[q * n1 + t];
                    let w = (term - ch.c_right[st]).exp();
                    if w > 0.0 {
                        g_ir[s * n1 + q] += g * w;
                        g_cr[q * n1 + t] += g * w;
                    }
                }
            }
            // I_right[s,t] = v + a(s,t), I_left[s,t] = v + a(t,s), v shared.
            let (gr, gl) = (g_ir[st], g_il[st]);
            expected[st] += gr;
            if s > 0 {
                expected[t * n1 + s] += gl;
            }
            let v = ch.split[st];
            for g in [gr, gl] {
                if g == 0.0 || !v.is_finite() {
                    continue;
                }
                for q in s..t {
                    let term = ch.c_right[s * n1 + q] + ch.c_left[(q + 1) * n1 + t];
                    pass(&mut g_cr[s * n1 + q], g, term, v);
                    pass(&mut g_cl[(q + 1) * n1 + t], g, term, v);
                }
            }
        }
    }
    if expected.iter().any(|v| !v.is_finite()) {
        return None;
    }
    Some(PartMarginals { log_z, expected })
}
