//! The dual problem SMO solves (module docs of [`super`]) and its checks before any work.

use crate::data::MatrixRef;
use crate::error::{Error, Result};

/// The dual problem: variable `t` uses row `index[t]` of the kernel matrix, with sign
/// `y[t]`, linear term `p[t]` and upper bound `c[t]`.
#[derive(Debug, Clone)]
pub(crate) struct SmoProblem<'a> {
    /// The training kernel matrix (`n x n`, symmetric).
    pub kernel: MatrixRef<'a>,
    pub index: Vec<usize>,
    pub y: Vec<f64>,
    pub p: Vec<f64>,
    pub c: Vec<f64>,
    /// Starting point (feasible: inside the box and `y^T a = 0`), e.g. the solution at
    /// neighbouring kernel weights (the wrappers' warm start); zeros when `None`.
    pub start: Option<Vec<f64>>,
}

impl SmoProblem<'_> {
    pub(super) fn check(&self) -> Result<()> {
        let m = self.index.len();
        let n = self.kernel.rows();
        if self.kernel.cols() != n {
            return Err(Error::shape(
                "columns of the kernel matrix",
                n,
                self.kernel.cols(),
            ));
        }
        for (what, len) in [
            ("signs", self.y.len()),
            ("linear terms", self.p.len()),
            ("bounds", self.c.len()),
        ] {
            if len != m {
                return Err(Error::shape(
                    format!("{what} of the dual (one per variable)"),
                    m,
                    len,
                ));
            }
        }
        if let Some(&i) = self.index.iter().find(|&&i| i >= n) {
            return Err(Error::shape("kernel rows (an index of the dual)", n, i + 1));
        }
        if let Some(&c) = self.c.iter().find(|c| !(c.is_finite() && **c > 0.0)) {
            return Err(Error::param("C", c, "a positive number"));
        }
        if self.y.iter().any(|&y| y != 1.0 && y != -1.0) {
            return Err(Error::data("the signs of the dual must be +1 or -1"));
        }
        if self.kernel.data().iter().any(|v| !v.is_finite()) {
            return Err(Error::data("the kernel matrix has a non-finite value"));
        }
        if let Some(a) = &self.start {
            if a.len() != m {
                return Err(Error::shape("starting point of the dual", m, a.len()));
            }
            let sum: f64 = a.iter().zip(&self.y).map(|(a, y)| a * y).sum();
            let scale: f64 = self.c.iter().fold(0.0, |s, c| s + c);
            if a.iter().zip(&self.c).any(|(a, c)| !(*a >= 0.0 && a <= c))
                || sum.abs() > 1e-9 * scale
            {
                return Err(Error::data(
                    "the starting point of the dual is not feasible (0 <= a <= C, y^T a = 0)",
                ));
            }
        }
        Ok(())
    }
}
