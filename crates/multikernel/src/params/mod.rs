//! The learners' grouped parameters: a block of coefficients with a lazy scale, so that the
//! proximal steps of the online learner rescale a group in O(1) (martins2011 Sec. 3.4).

mod scaled;
pub(crate) use scaled::ScaledVec;
