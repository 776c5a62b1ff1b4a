//! The online proximal learner (Alg. 1 of Martins et al. 2011; SPOM, Alg. 3, on structured
//! outputs): the engine generic over the task ([`engine`]), its hyper-parameters ([`params`]),
//! the same rounds over explicit groups fed block by block ([`blocks`]) and the fit epilogue
//! ([`compact`]: the final state as a compact kernel expansion). What feeds it and makes its
//! models is in [`crate::pipeline`]: tables ([`crate::pipeline::table`]: whole-table and
//! incremental fits, the model on vectors), sequences ([`crate::pipeline::sequence`]),
//! template columns ([`crate::pipeline::columns`]) and treebanks
//! ([`crate::pipeline::treebank`]). Per-coordinate (AdaGrad) steps are
//! [`crate::solver::adagrad`].

pub(crate) mod blocks;
pub(crate) mod compact;
pub(crate) mod engine;
pub(crate) mod params;

pub(crate) use engine::{epoch_report, regularizer_value};
pub use engine::{OnlineLearner, OnlineState};
pub(crate) use params::EpochReport;
pub use params::{OnlineParams, OnlineSteps, StepSchedule};
