//! The integration tests of the library, one binary (issue 47: one link instead of one per
//! file); each module is one former `tests/*.rs` file.

mod approx_maps;
mod checkpoint;
mod conformance;
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
mod structured_selection;
mod summary_names;
mod wrappers;

/// The test metric of a kernel machine (accuracy for classes, as `reproduce uci` scores it).
fn score(
    model: &multikernel::engine::pipeline::table::vector_model::KernelMachine,
    test: &multikernel::data::Dataset,
) -> f64 {
    let pred = model
        .predict(test.x.view(), &multikernel::kernel::MemoryLimit::default())
        .unwrap();
    multikernel::engine::task::prediction_metric(&pred, &test.targets).1
}

/// Precomputed kernels through the in-memory door (`fit` on `TrainingData::Kernels`).
fn fit_precomputed(
    kernels: &[multikernel::data::MatrixRef<'_>],
    targets: &multikernel::data::Targets,
    task: multikernel::engine::task::TaskKind,
    spec: &multikernel::estimator::PrecomputedSpec,
    observer: &dyn multikernel::run::Observer,
) -> multikernel::Result<multikernel::estimator::Fitted> {
    let data = multikernel::estimator::KernelData {
        kernels,
        targets,
        task,
    };
    multikernel::estimator::fit(data, spec, observer)
}
