//! Tasks: what an output is, its loss, and how it is scored.

pub mod chain;
pub mod vector;
pub use vector::{Loss, VectorTask};
pub mod sequence;
