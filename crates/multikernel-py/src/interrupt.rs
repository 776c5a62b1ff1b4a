//! Long runs from Python: the work runs on a worker thread with the GIL released, while the
//! calling (main) thread waits on it and, every [`POLL`], takes the GIL to let Python run
//! its signal handlers (`PyErr_CheckSignals`, which does something only on the main
//! thread). A `KeyboardInterrupt` sets the run's [`StopFlag`]; the learner sees it at its
//! next poll of the observer (between examples, iterations or candidate kernels: the run
//! contract of `multikernel::run`), returns the model reached so far, and the exception is
//! raised once the worker has finished, so no Rust work outlives the call.
//!
//! Progress lines (`verbose`) are queued by the observer on the worker side and written to
//! Python's `sys.stderr` by the waiting thread, so they appear in notebooks too.

use multikernel::run::{Control, Observer, Progress, StopFlag};
use pyo3::prelude::*;
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::Mutex;
use std::time::Duration;

/// How often the waiting thread looks for signals and progress lines.
pub const POLL: Duration = Duration::from_millis(50);

/// Stack of the worker thread (the library's decoders recurse on long inputs).
const WORKER_STACK: usize = 64 << 20;

/// The observer of a run started from Python: a stop flag and, with `verbose`, a queue of
/// progress lines.
#[derive(Debug, Default)]
pub struct PyObserver {
    pub stop: StopFlag,
    verbose: bool,
    lines: Mutex<Vec<String>>,
}

impl PyObserver {
    pub fn new(verbose: bool) -> PyObserver {
        PyObserver {
            verbose,
            ..PyObserver::default()
        }
    }

    /// Queues a line for `sys.stderr` (with `verbose` only).
    pub fn say(&self, line: String) {
        if self.verbose {
            self.lines
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(line);
        }
    }

    fn take_lines(&self) -> Vec<String> {
        std::mem::take(&mut *self.lines.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Observer for PyObserver {
    fn progress(&self, p: &Progress) -> Control {
        if self.verbose {
            let total = p.total.map_or(String::new(), |t| format!("/{t}"));
            let objective = p
                .objective
                .map_or(String::new(), |o| format!(", objective {o:.6}"));
            self.say(format!(
                "[multikernel] {} {}{}{} ({:.2} s)",
                p.unit.name(),
                p.step,
                total,
                objective,
                p.seconds
            ));
        }
        self.stop.progress(p)
    }

    fn should_stop(&self) -> bool {
        self.stop.is_set()
    }
}

/// Writes queued progress lines to `sys.stderr`. A line that cannot be written is dropped,
/// but an exception that is not an `Exception` (a `KeyboardInterrupt` raised by the SIGINT
/// handler while Python ran the stream's `write`, as in a notebook or under pytest; a
/// `SystemExit`) is returned: the signal that raised it has been handled and will not be
/// seen again by `check_signals`.
fn flush_lines<'py>(py: Python<'py>, observer: &PyObserver) -> Option<PyErr> {
    let lines = observer.take_lines();
    if lines.is_empty() {
        return None;
    }
    let stderr = py.import("sys").and_then(|s| s.getattr("stderr")).ok()?;
    let mut raised = None;
    let mut keep = |result: PyResult<Bound<'py, PyAny>>| {
        if let Err(e) = result {
            if raised.is_none() && !e.is_instance_of::<pyo3::exceptions::PyException>(py) {
                raised = Some(e);
            }
        }
    };
    for line in lines {
        keep(stderr.call_method1("write", (format!("{line}\n"),)));
    }
    keep(stderr.call_method0("flush"));
    raised
}

/// Runs `work` on a worker thread with the GIL released; Ctrl-C stops it through
/// `observer`. Returns the work's result and, when the user interrupted it, the
/// `KeyboardInterrupt` (or whatever a signal handler raised) to raise after the caller has
/// cleaned up.
pub fn run<T: Send>(
    py: Python<'_>,
    observer: &PyObserver,
    work: impl FnOnce() -> T + Send,
) -> (T, Option<PyErr>) {
    let (out, interrupted) = py.detach(|| {
        std::thread::scope(|scope| {
            let (done_tx, done_rx) = channel::<()>();
            let worker = std::thread::Builder::new()
                .name("multikernel-fit".into())
                .stack_size(WORKER_STACK)
                .spawn_scoped(scope, move || {
                    let out = work();
                    let _ = done_tx.send(());
                    out
                })
                .expect("spawning the worker thread");
            let mut interrupted: Option<PyErr> = None;
            loop {
                match done_rx.recv_timeout(POLL) {
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                    Err(RecvTimeoutError::Timeout) => Python::attach(|py| {
                        let raised = flush_lines(py, observer);
                        if interrupted.is_none() {
                            if let Some(e) = raised.or_else(|| py.check_signals().err()) {
                                observer.stop.stop();
                                interrupted = Some(e);
                            }
                        }
                    }),
                }
            }
            match worker.join() {
                Ok(out) => (out, interrupted),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    });
    let raised = flush_lines(py, observer);
    (out, interrupted.or(raised))
}
