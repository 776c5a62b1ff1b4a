//! Template columns (CRF++-style column files, or feature dicts seen as one column with one
//! template per key): the template tagger ([`tagging`]: its four learners dispatched over
//! the engines of `solver`, the memory guard, checkpoints, and the
//! [`tagging::TaggerModel`]).

pub(crate) mod tagging;
