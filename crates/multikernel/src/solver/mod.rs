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

pub(crate) mod batch;
mod check;
pub(crate) mod cutting_plane;
pub(crate) mod gomp;
pub(crate) mod lp_mkl;
pub(crate) mod mirror_descent;
pub(crate) mod online;
pub(crate) mod ridge;
pub(crate) mod sequence;
pub(crate) mod smo;
pub(crate) mod tagging;
pub(crate) mod wrapper;
