//! Learners end to end inside the crate, where their engines are reachable: the online
//! learner against its explicit twin on the shipped tables (`online`), and the structured seam
//! on synthetic trees, trained by SPOM and by the cutting plane (`structured`).

mod online;
mod structured;
mod weights;
