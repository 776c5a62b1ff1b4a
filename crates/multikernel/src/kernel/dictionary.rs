//! The default kernel dictionary: what the online, lp-MKL and MKL-GOMP learners use on a
//! table when no kernel is given (`--kernel auto`).
//!
//! A fixed rule of the table's width `d`, not values fitted to any table:
//!
//! - a linear kernel and polynomial kernels of degrees `POLY_DEGREES` (offset 1), over all
//!   features;
//! - Gaussian kernels over all features at `RBF_SCALES` times the median heuristic's width
//!   `sigma2` (`rbf:scale=S`): with standardized features the heuristic gives
//!   `sigma2 ~ d`, i.e. `gamma = 1 / (2 sigma2) ~ 1 / (2 d)`, half of scikit-learn's
//!   `gamma = "scale"`; the scales 1/16 .. 4 cover `gamma` from `scale / 8` to `8 scale`, the
//!   range a tuned SVC searches;
//! - one Gaussian kernel per feature (median heuristic on that feature) when
//!   `d <= PER_FEATURE_MAX`, so that sparse MKL can pick out features.
//!
//! Every kernel is normalized to unit mean diagonal on the training rows (`norm=trace`; a
//! Gaussian kernel has it already), so that no kernel wins by its scale alone.

use super::feature_map::{Approx, ApproxMethod, DEFAULT_APPROX_DIM};
use super::spec::{KernelKind, KernelSpec, Normalization};

/// Multiples of the median heuristic's Gaussian width in the dictionary.
pub(crate) const RBF_SCALES: [f64; 4] = [1.0 / 16.0, 0.25, 1.0, 4.0];
/// Degrees of the polynomial kernels (offset 1) in the dictionary.
pub(crate) const POLY_DEGREES: [u32; 2] = [2, 3];
/// Per-feature Gaussian kernels join the dictionary on tables of at most this many features.
pub(crate) const PER_FEATURE_MAX: usize = 20;

/// The default dictionary for a table of `n_features` columns (module docs), with
/// per-feature kernels as one `perfeature:` spec (see [`super::expand_specs`]).
pub fn default_dictionary(n_features: usize) -> Vec<KernelSpec> {
    let trace = |kind| KernelSpec::new(kind).with_norm(Normalization::Trace);
    let mut out = vec![trace(KernelKind::Linear)];
    out.extend(POLY_DEGREES.iter().map(|&degree| {
        trace(KernelKind::Poly {
            degree,
            offset: 1.0,
        })
    }));
    out.extend(RBF_SCALES.iter().map(|&s| {
        trace(KernelKind::Rbf {
            sigma2: None,
            scale: (s != 1.0).then_some(s),
        })
    }));
    if n_features <= PER_FEATURE_MAX {
        let mut per = trace(KernelKind::Rbf {
            sigma2: None,
            scale: None,
        });
        per.perfeature = true;
        out.push(per);
    }
    out
}

/// Multiples of the median heuristic's Gaussian width in [`streaming_dictionary`].
pub(crate) const STREAM_RBF_SCALES: [f64; 3] = [1.0, 4.0, 0.25];

/// The default kernels when training from a stream (`train --stream`, issue 17), where every
/// kernel needs an explicit feature map: Gaussian kernels at `STREAM_RBF_SCALES` times the
/// median heuristic's width, each approximated by `DEFAULT_APPROX_DIM` random Fourier
/// features (`rbf:scale=S,approx=rff`); the Python package's `INCREMENTAL_KERNELS` and the
/// scale benchmark's kernels. Narrower Gaussians (`RBF_SCALES`' 1/16) and polynomial
/// sketches need many more features for the same error, so they stay out of the default;
/// `--kernel` gives them (and `linear`) when wanted.
pub fn streaming_dictionary() -> Vec<KernelSpec> {
    STREAM_RBF_SCALES
        .iter()
        .map(|&s| {
            let mut k = KernelSpec::new(KernelKind::Rbf {
                sigma2: None,
                scale: (s != 1.0).then_some(s),
            });
            k.approx = Some(Approx {
                method: ApproxMethod::Rff,
                dim: DEFAULT_APPROX_DIM,
            });
            k
        })
        .collect()
}

/// The number of kernels of [`default_dictionary`] once per-feature kernels are expanded.
pub fn dictionary_size(n_features: usize) -> usize {
    1 + POLY_DEGREES.len()
        + RBF_SCALES.len()
        + if n_features <= PER_FEATURE_MAX {
            n_features
        } else {
            0
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::expand_specs;

    #[test]
    fn the_rule_by_width() {
        for d in [1, 8, 20, 21, 60] {
            let dict = default_dictionary(d);
            let expanded = expand_specs(&dict, d);
            assert_eq!(expanded.len(), dictionary_size(d), "d = {d}");
            assert!(expanded.iter().all(|k| k.norm == Normalization::Trace));
            let per = expanded.iter().filter(|k| k.features.is_some()).count();
            assert_eq!(per, if d <= PER_FEATURE_MAX { d } else { 0 });
            // Every spec prints in the grammar and parses back.
            for k in &dict {
                assert_eq!(&k.to_string().parse::<KernelSpec>().unwrap(), k);
            }
        }
        let names: Vec<String> = default_dictionary(30)
            .iter()
            .map(|k| k.to_string())
            .collect();
        assert_eq!(
            names,
            [
                "linear:norm=trace",
                "poly:degree=2,offset=1,norm=trace",
                "poly:degree=3,offset=1,norm=trace",
                "rbf:scale=0.0625,norm=trace",
                "rbf:scale=0.25,norm=trace",
                "rbf:norm=trace",
                "rbf:scale=4,norm=trace"
            ]
        );
    }

    #[test]
    fn the_streaming_dictionary_has_explicit_maps_only() {
        let names: Vec<String> = streaming_dictionary()
            .iter()
            .map(|k| k.to_string())
            .collect();
        assert_eq!(
            names,
            [
                "rbf:approx=rff,dim=1024",
                "rbf:scale=4,approx=rff,dim=1024",
                "rbf:scale=0.25,approx=rff,dim=1024"
            ]
        );
        for k in &streaming_dictionary() {
            assert_eq!(&k.to_string().parse::<KernelSpec>().unwrap(), k);
        }
        // Fitted on a few rows, every kernel has its explicit map (what training from a
        // stream requires).
        let values = (0..120).map(|v| ((v * 7) % 11) as f64 - 5.0).collect();
        let x = crate::data::Matrix::from_vec(40, 3, values);
        let names = ["a".to_string(), "b".to_string(), "c".to_string()];
        let fitted = crate::kernel::fit_all(&streaming_dictionary(), &x, &names, 1).unwrap();
        assert_eq!(fitted.len(), 3);
        assert!(fitted.iter().all(|k| k.feature_map().is_some()));
    }
}
