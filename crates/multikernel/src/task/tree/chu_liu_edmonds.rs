//! The Chu-Liu-Edmonds algorithm (Chu & Liu 1965, Edmonds 1967; McDonald et al. 2005
//! Sec. 3.1): the maximum spanning arborescence rooted at 0 of an arc-score matrix, i.e. the
//! best *non-projective* tree, `O(n^3)` time and `O(n^2)` memory.
//!
//! Each node takes its best incoming arc. If these arcs form no cycle they are the tree.
//! Otherwise the cycle `C` is contracted into one node `c` with
//!
//! ```text
//! a(u, c) = max_{v in C} a(u, v) - a(best(v), v)      (entering C at v breaks v's cycle arc)
//! a(c, w) = max_{v in C} a(v, w)
//! ```
//!
//! and the search repeats on the smaller graph. Contraction is done in place on one score
//! matrix that remembers the original arc behind each entry; expanding the contractions in
//! reverse order, the one arc entering a contracted cycle decides which of its arcs is broken.
//!
//! One root child (`single_root`, as Universal Dependencies requires): every root arc is
//! lowered by the spread `D` of the scores (any two trees differ by less than `D`), so a tree
//! with one root child beats every tree with more, and among single-root trees the order is
//! unchanged: the answer is exact.

use super::scores::{sanitized, spread};
use super::TreeDecoder;
use crate::task::structured::PartMarginals;

/// Longest sentence decoded: the three `(n + 1)^2` matrices then take 400 MB.
pub(crate) const CLE_MAX_TOKENS: usize = 5000;

/// Non-projective decoding by Chu-Liu-Edmonds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChuLiuEdmonds {
    /// Exactly one token attached to the root.
    pub single_root: bool,
}

impl Default for ChuLiuEdmonds {
    fn default() -> Self {
        ChuLiuEdmonds { single_root: true }
    }
}

/// One contraction, kept to expand it again.
struct Contraction {
    /// The representative node the cycle became.
    rep: usize,
    /// Per original node, the cycle member (a current node at contraction time) that holds
    /// it; `usize::MAX` outside the cycle.
    member: Vec<usize>,
    /// Per cycle member, the original arc `(head, dependent)` of its cycle arc.
    cycle_arcs: Vec<(usize, (usize, usize))>,
}

/// The best incoming node of every alive non-root node (first maximum).
fn best_parents(n1: usize, s: &[f64], alive: &[bool], par: &mut [usize]) {
    for v in 1..n1 {
        if !alive[v] {
            continue;
        }
        let mut best = usize::MAX;
        for u in 0..n1 {
            if u != v && alive[u] && (best == usize::MAX || s[u * n1 + v] > s[best * n1 + v]) {
                best = u;
            }
        }
        par[v] = best;
    }
}

/// A cycle of the parent graph among alive nodes, if any (its nodes).
fn find_cycle(n1: usize, alive: &[bool], par: &[usize]) -> Option<Vec<usize>> {
    // 0: unvisited, 1: on the current path, 2: done.
    let mut state = vec![0u8; n1];
    state[0] = 2;
    for start in 1..n1 {
        if !alive[start] || state[start] != 0 {
            continue;
        }
        let mut path = Vec::new();
        let mut v = start;
        while state[v] == 0 {
            state[v] = 1;
            path.push(v);
            v = par[v];
        }
        if state[v] == 1 {
            let at = path.iter().position(|&p| p == v).unwrap_or(0);
            return Some(path[at..].to_vec());
        }
        for p in path {
            state[p] = 2;
        }
    }
    None
}

impl TreeDecoder for ChuLiuEdmonds {
    fn max_tokens(&self) -> usize {
        CLE_MAX_TOKENS
    }

    /// `log Z` and the arc marginals over every tree (the matrix-tree theorem), with one root child when `single_root`
    /// ([`super::marginals::matrix_tree`]).
    fn marginals(&self, n: usize, arc: &[f64]) -> Option<PartMarginals> {
        super::marginals::matrix_tree(n, arc, self.single_root)
    }

    fn decode(&self, n: usize, arc: &[f64]) -> Vec<usize> {
        if n == 0 {
            return Vec::new();
        }
        let n1 = n + 1;
        let mut s = sanitized(n, arc);
        if self.single_root {
            let (d, _, _) = spread(n, &s);
            // Row 0 holds the root arcs (entry 0 is unused).
            s[1..n1].iter_mut().for_each(|v| *v -= d);
        }
        // The original arc behind each entry.
        let mut orig: Vec<(u32, u32)> = (0..n1 * n1)
            .map(|r| ((r / n1) as u32, (r % n1) as u32))
            .collect();
        let mut alive = vec![true; n1];
        let mut rep: Vec<usize> = (0..n1).collect();
        let mut par = vec![0usize; n1];
        let mut contractions: Vec<Contraction> = Vec::new();
        loop {
            best_parents(n1, &s, &alive, &mut par);
            let Some(cycle) = find_cycle(n1, &alive, &par) else {
                break;
            };
            let c = cycle[0];
            let in_cycle = |v: usize| cycle.contains(&v);
            let mut member = vec![usize::MAX; n1];
            for (x, &r) in rep.iter().enumerate() {
                if in_cycle(r) {
                    member[x] = r;
                }
            }
            let cycle_arcs = cycle
                .iter()
                .map(|&v| {
                    let (h, d) = orig[par[v] * n1 + v];
                    (v, (h as usize, d as usize))
                })
                .collect();
            for u in 0..n1 {
                if !alive[u] || in_cycle(u) {
                    continue;
                }
                // Entering the cycle.
                let mut best: Option<(f64, usize)> = None;
                for &v in &cycle {
                    let val = s[u * n1 + v] - s[par[v] * n1 + v];
                    if best.is_none_or(|(b, _)| val > b) {
                        best = Some((val, v));
                    }
                }
                if let Some((val, v)) = best {
                    s[u * n1 + c] = val;
                    orig[u * n1 + c] = orig[u * n1 + v];
                }
                // Leaving the cycle (no arc enters the root).
                if u != 0 {
                    let mut best: Option<(f64, usize)> = None;
                    for &v in &cycle {
                        let val = s[v * n1 + u];
                        if best.is_none_or(|(b, _)| val > b) {
                            best = Some((val, v));
                        }
                    }
                    if let Some((val, v)) = best {
                        s[c * n1 + u] = val;
                        orig[c * n1 + u] = orig[v * n1 + u];
                    }
                }
            }
            for &v in &cycle[1..] {
                alive[v] = false;
            }
            for r in rep.iter_mut() {
                if in_cycle(*r) {
                    *r = c;
                }
            }
            contractions.push(Contraction {
                rep: c,
                member,
                cycle_arcs,
            });
        }
        // The arcs of the contracted graph, as original arcs.
        let mut heads = vec![usize::MAX; n1];
        for v in 1..n1 {
            if alive[v] {
                let (h, d) = orig[par[v] * n1 + v];
                heads[d as usize] = h as usize;
            }
        }
        // Expand: the arc entering each cycle breaks the cycle arc of the member it enters.
        for k in contractions.iter().rev() {
            let entered = (1..n1)
                .find(|&d| {
                    heads[d] != usize::MAX
                        && k.member[d] != usize::MAX
                        && k.member[heads[d]] == usize::MAX
                })
                .map_or(k.rep, |d| k.member[d]);
            for &(v, (h, d)) in &k.cycle_arcs {
                if v != entered {
                    heads[d] = h;
                }
            }
        }
        heads[1..].to_vec()
    }
}
