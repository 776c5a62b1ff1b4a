//! Generated data sets (seeded): Breiman's ringnorm and waveform (docs/formulas.md, "Generated
//! data"; Breiman 1996, as in R's mlbench), the synthetic polynomial regression problem of
//! Afkanpour et al. (2013), Sec. 5.2, and two tables of this project's own that test the
//! built-in selection (docs/selection.md): an interaction of two features among many, and
//! binary indicators of a sequence with three classes.
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
//! - [`interactions`]: `r` variables `N(0, 1)`; the class is "1" when `x1 x2 > 0` (the two
//!   features interact: neither alone, nor any sum of functions of one feature, says
//!   anything about it), "2" otherwise; then each label is replaced by a fair coin's with
//!   probability `INTERACTIONS_NOISE`. The other `r - 2` variables are noise.
//! - [`indicators`]: a sequence of `INDICATOR_POSITIONS` letters of {A, C, G, T}, each
//!   letter as 3 binary indicators (A = 100, C = 010, G = 001, T = 000: 180 columns, as the
//!   Statlog DNA table encodes its splice junctions). Class "1" (a quarter of the rows) has
//!   `GT` at positions 31-32, class "2" (a quarter) `AG` at positions 29-30, class "3" has
//!   neither; the other letters are uniform, drawn again while they would make a motif that
//!   is not the row's.
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
    ringnorm_from(&mut ChaCha8Rng::seed_from_u64(seed), n)
}

/// `n` ringnorm points drawn from `rng`, row after row (a row's class, then its 20 values),
/// so that consecutive calls on the same generator continue one stream.
fn ringnorm_from(rng: &mut ChaCha8Rng, n: usize) -> Dataset {
    let d = 20;
    let a = 1.0 / (d as f64).sqrt();
    let mut data = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let c = usize::from(rng.r#gen::<bool>());
        for _ in 0..d {
            let e: f64 = StandardNormal.sample(rng);
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
    waveform_from(&mut ChaCha8Rng::seed_from_u64(seed), n)
}

/// `n` waveform points drawn from `rng`, row after row (a row's class, its `u`, then its 21
/// values), so that consecutive calls on the same generator continue one stream.
fn waveform_from(rng: &mut ChaCha8Rng, n: usize) -> Dataset {
    let d = 21;
    let h1 = |i: f64| (6.0 - (i - 11.0).abs()).max(0.0);
    let h = |k: usize, i: f64| match k {
        0 => h1(i),
        1 => h1(i - 4.0),
        _ => h1(i + 4.0),
    };
    // Pairs of waves per class.
    let pairs = [(0usize, 1usize), (0, 2), (1, 2)];
    let mut data = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let c = rng.gen_range(0..3usize);
        let u: f64 = rng.r#gen();
        let (p, q) = pairs[c];
        for i in 1..=d {
            let e: f64 = StandardNormal.sample(rng);
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

/// The chance that a row of [`interactions`] has a coin's label instead of its own.
pub(crate) const INTERACTIONS_NOISE: f64 = 0.1;

/// `n` points of `r >= 2` variables whose class is the interaction of the first two
/// (module docs; classes "1" and "2").
pub fn interactions(n: usize, r: usize, seed: u64) -> Result<Dataset> {
    check_interactions(r)?;
    Ok(interactions_from(
        &mut ChaCha8Rng::seed_from_u64(seed),
        n,
        r,
    ))
}

fn check_interactions(r: usize) -> Result<()> {
    if r < 2 {
        return Err(Error::param(
            "r",
            r,
            "at least 2 variables (the class is the interaction of the first two)",
        ));
    }
    Ok(())
}

/// `n` interaction points drawn from `rng`, row after row (its `r` values, then the coin
/// for the noise and, when it comes up, the label), so that consecutive calls continue one
/// stream.
fn interactions_from(rng: &mut ChaCha8Rng, n: usize, r: usize) -> Dataset {
    let mut data = Vec::with_capacity(n * r);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let start = data.len();
        for _ in 0..r {
            let e: f64 = StandardNormal.sample(rng);
            data.push(e);
        }
        let mut c = usize::from(data[start] * data[start + 1] <= 0.0);
        if rng.r#gen::<f64>() < INTERACTIONS_NOISE {
            c = usize::from(rng.r#gen::<bool>());
        }
        y.push(c);
    }
    Dataset {
        x: Matrix::from_vec(n, r, data),
        targets: Targets::Classes {
            classes: vec!["1".into(), "2".into()],
            y,
        },
        feature_names: names(r),
    }
}

/// Letters per row of [`indicators`] (3 indicator columns each).
pub(crate) const INDICATOR_POSITIONS: usize = 60;

/// `n` rows of `INDICATOR_POSITIONS` letters as 180 binary indicators, 3 classes by the
/// motifs they carry (module docs).
pub fn indicators(n: usize, seed: u64) -> Dataset {
    indicators_from(&mut ChaCha8Rng::seed_from_u64(seed), n)
}

/// The class a letter sequence (0 = A, 1 = C, 2 = G, 3 = T) shows: 0 with `GT` at
/// positions 31-32 (indices 30, 31), 1 with `AG` at 29-30 (indices 28, 29), 2 with neither;
/// `None` with both.
fn motif_class(s: &[u8]) -> Option<usize> {
    let gt = s[30] == 2 && s[31] == 3;
    let ag = s[28] == 0 && s[29] == 2;
    match (gt, ag) {
        (true, true) => None,
        (true, false) => Some(0),
        (false, true) => Some(1),
        (false, false) => Some(2),
    }
}

/// `n` indicator rows drawn from `rng`, row after row (the class, then the letters until
/// they show it), so that consecutive calls continue one stream.
fn indicators_from(rng: &mut ChaCha8Rng, n: usize) -> Dataset {
    let d = 3 * INDICATOR_POSITIONS;
    let mut data = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    let mut s = [0u8; INDICATOR_POSITIONS];
    for _ in 0..n {
        let c = match rng.gen_range(0..4u8) {
            0 => 0,
            1 => 1,
            _ => 2,
        };
        loop {
            s.iter_mut().for_each(|l| *l = rng.gen_range(0..4u8));
            match c {
                0 => (s[30], s[31]) = (2, 3),
                1 => (s[28], s[29]) = (0, 2),
                _ => {}
            }
            if motif_class(&s) == Some(c) {
                break;
            }
        }
        for &l in &s {
            data.extend_from_slice(&[
                f64::from(u8::from(l == 0)),
                f64::from(u8::from(l == 1)),
                f64::from(u8::from(l == 2)),
            ]);
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
    pub(crate) fn value(&self, x: &[f64]) -> f64 {
        self.terms
            .iter()
            .map(|m| m.iter().map(|&j| x[j as usize]).product::<f64>())
            .sum()
    }

    /// `n` points with inputs uniform on `[-1, 1]^r`.
    pub fn generate(&self, n: usize, seed: u64) -> Dataset {
        self.generate_from(&mut ChaCha8Rng::seed_from_u64(seed), n)
    }

    /// `n` points drawn from `rng`, row after row (the inputs of a row, in order), so that
    /// consecutive calls on the same generator continue one stream.
    fn generate_from(&self, rng: &mut ChaCha8Rng, n: usize) -> Dataset {
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
    pub(crate) fn term_names(&self) -> Vec<String> {
        let nm = names(self.r);
        self.terms.iter().map(|m| index_name(m, &nm)).collect()
    }
}

/// The generated data sets by name, for command-line tools: `polynomial` (alias
/// `synthetic`; Sec. 5.2 of Afkanpour et al. 2013: `r` inputs, 10 monomials of degree <= 3
/// drawn with `problem_seed`), `ringnorm`, `waveform`, `interactions` (`r` inputs) or
/// `indicators`; `n` points drawn with `seed`.
/// Returns the data and, for the polynomial problem, its target as text.
///
/// The whole data set is held in memory; [`generate_chunks`] draws the same rows a chunk at
/// a time.
pub fn generate(
    name: &str,
    n: usize,
    r: usize,
    problem_seed: u64,
    seed: u64,
) -> Result<(Dataset, Option<String>)> {
    let mut chunks = generate_chunks(name, n, r, problem_seed, seed, n)?;
    let target = chunks.target().map(str::to_string);
    match chunks.next() {
        Some(ds) => Ok((ds, target)),
        None => Err(Error::param("n", 0, "at least 1 point")),
    }
}

/// Which generator a [`Chunks`] stream draws from.
#[derive(Debug, Clone)]
enum Source {
    Ringnorm,
    Waveform,
    Interactions(usize),
    Indicators,
    Polynomial(MonomialProblem),
}

/// A generated data set drawn a chunk of rows at a time (an iterator of [`Dataset`]s of at
/// most `chunk` rows each, the last one shorter), from one random stream: the chunks,
/// concatenated, are exactly the rows [`generate`] returns for the same name, size and seeds,
/// whatever the chunk size, since every generator draws its rows one after the other from a
/// single generator. Memory is bounded by one chunk. Made by [`generate_chunks`].
#[derive(Debug, Clone)]
pub struct Chunks {
    source: Source,
    rng: ChaCha8Rng,
    remaining: usize,
    chunk: usize,
    target: Option<String>,
}

/// The generated data set `name` ([`generate`] lists them) of `n` points as a stream of chunks
/// of `chunk` rows ([`Chunks`]): the same rows as [`generate`] with the same arguments,
/// never more than `chunk` of them in memory at once. Errors: an unknown name, `n = 0`,
/// `chunk = 0`, or a polynomial problem with too few inputs.
pub fn generate_chunks(
    name: &str,
    n: usize,
    r: usize,
    problem_seed: u64,
    seed: u64,
    chunk: usize,
) -> Result<Chunks> {
    if n == 0 {
        return Err(Error::param("n", 0, "at least 1 point"));
    }
    if chunk == 0 {
        return Err(Error::param("chunk", 0, "at least 1 row per chunk"));
    }
    let (source, target) = match name.trim().to_ascii_lowercase().as_str() {
        "polynomial" | "synthetic" => {
            let problem = MonomialProblem::new(r, 10, 3, problem_seed)?;
            let target = problem.term_names().join(" + ");
            (Source::Polynomial(problem), Some(target))
        }
        "ringnorm" => (Source::Ringnorm, None),
        "waveform" => (Source::Waveform, None),
        "interactions" => {
            check_interactions(r)?;
            (
                Source::Interactions(r),
                Some("class 1 when x1 * x2 > 0, 2 otherwise (10 % coin labels)".to_string()),
            )
        }
        "indicators" => (
            Source::Indicators,
            Some("class 1: GT at letters 31-32; 2: AG at 29-30; 3: neither".to_string()),
        ),
        other => {
            return Err(Error::param(
                "data set",
                other,
                "polynomial, ringnorm, waveform, interactions or indicators",
            ))
        }
    };
    Ok(Chunks {
        source,
        rng: ChaCha8Rng::seed_from_u64(seed),
        remaining: n,
        chunk,
        target,
    })
}

impl Chunks {
    /// The polynomial problem's target as text (`x1^2*x5 + ...`); `None` for the others.
    pub fn target(&self) -> Option<&str> {
        self.target.as_deref()
    }

    /// The number of features of every chunk (20 for ringnorm, 21 for waveform, `r` for the
    /// polynomial problem).
    pub fn n_features(&self) -> usize {
        match &self.source {
            Source::Ringnorm => 20,
            Source::Waveform => 21,
            Source::Interactions(r) => *r,
            Source::Indicators => 3 * INDICATOR_POSITIONS,
            Source::Polynomial(p) => p.r,
        }
    }

    /// Draws the remaining rows chunk by chunk and hands their CSV text to `sink`, in order:
    /// the concatenated pieces are byte for byte [`crate::data::to_csv`] of the whole data set
    /// (the header, from the first chunk, then every row), while only one chunk and its text
    /// are in memory. Stops at the first error of `sink` and returns it; returns the number
    /// of rows written.
    pub fn write_csv(self, mut sink: impl FnMut(&str) -> Result<()>) -> Result<usize> {
        let mut rows = 0;
        for (i, ds) in self.enumerate() {
            let text = crate::data::to_csv(&ds);
            let body = if i == 0 {
                text.as_str()
            } else {
                // Every chunk's text starts with the same header line (our feature names,
                // `x1, x2, ...`, never quoted, never holding a newline): written once.
                text.split_once('\n').map_or("", |(_, rest)| rest)
            };
            sink(body)?;
            rows += ds.len();
        }
        Ok(rows)
    }
}

impl Iterator for Chunks {
    type Item = Dataset;

    fn next(&mut self) -> Option<Dataset> {
        if self.remaining == 0 {
            return None;
        }
        let n = self.chunk.min(self.remaining);
        self.remaining -= n;
        Some(match &self.source {
            Source::Ringnorm => ringnorm_from(&mut self.rng, n),
            Source::Waveform => waveform_from(&mut self.rng, n),
            Source::Interactions(r) => interactions_from(&mut self.rng, n, *r),
            Source::Indicators => indicators_from(&mut self.rng, n),
            Source::Polynomial(p) => p.generate_from(&mut self.rng, n),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let k = self.remaining.div_ceil(self.chunk);
        (k, Some(k))
    }
}

impl ExactSizeIterator for Chunks {}

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
    fn interactions_label_the_sign_of_the_product_up_to_the_coin() {
        let ds = interactions(20_000, 6, 3).unwrap();
        assert_eq!((ds.x.rows, ds.x.cols), (20_000, 6));
        let Targets::Classes { y, .. } = &ds.targets else {
            panic!()
        };
        // A coin's label differs from the row's own half of the time.
        let differ = (0..ds.len())
            .filter(|&i| y[i] != usize::from(ds.x.get(i, 0) * ds.x.get(i, 1) <= 0.0))
            .count() as f64
            / 20_000.0;
        assert!((differ - INTERACTIONS_NOISE / 2.0).abs() < 0.01, "{differ}");
        // Neither feature alone says anything: class 1 is as often above 0 as below.
        for j in 0..2 {
            let above = (0..ds.len())
                .filter(|&i| y[i] == 0 && ds.x.get(i, j) > 0.0)
                .count() as f64;
            let ones = y.iter().filter(|&&c| c == 0).count() as f64;
            assert!((above / ones - 0.5).abs() < 0.02, "feature {j}");
        }
        assert!(interactions(5, 1, 0).is_err());
        assert_eq!(
            interactions(5, 3, 1).unwrap(),
            interactions(5, 3, 1).unwrap()
        );
    }

    #[test]
    fn indicators_carry_their_motif_and_one_letter_per_position() {
        let ds = indicators(4000, 5);
        assert_eq!(ds.x.cols, 180);
        let Targets::Classes { y, .. } = &ds.targets else {
            panic!()
        };
        let mut counts = [0usize; 3];
        for i in 0..ds.len() {
            let row = ds.x.row(i);
            // Decode the letters back (the slow twin of the encoding).
            let s: Vec<u8> = row
                .chunks(3)
                .map(|b| {
                    assert!(b.iter().all(|v| *v == 0.0 || *v == 1.0));
                    assert!(b.iter().sum::<f64>() <= 1.0);
                    b.iter().position(|v| *v == 1.0).map_or(3, |p| p as u8)
                })
                .collect();
            let gt = s[30] == 2 && s[31] == 3;
            let ag = s[28] == 0 && s[29] == 2;
            let want = match (gt, ag) {
                (true, false) => 0,
                (false, true) => 1,
                (false, false) => 2,
                (true, true) => panic!("row {i} has both motifs"),
            };
            assert_eq!(y[i], want, "row {i}");
            counts[y[i]] += 1;
        }
        for (c, share) in [(0, 0.25), (1, 0.25), (2, 0.5)] {
            assert!(
                (counts[c] as f64 / 4000.0 - share).abs() < 0.03,
                "{counts:?}"
            );
        }
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
