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

use multikernel::run::{Control, Observer, Progress, StepUnit, StopFlag};
use pyo3::prelude::*;
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::Mutex;
use std::time::Duration;

/// How often the waiting thread looks for signals and progress lines.
pub const POLL: Duration = Duration::from_millis(50);

/// The observer of a run started from Python: a stop flag and, with `verbose`, a queue of
/// progress lines.
#[derive(Debug, Default)]
pub struct PyObserver {
    pub stop: StopFlag,
    verbose: bool,
    lines: Mutex<Vec<String>>,
    /// The seconds of the last selection line queued (they are throttled).
    last_fit_line: Mutex<Option<f64>>,
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

/// Seconds between two progress lines of a selection (the first and the last always show).
const FIT_LINE_EVERY: f64 = 1.0;

impl PyObserver {
    /// A selection's progress line (`StepUnit::Fit`), at most every [`FIT_LINE_EVERY`]
    /// seconds: fits done of planned, the seconds, and the seconds left at the pace so far.
    fn fit_line(&self, p: &Progress) {
        let total = p.total.unwrap_or(p.step);
        {
            let mut last = self.last_fit_line.lock().unwrap_or_else(|e| e.into_inner());
            let due = p.step == 0
                || p.step >= total
                || last.is_none_or(|t| p.seconds - t >= FIT_LINE_EVERY);
            if !due {
                return;
            }
            *last = Some(p.seconds);
        }
        let left = if p.step > 0 && total > p.step {
            let rate = p.seconds / p.step as f64;
            format!(", about {:.0} s left", rate * (total - p.step) as f64)
        } else {
            String::new()
        };
        self.say(format!(
            "[multikernel] selection: {}/{} fits ({:.1} s{left})",
            p.step, total, p.seconds
        ));
    }
}

impl Observer for PyObserver {
    fn progress(&self, p: &Progress) -> Control {
        if self.verbose && p.unit == StepUnit::Fit {
            self.fit_line(p);
        } else if self.verbose {
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

/// Runs `work` on a worker thread with the GIL released, inside the calling thread's
/// `n_jobs` pool when there is one ([`crate::threads::install`]); Ctrl-C stops it through
/// `observer`. Returns the work's result and, when the user interrupted it, the
/// `KeyboardInterrupt` (or whatever a signal handler raised) to raise after the caller has
/// cleaned up.
pub fn run<T: Send>(
    py: Python<'_>,
    observer: &PyObserver,
    work: impl FnOnce() -> T + Send,
) -> (T, Option<PyErr>) {
    let pool = crate::threads::current();
    let (out, interrupted) = py.detach(|| {
        std::thread::scope(|scope| {
            let (done_tx, done_rx) = channel::<()>();
            let worker = std::thread::Builder::new()
                .name("multikernel-fit".into())
                .stack_size(crate::threads::WORKER_STACK)
                .spawn_scoped(scope, move || {
                    let out = crate::threads::install(pool.as_deref(), work);
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
