//! Forward-backward in probability space with one scale factor per position (Rabiner 1989,
//! Sec. V.A; the scaled recursions of CRFsuite's first-order CRF): the scores are
//! exponentiated once (`n L + L^2` exponentials, `(n - 1) L^2` for position-dependent label
//! pairs) and the recursions are multiply-adds, where the log-space recursions of
//! [`super::forward_backward`]'s fallback take about `3 n L^2` exponentials.
//!
//! With `U[i, b] = exp(u[i, b] - m_i)` (`m_i = max_b u[i, b]`) and `E_i[a, b] = exp(T_i[a, b]
//! - t_i)` (`t_i = max T_i`):
//!
//! ```text
//! a_0 = U[0, .] / c_0,  a_i[b] = U[i, b] sum_a a_{i-1}[a] E_i[a, b] / c_i  (c_i: a_i sums to 1)
//! b_{n-1} = 1,          b_i[a] = sum_b E_{i+1}[a, b] U[i+1, b] b_{i+1}[b] / c_{i+1}
//! log Z = sum_i (log c_i + m_i) + sum_{i>0} t_i
//! p(y_i = b) = a_i[b] b_i[b],  p(y_{i-1} = a, y_i = b) = a_{i-1}[a] E_i[a, b] U[i, b] b_i[b] / c_i
//! ```
//!
//! A scale factor below [`MIN_SCALE`] (mass lost to underflow, scores hundreds apart) or a
//! non-finite backward value makes it give up (`None`): the caller then runs the log-space
//! recursions, which cannot underflow.

/// Smallest accepted scale factor: terms lost to underflow (below ~1e-308) are then below
/// 1e-100 relative to what is kept.
pub(crate) const MIN_SCALE: f64 = 1e-200;

/// `log Z` and the node marginals (`n x L`); `edge(i, a L + b, p)` receives
/// `p(y_{i-1} = a, y_i = b)` for `i` in `1..n`, called only when the result is `Some`.
/// `trans_at(i)` gives `T_i` (`L x L`) for `i` in `1..n`.
pub(crate) fn forward_backward_scaled<'t>(
    unary: &[f64],
    trans_at: impl Fn(usize) -> &'t [f64],
    n_labels: usize,
    position_dependent: bool,
    mut edge: impl FnMut(usize, usize, f64),
) -> Option<(f64, Vec<f64>)> {
    let l = n_labels;
    if l == 0 || unary.is_empty() {
        return Some((0.0, Vec::new()));
    }
    let n = unary.len() / l;
    let l2 = l * l;
    // U (n x L) and its shifts.
    let mut u = vec![0.0; n * l];
    let mut log_z = 0.0;
    for (row, out) in unary.chunks_exact(l).zip(u.chunks_exact_mut(l)) {
        let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !m.is_finite() {
            return None;
        }
        log_z += m;
        for (o, &s) in out.iter_mut().zip(row) {
            *o = (s - m).exp();
        }
    }
    // E_i: one matrix for plain label pairs, one per position otherwise.
    let n_mats = if position_dependent {
        n - 1
    } else {
        1.min(n - 1)
    };
    let mut e = vec![0.0; n_mats * l2];
    for k in 0..n_mats {
        let t = trans_at(k + 1);
        let m = t.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !m.is_finite() {
            return None;
        }
        log_z += if position_dependent {
            m
        } else {
            m * (n - 1) as f64
        };
        for (o, &s) in e[k * l2..(k + 1) * l2].iter_mut().zip(t) {
            *o = (s - m).exp();
        }
    }
    let e_at = |i: usize| -> &[f64] {
        let k = if position_dependent { i - 1 } else { 0 };
        &e[k * l2..(k + 1) * l2]
    };
    // Forward pass, normalized per position.
    let mut alpha = u.clone();
    let mut scale = vec![0.0; n];
    for i in 0..n {
        if i > 0 {
            let (prev, cur) = alpha.split_at_mut(i * l);
            let prev = &prev[(i - 1) * l..];
            let cur = &mut cur[..l];
            let mut acc = vec![0.0; l];
            let ei = e_at(i);
            for (a, &pa) in prev.iter().enumerate() {
                for (o, &w) in acc.iter_mut().zip(&ei[a * l..(a + 1) * l]) {
                    *o += pa * w;
                }
            }
            for (c, s) in cur.iter_mut().zip(&acc) {
                *c *= s;
            }
        }
        let row = &mut alpha[i * l..(i + 1) * l];
        let c: f64 = row.iter().sum();
        if !(c >= MIN_SCALE && c.is_finite()) {
            return None;
        }
        row.iter_mut().for_each(|v| *v /= c);
        scale[i] = c;
        log_z += c.ln();
    }
    // Backward pass with the forward scales.
    let mut beta = vec![1.0; n * l];
    let mut w = vec![0.0; l];
    for i in (0..n - 1).rev() {
        for (wb, (ub, bb)) in w
            .iter_mut()
            .zip(u[(i + 1) * l..(i + 2) * l].iter().zip(&beta[(i + 1) * l..]))
        {
            *wb = ub * bb / scale[i + 1];
        }
        let ei = e_at(i + 1);
        for a in 0..l {
            let v: f64 = ei[a * l..(a + 1) * l]
                .iter()
                .zip(&w)
                .map(|(x, y)| x * y)
                .sum();
            if !v.is_finite() {
                return None;
            }
            beta[i * l + a] = v;
        }
    }
    let node: Vec<f64> = alpha.iter().zip(&beta).map(|(a, b)| a * b).collect();
    for i in 1..n {
        for (wb, (ub, bb)) in w
            .iter_mut()
            .zip(u[i * l..(i + 1) * l].iter().zip(&beta[i * l..]))
        {
            *wb = ub * bb / scale[i];
        }
        let ei = e_at(i);
        for a in 0..l {
            let pa = alpha[(i - 1) * l + a];
            for b in 0..l {
                edge(i, a * l + b, pa * ei[a * l + b] * w[b]);
            }
        }
    }
    Some((log_z, node))
}

#[cfg(test)]
mod tests {
    use super::super::forward_backward_with;
    use super::*;
    use rand::{Rng, SeedableRng};

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
    }

    /// The scaled recursions against the log-space ones (the slow twin, itself checked
    /// against enumeration in the parent module): `log Z`, node and edge marginals, plain
    /// and position-dependent label pairs, up to 60 tokens.
    #[test]
    fn scaled_forward_backward_matches_log_space() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(41);
        for trial in 0..200 {
            let n = 1 + trial % 60;
            let l = 1 + trial % 7;
            let scale = [0.5, 3.0, 20.0][trial % 3];
            let positional = trial % 2 == 1;
            let u: Vec<f64> = (0..n * l).map(|_| rng.gen_range(-scale..scale)).collect();
            let nt = if positional { (n - 1).max(1) } else { 1 };
            let t: Vec<f64> = (0..nt * l * l)
                .map(|_| rng.gen_range(-scale..scale))
                .collect();
            let l2 = l * l;
            let at = |i: usize| -> &[f64] {
                if positional {
                    &t[(i - 1) * l2..i * l2]
                } else {
                    &t[..l2]
                }
            };
            let mut e_log = vec![0.0; n * l2];
            let (z_log, node_log) =
                forward_backward_with(&u, at, l, |i, k, p| e_log[i * l2 + k] = p);
            let mut e_sc = vec![0.0; n * l2];
            let (z_sc, node_sc) =
                forward_backward_scaled(&u, at, l, positional, |i, k, p| e_sc[i * l2 + k] = p)
                    .expect("moderate scores stay in range");
            assert!(close(z_sc, z_log, 1e-12), "{z_sc} vs {z_log}");
            for (a, b) in node_sc.iter().zip(&node_log).chain(e_sc.iter().zip(&e_log)) {
                assert!((a - b).abs() < 1e-11, "trial {trial}: {a} vs {b}");
            }
        }
    }

    /// Scores far apart lose the mass to underflow: the scaled recursions give up (and
    /// report no edge), `forward_backward` falls back to log space and stays exact.
    #[test]
    fn underflow_gives_up_and_the_caller_falls_back() {
        // Label 0 is all but forced at both tokens, and the pair (0, 0) costs 2000.
        let u = vec![0.0, -1e4, 0.0, -1e4];
        let t = vec![-2000.0, 0.0, 0.0, 0.0];
        let mut called = false;
        assert!(
            forward_backward_scaled(&u, |_| &t[..], 2, false, |_, _, _| called = true).is_none()
        );
        assert!(!called);
        let fb = super::super::forward_backward(&u, &t, 2);
        let best = -2000.0;
        assert!(close(fb.log_z, best, 1e-12), "{}", fb.log_z);
        assert!((fb.node[0] - 1.0).abs() < 1e-12 && (fb.node[2] - 1.0).abs() < 1e-12);
        assert!(fb.node[3].abs() < 1e-12);
        assert!((fb.edge[0] - 1.0).abs() < 1e-12);
    }
}
