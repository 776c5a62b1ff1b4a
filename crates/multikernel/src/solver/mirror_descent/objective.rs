//! The MKL objective of Afkanpour et al. (2013) for the squared loss and its gradient.
//!
//! With kernel weights `theta >= 0`, per-kernel scales `rho_i > 0` and ridge `lambda > 0`
//! (docs/formulas.md, "Afkanpour et al. (2013), squared loss"; the paper's eq. 2-3 and
//! Proposition 3.2):
//!
//! ```text
//! K_theta  = sum_i theta_i rho_i^-2 K_i
//! alpha    = (K_theta + lambda I)^-1 y
//! J(theta) = min_w 1/2 ||f_w - y||^2 + lambda/2 sum_i rho_i^2 ||w_i||^2 / theta_i
//!          = (lambda/2) y^T alpha
//! dJ/dtheta_i = -(lambda/2) alpha^T K_i alpha / rho_i^2          (eq. 12, with its factor)
//! ```
//!
//! For a rank-one kernel `K_i = z_i z_i^T` (a product of per-variable linear kernels, i.e. a
//! monomial feature `z_i`), `alpha^T K_i alpha = (z_i^T alpha)^2`.
//!
//! Linear algebra is faer's Cholesky (`L L^T`), run sequentially
//! ([`Par::Seq`](faer::Par::Seq)): on a two-core machine one factorization gains nothing
//! from threads, and callers parallelize over independent problems instead. [`SpdFactor`]
//! also offers the `O(n^2)` rank-one update the mirror-descent solver uses to keep
//! `K_theta` current.

use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::linalg::SpdFactor;

/// `K_theta = sum_i theta_i rho_i^-2 K_i` over an explicit list of `n x n` kernels.
#[cfg(test)]
pub(crate) fn combine(kernels: &[Matrix], theta: &[f64], rho2: &[f64]) -> Result<Matrix> {
    check_lengths(kernels.len(), theta, rho2)?;
    let n = kernels.first().map_or(0, |k| k.rows);
    let mut out = Matrix::zeros(n, n);
    for ((k, &t), &r2) in kernels.iter().zip(theta).zip(rho2) {
        if k.rows != n {
            return Err(Error::shape("rows of a kernel (as the first's)", n, k.rows));
        }
        if k.cols != n {
            return Err(Error::shape(
                "columns of a kernel (as the first's)",
                n,
                k.cols,
            ));
        }
        if t == 0.0 {
            continue;
        }
        let c = t / r2;
        for (o, v) in out.data.iter_mut().zip(&k.data) {
            *o += c * v;
        }
    }
    Ok(out)
}

#[cfg(test)]
fn check_lengths(m: usize, theta: &[f64], rho2: &[f64]) -> Result<()> {
    if theta.len() != m {
        return Err(Error::shape(
            "kernel weights theta (one per kernel)",
            m,
            theta.len(),
        ));
    }
    if rho2.len() != m {
        return Err(Error::shape(
            "kernel scales rho2 (one per kernel)",
            m,
            rho2.len(),
        ));
    }
    if theta.iter().any(|t| !(t.is_finite() && *t >= 0.0)) {
        return Err(Error::param(
            "theta",
            format!("{theta:?}"),
            "finite weights >= 0",
        ));
    }
    if rho2.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
        return Err(Error::param(
            "rho2",
            format!("{rho2:?}"),
            "finite scales > 0",
        ));
    }
    Ok(())
}

fn check_lambda(lambda: f64) -> Result<()> {
    if lambda > 0.0 && lambda.is_finite() {
        Ok(())
    } else {
        Err(Error::param("lambda", lambda, "a finite ridge > 0"))
    }
}

/// `J = (lambda/2) y^T (K + lambda I)^-1 y` and `alpha = (K + lambda I)^-1 y` for a given
/// combined kernel `K` (`n x n`, symmetric PSD).
pub(crate) fn objective(k: &Matrix, y: &[f64], lambda: f64) -> Result<(f64, Vec<f64>)> {
    check_lambda(lambda)?;
    if k.rows != y.len() {
        return Err(Error::shape(
            "rows of the kernel (one per target)",
            y.len(),
            k.rows,
        ));
    }
    if k.cols != y.len() {
        return Err(Error::shape(
            "columns of the kernel (one per target)",
            y.len(),
            k.cols,
        ));
    }
    let f = SpdFactor::from_matrix(k, lambda)?;
    let alpha = f.solve(y);
    let j = 0.5 * lambda * crate::linalg::dot(y, &alpha);
    Ok((j, alpha))
}

/// `J(theta)` over an explicit kernel list (see the module docs), with `alpha`.
#[cfg(test)]
pub(crate) fn objective_theta(
    kernels: &[Matrix],
    rho2: &[f64],
    theta: &[f64],
    y: &[f64],
    lambda: f64,
) -> Result<(f64, Vec<f64>)> {
    let k = combine(kernels, theta, rho2)?;
    objective(&k, y, lambda)
}

/// `alpha^T K alpha` for a dense symmetric `K`.
#[cfg(test)]
pub(crate) fn quad_form(k: &Matrix, alpha: &[f64]) -> f64 {
    (0..k.rows)
        .map(|i| alpha[i] * crate::linalg::dot(k.row(i), alpha))
        .sum()
}

/// `J(theta)` and its gradient `dJ/dtheta_i = -(lambda/2) alpha^T K_i alpha / rho_i^2`
/// (eq. 12 with the factor of docs/formulas.md) over an explicit kernel list.
#[cfg(test)]
pub(crate) fn objective_and_gradient(
    kernels: &[Matrix],
    rho2: &[f64],
    theta: &[f64],
    y: &[f64],
    lambda: f64,
) -> Result<(f64, Vec<f64>)> {
    let (j, alpha) = objective_theta(kernels, rho2, theta, y, lambda)?;
    let g = kernels
        .iter()
        .zip(rho2)
        .map(|(k, r2)| -0.5 * lambda * quad_form(k, &alpha) / r2)
        .collect();
    Ok((j, g))
}

/// The gradient for rank-one kernels `K_i = z_i z_i^T`: `-(lambda/2) (z_i^T alpha)^2 /
/// rho_i^2`, with `z` holding one feature `z_i` (length `n`) per row.
#[cfg(test)]
pub(crate) fn gradient_rank_one(z: &Matrix, rho2: &[f64], alpha: &[f64], lambda: f64) -> Vec<f64> {
    (0..z.rows)
        .map(|i| {
            let s = crate::linalg::dot(z.row(i), alpha);
            -0.5 * lambda * s * s / rho2[i]
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_psd(n: usize, rank: usize, rng: &mut ChaCha8Rng) -> Matrix {
        let b: Vec<f64> = (0..n * rank).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let mut k = Matrix::zeros(n, n);
        for i in 0..n {
            for j in 0..n {
                let v: f64 = (0..rank).map(|t| b[i * rank + t] * b[j * rank + t]).sum();
                k.set(i, j, v);
            }
        }
        k
    }

    /// Gaussian elimination with partial pivoting: the obviously-correct twin of the
    /// Cholesky solve.
    fn gauss_solve(a: &Matrix, b: &[f64]) -> Vec<f64> {
        let n = b.len();
        let mut m: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                let mut r = a.row(i).to_vec();
                r.push(b[i]);
                r
            })
            .collect();
        for c in 0..n {
            let p = (c..n)
                .max_by(|&x, &y| m[x][c].abs().total_cmp(&m[y][c].abs()))
                .unwrap();
            m.swap(c, p);
            for r in c + 1..n {
                let f = m[r][c] / m[c][c];
                for k in c..=n {
                    m[r][k] -= f * m[c][k];
                }
            }
        }
        let mut x = vec![0.0; n];
        for i in (0..n).rev() {
            let s: f64 = (i + 1..n).map(|k| m[i][k] * x[k]).sum();
            x[i] = (m[i][n] - s) / m[i][i];
        }
        x
    }

    #[test]
    fn cholesky_solve_matches_gaussian_elimination() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let n = 12;
        let k = random_psd(n, 4, &mut rng);
        let y: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let lambda = 0.3;
        let (j, alpha) = objective(&k, &y, lambda).unwrap();
        let mut a = k.clone();
        for i in 0..n {
            a.set(i, i, a.get(i, i) + lambda);
        }
        let x = gauss_solve(&a, &y);
        for (p, q) in alpha.iter().zip(&x) {
            assert!((p - q).abs() < 1e-10, "{p} vs {q}");
        }
        let j2 = 0.5 * lambda * crate::linalg::dot(&y, &x);
        assert!((j - j2).abs() < 1e-10 * j2.abs());
    }

    #[test]
    fn rank_one_update_matches_refactorization() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let n = 10;
        let mut k = random_psd(n, 3, &mut rng);
        let mut f = SpdFactor::from_matrix(&k, 0.1).unwrap();
        for step in 0..5 {
            let z: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let w = 0.5 + step as f64;
            f.rank_one_update(&z, w).unwrap();
            for i in 0..n {
                for j in 0..n {
                    k.set(i, j, k.get(i, j) + w * z[i] * z[j]);
                }
            }
        }
        let b: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let fresh = SpdFactor::from_matrix(&k, 0.1).unwrap().solve(&b);
        let upd = f.solve(&b);
        for (p, q) in fresh.iter().zip(&upd) {
            assert!((p - q).abs() < 1e-9 * (1.0 + q.abs()), "{p} vs {q}");
        }
    }

    #[test]
    fn not_positive_definite_is_an_error() {
        let mut k = Matrix::zeros(3, 3);
        k.set(0, 0, -5.0);
        assert!(matches!(
            SpdFactor::from_matrix(&k, 1.0),
            Err(Error::Numerical(_))
        ));
        assert!(objective(&k, &[1.0, 2.0, 3.0], 0.0).is_err());
    }

    /// dJ/dtheta against central finite differences of J, for full-rank and rank-one kernels.
    #[test]
    fn gradient_matches_finite_differences() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let n = 9;
        let m = 5;
        let kernels: Vec<Matrix> = (0..m).map(|i| random_psd(n, 1 + i % 4, &mut rng)).collect();
        let rho2: Vec<f64> = (0..m).map(|i| 0.5 + i as f64 * 0.4).collect();
        let theta: Vec<f64> = (0..m).map(|_| rng.gen_range(0.1..1.0)).collect();
        let y: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        for lambda in [0.05, 1.0] {
            let (_, g) = objective_and_gradient(&kernels, &rho2, &theta, &y, lambda).unwrap();
            for i in 0..m {
                let h = 1e-5;
                let mut tp = theta.clone();
                tp[i] += h;
                let mut tm = theta.clone();
                tm[i] -= h;
                let jp = objective_theta(&kernels, &rho2, &tp, &y, lambda).unwrap().0;
                let jm = objective_theta(&kernels, &rho2, &tm, &y, lambda).unwrap().0;
                let fd = (jp - jm) / (2.0 * h);
                assert!(g[i] < 0.0);
                assert!(
                    (fd - g[i]).abs() < 1e-6 * (1.0 + g[i].abs()),
                    "kernel {i}, lambda {lambda}: {fd} vs {}",
                    g[i]
                );
            }
        }
        // Rank-one kernels: (z^T alpha)^2 equals alpha^T z z^T alpha.
        let z = Matrix::from_vec(3, n, (0..3 * n).map(|_| rng.gen_range(-1.0..1.0)).collect());
        let rk: Vec<Matrix> = (0..3)
            .map(|i| {
                let zi = z.row(i);
                Matrix::from_vec(n, n, (0..n * n).map(|t| zi[t / n] * zi[t % n]).collect())
            })
            .collect();
        let r2 = [1.0, 2.0, 4.0];
        let th = [0.3, 0.2, 0.7];
        let (_, g) = objective_and_gradient(&rk, &r2, &th, &y, 0.2).unwrap();
        let (_, alpha) = objective_theta(&rk, &r2, &th, &y, 0.2).unwrap();
        let g1 = gradient_rank_one(&z, &r2, &alpha, 0.2);
        for (a, b) in g.iter().zip(&g1) {
            assert!((a - b).abs() < 1e-10 * (1.0 + a.abs()));
        }
    }

    #[test]
    fn objective_decreases_along_rays() {
        // J(s theta) decreases in s: the projection of Alg. 2 lands on the sphere.
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let n = 8;
        let kernels: Vec<Matrix> = (0..3).map(|_| random_psd(n, 2, &mut rng)).collect();
        let y: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let rho2 = [1.0; 3];
        let mut last = f64::INFINITY;
        for s in [0.1, 0.5, 1.0, 2.0] {
            let th = [0.2 * s, 0.5 * s, 0.3 * s];
            let j = objective_theta(&kernels, &rho2, &th, &y, 0.1).unwrap().0;
            assert!(j < last);
            last = j;
        }
        assert!(combine(&kernels, &[1.0], &rho2).is_err());
        assert!(combine(&kernels, &[1.0, -1.0, 0.0], &rho2).is_err());
    }
}
