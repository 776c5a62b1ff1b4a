//! The integration tests of the library, one binary (issue 47: one link instead of one per
//! file); each module is one former `tests/*.rs` file.

mod approx_maps;
mod checkpoint;
mod data_readers;
mod degenerate;
mod determinism;
mod docs;
mod estimator;
mod fuzz_replay;
mod generate_chunks;
mod incremental;
mod layers;
mod memory_refusals;
mod model_corruption;
mod model_files;
mod model_fixtures;
mod online;
mod parsing;
mod poly_solver_choice;
mod precomputed;
mod precomputed_wrappers;
mod sequence_models_v1;
mod shards;
mod source;
mod stream_fit;
mod stream_reader;
mod stream_score;
mod structured;
mod summary_names;
mod wrappers;
