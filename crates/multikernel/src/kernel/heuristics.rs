//! Data-dependent kernel parameters chosen on training data: the median heuristic for the
//! Gaussian width (docs/formulas.md, "Kernel helpers") and the B1-spline support `h` for a target
//! sparsity of the Gram matrix.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::data::Matrix;
use crate::linalg::sq_dist;

/// At most this many training points enter the pairwise heuristics.
pub const HEURISTIC_MAX_POINTS: usize = 1000;

/// Indices of at most `max` rows of `0..n` without replacement (all rows when `n <= max`),
/// sorted; seeded.
pub(crate) fn sample_rows(n: usize, max: usize, seed: u64) -> Vec<usize> {
    if n <= max {
        return (0..n).collect();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut idx = rand::seq::index::sample(&mut rng, n, max).into_vec();
    idx.sort_unstable();
    idx
}

/// Squared distances of all pairs `i < j` of the sampled rows.
fn pair_sq_dists(x: &Matrix, seed: u64) -> Vec<f64> {
    let idx = sample_rows(x.rows, HEURISTIC_MAX_POINTS, seed);
    let m = idx.len();
    (0..m)
        .into_par_iter()
        .flat_map_iter(|a| {
            let ra = x.row(idx[a]);
            idx[a + 1..].iter().map(move |&b| sq_dist(ra, x.row(b)))
        })
        .collect()
}

/// The median of `v` (mean of the two middle values for an even count); reorders `v`.
fn median_in_place(v: &mut [f64]) -> f64 {
    let m = v.len();
    debug_assert!(m > 0);
    let k = m / 2;
    let (left, mid, _) = v.select_nth_unstable_by(k, f64::total_cmp);
    let upper = *mid;
    if m % 2 == 1 {
        upper
    } else {
        let lower = left.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        0.5 * (lower + upper)
    }
}

/// Median heuristic for `exp(-||x - x'||^2 / (2 sigma2))` (docs/formulas.md, "Kernel helpers"):
/// `sigma2 = median_{i<j} ||x_i - x_j||^2 / 2` over the pairs of at most 1,000 rows sampled
/// with `seed`. When that median is 0 (more than half the pairs coincide, e.g. a binary
/// feature) the median of the positive squared distances is used; when no pair differs,
/// `sigma2 = 1`.
pub fn median_sigma2(x: &Matrix, seed: u64) -> f64 {
    let mut d = pair_sq_dists(x, seed);
    if d.is_empty() {
        return 1.0;
    }
    let med = median_in_place(&mut d);
    if med > 0.0 {
        return med / 2.0;
    }
    let mut pos: Vec<f64> = d.into_iter().filter(|&v| v > 0.0).collect();
    if pos.is_empty() {
        1.0
    } else {
        median_in_place(&mut pos) / 2.0
    }
}

/// Support `h` of the B1-spline `max(0, 1 - ||x - x'|| / h)` such that a fraction `zeros` of
/// the off-diagonal training pairs give 0, i.e. the `(1 - zeros)` quantile of the pairwise
/// distances: with the distances of the `m` sampled pairs (at most 1,000 rows, `seed`)
/// sorted increasingly as `d_(0) <= ... <= d_(m-1)` and `k = round((1 - zeros) m)`,
/// `h = d_(k)`, so exactly the `k` pairs with `d < h` are non-zero when distances are
/// distinct. `zeros = 0` gives `h` just above the largest distance. When the quantile is 0
/// the smallest positive distance is used; when no pair differs, `h = 1`. `zeros` is clamped
/// to `[0, 1]`.
pub fn bspline_h_for_zeros(x: &Matrix, zeros: f64, seed: u64) -> f64 {
    let mut d = pair_sq_dists(x, seed);
    if d.is_empty() {
        return 1.0;
    }
    let m = d.len();
    let z = if zeros.is_nan() {
        0.0
    } else {
        zeros.clamp(0.0, 1.0)
    };
    let k = (((1.0 - z) * m as f64).round() as usize).min(m);
    let h2 = if k == m {
        let max = d.iter().copied().fold(0.0, f64::max);
        max * (1.0 + 1e-9)
    } else {
        *d.select_nth_unstable_by(k, f64::total_cmp).1
    };
    if h2 > 0.0 {
        return h2.sqrt();
    }
    let min_pos = d
        .iter()
        .copied()
        .filter(|&v| v > 0.0)
        .fold(f64::INFINITY, f64::min);
    if min_pos.is_finite() {
        min_pos.sqrt()
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn random(n: usize, d: usize, seed: u64) -> Matrix {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Matrix::from_vec(n, d, (0..n * d).map(|_| rng.gen_range(-2.0..2.0)).collect())
    }

    /// Brute force: every pair, full sort, textbook median.
    fn brute_median_sq(x: &Matrix) -> f64 {
        let mut v = Vec::new();
        for i in 0..x.rows {
            for j in i + 1..x.rows {
                let mut s = 0.0;
                for k in 0..x.cols {
                    s += (x.get(i, k) - x.get(j, k)).powi(2);
                }
                v.push(s);
            }
        }
        v.sort_by(f64::total_cmp);
        let m = v.len();
        if m % 2 == 1 {
            v[m / 2]
        } else {
            0.5 * (v[m / 2 - 1] + v[m / 2])
        }
    }

    #[test]
    fn median_sigma2_equals_brute_force() {
        for (n, d) in [(2, 3), (3, 1), (7, 2), (40, 5), (41, 3)] {
            let x = random(n, d, n as u64);
            let expect = brute_median_sq(&x) / 2.0;
            let got = median_sigma2(&x, 9);
            assert!(
                (got - expect).abs() <= 1e-12 * expect,
                "n={n}: {got} vs {expect}"
            );
        }
    }

    #[test]
    fn median_sigma2_samples_large_sets_and_is_seeded() {
        let x = random(1500, 2, 3);
        let a = median_sigma2(&x, 1);
        assert_eq!(a, median_sigma2(&x, 1));
        // Close to the full-data median (sampling 1000 of 1500 points).
        let full = brute_median_sq(&x.select_rows(&(0..1500).step_by(3).collect::<Vec<_>>())) / 2.0;
        assert!((a - full).abs() < 0.1 * full, "{a} vs {full}");
    }

    #[test]
    fn median_sigma2_degenerate_data() {
        // 5 equal rows and one different: median distance 0 -> median of positives.
        let mut rows = vec![vec![1.0, 1.0]; 5];
        rows.push(vec![4.0, 5.0]);
        let x = Matrix::from_rows(&rows);
        assert_eq!(median_sigma2(&x, 0), 25.0 / 2.0);
        let same = Matrix::from_rows(&[vec![2.0], vec![2.0]]);
        assert_eq!(median_sigma2(&same, 0), 1.0);
        assert_eq!(median_sigma2(&Matrix::zeros(1, 3), 0), 1.0);
    }

    #[test]
    fn bspline_h_hits_target_zero_fraction() {
        let x = random(300, 3, 5);
        for zeros in [0.5, 0.8, 0.95, 0.99] {
            let h = bspline_h_for_zeros(&x, zeros, 0);
            let (mut z, mut tot) = (0usize, 0usize);
            for i in 0..x.rows {
                for j in 0..x.rows {
                    if i != j {
                        tot += 1;
                        let k = (1.0 - sq_dist(x.row(i), x.row(j)).sqrt() / h).max(0.0);
                        z += (k == 0.0) as usize;
                    }
                }
            }
            let frac = z as f64 / tot as f64;
            assert!(
                (frac - zeros).abs() < 0.002,
                "zeros {zeros}: got {frac} (h={h})"
            );
        }
        // zeros = 0: no zero entries at all.
        let h = bspline_h_for_zeros(&x, 0.0, 0);
        let dmax = (0..x.rows)
            .flat_map(|i| (0..x.rows).map(move |j| (i, j)))
            .map(|(i, j)| sq_dist(x.row(i), x.row(j)).sqrt())
            .fold(0.0, f64::max);
        assert!(h > dmax);
        // Degenerate data.
        assert_eq!(bspline_h_for_zeros(&Matrix::zeros(4, 2), 0.9, 0), 1.0);
    }
}
