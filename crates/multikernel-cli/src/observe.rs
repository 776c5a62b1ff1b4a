//! What the command line shows while a learner runs, and Ctrl-C: a progress bar on standard
//! error (hidden when it is not a terminal) fed by the library's observer, and a SIGINT
//! handler that asks the run to stop at its next step (a second Ctrl-C ends the process).

use indicatif::{ProgressBar, ProgressStyle};
use multikernel::run::{Control, Observer, Progress};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the SIGINT handler.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the SIGINT handler: the first Ctrl-C sets [`interrupted`], the second exits at
/// once with status 130.
pub fn catch_interrupt() {
    #[cfg(unix)]
    {
        extern "C" fn on_sigint(_: libc::c_int) {
            if INTERRUPTED.swap(true, Ordering::SeqCst) {
                // SAFETY: _exit is async-signal-safe.
                unsafe { libc::_exit(130) };
            }
        }
        // SAFETY: the handler only touches an atomic and calls an async-signal-safe function.
        unsafe {
            libc::signal(
                libc::SIGINT,
                on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

/// Whether Ctrl-C was pressed since [`catch_interrupt`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// A progress bar over a run's steps that also stops the run on Ctrl-C.
pub struct Bar {
    bar: ProgressBar,
}

impl Bar {
    pub fn new() -> Bar {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {msg} [{elapsed}]")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        Bar { bar }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Observer for Bar {
    fn progress(&self, p: &Progress) -> Control {
        if let Some(t) = p.total {
            self.bar.set_length(t);
        }
        self.bar.set_position(p.step);
        let of = p.total.map_or(String::new(), |t| format!("/{t}"));
        let obj = p
            .objective
            .map_or(String::new(), |o| format!(" objective {o:.5}"));
        self.bar
            .set_message(format!("{} {}{of}{obj}", p.unit.name(), p.step));
        if interrupted() {
            Control::Stop
        } else {
            Control::Continue
        }
    }

    fn should_stop(&self) -> bool {
        interrupted()
    }
}
