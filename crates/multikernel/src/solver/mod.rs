//! Learners.

pub mod fit_sequence;
pub mod fit_vector;
pub mod gomp;
pub mod lp_mkl;
pub mod mirror_descent;
pub mod objective;
pub mod online;
pub mod poly_sampler;
