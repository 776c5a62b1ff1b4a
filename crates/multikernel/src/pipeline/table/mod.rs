//! Tables of vectors: the online learner (Alg. 1 of martins2011) on a table, whole
//! ([`vector`]: standardization, kernels fitted on the training rows, Gram matrices or
//! explicit groups, the run and the compact model) or chunk by chunk ([`incremental`]:
//! `partial_fit` and iterative parameter mixing), and the trained model on vectors
//! ([`vector_model`]).

pub(crate) mod incremental;
pub(crate) mod vector;
pub(crate) mod vector_model;
