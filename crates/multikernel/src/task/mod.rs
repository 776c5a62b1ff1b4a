//! Tasks: what an output is, its loss, and how it is scored.

pub mod chain;
pub mod online;
pub mod sequence;
pub mod structured;
pub mod targets;
pub mod tree;
pub mod vector;

pub use online::{ExplicitGroup, Gradient, GroupRole, OnlineTask};
pub use structured::{StructLoss, StructuredOnline, StructuredTask};
pub use targets::{prediction_metric, Prediction, TaskKind};
pub use vector::{Loss, VectorTask};
