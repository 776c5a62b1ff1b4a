//! An exact SVM dual solver by sequential minimal optimization (SMO), for the wrapper MKL
//! baselines (SimpleMKL, Gauss-Seidel; docs/formulas.md "Wrapper MKL") on vector tasks.
//!
//! The problem is libsvm's general form (Chang & Lin 2011, eq. (11)):
//!
//! ```text
//! min_a  1/2 a^T Q a + p^T a   s.t.  y^T a = 0,  0 <= a_t <= C_t,   Q_ts = y_t y_s K(t, s)
//! ```
//!
//! with `y_t = +-1`. C-SVC: one variable per row, `p = -1`. epsilon-SVR: two variables per
//! row (`a` and `a*`, `y = +1` and `-1`), `p = eps -+ z`. The working pair is chosen by the
//! second-order rule of Fan, Chen & Lin (2005, WSS 2); the pair's sub-problem is solved in
//! closed form and clipped to the box; the run stops when the maximal violation
//! `m(a) - M(a)` falls to `tol` (libsvm's stopping rule) or at an iteration cap, which is a
//! status ([`RunStatus::IterationLimit`](crate::run::RunStatus)), not an error.
//!
//! Shrinking (libsvm's, Chang & Lin 2011, §5.1; on unless
//! [`SmoParams::shrinking`] is false): every `min(m, 1000)` iterations the variables at a
//! bound whose gradient pushes them further out than the current maximal violation leave
//! the active set, and the iterations select and update over the active set only. The
//! gradient of the others is rebuilt from `G_bar` (the part due to the variables at their
//! upper bound, kept for every variable) and the free variables: once when the violation
//! first falls to `10 tol`, and on the whole set before convergence is declared; the
//! offset, the objective and the reported violation are those of the whole set.
//!
//! Kernels are given as dense matrices (train by train); the decision value of a point with
//! kernel row `k` is `sum_t y_t a_t k(t) - rho`. [`svm`] builds binary C-SVC, one-vs-rest
//! multiclass and epsilon-SVR on it and reports each solve's duality gap (primal minus dual
//! objective at the returned point).

mod engine;
mod problem;
mod shrink;
mod state;
pub(crate) mod svm;
#[cfg(test)]
mod tests;

pub use engine::SmoParams;
#[cfg(test)]
pub(crate) use engine::{smo, SmoSolution};
#[cfg(test)]
pub(crate) use problem::SmoProblem;
pub use svm::{svc, svr};
pub(crate) use svm::{svc_from, SvmFit};
