//! `log Z` and the arc marginals of every tree by Gaussian elimination without subtraction:
//! what [`super::marginals::matrix_tree`] falls back to when its LU factorization loses the
//! answer to cancellation, exact to rounding at any score magnitude.
//!
//! **Why the LU cancels.** With `w(h, m) = exp a(h, m)` the Laplacian of the matrix-tree
//! theorem is `L = diag(t) - W` (`W[h, m] = w(h, m)` over tokens, `t_m` the total weight of
//! the arcs into `m`, the root's included). When a cycle of arcs (two tokens heading each
//! other, say) weighs far more than every tree, `det L` is a small difference of large
//! products: on the Turkish Web Treebank the best arcs into the tokens outweigh the best
//! tree by up to about 1600 nats after a few epochs of CRF training, and no precision of
//! floating point keeps that.
//!
//! **Elimination without subtraction** (Grassmann, Taksar & Heyman 1985, the GTH algorithm;
//! entrywise accurate by O'Cinneide 1993). The column sums of `L` are the root's arcs
//! `e_m = w(0, m) >= 0`. Eliminating token `k` (its Schur complement) keeps that form, and
//! every new quantity is a sum of nonnegative terms:
//!
//! ```text
//! d_k   = e_k + sum_{i != k} W[i, k]           (the pivot, never read off the diagonal)
//! W'[i, j] = W[i, j] + W[i, k] W[k, j] / d_k   (paths i -> k -> j)
//! e'_j  = e_j + e_k W[k, j] / d_k              (paths root -> k -> j)
//! ```
//!
//! and `Z = det L = prod_k d_k`. Everything is kept as logarithms (`log-sum-exp` for sums),
//! so no weight over- or underflows either.
//!
//! **Marginals as escape probabilities.** Read `W[i, k] / d_k` as the probability that a walk
//! at `k` steps to its head `i` (to the root with `e_k / d_k`). Koo et al.'s marginal
//! `mu(h, m) = w(h, m) ([L^-1]_{mm} - [L^-1]_{mh})` is the same difference of large numbers;
//! with `[L^-1]_{mh} / [L^-1]_{mm}` the probability that the walk from `h` ever reaches `m`,
//! it equals
//!
//! ```text
//! mu(h, m) = w(h, m) x_h / (e_m + sum_i w(i, m) x_i),   mu(0, m) = e_m / (same),
//! ```
//!
//! with `x_i` the probability that the walk from `i` reaches the root without visiting `m`
//! (a tree's path from `h` to the root must avoid `m` for `h -> m` to close no cycle). Those
//! are again sums of nonnegative terms: eliminating every token but `m` leaves the walk's
//! probabilities among the rest unchanged (the censored chain), and `x` of an eliminated
//! token is `e_k / d_k + sum_i W[i, k] / d_k x_i` over the tokens left at its elimination.
//! Divide and conquer gives every `m` its `x` in `O(n^3)`: eliminate one half, recurse into
//! the other (each of its tokens the `m` in turn), carry `x` back over the eliminated half,
//! and the same with the halves swapped.
//!
//! **One root child** (Koo et al. Sec. 3.3): the root's arcs weigh `eps w(0, m)` and the
//! answer is the coefficient of `eps^1` in `Z(eps) = sum_k eps^k Z_k` (`Z_k`: trees with `k`
//! root children), the marginals the limit `eps -> 0`. Every quantity is kept as its leading
//! term `c eps^order` ([`Term`]): with sums of nonnegative terms the leading terms combine
//! exactly (a sum keeps the terms of the lowest order). A token whose every head is
//! eliminated must be the root's child: its pivot is its root term, of order 1, and the
//! tokens it heads then reach the root at order 0.

/// `log(exp a + exp b)`.
#[inline]
fn log_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        hi
    } else {
        hi + (lo - hi).exp().ln_1p()
    }
}

/// The leading term `exp(log) eps^order` of a nonnegative quantity polynomial in `eps`;
/// zero when `log` is `-inf`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Term {
    order: i32,
    log: f64,
}

impl Term {
    const ZERO: Term = Term {
        order: 0,
        log: f64::NEG_INFINITY,
    };

    fn of(log: f64) -> Term {
        Term { order: 0, log }
    }

    fn is_zero(self) -> bool {
        self.log == f64::NEG_INFINITY
    }

    fn add(self, o: Term) -> Term {
        if self.is_zero() {
            return o;
        }
        if o.is_zero() {
            return self;
        }
        match self.order.cmp(&o.order) {
            std::cmp::Ordering::Less => self,
            std::cmp::Ordering::Greater => o,
            std::cmp::Ordering::Equal => Term {
                order: self.order,
                log: log_add(self.log, o.log),
            },
        }
    }

    fn mul(self, o: Term) -> Term {
        if self.is_zero() || o.is_zero() {
            return Term::ZERO;
        }
        Term {
            order: self.order + o.order,
            log: self.log + o.log,
        }
    }

    /// `self / d` (`d` nonzero).
    fn div(self, d: Term) -> Term {
        if self.is_zero() {
            return Term::ZERO;
        }
        Term {
            order: self.order - d.order,
            log: self.log - d.log,
        }
    }

    /// The value of `self / d` at `eps -> 0` (0 when `self` is of higher order).
    fn ratio(self, d: Term) -> f64 {
        if self.is_zero() || self.order > d.order {
            0.0
        } else {
            (self.log - d.log).exp()
        }
    }
}

/// Tokens with log arc weights between them (`w[i * s + j]`: `i` heads `j`) and from the
/// root (`e[j]`).
#[derive(Debug, Clone)]
struct Graph {
    s: usize,
    w: Vec<f64>,
    e: Vec<Term>,
}

/// The elimination of one token: its pivot, its root term and its heads at that time.
struct Step {
    node: usize,
    pivot: Term,
    root: Term,
    heads: Vec<(usize, f64)>,
}

impl Graph {
    /// Eliminates `nodes` in order: the graph over the other tokens (in their order), the
    /// steps, and the product of the pivots. `None` when a token has no head left (no tree).
    fn eliminate(&self, nodes: std::ops::Range<usize>) -> Option<(Graph, Vec<Step>, Term)> {
        let s = self.s;
        let mut w = self.w.clone();
        let mut e = self.e.clone();
        let mut alive = vec![true; s];
        let mut steps = Vec::with_capacity(nodes.len());
        let mut product = Term::of(0.0);
        for k in nodes.clone() {
            alive[k] = false;
            let heads: Vec<(usize, f64)> = (0..s)
                .filter(|&i| alive[i] && w[i * s + k] > f64::NEG_INFINITY)
                .map(|i| (i, w[i * s + k]))
                .collect();
            let tokens = heads
                .iter()
                .fold(f64::NEG_INFINITY, |acc, &(_, v)| log_add(acc, v));
            let pivot = Term::of(tokens).add(e[k]);
            if pivot.is_zero() {
                return None;
            }
            product = product.mul(pivot);
            let root = e[k];
            for j in (0..s).filter(|&j| alive[j]) {
                let r = w[k * s + j];
                if r == f64::NEG_INFINITY {
                    continue;
                }
                e[j] = e[j].add(root.mul(Term::of(r)).div(pivot));
                // With heads among the tokens the pivot is of order 0.
                let via = r - pivot.log;
                for &(i, wik) in heads.iter().filter(|&&(i, _)| i != j) {
                    w[i * s + j] = log_add(w[i * s + j], wik + via);
                }
            }
            steps.push(Step {
                node: k,
                pivot,
                root,
                heads,
            });
        }
        let rest: Vec<usize> = (0..s).filter(|&i| alive[i]).collect();
        let r = rest.len();
        let reduced = Graph {
            s: r,
            w: (0..r * r)
                .map(|ij| w[rest[ij / r] * s + rest[ij % r]])
                .collect(),
            e: rest.iter().map(|&j| e[j]).collect(),
        };
        Some((reduced, steps, product))
    }

    /// `Z` (as a [`Term`]) and, for every token `m`, the escape probabilities `x` of every
    /// token (`x[m][i]`, `x[m][m]` zero).
    fn solve(&self) -> Option<(Term, Vec<Vec<Term>>)> {
        let s = self.s;
        if s == 1 {
            return (!self.e[0].is_zero()).then(|| (self.e[0], vec![vec![Term::ZERO]]));
        }
        let half = s / 2;
        let mut x = vec![Vec::new(); s];
        let mut z = Term::ZERO;
        for (first, eliminated, kept) in [(true, 0..half, half..s), (false, half..s, 0..half)] {
            let (reduced, steps, product) = self.eliminate(eliminated)?;
            let (z_rest, x_rest) = reduced.solve()?;
            if first {
                z = product.mul(z_rest);
            }
            for (local, m) in kept.clone().enumerate() {
                let mut xm = vec![Term::ZERO; s];
                for (r, i) in kept.clone().enumerate() {
                    xm[i] = x_rest[local][r];
                }
                for step in steps.iter().rev() {
                    let mut v = step.root.div(step.pivot);
                    for &(i, wik) in &step.heads {
                        v = v.add(Term::of(wik).div(step.pivot).mul(xm[i]));
                    }
                    xm[step.node] = v;
                }
                x[m] = xm;
            }
        }
        Some((z, x))
    }
}

/// `log Z` and the arc marginals (layout of `arc`: row = head, column = modifier,
/// `(n + 1)^2`, scores already free of NaN and `+inf`) over every tree rooted at 0, with one
/// root child when `single_root`; `None` when there is no such tree.
pub(super) fn exact(n: usize, arc: &[f64], single_root: bool) -> Option<(f64, Vec<f64>)> {
    let n1 = n + 1;
    let root_order = i32::from(single_root);
    let graph = Graph {
        s: n,
        w: (0..n * n)
            .map(|ij| {
                let (h, m) = (ij / n + 1, ij % n + 1);
                if h == m {
                    f64::NEG_INFINITY
                } else {
                    arc[h * n1 + m]
                }
            })
            .collect(),
        e: (1..n1)
            .map(|m| Term {
                order: root_order,
                log: arc[m],
            })
            .collect(),
    };
    let (z, x) = graph.solve()?;
    if z.order != root_order {
        // One root child asked for, and every tree has several.
        return None;
    }
    let mut expected = vec![0.0; n1 * n1];
    for m in 1..n1 {
        let xm = &x[m - 1];
        let into = |h: usize| Term::of(arc[h * n1 + m]).mul(xm[h - 1]);
        let denominator = (1..n1)
            .filter(|&h| h != m)
            .fold(graph.e[m - 1], |acc, h| acc.add(into(h)));
        expected[m] = graph.e[m - 1].ratio(denominator);
        for h in (1..n1).filter(|&h| h != m) {
            expected[h * n1 + m] = into(h).ratio(denominator);
        }
    }
    Some((z.log, expected))
}
