//! What SPOM on sequences ([`super::spom`]) and the structured wrappers ([`super::wrapper`])
//! share before learning: `C` and `lambda` (`lambda = 1 / (C N)`, `N` training sequences, as
//! in Martins et al. 2011, Sec. 4), the kernels fitted on the training positions and their
//! training Gram matrices.

use super::model::KernelGroup;
use crate::error::{Error, Result};
use crate::kernel::binary::binary_grams;
use crate::kernel::{fit_all, FittedKernel, Gram, KernelSpec, MemoryLimit};
use rayon::prelude::*;

/// `lambda = 1 / (C N)` with `N` training words.
pub fn lambda_from_c(c: f64, n_words: usize) -> f64 {
    1.0 / (c * n_words.max(1) as f64)
}

/// `C = 1 / (lambda N)`.
pub(crate) fn c_from_lambda(lambda: f64, n_words: usize) -> f64 {
    1.0 / (lambda * n_words.max(1) as f64)
}

/// Fits the kernels of `specs` on the training characters (seeded heuristics).
pub(crate) fn fit_kernels(
    specs: &[KernelSpec],
    x: &crate::data::Matrix,
    seed: u64,
) -> Result<Vec<FittedKernel>> {
    if specs.is_empty() {
        return Err(Error::param("kernels", "none", "at least one kernel"));
    }
    fit_all(specs, x, &[], seed)
}

/// Training Gram matrices of the base kernels, memory checked first: on 0/1 inputs (OCR
/// pixels) all at once by popcount and table lookup ([`binary_grams`]), otherwise one by one
/// through [`FittedKernel::gram_sym`] (in parallel over kernels).
pub fn base_grams(
    kernels: &[FittedKernel],
    x: &crate::data::Matrix,
    memory: &MemoryLimit,
) -> Result<Vec<Gram>> {
    let n = x.rows;
    let dense = kernels.iter().filter(|k| !k.is_sparse()).count();
    memory.check(
        dense.saturating_mul(n).saturating_mul(n).saturating_mul(8),
        &format!("{dense} dense training Gram matrices of {n} x {n}"),
    )?;
    if let Some(g) = binary_grams(kernels, x, None, memory)? {
        return Ok(g);
    }
    kernels.par_iter().map(|k| k.gram_sym(x, memory)).collect()
}

/// The Gram matrix of a group from the base Grams: `sum_k w_k K_k` (dense unless the group
/// is a single sparse kernel with factor 1, which is then cloned).
pub fn group_gram(base: &[Gram], group: &KernelGroup) -> Result<Gram> {
    let first = group
        .components
        .first()
        .ok_or_else(|| Error::data(format!("kernel group {} is empty", group.name)))?;
    if group.components.len() == 1 && first.1 == 1.0 {
        return Ok(base[first.0].clone());
    }
    let g0 = &base[first.0];
    let mut m = crate::data::Matrix::zeros(g0.rows(), g0.cols());
    for &(k, w) in &group.components {
        let g = &base[k];
        m.data
            .par_chunks_mut(g.cols().max(1))
            .enumerate()
            .for_each(|(i, row)| g.for_each_in_row(i, |j, v| row[j] += w * v));
    }
    Ok(Gram::Dense(m))
}
