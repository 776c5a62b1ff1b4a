//! The solver's working state in libsvm's layout: every per-variable array is kept in one
//! permuted order whose first `active` positions are the active set (shrinking moves the
//! others behind it, [`super::shrink`]), so the loops of an iteration run over contiguous
//! slices. `col` maps a position to its kernel row and column; `var` to the problem's
//! variable.
//!
//! The gradient `G = Q a + p` is kept as `v_t = -y_t G_t`, the quantity the working-set
//! rule compares (`I_up` wants it large, `I_low` small): with `Q_ts = y_t y_s K_ts` its
//! update `v_t -= y_i da_i K_ti + y_j da_j K_tj` needs no sign of `t`.

use super::problem::SmoProblem;
use crate::data::MatrixRef;

/// `a_ij` below this is replaced by it (a non-positive-definite pair; libsvm's TAU).
const TAU: f64 = 1e-12;

/// Where a variable sits in its box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bound {
    Lower,
    Upper,
    Free,
}

fn bound(a: f64, c: f64) -> Bound {
    if a >= c {
        Bound::Upper
    } else if a <= 0.0 {
        Bound::Lower
    } else {
        Bound::Free
    }
}

/// A working pair and the maximal violation `m(a) - M(a)` over the active set.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pick {
    /// `None` when no pair can decrease the objective.
    pub pair: Option<(usize, usize)>,
    pub violation: f64,
}

/// The running argmax of `v` over `I_up` (the first variable of the pair; the last of equal
/// values, as libsvm), without a branch on membership.
struct First {
    t: usize,
    v: f64,
}

impl First {
    fn new() -> Self {
        // f64::MIN, not -inf: a position outside I_up offers -inf and never wins.
        First {
            t: usize::MAX,
            v: f64::MIN,
        }
    }

    #[inline]
    fn offer(&mut self, t: usize, up: bool, v: f64) {
        let v = if up { v } else { f64::NEG_INFINITY };
        if v >= self.v {
            self.t = t;
            self.v = v;
        }
    }

    /// The larger of two running maxima over disjoint positions (on a tie, the later).
    fn merge(&self, other: &First) -> First {
        let take = other.t != usize::MAX
            && (self.t == usize::MAX
                || other.v > self.v
                || (other.v == self.v && other.t > self.t));
        let best = if take { other } else { self };
        First {
            t: best.t,
            v: best.v,
        }
    }

    /// The position and its value; `(usize::MAX, -inf)` when `I_up` is empty.
    fn get(&self) -> (usize, f64) {
        if self.t == usize::MAX {
            (usize::MAX, f64::NEG_INFINITY)
        } else {
            (self.t, self.v)
        }
    }
}

pub(super) struct State<'a> {
    pub kernel: MatrixRef<'a>,
    pub col: Vec<usize>,
    pub var: Vec<usize>,
    pub y: Vec<f64>,
    pub p: Vec<f64>,
    pub c: Vec<f64>,
    /// `Q_tt`.
    pub qd: Vec<f64>,
    pub a: Vec<f64>,
    pub status: Vec<Bound>,
    /// May position `t` move up (`I_up`: `y a` can grow)?
    pub up: Vec<bool>,
    /// May position `t` move down (`I_low`)?
    pub low: Vec<bool>,
    /// `-y_t G_t`, kept up to date on the active set.
    pub v: Vec<f64>,
    /// `-y_t` times libsvm's G_bar, `sum_{s at its upper bound} C_s Q_ts`, for every `t`:
    /// with the free variables it rebuilds the gradient of the positions shrinking left
    /// behind.
    pub vbar: Vec<f64>,
    pub active: usize,
    /// Kernel row of the first variable of the pair, over the active positions.
    ki: Vec<f64>,
    /// The first variable of the next selection and its `v`, found by [`State::step`];
    /// `None` once the active set changes.
    pub first: Option<(usize, f64)>,
}

impl<'a> State<'a> {
    /// The state at `start` (zeros when `None`), identity order, everything active.
    pub(crate) fn new(problem: &SmoProblem<'a>) -> Self {
        let m = problem.index.len();
        let kernel = problem.kernel;
        let col = problem.index.clone();
        let y = problem.y.clone();
        let a = problem.start.clone().unwrap_or_else(|| vec![0.0; m]);
        let mut v: Vec<f64> = y.iter().zip(&problem.p).map(|(y, p)| -y * p).collect();
        let mut vbar = vec![0.0; m];
        for s in 0..m {
            if a[s] <= 0.0 {
                continue;
            }
            let row = kernel.row(col[s]);
            let ya = y[s] * a[s];
            for (vt, &ct) in v.iter_mut().zip(&col) {
                *vt -= ya * row[ct];
            }
            if a[s] >= problem.c[s] {
                let yc = y[s] * problem.c[s];
                for (vt, &ct) in vbar.iter_mut().zip(&col) {
                    *vt -= yc * row[ct];
                }
            }
        }
        let mut st = State {
            kernel,
            qd: col.iter().map(|&r| kernel.get(r, r)).collect(),
            var: (0..m).collect(),
            col,
            y,
            p: problem.p.clone(),
            c: problem.c.clone(),
            a,
            status: vec![Bound::Lower; m],
            up: vec![false; m],
            low: vec![false; m],
            v,
            vbar,
            active: m,
            ki: vec![0.0; m],
            first: None,
        };
        for t in 0..m {
            st.set_status(t);
        }
        st
    }

    /// Fan, Chen & Lin's second-order working-set selection (WSS 2) over the active set;
    /// leaves the first variable's kernel row in `ki` for [`State::step`].
    pub(crate) fn select(&mut self) -> Pick {
        let n = self.active;
        // i: the most violating variable of I_up (largest v), found by the last step's
        // gradient update unless the active set changed since.
        let (i, gmax) = match self.first.take() {
            Some(first) => first,
            None => {
                let mut best = First::new();
                for (t, (&up, &v)) in self.up[..n].iter().zip(&self.v[..n]).enumerate() {
                    best.offer(t, up, v);
                }
                best.get()
            }
        };
        // j: among I_low, the largest decrease of the objective, (gmax - v)^2 / quad (the
        // last of equal values, as libsvm); gmin the smallest v of I_low. The division is
        // done only for a position whose product test says it may beat the best so far
        // (`floor` is the best less a margin for rounding), which is rare.
        let mut gmin = f64::INFINITY;
        let mut j = usize::MAX;
        if i != usize::MAX {
            let row = self.kernel.row(self.col[i]);
            let qdi = self.qd[i];
            let (mut best, mut floor) = (0.0, 0.0);
            // Local slices of one length: no reload of the fields, no bounds checks.
            let (ki, col, low) = (&mut self.ki[..n], &self.col[..n], &self.low[..n]);
            let (v, qd) = (&self.v[..n], &self.qd[..n]);
            for t in 0..n {
                let k = row[col[t]];
                ki[t] = k;
                if !low[t] {
                    continue;
                }
                let vt = v[t];
                gmin = if vt < gmin { vt } else { gmin };
                let b = gmax - vt;
                if b > 0.0 {
                    let quad = qdi + qd[t] - 2.0 * k;
                    let quad = if quad > 0.0 { quad } else { TAU };
                    let b2 = b * b;
                    if b2 >= floor * quad {
                        let score = b2 / quad;
                        if score >= best {
                            best = score;
                            floor = score * (1.0 - 1e-12);
                            j = t;
                        }
                    }
                }
            }
        } else {
            for (&low, &v) in self.low[..n].iter().zip(&self.v[..n]) {
                if low {
                    gmin = gmin.min(v);
                }
            }
        }
        Pick {
            pair: (j != usize::MAX).then_some((i, j)),
            violation: (gmax - gmin).max(0.0),
        }
    }

    /// Solves the pair's sub-problem, clips it to the box and updates the gradient over the
    /// active set and `vbar`; `i` must be the pair [`State::select`] just returned.
    pub(crate) fn step(&mut self, i: usize, j: usize) {
        let (old_i, old_j) = (self.a[i], self.a[j]);
        let (ci, cj) = (self.c[i], self.c[j]);
        let quad = (self.qd[i] + self.qd[j] - 2.0 * self.ki[j]).max(TAU);
        // The pair's gradients G = -y v.
        let (gi, gj) = (-self.y[i] * self.v[i], -self.y[j] * self.v[j]);
        let a = &mut self.a;
        if self.y[i] != self.y[j] {
            let delta = (-gi - gj) / quad;
            let diff = a[i] - a[j];
            a[i] += delta;
            a[j] += delta;
            if diff > 0.0 {
                if a[j] < 0.0 {
                    a[j] = 0.0;
                    a[i] = diff;
                }
            } else if a[i] < 0.0 {
                a[i] = 0.0;
                a[j] = -diff;
            }
            if diff > ci - cj {
                if a[i] > ci {
                    a[i] = ci;
                    a[j] = ci - diff;
                }
            } else if a[j] > cj {
                a[j] = cj;
                a[i] = cj + diff;
            }
        } else {
            let delta = (gi - gj) / quad;
            let sum = a[i] + a[j];
            a[i] -= delta;
            a[j] += delta;
            if sum > ci {
                if a[i] > ci {
                    a[i] = ci;
                    a[j] = sum - ci;
                }
            } else if a[j] < 0.0 {
                a[j] = 0.0;
                a[i] = sum;
            }
            if sum > cj {
                if a[j] > cj {
                    a[j] = cj;
                    a[i] = sum - cj;
                }
            } else if a[i] < 0.0 {
                a[i] = 0.0;
                a[j] = sum;
            }
        }
        for t in [i, j] {
            let was_upper = self.status[t] == Bound::Upper;
            self.set_status(t);
            let is_upper = self.status[t] == Bound::Upper;
            if was_upper != is_upper {
                let yc = self.y[t] * if is_upper { self.c[t] } else { -self.c[t] };
                let row = self.kernel.row(self.col[t]);
                for (vb, &c) in self.vbar.iter_mut().zip(&self.col) {
                    *vb -= yc * row[c];
                }
            }
        }
        // v_t -= y_i da_i K_ti + y_j da_j K_tj, and the next selection's first variable on
        // the way.
        let si = self.y[i] * (self.a[i] - old_i);
        let sj = self.y[j] * (self.a[j] - old_j);
        let n = self.active;
        let row_j = self.kernel.row(self.col[j]);
        // Two running maxima (even and odd positions) so that consecutive comparisons do
        // not wait on each other.
        let mut best = [First::new(), First::new()];
        let (v, ki) = (&mut self.v[..n], &self.ki[..n]);
        let (col, up) = (&self.col[..n], &self.up[..n]);
        let mut t = 0;
        while t + 1 < n {
            for (l, lane) in best.iter_mut().enumerate() {
                let s = t + l;
                let vs = v[s] - (si * ki[s] + sj * row_j[col[s]]);
                v[s] = vs;
                lane.offer(s, up[s], vs);
            }
            t += 2;
        }
        if t < n {
            let vt = v[t] - (si * ki[t] + sj * row_j[col[t]]);
            v[t] = vt;
            best[0].offer(t, up[t], vt);
        }
        self.first = Some(best[0].merge(&best[1]).get());
    }

    /// Sets the bound status of position `t` from its value, and `up` / `low`.
    pub(crate) fn set_status(&mut self, t: usize) {
        let s = bound(self.a[t], self.c[t]);
        self.status[t] = s;
        let positive = self.y[t] > 0.0;
        self.up[t] = if positive {
            s != Bound::Upper
        } else {
            s != Bound::Lower
        };
        self.low[t] = if positive {
            s != Bound::Lower
        } else {
            s != Bound::Upper
        };
    }

    /// The dual objective `1/2 a^T Q a + p^T a = 1/2 sum a_t (G_t + p_t)`; needs the whole
    /// gradient.
    pub(super) fn objective(&self) -> f64 {
        let mut sum = 0.0;
        for t in 0..self.a.len() {
            sum += self.a[t] * (self.p[t] - self.y[t] * self.v[t]);
        }
        0.5 * sum
    }

    /// The offset over the whole set (needs the whole gradient): the mean of `y_t G_t = -v_t`
    /// over free variables, else the middle of the bounds the variables at their bounds
    /// give (libsvm's rule).
    pub(crate) fn rho(&self) -> f64 {
        let (mut ub, mut lb) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut free, mut sum) = (0usize, 0.0);
        for ((&y, &v), &s) in self.y.iter().zip(&self.v).zip(&self.status) {
            let yg = -v;
            match s {
                Bound::Upper if y < 0.0 => ub = ub.min(yg),
                Bound::Upper => lb = lb.max(yg),
                Bound::Lower if y > 0.0 => ub = ub.min(yg),
                Bound::Lower => lb = lb.max(yg),
                Bound::Free => {
                    free += 1;
                    sum += yg;
                }
            }
        }
        if free > 0 {
            sum / free as f64
        } else {
            (ub + lb) / 2.0
        }
    }

    /// The gradient `G = Q a + p` in the problem's order.
    #[cfg(test)]
    pub(crate) fn gradient(&self) -> Vec<f64> {
        let mut g = vec![0.0; self.a.len()];
        for (t, &var) in self.var.iter().enumerate() {
            g[var] = -self.y[t] * self.v[t];
        }
        g
    }

    /// The variables in the problem's order.
    pub(crate) fn alpha(&self) -> Vec<f64> {
        let mut alpha = vec![0.0; self.a.len()];
        for (&v, &a) in self.var.iter().zip(&self.a) {
            alpha[v] = a;
        }
        alpha
    }
}
