//! Trained models as users see them: the task wrapper of the squared-loss batch learners and
//! the model files.

pub mod batch_model;
pub mod file;
pub use file::{load, save, AnyModel};
