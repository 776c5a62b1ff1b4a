//! The bodies of the fuzz targets (`fuzz/`, docs/fuzzing.md): one function per target that feeds
//! arbitrary bytes to a reader or parser and checks what must hold for every input (no panic;
//! a parsed value prints back to itself; ...). The fuzz targets call them, and so does the
//! test `tests/it/fuzz_replay.rs`, which replays every committed corpus file, so CI guards what
//! fuzzing found. Not part of the library's API.

mod checkpoint;
mod model;
mod model_stream;
mod online;
mod stream;
mod strings;
mod tables;
mod tagging;
mod treebank;

pub use checkpoint::checkpoint_bytes;
pub use model::model_bytes;
pub use model_stream::model_stream;
pub use online::online_parts;
pub use stream::table_stream;
pub use strings::{kernel_spec, regularizer, settings};
pub use tables::{csv, csv_weights, libsvm, ocr};
pub use tagging::{columns, crf_templates, tagger_parts};
pub use treebank::{arc_templates, conllu, parser_parts};
