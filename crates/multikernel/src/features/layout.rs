//! Explicit parameter groups laid out in one index space.

use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Consecutive groups of explicit parameters in one global index space: group `g` holds the
/// global indices `offsets[g]..offsets[g + 1]`. A feature template (or a label-pair matrix)
/// is one group; a sparse feature vector over all groups uses global indices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupLayout {
    offsets: Vec<usize>,
}

impl Default for GroupLayout {
    fn default() -> Self {
        GroupLayout { offsets: vec![0] }
    }
}

impl GroupLayout {
    /// Groups of the given lengths, in order.
    pub(crate) fn new(lens: impl IntoIterator<Item = usize>) -> GroupLayout {
        let mut offsets = vec![0];
        for len in lens {
            let last = offsets[offsets.len() - 1];
            offsets.push(last + len);
        }
        GroupLayout { offsets }
    }

    pub(crate) fn n_groups(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Total number of parameters.
    pub(crate) fn total(&self) -> usize {
        self.offsets[self.offsets.len() - 1]
    }

    /// The global indices of group `g`.
    pub(crate) fn range(&self, g: usize) -> Range<usize> {
        self.offsets[g]..self.offsets[g + 1]
    }

    pub(crate) fn len_of(&self, g: usize) -> usize {
        self.offsets[g + 1] - self.offsets[g]
    }

    /// The global index of entry `j` of group `g`.
    #[cfg(test)]
    pub(crate) fn global(&self, g: usize, j: usize) -> usize {
        self.offsets[g] + j
    }

    /// `(group, index within the group)` of a global index; `None` beyond [`Self::total`].
    /// The l2 norm of each group's block of `weights` (global indices).
    pub(crate) fn group_norms(&self, weights: &[f64]) -> Vec<f64> {
        (0..self.n_groups())
            .map(|g| {
                weights[self.range(g)]
                    .iter()
                    .map(|w| w * w)
                    .sum::<f64>()
                    .sqrt()
            })
            .collect()
    }

    pub(crate) fn locate(&self, global: usize) -> Option<(usize, usize)> {
        if global >= self.total() {
            return None;
        }
        // The last offset <= global among the group starts (empty groups are skipped).
        let g = self.offsets.partition_point(|&o| o <= global) - 1;
        Some((g, global - self.offsets[g]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_every_index() {
        let l = GroupLayout::new([3, 0, 2, 1]);
        assert_eq!(l.n_groups(), 4);
        assert_eq!(l.total(), 6);
        let want = [(0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (3, 0)];
        for (k, w) in want.iter().enumerate() {
            assert_eq!(l.locate(k), Some(*w));
            assert_eq!(l.global(w.0, w.1), k);
        }
        assert_eq!(l.locate(6), None);
        assert_eq!(l.range(2), 3..5);
        assert_eq!(l.len_of(1), 0);
        assert_eq!(GroupLayout::default().total(), 0);
    }
}
