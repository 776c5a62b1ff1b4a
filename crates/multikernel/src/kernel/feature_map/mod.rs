//! Explicit feature maps `z` with `k(x, x') = z(x) . z(x')`: exactly for linear kernels (the
//! kernel's columns, scaled as its normalization says), in expectation for random Fourier
//! features of a Gaussian kernel (Rahimi & Recht 2007: `z_j(x) = sqrt(2 / D) cos(w_j . x +
//! b_j)` with `w_j ~ N(0, I / sigma2)`, `b_j ~ U[0, 2 pi)`, so `E[z(x) . z(x')] =
//! exp(-||x - x'||^2 / (2 sigma2))`), and two more approximations:
//!
//! - [`nystrom`]: the Nystrom map of any dense kernel (Williams & Seeger 2001) from `m`
//!   landmarks drawn from the training rows, `z(x) = Lambda^{-1/2} U^T k(L, x)`; exact on the
//!   span of the landmarks (at `m = n` the training Gram matrix is reproduced).
//! - [`sketch`]: random products of Rademacher projections for a polynomial kernel (Kar &
//!   Karnick 2012), `z_j(x) = prod_i (w_ij . [x, sqrt(c)]) / sqrt(D)`, unbiased for
//!   `(x . x' + c)^p`.
//!
//! Every map computes the raw kernel (before normalization); the kernel's normalization is
//! applied to the map's outputs: times `sqrt` of the trace / variance factor, or each output
//! vector rescaled to unit norm (`norm=diag`), so the approximate kernel is normalized the
//! way the exact one is.
//!
//! A kernel with a map is one explicit parameter group of `D` values per output for the
//! online learner (martins2011 Sec. 2.3: explicit features and kernels are both groups), in
//! `O(n D)` memory instead of an `n x n` Gram matrix. The random map is drawn from a ChaCha8
//! stream seeded by the kernel's seed, so the same seed gives the same map on every machine.

use crate::data::Matrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

pub mod nystrom;
pub mod sketch;

pub use nystrom::{NystromBasis, MAX_NYSTROM_DIM};
pub use sketch::MAX_SKETCH_DEGREE;

/// How an approximated kernel is mapped (the `approx=` key of a kernel SPEC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ApproxMethod {
    /// Random Fourier features of a Gaussian kernel (`approx=rff`).
    Rff,
    /// The Nystrom map from landmarks drawn from the training rows (`approx=nystrom`; any
    /// kernel but a B1-spline): [`nystrom`].
    Nystrom,
    /// Random products of Rademacher projections of a polynomial kernel (`approx=sketch`):
    /// [`sketch`].
    Sketch,
}

impl ApproxMethod {
    /// The name in a SPEC (`rff`, `nystrom`, `sketch`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ApproxMethod::Rff => "rff",
            ApproxMethod::Nystrom => "nystrom",
            ApproxMethod::Sketch => "sketch",
        }
    }

    /// The method named `name` in a SPEC.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        match name {
            "rff" => Some(ApproxMethod::Rff),
            "nystrom" => Some(ApproxMethod::Nystrom),
            "sketch" => Some(ApproxMethod::Sketch),
            _ => None,
        }
    }
}

/// The names accepted by `approx=`.
pub(crate) const APPROX_NAMES: &str = "rff, nystrom, sketch";

/// An approximation asked for in a SPEC: the map and its dimension (`approx=rff,dim=1024`;
/// for `nystrom` the number of landmarks, for `sketch` the number of products).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approx {
    pub method: ApproxMethod,
    pub dim: usize,
}

/// The dimension when `approx=` is given without `dim=`.
pub(crate) const DEFAULT_APPROX_DIM: usize = 1024;

/// The largest `dim=` accepted.
pub(crate) const MAX_APPROX_DIM: usize = 1 << 20;

/// A fitted approximation: the map's dimension and the seed its random draws come from
/// (for Nystrom: `dim` is the number of landmarks, the SPEC's `dim` capped at the number of
/// training rows, and `basis` keeps the landmarks and the projection, so a model file
/// rebuilds the same map without drawing or decomposing anything).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct FittedApprox {
    pub method: ApproxMethod,
    pub dim: usize,
    pub seed: u64,
    /// The Nystrom landmarks and projection (`None` for the random maps; absent from model
    /// files written before Nystrom existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<NystromBasis>,
}

/// What a map does to the kernel's columns.
#[derive(Debug, Clone, PartialEq)]
enum MapKind {
    /// The columns themselves.
    Columns,
    /// `sqrt(2 / D) cos(omega x + offset)`; `omega_t` is `omega` transposed, `d_f x D`
    /// (row `j`: input `j`'s weight in every output), so a row maps by `d_f` contiguous
    /// `axpy`s.
    Fourier { omega_t: Matrix, offset: Vec<f64> },
    /// `P k(L, x)` ([`nystrom`]).
    Nystrom(nystrom::NystromMap),
    /// `prod_i W_i [x, sqrt(c)] / sqrt(D)` ([`sketch`]).
    Sketch(sketch::SketchMap),
}

/// An explicit feature map of one kernel (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct FeatureMap {
    /// The input columns the kernel reads (`None`: all).
    features: Option<Vec<usize>>,
    kind: MapKind,
    /// Every output times this (`sqrt` of a trace / variance factor).
    factor: f64,
    /// Rescale each output vector to unit norm (diag normalization; zero stays zero).
    unit: bool,
    dim: usize,
}

impl FeatureMap {
    /// The linear kernel `factor^2 x_f . x'_f` on the columns `features` of `n_features`
    /// (`unit`: `x_f . x'_f / (||x_f|| ||x'_f||)`).
    pub fn columns(
        features: Option<Vec<usize>>,
        n_features: usize,
        factor: f64,
        unit: bool,
    ) -> Self {
        let dim = features.as_ref().map_or(n_features, Vec::len);
        FeatureMap {
            features,
            kind: MapKind::Columns,
            factor,
            unit,
            dim,
        }
    }

    /// Random Fourier features of `exp(-||x_f - x'_f||^2 / (2 sigma2))` (times `factor^2`),
    /// `dim` of them, drawn from `seed`.
    pub(crate) fn fourier(
        features: Option<Vec<usize>>,
        n_features: usize,
        sigma2: f64,
        dim: usize,
        seed: u64,
        factor: f64,
        unit: bool,
    ) -> Self {
        let d = features.as_ref().map_or(n_features, Vec::len);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let inv = 1.0 / sigma2.sqrt();
        // w_r drawn output by output (row r of omega, dim x d), stored transposed.
        let omega: Vec<f64> = (0..dim * d)
            .map(|_| inv * rng.sample::<f64, _>(StandardNormal))
            .collect();
        let offset: Vec<f64> = (0..dim).map(|_| rng.gen_range(0.0..2.0 * PI)).collect();
        FeatureMap {
            features,
            kind: MapKind::Fourier {
                omega_t: Matrix::from_vec(dim, d, omega).transpose(),
                offset,
            },
            factor,
            unit,
            dim,
        }
    }

    /// The Nystrom map of the raw kernel `kind` (times `factor^2`, or unit outputs) on the
    /// columns `features` (`None`: the first `d_f` columns, the landmarks' width), from a
    /// fitted `basis` ([`nystrom`]).
    pub(crate) fn nystrom(
        features: Option<Vec<usize>>,
        kind: crate::kernel::FittedKind,
        basis: &NystromBasis,
        factor: f64,
        unit: bool,
    ) -> Self {
        let map = nystrom::NystromMap::new(kind, basis);
        FeatureMap {
            dim: map.dim(),
            features,
            kind: MapKind::Nystrom(map),
            factor,
            unit,
        }
    }

    /// The polynomial sketch of `(x_f . x'_f + offset)^degree` (times `factor^2`, or unit
    /// outputs), `dim` products drawn from `seed` ([`sketch`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sketch(
        features: Option<Vec<usize>>,
        n_features: usize,
        degree: u32,
        offset: f64,
        dim: usize,
        seed: u64,
        factor: f64,
        unit: bool,
    ) -> Self {
        let d = features.as_ref().map_or(n_features, Vec::len);
        FeatureMap {
            features,
            kind: MapKind::Sketch(sketch::SketchMap::new(d, degree, offset, dim, seed)),
            factor,
            unit,
            dim,
        }
    }

    /// Number of outputs `D`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// `z(x)` of one full input row into `out` (`dim()` values).
    pub(crate) fn map_row(&self, x: &[f64], out: &mut [f64]) {
        debug_assert_eq!(out.len(), self.dim);
        match (&self.kind, &self.features) {
            (MapKind::Columns, Some(f)) => {
                for (o, &j) in out.iter_mut().zip(f) {
                    *o = x[j];
                }
            }
            (MapKind::Columns, None) => out.copy_from_slice(&x[..self.dim]),
            (MapKind::Fourier { omega_t, offset }, features) => {
                out.copy_from_slice(offset);
                let mut add = |j: usize, xj: f64| {
                    if xj != 0.0 {
                        crate::linalg::axpy(xj, omega_t.row(j), out);
                    }
                };
                match features {
                    Some(f) => f.iter().enumerate().for_each(|(j, &c)| add(j, x[c])),
                    None => x[..omega_t.rows]
                        .iter()
                        .enumerate()
                        .for_each(|(j, &v)| add(j, v)),
                }
                cos_scaled((2.0 / self.dim as f64).sqrt(), out);
            }
            (MapKind::Nystrom(m), features) => m.map_row(x, features.as_deref(), out),
            (MapKind::Sketch(s), features) => s.map_row(x, features.as_deref(), out),
        }
        self.finish(out);
    }

    /// The normalization of a mapped row: unit norm (diag) or times `factor`.
    fn finish(&self, out: &mut [f64]) {
        if self.unit {
            let norm = crate::linalg::sq_norm(out).sqrt();
            let s = if norm > 0.0 { 1.0 / norm } else { 0.0 };
            out.iter_mut().for_each(|v| *v *= s);
        } else if self.factor != 1.0 {
            out.iter_mut().for_each(|v| *v *= self.factor);
        }
    }

    /// `z` of every row of `x` (`x.rows x dim()`), rows in parallel. Random Fourier maps
    /// run over blocks of [`MAP_BLOCK_ROWS`] rows and tiles of [`MAP_TILE`] outputs, so that
    /// the tile of `omega` (inputs x tile) stays in the L1 cache while every row of the block
    /// adds its inputs' columns (row by row, all of `omega`, 160 KB for 20 inputs and 1,024
    /// outputs, streamed from L2 for each row): the same additions in the same order as
    /// [`FeatureMap::map_row`], so the same bits.
    pub(crate) fn map_rows(&self, x: &Matrix) -> Matrix {
        let mut out = Matrix::zeros(0, self.dim);
        self.map_rows_into(x, &mut out);
        out
    }

    /// [`FeatureMap::map_rows`] into `out`, whose storage is reused (resized to `x.rows x
    /// dim()`; every value is written): a caller mapping block after block allocates once.
    pub(crate) fn map_rows_into(&self, x: &Matrix, out: &mut Matrix) {
        let dim = self.dim;
        out.rows = x.rows;
        out.cols = dim;
        out.data.resize(x.rows * dim, 0.0);
        if dim == 0 {
            return;
        }
        let MapKind::Fourier { omega_t, offset } = &self.kind else {
            out.data
                .par_chunks_mut(dim)
                .enumerate()
                .for_each(|(i, o)| self.map_row(x.row(i), o));
            return;
        };
        let inputs: Vec<usize> = match &self.features {
            Some(f) => f.clone(),
            None => (0..omega_t.rows).collect(),
        };
        out.data
            .par_chunks_mut(dim * MAP_BLOCK_ROWS)
            .enumerate()
            .for_each(|(b, block)| {
                let first = b * MAP_BLOCK_ROWS;
                let rows = block.len() / dim;
                for t0 in (0..dim).step_by(MAP_TILE) {
                    let t1 = (t0 + MAP_TILE).min(dim);
                    for r in 0..rows {
                        let o = &mut block[r * dim + t0..r * dim + t1];
                        o.copy_from_slice(&offset[t0..t1]);
                        let xr = x.row(first + r);
                        for (j, &c) in inputs.iter().enumerate() {
                            let xj = xr[c];
                            if xj != 0.0 {
                                crate::linalg::axpy(xj, &omega_t.row(j)[t0..t1], o);
                            }
                        }
                    }
                }
                for o in block.chunks_mut(dim) {
                    cos_scaled((2.0 / dim as f64).sqrt(), o);
                    self.finish(o);
                }
            });
    }
}

/// Rows mapped together by [`FeatureMap::map_rows`].
pub(crate) const MAP_BLOCK_ROWS: usize = 32;

/// Outputs per tile of [`FeatureMap::map_rows`] (a tile of `omega` for 20 inputs: 40 KB).
pub(crate) const MAP_TILE: usize = 256;

/// `pi / 2` in three parts (33, 33 and 53 significant bits): `k * P1` and `k * P2` are exact
/// for `|k| < 2^20`, so `x - k pi/2` keeps about 1e-16 absolute accuracy (Cody & Waite).
const PIO2_1: f64 = 1.570_796_326_734_125_6;
const PIO2_2: f64 = 6.077_100_506_303_966e-11;
const PIO2_3: f64 = 2.022_266_248_795_950_6e-21;

/// `v_i <- scale * cos(v_i)` ([`cos`]), vectorized (AVX2 when the CPU has it: the same
/// values, `floor` becomes one instruction).
fn cos_scaled(scale: f64, v: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { cos_scaled_avx2(scale, v) };
        }
    }
    cos_scaled_body(scale, v)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn cos_scaled_avx2(scale: f64, v: &mut [f64]) {
    cos_scaled_body(scale, v)
}

#[inline(always)]
fn cos_scaled_body(scale: f64, v: &mut [f64]) {
    for o in v.iter_mut() {
        *o = scale * cos(*o);
    }
}

/// `cos x` for the Fourier features: `x = k pi/2 + r`, `|r| <= pi/4`, then the Taylor series
/// of `cos r` (to `r^16`) or `sin r` (to `r^17`) chosen by `k mod 4`; the first omitted terms
/// are below 3e-18 on `|r| <= pi/4`, so the result is within a few units in the last place
/// of `f64::cos` (checked in the tests). Only `+`, `*`, `floor` and comparisons, no branch
/// on the data and no library call: the loop over a map's outputs vectorizes, and the
/// value is the same bit for bit on every machine (libm's `cos` may differ in the last bit
/// between platforms). For `|x| < 2^20`; the features' arguments `w . x + b` are far below.
#[inline(always)]
pub(crate) fn cos(x: f64) -> f64 {
    let k = (x * std::f64::consts::FRAC_2_PI + 0.5).floor();
    let r = ((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3;
    let r2 = r * r;
    let c = 1.0
        + r2 * (-0.5
            + r2 * (4.166_666_666_666_666_4e-2
                + r2 * (-1.388_888_888_888_889e-3
                    + r2 * (2.480_158_730_158_73e-5
                        + r2 * (-2.755_731_922_398_589e-7
                            + r2 * (2.087_675_698_786_81e-9
                                + r2 * (-1.147_074_559_772_972_5e-11
                                    + r2 * 4.779_477_332_387_385e-14)))))));
    let s = r
        * (1.0
            + r2 * (-1.666_666_666_666_666_6e-1
                + r2 * (8.333_333_333_333_333e-3
                    + r2 * (-1.984_126_984_126_984e-4
                        + r2 * (2.755_731_922_398_589_3e-6
                            + r2 * (-2.505_210_838_544_172e-8
                                + r2 * (1.605_904_383_682_161_3e-10
                                    + r2 * (-7.647_163_731_819_816e-13
                                        + r2 * 2.811_457_254_345_520_6e-15))))))));
    // k mod 4 (k is an integer-valued float): 0 -> cos r, 1 -> -sin r, 2 -> -cos r,
    // 3 -> sin r.
    let q = k - 4.0 * (k * 0.25).floor();
    let v = if q == 1.0 || q == 3.0 { s } else { c };
    if q == 1.0 || q == 2.0 {
        -v
    } else {
        v
    }
}

/// A seed for kernel `spec_text`'s random map from the run's `seed`: FNV-1a of the spec's text
/// mixed in, so that per-feature kernels (one spec each) draw different maps.
pub(crate) fn map_seed(seed: u64, spec_text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in spec_text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    seed ^ h
}

#[cfg(test)]
mod tests {
    use crate::data::Matrix;
    use crate::kernel::{FittedKernel, KernelSpec, MemoryLimit};
    use rand::{Rng, SeedableRng};

    fn rows(n: usize, d: usize, seed: u64) -> Matrix {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        Matrix::from_vec(n, d, (0..n * d).map(|_| rng.gen_range(-1.5..1.5)).collect())
    }

    fn fit(spec: &str, x: &Matrix, seed: u64) -> FittedKernel {
        let s: KernelSpec = spec.parse().unwrap();
        FittedKernel::fit(&s, x, &[], seed).unwrap()
    }

    /// Blocks and tiles of `map_rows` give `map_row`'s values to the last bit: dimensions
    /// below, at and across the tile size, a column subset, zero inputs, normalizations,
    /// row counts across the block size.
    #[test]
    fn blocked_map_rows_equal_map_row_bit_for_bit() {
        let mut x = rows(75, 6, 9);
        x.row_mut(3)[2] = 0.0;
        for spec in [
            "rbf:approx=rff,dim=40",
            "rbf:approx=rff,dim=256",
            "rbf:approx=rff,dim=300",
            "rbf:approx=rff,dim=1030,norm=trace",
            "rbf:features=1+3+4,approx=rff,dim=513,norm=diag",
        ] {
            let map = fit(spec, &x, 2).feature_map().unwrap();
            let z = map.map_rows(&x);
            let mut one = vec![0.0; map.dim()];
            for i in 0..x.rows {
                map.map_row(x.row(i), &mut one);
                assert_eq!(z.row(i), &one[..], "{spec}, row {i}");
            }
        }
    }

    /// A linear kernel's map is exact: `z(a) . z(b)` is the kernel value, pair by pair, under
    /// every normalization and on a subset of the columns (a zero row stays zero under diag).
    #[test]
    fn linear_maps_give_the_kernel() {
        let mut x = rows(30, 5, 1);
        x.row_mut(7).iter_mut().for_each(|v| *v = 0.0);
        for spec in [
            "linear",
            "linear:norm=trace",
            "linear:norm=variance",
            "linear:norm=diag",
            "linear:norm=variance,features=1+3",
            "linear:norm=diag,features=4",
        ] {
            let k = fit(spec, &x, 0);
            let map = k.feature_map().unwrap();
            let z = map.map_rows(&x);
            for i in 0..x.rows {
                for j in 0..x.rows {
                    let want = k.eval(x.row(i), x.row(j));
                    let got = crate::linalg::dot(z.row(i), z.row(j));
                    assert!(
                        (got - want).abs() <= 1e-12 * (1.0 + want.abs()),
                        "{spec} ({i}, {j}): {got} vs {want}"
                    );
                }
            }
        }
        assert!(fit("rbf", &x, 0).feature_map().is_none());
        assert!(fit("poly", &x, 0).feature_map().is_none());
    }

    /// Random Fourier features: each product `z(a) . z(b)` is the mean of `D` independent
    /// terms `2 cos(w.a + b) cos(w.b + b)` of mean `k(a, b)` and variance at most 3/2 (their
    /// square's mean is `E cos^2(w.(a - b)) + 1/2`), so the mean squared error over pairs has
    /// expectation at most `1.5 / D`. Checked for D = 64 .. 4096 on three seeds: below
    /// `3 / D` every time, and falling with D (4096 against 64: the expected ratio is 1/64,
    /// asked below 1/16).
    #[test]
    fn fourier_grams_converge_to_the_gaussian_kernel() {
        let x = rows(40, 4, 2);
        let exact = fit("rbf", &x, 0);
        let lim = MemoryLimit::default();
        let want = match exact.gram(&x, &x, &lim).unwrap() {
            crate::kernel::Gram::Dense(m) => m,
            _ => unreachable!(),
        };
        for seed in [1, 2, 3] {
            let mut mse = Vec::new();
            for dim in [64, 256, 1024, 4096] {
                let k = fit(&format!("rbf:approx=rff,dim={dim}"), &x, seed);
                let g = match k.gram(&x, &x, &lim).unwrap() {
                    crate::kernel::Gram::Dense(m) => m,
                    _ => unreachable!(),
                };
                let e: f64 = g
                    .data
                    .iter()
                    .zip(&want.data)
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum::<f64>()
                    / g.data.len() as f64;
                assert!(e < 3.0 / dim as f64, "seed {seed}, D = {dim}: mse {e}");
                mse.push(e);
            }
            assert!(mse[3] < mse[0] / 16.0, "seed {seed}: {mse:?}");
        }
    }

    /// An approximated kernel is the kernel of its map everywhere: its Gram (symmetric or
    /// not), diagonal and pairwise value agree with `Z Z^T`; the same seed and spec give the
    /// same map, per-feature kernels draw different ones.
    #[test]
    fn approximated_kernels_are_their_maps() {
        let x = rows(25, 3, 3);
        let y = rows(7, 3, 4);
        let lim = MemoryLimit::default();
        let k = fit("rbf:approx=rff,dim=50,norm=trace", &x, 5);
        let map = k.feature_map().unwrap();
        let (zx, zy) = (map.map_rows(&x), map.map_rows(&y));
        let sym = k.gram_sym(&x, &lim).unwrap();
        let cross = k.gram(&y, &x, &lim).unwrap();
        let diag = k.diag(&x);
        for (i, &di) in diag.iter().enumerate() {
            for j in 0..x.rows {
                let want = crate::linalg::dot(zx.row(i), zx.row(j));
                assert!((sym.get(i, j) - want).abs() < 1e-12);
                assert!((k.eval(x.row(i), x.row(j)) - want).abs() < 1e-12);
            }
            assert!((di - crate::linalg::dot(zx.row(i), zx.row(i))).abs() < 1e-12);
        }
        for i in 0..y.rows {
            for j in 0..x.rows {
                let want = crate::linalg::dot(zy.row(i), zx.row(j));
                assert!((cross.get(i, j) - want).abs() < 1e-12);
            }
        }
        assert_eq!(
            fit("rbf:approx=rff,dim=50,norm=trace", &x, 5).feature_map(),
            Some(map)
        );
        let per = crate::kernel::fit_all(
            &["perfeature:rbf:approx=rff,dim=8".parse().unwrap()],
            &x,
            &[],
            5,
        )
        .unwrap();
        assert_eq!(per.len(), 3);
        let z0 =
            per[0]
                .feature_map()
                .unwrap()
                .map_rows(&Matrix::from_vec(1, 3, vec![0.3, 0.3, 0.3]));
        let z1 =
            per[1]
                .feature_map()
                .unwrap()
                .map_rows(&Matrix::from_vec(1, 3, vec![0.3, 0.3, 0.3]));
        assert_ne!(z0, z1);
        assert!(k.name.contains("~rff50"), "{}", k.name);
    }

    /// The Fourier features' cosine against `f64::cos`: within 4e-16 absolute on a million
    /// seeded arguments in [-100, 100] (the features' range), within 1e-13 up to 10^5, exact
    /// at multiples of pi/2's neighbours and at 0.
    #[test]
    fn the_features_cosine_is_the_cosine() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut worst = 0.0f64;
        for _ in 0..1_000_000 {
            let x: f64 = rng.gen_range(-100.0..100.0);
            worst = worst.max((super::cos(x) - x.cos()).abs());
        }
        assert!(worst < 4e-16, "worst error {worst:e}");
        // The vectorized loop gives the scalar function's bits.
        let xs: Vec<f64> = (0..4099).map(|_| rng.gen_range(-60.0..60.0)).collect();
        let mut v = xs.clone();
        super::cos_scaled(0.5, &mut v);
        for (a, x) in v.iter().zip(&xs) {
            assert_eq!(a.to_bits(), (0.5 * super::cos(*x)).to_bits());
        }
        for _ in 0..100_000 {
            let x: f64 = rng.gen_range(-1e5..1e5);
            let e = (super::cos(x) - x.cos()).abs();
            assert!(e < 1e-13, "cos({x}): error {e:e}");
        }
        assert_eq!(super::cos(0.0), 1.0);
        for k in -8..=8 {
            let x = f64::from(k) * std::f64::consts::FRAC_PI_2;
            for dx in [-1e-9, 0.0, 1e-9] {
                let e = (super::cos(x + dx) - (x + dx).cos()).abs();
                assert!(e < 1e-15, "cos({}): error {e:e}", x + dx);
            }
        }
    }

    /// The SPEC keys: `approx=rff[,dim=D]` on a Gaussian kernel only, a dimension in range,
    /// `dim` only with `approx`; the text round-trips.
    #[test]
    fn approx_keys_parse_and_refuse() {
        let s: KernelSpec = "rbf:approx=rff".parse().unwrap();
        assert_eq!(s.approx.unwrap().dim, super::DEFAULT_APPROX_DIM);
        for text in [
            "rbf:approx=rff,dim=64",
            "perfeature:rbf:sigma2=2,norm=trace,approx=rff,dim=8",
        ] {
            let s: KernelSpec = text.parse().unwrap();
            assert_eq!(s.to_string().parse::<KernelSpec>().unwrap(), s, "{text}");
        }
        for (text, needle) in [
            ("linear:approx=rff", "rbf only"),
            ("poly:approx=rff,dim=8", "rbf only"),
            ("rbf:dim=64", "give approx= too"),
            ("rbf:approx=nystrem", "accepted: rff, nystrom, sketch"),
            ("rbf:approx=rff,dim=0", "dim"),
            ("rbf:approx=rff,dim=x", "dim=x"),
        ] {
            let e = text.parse::<KernelSpec>().unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }
}
