//! Dependency treebanks: the parser ([`parser`]: SPOM, Alg. 1 of martins2011, or
//! multi-template learning by the cutting plane, over the arc-factored tree task with one
//! group per arc template; the [`parser::ParserModel`]) and the second-stage relation labeler
//! it trains after the trees ([`arc_labels`]).

pub(crate) mod arc_labels;
pub(crate) mod parser;
