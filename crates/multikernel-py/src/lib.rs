//! The extension module `multikernel._core`: the estimator layer of the `multikernel` crate
//! for Python. The scikit-learn estimators (`MKLClassifier`, `MKLRegressor`) are written in
//! Python on top of it (`python/multikernel/`); this module only moves arrays in and out,
//! releases the GIL while Rust works, and turns Rust errors into Python exceptions.
//!
//! - `fit` (`fit::fit`): builds a [`multikernel::estimator::LearnerSpec`] from the learner
//!   settings given by name (`(name, text)` pairs of the registry: no door names a learner
//!   setting) and trains it (with the built-in selection when no `C` is given);
//! - `fit_precomputed` (`precomputed::fit_precomputed`): lp-MKL, SimpleMKL or Gauss-Seidel
//!   on the caller's kernel matrices;
//! - `learner_settings`, `dictionary`, `streaming_kernels`, `parse_kernel`
//!   (`registry`): the registry's settings and the kernels;
//! - `Model` (`model::PyModel`): a trained model (predict, decision values, summary, bytes);
//!   it pickles through the versioned model bytes;
//! - `IncrementalFit` (`incremental::PyIncrementalFit`): the online learner chunk by chunk
//!   (`partial_fit`, iterative parameter mixing for `multikernel.dask`); it pickles;
//! - `fit_tagger` (`tagger::fit_tagger`), `Tagger` (`tagger::PyTagger`): the sequence tagger
//!   on sentences of feature dicts or columns (`multikernel.SequenceTagger`);
//! - `TagPart`, `part_keys`, `merge_part_keys`, `merge_tag_counts`, `fit_tagger_parts`
//!   (`tagger_parts`): a tagger's cutting-plane fit over parts of its sentences held on
//!   Dask workers (`multikernel.dask.fit_dask`); `fit_tagger_lbfgs_parts` (`batch_parts`):
//!   the batch CRF over the same parts; `online_plan`, `fit_tagger_passes`,
//!   `fit_parser_passes` (`online_parts`): the online learner's passes over them;
//! - what every fit over parts shares: `CompiledPart`, `PointReplica` (`compiled_part`: a
//!   worker's compiled sentences and its replica of the loop's point), `PartFeaturizer`,
//!   `ParseFeaturizer` (`part_featurizers`), `merge_part_sums` and the sums, steps and
//!   states that cross to the Python callable (`part_calls`);
//! - `fit_parser` (`parser::fit_parser`), `Parser` (`parser::PyParser`): the dependency
//!   parser on CoNLL-U sentences (`multikernel.DependencyParser`);
//! - `fit_parser_parts` (`parser_parts`): a parser's cutting-plane fit over parts of its
//!   sentences held on other processes (`multikernel.dask.fit_dask`);
//! - `svm_dual` (`smo::svm_dual`): the exact SVM dual solver (SMO) on a precomputed kernel,
//!   to check it against libsvm;
//! - `Threads` (`threads::PyThreads`), `current_threads`: `n_jobs`, the rayon pool that the
//!   fits and predictions of a `with Threads(n_jobs):` block run in (every entry point goes
//!   through `threads::install` or `threads::detach`);
//! - `errors`: the mapping of the library's errors to `ValueError`, `TypeError`,
//!   `MemoryError` and `OSError`;
//! - `interrupt`: the fit runs on a worker thread while the calling thread watches for
//!   Ctrl-C and stops the run through its observer.
//!
//! In brackets, where each lives (`module::item`; the modules are private: Python sees what
//! `#[pymodule]` adds).

mod arrays;
mod batch_parts;
mod compiled_part;
mod errors;
mod fit;
mod incremental;
mod interrupt;
mod model;
mod online_parts;
mod parser;
mod parser_parts;
mod part_calls;
mod part_featurizers;
mod precomputed;
mod registry;
mod smo;
mod tagger;
mod tagger_parts;
mod threads;

use pyo3::prelude::*;

/// The compiled core of the `multikernel` Python package.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MODEL_FORMAT_VERSION", multikernel::model::file::VERSION)?;
    m.add_class::<model::PyModel>()?;
    m.add_class::<incremental::PyIncrementalFit>()?;
    m.add_class::<tagger::PyTagger>()?;
    m.add_function(wrap_pyfunction!(tagger::fit_tagger, m)?)?;
    m.add_class::<tagger_parts::PyTagPart>()?;
    m.add_class::<compiled_part::PyCompiledPart>()?;
    m.add_class::<compiled_part::PyPointReplica>()?;
    m.add_class::<part_featurizers::PyPartFeaturizer>()?;
    m.add_function(wrap_pyfunction!(tagger_parts::part_keys, m)?)?;
    m.add_function(wrap_pyfunction!(tagger_parts::merge_part_keys, m)?)?;
    m.add_function(wrap_pyfunction!(tagger_parts::merge_tag_counts, m)?)?;
    m.add_function(wrap_pyfunction!(part_calls::merge_part_sums, m)?)?;
    m.add_function(wrap_pyfunction!(tagger_parts::fit_tagger_parts, m)?)?;
    m.add_class::<parser::PyParser>()?;
    m.add_function(wrap_pyfunction!(parser::fit_parser, m)?)?;
    m.add_class::<parser_parts::PyParsePart>()?;
    m.add_class::<part_featurizers::PyParseFeaturizer>()?;
    m.add_function(wrap_pyfunction!(parser_parts::merge_parse_values, m)?)?;
    m.add_function(wrap_pyfunction!(parser_parts::merge_parse_keys, m)?)?;
    m.add_function(wrap_pyfunction!(parser_parts::parse_featurizer, m)?)?;
    m.add_function(wrap_pyfunction!(parser_parts::fit_parser_parts, m)?)?;
    m.add_function(wrap_pyfunction!(batch_parts::fit_tagger_lbfgs_parts, m)?)?;
    m.add_function(wrap_pyfunction!(online_parts::online_plan, m)?)?;
    m.add_function(wrap_pyfunction!(online_parts::online_plan_with_zero, m)?)?;
    m.add_function(wrap_pyfunction!(online_parts::fit_tagger_passes, m)?)?;
    m.add_function(wrap_pyfunction!(online_parts::fit_parser_passes, m)?)?;
    m.add_function(wrap_pyfunction!(tagger::tag_counts, m)?)?;
    m.add_function(wrap_pyfunction!(fit::fit, m)?)?;
    m.add_function(wrap_pyfunction!(precomputed::fit_precomputed, m)?)?;
    m.add_function(wrap_pyfunction!(registry::dictionary, m)?)?;
    m.add_function(wrap_pyfunction!(registry::parse_kernel, m)?)?;
    m.add_function(wrap_pyfunction!(registry::learner_settings, m)?)?;
    m.add_function(wrap_pyfunction!(registry::streaming_kernels, m)?)?;
    m.add_function(wrap_pyfunction!(smo::svm_dual, m)?)?;
    m.add_class::<threads::PyThreads>()?;
    m.add_function(wrap_pyfunction!(threads::current_threads, m)?)?;
    Ok(())
}
