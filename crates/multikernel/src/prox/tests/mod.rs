//! Tests of the proximity operators against brute-force minimization and the optimality
//! (subgradient) conditions, and of [`super::RegSpec`].

mod brute;
mod kkt;
mod ops;
mod regs;
mod spec;
