//! `n_jobs`: how many threads a call from Python uses, as scikit-learn documents the
//! parameter (`None` the default, `-1` every core, `-2` all but one, a positive count).
//!
//! The estimators enter `with multikernel._core.Threads(n_jobs):` around each fit and
//! prediction. [`PyThreads`] builds a rayon thread pool of that many threads (none for
//! `None`: the global pool, which follows `RAYON_NUM_THREADS`, one thread per core by
//! default) and makes it the current pool of the calling Python thread for the block; every
//! entry point runs its Rust work through [`install`] (fits, via `interrupt::run`) or
//! [`detach`] (predictions), which run it inside that pool with the GIL released. The
//! library's parallel loops (`rayon` and faer's `Par::rayon(0)`) then use the pool's
//! threads, and the library gives the same bits on any number of threads, so `n_jobs`
//! changes the time a call takes, never its result.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::cell::RefCell;
use std::sync::Arc;

/// Stack of the threads of an `n_jobs` pool and of a fit's worker thread (started by
/// the interrupt module): the library's decoders recurse on long inputs.
pub(crate) const WORKER_STACK: usize = 64 << 20;

/// The largest number of threads `n_jobs` may ask for.
const MAX_THREADS: i64 = 1024;

thread_local! {
    /// The pool of the innermost `Threads` block entered on this (Python) thread.
    static CURRENT: RefCell<Option<Arc<ThreadPool>>> = const { RefCell::new(None) };
}

/// The number of threads of `n_jobs` (joblib's reading: `-1` every core, `-2` all but one,
/// at least one), or an error naming what is accepted.
pub fn thread_count(n_jobs: i64) -> PyResult<usize> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as i64;
    let n = match n_jobs {
        0 => {
            return Err(PyValueError::new_err(
                "n_jobs = 0: a positive number of threads, -1 for every core (-2 all but \
                 one, ...), or None for the default (RAYON_NUM_THREADS, else every core)",
            ))
        }
        n if n > MAX_THREADS => {
            return Err(PyValueError::new_err(format!(
                "n_jobs = {n}: at most {MAX_THREADS} threads"
            )))
        }
        n if n > 0 => n,
        n => (cores + 1 + n.max(-MAX_THREADS)).max(1),
    };
    Ok(n as usize)
}

/// A thread pool of `threads` threads (with the fit worker's stack: the library's decoders
/// recurse on long inputs, and a fit's sequential part runs on one of these threads).
fn pool(threads: usize) -> PyResult<ThreadPool> {
    ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(WORKER_STACK)
        .thread_name(|i| format!("multikernel-{i}"))
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("n_jobs: starting {threads} threads: {e}")))
}

/// The current pool of the calling thread (`None`: the global pool).
pub fn current() -> Option<Arc<ThreadPool>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Runs `work` inside `pool` (on one of its threads, its parallel loops on the others), or
/// on the calling thread with the global pool when `None`.
pub fn install<T: Send>(pool: Option<&ThreadPool>, work: impl FnOnce() -> T + Send) -> T {
    match pool {
        Some(p) => p.install(work),
        None => work(),
    }
}

/// `py.detach(work)` inside the calling thread's current pool: the GIL released while Rust
/// works on `n_jobs` threads.
pub fn detach<T: Send>(py: Python<'_>, work: impl FnOnce() -> T + Send) -> T {
    let pool = current();
    py.detach(|| install(pool.as_deref(), work))
}

/// `with Threads(n_jobs):` runs the calls of the block (fits and predictions of this
/// module) on `n_jobs` threads: `None` the default pool, `-1` every core, a positive
/// count. Blocks nest; the pool is built once, when the object is made.
#[pyclass(module = "multikernel._core", name = "Threads", unsendable)]
pub struct PyThreads {
    pool: Option<Arc<ThreadPool>>,
    saved: Vec<Option<Arc<ThreadPool>>>,
}

#[pymethods]
impl PyThreads {
    #[new]
    #[pyo3(signature = (n_jobs=None))]
    fn new(n_jobs: Option<i64>) -> PyResult<PyThreads> {
        let pool = match n_jobs {
            None => None,
            Some(n) => Some(Arc::new(pool(thread_count(n)?)?)),
        };
        Ok(PyThreads {
            pool,
            saved: Vec::new(),
        })
    }

    /// The number of threads of the pool (`None`: the default pool).
    #[getter]
    fn threads(&self) -> Option<usize> {
        self.pool.as_ref().map(|p| p.current_num_threads())
    }

    fn __enter__(mut slf: PyRefMut<'_, Self>) -> PyRefMut<'_, Self> {
        let pool = slf.pool.clone();
        let previous = CURRENT.with(|c| c.replace(pool));
        slf.saved.push(previous);
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&mut self, _exc: &Bound<'_, PyTuple>) -> bool {
        let previous = self.saved.pop().flatten();
        CURRENT.with(|c| c.replace(previous));
        false
    }
}

/// The number of threads a call made now from this thread would use (the current pool's,
/// else the global pool's).
#[pyfunction]
pub fn current_threads() -> usize {
    match current() {
        Some(p) => p.current_num_threads(),
        None => rayon::current_num_threads(),
    }
}
