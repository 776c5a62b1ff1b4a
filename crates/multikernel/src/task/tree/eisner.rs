//! Eisner's algorithm (Eisner 1996; McDonald et al. 2005 Sec. 3): the best *projective*
//! tree of an arc-score matrix by dynamic programming over spans, `O(n^3)` time and `O(n^2)`
//! memory.
//!
//! Spans `[s, t]` are *complete* (a head at one end with all its dependents inside) or
//! *incomplete* (an arc between the two ends, the inside still open), each pointing right
//! (head `s`) or left (head `t`):
//!
//! ```text
//! I_right[s,t] = max_{s<=q<t} C_right[s,q] + C_left[q+1,t] + a(s,t)
//! I_left[s,t]  = max_{s<=q<t} C_right[s,q] + C_left[q+1,t] + a(t,s)
//! C_left[s,t]  = max_{s<=q<t} C_left[s,q] + I_left[q,t]
//! C_right[s,t] = max_{s<q<=t} I_right[s,q] + C_right[q,t]
//! ```
//!
//! With several root children allowed the answer is `C_right[0, n]` (no span may point left
//! into the root). With one root child (`single_root`) the spans cover tokens `1..=n` only
//! and the root picks its child: `max_r a(0,r) + C_left[1,r] + C_right[r,n]`.

use super::scores::sanitized;
use super::TreeDecoder;
use crate::task::structured::PartMarginals;

/// Longest sentence Eisner decodes: its eight `(n + 1)^2` tables then take 64 MB.
pub(crate) const EISNER_MAX_TOKENS: usize = 1000;

/// Projective decoding by Eisner's algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Eisner {
    /// Exactly one token attached to the root (as Universal Dependencies requires).
    pub single_root: bool,
}

impl Default for Eisner {
    fn default() -> Self {
        Eisner { single_root: true }
    }
}

/// The span tables, row-major `(n + 1) x (n + 1)`, with the split points.
struct Chart {
    n1: usize,
    c_left: Vec<f64>,
    c_right: Vec<f64>,
    i_left: Vec<f64>,
    i_right: Vec<f64>,
    bc_left: Vec<u32>,
    bc_right: Vec<u32>,
    bi: Vec<u32>,
}

/// Picks the first maximum of `(value, arg)` candidates (so ties and non-finite values
/// still give an argument).
#[inline]
fn argmax(cands: impl Iterator<Item = (f64, usize)>) -> (f64, usize) {
    let mut best = (f64::NEG_INFINITY, usize::MAX);
    for (v, q) in cands {
        if best.1 == usize::MAX || v > best.0 {
            best = (v, q);
        }
    }
    best
}

impl Chart {
    /// Fills the chart over positions `lo..=n` (`lo` = 0: the root takes part; 1: tokens only).
    fn fill(n: usize, arc: &[f64], lo: usize) -> Chart {
        let n1 = n + 1;
        let mut c = Chart {
            n1,
            c_left: vec![0.0; n1 * n1],
            c_right: vec![0.0; n1 * n1],
            i_left: vec![f64::NEG_INFINITY; n1 * n1],
            i_right: vec![f64::NEG_INFINITY; n1 * n1],
            bc_left: vec![0; n1 * n1],
            bc_right: vec![0; n1 * n1],
            bi: vec![0; n1 * n1],
        };
        for k in 1..=n - lo {
            for s in lo..=n - k {
                let t = s + k;
                let (v, q) =
                    argmax((s..t).map(|q| (c.c_right[s * n1 + q] + c.c_left[(q + 1) * n1 + t], q)));
                c.bi[s * n1 + t] = q as u32;
                c.i_right[s * n1 + t] = v + arc[s * n1 + t];
                // No arc points into the root.
                c.i_left[s * n1 + t] = if s == 0 {
                    f64::NEG_INFINITY
                } else {
                    v + arc[t * n1 + s]
                };
                let (v, q) =
                    argmax((s..t).map(|q| (c.c_left[s * n1 + q] + c.i_left[q * n1 + t], q)));
                c.c_left[s * n1 + t] = v;
                c.bc_left[s * n1 + t] = q as u32;
                let (v, q) =
                    argmax((s + 1..=t).map(|q| (c.i_right[s * n1 + q] + c.c_right[q * n1 + t], q)));
                c.c_right[s * n1 + t] = v;
                c.bc_right[s * n1 + t] = q as u32;
            }
        }
        c
    }

    /// Follows the split points from a complete span, writing heads (explicit stack).
    fn backtrack(&self, start: Span, heads: &mut [usize]) {
        let n1 = self.n1;
        let mut stack = vec![start];
        while let Some(span) = stack.pop() {
            match span {
                Span::CompleteLeft(s, t) if s < t => {
                    let q = self.bc_left[s * n1 + t] as usize;
                    stack.push(Span::CompleteLeft(s, q));
                    stack.push(Span::IncompleteLeft(q, t));
                }
                Span::CompleteRight(s, t) if s < t => {
                    let q = self.bc_right[s * n1 + t] as usize;
                    stack.push(Span::IncompleteRight(s, q));
                    stack.push(Span::CompleteRight(q, t));
                }
                Span::IncompleteLeft(s, t) => {
                    heads[s - 1] = t;
                    let q = self.bi[s * n1 + t] as usize;
                    stack.push(Span::CompleteRight(s, q));
                    stack.push(Span::CompleteLeft(q + 1, t));
                }
                Span::IncompleteRight(s, t) => {
                    heads[t - 1] = s;
                    let q = self.bi[s * n1 + t] as usize;
                    stack.push(Span::CompleteRight(s, q));
                    stack.push(Span::CompleteLeft(q + 1, t));
                }
                _ => {}
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Span {
    CompleteLeft(usize, usize),
    CompleteRight(usize, usize),
    IncompleteLeft(usize, usize),
    IncompleteRight(usize, usize),
}

impl TreeDecoder for Eisner {
    fn max_tokens(&self) -> usize {
        EISNER_MAX_TOKENS
    }

    /// `log Z` and the arc marginals over projective trees (inside-outside over Eisner's chart), with one root child when `single_root`
    /// ([`super::marginals::inside_outside`]).
    fn marginals(&self, n: usize, arc: &[f64]) -> Option<PartMarginals> {
        super::marginals::inside_outside(n, arc, self.single_root)
    }

    fn decode(&self, n: usize, arc: &[f64]) -> Vec<usize> {
        if n == 0 {
            return Vec::new();
        }
        let arc = sanitized(n, arc);
        let mut heads = vec![0; n];
        if self.single_root {
            let chart = Chart::fill(n, &arc, 1);
            let n1 = n + 1;
            let (_, r) = argmax(
                (1..=n).map(|r| (arc[r] + chart.c_left[n1 + r] + chart.c_right[r * n1 + n], r)),
            );
            heads[r - 1] = 0;
            chart.backtrack(Span::CompleteLeft(1, r), &mut heads);
            chart.backtrack(Span::CompleteRight(r, n), &mut heads);
        } else {
            let chart = Chart::fill(n, &arc, 0);
            chart.backtrack(Span::CompleteRight(0, n), &mut heads);
        }
        heads
    }
}
