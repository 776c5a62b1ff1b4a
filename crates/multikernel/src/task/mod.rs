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

pub mod chain;
pub mod explicit_vector;
pub mod online;
pub mod parse;
pub mod sequence;
pub mod structured;
pub mod tagging;
pub mod targets;
pub mod tree;
pub mod vector;

pub use online::{ExplicitGroup, Gradient, GroupRole, OnlineTask};
pub use structured::{StructLoss, StructuredOnline, StructuredTask};
pub use targets::{prediction_metric, Prediction, TaskKind};
pub use vector::{Loss, VectorTask};
