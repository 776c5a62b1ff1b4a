//! The online proximal learner (Alg. 1 of Martins et al. 2011; SPOM, Alg. 3, on sequences):
//! the engine generic over the task ([`engine`]), its hyper-parameters ([`params`]), training
//! on vector data ([`vector`]), on sequences ([`sequence`]) and on dependency trees
//! ([`parser`]), the fit epilogue the first two share
//! ([`compact`]: the final state as a compact kernel expansion) and the trained models
//! ([`vector_model`], [`sequence_model`]).

pub mod arc_labels;
pub mod blocks;
pub mod compact;
pub mod engine;
pub mod incremental;
pub mod params;
pub mod parser;
pub mod sequence;
pub mod sequence_model;
pub mod vector;
pub mod vector_model;

pub use engine::{epoch_report, regularizer_value, OnlineLearner, OnlineState};
pub use params::{EpochReport, OnlineParams, StepSchedule};
