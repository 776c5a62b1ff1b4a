//! Pipelines: what turns one kind of input into an engine's input and the engine's result
//! back into a model, one folder per input kind. The engines themselves, named by algorithm,
//! are in [`crate::solver`]; the tasks (losses, decoders, featurizers) in [`crate::task`].
//!
//! - [`table`]: a table of vectors (CSV, LIBSVM, an array): standardization, kernels fitted
//!   on the training rows, the online learner over Gram matrices or explicit groups, whole
//!   ([`table::vector`]) or chunk by chunk ([`table::incremental`]), and the trained
//!   [`table::vector_model::KernelMachine`];
//! - [`sequence`]: labeled sequences (OCR-style files): SPOM on the chain and the structured
//!   wrappers, their Gram matrices and the [`sequence::SequenceModel`] both return;
//! - [`columns`]: template columns (CRF++-style files, feature dicts): the template tagger's
//!   four learners (SPOM, AdaGrad, the cutting plane, L-BFGS) and the
//!   [`columns::tagging::TaggerModel`];
//! - [`treebank`]: dependency treebanks (CoNLL-U): the parser (SPOM or multi-template
//!   learning over arc templates), the second-stage relation labeler and the
//!   [`treebank::parser::ParserModel`].
//!
//! Each folder uses the engines of `solver` and the modules below them; `sequence` also uses
//! [`table`] (its model stores its regularizer and step rule as text through
//! `table::vector_model::as_text`), and no other folder uses another (`tests/it/layers.rs`,
//! `PIPELINE_LAYERS`).

pub(crate) mod columns;
pub(crate) mod sequence;
pub(crate) mod table;
pub(crate) mod treebank;
