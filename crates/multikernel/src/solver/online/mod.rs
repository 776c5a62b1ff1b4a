//! The online proximal learner (Alg. 1 of Martins et al. 2011; SPOM, Alg. 3, on sequences):
//! the engine generic over the task ([`engine`]), its hyper-parameters ([`params`]), training
//! on vector data ([`vector`]) and on dependency trees ([`parser`]), the fit epilogue
//! ([`compact`]: the final state as a compact kernel expansion) and the trained model on
//! vectors ([`vector_model`]); per-coordinate (AdaGrad) steps for template taggers with the l2
//! regularizer ([`adagrad`]). SPOM on sequences and its model are in
//! [`crate::solver::sequence`], beside the structured wrappers that share them.

pub(crate) mod adagrad;
pub(crate) mod arc_labels;
pub(crate) mod blocks;
pub(crate) mod compact;
pub(crate) mod engine;
pub(crate) mod incremental;
pub(crate) mod params;
pub(crate) mod parser;
pub(crate) mod vector;
pub(crate) mod vector_model;

pub(crate) use engine::{epoch_report, regularizer_value};
pub use engine::{OnlineLearner, OnlineState};
pub(crate) use params::EpochReport;
pub use params::{OnlineParams, StepSchedule};
