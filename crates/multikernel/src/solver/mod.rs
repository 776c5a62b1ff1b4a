//! Learners.

pub mod cutting_plane;
pub mod gomp;
pub mod lp_mkl;
pub mod mirror_descent;
pub mod objective;
pub mod online;
pub mod poly_sampler;
