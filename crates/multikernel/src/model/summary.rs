//! What a trained model says about itself: the learner, the task, the chosen settings and
//! the kernels with their weights ([`Summary`]), the same for every learner so the CLI and
//! the Python package print them without knowing the learner.

pub use crate::trained::{KernelRow, Summary, SHOWN_KERNELS};
