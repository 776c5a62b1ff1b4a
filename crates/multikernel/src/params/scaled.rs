//! A parameter block stored as `scale x vector`, so that the proximal and projection steps of
//! Alg. 1 (martins2011) cost O(1) per group, with the running average of the iterates kept
//! exactly and lazily.
//!
//! Effective parameters: `theta = s * c`. Invariant for the average: with `S` the sum of the
//! scales over the rounds ticked so far and `B` a correction vector,
//! `sum_t theta_t = c * S - B`. Adding `delta` to an effective coordinate at round t adds
//! `delta / s` to `c` and `(delta / s) * S` to `B`; scaling only changes `s`; a tick adds `s`
//! to `S`. Re-normalizing (`B -= c S`, `S = 0`, then `c *= s`, `s = 1`) and zeroing (`B -= c S`, `c = 0`)
//! keep the invariant.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// A block of parameters `theta = scale * coef` with its squared norm and averaging state.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct ScaledVec {
    coef: Vec<f64>,
    scale: f64,
    /// ||theta||^2, maintained by the caller through [`ScaledVec::add`]'s arguments (for
    /// kernel groups the norm lives in feature space and needs the Gram matrix).
    sqnorm: f64,
    cum_scale: f64,
    correction: Vec<f64>,
    averaging: bool,
    /// Optional linear image `A coef` kept in the same (unscaled) units, e.g. the cached
    /// scores `K coef` of a kernel group; it follows re-normalization and zeroing.
    image: Vec<f64>,
    /// What re-normalizations and zeroings multiplied the stored values by since
    /// [`ScaledVec::watch_units`] (never saved, never compared).
    #[serde(skip)]
    units: Units,
}

/// `clone_from` reuses the target's vectors (the shards' copies of the state at the start of
/// each epoch take no allocation after the first).
impl Clone for ScaledVec {
    fn clone(&self) -> Self {
        ScaledVec {
            coef: self.coef.clone(),
            scale: self.scale,
            sqnorm: self.sqnorm,
            cum_scale: self.cum_scale,
            correction: self.correction.clone(),
            averaging: self.averaging,
            image: self.image.clone(),
            units: self.units,
        }
    }

    fn clone_from(&mut self, source: &Self) {
        copy_values(&mut self.coef, &source.coef);
        self.scale = source.scale;
        self.sqnorm = source.sqnorm;
        self.cum_scale = source.cum_scale;
        copy_values(&mut self.correction, &source.correction);
        self.averaging = source.averaging;
        copy_values(&mut self.image, &source.image);
        self.units = source.units;
    }
}

/// The factor the stored (unscaled) values were multiplied by since a mark: `s` at a
/// re-normalization, 0 at a zeroing. Equal whatever its value: it is bookkeeping for a caller
/// that holds additions to the image back ([`ScaledVec::units_since_watch`]), not state.
#[derive(Debug, Clone, Copy)]
struct Units(f64);

impl Default for Units {
    fn default() -> Self {
        Units(1.0)
    }
}

impl PartialEq for Units {
    fn eq(&self, _: &Units) -> bool {
        true
    }
}

/// Below this scale the block is re-normalized so `coef` does not overflow.
const MIN_SCALE: f64 = 1e-60;

/// Below this scale an averaging block is re-normalized: the running sum `c S - B` subtracts
/// terms of size `|theta| / s` per round, so its relative rounding error grows like
/// `eps / s`; keeping `s >= 1e-6` bounds it near `1e-10` (with 1e-60, steps that shrink the
/// scale every round, as the squared group lasso's prox does with a large step, left the
/// average dominated by rounding).
const MIN_SCALE_AVERAGING: f64 = 1e-6;

/// Entries of a [`ScaledVec::mean`] (or of a copy) a thread takes at least (a few pages of
/// each part).
const MEAN_MIN_LEN: usize = 1 << 13;

/// `dst <- src`, reusing `dst`'s allocation; pieces of [`MEAN_MIN_LEN`] entries copied in
/// parallel (the copies of the state each sharded epoch starts from).
fn copy_values(dst: &mut Vec<f64>, src: &[f64]) {
    dst.resize(src.len(), 0.0);
    in_pieces(dst, |r, d| d.copy_from_slice(&src[r]));
}

/// `f(range, &mut out[range])` for consecutive pieces of [`MEAN_MIN_LEN`] entries of `out`,
/// the pieces in parallel.
fn in_pieces(out: &mut [f64], f: impl Fn(std::ops::Range<usize>, &mut [f64]) + Sync) {
    out.par_chunks_mut(MEAN_MIN_LEN)
        .enumerate()
        .for_each(|(piece, chunk)| {
            let lo = piece * MEAN_MIN_LEN;
            f(lo..lo + chunk.len(), chunk)
        });
}

/// A block's running sum of iterates `c S - B`, as [`mean_running_sums`] reads it.
struct RunningSum<'a> {
    coef: &'a [f64],
    cum_scale: f64,
    correction: &'a [f64],
}

/// `out[i] = 0 + s_0 x_0[i] / k + s_1 x_1[i] / k + ...`, the terms added in part order (the
/// arithmetic of [`ScaledVec::mean_in_turn`]). With `own = Some(s_0)` the first part is
/// `out`'s own values (in place) and `parts` the others; with `None` every part is in `parts`
/// and `out` holds zeros. Pieces in parallel ([`in_pieces`]), each adding part after part in a
/// loop the compiler vectorizes.
fn mean_values(out: &mut [f64], own: Option<f64>, parts: &[(f64, &[f64])], k: f64) {
    in_pieces(out, |r, chunk| {
        if let Some(s) = own {
            for o in chunk.iter_mut() {
                let mut acc = 0.0;
                acc += s * *o / k;
                *o = acc;
            }
        }
        for &(s, x) in parts {
            for (o, v) in chunk.iter_mut().zip(&x[r.clone()]) {
                *o += s * v / k;
            }
        }
    });
}

/// `out[i] = 0 - (c_0[i] S_0 - B_0[i]) / k - (c_1[i] S_1 - B_1[i]) / k - ...`: the correction
/// of the mean of running sums (`sum_t theta_t = c S - B`, entering the mean as `-B` with
/// `S = 0`), in part order. With `own = Some((c_0, S_0))` the first part's `B_0` is `out`
/// itself (in place); with `None` `out` holds zeros. Pieces in parallel as in [`mean_values`].
fn mean_running_sums(out: &mut [f64], own: Option<(&[f64], f64)>, parts: &[RunningSum], k: f64) {
    in_pieces(out, |r, chunk| {
        if let Some((coef, cum)) = own {
            for (b, c) in chunk.iter_mut().zip(&coef[r.clone()]) {
                let mut acc = 0.0;
                acc -= (c * cum - *b) / k;
                *b = acc;
            }
        }
        for p in parts {
            let terms = p.coef[r.clone()].iter().zip(&p.correction[r.clone()]);
            for (b, (c, pb)) in chunk.iter_mut().zip(terms) {
                *b -= (c * p.cum_scale - pb) / k;
            }
        }
    });
}

impl ScaledVec {
    /// A zero block of `len` parameters; `averaging` keeps the running-average state.
    pub(crate) fn zeros(len: usize, averaging: bool) -> Self {
        ScaledVec {
            coef: vec![0.0; len],
            scale: 1.0,
            sqnorm: 0.0,
            cum_scale: 0.0,
            correction: if averaging {
                vec![0.0; len]
            } else {
                Vec::new()
            },
            averaging,
            image: Vec::new(),
            units: Units::default(),
        }
    }

    /// Like [`ScaledVec::zeros`], with a zero linear image of length `image_len`.
    pub(crate) fn zeros_with_image(len: usize, image_len: usize, averaging: bool) -> Self {
        let mut v = Self::zeros(len, averaging);
        v.image = vec![0.0; image_len];
        v
    }

    /// The unscaled image; effective values are `scale() * image()[k]`.
    #[inline]
    pub(crate) fn image(&self) -> &[f64] {
        &self.image
    }

    /// Adds `delta_eff * column[k]` to every image entry `k` (a rank-one image update).
    #[inline]
    #[cfg(test)]
    pub(crate) fn add_image_scaled(
        &mut self,
        column: impl Iterator<Item = (usize, f64)>,
        delta: f64,
    ) {
        let d = delta / self.scale;
        for (k, v) in column {
            self.image[k] += d * v;
        }
    }

    /// Mutable access to the unscaled image, with the factor that turns effective deltas into
    /// stored ones (`1 / scale`).
    #[inline]
    pub(crate) fn image_mut(&mut self) -> (&mut [f64], f64) {
        let inv = 1.0 / self.scale;
        (&mut self.image, inv)
    }

    pub(crate) fn len(&self) -> usize {
        self.coef.len()
    }

    /// Appends the block as it travels between processes (the online learner's state over
    /// parts): its length, whether it averages, its scale, squared norm and summed scales,
    /// then the positions where the coefficients or the running sum's correction are not
    /// `+0.0` (as bits: a `-0.0` travels), with their values, little-endian; every number
    /// to the bit, and a block of mostly zeros (a tagger's label-feature weights) small.
    /// An explicit block only (no image).
    pub(crate) fn write_sparse(&self, out: &mut Vec<u8>) {
        debug_assert!(self.image.is_empty());
        let set = |v: &[f64], j: usize| v.get(j).is_some_and(|x| x.to_bits() != 0);
        let at: Vec<usize> = (0..self.coef.len())
            .filter(|&j| set(&self.coef, j) || set(&self.correction, j))
            .collect();
        out.extend_from_slice(&(self.coef.len() as u64).to_le_bytes());
        out.push(u8::from(self.averaging));
        for v in [self.scale, self.sqnorm, self.cum_scale] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&(at.len() as u64).to_le_bytes());
        for &j in &at {
            out.extend_from_slice(&(j as u64).to_le_bytes());
        }
        for &j in &at {
            out.extend_from_slice(&self.coef[j].to_le_bytes());
        }
        if self.averaging {
            for &j in &at {
                out.extend_from_slice(&self.correction[j].to_le_bytes());
            }
        }
    }

    /// A block of `len` parameters from the front of `input` ([`ScaledVec::write_sparse`]),
    /// `input` moved past it; `None` when the bytes are not such a block of that length
    /// (positions not increasing or past the end, bytes missing).
    pub(crate) fn read_sparse(input: &mut &[u8], len: usize) -> Option<ScaledVec> {
        fn take<'a>(input: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
            let (head, rest) = input.split_at_checked(n)?;
            *input = rest;
            Some(head)
        }
        let word = |input: &mut &[u8]| -> Option<[u8; 8]> { take(input, 8)?.try_into().ok() };
        if u64::from_le_bytes(word(input)?) != len as u64 {
            return None;
        }
        let averaging = match take(input, 1)? {
            [0] => false,
            [1] => true,
            _ => return None,
        };
        let [scale, sqnorm, cum_scale] = [(); 3].map(|_| word(input).map(f64::from_le_bytes));
        let count = usize::try_from(u64::from_le_bytes(word(input)?)).ok()?;
        let per = if averaging { 24 } else { 16 };
        if count > len || count.checked_mul(per)? > input.len() {
            return None;
        }
        let at: Vec<usize> = take(input, 8 * count)?
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize)
            .collect();
        if at.windows(2).any(|w| w[0] >= w[1]) || at.last().is_some_and(|&j| j >= len) {
            return None;
        }
        let values = |input: &mut &[u8]| -> Option<Vec<f64>> {
            let mut v = vec![0.0; len];
            for (&j, b) in at.iter().zip(take(input, 8 * count)?.chunks_exact(8)) {
                v[j] = f64::from_le_bytes(b.try_into().expect("8 bytes"));
            }
            Some(v)
        };
        let coef = values(input)?;
        let correction = if averaging {
            values(input)?
        } else {
            Vec::new()
        };
        Some(ScaledVec {
            coef,
            scale: scale?,
            sqnorm: sqnorm?,
            cum_scale: cum_scale?,
            correction,
            averaging,
            image: Vec::new(),
            units: Units::default(),
        })
    }

    /// Whether a block read back from bytes holds together: the running sum's correction as
    /// long as the coefficients exactly when averaging, no image, every number finite and
    /// the scale not zero (what the learner's steps and [`ScaledVec::mix_into`] index and
    /// divide by without checking).
    pub(crate) fn well_formed_explicit(&self) -> bool {
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        self.correction.len() == if self.averaging { self.coef.len() } else { 0 }
            && self.image.is_empty()
            && self.scale.is_finite()
            && self.scale != 0.0
            && self.sqnorm.is_finite()
            && self.cum_scale.is_finite()
            && finite(&self.coef)
            && finite(&self.correction)
    }

    /// Effective value of coordinate `j`.
    #[inline]
    pub(crate) fn get(&self, j: usize) -> f64 {
        self.scale * self.coef[j]
    }

    /// The stored (unscaled) coefficients; effective values are `scale() * coef()[j]`.
    #[inline]
    pub(crate) fn coef(&self) -> &[f64] {
        &self.coef
    }

    #[inline]
    pub(crate) fn scale(&self) -> f64 {
        self.scale
    }

    /// ||theta||^2 as maintained.
    #[inline]
    pub(crate) fn sqnorm(&self) -> f64 {
        self.sqnorm
    }

    /// ||theta||.
    #[inline]
    pub(crate) fn norm(&self) -> f64 {
        self.sqnorm.max(0.0).sqrt()
    }

    /// Overrides the maintained squared norm (after recomputing it exactly).
    pub(crate) fn set_sqnorm(&mut self, v: f64) {
        self.sqnorm = v.max(0.0);
    }

    /// Adds `delta` to effective coordinate `j` (the caller updates the norm with
    /// [`ScaledVec::add_to_sqnorm`]).
    #[inline]
    pub(crate) fn add(&mut self, j: usize, delta: f64) {
        let d = delta / self.scale;
        self.coef[j] += d;
        if self.averaging {
            self.correction[j] += d * self.cum_scale;
        }
    }

    /// theta <- theta + mult z v^T for a feature-major block (`len = z.len() * v.len()`,
    /// entry `d * v.len() + y`), with the squared norm updated exactly:
    /// `2 mult <theta, z v^T> + mult^2 ||z||^2 ||v||^2` (martins2011 Sec. 3.4). O(len), no
    /// per-entry bookkeeping: the dense gradient of an explicit feature group.
    pub(crate) fn add_outer(&mut self, z: &[f64], v: &[f64], mult: f64) {
        let l = v.len();
        debug_assert_eq!(z.len() * l, self.coef.len());
        let inner = if l == 1 {
            v[0] * crate::linalg::dot(&self.coef, z)
        } else {
            z.iter()
                .enumerate()
                .filter(|(_, zd)| **zd != 0.0)
                .map(|(d, zd)| zd * crate::linalg::dot(&self.coef[d * l..(d + 1) * l], v))
                .sum()
        };
        let gg = mult * mult * crate::linalg::sq_norm(z) * crate::linalg::sq_norm(v);
        self.add_to_sqnorm(2.0 * mult * self.scale * inner + gg);
        let f = mult / self.scale;
        let cum = self.cum_scale;
        if l == 1 {
            let a = f * v[0];
            crate::linalg::axpy(a, z, &mut self.coef);
            if self.averaging {
                crate::linalg::axpy(a * cum, z, &mut self.correction);
            }
            return;
        }
        for (d, &zd) in z.iter().enumerate() {
            if zd == 0.0 {
                continue;
            }
            let a = f * zd;
            for (c, &vy) in self.coef[d * l..(d + 1) * l].iter_mut().zip(v) {
                *c += a * vy;
            }
            if self.averaging {
                for (b, &vy) in self.correction[d * l..(d + 1) * l].iter_mut().zip(v) {
                    *b += a * vy * cum;
                }
            }
        }
    }

    /// The mean of blocks of the same length: effective values averaged, and (when they
    /// average) their running sums of iterates averaged, so that [`ScaledVec::averaged`]
    /// over `t` rounds gives the mean running sum divided by `t`. Blocks with a linear image
    /// of one length (the cached scores of a kernel group) give the mean image, in effective
    /// units; the squared norm is `||mean||^2` of the coefficients, right for a block without
    /// an image (the caller of a kernel group sets its norm in feature space).
    ///
    /// Each entry is summed over the parts in their order (the arithmetic of
    /// `mean_in_turn`, the tests' twin, bit for bit), the entries in parallel and written once:
    /// the mix of the shards' states is an epoch's one sequential step.
    pub(crate) fn mean(parts: &[&ScaledVec]) -> ScaledVec {
        let len = parts.first().map_or(0, |p| p.len());
        let averaging = parts.iter().all(|p| p.averaging);
        let k = parts.len().max(1) as f64;
        let image_len = parts.first().map_or(0, |p| p.image.len());
        let with_image = image_len > 0 && parts.iter().all(|p| p.image.len() == image_len);
        let mut coef = vec![0.0; len];
        let scaled: Vec<(f64, &[f64])> = parts.iter().map(|p| (p.scale, &p.coef[..])).collect();
        mean_values(&mut coef, None, &scaled, k);
        let mut image = Vec::new();
        if with_image {
            image = vec![0.0; image_len];
            let scaled: Vec<(f64, &[f64])> =
                parts.iter().map(|p| (p.scale, &p.image[..])).collect();
            mean_values(&mut image, None, &scaled, k);
        }
        let mut correction = Vec::new();
        if averaging {
            correction = vec![0.0; len];
            let sums: Vec<RunningSum> = parts.iter().map(|p| p.running_sum()).collect();
            mean_running_sums(&mut correction, None, &sums, k);
        }
        let sqnorm = coef.iter().map(|c| c * c).sum();
        ScaledVec {
            coef,
            scale: 1.0,
            sqnorm,
            cum_scale: 0.0,
            correction,
            averaging,
            image,
            units: Units::default(),
        }
    }

    /// `self <- mean(self, others...)`: [`ScaledVec::mean`] of `self` followed by `others`,
    /// the same values bit for bit, written over `self`'s vectors (no allocation, no copy of
    /// `self`): the mix of the shards' states into the first shard's. The squared norm is
    /// `mean`'s for a block without an image; a block with an image (a kernel group, whose
    /// norm lives in feature space) is left with a NaN norm for the caller to set with
    /// [`ScaledVec::set_sqnorm`], which saves a sequential pass over the coefficients.
    pub(crate) fn mix_into(&mut self, others: &[&ScaledVec]) {
        let averaging = self.averaging && others.iter().all(|p| p.averaging);
        let k = (others.len() + 1) as f64;
        let with_image =
            !self.image.is_empty() && others.iter().all(|p| p.image.len() == self.image.len());
        if averaging {
            let sums: Vec<RunningSum> = others.iter().map(|p| p.running_sum()).collect();
            let own = (&self.coef[..], self.cum_scale);
            mean_running_sums(&mut self.correction, Some(own), &sums, k);
        } else {
            self.correction = Vec::new();
        }
        let scaled: Vec<(f64, &[f64])> = others.iter().map(|p| (p.scale, &p.coef[..])).collect();
        mean_values(&mut self.coef, Some(self.scale), &scaled, k);
        if with_image {
            let scaled: Vec<(f64, &[f64])> =
                others.iter().map(|p| (p.scale, &p.image[..])).collect();
            mean_values(&mut self.image, Some(self.scale), &scaled, k);
        } else {
            self.image = Vec::new();
        }
        self.sqnorm = if self.image.is_empty() {
            self.coef.iter().map(|c| c * c).sum()
        } else {
            f64::NAN
        };
        self.scale = 1.0;
        self.cum_scale = 0.0;
        self.averaging = averaging;
        self.units = Units::default();
    }

    /// The parts of the running sum of iterates `c S - B` (module docs).
    fn running_sum(&self) -> RunningSum<'_> {
        RunningSum {
            coef: &self.coef,
            cum_scale: self.cum_scale,
            correction: &self.correction,
        }
    }

    /// [`ScaledVec::mean`] the plain way, part after part into zeros (the tests' twin).
    #[cfg(test)]
    pub(crate) fn mean_in_turn(parts: &[&ScaledVec]) -> ScaledVec {
        let len = parts.first().map_or(0, |p| p.len());
        let averaging = parts.iter().all(|p| p.averaging);
        let k = parts.len().max(1) as f64;
        let mut out = ScaledVec::zeros(len, averaging);
        let image_len = parts.first().map_or(0, |p| p.image.len());
        if image_len > 0 && parts.iter().all(|p| p.image.len() == image_len) {
            out.image = vec![0.0; image_len];
        }
        for p in parts {
            for (o, c) in out.coef.iter_mut().zip(&p.coef) {
                *o += p.scale * c / k;
            }
            if !out.image.is_empty() {
                for (o, f) in out.image.iter_mut().zip(&p.image) {
                    *o += p.scale * f / k;
                }
            }
            if averaging {
                for ((b, c), pb) in out.correction.iter_mut().zip(&p.coef).zip(&p.correction) {
                    *b -= (c * p.cum_scale - pb) / k;
                }
            }
        }
        out.sqnorm = out.coef.iter().map(|c| c * c).sum();
        out
    }

    /// Adds `v` to the maintained squared norm: for theta <- theta + g,
    /// v = 2 <theta, g> + ||g||^2 (martins2011 Sec. 3.4).
    #[inline]
    pub(crate) fn add_to_sqnorm(&mut self, v: f64) {
        self.sqnorm = (self.sqnorm + v).max(0.0);
    }

    /// theta <- factor * theta, O(1) (O(len) only when the block is zeroed or re-normalized).
    pub(crate) fn scale_by(&mut self, factor: f64) {
        if factor == 1.0 {
            return;
        }
        if factor == 0.0 {
            self.zero();
            return;
        }
        self.scale *= factor;
        self.sqnorm *= factor * factor;
        let min = if self.averaging {
            MIN_SCALE_AVERAGING
        } else {
            MIN_SCALE
        };
        if self.scale.abs() < min {
            self.renormalize();
        }
    }

    /// Sets the block to zero, keeping the average exact.
    pub(crate) fn zero(&mut self) {
        if self.averaging {
            for (b, c) in self.correction.iter_mut().zip(&self.coef) {
                *b -= c * self.cum_scale;
            }
        }
        self.coef.iter_mut().for_each(|c| *c = 0.0);
        self.image.iter_mut().for_each(|c| *c = 0.0);
        self.scale = 1.0;
        self.sqnorm = 0.0;
        self.units.0 = 0.0;
    }

    /// Starts following what re-normalizations and zeroings do to the stored values
    /// ([`ScaledVec::units_since_watch`]).
    pub(crate) fn watch_units(&mut self) {
        self.units.0 = 1.0;
    }

    /// The factor the stored coefficients and image were multiplied by since
    /// [`ScaledVec::watch_units`]: 1 when the block was neither re-normalized nor zeroed, 0
    /// when it was zeroed, the old scale at a re-normalization. An addition to the image
    /// computed in the stored units before the mark and not yet made is this factor times
    /// what it was (0: dropped, as the zeroing dropped the rest).
    pub(crate) fn units_since_watch(&self) -> f64 {
        self.units.0
    }

    /// `c *= s`, `s = 1`. The running sum `c S - B` is folded into `B` first (`B <- B - c S`,
    /// `S <- 0`) so that `S` never grows like `1 / s` and the average cannot overflow.
    fn renormalize(&mut self) {
        let s = self.scale;
        if self.averaging {
            for (b, c) in self.correction.iter_mut().zip(&self.coef) {
                *b -= c * self.cum_scale;
            }
            self.cum_scale = 0.0;
        }
        self.coef.iter_mut().for_each(|c| *c *= s);
        self.image.iter_mut().for_each(|c| *c *= s);
        self.scale = 1.0;
        self.units.0 *= s;
    }

    /// Ends a round: the current iterate enters the running sum.
    #[inline]
    pub(crate) fn tick(&mut self) {
        if self.averaging {
            self.cum_scale += self.scale;
        }
    }

    /// Empties the running sum of iterates (`B = c S`, so `c S - B = 0`): the average then
    /// covers only the rounds ticked from now on.
    pub(crate) fn restart_average(&mut self) {
        if self.averaging {
            for (b, c) in self.correction.iter_mut().zip(&self.coef) {
                *b = c * self.cum_scale;
            }
        }
    }

    /// Effective current parameters.
    pub(crate) fn current(&self) -> Vec<f64> {
        self.coef.iter().map(|c| c * self.scale).collect()
    }

    /// The average of the iterates over `rounds` ticks (the current iterate when averaging is
    /// off or no round was ticked).
    pub(crate) fn averaged(&self, rounds: u64) -> Vec<f64> {
        if !self.averaging || rounds == 0 {
            return self.current();
        }
        let t = rounds as f64;
        self.coef
            .iter()
            .zip(&self.correction)
            .map(|(c, b)| (c * self.cum_scale - b) / t)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The parallel mean, and the mean written over the first part, give the plain mean's
    /// blocks bit for bit: coefficients, running sums, images and squared norm, for blocks
    /// long enough to be split between threads, short ones, with and without averaging, with
    /// differing scales.
    #[test]
    fn parallel_mean_is_the_mean_in_turn_bit_for_bit() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for (len, image_len, averaging, parts) in [
            (3 * MEAN_MIN_LEN + 17, 2 * MEAN_MIN_LEN + 5, true, 2),
            (3 * MEAN_MIN_LEN + 17, 0, false, 3),
            (5, 7, true, 4),
            (0, 0, true, 2),
            (1000, 1000, false, 1),
        ] {
            let blocks: Vec<ScaledVec> = (0..parts)
                .map(|_| {
                    let mut v = ScaledVec::zeros_with_image(len, image_len, averaging);
                    for round in 0..40 {
                        if len > 0 {
                            let j = rng.gen_range(0..len);
                            v.add(j, rng.gen_range(-1.0..1.0));
                        }
                        if image_len > 0 {
                            let col: Vec<(usize, f64)> =
                                (0..3).map(|_| (rng.gen_range(0..image_len), 1.0)).collect();
                            v.add_image_scaled(col.into_iter(), rng.gen_range(-1.0..1.0));
                        }
                        if round % 7 == 0 {
                            v.scale_by(rng.gen_range(0.3..0.9));
                        }
                        v.tick();
                    }
                    v
                })
                .collect();
            let refs: Vec<&ScaledVec> = blocks.iter().collect();
            let (fast, plain) = (ScaledVec::mean(&refs), ScaledVec::mean_in_turn(&refs));
            let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&fast.coef), bits(&plain.coef), "{len} {parts}");
            assert_eq!(bits(&fast.image), bits(&plain.image));
            assert_eq!(bits(&fast.correction), bits(&plain.correction));
            assert_eq!(fast.sqnorm.to_bits(), plain.sqnorm.to_bits());
            assert_eq!(fast, plain);
            // The mean written over the first part's vectors, into a target whose vectors
            // held another block before (`clone_from` reusing them).
            let mut in_place = ScaledVec::zeros_with_image(len + 3, image_len, !averaging);
            in_place.clone_from(&blocks[0]);
            assert_eq!(in_place, blocks[0]);
            in_place.mix_into(&refs[1..]);
            assert_eq!(bits(&in_place.coef), bits(&plain.coef), "{len} {parts}");
            assert_eq!(bits(&in_place.image), bits(&plain.image));
            assert_eq!(bits(&in_place.correction), bits(&plain.correction));
            if image_len > 0 {
                // Left for the caller (a kernel group's norm is not the coefficients').
                assert!(in_place.sqnorm.is_nan());
                in_place.set_sqnorm(plain.sqnorm);
            }
            assert_eq!(in_place.sqnorm.to_bits(), plain.sqnorm.to_bits());
            assert_eq!(in_place, plain);
        }
    }

    /// A scale that shrinks every round while additions keep the effective values O(1) (the
    /// squared group lasso's prox with a large step): the lazy average stays within 1e-9 of
    /// the explicit one over 20,000 rounds (it lost every digit when blocks were re-normalized
    /// only below 1e-60).
    #[test]
    fn average_survives_a_scale_that_shrinks_every_round() {
        let mut v = ScaledVec::zeros(3, true);
        let mut explicit = [0.0; 3];
        let mut sum = [0.0; 3];
        let rounds = 20_000u64;
        for t in 0..rounds {
            v.scale_by(0.7);
            explicit.iter_mut().for_each(|e| *e *= 0.7);
            let j = (t % 3) as usize;
            v.add(j, 1.0);
            explicit[j] += 1.0;
            v.tick();
            for (s, e) in sum.iter_mut().zip(&explicit) {
                *s += e;
            }
        }
        let avg = v.averaged(rounds);
        for (a, s) in avg.iter().zip(&sum) {
            let want = s / rounds as f64;
            assert!(
                (a - want).abs() < 1e-9 * want.abs().max(1.0),
                "{a} vs {want}"
            );
        }
    }

    /// After `restart_average` the lazy average is the mean of the iterates ticked since,
    /// against explicitly stored iterates, through scalings that force re-normalization.
    #[test]
    fn restarted_average_covers_the_rounds_since() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        let mut v = ScaledVec::zeros(4, true);
        let mut explicit = [0.0; 4];
        let mut sum = [0.0; 4];
        let mut since = 0u64;
        for t in 0..400u64 {
            if t == 150 {
                v.restart_average();
                sum = [0.0; 4];
                since = 0;
            }
            let f = if t % 50 == 7 {
                1e-7
            } else {
                rng.gen_range(0.5..1.0)
            };
            v.scale_by(f);
            explicit.iter_mut().for_each(|e| *e *= f);
            let j = rng.gen_range(0..4);
            let d = rng.gen_range(-1.0..1.0);
            v.add(j, d);
            explicit[j] += d;
            v.tick();
            since += 1;
            for (s, e) in sum.iter_mut().zip(&explicit) {
                *s += e;
            }
        }
        for (a, s) in v.averaged(since).iter().zip(&sum) {
            let want = s / since as f64;
            assert!(
                (a - want).abs() < 1e-9 * want.abs().max(1.0),
                "{a} vs {want}"
            );
        }
    }

    /// The lazy average equals the average of explicitly stored iterates under random
    /// additions, scalings (including tiny ones that force re-normalization) and zeroings.
    #[test]
    fn lazy_average_matches_explicit_average() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _trial in 0..50 {
            let n = rng.gen_range(1..6);
            let mut v = ScaledVec::zeros(n, true);
            let mut explicit = vec![0.0; n];
            let mut sum = vec![0.0; n];
            let rounds = rng.gen_range(1..60);
            for _ in 0..rounds {
                for _ in 0..rng.gen_range(0..3) {
                    let j = rng.gen_range(0..n);
                    let d: f64 = rng.gen_range(-1.0..1.0);
                    v.add(j, d);
                    explicit[j] += d;
                }
                match rng.gen_range(0..10) {
                    0 => {
                        v.scale_by(0.0);
                        explicit.iter_mut().for_each(|x| *x = 0.0);
                    }
                    1 => {
                        v.scale_by(1e-70);
                        explicit.iter_mut().for_each(|x| *x *= 1e-70);
                    }
                    _ => {
                        let f = rng.gen_range(0.3..1.0);
                        v.scale_by(f);
                        explicit.iter_mut().for_each(|x| *x *= f);
                    }
                }
                v.tick();
                for (s, x) in sum.iter_mut().zip(&explicit) {
                    *s += x;
                }
                for (j, x) in explicit.iter().enumerate() {
                    assert!((v.get(j) - x).abs() <= 1e-9 * (1.0 + x.abs()));
                }
            }
            let avg = v.averaged(rounds);
            for j in 0..n {
                let want = sum[j] / rounds as f64;
                assert!(
                    (avg[j] - want).abs() <= 1e-9 * (1.0 + want.abs()),
                    "{} vs {}",
                    avg[j],
                    want
                );
            }
        }
    }

    /// The dense rank-one update equals the same gradient added entry by entry: values,
    /// squared norm and running average (one and three outputs, averaging on).
    #[test]
    fn outer_update_matches_entrywise_updates() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for l in [1usize, 3] {
            let dim = 70;
            let (mut a, mut b) = (
                ScaledVec::zeros(dim * l, true),
                ScaledVec::zeros(dim * l, true),
            );
            for _round in 0..20 {
                let z: Vec<f64> = (0..dim)
                    .map(|d| {
                        if d % 7 == 0 {
                            0.0
                        } else {
                            rng.gen_range(-1.0..1.0)
                        }
                    })
                    .collect();
                let v: Vec<f64> = (0..l).map(|_| rng.gen_range(-1.0..1.0)).collect();
                let mult = rng.gen_range(-0.5..0.5);
                a.add_outer(&z, &v, mult);
                for (d, zd) in z.iter().enumerate() {
                    for (y, vy) in v.iter().enumerate() {
                        let g = mult * zd * vy;
                        let cur = b.get(d * l + y);
                        b.add_to_sqnorm(2.0 * cur * g + g * g);
                        b.add(d * l + y, g);
                    }
                }
                let f = rng.gen_range(0.5..1.0);
                a.scale_by(f);
                b.scale_by(f);
                a.tick();
                b.tick();
            }
            let close = |x: &[f64], y: &[f64]| {
                x.iter()
                    .zip(y)
                    .all(|(p, q)| (p - q).abs() < 1e-12 * (1.0 + q.abs()))
            };
            assert!(close(&a.current(), &b.current()));
            assert!(close(&a.averaged(20), &b.averaged(20)));
            let exact: f64 = a.current().iter().map(|x| x * x).sum();
            assert!((a.sqnorm() - exact).abs() < 1e-10 * (1.0 + exact));
            assert!((a.sqnorm() - b.sqnorm()).abs() < 1e-10 * (1.0 + exact));
        }
    }

    #[test]
    fn norm_tracks_scaling() {
        let mut v = ScaledVec::zeros(2, false);
        v.add(0, 3.0);
        v.add(1, 4.0);
        v.set_sqnorm(25.0);
        v.scale_by(0.5);
        assert!((v.norm() - 2.5).abs() < 1e-12);
        assert_eq!(v.current(), vec![1.5, 2.0]);
    }
}
