//! A part's compiled sentences, kept on its worker (`CompiledPart`), and the replica of the
//! cutting plane's point the worker rebuilds from the loop's steps (`PointReplica`): what
//! a worker of a fit over parts computes, for every learner that fits over parts (the
//! cutting plane's separations, the online learner's passes, the batch CRF's gradients).

use crate::errors::OrPy;
use crate::part_calls::{step_in, sums_out, StateOut, SumsOut};
use crate::part_featurizers::layout_of;
use multikernel::estimator::parts::{CompiledPart, LoopCut, LoopState, PointReplica};
use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use std::sync::RwLock;

/// A part's featurized sentences, kept on its worker.
#[pyclass(module = "multikernel._core", name = "CompiledPart", frozen)]
pub struct PyCompiledPart {
    pub(crate) inner: CompiledPart,
}

#[pymethods]
impl PyCompiledPart {
    /// How many of the model's weights the part's sentences are scored with (what a
    /// worker's replica of the point holds for this part).
    #[getter]
    fn weights_read(&self, py: Python<'_>) -> usize {
        py.detach(|| self.inner.weights_read())
    }

    /// The part's separation sums at the point of `replica`.
    fn separate_at<'py>(
        &self,
        py: Python<'py>,
        replica: &PyPointReplica,
    ) -> PyResult<SumsOut<'py>> {
        let s = crate::threads::detach(py, || {
            let r = replica.inner.read().unwrap_or_else(|e| e.into_inner());
            self.inner.separate_at(&r)
        })
        .or_py()?;
        sums_out(py, s)
    }

    /// The part's sentences' losses at the zero model, summed (its share of `L(0)` in the
    /// online learner's `plan`, bytes of `online_plan`).
    fn loss_at_zero_total(&self, py: Python<'_>, plan: Vec<u8>) -> PyResult<f64> {
        crate::online_parts::loss_at_zero_total(py, &self.inner, &plan)
    }

    /// One pass of the online learner over the part's sentences in `epoch` (from 1) from
    /// `state` (the loop's state as bytes; None: zeros), the part being number `part`: the
    /// pass's bytes (`fit_tagger_passes`, `fit_parser_passes`).
    #[pyo3(signature = (plan, state, epoch, part))]
    fn online_pass<'py>(
        &self,
        py: Python<'py>,
        plan: Vec<u8>,
        state: Option<Vec<u8>>,
        epoch: usize,
        part: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        crate::online_parts::online_pass(py, &self.inner, &plan, state.as_deref(), epoch, part)
    }

    /// The part's CRF losses summed and their gradients' sum at the weights `w`: `(loss,
    /// indices, values, sentences)`, the non-zero entries (`fit_tagger_lbfgs_parts`).
    fn crf_gradient<'py>(
        &self,
        py: Python<'py>,
        w: PyReadonlyArray1<'py, f64>,
    ) -> PyResult<crate::batch_parts::GradientOut<'py>> {
        crate::batch_parts::crf_gradient(py, &self.inner, w)
    }

    /// The part's separation sums at the loop's point itself (`point`: the weights and the
    /// fingerprint `fit_tagger_parts` hands its callable when it sends points).
    fn separate_point<'py>(
        &self,
        py: Python<'py>,
        w: PyReadonlyArray1<'py, f64>,
        hash: u64,
    ) -> PyResult<SumsOut<'py>> {
        let w = w.as_slice().map_err(|_| {
            PyValueError::new_err(
                "the point: a contiguous, aligned array (numpy.require(a, requirements=\"AC\"))",
            )
        })?;
        let s = crate::threads::detach(py, || self.inner.separate_point(w, hash)).or_py()?;
        sums_out(py, s)
    }
}

/// The loop's point rebuilt from its steps where the parts are (one per worker and fit).
#[pyclass(module = "multikernel._core", name = "PointReplica", frozen)]
pub struct PyPointReplica {
    inner: RwLock<PointReplica>,
}

#[pymethods]
impl PyPointReplica {
    /// The loop before its first separation, over the weights of `featurizer`; with
    /// `state` (the tuple `fit_tagger_parts` hands its callable), the loop at that state.
    /// With `parts` (a list of `CompiledPart`), it holds only the weights they read.
    #[new]
    #[pyo3(signature = (featurizer, separation_step, state=None, parts=None))]
    fn new(
        py: Python<'_>,
        featurizer: &Bound<'_, PyAny>,
        separation_step: f64,
        state: Option<StateOut>,
        parts: Option<Vec<PyRef<'_, PyCompiledPart>>>,
    ) -> PyResult<PyPointReplica> {
        let parts: Option<Vec<&CompiledPart>> =
            parts.as_ref().map(|p| p.iter().map(|c| &c.inner).collect());
        let layout = layout_of(featurizer)?;
        let inner = py
            .detach(|| {
                let f = &layout;
                let state =
                    state.map(
                        |(step, cuts, alpha, factors, best, steps, hash)| LoopState {
                            separation_step: step,
                            cuts: cuts
                                .into_iter()
                                .map(|(indices, values, b)| LoopCut { indices, values, b })
                                .collect(),
                            alpha,
                            factors,
                            best,
                            steps,
                            hash,
                        },
                    );
                match state {
                    None => PointReplica::new(f, separation_step, parts.as_deref()),
                    Some(s) => PointReplica::from_state(f, s, parts.as_deref()),
                }
            })
            .or_py()?;
        Ok(PyPointReplica {
            inner: RwLock::new(inner),
        })
    }

    /// Follows the loop through `step` (the tuple `fit_tagger_parts` hands its callable).
    fn apply(&self, py: Python<'_>, step: &Bound<'_, PyTuple>) -> PyResult<()> {
        let step = step_in(step)?;
        py.detach(|| {
            let mut r = self.inner.write().unwrap_or_else(|e| e.into_inner());
            r.apply(step)
        })
        .or_py()
    }

    /// Holds also the weights `part` reads: True when it does, False (no change) when a cut
    /// held already dropped some of them (a replica from the loop's state then serves it).
    fn widen(&self, py: Python<'_>, part: &PyCompiledPart) -> PyResult<bool> {
        py.detach(|| {
            let mut r = self.inner.write().unwrap_or_else(|e| e.into_inner());
            r.widen(&part.inner)
        })
        .or_py()
    }

    /// The loop's solves followed so far.
    #[getter]
    fn steps(&self) -> usize {
        self.inner.read().unwrap_or_else(|e| e.into_inner()).steps()
    }
}
