//! Learners.

pub mod fit_vector;
pub mod online;
pub mod lp_mkl;
pub mod objective;
pub mod gomp;
pub mod poly_sampler;
pub mod fit_sequence;
pub mod mirror_descent;
