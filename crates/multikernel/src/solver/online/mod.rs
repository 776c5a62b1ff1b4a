//! The online proximal learner (Alg. 1 of Martins et al. 2011; SPOM, Alg. 3, on sequences):
//! the engine generic over the task ([`engine`]), its hyper-parameters ([`params`]), training
//! on vector data ([`vector`]) and on sequences ([`sequence`]), and the trained models.

pub mod engine;
pub mod params;
pub mod sequence;
pub mod sequence_model;
pub mod vector;
pub mod vector_model;

pub use engine::{regularizer_value, OnlineLearner, OnlineState};
pub use params::{EpochReport, OnlineParams, StepSchedule};
