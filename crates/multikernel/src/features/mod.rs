//! Explicit features: sparse feature vectors ([`SparseVector`], and many of them in one
//! buffer, [`SparseRows`]), string -> index alphabets ([`Alphabet`]) and the layout of
//! explicit parameter groups in one index space ([`GroupLayout`]).
//!
//! A structured task scores a part either through the kernel groups or through an explicit
//! sparse feature vector (martins2011 Sec. 2.3: `f(x, y) = sum_parts <theta, phi(x, part)>`);
//! feature templates (a dependency parser's arc templates, CRF++-style sequence templates) map
//! strings to indices through one alphabet per template, and each template is one group
//! (Sec. 4.2 of martins2011; the templates of mao-tsang).

#[cfg(test)]
mod alphabet;
mod layout;
mod rows;
mod sparse;

#[cfg(test)]
pub(crate) use alphabet::Alphabet;
pub(crate) use layout::GroupLayout;
pub(crate) use rows::SparseRows;
pub(crate) use sparse::SparseVector;
