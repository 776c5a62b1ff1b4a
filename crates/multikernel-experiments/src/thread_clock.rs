//! CPU time of the calling thread: the training time of a single-threaded fit measured
//! while other fits run next to it (a ridge grid fitted two at a time on two cores), where
//! wall time would count the waits for a core.

use std::time::Instant;

/// A stopwatch on the calling thread's CPU time (wall time where the platform has no
/// thread clock). Start and read it on the same thread.
#[derive(Debug, Clone, Copy)]
pub struct ThreadClock {
    cpu: Option<f64>,
    wall: Instant,
}

impl ThreadClock {
    pub fn start() -> ThreadClock {
        ThreadClock {
            cpu: thread_cpu_seconds(),
            wall: Instant::now(),
        }
    }

    /// Seconds since [`ThreadClock::start`].
    pub fn elapsed(&self) -> f64 {
        match (self.cpu, thread_cpu_seconds()) {
            (Some(a), Some(b)) => (b - a).max(0.0),
            _ => self.wall.elapsed().as_secs_f64(),
        }
    }
}

#[cfg(unix)]
fn thread_cpu_seconds() -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes into it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then_some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
}

#[cfg(not(unix))]
fn thread_cpu_seconds() -> Option<f64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Busy work shows up in the thread's clock; sleeping does not (on unix).
    #[test]
    fn counts_work_not_sleep() {
        let clock = ThreadClock::start();
        let mut x = 0u64;
        for i in 0..50_000_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(x);
        let busy = clock.elapsed();
        assert!(busy > 0.0, "busy loop measured {busy} s");
        let clock = ThreadClock::start();
        std::thread::sleep(std::time::Duration::from_millis(300));
        let slept = clock.elapsed();
        if cfg!(unix) {
            assert!(slept < 0.1, "sleep counted as {slept} s of CPU time");
        } else {
            assert!(slept >= 0.3);
        }
    }
}
