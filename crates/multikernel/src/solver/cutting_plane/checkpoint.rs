//! Checkpoints of the cutting-plane loop (multi-template learning, mao-tsang Alg. 1): its
//! state at a cut boundary, after the working-set problem was solved with the new cut and
//! the inactive cuts dropped, so that a killed run goes on from there to the same weights,
//! bit for bit.
//!
//! What is saved: the cuts held (their entries and offsets), each one's count of solves
//! without a multiplier, the cuts added in all, the current weights `w` (their entries that
//! are not `+0.0`), the margins `<a_r, w>` and the regularizer the master gave with them,
//! the objective and empirical risk of the last cut, the best objective and the best master
//! value (which steer the inexact solves), with a separation step below 1 the best point
//! and its risk, the seconds spent so far in decoding and in the master, and the master's
//! own state ([`MasterSnapshot`]: multipliers, template weights, the step carried between
//! saddle-point solves, the last value, the counters).
//!
//! Not saved: the master's packed Gram matrices of the cuts. The first solve after a resume
//! rebuilds them from the cuts held ([`super::block_master::grams::PackedGrams::extend`]
//! over all of them, in order): each entry is computed from its two cuts only, by the same
//! code in the same order as when the later of the two arrived, so the rebuilt matrices are
//! the original ones to the last bit. This costs one Gram row per held cut once, against a
//! checkpoint of `templates x cuts^2 / 2` more numbers at every save.

use super::{Cut, MasterSnapshot};
use crate::error::{Error, Result};
use crate::features::SparseVector;
use serde::{Deserialize, Serialize};

/// The learner family name of the cutting plane's checkpoints.
pub(crate) const CHECKPOINT_FAMILY: &str = "mtl";

/// The loop's state at a cut boundary, as written (module docs). Scalars that may be
/// infinite or NaN are kept as their bits.
#[derive(Debug, Serialize)]
pub(crate) struct LoopStateRef<'a> {
    pub dim: usize,
    pub added: usize,
    pub cuts: &'a [Cut],
    pub idle: &'a [usize],
    pub w: SparseVector,
    pub margins: &'a Option<Vec<f64>>,
    pub regularizer: Option<f64>,
    pub objective: u64,
    pub risk: u64,
    pub best_objective: u64,
    pub best_lower: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best: Option<(SparseVector, u64)>,
    pub decode_seconds: f64,
    pub master_seconds: f64,
    pub master: MasterSnapshot,
}

/// A [`LoopStateRef`] read back (fields as written; [`LoopState::check`] checks them).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct LoopState {
    pub dim: usize,
    pub added: usize,
    pub cuts: Vec<Cut>,
    pub idle: Vec<usize>,
    pub w: SparseVector,
    pub margins: Option<Vec<f64>>,
    pub regularizer: Option<f64>,
    pub objective: u64,
    pub risk: u64,
    pub best_objective: u64,
    pub best_lower: u64,
    #[serde(default)]
    pub best: Option<(SparseVector, u64)>,
    pub decode_seconds: f64,
    pub master_seconds: f64,
    pub master: MasterSnapshot,
}

/// The entries of a dense `w` whose bits are not `+0.0` (so `-0.0` comes back as it was).
pub(super) fn sparse_weights(w: &[f64]) -> SparseVector {
    let entries = w
        .iter()
        .enumerate()
        .filter(|(_, v)| v.to_bits() != 0)
        .map(|(j, &v)| (j, v))
        .collect();
    SparseVector::from_sorted(entries).expect("indices increase")
}

fn bad(what: &str) -> Error {
    Error::data(format!(
        "the checkpoint's cutting-plane state does not fit this run: {what}"
    ))
}

/// Whether `v`'s indices increase strictly and stay below `dim`.
fn fits(v: &SparseVector, dim: usize) -> bool {
    let e = v.entries();
    e.windows(2).all(|p| p[0].0 < p[1].0) && e.last().is_none_or(|&(j, _)| j < dim)
}

impl LoopState {
    /// Checks the state against a task of `dim` parameters and a cap of `max_iter` cuts;
    /// returns the dense weights.
    pub(crate) fn check(&self, dim: usize, max_iter: usize) -> Result<Vec<f64>> {
        if self.dim != dim {
            return Err(bad(&format!(
                "it has {} parameters, this task {dim}",
                self.dim
            )));
        }
        let r = self.cuts.len();
        if self.added > max_iter || r > self.added || r == 0 {
            return Err(bad(&format!(
                "{} cuts held of {} added, with at most {max_iter} cuts",
                r, self.added
            )));
        }
        if self.idle.len() != r
            || self.master.alpha.len() != r
            || self.margins.as_ref().is_some_and(|m| m.len() != r)
        {
            return Err(bad("the counts of cuts do not agree"));
        }
        if !self.cuts.iter().all(|c| fits(&c.a, dim) && c.b.is_finite()) || !fits(&self.w, dim) {
            return Err(bad("a cut or the weights are outside the parameters"));
        }
        Ok(dense(&self.w, dim))
    }

    /// The best point and its risk (a separation step below 1), dense, checked against a
    /// task of `dim` parameters.
    pub(crate) fn best_point(&self, dim: usize) -> Result<Option<(Vec<f64>, f64)>> {
        match &self.best {
            None => Ok(None),
            Some((b, _)) if !fits(b, dim) => Err(bad("the best point is outside the parameters")),
            Some((b, r)) => Ok(Some((dense(b, dim), f64::from_bits(*r)))),
        }
    }
}

/// `v` as a dense vector of `dim` entries (indices checked by [`fits`]), each entry assigned
/// (not added, as [`SparseVector::to_dense`] does), so that a `-0.0` comes back as it was.
fn dense(v: &SparseVector, dim: usize) -> Vec<f64> {
    let mut w = vec![0.0; dim];
    for (j, x) in v.iter() {
        w[j] = x;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_weights_keep_negative_zeros_and_drop_positive_ones() {
        let w = [0.0, -0.0, 1.5, 0.0, -2.0];
        let s = sparse_weights(&w);
        assert_eq!(s.len(), 3);
        let mut back = vec![0.0; 5];
        for (j, v) in s.iter() {
            back[j] = v;
        }
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&back), bits(&w));
    }
}
