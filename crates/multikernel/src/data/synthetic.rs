//! Generated data sets (seeded): Breiman's ringnorm and waveform (FORMULAS.md, "Generated
//! data"; Breiman 1996, as in R's mlbench) and the synthetic polynomial regression problem of
//! Afkanpour et al. (2013), Sec. 5.2.
//!
//! - [`ringnorm`]: `d = 20`; class 1 ~ `N(0, 4 I)`, class 2 ~ `N(a 1, I)`, `a = 1/sqrt(d)`;
//!   each point's class is a fair coin.
//! - [`waveform`]: 21 variables `i = 1..21`; `h1(i) = max(6 - |i - 11|, 0)`,
//!   `h2(i) = h1(i - 4)`, `h3(i) = h1(i + 4)`; `u ~ U(0, 1)`; class 1 is `u h1 + (1-u) h2`,
//!   class 2 `u h1 + (1-u) h3`, class 3 `u h2 + (1-u) h3`, plus `N(0, 1)` noise on every
//!   variable; classes uniform.
//! - [`MonomialProblem`]: inputs uniform on `[-1, 1]^r`, the output the uniform (unit-weight)
//!   combination of 10 distinct monomials of degree `<= 3` drawn uniformly among all
//!   `C(r + 3, 3)` of them (the constant included), noise free.
//!
//! Ringnorm and waveform are classification data ([`Targets::Classes`] with labels "1", "2"
//! (, "3")); [`class_values`] turns the labels into numbers for least-squares regression.

use super::{Dataset, Matrix, Targets};
use crate::error::{Error, Result};
use crate::multiset::{count_kernels, index_name, DegreeUniform, IndexDistribution, MultiIndex};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

fn names(d: usize) -> Vec<String> {
    (1..=d).map(|i| format!("x{i}")).collect()
}

/// `n` ringnorm points (20 variables, classes "1" and "2").
pub fn ringnorm(n: usize, seed: u64) -> Dataset {
    let d = 20;
    let a = 1.0 / (d as f64).sqrt();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut data = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let c = usize::from(rng.gen::<bool>());
        for _ in 0..d {
            let e: f64 = StandardNormal.sample(&mut rng);
            data.push(if c == 0 { 2.0 * e } else { a + e });
        }
        y.push(c);
    }
    Dataset {
        x: Matrix::from_vec(n, d, data),
        targets: Targets::Classes {
            classes: vec!["1".into(), "2".into()],
            y,
        },
        feature_names: names(d),
    }
}

/// `n` waveform points (21 variables, classes "1", "2", "3").
pub fn waveform(n: usize, seed: u64) -> Dataset {
    let d = 21;
    let h1 = |i: f64| (6.0 - (i - 11.0).abs()).max(0.0);
    let h = |k: usize, i: f64| match k {
        0 => h1(i),
        1 => h1(i - 4.0),
        _ => h1(i + 4.0),
    };
    // Pairs of waves per class.
    let pairs = [(0usize, 1usize), (0, 2), (1, 2)];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut data = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let c = rng.gen_range(0..3usize);
        let u: f64 = rng.gen();
        let (p, q) = pairs[c];
        for i in 1..=d {
            let e: f64 = StandardNormal.sample(&mut rng);
            let i = i as f64;
            data.push(u * h(p, i) + (1.0 - u) * h(q, i) + e);
        }
        y.push(c);
    }
    Dataset {
        x: Matrix::from_vec(n, d, data),
        targets: Targets::Classes {
            classes: vec!["1".into(), "2".into(), "3".into()],
            y,
        },
        feature_names: names(d),
    }
}

/// Numeric targets for class labels: `values[c]` for class index `c` (e.g. `[-1, 1]` for a
/// binary problem, `[1, 2, 3]` for waveform); real targets pass through.
pub fn class_values(targets: &Targets, values: &[f64]) -> Result<Vec<f64>> {
    match targets {
        Targets::Real(y) => Ok(y.clone()),
        Targets::Classes { classes, y } => {
            if classes.len() > values.len() {
                return Err(Error::shape(
                    "numeric values of the classes",
                    classes.len(),
                    values.len(),
                ));
            }
            Ok(y.iter().map(|&c| values[c]).collect())
        }
    }
}

/// The synthetic problem of Sec. 5.2: a fixed set of monomials over `r` inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct MonomialProblem {
    pub r: usize,
    /// Distinct monomials (sorted variable indices, 0-based; empty = the constant).
    pub terms: Vec<MultiIndex>,
}

impl MonomialProblem {
    /// Draws `n_terms` distinct monomials of degree `<= max_degree` uniformly among all
    /// `C(r + max_degree, max_degree)`.
    pub fn new(r: usize, n_terms: usize, max_degree: usize, seed: u64) -> Result<MonomialProblem> {
        if r == 0 {
            return Err(Error::param("r", 0, "at least 1 input"));
        }
        if (n_terms as f64) > count_kernels(r, max_degree) {
            return Err(Error::param(
                "r",
                r,
                format!("enough inputs for {n_terms} distinct monomials of degree <= {max_degree}"),
            ));
        }
        let dist = DegreeUniform::uniform(r, max_degree)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut terms: Vec<MultiIndex> = Vec::with_capacity(n_terms);
        while terms.len() < n_terms {
            let m = dist.draw(&mut rng);
            if !terms.contains(&m) {
                terms.push(m);
            }
        }
        Ok(MonomialProblem { r, terms })
    }

    /// The noise-free output at one input.
    pub fn value(&self, x: &[f64]) -> f64 {
        self.terms
            .iter()
            .map(|m| m.iter().map(|&j| x[j as usize]).product::<f64>())
            .sum()
    }

    /// `n` points with inputs uniform on `[-1, 1]^r`.
    pub fn generate(&self, n: usize, seed: u64) -> Dataset {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x = Matrix::from_vec(
            n,
            self.r,
            (0..n * self.r).map(|_| rng.gen_range(-1.0..1.0)).collect(),
        );
        let y = (0..n).map(|i| self.value(x.row(i))).collect();
        Dataset {
            x,
            targets: Targets::Real(y),
            feature_names: names(self.r),
        }
    }

    /// The monomials as readable names (`x1^2*x5`).
    pub fn term_names(&self) -> Vec<String> {
        let nm = names(self.r);
        self.terms.iter().map(|m| index_name(m, &nm)).collect()
    }
}

/// The generated data sets by name, for command-line tools: `polynomial` (alias
/// `synthetic`; Sec. 5.2 of Afkanpour et al. 2013: `r` inputs, 10 monomials of degree <= 3
/// drawn with `problem_seed`), `ringnorm` or `waveform`; `n` points drawn with `seed`.
/// Returns the data and, for the polynomial problem, its target as text.
pub fn generate(
    name: &str,
    n: usize,
    r: usize,
    problem_seed: u64,
    seed: u64,
) -> Result<(Dataset, Option<String>)> {
    if n == 0 {
        return Err(Error::param("n", 0, "at least 1 point"));
    }
    match name.trim().to_ascii_lowercase().as_str() {
        "polynomial" | "synthetic" => {
            let problem = MonomialProblem::new(r, 10, 3, problem_seed)?;
            let target = problem.term_names().join(" + ");
            Ok((problem.generate(n, seed), Some(target)))
        }
        "ringnorm" => Ok((ringnorm(n, seed), None)),
        "waveform" => Ok((waveform(n, seed), None)),
        other => Err(Error::param(
            "data set",
            other,
            "polynomial, ringnorm or waveform",
        )),
    }
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;

    fn class_means(ds: &Dataset) -> Vec<Vec<f64>> {
        let Targets::Classes { classes, y } = &ds.targets else {
            panic!("classes expected")
        };
        let d = ds.x.cols;
        let mut sums = vec![vec![0.0; d]; classes.len()];
        let mut counts = vec![0usize; classes.len()];
        for (i, &c) in y.iter().enumerate() {
            counts[c] += 1;
            for (s, v) in sums[c].iter_mut().zip(ds.x.row(i)) {
                *s += v;
            }
        }
        sums.iter()
            .zip(&counts)
            .map(|(s, &c)| s.iter().map(|v| v / c as f64).collect())
            .collect()
    }

    #[test]
    fn ringnorm_has_the_published_moments() {
        let ds = ringnorm(20_000, 1);
        assert_eq!((ds.x.rows, ds.x.cols), (20_000, 20));
        let Targets::Classes { y, .. } = &ds.targets else {
            panic!()
        };
        let ones = y.iter().filter(|&&c| c == 1).count() as f64;
        assert!((ones / 20_000.0 - 0.5).abs() < 0.02);
        let means = class_means(&ds);
        let a = 1.0 / 20f64.sqrt();
        for j in 0..20 {
            assert!(means[0][j].abs() < 0.1);
            assert!((means[1][j] - a).abs() < 0.05);
        }
        // Variance 4 for class 1, 1 for class 2 (first variable).
        let (mut v0, mut n0, mut v1, mut n1) = (0.0, 0.0, 0.0, 0.0);
        for (i, &c) in y.iter().enumerate() {
            let x = ds.x.get(i, 0);
            if c == 0 {
                v0 += x * x;
                n0 += 1.0;
            } else {
                v1 += (x - a) * (x - a);
                n1 += 1.0;
            }
        }
        assert!((v0 / n0 - 4.0).abs() < 0.2);
        assert!((v1 / n1 - 1.0).abs() < 0.06);
        assert_eq!(ringnorm(5, 3), ringnorm(5, 3));
        assert_ne!(ringnorm(5, 3), ringnorm(5, 4));
    }

    #[test]
    fn waveform_has_the_published_means() {
        let ds = waveform(30_000, 2);
        assert_eq!(ds.x.cols, 21);
        let means = class_means(&ds);
        let h1 = |i: f64| (6.0f64 - (i - 11.0).abs()).max(0.0);
        // E[u] = 1/2: class means are the average of the two waves.
        for i in 1..=21 {
            let fi = i as f64;
            let w = [h1(fi), h1(fi - 4.0), h1(fi + 4.0)];
            let expect = [
                (w[0] + w[1]) / 2.0,
                (w[0] + w[2]) / 2.0,
                (w[1] + w[2]) / 2.0,
            ];
            for c in 0..3 {
                assert!(
                    (means[c][i - 1] - expect[c]).abs() < 0.12,
                    "class {c} var {i}: {} vs {}",
                    means[c][i - 1],
                    expect[c]
                );
            }
        }
        let y = class_values(&ds.targets, &[1.0, 2.0, 3.0]).unwrap();
        assert!(y.iter().all(|v| [1.0, 2.0, 3.0].contains(v)));
        assert!(class_values(&ds.targets, &[1.0, 2.0]).is_err());
    }

    #[test]
    fn monomial_problem_is_a_sum_of_distinct_monomials() {
        let p = MonomialProblem::new(5, 10, 3, 7).unwrap();
        assert_eq!(p.terms.len(), 10);
        for (i, a) in p.terms.iter().enumerate() {
            assert!(a.len() <= 3 && a.windows(2).all(|w| w[0] <= w[1]));
            assert!(p.terms[i + 1..].iter().all(|b| b != a));
        }
        let ds = p.generate(50, 8);
        let Targets::Real(y) = &ds.targets else {
            panic!()
        };
        for i in 0..50 {
            let x = ds.x.row(i);
            assert!(x.iter().all(|v| (-1.0..1.0).contains(v)));
            // Twin: expand each monomial by hand.
            let direct: f64 = p
                .terms
                .iter()
                .map(|m| {
                    let mut v = 1.0;
                    for &j in m {
                        v *= x[j as usize];
                    }
                    v
                })
                .sum();
            assert!((y[i] - direct).abs() < 1e-12);
        }
        assert_eq!(p.term_names().len(), 10);
        assert!(MonomialProblem::new(1, 10, 3, 0).is_err());
        assert_eq!(MonomialProblem::new(1, 4, 3, 0).unwrap().terms.len(), 4);
    }
}
