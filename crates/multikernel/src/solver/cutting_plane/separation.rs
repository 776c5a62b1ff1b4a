//! The separation of the cutting-plane loop: the most violated constraint at a point by
//! loss-augmented decoding, as unscaled sums over examples ([`CutSums`], which parts of the
//! examples add up exactly) and through the seam of where the examples are decoded
//! ([`Separator`], [`LocalSeparator`] in this process).

use super::{Cut, ReplicaState, Step};
use crate::error::Result;
use crate::features::SparseVector;
use crate::run::Observer;
use crate::task::structured::{explicit_pairs, explicit_scores, StructuredTask};
use rayon::prelude::*;

/// One example's share of a cut: its explicit features `Phi(x_i, y_i) - Phi(x_i, y_hat_i)` as
/// unsorted `(parameter, value)` pairs, and its cost `c(y_i, y_hat_i)`.
type ExampleCut = (Vec<(usize, f64)>, f64);

/// The unscaled sums of a separation over some of the examples: `a = sum_i [Phi(x_i, y_i) -
/// Phi(x_i, y_hat_i)]` (sorted by parameter, zeros left out) and `b = sum_i c(y_i, y_hat_i)`.
/// Parts over disjoint sets of examples add up to the whole separation's sums
/// ([`CutSums::cut`]): in any order and grouping, exactly, when every entry is an integer,
/// as with binary template features (counts) and the Hamming cost. This is what lets a
/// separation be split over machines and give the one process's cut bit for bit.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct CutSums {
    pub a: Vec<(usize, f64)>,
    pub b: f64,
}

impl CutSums {
    /// The parts' sums added in the order given, unscaled: the entries merged in order
    /// (each parameter's values added in the parts' order), the sums that come to zero
    /// dropped. What [`CutSums::cut`] scales, and what a process that separated several
    /// parts may send in their place when their sums are integers.
    pub(crate) fn sum(parts: &[CutSums]) -> CutSums {
        let mut merged: Vec<(usize, f64)> = Vec::new();
        let mut b = 0.0;
        for part in parts {
            merged = merge_sorted(&merged, &part.a);
            b += part.b;
        }
        merged.retain(|&(_, v)| v != 0.0);
        CutSums { a: merged, b }
    }

    /// The cut of `n` examples from the sums of parts that cover them once, added in the
    /// order given, then scaled by `1/n`. Each part's entries are sorted by parameter, so
    /// the parts are merged in order (each parameter's values added in the parts' order,
    /// as into a dense accumulator from zero; the sums that come to zero dropped), a pass
    /// over the entries with no sort.
    pub(crate) fn cut(parts: &[CutSums], n: usize) -> Cut {
        let inv = 1.0 / n as f64;
        let (a, b) = match parts {
            [one] => (
                one.a.iter().map(|&(j, v)| (j, v * inv)).collect(),
                one.b * inv,
            ),
            _ => {
                let sum = CutSums::sum(parts);
                let entries = sum.a.into_iter().map(|(j, v)| (j, v * inv)).collect();
                (entries, sum.b * inv)
            }
        };
        Cut {
            a: SparseVector::from_sorted(a).unwrap_or_default(),
            b,
        }
    }
}

/// The entries of `a` and `b` (each sorted by parameter, each parameter once) in order, a
/// parameter in both with `a`'s value plus `b`'s (zeros kept).
fn merge_sorted(a: &[(usize, f64)], b: &[(usize, f64)]) -> Vec<(usize, f64)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut k) = (0, 0);
    while i < a.len() && k < b.len() {
        match a[i].0.cmp(&b[k].0) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[k]);
                k += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((a[i].0, a[i].1 + b[k].1));
                i += 1;
                k += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[k..]);
    out
}

/// Adds `(parameter, value)` pairs into the dense `acc`, remembering in `touched` the
/// parameters first reached.
fn accumulate(
    acc: &mut [f64],
    touched: &mut Vec<usize>,
    pairs: impl Iterator<Item = (usize, f64)>,
) {
    for (j, v) in pairs {
        if acc[j] == 0.0 {
            touched.push(j);
        }
        acc[j] += v;
    }
}

/// The non-zero entries of `acc` at `touched`, sorted, and `acc` zeroed there.
fn drain_sorted(acc: &mut [f64], mut touched: Vec<usize>) -> Vec<(usize, f64)> {
    touched.sort_unstable();
    touched.dedup();
    touched
        .into_iter()
        .filter_map(|j| {
            let v = std::mem::take(&mut acc[j]);
            (v != 0.0).then_some((j, v))
        })
        .collect()
}

/// [`CutSums`] of the examples `examples` at `w`; `None` when the observer stopped the run.
///
/// Each example's difference `Phi(x_i, y_i) - Phi(x_i, y_hat_i)` is taken in part space
/// first, where equal parts cancel exactly (a token labelled right adds nothing), and only
/// then mapped to the parameters (unsorted, summed straight into the dense accumulator, so no
/// example's entries are sorted) and summed; the sum is scaled by `1/n` at the end. So a cut
/// holds the features of the mistakes only, not round-off residue of every gold feature. The
/// sum is taken in `a`, a dense vector over the parameters that is all zeros on entry and is
/// left so (the loop keeps it from one cut to the next).
pub(crate) fn separation_sums<T: StructuredTask + ?Sized>(
    task: &T,
    w: &[f64],
    examples: std::ops::Range<usize>,
    a: &mut [f64],
    observer: &dyn Observer,
) -> Result<Option<CutSums>> {
    let found: Vec<Option<ExampleCut>> = examples
        .into_par_iter()
        .map_init(Vec::new, |scores, i| -> Result<Option<ExampleCut>> {
            if observer.should_stop() {
                return Ok(None);
            }
            explicit_scores(task, i, w, scores)?;
            let aug = task.loss_augmented_decode(i, scores);
            let cost = task.cost(i, &aug.output);
            let mut pairs = Vec::new();
            if aug.output != *task.gold(i) {
                let diff = task
                    .joint_feature(i, task.gold(i))
                    .combine(1.0, &aug.feature, -1.0)
                    .pruned();
                explicit_pairs(task, i, &diff, &mut pairs);
            }
            Ok(Some((pairs, cost)))
        })
        .collect::<Result<_>>()?;
    let Some(found) = found.into_iter().collect::<Option<Vec<_>>>() else {
        return Ok(None);
    };
    let mut touched = Vec::new();
    let mut b = 0.0;
    for (phi, cost) in found {
        accumulate(a, &mut touched, phi.into_iter());
        b += cost;
    }
    Ok(Some(CutSums {
        a: drain_sorted(a, touched),
        b,
    }))
}

/// Finds the most violated constraint at a point: the loop's seam for where the examples
/// are decoded ([`LocalSeparator`] in this process; parts of the examples elsewhere, their
/// [`CutSums`] added up by [`CutSums::cut`]). `None`: stopped by the observer.
pub(crate) trait Separator {
    fn separate(&mut self, at: &[f64], observer: &dyn Observer) -> Result<Option<Cut>>;

    /// [`Separator::separate`] with the loop's state at hand (what a process that missed
    /// the loop's steps starts from, [`ReplicaState`]).
    fn separate_in(
        &mut self,
        at: &[f64],
        _loop: &LoopView<'_>,
        observer: &dyn Observer,
    ) -> Result<Option<Cut>> {
        self.separate(at, observer)
    }

    /// The loop solved the working set after its last cut and is about to drop cuts
    /// (`keep`): what a separator that rebuilds the points elsewhere ([`Replica`]) follows.
    fn solved(&mut self, _step: &Step<'_>) {}
}

/// The loop's state as far as its points go, borrowed: the working set's cuts with the
/// last solve's multipliers and factors, the best point, the separation step and the solves
/// so far ([`LoopView::state`]: the [`ReplicaState`] a [`Replica`] rebuilds the point from).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoopView<'a> {
    pub cuts: &'a [Cut],
    pub alpha: &'a [f64],
    pub factors: &'a [f64],
    pub best: Option<&'a [f64]>,
    pub step: f64,
    pub solves: usize,
}

impl LoopView<'_> {
    pub(crate) fn state(&self) -> ReplicaState {
        ReplicaState {
            step: self.step,
            cuts: self.cuts.to_vec(),
            alpha: self.alpha.to_vec(),
            factors: self.factors.to_vec(),
            best: self.best.map(<[f64]>::to_vec),
            steps: self.solves,
        }
    }
}

/// Every example of `task`, decoded in this process (in parallel).
pub(crate) struct LocalSeparator<'a, T: StructuredTask + ?Sized> {
    task: &'a T,
    /// The dense accumulator, all zeros between separations.
    scratch: Vec<f64>,
}

impl<'a, T: StructuredTask + ?Sized> LocalSeparator<'a, T> {
    pub(crate) fn new(task: &'a T, dim: usize) -> Self {
        LocalSeparator {
            task,
            scratch: vec![0.0; dim],
        }
    }
}

impl<T: StructuredTask + ?Sized> Separator for LocalSeparator<'_, T> {
    fn separate(&mut self, at: &[f64], observer: &dyn Observer) -> Result<Option<Cut>> {
        let n = self.task.n_examples();
        Ok(
            separation_sums(self.task, at, 0..n, &mut self.scratch, observer)?
                .map(|s| CutSums::cut(&[s], n)),
        )
    }
}
