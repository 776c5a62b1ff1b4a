//! Learners on labeled sequences (a first-order chain, Martins et al. 2011, Sec. 4.1) and the
//! model they share:
//!
//! - [`spom`]: SPOM (Alg. 3), the online learner of [`crate::solver::online`] over the chain;
//! - [`wrapper`]: the structured wrappers of Figure 2 (SimpleMKL and Gauss-Seidel from
//!   [`crate::solver::wrapper`] around structured PEGASOS, the same online learner with an
//!   l2 regularizer and a `1 / (lambda t)` step);
//! - [`grams`]: `C` and `lambda`, the kernels fitted on the training positions and their Gram
//!   matrices, as both learners compute them;
//! - [`model`]: the trained [`SequenceModel`] both return (Viterbi decoding, eq. 1).
//!
//! This folder sits above the engines `online` and `wrapper` of [`crate::solver`] (it uses
//! both) and above [`crate::pipeline::table`] (its model stores its regularizer and step rule
//! as text through the table model's `as_text`); none of those uses it: `tests/it/layers.rs`
//! checks the order.

pub(crate) mod grams;
pub(crate) mod model;
pub(crate) mod spom;
pub(crate) mod wrapper;

pub use model::{KernelGroup, SequenceModel};
