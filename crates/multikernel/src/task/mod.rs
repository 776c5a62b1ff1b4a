//! Tasks: what an output is, its loss, and how it is scored.
//!
//! - [`online`]: the seam the online learner consumes ([`OnlineTask`]: examples, explicit
//!   groups, loss and gradient in score space);
//! - [`structured`]: the structured-task seam ([`StructuredTask`]: parts and how they are
//!   scored, decoding, loss-augmented decoding, cost, marginals, metric), its losses and the
//!   adapter [`StructuredOnline`] that makes any structured task an [`OnlineTask`];
//! - [`chain`] (Viterbi, forward-backward) and [`sequence`]: sequence labeling on the seam;
//! - [`tree`]: arc-factored dependency trees of short sentences on the seam (the test task of
//!   the parsing issue);
//! - [`vector`] and [`targets`]: binary, multiclass and regression on vector data.

pub(crate) mod chain;
pub(crate) mod explicit_vector;
pub(crate) mod online;
pub(crate) mod parse;
pub(crate) mod sequence;
pub(crate) mod structured;
pub(crate) mod tagging;
pub(crate) mod targets;
pub(crate) mod tree;
pub(crate) mod vector;

pub(crate) use targets::Prediction;
pub use targets::{prediction_metric, TaskKind};
pub use vector::Loss;
pub(crate) use vector::VectorTask;
