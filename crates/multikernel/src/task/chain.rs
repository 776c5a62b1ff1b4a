//! Inference in a first-order chain (sequence labeling, Sec. 2.1 and 2.3 of Martins et al.
//! 2011): the score of a label sequence `y` of length `n` over `L` labels is
//!
//! ```text
//! s(y) = sum_i u[i, y_i] + sum_{i<n-1} T[y_i, y_{i+1}]
//! ```
//!
//! with unigram scores `u` (`n x L`, row-major) and label-pair (bigram) scores `T` (`L x L`,
//! row-major, `T[a * L + b]` for `a` followed by `b`). This module gives the decoders the
//! losses of eq. (3) and (4) need:
//! - [`viterbi`]: `argmax_y s(y)` (inference, eq. 1);
//! - [`loss_augmented_viterbi`]: `argmax_y s(y) + c(y, y*)` with the (scaled) Hamming cost, the
//!   decoding step of the structured hinge loss (eq. 4; line 6 of Alg. 3);
//! - [`forward_backward`]: `log Z = log sum_y exp s(y)` and the unigram and bigram marginals
//!   for the CRF loss (eq. 3): scaled recursions in probability space ([`scaled`]), log space
//!   when they would underflow.
//!
//! Ties are broken towards the smaller label, so every decoder is deterministic.
//!
//! The `_at` variants take label-pair scores that vary with the position (`T_i`, `(n - 1) x L
//! x L`, `T_i` between tokens `i - 1` and `i` at `trans[(i - 1) L^2..]`): CRF++'s bigram
//! templates with macros (`B01:%x[0,0]`) conjoin the label pair with an observation at `i`.

pub(crate) mod scaled;

/// Score `s(y)` of a label sequence.
pub(crate) fn sequence_score(unary: &[f64], trans: &[f64], n_labels: usize, y: &[usize]) -> f64 {
    let l = n_labels;
    let mut s = 0.0;
    for (i, &yi) in y.iter().enumerate() {
        s += unary[i * l + yi];
        if i > 0 {
            s += trans[y[i - 1] * l + yi];
        }
    }
    s
}

/// Number of positions where two label sequences differ.
pub(crate) fn hamming(a: &[usize], b: &[usize]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x != y).count()
}

/// The best label sequence and its score: `max_y s(y)` by dynamic programming,
/// O(n L^2). An empty sequence scores 0.
pub(crate) fn viterbi(unary: &[f64], trans: &[f64], n_labels: usize) -> (f64, Vec<usize>) {
    viterbi_with(unary, |_| trans, n_labels, |_, _| 0.0)
}

/// [`viterbi`] with position-dependent label-pair scores (`(n - 1) x L x L`).
pub(crate) fn viterbi_at(unary: &[f64], trans: &[f64], n_labels: usize) -> (f64, Vec<usize>) {
    let l2 = n_labels * n_labels;
    viterbi_with(
        unary,
        |i| &trans[(i - 1) * l2..i * l2],
        n_labels,
        |_, _| 0.0,
    )
}

/// [`loss_augmented_viterbi`] with position-dependent label-pair scores.
pub(crate) fn loss_augmented_viterbi_at(
    unary: &[f64],
    trans: &[f64],
    n_labels: usize,
    gold: &[usize],
    cost: f64,
) -> (f64, Vec<usize>) {
    let l2 = n_labels * n_labels;
    viterbi_with(
        unary,
        |i| &trans[(i - 1) * l2..i * l2],
        n_labels,
        |i, y| if gold[i] == y { 0.0 } else { cost },
    )
}

/// `max_y s(y) + cost * hamming(y, gold)` and its argmax (loss-augmented decoding with the
/// Hamming cost, eq. 4 of martins2011). Returns the augmented score.
pub(crate) fn loss_augmented_viterbi(
    unary: &[f64],
    trans: &[f64],
    n_labels: usize,
    gold: &[usize],
    cost: f64,
) -> (f64, Vec<usize>) {
    viterbi_with(
        unary,
        |_| trans,
        n_labels,
        |i, y| {
            if gold[i] == y {
                0.0
            } else {
                cost
            }
        },
    )
}

/// Viterbi with an extra unigram term `extra(i, y)` added to the unigram scores, and the
/// label-pair scores `trans_at(i)` between tokens `i - 1` and `i`.
fn viterbi_with<'t>(
    unary: &[f64],
    trans_at: impl Fn(usize) -> &'t [f64],
    n_labels: usize,
    extra: impl Fn(usize, usize) -> f64,
) -> (f64, Vec<usize>) {
    let l = n_labels;
    if l == 0 || unary.is_empty() {
        return (0.0, Vec::new());
    }
    let n = unary.len() / l;
    let mut delta = vec![0.0; l];
    let mut next = vec![0.0; l];
    let mut back = vec![0usize; n * l];
    for (y, d) in delta.iter_mut().enumerate() {
        *d = unary[y] + extra(0, y);
    }
    for i in 1..n {
        let trans = trans_at(i);
        debug_assert_eq!(trans.len(), l * l);
        for b in 0..l {
            let mut best = f64::NEG_INFINITY;
            let mut arg = 0;
            for (a, &da) in delta.iter().enumerate() {
                let v = da + trans[a * l + b];
                if v > best {
                    best = v;
                    arg = a;
                }
            }
            next[b] = best + unary[i * l + b] + extra(i, b);
            back[i * l + b] = arg;
        }
        std::mem::swap(&mut delta, &mut next);
    }
    let mut best = f64::NEG_INFINITY;
    let mut arg = 0;
    for (y, &d) in delta.iter().enumerate() {
        if d > best {
            best = d;
            arg = y;
        }
    }
    let mut path = vec![0; n];
    path[n - 1] = arg;
    for i in (1..n).rev() {
        path[i - 1] = back[i * l + path[i]];
    }
    (best, path)
}

/// Log-partition function and marginals of the chain's Gibbs distribution
/// `p(y) = exp(s(y) - log Z)`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Marginals {
    /// `log Z = log sum_y exp s(y)`.
    pub log_z: f64,
    /// `p(y_i = y)`, `n x L` row-major.
    pub node: Vec<f64>,
    /// `sum_i p(y_i = a, y_{i+1} = b)`, `L x L` row-major (expected bigram counts).
    pub edge: Vec<f64>,
}

/// `log sum_k exp(v_k)` computed stably.
fn log_sum_exp(v: impl Iterator<Item = f64> + Clone) -> f64 {
    let m = v.clone().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY || !m.is_finite() {
        return m;
    }
    m + v.map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// Forward-backward: `log Z` and the marginals, O(n L^2). Runs the scaled recursions in
/// probability space ([`scaled`]; `n L + L^2` exponentials) and falls back to log space
/// when scores hundreds apart would underflow them.
pub(crate) fn forward_backward(unary: &[f64], trans: &[f64], n_labels: usize) -> Marginals {
    let l = n_labels;
    let mut edge = vec![0.0; l * l];
    let res = scaled::forward_backward_scaled(unary, |_| trans, l, false, |_, k, p| edge[k] += p);
    let (log_z, node) = res.unwrap_or_else(|| {
        edge.iter_mut().for_each(|e| *e = 0.0);
        forward_backward_with(unary, |_| trans, l, |_, k, p| edge[k] += p)
    });
    Marginals { log_z, node, edge }
}

/// [`forward_backward`] with position-dependent label-pair scores (`(n - 1) x L x L`); the
/// edge marginals are per position: `edge[(i - 1) L^2 + a L + b] = p(y_{i-1} = a, y_i = b)`.
pub(crate) fn forward_backward_at(unary: &[f64], trans: &[f64], n_labels: usize) -> Marginals {
    let l2 = n_labels * n_labels;
    let mut edge = vec![0.0; trans.len()];
    let at = |i: usize| &trans[(i - 1) * l2..i * l2];
    let res = scaled::forward_backward_scaled(unary, at, n_labels, true, |i, k, p| {
        edge[(i - 1) * l2 + k] = p
    });
    let (log_z, node) = res.unwrap_or_else(|| {
        forward_backward_with(unary, at, n_labels, |i, k, p| edge[(i - 1) * l2 + k] = p)
    });
    Marginals { log_z, node, edge }
}

/// Forward-backward with the label-pair scores `trans_at(i)` between tokens `i - 1` and `i`;
/// `edge(i, a L + b, p)` receives each pair marginal. Returns `log Z` and the node marginals.
fn forward_backward_with<'t>(
    unary: &[f64],
    trans_at: impl Fn(usize) -> &'t [f64],
    n_labels: usize,
    mut edge: impl FnMut(usize, usize, f64),
) -> (f64, Vec<f64>) {
    let l = n_labels;
    if l == 0 || unary.is_empty() {
        return (0.0, Vec::new());
    }
    let n = unary.len() / l;
    // alpha[i, b] = log sum over y_0..y_i with y_i = b of exp(partial score).
    let mut alpha = vec![0.0; n * l];
    alpha[..l].copy_from_slice(&unary[..l]);
    for i in 1..n {
        let trans = trans_at(i);
        let (prev, cur) = alpha.split_at_mut(i * l);
        let prev = &prev[(i - 1) * l..];
        for b in 0..l {
            cur[b] = unary[i * l + b] + log_sum_exp((0..l).map(|a| prev[a] + trans[a * l + b]));
        }
    }
    // beta[i, a] = log sum over y_{i+1}.. of exp(score of the rest) given y_i = a.
    let mut beta = vec![0.0; n * l];
    for i in (0..n - 1).rev() {
        let (cur, next) = beta.split_at_mut((i + 1) * l);
        let cur = &mut cur[i * l..];
        let next = &next[..l];
        let u = &unary[(i + 1) * l..(i + 2) * l];
        let trans = trans_at(i + 1);
        for a in 0..l {
            cur[a] = log_sum_exp((0..l).map(|b| trans[a * l + b] + u[b] + next[b]));
        }
    }
    let log_z = log_sum_exp(alpha[(n - 1) * l..].iter().copied());
    let node: Vec<f64> = alpha
        .iter()
        .zip(&beta)
        .map(|(a, b)| (a + b - log_z).exp())
        .collect();
    for i in 0..n - 1 {
        let trans = trans_at(i + 1);
        for a in 0..l {
            let fa = alpha[i * l + a];
            for b in 0..l {
                edge(
                    i + 1,
                    a * l + b,
                    (fa + trans[a * l + b] + unary[(i + 1) * l + b] + beta[(i + 1) * l + b]
                        - log_z)
                        .exp(),
                );
            }
        }
    }
    (log_z, node)
}

/// `log sum_k exp(h_k + l_k)` of values each held as a large part `h_k` (sums and
/// differences of scores) and a small part `l_k` (logarithms of counts and sums of
/// probabilities), returned the same way: `(M, ln sum_k exp((h_k - M) + l_k))` with `M =
/// max_k h_k`. The large parts are subtracted from each other before the small ones are
/// added, so that `ln 2` of two tied labels is not rounded away next to 1e300.
fn log_sum_exp_split(v: impl Iterator<Item = (f64, f64)> + Clone) -> (f64, f64) {
    let m = v.clone().map(|(h, _)| h).fold(f64::NEG_INFINITY, f64::max);
    if !m.is_finite() {
        return (m, 0.0);
    }
    (m, v.map(|(h, l)| ((h - m) + l).exp()).sum::<f64>().ln())
}

/// The node marginals and the probability of `path` at any score magnitude (scores up to
/// the largest float, where `s(y)` and `log Z` themselves overflow or cancel): the
/// log-space form of the scaled recursions (Rabiner 1989, Sec. V.A; [`scaled`]) on scores
/// shifted by their maxima. With `u'[i, b] = u[i, b] - max_b u[i, b]`, `T'_i = T_i - max
/// T_i` (every term `<= 0`) and `lse` the stable log-sum-exp:
///
/// ```text
/// f_0 = u'[0, .] - c_0,   f_i[b] = u'[i, b] + lse_a(f_{i-1}[a] + T'_i[a, b]) - c_i
///                         (c_i: the lse of the unnormalized f_i, so that lse f_i = 0)
/// g_{n-1} = 0,            g_i[a] = lse_b(T'_{i+1}[a, b] + u'[i+1, b] + g_{i+1}[b]) - c_{i+1}
/// p(y_i = b) = exp(f_i[b] + g_i[b]),
/// p(y) = exp(sum_i (u'[i, y_i] + T'_i[y_{i-1}, y_i] - c_i))   (log Z' = sum_i c_i)
/// ```
///
/// Every quantity is relative to one position's scale, so nothing adds up to the sentence's
/// total (which overflows). Each log-value is held as a large part (scores, exact sums of
/// them) and a small part (logarithms of sums, `log_sum_exp_split`): `f_i[b] + g_i[b]`
/// cancels the large parts first, which near 1e300 would otherwise swallow the small
/// ones. `None` when a score is not finite or when the shifted scores leave no mass at
/// some position (score differences beyond the float range). `trans_at(i)` gives `T_i`
/// (`L x L`) for `i` in `1..n`. For prediction: `O(n L^2)` exponentials, where
/// [`forward_backward`] takes `n L + L^2` on ordinary scores.
pub(crate) fn stable_marginals<'t>(
    unary: &[f64],
    trans_at: impl Fn(usize) -> &'t [f64],
    n_labels: usize,
    path: &[usize],
) -> Option<(f64, Vec<f64>)> {
    let l = n_labels;
    if l == 0 || unary.is_empty() {
        return Some((1.0, Vec::new()));
    }
    let n = unary.len() / l;
    let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
    let mut u = unary.to_vec();
    for row in u.chunks_exact_mut(l) {
        if !finite(row) {
            return None;
        }
        let m = max(row);
        row.iter_mut().for_each(|x| *x -= m);
    }
    let mut t = Vec::with_capacity(n.saturating_sub(1) * l * l);
    for i in 1..n {
        let ti = trans_at(i);
        if !finite(ti) {
            return None;
        }
        let m = max(ti);
        t.extend(ti.iter().map(|x| x - m));
    }
    let t_at = |i: usize| &t[(i - 1) * l * l..i * l * l];
    // Forward: f as large and small parts; c_i as its large part M_i and small part c'_i.
    let (mut fh, mut fl) = (vec![0.0; n * l], vec![0.0; n * l]);
    let (mut big, mut small) = (vec![0.0; n], vec![0.0; n]);
    for i in 0..n {
        let (head, cur_h) = fh.split_at_mut(i * l);
        let cur_h = &mut cur_h[..l];
        let (head_l, cur_l) = fl.split_at_mut(i * l);
        let cur_l = &mut cur_l[..l];
        for b in 0..l {
            (cur_h[b], cur_l[b]) = if i == 0 {
                (u[b], 0.0)
            } else {
                let ti = t_at(i);
                let (ph, pl) = (&head[(i - 1) * l..], &head_l[(i - 1) * l..]);
                let (m, r) = log_sum_exp_split((0..l).map(|a| (ph[a] + ti[a * l + b], pl[a])));
                (u[i * l + b] + m, r)
            };
        }
        let (m, r) = log_sum_exp_split(cur_h.iter().copied().zip(cur_l.iter().copied()));
        if !(m.is_finite() && r.is_finite()) {
            return None;
        }
        (big[i], small[i]) = (m, r);
        cur_h.iter_mut().for_each(|x| *x -= m);
        cur_l.iter_mut().for_each(|x| *x -= r);
    }
    let (mut gh, mut gl) = (vec![0.0; n * l], vec![0.0; n * l]);
    for i in (0..n - 1).rev() {
        let ti = t_at(i + 1);
        for a in 0..l {
            let (m, r) = log_sum_exp_split((0..l).map(|b| {
                let k = (i + 1) * l + b;
                (ti[a * l + b] + u[k] + gh[k], gl[k])
            }));
            gh[i * l + a] = m - big[i + 1];
            gl[i * l + a] = r - small[i + 1];
        }
    }
    let node: Vec<f64> = (0..n * l)
        .map(|k| ((fh[k] + gh[k]) + (fl[k] + gl[k])).exp())
        .collect();
    // The large parts of log p(y) first (they cancel across positions), then the small.
    let large: f64 = (0..n)
        .map(|i| {
            let pair = if i > 0 {
                t_at(i)[path[i - 1] * l + path[i]]
            } else {
                0.0
            };
            u[i * l + path[i]] + pair - big[i]
        })
        .sum();
    let p = (large - small.iter().sum::<f64>()).exp();
    let sums_to_one = node
        .chunks_exact(l)
        .all(|r| (r.iter().sum::<f64>() - 1.0).abs() < 1e-6);
    (p.is_finite() && p <= 1.0 + 1e-9 && finite(&node) && sums_to_one).then_some((p, node))
}

/// `log Z = log sum_y exp s(y)` alone (the forward pass).
#[cfg(test)]
pub(crate) fn log_partition(unary: &[f64], trans: &[f64], n_labels: usize) -> f64 {
    let l = n_labels;
    if l == 0 || unary.is_empty() {
        return 0.0;
    }
    let n = unary.len() / l;
    let mut alpha = unary[..l].to_vec();
    let mut next = vec![0.0; l];
    for i in 1..n {
        for (b, nb) in next.iter_mut().enumerate() {
            *nb = unary[i * l + b] + log_sum_exp((0..l).map(|a| alpha[a] + trans[a * l + b]));
        }
        std::mem::swap(&mut alpha, &mut next);
    }
    log_sum_exp(alpha.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// All label sequences of length n over l labels.
    fn all_sequences(n: usize, l: usize) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new()];
        for _ in 0..n {
            out = out
                .into_iter()
                .flat_map(|s| {
                    (0..l).map(move |y| {
                        let mut t = s.clone();
                        t.push(y);
                        t
                    })
                })
                .collect();
        }
        out
    }

    fn random_chain(rng: &mut impl Rng, n: usize, l: usize, scale: f64) -> (Vec<f64>, Vec<f64>) {
        let u = (0..n * l).map(|_| rng.gen_range(-scale..scale)).collect();
        let t = (0..l * l).map(|_| rng.gen_range(-scale..scale)).collect();
        (u, t)
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
    }

    /// The position-dependent variants against enumerating every sequence (scores
    /// `sum_i u[i, y_i] + sum_{i>0} T_i[y_{i-1}, y_i]` by their definition), and equal to the
    /// plain ones when every `T_i` is the same.
    #[test]
    fn positional_label_pairs_match_enumeration() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(29);
        for (n, l) in [(1, 2), (2, 3), (3, 2), (4, 3), (5, 2)] {
            let (u, _) = random_chain(&mut rng, n, l, 2.0);
            let t: Vec<f64> = (0..(n - 1) * l * l)
                .map(|_| rng.gen_range(-2.0..2.0))
                .collect();
            let gold: Vec<usize> = (0..n).map(|_| rng.gen_range(0..l)).collect();
            let all = all_sequences(n, l);
            let score = |y: &[usize]| -> f64 {
                (0..n).map(|i| u[i * l + y[i]]).sum::<f64>()
                    + (1..n)
                        .map(|i| t[(i - 1) * l * l + y[i - 1] * l + y[i]])
                        .sum::<f64>()
            };
            let best = all
                .iter()
                .map(|y| score(y))
                .fold(f64::NEG_INFINITY, f64::max);
            let (v, path) = viterbi_at(&u, &t, l);
            assert!(close(v, best, 1e-12) && close(score(&path), best, 1e-12));
            let aug = |y: &[usize]| score(y) + 0.7 * hamming(y, &gold) as f64;
            let best_aug = all.iter().map(|y| aug(y)).fold(f64::NEG_INFINITY, f64::max);
            let (va, pa) = loss_augmented_viterbi_at(&u, &t, l, &gold, 0.7);
            assert!(close(va, best_aug, 1e-12) && close(aug(&pa), best_aug, 1e-12));
            let log_z = all.iter().map(|y| score(y).exp()).sum::<f64>().ln();
            let m = forward_backward_at(&u, &t, l);
            assert!(close(m.log_z, log_z, 1e-12));
            let mut node = vec![0.0; n * l];
            let mut edge = vec![0.0; t.len()];
            for y in &all {
                let p = (score(y) - log_z).exp();
                for i in 0..n {
                    node[i * l + y[i]] += p;
                    if i > 0 {
                        edge[(i - 1) * l * l + y[i - 1] * l + y[i]] += p;
                    }
                }
            }
            assert!(m.node.iter().zip(&node).all(|(a, b)| (a - b).abs() < 1e-12));
            assert!(m.edge.iter().zip(&edge).all(|(a, b)| (a - b).abs() < 1e-12));
            // The same T_i everywhere: the plain routines, to the bit.
            let t0: Vec<f64> = t[..(l * l).min(t.len())].to_vec();
            if n > 1 {
                let tiled: Vec<f64> = (1..n).flat_map(|_| t0.iter().copied()).collect();
                assert_eq!(viterbi_at(&u, &tiled, l), viterbi(&u, &t0, l));
                let (a, b) = (
                    forward_backward_at(&u, &tiled, l),
                    forward_backward(&u, &t0, l),
                );
                assert_eq!((a.log_z, a.node), (b.log_z, b.node));
            }
        }
    }

    /// Viterbi and loss-augmented Viterbi return the maximum over all sequences, and a
    /// sequence that attains it.
    #[test]
    fn viterbi_matches_enumeration() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for trial in 0..200 {
            let n = 1 + trial % 5;
            let l = 2 + trial % 3;
            let (u, t) = random_chain(&mut rng, n, l, 2.0);
            let gold: Vec<usize> = (0..n).map(|_| rng.gen_range(0..l)).collect();
            let cost = [0.5, 1.0, 3.0][trial % 3];
            let seqs = all_sequences(n, l);
            let best = seqs
                .iter()
                .map(|y| sequence_score(&u, &t, l, y))
                .fold(f64::NEG_INFINITY, f64::max);
            let (s, path) = viterbi(&u, &t, l);
            assert!(close(s, best, 1e-12), "viterbi {s} vs {best}");
            assert!(close(sequence_score(&u, &t, l, &path), best, 1e-12));
            let aug =
                |y: &Vec<usize>| sequence_score(&u, &t, l, y) + cost * hamming(y, &gold) as f64;
            let best_aug = seqs.iter().map(aug).fold(f64::NEG_INFINITY, f64::max);
            let (sa, pa) = loss_augmented_viterbi(&u, &t, l, &gold, cost);
            assert!(close(sa, best_aug, 1e-12), "augmented {sa} vs {best_aug}");
            assert!(close(aug(&pa), best_aug, 1e-12));
        }
    }

    /// log Z and the marginals equal their definitions summed over all sequences, also with
    /// large scores (log space must not overflow).
    #[test]
    fn forward_backward_matches_enumeration() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for trial in 0..120 {
            let n = 1 + trial % 4;
            let l = 2 + trial % 3;
            let scale = if trial % 4 == 3 { 400.0 } else { 2.0 };
            let (u, t) = random_chain(&mut rng, n, l, scale);
            let seqs = all_sequences(n, l);
            let scores: Vec<f64> = seqs.iter().map(|y| sequence_score(&u, &t, l, y)).collect();
            let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let log_z = m + scores.iter().map(|s| (s - m).exp()).sum::<f64>().ln();
            let fb = forward_backward(&u, &t, l);
            assert!(close(fb.log_z, log_z, 1e-12), "{} vs {log_z}", fb.log_z);
            assert!(close(log_partition(&u, &t, l), log_z, 1e-12));
            let mut node = vec![0.0; n * l];
            let mut edge = vec![0.0; l * l];
            for (y, s) in seqs.iter().zip(&scores) {
                let p = (s - log_z).exp();
                for i in 0..n {
                    node[i * l + y[i]] += p;
                    if i + 1 < n {
                        edge[y[i] * l + y[i + 1]] += p;
                    }
                }
            }
            for (a, b) in fb.node.iter().zip(&node) {
                assert!((a - b).abs() < 1e-9, "node {a} vs {b}");
            }
            for (a, b) in fb.edge.iter().zip(&edge) {
                assert!((a - b).abs() < 1e-9, "edge {a} vs {b}");
            }
            // Each position's marginals sum to one.
            for i in 0..n {
                let s: f64 = fb.node[i * l..(i + 1) * l].iter().sum();
                assert!((s - 1.0).abs() < 1e-9);
            }
        }
    }

    /// [`stable_marginals`] against enumeration: at ordinary scores (and equal to
    /// [`forward_backward`]), and at scores that are multiples of 2^990 (about 1e298: every
    /// sum exact, so a path ties the best one or has probability 0), where the sentence's
    /// score overflows and the plain recursions fail. Non-finite scores give `None`.
    #[test]
    fn stable_marginals_match_enumeration_at_any_magnitude() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(46);
        let big = 2f64.powi(990);
        let mut plain_failed = 0;
        for trial in 0..160 {
            let n = 1 + trial % 5;
            let l = 2 + trial % 3;
            let huge = trial % 2 == 1;
            let draw = |rng: &mut rand_chacha::ChaCha8Rng| -> f64 {
                if huge {
                    f64::from(rng.gen_range(-3i32..=3)) * big
                } else {
                    rng.gen_range(-2.0..2.0)
                }
            };
            let u: Vec<f64> = (0..n * l).map(|_| draw(&mut rng)).collect();
            let t: Vec<f64> = (0..(n - 1) * l * l).map(|_| draw(&mut rng)).collect();
            let at = |i: usize| &t[(i - 1) * l * l..i * l * l];
            let score = |y: &[usize]| -> f64 {
                (0..n).map(|i| u[i * l + y[i]]).sum::<f64>()
                    + (1..n).map(|i| at(i)[y[i - 1] * l + y[i]]).sum::<f64>()
            };
            // Enumeration in the scores' own scale: exp(s(y) - max s) / sum.
            let seqs = all_sequences(n, l);
            let scale = if huge { big } else { 1.0 };
            let scores: Vec<f64> = seqs.iter().map(|y| score(y) / scale).collect();
            let m = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let w: Vec<f64> = scores.iter().map(|s| ((s - m) * scale).exp()).collect();
            let total: f64 = w.iter().sum();
            let mut node = vec![0.0; n * l];
            for (y, wy) in seqs.iter().zip(&w) {
                for i in 0..n {
                    node[i * l + y[i]] += wy / total;
                }
            }
            let path = &seqs[rng.gen_range(0..seqs.len())];
            let want_p = w[seqs.iter().position(|y| y == path).unwrap()] / total;
            let (p, got) = stable_marginals(&u, at, l, path).expect("finite scores");
            assert!((p - want_p).abs() < 1e-9, "trial {trial}: {p} vs {want_p}");
            for (a, b) in got.iter().zip(&node) {
                assert!((a - b).abs() < 1e-9, "trial {trial}: node {a} vs {b}");
            }
            if n > 1 {
                let fb = forward_backward_at(&u, &t, l);
                let same = got.iter().zip(&fb.node).all(|(a, b)| (a - b).abs() < 1e-12);
                assert!(
                    same || huge,
                    "trial {trial}: ordinary scores, other marginals"
                );
                plain_failed += usize::from(!same);
            }
        }
        // The case this routine exists for: the plain recursions are wrong there.
        assert!(plain_failed > 10, "{plain_failed}");
        let inf = [0.0, f64::INFINITY, 1.0, 2.0];
        assert!(stable_marginals(&inf, |_| &[0.0; 4][..], 2, &[0, 0]).is_none());
        let nan = [0.0; 4];
        assert!(stable_marginals(&nan, |_| &[f64::NAN; 4][..], 2, &[0, 0]).is_none());
    }

    #[test]
    fn ties_and_empty_sequences() {
        let (s, p) = viterbi(&[0.0; 6], &[0.0; 9], 3);
        assert_eq!((s, p), (0.0, vec![0, 0]));
        assert_eq!(viterbi(&[], &[0.0; 4], 2), (0.0, Vec::new()));
        let fb = forward_backward(&[], &[0.0; 4], 2);
        assert_eq!(fb.log_z, 0.0);
        // Uniform scores: log Z = n log L.
        let fb = forward_backward(&[0.0; 6], &[0.0; 9], 3);
        assert!((fb.log_z - 2.0 * 3f64.ln()).abs() < 1e-12);
    }
}
