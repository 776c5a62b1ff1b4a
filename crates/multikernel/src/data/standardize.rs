//! Feature standardization (z-scores) and regression-target scaling.
//!
//! Afkanpour et al. (2013), Sec. 5: "the inputs and output are normalized to have zero mean
//! and unit variance". [`Standardizer`] does this for the inputs and [`TargetScaler`] for a
//! regression output; both are fitted on the training split only and then applied unchanged
//! to validation and test rows. Statistics are *population* moments (divide by `n`, not
//! `n - 1`).
//!
//! A column whose values do not vary (ionosphere's second column is identically zero) gets
//! scale 1, so it is only centered: there is never a division by zero.

use super::Matrix;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// A spread this small relative to the column's largest magnitude is rounding noise: the
/// column is treated as constant (scale 1).
const CONSTANT_TOL: f64 = 1e-12;

/// Mean and population standard deviation of `v` by two passes, and the scale that
/// standardization divides by (1 for a constant or empty column).
fn moments(v: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let mut n = 0usize;
    let mut sum = 0.0;
    let mut max_abs: f64 = 0.0;
    for x in v.clone() {
        n += 1;
        sum += x;
        max_abs = max_abs.max(x.abs());
    }
    if n == 0 {
        return (0.0, 1.0);
    }
    let mut mean = sum / n as f64;
    let ss: f64 = v.clone().map(|x| (x - mean) * (x - mean)).sum();
    let mut std = (ss / n as f64).sqrt();
    if !(mean.is_finite() && std.is_finite()) && max_abs.is_finite() {
        // Values near the largest float (1e300): the sum or the squares overflow. The same
        // two passes on the values divided by their largest magnitude, scaled back (only
        // here, so that ordinary columns keep their bits).
        let (m, s) = moments_unit(v, max_abs, n);
        (mean, std) = (m * max_abs, s * max_abs);
    }
    let scale = if std > CONSTANT_TOL * max_abs && std > 0.0 && std.is_finite() {
        std
    } else {
        1.0
    };
    (mean, scale)
}

/// Mean and population standard deviation of the `n` values `v` divided by `max_abs` (their
/// largest magnitude, so every term is at most 1 and nothing overflows).
fn moments_unit(v: impl Iterator<Item = f64> + Clone, max_abs: f64, n: usize) -> (f64, f64) {
    let mean = v.clone().map(|x| x / max_abs).sum::<f64>() / n as f64;
    let ss: f64 = v.map(|x| (x / max_abs - mean) * (x / max_abs - mean)).sum();
    (mean, (ss / n as f64).sqrt())
}

/// Per-column affine map `x_j -> (x_j - mean_j) / scale_j`, fitted on training features.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Standardizer {
    /// Column means of the training features.
    pub mean: Vec<f64>,
    /// Column population standard deviations (1 for constant columns).
    pub scale: Vec<f64>,
}

impl Standardizer {
    /// Fits column means and population standard deviations of `x` (`n x d`). An empty
    /// matrix gives mean 0 and scale 1 for every column.
    pub fn fit(x: &Matrix) -> Standardizer {
        let (mut mean, mut scale) = (Vec::with_capacity(x.cols), Vec::with_capacity(x.cols));
        for j in 0..x.cols {
            let (m, s) = moments((0..x.rows).map(|i| x.get(i, j)));
            mean.push(m);
            scale.push(s);
        }
        Standardizer { mean, scale }
    }

    /// Number of feature columns the standardizer was fitted on.
    pub(crate) fn n_features(&self) -> usize {
        self.mean.len()
    }

    /// Checks a standardizer read from a model file: one scale per mean, finite means and
    /// finite positive scales (what [`Standardizer::fit`] gives), so that applying it to a
    /// row of `n_features()` values cannot panic or divide by zero.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.scale.len() != self.mean.len() {
            return Err(Error::shape(
                "standardizer: scales (one per mean)",
                self.mean.len(),
                self.scale.len(),
            ));
        }
        if let Some(j) = self.mean.iter().position(|m| !m.is_finite()) {
            return Err(Error::model(
                "standardizer",
                format!("the mean of feature {j} is {}", self.mean[j]),
            ));
        }
        if let Some(j) = self.scale.iter().position(|s| !(s.is_finite() && *s > 0.0)) {
            return Err(Error::model(
                "standardizer",
                format!(
                    "the scale of feature {j} is {}, not a positive number",
                    self.scale[j]
                ),
            ));
        }
        Ok(())
    }

    /// Standardizes one row in place.
    ///
    /// Panics if `row.len() != self.n_features()` (a programming error: readers check the
    /// feature count of a file against the model's before predicting).
    pub(crate) fn apply_row(&self, row: &mut [f64]) {
        assert_eq!(
            row.len(),
            self.mean.len(),
            "Standardizer::apply_row: row has {} features, fitted on {}",
            row.len(),
            self.mean.len()
        );
        for ((v, m), s) in row.iter_mut().zip(&self.mean).zip(&self.scale) {
            *v = (*v - m) / s;
        }
    }

    /// A standardized copy of `x` (same panics as `Standardizer::apply_row`).
    pub fn apply(&self, x: &Matrix) -> Matrix {
        let mut out = x.clone();
        for i in 0..out.rows {
            self.apply_row(out.row_mut(i));
        }
        out
    }

    /// Maps one standardized row back to the original units, in place.
    #[cfg(test)]
    pub(crate) fn invert_row(&self, row: &mut [f64]) {
        assert_eq!(
            row.len(),
            self.mean.len(),
            "Standardizer::invert_row: row has {} features, fitted on {}",
            row.len(),
            self.mean.len()
        );
        for ((v, m), s) in row.iter_mut().zip(&self.mean).zip(&self.scale) {
            *v = *v * s + m;
        }
    }
}

/// Values at least this large (2^400) are accumulated divided by a power of two, so that
/// their squares cannot overflow (see [`StandardizerAccumulator`]).
const SCALE_FROM: f64 = 2.582_249_878_086_908_6e120;

/// `2^e` for `-1022 <= e <= 1023`, exactly.
fn pow2(e: i32) -> f64 {
    f64::from_bits(((e.clamp(-1022, 1023) + 1023) as u64) << 52)
}

/// The binary exponent `k` of a positive normal `v`: `2^k <= v < 2^(k + 1)`.
fn exponent(v: f64) -> i32 {
    ((v.to_bits() >> 52) & 0x7ff) as i32 - 1023
}

/// Streaming moments of one column, of its values divided by `2^shift`: their mean as
/// `reference + offset` (`reference` the first chunk's mean as `fit` computes it, so that
/// the running update works on deviations from it and keeps their precision under a large
/// mean; `offset` starts at the rounding error of `reference`), `m2` the sum
/// of squared deviations from the mean; and the largest magnitude seen.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct ColumnMoments {
    reference: f64,
    offset: f64,
    m2: f64,
    max_abs: f64,
    shift: i32,
}

/// Column means and population standard deviations of a table that arrives in chunks of
/// rows, as [`Standardizer::fit`] computes them on the whole table, in memory bounded by the
/// number of columns.
///
/// Each chunk's moments are computed by two passes over the chunk, exactly as
/// [`Standardizer::fit`] does on the whole table, and merged into the running ones by the
/// pairwise update of Chan, Golub and LeVeque (1979), on deviations from the first chunk's
/// mean (so that a large mean costs no precision even in chunks of one row, where the
/// update is Welford's): with one chunk the result is
/// bit-for-bit the one of `fit` (for values below 2^400); with many it agrees to rounding
/// (about 1e-15 relative on ordinary data). Columns whose values reach 2^400 are accumulated divided by a power of
/// two (exact), so no square overflows even near the largest float. Constant columns get
/// scale 1 by the same rule as `fit`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct StandardizerAccumulator {
    rows: usize,
    /// Non-empty chunks pushed.
    chunks: usize,
    cols: Vec<ColumnMoments>,
}

impl StandardizerAccumulator {
    /// An accumulator for rows of `n_features` values, with no rows yet.
    pub(crate) fn new(n_features: usize) -> StandardizerAccumulator {
        StandardizerAccumulator {
            rows: 0,
            chunks: 0,
            cols: vec![ColumnMoments::default(); n_features],
        }
    }

    /// Number of rows pushed so far.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// Adds the rows of `x`, which must have the `n_features` columns given to `new`
    /// (else a shape error, and nothing is added).
    pub(crate) fn push_rows(&mut self, x: &Matrix) -> Result<()> {
        if x.cols != self.cols.len() {
            return Err(Error::shape(
                "standardizer accumulator: columns of a chunk",
                self.cols.len(),
                x.cols,
            ));
        }
        if x.rows == 0 {
            return Ok(());
        }
        let nb = x.rows;
        let n = self.rows + nb;
        for (j, acc) in self.cols.iter_mut().enumerate() {
            let column = || x.data.iter().skip(j).step_by(x.cols).copied();
            let chunk_max = column().fold(0.0f64, |m, v| m.max(v.abs()));
            let max_abs = acc.max_abs.max(chunk_max);
            if max_abs >= SCALE_FROM && max_abs.is_finite() {
                let shift = exponent(max_abs);
                if shift > acc.shift {
                    let down = pow2(acc.shift - shift);
                    acc.reference *= down;
                    acc.offset *= down;
                    acc.m2 = acc.m2 * down * down;
                    acc.shift = shift;
                }
            }
            acc.max_abs = max_abs;
            let scale = pow2(-acc.shift);
            // The chunk's two passes, as in `moments` (on the deviations from the reference
            // after the first chunk).
            let reference = acc.reference;
            let y = |v: f64| v * scale - reference;
            let mut sum = 0.0;
            for v in column() {
                sum += y(v);
            }
            let mb = sum / nb as f64;
            let m2b: f64 = column().map(|v| (y(v) - mb) * (y(v) - mb)).sum();
            if self.rows == 0 {
                // `mb` is `fit`'s mean; `offset` corrects its rounding (summing large values
                // loses digits that the deviations of later chunks would carry into `m2`).
                let residual: f64 = column().map(|v| v * scale - mb).sum();
                (acc.reference, acc.offset, acc.m2) = (mb, residual / nb as f64, m2b);
            } else {
                let delta = mb - acc.offset;
                let (na, nb, n) = (self.rows as f64, nb as f64, n as f64);
                acc.offset += delta * (nb / n);
                acc.m2 += m2b + delta * delta * (na * (nb / n));
            }
        }
        self.rows = n;
        self.chunks += 1;
        Ok(())
    }

    /// The standardizer of the rows pushed: the means and the population standard
    /// deviations, scale 1 for a constant column (as [`Standardizer::fit`]); mean 0 and
    /// scale 1 for every column when no rows were pushed.
    pub(crate) fn finish(&self) -> Standardizer {
        let (mut mean, mut scale) = (Vec::new(), Vec::new());
        for acc in &self.cols {
            let (m, s) = if self.rows == 0 {
                (0.0, 1.0)
            } else {
                let up = pow2(acc.shift);
                let std = (acc.m2 / self.rows as f64).sqrt() * up;
                let s = if std > CONSTANT_TOL * acc.max_abs && std > 0.0 && std.is_finite() {
                    std
                } else {
                    1.0
                };
                // One chunk: `fit`'s mean to the bit (its rounding kept).
                let mean = if self.chunks == 1 {
                    acc.reference
                } else {
                    acc.reference + acc.offset
                };
                (mean * up, s)
            };
            mean.push(m);
            scale.push(s);
        }
        Standardizer { mean, scale }
    }
}

/// Affine map `y -> (y - mean) / scale` of regression targets; predictions are mapped back
/// with [`TargetScaler::invert`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TargetScaler {
    pub mean: f64,
    /// Population standard deviation of the training targets (1 if they are constant).
    pub scale: f64,
}

impl TargetScaler {
    /// Fits mean and population standard deviation of `y` (mean 0, scale 1 when empty).
    pub fn fit(y: &[f64]) -> TargetScaler {
        let (mean, scale) = moments(y.iter().copied());
        TargetScaler { mean, scale }
    }

    /// Checks a target scaler read from a model file: a finite mean and a finite positive
    /// scale (what [`TargetScaler::fit`] gives).
    pub(crate) fn validate(&self) -> Result<()> {
        if !(self.mean.is_finite() && self.scale.is_finite() && self.scale > 0.0) {
            return Err(Error::model(
                "target scaler",
                format!(
                    "mean {} and scale {}: a finite mean and a positive finite scale expected",
                    self.mean, self.scale
                ),
            ));
        }
        Ok(())
    }

    /// Scales one target.
    #[inline]
    pub(crate) fn apply(&self, y: f64) -> f64 {
        (y - self.mean) / self.scale
    }

    /// Maps one scaled value (e.g. a prediction) back to the original units.
    #[inline]
    pub fn invert(&self, z: f64) -> f64 {
        z * self.scale + self.mean
    }

    /// Scales every target.
    pub fn apply_all(&self, y: &[f64]) -> Vec<f64> {
        y.iter().map(|&v| self.apply(v)).collect()
    }

    /// Maps every scaled value back.
    #[cfg(test)]
    pub(crate) fn invert_all(&self, z: &[f64]) -> Vec<f64> {
        z.iter().map(|&v| self.invert(v)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Obviously-correct twin: population mean and variance from the textbook definitions,
    /// with plain indexing and no shared helper.
    fn naive(col: &[f64]) -> (f64, f64) {
        let n = col.len() as f64;
        let mut mean = 0.0;
        for v in col {
            mean += v / n;
        }
        let mut var = 0.0;
        for v in col {
            var += (v - mean).powi(2) / n;
        }
        (mean, var.sqrt())
    }

    /// Values near 1e300 overflow the plain sums (the square of 1e300 is infinite): the
    /// moments still come out finite, equal to the twin's on the values divided by 1e300 and
    /// scaled back, and the standardized column has mean 0 and variance 1.
    #[test]
    fn values_near_1e300_standardize_without_overflow() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let col: Vec<f64> = (0..50).map(|_| rng.gen_range(-3.0..3.0) * 1e300).collect();
        let m = Matrix::from_vec(50, 1, col.clone());
        let st = Standardizer::fit(&m);
        let unit: Vec<f64> = col.iter().map(|v| v / 1e300).collect();
        let (mu, sd) = naive(&unit);
        assert!(st.mean[0].is_finite() && st.scale[0].is_finite(), "{st:?}");
        assert!(
            (st.mean[0] / 1e300 - mu).abs() < 1e-12,
            "{} vs {mu}",
            st.mean[0]
        );
        assert!((st.scale[0] / 1e300 / sd - 1.0).abs() < 1e-12);
        let z = st.apply(&m);
        let (zm, zs) = naive(&z.data);
        assert!(zm.abs() < 1e-12 && (zs - 1.0).abs() < 1e-12, "{zm} {zs}");
        // A constant column of 1e300 is constant: centered, scale 1.
        let c = Standardizer::fit(&Matrix::from_vec(3, 1, vec![1e300; 3]));
        assert_eq!((c.mean[0], c.scale[0]), (1e300, 1.0));
    }

    fn random_matrix(rows: usize, cols: usize, seed: u64) -> Matrix {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut m = Matrix::zeros(rows, cols);
        for j in 0..cols {
            let (loc, spread) = (rng.gen_range(-50.0..50.0), rng.gen_range(0.01..20.0));
            for i in 0..rows {
                m.set(i, j, loc + spread * rng.gen_range(-1.0..1.0));
            }
        }
        m
    }

    #[test]
    fn fit_matches_naive_moments() {
        let x = random_matrix(37, 6, 1);
        let s = Standardizer::fit(&x);
        for j in 0..x.cols {
            let (m, sd) = naive(&x.col(j));
            assert!(
                (s.mean[j] - m).abs() < 1e-9 * (1.0 + m.abs()),
                "mean col {j}"
            );
            assert!((s.scale[j] - sd).abs() < 1e-9 * sd, "scale col {j}");
        }
    }

    #[test]
    fn applied_columns_have_zero_mean_unit_population_variance() {
        let x = random_matrix(50, 5, 2);
        let z = Standardizer::fit(&x).apply(&x);
        for j in 0..z.cols {
            let (m, sd) = naive(&z.col(j));
            assert!(m.abs() < 1e-12, "mean {m}");
            assert!((sd - 1.0).abs() < 1e-12, "std {sd}");
        }
    }

    #[test]
    fn constant_columns_get_scale_one_and_no_division_by_zero() {
        // Column 1 is identically zero (as ionosphere's), column 2 constant 0.1 (whose
        // computed mean may differ from 0.1 by rounding), column 0 varies.
        let rows: Vec<Vec<f64>> = (0..7).map(|i| vec![i as f64, 0.0, 0.1]).collect();
        let x = Matrix::from_rows(&rows);
        let s = Standardizer::fit(&x);
        assert_eq!(s.scale[1], 1.0);
        assert_eq!(s.scale[2], 1.0);
        assert!((s.scale[0] - 2.0).abs() < 1e-12); // population std of 0..=6 is 2
        let z = s.apply(&x);
        assert!(z.data.iter().all(|v| v.is_finite()));
        for i in 0..z.rows {
            assert_eq!(z.get(i, 1), 0.0);
            assert!(z.get(i, 2).abs() < 1e-15);
        }
    }

    #[test]
    fn empty_matrix_and_row_roundtrip() {
        let s = Standardizer::fit(&Matrix::zeros(0, 3));
        assert_eq!(s.mean, vec![0.0; 3]);
        assert_eq!(s.scale, vec![1.0; 3]);

        let x = random_matrix(10, 4, 3);
        let s = Standardizer::fit(&x);
        let mut r = x.row(4).to_vec();
        s.apply_row(&mut r);
        assert_eq!(r.as_slice(), s.apply(&x).row(4));
        s.invert_row(&mut r);
        for (a, b) in r.iter().zip(x.row(4)) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    #[test]
    fn serde_roundtrip() {
        // serde_json without its `float_roundtrip` feature may be off by one ulp on reading,
        // hence the tolerance instead of exact equality.
        let s = Standardizer::fit(&random_matrix(9, 3, 4));
        let back: Standardizer = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        let close = |a: &[f64], b: &[f64]| {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| (x - y).abs() <= 1e-15 * x.abs().max(1.0) * 4.0)
        };
        assert!(
            close(&s.mean, &back.mean) && close(&s.scale, &back.scale),
            "{s:?} vs {back:?}"
        );
    }

    #[test]
    fn target_scaler_matches_naive_and_inverts() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let y: Vec<f64> = (0..40).map(|_| rng.gen_range(5.0..50.0)).collect();
        let t = TargetScaler::fit(&y);
        let (m, sd) = naive(&y);
        assert!((t.mean - m).abs() < 1e-9);
        assert!((t.scale - sd).abs() < 1e-9);
        let z = t.apply_all(&y);
        let (zm, zsd) = naive(&z);
        assert!(zm.abs() < 1e-12 && (zsd - 1.0).abs() < 1e-12);
        for (a, b) in t.invert_all(&z).iter().zip(&y) {
            assert!((a - b).abs() < 1e-12);
        }
        assert!((t.invert(t.apply(3.25)) - 3.25).abs() < 1e-12);
    }

    #[test]
    fn target_scaler_degenerate_inputs() {
        let t = TargetScaler::fit(&[4.0, 4.0, 4.0]);
        assert_eq!(
            t,
            TargetScaler {
                mean: 4.0,
                scale: 1.0
            }
        );
        assert_eq!(t.apply(5.0), 1.0);
        let e = TargetScaler::fit(&[]);
        assert_eq!(
            e,
            TargetScaler {
                mean: 0.0,
                scale: 1.0
            }
        );
    }

    #[test]
    fn validate_accepts_fitted_scalers_and_refuses_broken_ones() {
        let x = Matrix::from_rows(&[vec![1.0, 0.0, 2.0], vec![3.0, 0.0, -1.0]]);
        let s = Standardizer::fit(&x);
        s.validate().unwrap();
        let refused = |f: &dyn Fn(&mut Standardizer)| {
            let mut m = s.clone();
            f(&mut m);
            m.validate().unwrap_err()
        };
        assert!(matches!(
            refused(&|m| {
                m.scale.pop();
            }),
            Error::ShapeMismatch {
                expected: 3,
                found: 2,
                ..
            }
        ));
        refused(&|m| m.scale[1] = 0.0);
        refused(&|m| m.scale[2] = -1.0);
        refused(&|m| m.mean[0] = f64::NAN);
        refused(&|m| m.scale[0] = f64::INFINITY);

        let t = TargetScaler::fit(&[1.0, 2.0, 4.0]);
        t.validate().unwrap();
        for bad in [
            TargetScaler {
                mean: f64::NAN,
                scale: 1.0,
            },
            TargetScaler {
                mean: 0.0,
                scale: 0.0,
            },
            TargetScaler {
                mean: 0.0,
                scale: f64::INFINITY,
            },
        ] {
            assert!(matches!(bad.validate(), Err(Error::Model { .. })));
        }
    }
}

#[cfg(test)]
mod accumulator_tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The moments of `x` pushed in chunks of `chunk` rows.
    fn chunked(x: &Matrix, chunk: usize) -> Standardizer {
        let mut acc = StandardizerAccumulator::new(x.cols);
        let idx: Vec<usize> = (0..x.rows).collect();
        for rows in idx.chunks(chunk) {
            acc.push_rows(&x.select_rows(rows)).unwrap();
        }
        assert_eq!(acc.rows(), x.rows);
        acc.finish()
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * a.abs().max(b.abs())
    }

    /// In any chunking the streamed moments equal `fit`'s to 1e-13 relative; in one chunk,
    /// bit for bit for values below 2^400 (beyond, `fit` divides by the largest magnitude
    /// where the accumulator divides by a power of two). Constant columns (zero, or 1e300)
    /// get scale 1 either way.
    #[test]
    fn chunked_moments_equal_fit() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (n, d) = (1000, 6);
        let mut x = Matrix::zeros(n, d);
        for i in 0..n {
            x.set(i, 0, rng.gen_range(-1.0..1.0));
            x.set(i, 1, 1e6 + rng.gen_range(0.0..1.0)); // large mean, small spread
            x.set(i, 2, 0.0);
            x.set(i, 3, 1e300);
            x.set(i, 4, rng.gen_range(-3.0..3.0) * 1e300);
            x.set(i, 5, if i % 10 == 0 { 1e-3 } else { 0.0 });
        }
        let fit = Standardizer::fit(&x);
        let whole = chunked(&x, n);
        for j in [0, 1, 2, 5] {
            assert_eq!((whole.mean[j], whole.scale[j]), (fit.mean[j], fit.scale[j]));
        }
        for chunk in [1, 7, 64, 999, n] {
            let got = chunked(&x, chunk);
            for j in 0..d {
                assert!(
                    close(got.mean[j], fit.mean[j], 1e-13)
                        && close(got.scale[j], fit.scale[j], 1e-13),
                    "chunk {chunk} column {j}: {} {} vs {} {}",
                    got.mean[j],
                    got.scale[j],
                    fit.mean[j],
                    fit.scale[j]
                );
            }
            assert_eq!((got.scale[2], got.scale[3]), (1.0, 1.0));
            assert_eq!(got.mean[2], 0.0);
        }
    }

    /// A column growing from ordinary values to 1e300 mid-stream is rescaled exactly.
    #[test]
    fn rescaling_mid_stream() {
        let col: Vec<f64> = (0..40)
            .map(|i| if i < 20 { i as f64 } else { (i as f64) * 1e290 })
            .collect();
        let x = Matrix::from_vec(40, 1, col);
        let fit = Standardizer::fit(&x);
        let got = chunked(&x, 5);
        assert!(close(got.mean[0], fit.mean[0], 1e-13), "{got:?} {fit:?}");
        assert!(close(got.scale[0], fit.scale[0], 1e-13), "{got:?} {fit:?}");
    }

    #[test]
    fn empty_and_mismatched_chunks() {
        let acc = StandardizerAccumulator::new(2);
        assert_eq!(acc.finish(), Standardizer::fit(&Matrix::zeros(0, 2)));
        let mut acc = StandardizerAccumulator::new(2);
        assert!(acc.push_rows(&Matrix::zeros(3, 1)).is_err());
        acc.push_rows(&Matrix::zeros(0, 2)).unwrap();
        assert_eq!((acc.rows(), acc.cols.len()), (0, 2));
    }
}
