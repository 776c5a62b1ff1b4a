//! The online proximal learner (Alg. 1 of Martins et al. 2011; SPOM, Alg. 3, on sequences):
//! the engine generic over the task ([`engine`]), its hyper-parameters ([`params`]), training
//! on vector data ([`vector`]) and on dependency trees ([`parser`]), the fit epilogue
//! ([`compact`]: the final state as a compact kernel expansion) and the trained model on
//! vectors ([`vector_model`]); per-coordinate (AdaGrad) steps for template taggers with the l2
//! regularizer ([`adagrad`]). SPOM on sequences and its model are in
//! [`crate::solver::sequence`], beside the structured wrappers that share them.

pub mod adagrad;
pub mod arc_labels;
pub mod blocks;
pub mod compact;
pub mod engine;
pub mod incremental;
pub mod params;
pub mod parser;
pub mod vector;
pub mod vector_model;

pub use engine::{epoch_report, regularizer_value, OnlineLearner, OnlineState};
pub use params::{EpochReport, OnlineParams, StepSchedule};
