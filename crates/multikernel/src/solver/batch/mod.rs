//! Batch references for the structured learners over explicit features: the full regularized
//! objective of martins2011 eq. 2 with the l2 regularizer,
//!
//! ```text
//! F(w) = lambda/2 ||w||^2 + (1/N) sum_i L(w; x_i, y_i),      lambda = 1 / (C N),
//! ```
//!
//! with `L` the CRF loss (eq. 3) or the structured hinge (eq. 4) ([`mod@objective`]), and its
//! minimization by L-BFGS for the CRF ([`lbfgs`], iterations in [`quasi_newton`]). Multiplied by `1/lambda = C N` this is
//! `1/2 ||w||^2 + C sum_i L_i`, the objective of the cutting plane at the same `C` and, divided
//! by `C`, CRFsuite's `c2 ||w||^2 + sum_i L_i` with `c2 = 1 / (2 C)`.
//!
//! These give SPOM (Alg. 1 / 3) the optimum it should reach at the same `C`.

pub(crate) mod lbfgs;
pub mod objective;
pub(crate) mod quasi_newton;
mod vector;

#[cfg(test)]
pub(crate) use lbfgs::fit_lbfgs;
pub(crate) use lbfgs::minimize_from_zero;
pub use objective::objective;
#[cfg(test)]
pub(crate) use objective::objective_grad;
pub use quasi_newton::LbfgsParams;
pub(crate) use quasi_newton::Objective;

#[cfg(test)]
mod tests;
