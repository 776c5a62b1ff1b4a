//! Shrinking (Joachims 1999; libsvm's rule, Chang & Lin 2011, §5.1): a variable at a bound
//! whose gradient says it would move further out of the box than the current maximal
//! violation leaves the active set; the iterations then select and update over the active
//! set only. The gradient of the variables left behind is rebuilt from `gbar` and the free
//! variables: once when the violation first falls to `10 tol` (libsvm's `unshrink`), and
//! before convergence is declared, which is checked on the whole set.

use super::state::{Bound, State};

impl State<'_> {
    /// Would position `t` leave the active set? `gmax1` is `max_{I_up} v`, `gmax2`
    /// `max_{I_low} -v`: a variable at a bound leaves when it violates the optimality
    /// conditions less than any pair does (it is pushed against its bound).
    fn be_shrunk(&self, t: usize, gmax1: f64, gmax2: f64) -> bool {
        let v = self.v[t];
        (!self.up[t] && v > gmax1) || (!self.low[t] && -v > gmax2)
    }

    /// libsvm's `do_shrinking`; `unshrunk` is set (and the whole gradient rebuilt) the first
    /// time the violation over the active set is at most `10 tol`.
    pub(crate) fn shrink(&mut self, tol: f64, unshrunk: &mut bool) {
        self.first = None;
        let (mut gmax1, mut gmax2) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for t in 0..self.active {
            let v = self.v[t];
            if self.up[t] {
                gmax1 = gmax1.max(v);
            }
            if self.low[t] {
                gmax2 = gmax2.max(-v);
            }
        }
        if !*unshrunk && gmax1 + gmax2 <= 10.0 * tol {
            *unshrunk = true;
            self.reconstruct();
        }
        let mut t = 0;
        while t < self.active {
            if self.be_shrunk(t, gmax1, gmax2) {
                self.active -= 1;
                while self.active > t {
                    if !self.be_shrunk(self.active, gmax1, gmax2) {
                        self.swap(t, self.active);
                        break;
                    }
                    self.active -= 1;
                }
            }
            t += 1;
        }
    }

    /// Rebuilds the gradient of the inactive positions (`G = G_bar + p + the free
    /// variables' part`, as `v = -y G`) and makes every position active again.
    pub(crate) fn reconstruct(&mut self) {
        let (n, m) = (self.active, self.a.len());
        if n == m {
            return;
        }
        self.first = None;
        for t in n..m {
            self.v[t] = self.vbar[t] - self.y[t] * self.p[t];
        }
        for s in 0..n {
            if self.status[s] != Bound::Free {
                continue;
            }
            let ya = self.y[s] * self.a[s];
            let row = self.kernel.row(self.col[s]);
            for (v, &c) in self.v[n..].iter_mut().zip(&self.col[n..]) {
                *v -= ya * row[c];
            }
        }
        self.active = m;
    }

    /// Exchanges two positions in every per-variable array.
    fn swap(&mut self, s: usize, t: usize) {
        self.col.swap(s, t);
        self.var.swap(s, t);
        self.y.swap(s, t);
        self.p.swap(s, t);
        self.c.swap(s, t);
        self.qd.swap(s, t);
        self.a.swap(s, t);
        self.status.swap(s, t);
        self.up.swap(s, t);
        self.low.swap(s, t);
        self.v.swap(s, t);
        self.vbar.swap(s, t);
    }
}
