//! The run contract every learner follows.
//!
//! - A learner takes one observer, as `&dyn Observer` (not a generic parameter, so the
//!   engines compile once, in this crate, whatever observer the caller passes). It calls
//!   [`Observer::progress`] after each natural step (an epoch, an iteration, a kernel
//!   chosen) and polls [`Observer::should_stop`] between the smaller units of work inside a
//!   step (examples, candidate kernels), so a request to stop takes effect at the next such
//!   point, from any thread.
//! - A run ends with a [`RunStatus`] kept apart from errors: converged, completed its
//!   planned steps, hit an iteration cap or a time budget, or cancelled by the observer. A
//!   cancelled run still returns the model it had reached; what to do with it is the
//!   caller's choice (the CLI writes no model file).
//! - [`RunInfo`] holds the status, the steps, the seconds and the trace of the objective;
//!   `RunRecorder` builds it, so every learner reports the same way.
//!
//! Timings live here, never in a model: the same seed gives the same model file.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Whether a run goes on after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Continue,
    Stop,
}

/// What a step counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepUnit {
    /// A pass over the training examples (online learner).
    Epoch,
    /// One iteration of a batch solver (lp-MKL's alternation, mirror descent's update).
    Iteration,
    /// One kernel added to the model (MKL-GOMP).
    Kernel,
    /// One fit of the built-in selection (one candidate at one C on one fold); its total
    /// can shrink as candidates stop early.
    Fit,
}

impl StepUnit {
    /// The unit's name, singular (`epoch`, `iteration`, `kernel`).
    pub fn name(self) -> &'static str {
        match self {
            StepUnit::Epoch => "epoch",
            StepUnit::Iteration => "iteration",
            StepUnit::Kernel => "kernel",
            StepUnit::Fit => "fit",
        }
    }
}

/// What a learner reports after a step.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// Steps done so far (1 after the first).
    pub step: u64,
    /// Steps planned, when known (epochs; the largest number of kernels; an iteration cap).
    pub total: Option<u64>,
    pub unit: StepUnit,
    /// The training objective after this step, where the learner computes it.
    pub objective: Option<f64>,
    /// Seconds since the run started.
    pub seconds: f64,
}

/// Sees a run's progress and may stop it. A learner may call it from worker threads, so
/// implementations keep their state behind interior mutability (atomics, a mutex).
pub trait Observer: Sync {
    /// Called after each step; [`Control::Stop`] ends the run there.
    fn progress(&self, _progress: &Progress) -> Control {
        Control::Continue
    }

    /// Polled inside a step; `true` stops the run at the next point the learner checks.
    fn should_stop(&self) -> bool {
        false
    }

    /// Where the run saves its checkpoints and finds the state to resume from, if anywhere
    /// ([`Checkpoints`]). Learners that support checkpoints ask at their start and after
    /// each step; wrappers for inner runs (`StopOnly`) hide it.
    fn checkpoints(&self) -> Option<&dyn Checkpoints> {
        None
    }
}

/// A learner's checkpoints: the state to resume from, and where to save its state at step
/// boundaries (epochs of the online learners, cuts of the cutting-plane learner). The
/// learner serializes its own state to bytes; the store adds the file format, the
/// fingerprints of the data and settings and writes atomically
/// (`crate::checkpoint::FileCheckpoints`).
pub trait Checkpoints: Sync {
    /// The state saved by an earlier run of learner `family`, when this run resumes one;
    /// fails when the saved state is of another learner. The first learner that asks
    /// claims the store: a second one asking (an inner run of a larger fit) is refused.
    fn resume(&self, family: &str) -> crate::Result<Option<Vec<u8>>>;
    /// Called by a learner once it restored the state [`Checkpoints::resume`] gave, with the
    /// step that state is after (as the learner counts its steps); fails when the store read
    /// the state under another step (an edited checkpoint header).
    fn resumed_at(&self, step: u64) -> crate::Result<()>;
    /// Whether the state after step `step` (1 after the first) is to be saved.
    fn due(&self, step: u64) -> bool;
    /// Saves the state `state` of learner `family` after step `step`.
    fn save(&self, family: &str, step: u64, state: &[u8]) -> crate::Result<()>;
}

/// An observer with checkpoints: `observer` sees the run, `checkpoints` keeps its state.
pub struct Checkpointed<'a, O: ?Sized> {
    pub observer: &'a O,
    pub checkpoints: &'a dyn Checkpoints,
}

impl<O: Observer + ?Sized> Observer for Checkpointed<'_, O> {
    fn progress(&self, p: &Progress) -> Control {
        self.observer.progress(p)
    }

    fn should_stop(&self) -> bool {
        self.observer.should_stop()
    }

    fn checkpoints(&self) -> Option<&dyn Checkpoints> {
        Some(self.checkpoints)
    }
}

/// The observer that watches nothing and never stops a run.
impl Observer for () {}

/// A closure over [`Progress`] is an observer.
impl<F> Observer for F
where
    F: Fn(&Progress) -> Control + Sync,
{
    fn progress(&self, progress: &Progress) -> Control {
        self(progress)
    }
}

/// A flag that stops a run once set, from any thread (a Ctrl-C handler, a GUI button, a
/// Python `KeyboardInterrupt`).
#[derive(Debug, Default)]
pub struct StopFlag(AtomicBool);

impl StopFlag {
    pub fn new() -> StopFlag {
        StopFlag(AtomicBool::new(false))
    }

    /// Asks the run to stop.
    pub fn stop(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

impl Observer for StopFlag {
    fn progress(&self, _progress: &Progress) -> Control {
        if self.is_set() {
            Control::Stop
        } else {
            Control::Continue
        }
    }

    fn should_stop(&self) -> bool {
        self.is_set()
    }
}

/// Two observers at once: both see every step; either may stop the run.
#[derive(Debug, Clone, Copy)]
pub struct Both<'a, A: ?Sized, B: ?Sized>(pub &'a A, pub &'a B);

impl<A: Observer + ?Sized, B: Observer + ?Sized> Observer for Both<'_, A, B> {
    fn progress(&self, p: &Progress) -> Control {
        let a = self.0.progress(p);
        let b = self.1.progress(p);
        if a == Control::Stop || b == Control::Stop {
            Control::Stop
        } else {
            Control::Continue
        }
    }

    fn should_stop(&self) -> bool {
        self.0.should_stop() || self.1.should_stop()
    }

    fn checkpoints(&self) -> Option<&dyn Checkpoints> {
        self.0.checkpoints().or_else(|| self.1.checkpoints())
    }
}

/// Passes on an observer's requests to stop and nothing else: for the inner runs of a
/// larger one (the fits of a selection grid), whose steps are not the outer run's progress
/// but which must end when the user stops the outer run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StopOnly<'a, O: ?Sized>(pub &'a O);

impl<O: Observer + ?Sized> Observer for StopOnly<'_, O> {
    fn progress(&self, _progress: &Progress) -> Control {
        if self.0.should_stop() {
            Control::Stop
        } else {
            Control::Continue
        }
    }

    fn should_stop(&self) -> bool {
        self.0.should_stop()
    }
}

/// The observer of a grid search whose evaluations are fits (one spec on one fold): its
/// steps reach the observer as [`StepUnit::Fit`], so the command line's bar and Python's
/// `verbose=1` show them as the candidates' fits are shown; checkpoints hidden, as
/// [`StopOnly`].
pub(crate) struct FitSteps<'a, O: ?Sized>(pub &'a O);

impl<O: Observer + ?Sized> Observer for FitSteps<'_, O> {
    fn progress(&self, progress: &Progress) -> Control {
        self.0.progress(&Progress {
            unit: StepUnit::Fit,
            ..*progress
        })
    }

    fn should_stop(&self) -> bool {
        self.0.should_stop()
    }
}

/// How a run ended. Not an error: every status comes with a usable model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum RunStatus {
    /// A convergence criterion was met (lp-MKL's relative change; GOMP's improvement below
    /// eps or every kernel chosen).
    Converged,
    /// The planned steps were all done (the online learner's epochs, a fixed number of
    /// iterations, GOMP's largest number of kernels).
    Completed,
    /// A safety cap on iterations ended a run that would have gone on (not converged).
    IterationLimit,
    /// The time budget ran out.
    TimeBudget,
    /// The observer stopped the run.
    Cancelled,
}

impl RunStatus {
    /// The status as printed: `converged`, `completed`, `iteration limit`, ...
    pub fn describe(self) -> &'static str {
        match self {
            RunStatus::Converged => "converged",
            RunStatus::Completed => "completed",
            RunStatus::IterationLimit => "iteration limit",
            RunStatus::TimeBudget => "time budget",
            RunStatus::Cancelled => "cancelled",
        }
    }
}

/// One point of a run's trace.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TracePoint {
    pub step: u64,
    pub seconds: f64,
    pub objective: f64,
}

/// What a run did: how it ended, its steps, its time and the objective along the way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunInfo {
    pub status: RunStatus,
    pub unit: StepUnit,
    /// Steps done.
    pub steps: u64,
    /// Wall-clock seconds of the run (fitting only; data reading excluded).
    pub seconds: f64,
    /// The last objective reported, where the learner computes one.
    pub objective: Option<f64>,
    /// The objective after each step that reported one.
    pub trace: Vec<TracePoint>,
    /// Examples whose loss could not be computed, so that no step was taken on them (one
    /// count per epoch in which it happened; a tree CRF sentence without marginals).
    #[serde(default)]
    pub skipped_examples: u64,
}

/// Builds a [`RunInfo`] while a learner runs, and relays steps to the observer.
#[derive(Debug)]
pub(crate) struct RunRecorder {
    start: Instant,
    unit: StepUnit,
    total: Option<u64>,
    steps: u64,
    trace: Vec<TracePoint>,
    objective: Option<f64>,
    skipped_examples: u64,
}

impl RunRecorder {
    /// Starts the clock of a run of `total` planned steps (if known).
    pub(crate) fn new(unit: StepUnit, total: Option<u64>) -> RunRecorder {
        RunRecorder {
            start: Instant::now(),
            unit,
            total,
            steps: 0,
            trace: Vec::new(),
            objective: None,
            skipped_examples: 0,
        }
    }

    /// Counts examples whose loss could not be computed ([`RunInfo::skipped_examples`]).
    pub(crate) fn add_skipped(&mut self, examples: u64) {
        self.skipped_examples += examples;
    }

    /// Seconds since the start.
    pub(crate) fn seconds(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Records one more step (with its objective, if any) and tells the observer.
    pub(crate) fn step(&mut self, objective: Option<f64>, observer: &dyn Observer) -> Control {
        self.steps += 1;
        let seconds = self.seconds();
        if let Some(o) = objective {
            self.objective = Some(o);
            self.trace.push(TracePoint {
                step: self.steps,
                seconds,
                objective: o,
            });
        }
        observer.progress(&Progress {
            step: self.steps,
            total: self.total,
            unit: self.unit,
            objective,
            seconds,
        })
    }

    /// Sets the number of steps done without reporting them (a learner that counts its own
    /// iterations and reports only some of them).
    pub(crate) fn set_steps(&mut self, steps: u64) {
        self.steps = steps;
    }

    /// Sets the final objective (when it is computed after the last step).
    pub(crate) fn set_objective(&mut self, objective: f64) {
        self.objective = Some(objective);
    }

    /// The run's information with its final status.
    pub(crate) fn finish(self, status: RunStatus) -> RunInfo {
        RunInfo {
            status,
            unit: self.unit,
            steps: self.steps,
            seconds: self.seconds(),
            objective: self.objective,
            trace: self.trace,
            skipped_examples: self.skipped_examples,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn recorder_relays_steps_and_builds_the_trace() {
        let seen = AtomicU64::new(0);
        let obs = |p: &Progress| {
            seen.fetch_add(1, Ordering::SeqCst);
            if p.step == 3 {
                Control::Stop
            } else {
                Control::Continue
            }
        };
        let mut rec = RunRecorder::new(StepUnit::Epoch, Some(5));
        let mut status = RunStatus::Completed;
        for k in 0..5 {
            if rec.step(Some(10.0 - k as f64), &obs) == Control::Stop {
                status = RunStatus::Cancelled;
                break;
            }
        }
        let info = rec.finish(status);
        assert_eq!(info.status, RunStatus::Cancelled);
        assert_eq!(info.steps, 3);
        assert_eq!(seen.load(Ordering::SeqCst), 3);
        assert_eq!(info.objective, Some(8.0));
        assert_eq!(
            info.trace.iter().map(|t| t.objective).collect::<Vec<_>>(),
            vec![10.0, 9.0, 8.0]
        );
    }

    #[test]
    fn stop_flag_and_both() {
        let flag = StopFlag::new();
        let p = Progress {
            step: 1,
            total: None,
            unit: StepUnit::Iteration,
            objective: None,
            seconds: 0.0,
        };
        assert!(!flag.should_stop());
        assert_eq!(Observer::progress(&flag, &p), Control::Continue);
        let both = Both(&(), &flag);
        flag.stop();
        assert!(both.should_stop());
        assert_eq!(both.progress(&p), Control::Stop);
        assert!(!().should_stop());
    }
}
