//! Independent fits of a reproduction (folds, rows, grid points) as parallel jobs on the
//! rayon pool: at most [`lanes`] at once (the pool's threads, fewer when the jobs' estimated
//! peaks do not fit the memory limit side by side), results in job order whatever order they
//! finish in, progress lines forwarded whole to the caller's callback on the calling thread.
//!
//! Each lane is one rayon task that takes the next job index in order until none is left, so
//! no job waits for memory inside the pool (a blocked pool thread could hold, lower on its
//! stack, the very job it waits for) and the fits' own parallel parts (Grams, decoding) run on
//! the same pool: a thread whose job waits for a stolen piece helps with the other jobs'
//! pieces instead of starting another job. Every job computes what it computed when the jobs
//! ran one after another, so the numbers do not depend on the number of threads.

use crate::thread_clock::ThreadClock;
use multikernel::error::Result;
use multikernel::kernel::MemoryLimit;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::Instant;

/// How many of `n_jobs` jobs run at once: the pool's threads, at most `n_jobs`, and at most
/// as many as fit `limit` when each may hold `peak_bytes` at its peak (at least 1).
pub fn lanes(n_jobs: usize, peak_bytes: usize, limit: &MemoryLimit) -> usize {
    let by_memory = limit.bytes.checked_div(peak_bytes).unwrap_or(usize::MAX);
    rayon::current_num_threads()
        .min(n_jobs)
        .min(by_memory)
        .max(1)
}

/// What a job sees: its progress lines and its stopwatch.
pub struct JobCtx<'a> {
    log: &'a mut dyn FnMut(&str),
    concurrent: bool,
}

impl JobCtx<'_> {
    /// Sends one progress line (printed whole, in the order the lines are sent).
    pub fn log(&mut self, line: &str) {
        (self.log)(line)
    }

    /// Whether other jobs may run beside this one.
    pub fn concurrent(&self) -> bool {
        self.concurrent
    }

    /// A stopwatch for the job's own time: wall time when the jobs run one at a time, the
    /// job thread's CPU time ([`ThreadClock`]) when several run at once, where wall time would
    /// count the waits for a core.
    pub fn clock(&self) -> JobClock {
        JobClock::start(self.concurrent)
    }
}

/// See [`JobCtx::clock`].
#[derive(Debug, Clone, Copy)]
pub enum JobClock {
    Wall(Instant),
    Thread(ThreadClock),
}

impl JobClock {
    pub fn start(thread_time: bool) -> JobClock {
        if thread_time {
            JobClock::Thread(ThreadClock::start())
        } else {
            JobClock::Wall(Instant::now())
        }
    }

    /// Seconds since [`JobClock::start`].
    pub fn elapsed(&self) -> f64 {
        match self {
            JobClock::Wall(t) => t.elapsed().as_secs_f64(),
            JobClock::Thread(c) => c.elapsed(),
        }
    }
}

/// Runs `run` on every job, `lanes` at once, and returns the results in job order. The first
/// error in job order is returned (jobs not yet started when one fails are skipped). With one
/// lane the jobs run one after another on the calling thread, exactly as a plain loop. Called
/// from outside the rayon pool (the command line), the lanes run on the global pool and the
/// progress lines are forwarded as they come; called from inside a pool (`install`), the
/// lanes run on that pool and the lines are forwarded when every job is done.
pub fn run_jobs<J, T, F>(
    jobs: &[J],
    lanes: usize,
    progress: &mut dyn FnMut(&str),
    run: F,
) -> Result<Vec<T>>
where
    J: Sync,
    T: Send,
    F: Fn(&J, &mut JobCtx) -> Result<T> + Sync,
{
    let lanes = lanes.min(jobs.len());
    if lanes <= 1 {
        let mut ctx = JobCtx {
            log: progress,
            concurrent: false,
        };
        return jobs.iter().map(|j| run(j, &mut ctx)).collect();
    }
    let shared = Shared {
        jobs,
        run: &run,
        next: AtomicUsize::new(0),
        failed: AtomicBool::new(false),
        slots: jobs.iter().map(|_| Mutex::new(None)).collect(),
    };
    let (tx, rx) = mpsc::channel::<String>();
    if rayon::current_thread_index().is_some() {
        // Inside a pool: this thread waits in the scope (and works meanwhile).
        rayon::scope(|rs| shared.spawn_lanes(rs, lanes, &tx));
        drop(tx);
        for line in rx.try_iter() {
            progress(&line);
        }
    } else {
        // The lanes go to the global pool; this thread forwards their lines meanwhile.
        rayon::in_place_scope(|rs| {
            shared.spawn_lanes(rs, lanes, &tx);
            drop(tx);
            for line in rx {
                progress(&line);
            }
        });
    }
    let mut out = Vec::with_capacity(jobs.len());
    for slot in shared.slots {
        match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(Ok(t)) => out.push(t),
            Some(Err(e)) => return Err(e),
            None => {}
        }
    }
    if out.len() == jobs.len() {
        Ok(out)
    } else {
        Err(multikernel::error::Error::Numerical(
            "internal: a parallel job neither finished nor failed".into(),
        ))
    }
}

/// What the lanes of [`run_jobs`] share: the jobs, the next job's index, whether one failed,
/// and a slot per job for its result.
struct Shared<'a, J, T, F> {
    jobs: &'a [J],
    run: &'a F,
    next: AtomicUsize,
    failed: AtomicBool,
    slots: Vec<Mutex<Option<Result<T>>>>,
}

impl<'a, J, T, F> Shared<'a, J, T, F>
where
    J: Sync,
    T: Send,
    F: Fn(&J, &mut JobCtx) -> Result<T> + Sync,
{
    /// Spawns `lanes` tasks, each taking the next job in order until none is left (or one
    /// failed).
    fn spawn_lanes<'s>(&'s self, rs: &rayon::Scope<'s>, lanes: usize, tx: &mpsc::Sender<String>) {
        for _ in 0..lanes {
            let tx = tx.clone();
            rs.spawn(move |_| {
                let mut send = |l: &str| {
                    // The receiver outlives the senders.
                    let _ = tx.send(l.to_string());
                };
                let mut ctx = JobCtx {
                    log: &mut send,
                    concurrent: true,
                };
                while !self.failed.load(Ordering::SeqCst) {
                    let i = self.next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = self.jobs.get(i) else { break };
                    let r = (self.run)(job, &mut ctx);
                    if r.is_err() {
                        self.failed.store(true, Ordering::SeqCst);
                    }
                    *self.slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                }
            });
        }
    }
}

/// Test helpers: a reproduction run inside a pool of a given size, and its rows without
/// their timing fields.
#[cfg(test)]
pub(crate) mod testing {
    use crate::Report;
    use serde_json::Value;

    /// `f` inside a fresh rayon pool of `threads` threads.
    pub(crate) fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a rayon pool")
            .install(f)
    }

    /// The rows as JSON, without the fields that hold timings (names ending in `seconds` or
    /// `_s`, as `benches/baseline/compare.py` leaves out).
    pub(crate) fn untimed(rep: &Report) -> Vec<Value> {
        rep.rows
            .iter()
            .map(|r| {
                let mut v = serde_json::to_value(r).expect("rows are JSON");
                if let Value::Object(m) = &mut v {
                    m.retain(|k, _| !(k.ends_with("seconds") || k.ends_with("_s")));
                }
                v
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use multikernel::error::Error;

    /// Results come back in job order, every progress line arrives whole, and jobs with
    /// inner parallel parts give what a plain loop gives, with 1, 2 and 4 lanes.
    #[test]
    fn results_in_order_like_a_loop() {
        let jobs: Vec<u64> = (0..13).collect();
        let work = |&j: &u64, ctx: &mut JobCtx| -> Result<Vec<f64>> {
            use rayon::prelude::*;
            ctx.log(&format!("job {j} started"));
            let v: Vec<f64> = (0..2000u64)
                .into_par_iter()
                .map(|i| ((i * 7919 + j) as f64).sqrt().sin())
                .collect();
            ctx.log(&format!("job {j} done"));
            Ok(v)
        };
        let expected: Vec<Vec<f64>> = jobs
            .iter()
            .map(|j| {
                (0..2000u64)
                    .map(|i| ((i * 7919 + j) as f64).sqrt().sin())
                    .collect()
            })
            .collect();
        for lanes in [1, 2, 4] {
            let mut lines = Vec::new();
            let got = run_jobs(&jobs, lanes, &mut |l| lines.push(l.to_string()), work).unwrap();
            assert_eq!(got, expected, "{lanes} lanes");
            assert_eq!(lines.len(), 2 * jobs.len());
            for j in &jobs {
                let a = lines.iter().position(|l| *l == format!("job {j} started"));
                let b = lines.iter().position(|l| *l == format!("job {j} done"));
                assert!(a.unwrap() < b.unwrap(), "{lines:?}");
            }
            if lanes == 1 {
                // One lane: the plain loop, job after job.
                assert!(lines
                    .chunks(2)
                    .enumerate()
                    .all(|(j, p)| p[0] == format!("job {j} started")));
            }
        }
    }

    /// The first error in job order is returned, whichever failed first in time.
    #[test]
    fn first_error_in_job_order() {
        let jobs: Vec<usize> = (0..8).collect();
        let r = run_jobs(&jobs, 4, &mut |_| {}, |&j, _| {
            if j == 5 || j == 6 {
                Err(Error::data(format!("job {j} failed")))
            } else {
                Ok(j)
            }
        });
        let msg = r.unwrap_err().to_string();
        // Job 6 may fail before job 5 starts; job 5 then is skipped or fails: either way
        // no result is returned, and the error is one of theirs.
        assert!(msg.contains("job 5") || msg.contains("job 6"), "{msg}");
        let one = run_jobs(&jobs, 1, &mut |_| {}, |&j, _| {
            if j >= 5 {
                Err(Error::data(format!("job {j} failed")))
            } else {
                Ok(j)
            }
        });
        assert!(one.unwrap_err().to_string().contains("job 5"));
    }

    /// The memory limit caps the lanes; a job larger than the limit still runs (alone).
    #[test]
    fn lanes_follow_the_memory_limit() {
        let threads = rayon::current_num_threads();
        let limit = MemoryLimit { bytes: 1000 };
        assert_eq!(lanes(10, 400, &limit), threads.min(2));
        assert_eq!(lanes(10, 5000, &limit), 1);
        assert_eq!(lanes(10, 0, &limit), threads.min(10));
        assert_eq!(lanes(1, 1, &limit), 1);
        assert_eq!(lanes(0, 1, &limit), 1);
    }
}
