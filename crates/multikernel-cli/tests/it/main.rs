//! The end-to-end tests of the `multikernel` binary, one test binary (issue 47: one link
//! instead of one per file); each module is one former `tests/*.rs` file, `common` their
//! helpers.

mod common;

mod batch_learners;
#[cfg(unix)]
mod checkpoint;
mod cli;
mod flags;
mod hostile_inputs;
#[cfg(unix)]
mod kill;
mod outputs;
mod parsing;
mod reproduce;
mod selection;
mod stream;
mod stream_use;
mod tagging;
mod tagging_files;
mod weights;
