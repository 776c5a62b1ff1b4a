//! The fit epilogue of the online learner (Alg. 1 / SPOM of martins2011), shared by vector
//! data ([`crate::pipeline::table::vector`]) and sequences
//! ([`crate::pipeline::sequence::spom`]): the final state of a run turned into the compact
//! kernel expansion a trained model stores.
//!
//! 1. The effective parameters: kernel-group coefficients `a_g` (one per training point and
//!    label, point-major) and the explicit groups (a bias, label-pair scores), of the last
//!    iterate or of the average of the iterates.
//! 2. The norms of the regularized groups: per kernel group `||theta_g||^2 = sum_y a_{g,y}^T
//!    K_g a_{g,y}` (Sec. 3.4; computed as [`GroupNorms`] says), then the regularized explicit
//!    groups (`beta0`'s label-pair group), `||w||_2`.
//! 3. The kernel weights those norms imply ([`RegSpec::kernel_weights`]; eq. 5's simplex).
//! 4. The support points: the training points with a non-zero coefficient in some kernel
//!    group whose norm is not zero. Each such group keeps the coefficients of the support
//!    points only (support-major, `n_support x labels`); a group of norm zero keeps none.

use crate::error::{Error, Result};
use crate::kernel::Gram;
use crate::prox::RegSpec;
use crate::solver::online::OnlineState;
use crate::task::online::GroupRole;
use faer::{Accum, MatMut, MatRef, Par};
use rayon::prelude::*;

/// How the kernel-group norms of the returned model are computed. All give `||theta_g||` of
/// the returned parameters, clipped at 0 before the square root; they differ in cost and in
/// the last bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GroupNorms {
    /// `sum_{p, y} a[p, y] (K a_y)[p]` point by point, Gram rows only for non-zero
    /// coefficients: cheap for sparse solutions with few labels (vector tasks).
    PointByPoint,
    /// `tr(A^T (K A))` with one matrix product per dense Gram matrix (dense coefficients over
    /// many labels); sparse Grams point by point. No learner picks it today: it is the
    /// reference the tests hold `Cached` against.
    #[cfg_attr(not(test), allow(dead_code))]
    Product,
    /// The last iterate's norms from the learner's cached scores `F = K c` (`||theta||^2 =
    /// s^2 sum_{p, y} c[p, y] F[y, p]`), O(points x labels) per group; the average of the
    /// iterates has no cached scores and falls back to [`GroupNorms::Product`].
    Cached,
}

/// The compact expansion of a finished run (module docs).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Compact {
    /// Per kernel group: the coefficients of the support points (`n_support x labels`,
    /// support-major); empty for a group whose norm is zero.
    pub coef: Vec<Vec<f64>>,
    /// Indices of the support points among the training points, ascending.
    pub support_rows: Vec<usize>,
    /// Effective explicit groups, in the task's order (a bias; label-pair scores).
    pub explicit: Vec<Vec<f64>>,
    /// Norms of the regularized groups: the kernel groups, then the regularized explicit
    /// groups.
    pub group_norms: Vec<f64>,
    /// Names of the regularized explicit groups, whose norms follow the kernel groups'.
    pub explicit_names: Vec<String>,
    /// The kernel weights implied by `group_norms` (one per norm).
    pub weights: Vec<f64>,
}

/// The compact expansion of `state` at the end of a run over the training Gram matrices
/// `grams` (one per kernel group; `averaged`: the average of the iterates instead of the last
/// one).
pub(crate) fn compact(
    state: &OnlineState,
    grams: &[Gram],
    reg: &RegSpec,
    averaged: bool,
    norms: GroupNorms,
) -> Result<Compact> {
    if grams.len() != state.kernel.len() {
        return Err(Error::shape(
            "Gram matrices (one per kernel group)",
            state.kernel.len(),
            grams.len(),
        ));
    }
    let l = state.n_labels;
    let coefs = state.kernel_coefs(averaged);
    let explicit = state.explicit_values(averaged);
    let mut group_norms: Vec<f64> = match norms {
        GroupNorms::Cached if !averaged => cached_norms(state),
        GroupNorms::PointByPoint => grams
            .par_iter()
            .zip(&coefs)
            .map(|(g, a)| group_sqnorm(g, a, l, false).max(0.0).sqrt())
            .collect(),
        GroupNorms::Product | GroupNorms::Cached => grams
            .par_iter()
            .zip(&coefs)
            .map(|(g, a)| group_sqnorm(g, a, l, true).max(0.0).sqrt())
            .collect(),
    };
    let mut explicit_names = Vec::new();
    for (w, group) in explicit.iter().zip(&state.explicit_groups) {
        if group.role == GroupRole::Regularized {
            group_norms.push(w.iter().map(|v| v * v).sum::<f64>().sqrt());
            explicit_names.push(group.name.clone());
        }
    }
    let weights = reg.kernel_weights(&group_norms);
    let n = grams.first().map_or(0, Gram::rows);
    let live: Vec<bool> = group_norms[..coefs.len()]
        .iter()
        .map(|&v| v > 0.0)
        .collect();
    let support_rows: Vec<usize> = (0..n)
        .filter(|&i| {
            coefs
                .iter()
                .zip(&live)
                .any(|(a, &on)| on && a[i * l..(i + 1) * l].iter().any(|v| *v != 0.0))
        })
        .collect();
    let coef = coefs
        .iter()
        .zip(&live)
        .map(|(a, &on)| {
            if on {
                support_rows
                    .iter()
                    .flat_map(|&i| a[i * l..(i + 1) * l].iter().copied())
                    .collect()
            } else {
                Vec::new()
            }
        })
        .collect();
    Ok(Compact {
        coef,
        support_rows,
        explicit,
        group_norms,
        explicit_names,
        weights,
    })
}

/// The last iterate's kernel-group norms from the cached (label-major) scores `F = K c`
/// (`||theta_m||^2 = s^2 sum_{p, y} c[p, y] F[y, p]`).
pub fn cached_norms(state: &OnlineState) -> Vec<f64> {
    let l = state.n_labels;
    state
        .kernel
        .iter()
        .map(|g| {
            let (c, f, s) = (g.coef(), g.image(), g.scale());
            let n = c.len() / l.max(1);
            let mut sq = 0.0;
            for j in 0..n {
                for y in 0..l {
                    sq += c[j * l + y] * f[y * n + j];
                }
            }
            (s * s * sq).max(0.0).sqrt()
        })
        .collect()
}

/// `sum_y a_y^T K a_y` for point-major coefficients `a` (`n x l`): with `product` and a dense
/// `K`, `K A` by one matrix product and then the trace of `A^T (K A)`; otherwise point by
/// point, `sum_{p, y: a[p, y] != 0} a[p, y] sum_j K[p, j] a[j, y]`.
pub(crate) fn group_sqnorm(g: &Gram, a: &[f64], l: usize, product: bool) -> f64 {
    let n = g.rows();
    if n == 0 || a.iter().all(|v| *v == 0.0) {
        return 0.0;
    }
    match g {
        Gram::Dense(m) if product => {
            let mut ka = vec![0.0; n * l];
            let lhs = MatRef::from_row_major_slice(&m.data, n, n);
            let rhs = MatRef::from_row_major_slice(a, n, l);
            let dst = MatMut::from_row_major_slice_mut(&mut ka, n, l);
            faer::linalg::matmul::matmul(dst, Accum::Replace, lhs, rhs, 1.0, Par::rayon(0));
            a.iter().zip(&ka).map(|(x, y)| x * y).sum()
        }
        _ => {
            let mut s = 0.0;
            for i in 0..n {
                for y in 0..l {
                    let ai = a[i * l + y];
                    if ai != 0.0 {
                        let mut row = 0.0;
                        g.for_each_in_row(i, |j, v| row += v * a[j * l + y]);
                        s += ai * row;
                    }
                }
            }
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Matrix;
    use crate::kernel::{FittedKernel, KernelSpec, MemoryLimit};
    use crate::params::ScaledVec;
    use crate::task::online::ExplicitGroup;
    use rand::{Rng, SeedableRng};

    /// `sum_y a_y^T K a_y` written out with the kernel evaluated pair by pair.
    fn slow_sqnorm(k: &FittedKernel, x: &Matrix, a: &[f64], l: usize) -> f64 {
        let mut s = 0.0;
        for i in 0..x.rows {
            for j in 0..x.rows {
                let kij = k.eval(x.row(i), x.row(j));
                for y in 0..l {
                    s += a[i * l + y] * kij * a[j * l + y];
                }
            }
        }
        s
    }

    fn kernels(x: &Matrix) -> Vec<FittedKernel> {
        ["rbf:sigma2=2", "linear:norm=trace", "bspline"]
            .iter()
            .map(|s| FittedKernel::fit(&s.parse::<KernelSpec>().unwrap(), x, &[], 0).unwrap())
            .collect()
    }

    /// Coefficients with whole zero points and zero entries (as the hinge loss leaves them).
    fn sparse_coefs(n: usize, l: usize, rng: &mut impl Rng) -> Vec<f64> {
        (0..n * l)
            .map(|i| {
                if (i / l).is_multiple_of(3) || rng.gen_bool(0.3) {
                    0.0
                } else {
                    rng.gen_range(-1.0..1.0)
                }
            })
            .collect()
    }

    /// Both exact ways agree with the quadratic form written out pair by pair, on dense and
    /// sparse (B1-spline) Gram matrices.
    #[test]
    fn group_norms_match_the_quadratic_form() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let (n, d, l) = (37, 4, 3);
        let x = Matrix::from_vec(n, d, (0..n * d).map(|_| rng.gen_range(-1.0..1.0)).collect());
        for k in kernels(&x) {
            let g = k.gram_sym(&x, &MemoryLimit::default()).unwrap();
            let a = sparse_coefs(n, l, &mut rng);
            let want = slow_sqnorm(&k, &x, &a, l);
            assert!(want > 0.0, "{}", k.name);
            for product in [false, true] {
                let got = group_sqnorm(&g, &a, l, product);
                assert!(
                    (got - want).abs() < 1e-10 * (1.0 + want),
                    "{} product {product}: {got} vs {want}",
                    k.name
                );
            }
            assert_eq!(group_sqnorm(&g, &vec![0.0; n * l], l, true), 0.0);
        }
    }

    /// A state built by hand: two kernel groups (the second all zero), a bias and a
    /// regularized label-pair group.
    fn state(x: &Matrix, grams: &[Gram], l: usize, rng: &mut impl Rng) -> OnlineState {
        let n = x.rows;
        let kernel = grams
            .iter()
            .enumerate()
            .map(|(m, g)| {
                let c = if m == 1 {
                    vec![0.0; n * l]
                } else {
                    sparse_coefs(n, l, rng)
                };
                // The cached image F = K c, label-major.
                let mut f = vec![0.0; n * l];
                for y in 0..l {
                    for p in 0..n {
                        g.for_each_in_row(p, |j, v| f[y * n + p] += v * c[j * l + y]);
                    }
                }
                let mut v = ScaledVec::zeros_with_image(n * l, n * l, true);
                for (j, &cj) in c.iter().enumerate() {
                    v.add(j, cj);
                }
                v.image_mut().0.copy_from_slice(&f);
                // One round ticked, then the iterate halved: the average (c) and the last
                // iterate (c / 2) differ.
                v.tick();
                v.scale_by(0.5);
                v
            })
            .collect();
        let groups = vec![
            ExplicitGroup {
                name: "bias".into(),
                len: l,
                role: GroupRole::Unregularized,
            },
            ExplicitGroup {
                name: "pairs".into(),
                len: l * l,
                role: GroupRole::Regularized,
            },
        ];
        let explicit = groups
            .iter()
            .map(|g| {
                let mut v = ScaledVec::zeros(g.len, true);
                for j in 0..g.len {
                    v.add(j, j as f64 - 1.0);
                }
                v.tick();
                v
            })
            .collect();
        OnlineState {
            kernel,
            explicit,
            explicit_groups: groups,
            n_labels: l,
            t: 1,
            avg_start: 0,
        }
    }

    /// The epilogue against its definition: norms (three ways), the label-pair norm, weights,
    /// support points and compacted coefficients.
    #[test]
    fn compact_matches_its_definition() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
        let (n, d, l) = (29, 3, 4);
        let x = Matrix::from_vec(n, d, (0..n * d).map(|_| rng.gen_range(-1.0..1.0)).collect());
        let ks = kernels(&x);
        let grams: Vec<Gram> = ks
            .iter()
            .map(|k| k.gram_sym(&x, &MemoryLimit::default()).unwrap())
            .collect();
        let st = state(&x, &grams, l, &mut rng);
        let reg = RegSpec::L21Sq;
        let mut results = Vec::new();
        for rule in [
            GroupNorms::PointByPoint,
            GroupNorms::Product,
            GroupNorms::Cached,
        ] {
            let c = compact(&st, &grams, &reg, false, rule).unwrap();
            let coefs = st.kernel_coefs(false);
            for (m, k) in ks.iter().enumerate() {
                let want = slow_sqnorm(k, &x, &coefs[m], l).max(0.0).sqrt();
                assert!((c.group_norms[m] - want).abs() < 1e-9 * (1.0 + want));
            }
            assert_eq!(c.group_norms[1], 0.0);
            let pairs: f64 = (0..l * l).map(|i| (i as f64 - 1.0).powi(2)).sum();
            assert_eq!(c.group_norms[3], pairs.sqrt());
            assert_eq!(c.explicit_names, vec!["pairs".to_string()]);
            assert_eq!(c.weights, reg.kernel_weights(&c.group_norms));
            assert_eq!(c.explicit.len(), 2);
            // Support points: a non-zero coefficient in group 0 or 2 (group 1 is zero).
            let want_rows: Vec<usize> = (0..n)
                .filter(|&p| {
                    [0, 2]
                        .iter()
                        .any(|&m| (0..l).any(|y| coefs[m][p * l + y] != 0.0))
                })
                .collect();
            assert_eq!(c.support_rows, want_rows);
            assert!(c.support_rows.len() < n);
            assert!(c.coef[1].is_empty());
            for m in [0, 2] {
                assert_eq!(c.coef[m].len(), want_rows.len() * l);
                for (s, &p) in want_rows.iter().enumerate() {
                    assert_eq!(
                        &c.coef[m][s * l..(s + 1) * l],
                        &coefs[m][p * l..(p + 1) * l]
                    );
                }
            }
            results.push(c);
        }
        // Averaged: no cached scores, so Cached falls back to Product exactly.
        let a = compact(&st, &grams, &reg, true, GroupNorms::Cached).unwrap();
        let b = compact(&st, &grams, &reg, true, GroupNorms::Product).unwrap();
        assert_eq!(a, b);
        assert!(matches!(
            compact(&st, &grams[..2], &reg, false, GroupNorms::Product),
            Err(Error::ShapeMismatch { .. })
        ));
    }
}
