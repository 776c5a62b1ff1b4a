//! # multikernel
//!
//! Learns predictors together with the weights of many kernels or feature groups (multiple
//! kernel learning), for plain vectors and for structured outputs (sequences, dependency
//! trees). Start here:
//!
//! - [`prelude`]: everything a typical program needs, in one import;
//! - [`estimator`]: the front door: describe a learner ([`estimator::LearnerSpec`]), fit it
//!   ([`estimator::fit()`], with the built-in selection when asked: [`estimator::FitRequest`]), tag
//!   ([`estimator::tagger`]) and parse ([`estimator::parser`]);
//! - [`model`]: what a fit returns: predict, score, summarize, save and load
//!   ([`model::Model`]).
//!
//! Around them: the data readers ([`data`]: CSV, LIBSVM, CoNLL-U, the OCR letters, streams),
//! kernels and their memory bound ([`kernel`]: [`kernel::KernelSpec`],
//! [`kernel::MemoryLimit`]), progress, stopping and checkpoints ([`run`], [`checkpoint`]),
//! files written whole or not at all ([`io`]) and the one error type ([`error`]).
//!
//! Every learner minimizes one objective
//!
//! ```text
//! min_theta  lambda * Omega(theta) + (1/N) sum_i L(theta; x_i, y_i)
//! ```
//!
//! with `Omega` a block norm over groups (one group per kernel or feature template): online
//! proximal learning (SPOM; Martins et al. 2011), randomized mirror descent (Afkanpour et al.
//! 2013), multi-template learning (Mao & Tsang), MKL-GOMP (Sindhwani & Lozano 2012) and
//! lp-MKL (Kloft et al.). The engines themselves (`solver`, one folder per algorithm) and the
//! pipelines that feed them a table, a sequence file, template columns or a treebank and make
//! the model (`pipeline`, one folder per input kind) are private; the hidden module `engine`
//! lends the parts the project's experiments, benchmarks, fuzz targets and tests drive
//! directly, without the promise of a stable API (`cargo doc --document-private-items` shows
//! the engines to contributors).
//!
//! Algorithms never read files and never print; progress goes through callbacks
//! ([`run::Observer`]).
#![warn(unreachable_pub)]

pub mod checkpoint;
pub mod data;
#[doc(hidden)]
pub mod engine;
pub mod error;
pub mod estimator;
pub(crate) mod features;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod io;
pub mod kernel;
pub(crate) mod linalg;
pub(crate) mod metrics;
pub mod model;
pub(crate) mod multiset;
pub(crate) mod params;
pub(crate) mod pipeline;
pub mod prelude;
pub(crate) mod prox;
pub mod run;
pub(crate) mod select;
pub(crate) mod solver;
pub(crate) mod task;
pub(crate) mod trained;

pub use error::{Error, Result};
