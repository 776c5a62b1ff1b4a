//! # multikernel
//!
//! Learns predictors together with the weights of many kernels or feature groups
//! (multiple kernel learning). Families of learners over one objective
//!
//! ```text
//! min_theta  lambda * Omega(theta) + (1/N) sum_i L(theta; x_i, y_i)
//! ```
//!
//! with `Omega` a block norm over groups (one group per kernel):
//! - online proximal learning (SPOM; Martins et al. 2011, Alg. 1-3) in [`solver::online`];
//! - a 1-slack cutting-plane structural SVM (Joachims et al. 2009; mao-tsang Alg. 1 without
//!   its MKL part) in [`solver::cutting_plane`];
//! - tasks in [`task`], with the structured-task seam ([`task::structured`]: parts, decoding,
//!   loss-augmented decoding, marginals) that SPOM and the cutting plane consume;
//! - explicit sparse features, alphabets and group layouts in [`features`];
//! - regularizers and their proximity operators in [`prox`];
//! - kernels, normalizations and Gram matrices in [`kernel`];
//! - data readers in [`data`];
//! - model selection over a grid and validation splits in [`select`].
//!
//! Algorithms never read files and never print; progress goes through callbacks.

pub mod checkpoint;
pub mod data;
pub mod error;
pub mod estimator;
pub mod features;
#[doc(hidden)]
pub mod fuzzing;
pub mod io;
pub mod kernel;
pub mod linalg;
pub mod metrics;
pub mod model;
pub mod multiset;
pub mod params;
pub mod plot;
pub mod prelude;
pub mod prox;
pub mod reproduce;
pub mod run;
pub mod select;
pub mod solver;
pub mod task;

pub use error::{Error, Result};
