//! Regularizers and their proximity operators (martins2011 Sec. 3.2; martins2010 App. F).
//!
//! The objective of every learner is `lambda Omega(theta) + (1/N) sum_i L(theta; x_i, y_i)`
//! with `Omega` a block norm over groups `theta_m` (one group per kernel or feature template).
//! This module provides
//! - [`Groups`]: which coordinates form each group;
//! - the [`Regularizer`] trait (value and `prox_{tau Omega}(x) = argmin_z 1/2 ||z - x||^2 +
//!   tau Omega(z)`, eq. 10) and [`BlockRegularizer`] for functions of the block norms only
//!   (Prop. 1), which is all a kernelized group exposes;
//! - the concrete regularizers [`L2Sq`], [`L1`], [`GroupLasso`], [`SquaredL21`], [`L2q`],
//!   [`ElasticNet`], [`SparseGroupLasso`] and [`Composite`]; [`Regularizer::steps`] lists the
//!   J proximal steps Alg. 1 takes per round;
//! - the elementary operators: [`soft_threshold`] (eq. 11), [`prox_squared_l1`] (Alg. 2),
//!   [`prox_weighted_squared_l1`] (Alg. 4 of martins2010), [`prox_power`] (the scalar step of
//!   the l2,q^q prox), [`project_l2_ball`] / [`ball_factor`] (line 9 of Alg. 1);
//! - [`RegSpec`]: the regularizer as text (`--reg l21sq`, `l2q:q=4/3`, ...) and in model files,
//!   with the kernel weights it implies ([`RegSpec::kernel_weights`]).
//!
//! Block norms follow docs/formulas.md: `q` is the block norm (q = 1 sparse, q = 2 the plain sum of
//! kernels).

mod block;
mod composite;
mod groups;
mod ops;
mod regularizer;
mod spec;

#[cfg(test)]
mod tests;

pub use block::SquaredL21;
#[cfg(test)]
pub(crate) use block::{ElasticNet, GroupLasso, L2Sq, L2q};
#[cfg(test)]
pub(crate) use composite::{Composite, SparseGroupLasso, L1};
pub use groups::Groups;
#[cfg(test)]
pub(crate) use ops::{
    ball_factor, project_l2_ball, prox_power, prox_squared_l1, prox_weighted_squared_l1, soft,
    soft_threshold,
};
#[cfg(test)]
pub(crate) use regularizer::{block_factors, prox_blocks, ProxStep};
pub use regularizer::{BlockRegularizer, Regularizer};
pub use spec::RegSpec;
