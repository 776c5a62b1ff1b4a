//! Group structure of a parameter vector: the blocks `theta_m` of martins2011 Sec. 2.2.

use crate::error::{Error, Result};

/// Group structure: group `m` owns the coordinate indices `members[m]`.
///
/// Groups may overlap (hierarchical / overlapping group lasso, martins2011 Sec. 3.2, "Other
/// variants") and need not cover every coordinate: a coordinate in no group is not touched
/// by the group-based regularizers. Indices must be below the length of the vectors the
/// groups are used with (`Groups::check` verifies this; the regularizers index directly and
/// panic on an out-of-range index, like slice indexing).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Groups {
    /// `members[m]`: the coordinates of group `m`.
    pub members: Vec<Vec<usize>>,
}

impl Groups {
    /// Groups from explicit member lists.
    #[cfg(test)]
    pub(crate) fn new(members: Vec<Vec<usize>>) -> Groups {
        Groups { members }
    }

    /// Consecutive groups of the given sizes: group 0 owns `0..sizes[0]`, group 1 the next
    /// `sizes[1]` coordinates, and so on (a partition of `0..sizes.iter().sum()`).
    pub fn contiguous(sizes: &[usize]) -> Groups {
        let mut start = 0;
        let members = sizes
            .iter()
            .map(|&s| {
                let g: Vec<usize> = (start..start + s).collect();
                start += s;
                g
            })
            .collect();
        Groups { members }
    }

    /// One group per coordinate: `{0}, {1}, ..., {n-1}`.
    #[cfg(test)]
    pub(crate) fn singletons(n: usize) -> Groups {
        Groups {
            members: (0..n).map(|i| vec![i]).collect(),
        }
    }

    /// Number of groups M.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.members.len()
    }

    /// True when there are no groups.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Total number of memberships (sum of group sizes).
    #[cfg(test)]
    pub(crate) fn total_size(&self) -> usize {
        self.members.iter().map(Vec::len).sum()
    }

    /// Block norms `b_m = ||x_m||` (Euclidean), one per group.
    pub fn norms(&self, x: &[f64]) -> Vec<f64> {
        self.members.iter().map(|g| group_norm(x, g)).collect()
    }

    /// Scales every coordinate of group `m` by `factors[m]`. With overlapping groups a
    /// coordinate is scaled once per group containing it.
    pub(crate) fn scale_blocks(&self, x: &mut [f64], factors: &[f64]) {
        for (g, &f) in self.members.iter().zip(factors) {
            if f != 1.0 {
                for &i in g {
                    x[i] *= f;
                }
            }
        }
    }

    /// True when no coordinate belongs to two groups (nor twice to one group).
    /// `dim` bounds the indices; an index `>= dim` makes the answer `false`.
    pub(crate) fn is_disjoint(&self, dim: usize) -> bool {
        // Fast path without allocation: indices strictly increasing across the concatenated
        // groups (e.g. [`Groups::contiguous`]).
        let mut next = 0usize;
        let increasing = self.members.iter().flatten().all(|&i| {
            let ok = i >= next && i < dim;
            next = i.saturating_add(1);
            ok
        });
        if increasing {
            return true;
        }
        let mut seen = vec![false; dim];
        for g in &self.members {
            for &i in g {
                match seen.get_mut(i) {
                    Some(s) if !*s => *s = true,
                    _ => return false,
                }
            }
        }
        true
    }

    /// True when the groups are disjoint and cover every coordinate of `0..dim`.
    #[cfg(test)]
    pub(crate) fn is_partition(&self, dim: usize) -> bool {
        self.is_disjoint(dim) && self.total_size() == dim
    }

    /// True when any two groups are either disjoint or nested (a tree / forest of groups,
    /// Jenatton et al. 2011). Disjoint groups are tree-structured. Quadratic in M; meant for
    /// validation and tests, not for the inner loop.
    #[cfg(test)]
    pub(crate) fn is_tree_structured(&self) -> bool {
        let sets: Vec<std::collections::BTreeSet<usize>> = self
            .members
            .iter()
            .map(|g| g.iter().copied().collect())
            .collect();
        for a in 0..sets.len() {
            for b in a + 1..sets.len() {
                let inter = sets[a].intersection(&sets[b]).count();
                if inter != 0 && inter != sets[a].len() && inter != sets[b].len() {
                    return false;
                }
            }
        }
        true
    }

    /// Checks that every index is below `dim` and that no group lists a coordinate twice.
    pub(crate) fn check(&self, dim: usize) -> Result<()> {
        let mut last_seen = vec![usize::MAX; dim];
        for (m, g) in self.members.iter().enumerate() {
            for &i in g {
                if i >= dim {
                    return Err(Error::param(
                        "groups",
                        format!("group {m} lists coordinate {i}"),
                        format!("coordinates below {dim}, the length of the parameter vector"),
                    ));
                }
                if last_seen[i] == m {
                    return Err(Error::param(
                        "groups",
                        format!("group {m} lists coordinate {i} twice"),
                        "each coordinate at most once per group",
                    ));
                }
                last_seen[i] = m;
            }
        }
        Ok(())
    }

    /// Like [`Groups::check`], and also requires pairwise disjoint groups; `what` names the
    /// regularizer in the error message.
    pub(crate) fn check_disjoint(&self, dim: usize, what: &str) -> Result<()> {
        self.check(dim)?;
        let mut owner = vec![usize::MAX; dim];
        for (m, g) in self.members.iter().enumerate() {
            for &i in g {
                if owner[i] != usize::MAX {
                    return Err(Error::unsupported(format!(
                        "{what} needs non-overlapping groups, but coordinate {i} is in groups {} \
                         and {m}; use l21 (group lasso) for overlapping groups",
                        owner[i]
                    )));
                }
                owner[i] = m;
            }
        }
        Ok(())
    }

    /// Disjoint groups obtained by keeping each coordinate only in the first group (lowest
    /// index) that lists it. Equal to `self` when the groups are already disjoint.
    pub(crate) fn first_owner(&self, dim: usize) -> Groups {
        let mut taken = vec![false; dim];
        let members = self
            .members
            .iter()
            .map(|g| {
                g.iter()
                    .copied()
                    .filter(|&i| !std::mem::replace(&mut taken[i], true))
                    .collect()
            })
            .collect();
        Groups { members }
    }

    /// Group indices ordered by increasing size (ties by index): for tree-structured groups,
    /// every group comes after all the groups nested in it (children before parents).
    pub(crate) fn order_by_size(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.members.len()).collect();
        order.sort_by_key(|&m| self.members[m].len());
        order
    }
}

/// Euclidean norm of the coordinates `g` of `x`.
pub(crate) fn group_norm(x: &[f64], g: &[usize]) -> f64 {
    g.iter().map(|&i| x[i] * x[i]).sum::<f64>().sqrt()
}
