#![allow(clippy::needless_range_loop)]
use super::*;
use crate::multiset::{
    count_of_degree, enumerate_multisets, index_name, orderings, DegreeUniform, IndexDistribution,
    MultiIndex,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;

fn random_matrix(rows: usize, cols: usize, rng: &mut ChaCha8Rng) -> Matrix {
    Matrix::from_vec(
        rows,
        cols,
        (0..rows * cols).map(|_| rng.gen_range(-1.0..1.0)).collect(),
    )
}

fn gaussian_grams(x: &Matrix) -> Vec<Matrix> {
    // x: n x r; one Gaussian kernel per variable.
    (0..x.cols)
        .map(|j| {
            let n = x.rows;
            let mut g = Matrix::zeros(n, n);
            for a in 0..n {
                for b in 0..n {
                    let d = x.get(a, j) - x.get(b, j);
                    g.set(a, b, (-d * d / 0.8).exp());
                }
            }
            g
        })
        .collect()
}

/// All ordered tuples of length d over 0..r.
fn tuples(r: usize, d: usize) -> Vec<Vec<u32>> {
    let mut out = vec![vec![]];
    for _ in 0..d {
        out = out
            .into_iter()
            .flat_map(|t| {
                (0..r as u32).map(move |j| {
                    let mut u = t.clone();
                    u.push(j);
                    u
                })
            })
            .collect();
    }
    out
}

/// Explicit K_m by Hadamard products of explicit base matrices: the brute-force twin.
fn brute_kernel(base: &[Matrix], m: &[u32], n: usize) -> Matrix {
    let mut k = Matrix::from_vec(n, n, vec![1.0; n * n]);
    for &j in m {
        for (v, x) in k.data.iter_mut().zip(&base[j as usize].data) {
            *v *= x;
        }
    }
    k
}

fn brute_quad(k: &Matrix, a: &[f64]) -> f64 {
    (0..k.rows)
        .map(|i| a[i] * (0..k.cols).map(|j| k.get(i, j) * a[j]).sum::<f64>())
        .sum()
}

fn explicit_base(basis: &PolyBasis) -> Vec<Matrix> {
    match basis {
        PolyBasis::RankOne { z } => (0..z.rows)
            .map(|j| {
                let zj = z.row(j);
                let n = zj.len();
                Matrix::from_vec(n, n, (0..n * n).map(|t| zj[t / n] * zj[t % n]).collect())
            })
            .collect(),
        PolyBasis::Full { grams } => grams.clone(),
    }
}

/// Sampler probabilities against exact enumeration: every ordered tuple's path
/// probability equals rho_d^-2 alpha^T K_tuple alpha / sum over all tuples, every
/// multiset's probability is the sum over its orderings, and the distinct mass and
/// H_d sums equal the enumerated sums.
fn check_exact(basis: PolyBasis, degree: usize, rho2: &[f64], alpha: &[f64]) {
    let n = basis.points();
    let r = basis.len();
    let base = explicit_base(&basis);
    let s = PolySampler::new(basis, degree, rho2, &MemoryLimit::default()).unwrap();
    let prep = s.prepare(alpha);
    // Brute-force total over ordered tuples.
    let mut brute_total = 0.0;
    let mut tuple_mass = Vec::new();
    for d in 0..=degree {
        for t in tuples(r, d) {
            let k = brute_kernel(&base, &t, n);
            let v = brute_quad(&k, alpha) / rho2[d];
            brute_total += v;
            tuple_mass.push((t, v));
        }
    }
    assert!((prep.total - brute_total).abs() < 1e-9 * brute_total);
    let mut by_multiset: HashMap<Vec<u32>, f64> = HashMap::new();
    for (t, v) in &tuple_mass {
        let p = s.path_prob(&prep, alpha, t);
        let exact = v / brute_total;
        assert!(
            (p - exact).abs() < 1e-10 + 1e-8 * exact,
            "tuple {t:?}: sampler {p} vs enumeration {exact}"
        );
        let mut m = t.clone();
        m.sort_unstable();
        *by_multiset.entry(m).or_default() += p;
    }
    assert_eq!(by_multiset.len() as f64, s.kernel_count());
    let mut distinct = 0.0;
    for (m, p) in &by_multiset {
        let q = s.multiset_prob(&prep, m, alpha);
        assert!(
            (p - q).abs() < 1e-10 + 1e-8 * q,
            "multiset {m:?}: {p} vs {q}"
        );
        distinct += brute_quad(&brute_kernel(&base, m, n), alpha) / rho2[m.len()];
    }
    let dm = s.distinct_mass(alpha);
    assert!(
        (dm - distinct).abs() < 1e-9 * distinct,
        "{dm} vs {distinct}"
    );
    // Uniform kernel = sum of all distinct kernels.
    let mut u = vec![0.0; n * n];
    s.add_uniform_kernel(1.0, &mut u);
    let mut ub = vec![0.0; n * n];
    for m in by_multiset.keys() {
        let k = brute_kernel(&base, m, n);
        for (o, v) in ub.iter_mut().zip(&k.data) {
            *o += v / rho2[m.len()];
        }
    }
    for (a, b) in u.iter().zip(&ub) {
        assert!((a - b).abs() < 1e-9 * (1.0 + b.abs()));
    }
}

#[test]
fn rank_one_sampler_matches_enumeration() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for (r, degree, n) in [
        (3, 3, 6),
        (4, 2, 5),
        (2, 4, 7),
        (5, 3, 4),
        (2, 6, 5),
        (1, 1, 3),
    ] {
        let z = random_matrix(r, n, &mut rng);
        let alpha: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let rho2: Vec<f64> = (0..=degree).map(|d| 1.0 + 0.5 * d as f64).collect();
        check_exact(PolyBasis::RankOne { z }, degree, &rho2, &alpha);
    }
}

#[test]
fn full_rank_sampler_matches_enumeration() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for (r, degree, n) in [(3, 3, 5), (2, 2, 6)] {
        let x = random_matrix(n, r, &mut rng);
        let alpha: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let rho2 = vec![1.0; degree + 1];
        check_exact(
            PolyBasis::Full {
                grams: gaussian_grams(&x),
            },
            degree,
            &rho2,
            &alpha,
        );
    }
}

/// Large-sample frequencies of `draw` and `draw_proportional` against the exact
/// distributions (every cell within 5 standard deviations, and a chi-square bound).
#[test]
fn sampling_frequencies_match() {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let (r, degree, n) = (3, 3, 6);
    let z = random_matrix(r, n, &mut rng);
    let alpha: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let rho2 = [1.0, 1.0, 2.0, 4.0];
    let s = PolySampler::new(
        PolyBasis::RankOne { z },
        degree,
        &rho2,
        &MemoryLimit::default(),
    )
    .unwrap();
    let prep = s.prepare(&alpha);
    let all: Vec<MultiIndex> = (0..=degree)
        .flat_map(|d| enumerate_multisets(r, d))
        .collect();
    assert_eq!(all.len(), 20);
    let draws = 40_000;
    for mode in 0..3 {
        let proportional = mode == 1;
        let mut counts: HashMap<MultiIndex, usize> = HashMap::new();
        if mode == 2 {
            // Batches share the first-level weights: same distribution.
            for _ in 0..draws / 8 {
                for m in s.draw_batch(&prep, &alpha, &mut rng, 8).unwrap() {
                    *counts.entry(m).or_default() += 1;
                }
            }
        }
        for _ in 0..if mode == 2 { 0 } else { draws } {
            let m = if proportional {
                s.draw_proportional(&prep, &alpha, &mut rng, 1000).unwrap()
            } else {
                s.draw(&prep, &alpha, &mut rng).unwrap()
            };
            *counts.entry(m).or_default() += 1;
        }
        let distinct = s.distinct_mass(&alpha);
        let chi2 = frequency_chi2(&all, &counts, draws, |m| {
            if proportional {
                s.grad_mass(m, &alpha) / distinct
            } else {
                s.multiset_prob(&prep, m, &alpha)
            }
        });
        // 19 degrees of freedom: P(chi2 > 50) < 1e-4.
        assert!(chi2 < 50.0, "chi2 = {chi2}");
    }
}

/// Every cell's count within 5 standard deviations of `p(m) draws`; returns the
/// chi-square statistic over the cells.
fn frequency_chi2(
    all: &[MultiIndex],
    counts: &HashMap<MultiIndex, usize>,
    draws: usize,
    prob: impl Fn(&MultiIndex) -> f64,
) -> f64 {
    let mut chi2 = 0.0;
    for m in all {
        let p = prob(m);
        let c = *counts.get(m).unwrap_or(&0) as f64;
        let e = p * draws as f64;
        let sd = (e * (1.0 - p)).sqrt().max(1.0);
        assert!((c - e).abs() < 5.0 * sd, "{m:?}: {c} vs {e}");
        if e > 0.0 {
            chi2 += (c - e) * (c - e) / e;
        }
    }
    chi2
}

/// `draw_batch` on the shapes its batched products handle (rank one: a level with
/// `e >= 2`, and `e = 1` when `r >= n`, degrees 4 and 5; full-rank Gaussian base
/// kernels: every level, degrees 2 and 3): frequencies against the exact multiset
/// probabilities.
#[test]
fn batched_draws_match_exact_probabilities() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    for (r, degree, n, full) in [
        (4, 4, 3, false),
        (3, 5, 8, false),
        (3, 3, 6, true),
        (4, 2, 5, true),
    ] {
        let alpha: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let rho2: Vec<f64> = (0..=degree).map(|d| 1.0 + 0.3 * d as f64).collect();
        let basis = if full {
            PolyBasis::Full {
                grams: gaussian_grams(&random_matrix(n, r, &mut rng)),
            }
        } else {
            PolyBasis::RankOne {
                z: random_matrix(r, n, &mut rng),
            }
        };
        let s = PolySampler::new(basis, degree, &rho2, &MemoryLimit::default()).unwrap();
        let prep = s.prepare(&alpha);
        let draws = 32_000;
        let mut counts: HashMap<MultiIndex, usize> = HashMap::new();
        for _ in 0..draws / 16 {
            for m in s.draw_batch(&prep, &alpha, &mut rng, 16).unwrap() {
                *counts.entry(m).or_default() += 1;
            }
        }
        let all: Vec<MultiIndex> = (0..=degree)
            .flat_map(|d| enumerate_multisets(r, d))
            .collect();
        let total_p: f64 = all.iter().map(|m| s.multiset_prob(&prep, m, &alpha)).sum();
        let chi2 = frequency_chi2(&all, &counts, draws, |m| s.multiset_prob(&prep, m, &alpha));
        assert!(
            (total_p - 1.0).abs() < 1e-9,
            "probabilities sum to {total_p}"
        );
        // Bound: dof + 6 sqrt(2 dof), far in the tail of the chi-square distribution.
        let dof = (all.len() - 1) as f64;
        assert!(
            chi2 < dof + 6.0 * (2.0 * dof).sqrt(),
            "r {r} D {degree}: chi2 {chi2}"
        );
    }
}

/// `add_kernel` (fused for degree <= 2 on a full basis) against `K_m` materialized.
#[test]
fn add_kernel_matches_the_dense_kernel() {
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    let (r, n, degree) = (3, 5, 3);
    let x = random_matrix(n, r, &mut rng);
    for basis in [
        PolyBasis::Full {
            grams: gaussian_grams(&x),
        },
        PolyBasis::RankOne {
            z: random_matrix(r, n, &mut rng),
        },
    ] {
        let s = PolySampler::new(basis, degree, &[1.0; 4], &MemoryLimit::default()).unwrap();
        for d in 0..=degree {
            for m in enumerate_multisets(r, d) {
                let start: Vec<f64> = (0..n * n).map(|_| rng.gen_range(-1.0..1.0)).collect();
                let mut got = start.clone();
                s.add_kernel(&m, 0.7, &mut got);
                let k = s.kernel_dense(&m);
                for ((g, s0), kv) in got.iter().zip(&start).zip(&k) {
                    assert!((g - (s0 + 0.7 * kv)).abs() < 1e-12, "{m:?}");
                }
            }
        }
    }
}

#[test]
fn counting_helpers() {
    assert_eq!(count_kernels(100, 3), 176_851.0);
    assert_eq!(count_kernels(30, 5), 324_632.0);
    assert_eq!(count_kernels(40, 3), 12_341.0);
    for (r, d) in [(4, 3), (3, 5), (1, 2)] {
        let e = enumerate_multisets(r, d);
        assert_eq!(e.len() as f64, count_of_degree(r, d));
    }
    assert_eq!(orderings(&[0, 0, 4]), 3.0);
    assert_eq!(orderings(&[1, 2, 3]), 6.0);
    assert_eq!(orderings(&[2, 2, 2]), 1.0);
    assert_eq!(orderings(&[]), 1.0);
    let names: Vec<String> = (1..=5).map(|i| format!("x{i}")).collect();
    assert_eq!(index_name(&[0, 0, 4], &names), "x1^2*x5");
    assert_eq!(index_name(&[], &names), "1");
}

#[test]
fn uniform_distribution_is_uniform() {
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let dist = DegreeUniform::uniform(3, 2).unwrap();
    let all: Vec<MultiIndex> = (0..=2).flat_map(|d| enumerate_multisets(3, d)).collect();
    assert_eq!(all.len(), 10);
    let total: f64 = all.iter().map(|m| dist.prob(m)).sum();
    assert!((total - 1.0).abs() < 1e-12);
    let mut counts: HashMap<MultiIndex, usize> = HashMap::new();
    let draws = 20_000;
    for _ in 0..draws {
        *counts.entry(dist.draw(&mut rng)).or_default() += 1;
    }
    assert_eq!(counts.len(), 10);
    for m in &all {
        let c = counts[m] as f64;
        assert!(
            (c - 2000.0).abs() < 5.0 * (2000.0f64 * 0.9).sqrt(),
            "{m:?}: {c}"
        );
    }
}

#[test]
fn bad_inputs_are_errors() {
    let z = Matrix::from_vec(2, 3, vec![1.0; 6]);
    let lim = MemoryLimit::default();
    assert!(PolySampler::new(PolyBasis::RankOne { z: z.clone() }, 2, &[1.0, 1.0], &lim).is_err());
    assert!(PolySampler::new(PolyBasis::RankOne { z: z.clone() }, 0, &[1.0], &lim).is_err());
    assert!(PolySampler::new(PolyBasis::RankOne { z: z.clone() }, 1, &[1.0, -1.0], &lim).is_err());
    let tiny = MemoryLimit { bytes: 10 };
    assert!(matches!(
        PolySampler::new(PolyBasis::RankOne { z }, 1, &[1.0, 1.0], &tiny),
        Err(Error::Memory { .. })
    ));
}
