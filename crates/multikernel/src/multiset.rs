//! Product kernels as multi-indices: counting, naming, enumerating and sampling the
//! multisets `m = (j_1 <= ... <= j_d)` of base-kernel indices that name the product kernels
//! `K_m = K_{j_1} ⊙ ... ⊙ K_{j_d}` of Afkanpour et al. (2013), Sec. 4.

use crate::error::{Error, Result};
use rand::Rng;

/// `v > 0` (false for NaN).
#[inline]
fn pos(v: f64) -> bool {
    v > 0.0
}

/// A product kernel: base-kernel indices in non-decreasing order (`len` = degree).
pub type MultiIndex = Vec<u32>;

/// Number of distinct product kernels of degree exactly `d` over `r` base kernels,
/// `C(r + d - 1, d)`, as `f64` (exact below 2^53).
pub(crate) fn count_of_degree(r: usize, d: usize) -> f64 {
    if d == 0 {
        return 1.0;
    }
    if r == 0 {
        return 0.0;
    }
    binom(r + d - 1, d)
}

/// Number of distinct product kernels of degree `0..=degree`, `C(r + D, D)`.
pub fn count_kernels(r: usize, degree: usize) -> f64 {
    binom(r + degree, degree)
}

fn binom(n: usize, k: usize) -> f64 {
    let k = k.min(n.saturating_sub(k));
    let mut v = 1.0f64;
    for i in 0..k {
        v = v * (n - i) as f64 / (i + 1) as f64;
    }
    v.round()
}

/// Number of distinct orderings of a sorted multi-index, `d! / prod mu_j!`.
pub(crate) fn orderings(m: &[u32]) -> f64 {
    let mut c = 1.0;
    let mut run = 0usize;
    for (i, _) in m.iter().enumerate() {
        run = if i > 0 && m[i] == m[i - 1] {
            run + 1
        } else {
            1
        };
        // multiply by (i+1) / run: d!/prod mu! built incrementally
        c = c * (i + 1) as f64 / run as f64;
    }
    c
}

/// A readable name of a multi-index: `"1"` for the constant kernel, else factors joined by
/// `*` with powers, e.g. `x1^2*x5` for `names = ["x1", .., "x5", ..]` and `m = [0, 0, 4]`.
pub(crate) fn index_name(m: &[u32], names: &[String]) -> String {
    if m.is_empty() {
        return "1".to_string();
    }
    let mut parts = Vec::new();
    let mut i = 0;
    while i < m.len() {
        let mut k = i;
        while k < m.len() && m[k] == m[i] {
            k += 1;
        }
        let base = names
            .get(m[i] as usize)
            .cloned()
            .unwrap_or_else(|| format!("k{}", m[i] + 1));
        let p = k - i;
        parts.push(if p == 1 { base } else { format!("{base}^{p}") });
        i = k;
    }
    parts.join("*")
}

/// Index drawn with probability proportional to the non-negative `w` (`None` if all zero).
pub(crate) fn pick<R: Rng + ?Sized>(w: &[f64], rng: &mut R) -> Option<usize> {
    let total: f64 = w.iter().sum();
    if !pos(total) || !total.is_finite() {
        return None;
    }
    let u = rng.r#gen::<f64>() * total;
    let mut acc = 0.0;
    let mut last = None;
    for (i, &v) in w.iter().enumerate() {
        if v > 0.0 {
            acc += v;
            last = Some(i);
            if u < acc {
                return Some(i);
            }
        }
    }
    last
}

/// A distribution over distinct product kernels given by the user (eq. 14 with `s_{k-1}`
/// fixed): it must give positive probability to every kernel whose gradient is non-zero
/// for the estimate to be unbiased.
pub trait IndexDistribution: Send + Sync + std::fmt::Debug {
    /// One multi-index (sorted, degree `<= D`).
    fn draw(&self, rng: &mut dyn rand::RngCore) -> MultiIndex;
    /// Its probability.
    fn prob(&self, m: &[u32]) -> f64;
}

/// Degree `d` with probability `degree_probs[d]`, then uniform over the
/// `C(r + d - 1, d)` multisets of that degree. [`DegreeUniform::uniform`] is the uniform
/// distribution over all `C(r + D, D)` kernels (uniform coordinate descent, UCD).
#[derive(Debug, Clone)]
pub(crate) struct DegreeUniform {
    r: usize,
    probs: Vec<f64>,
}

impl DegreeUniform {
    /// `degree_probs` has one non-negative entry per degree `0..=D`, normalized here.
    pub(crate) fn new(r: usize, degree_probs: &[f64]) -> Result<DegreeUniform> {
        if r == 0 || degree_probs.is_empty() {
            return Err(Error::data(
                "a degree distribution needs base kernels and at least one degree",
            ));
        }
        if degree_probs.iter().any(|p| !(p.is_finite() && *p >= 0.0)) {
            return Err(Error::param(
                "degree_probs",
                format!("{degree_probs:?}"),
                "probabilities that are finite and >= 0",
            ));
        }
        let s: f64 = degree_probs.iter().sum();
        if !pos(s) {
            return Err(Error::param(
                "degree_probs",
                format!("{degree_probs:?}"),
                "at least one positive probability",
            ));
        }
        Ok(DegreeUniform {
            r,
            probs: degree_probs.iter().map(|p| p / s).collect(),
        })
    }

    /// Uniform over all distinct product kernels of degree `0..=degree`.
    pub(crate) fn uniform(r: usize, degree: usize) -> Result<DegreeUniform> {
        let w: Vec<f64> = (0..=degree).map(|d| count_of_degree(r, d)).collect();
        DegreeUniform::new(r, &w)
    }
}

impl IndexDistribution for DegreeUniform {
    fn draw(&self, rng: &mut dyn rand::RngCore) -> MultiIndex {
        let d = pick(&self.probs, rng).unwrap_or(0);
        uniform_multiset(self.r, d, rng)
    }

    fn prob(&self, m: &[u32]) -> f64 {
        let d = m.len();
        if d >= self.probs.len() || m.iter().any(|&j| j as usize >= self.r) {
            return 0.0;
        }
        self.probs[d] / count_of_degree(self.r, d)
    }
}

/// A uniformly random multiset of size `d` from `0..r` (sorted): stars and bars, i.e. `d`
/// distinct positions among `r + d - 1` (Floyd's algorithm), minus their rank.
pub(crate) fn uniform_multiset<R: Rng + ?Sized>(r: usize, d: usize, rng: &mut R) -> MultiIndex {
    if d == 0 {
        return Vec::new();
    }
    let total = r + d - 1;
    let mut chosen: Vec<usize> = Vec::with_capacity(d);
    for j in total - d..total {
        let t = rng.gen_range(0..=j);
        if chosen.contains(&t) {
            chosen.push(j);
        } else {
            chosen.push(t);
        }
    }
    chosen.sort_unstable();
    chosen
        .iter()
        .enumerate()
        .map(|(i, &p)| (p - i) as u32)
        .collect()
}

/// All multisets of size `d` from `0..r` in lexicographic order (small `r`, `d`: tests and
/// explicit kernel lists of the baselines).
pub fn enumerate_multisets(r: usize, d: usize) -> Vec<MultiIndex> {
    let mut out = Vec::new();
    let mut cur: Vec<u32> = Vec::with_capacity(d);
    fn rec(r: usize, d: usize, start: usize, cur: &mut Vec<u32>, out: &mut Vec<MultiIndex>) {
        if cur.len() == d {
            out.push(cur.clone());
            return;
        }
        for j in start..r {
            cur.push(j as u32);
            rec(r, d, j, cur, out);
            cur.pop();
        }
    }
    rec(r, d, 0, &mut cur, &mut out);
    out
}
