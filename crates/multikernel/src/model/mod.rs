//! Grouped parameters and trained models.

pub mod batch_model;
pub mod file;
pub mod kernel_machine;
pub mod scaled;
pub use file::{load, save, AnyModel};
pub use kernel_machine::{prediction_metric, KernelMachine, Prediction, TaskKind};
pub use scaled::ScaledVec;
pub mod sequence_model;
