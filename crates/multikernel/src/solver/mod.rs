//! Engines: one folder per algorithm, each with its parameters, its engine and, for the
//! learners on kernel matrices, its trained model.
//!
//! - [`online`]: online proximal MKL (Martins et al. 2011, Alg. 1-3), generic over the task;
//! - [`adagrad`]: the same rounds with per-coordinate (diagonal AdaGrad) steps;
//! - [`gomp`]: MKL-GOMP (Sindhwani & Lozano 2012, Sec. 3);
//! - [`lp_mkl`]: lp-norm MKL for the squared loss (Kloft et al. 2011);
//! - [`mirror_descent`]: randomized mirror descent and UCD over polynomial kernels
//!   (Afkanpour et al. 2013, Alg. 2-3);
//! - [`cutting_plane`]: the 1-slack cutting-plane loop and its masters (multi-template
//!   learning);
//! - [`batch`]: the full structured objective (eq. 2 with the l2 regularizer) and its
//!   minimization by L-BFGS, the optimum SPOM should reach;
//! - [`smo`]: the exact SVM dual;
//! - [`wrapper`]: SimpleMKL and Gauss-Seidel around an inner solver.
//!
//! [`ridge`] holds the kernel ridge solves and raw-row predictions MKL-GOMP and lp-MKL share.
//! What turns a table, a sequence file, template columns or a treebank into an engine's input
//! and back into a model is not here: [`crate::pipeline`].

pub(crate) mod adagrad;
pub(crate) mod batch;
mod check;
pub(crate) mod cutting_plane;
pub(crate) mod gomp;
pub(crate) mod lp_mkl;
pub(crate) mod mirror_descent;
pub(crate) mod online;
pub(crate) mod ridge;
pub(crate) mod smo;
pub(crate) mod wrapper;
