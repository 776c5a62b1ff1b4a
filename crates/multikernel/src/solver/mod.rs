//! Learners: one folder per family, each with its parameters, its engine and its trained
//! model.
//!
//! - [`online`]: online proximal MKL (Martins et al. 2011, Alg. 1-3);
//! - [`gomp`]: MKL-GOMP (Sindhwani & Lozano 2012, Sec. 3);
//! - [`lp_mkl`]: lp-norm MKL for the squared loss (Kloft et al. 2011);
//! - [`sequence`]: SPOM and the structured wrappers on sequences, and their model;
//! - [`mirror_descent`]: randomized mirror descent and UCD over polynomial kernels
//!   (Afkanpour et al. 2013, Alg. 2-3).
//!
//! [`ridge`] holds the kernel ridge solves and raw-row predictions MKL-GOMP and lp-MKL share.

pub mod batch;
mod check;
pub mod cutting_plane;
pub mod gomp;
pub mod lp_mkl;
pub mod mirror_descent;
pub mod online;
pub mod ridge;
pub mod sequence;
pub mod smo;
pub mod tagging;
pub mod wrapper;
