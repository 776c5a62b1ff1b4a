//! Training the online learner from a table file larger than memory (issue 17): the file is
//! read chunk by chunk ([`crate::data::stream::TableStream`]), never whole.
//!
//! 1. A first pass ([`crate::data::stream::summarize`]) parses every row (a malformed row
//!    stops the fit with the file and line before any training, so no model is written),
//!    counts the rows (for `lambda = 1 / (C n)`), collects the classes and the
//!    standardization statistics of the whole file.
//! 2. The kernels are fitted on the first chunk (standardized): the Gaussian width by the
//!    median heuristic on its rows. Every kernel must have an explicit map (linear kernels,
//!    `approx=`): [`IncrementalFit`]. None given: the streaming dictionary
//!    ([`crate::kernel::streaming_dictionary`]: three Gaussian widths as random Fourier
//!    features). No built-in selection runs on a stream: C is 1 unless given.
//! 3. Each epoch reads the file again and feeds its rows through a shuffle buffer: the
//!    first `shuffle_rows` rows fill it; then each new row takes the place of a uniformly
//!    drawn one, which goes to training; at the end the rest leaves in random order (seeded
//!    by the seed and the epoch). Rows far apart in the file are mixed only as far as the
//!    buffer reaches: a file sorted by class needs a buffer of the order of the file, or a
//!    shuffled file.
//!
//! Memory: the model, one chunk of parsed rows, the shuffle buffer (`shuffle_rows x d`
//! values) and two blocks of mapped rows (`crate::solver::online::blocks`), whatever the
//! number of rows in the file. The model's final objective is lambda Omega plus the last
//! epoch's progressive loss (each row's loss before its update).
//!
//! Checkpoints ([`Observer::checkpoints`], family `CHECKPOINT_FAMILY`) are taken between
//! blocks of rows, inside an epoch: the step is the number of `chunk_rows` rows trained
//! since the first epoch began (over all epochs), and a save follows the block during which
//! a step the store asks for is reached (not after the last block of the run). A checkpoint
//! holds the fit (its setup from the first pass and the first chunk: classes,
//! standardization, the kernels with the seeds of their random maps; and the state of
//! Alg. 1 after the blocks trained), the epoch, the blocks of it trained, the pass's rounds
//! and loss sum so far and the earlier epochs' losses. A resumed run skips the first pass
//! (the data's fingerprint is the saved run's) and replays the epoch up to the saved block:
//! it reads the file from the start of the epoch through the same seeded shuffle buffer,
//! dropping the blocks already trained (parsing only: no feature map, no round), so the
//! blocks that follow are those of the run that was never stopped.

use super::fitted::Fitted;
pub use super::fitted::StreamReport;
use crate::data::stream::{summarize, RawChunk, TableStream};
use crate::data::{Dataset, Format, TargetKind, Targets};
use crate::error::{Error, Result};
use crate::estimator::spec::{Learner, LearnerSpec};
use crate::model::Model;
use crate::pipeline::table::incremental::{Given, IncrementalFit};
use crate::pipeline::table::vector::VectorFitConfig;
use crate::run::{Control, Observer, RunRecorder, RunStatus, StepUnit};
use crate::solver::online::blocks::PassReport;
use crate::solver::online::blocks::{Block, DEFAULT_BLOCK_ROWS};
use crate::solver::online::OnlineParams;
use crate::solver::online::OnlineState;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The learner family name of a streamed fit's checkpoints.
pub(crate) const CHECKPOINT_FAMILY: &str = "stream";

/// A streamed fit between two blocks, as saved (module docs).
#[derive(Serialize)]
struct SavedRef<'a> {
    fit: &'a IncrementalFit,
    epoch: usize,
    blocks: u64,
    rounds: usize,
    loss_sum: f64,
    epoch_losses: &'a [f64],
}

/// A [`SavedRef`] read back.
#[derive(Deserialize)]
struct Saved {
    fit: IncrementalFit,
    epoch: usize,
    blocks: u64,
    rounds: usize,
    loss_sum: f64,
    epoch_losses: Vec<f64>,
}

/// How a file is streamed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamOptions {
    /// Rows parsed at a time.
    pub chunk_rows: usize,
    /// Rows held by the shuffle buffer (module docs); 0 or 1: the file's order.
    pub shuffle_rows: usize,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            chunk_rows: 65_536,
            shuffle_rows: 1 << 18,
        }
    }
}

/// Trains the online learner of `spec` (a table task) on the file `path` read chunk by
/// chunk (module docs). The model is returned only when every epoch ran; a stop from
/// `observer` returns the model reached so far with status cancelled, as [`super::fit()`].
pub(crate) fn fit_stream(
    path: &Path,
    format: Option<Format>,
    spec: &LearnerSpec,
    opts: &StreamOptions,
    observer: &dyn Observer,
) -> Result<(Fitted, StreamReport)> {
    let checked = spec.check()?;
    let task = checked
        .spec()
        .task
        .vector_kind()
        .ok_or_else(|| Error::unsupported("training from a stream takes a table task"))?;
    let Learner::Online(o) = &checked.spec().learner else {
        return Err(Error::unsupported(format!(
            "training from a stream runs the online learner, not {}",
            checked.spec().learner.kind()
        )));
    };
    if opts.chunk_rows == 0 {
        return Err(Error::param("chunk-rows", 0, "at least 1"));
    }
    if opts.shuffle_rows == 0 {
        return Err(Error::param(
            "shuffle-rows",
            0,
            "at least 1 (1: the file's order)",
        ));
    }
    let target = if task == crate::task::TaskKind::Regression {
        TargetKind::Real
    } else {
        TargetKind::Classes
    };
    let ck = observer.checkpoints();
    let resumed: Option<Saved> = ck
        .map(|c| c.resume(CHECKPOINT_FAMILY))
        .transpose()?
        .flatten()
        .map(|bytes| crate::checkpoint::decode(CHECKPOINT_FAMILY, &bytes))
        .transpose()?;
    let started = std::time::Instant::now();
    let mut stream = TableStream::open(path, format, target, None)?;
    // The first pass (or, resuming, the saved run's: the same data) gives the rows, the
    // classes and the standardization.
    let summary = match &resumed {
        None => Some(summarize(&mut stream, opts.chunk_rows)?),
        Some(_) => None,
    };
    let scan_seconds = started.elapsed().as_secs_f64();
    let n = match (&summary, &resumed) {
        (Some(s), _) => s.rows,
        (None, Some(r)) => r.fit.pass_rows as usize,
        (None, None) => unreachable!("a summary or a checkpoint"),
    };
    let loss = o.loss.expect("check() sets the loss").vector_loss(task)?;
    let params = OnlineParams {
        shuffle: opts.shuffle_rows > 1,
        ..checked.online_params(n)?
    };
    let lambda = params.lambda;
    let epochs = params.steps.epochs;
    let cfg = VectorFitConfig {
        task,
        loss,
        kernels: checked.stream_kernels(),
        params,
        bias: checked.spec().bias,
        standardize: checked.spec().standardize,
        memory: checked.spec().memory,
        explicit_linear: true,
    };
    let classes = match (&summary, &resumed) {
        (Some(s), _) => s.classes.clone(),
        (None, Some(r)) => {
            (task != crate::task::TaskKind::Regression).then(|| r.fit.classes.clone())
        }
        (None, None) => None,
    };
    let read = |stream: &mut TableStream| -> Result<Option<Dataset>> {
        let Some(chunk) = stream.next_chunk(opts.chunk_rows)? else {
            return Ok(None);
        };
        Ok(Some(dataset(stream, chunk, classes.as_deref())?))
    };
    let mut rec = RunRecorder::new(StepUnit::Epoch, Some(epochs as u64));
    let mut epoch_losses = Vec::new();
    let mut first_epoch = 1;
    let mut skip_blocks = 0;
    let mut begun = PassReport::default();
    let mut fit = match (summary, resumed) {
        (Some(summary), _) => {
            stream.rewind()?;
            let first = read(&mut stream)?.ok_or_else(|| Error::data("the file has no rows"))?;
            let given = Given {
                classes: summary.classes.clone(),
                standardizer: cfg.standardize.then(|| summary.standardizer.clone()),
                target_scaler: summary.target_scaler.clone(),
            };
            let mut fit = IncrementalFit::start(&cfg, first.view(), given)?;
            fit.pass_rows = n as u64;
            fit
        }
        (None, Some(r)) => {
            if r.fit.params != cfg.params
                || r.fit.task != task
                || r.fit.loss != loss
                || r.epoch == 0
                || r.epoch > epochs
                || r.epoch_losses.len() + 1 != r.epoch
                || r.rounds > n
            {
                return Err(Error::data(
                    "the checkpoint's streamed fit does not fit this run's settings",
                ));
            }
            if let Some(c) = ck {
                // The checkpoint step: `chunk_rows` rows trained since the run began.
                let rows = (r.epoch as u64 - 1) * n as u64 + r.rounds as u64;
                c.resumed_at(rows / opts.chunk_rows as u64)?;
            }
            first_epoch = r.epoch;
            skip_blocks = r.blocks;
            begun = PassReport {
                rounds: r.rounds,
                loss_sum: r.loss_sum,
                stopped: false,
            };
            epoch_losses = r.epoch_losses;
            rec.set_steps(first_epoch as u64 - 1);
            r.fit
        }
        (None, None) => unreachable!("a summary or a checkpoint"),
    };
    // Checkpoint steps: `chunk_rows` rows trained since the run began (module docs).
    let chunk = opts.chunk_rows as u64;
    let run_rows = n as u64 * epochs as u64;
    let mut status = RunStatus::Completed;
    for epoch in first_epoch..=epochs {
        stream.rewind()?;
        let seed = cfg.params.seed ^ (epoch as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let source = {
            let fit = &fit;
            let stream = &mut stream;
            std::iter::from_fn(move || match read(stream) {
                Ok(None) => None,
                Ok(Some(ds)) => Some(fit.block(ds.view())),
                Err(e) => Some(Err(e)),
            })
        };
        let mut blocks = ShuffleBuffer::new(source, opts.shuffle_rows, DEFAULT_BLOCK_ROWS, seed);
        let (skip, pass) = if epoch == first_epoch {
            (skip_blocks, begun)
        } else {
            (0, PassReport::default())
        };
        // Resuming: the blocks the saved run trained in this epoch are read and dropped.
        for _ in 0..skip {
            match blocks.next() {
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => {
                    return Err(Error::data(
                        "the checkpoint is past the end of the epoch: not this file's run",
                    ))
                }
            }
        }
        let before = (epoch as u64 - 1) * n as u64;
        let mut done_blocks = skip;
        let mut last_step = (before + pass.rounds as u64) / chunk;
        let mut save = |state: &OnlineState, so_far: &PassReport| -> Result<()> {
            done_blocks += 1;
            let Some(c) = ck else { return Ok(()) };
            let rows = before + so_far.rounds as u64;
            let step = rows / chunk;
            let due = (last_step + 1..=step).any(|s| c.due(s));
            last_step = step;
            if !due || rows >= run_rows {
                return Ok(());
            }
            let mut at = fit.clone();
            at.state = state.clone();
            let saved = SavedRef {
                fit: &at,
                epoch,
                blocks: done_blocks,
                rounds: so_far.rounds,
                loss_sum: so_far.loss_sum,
                epoch_losses: &epoch_losses,
            };
            c.save(CHECKPOINT_FAMILY, step, &crate::checkpoint::encode(&saved)?)
        };
        let mut trained = fit.clone();
        let pass = trained.train_blocks_from(blocks, pass, observer, &mut save)?;
        fit = trained;
        if pass.stopped {
            status = RunStatus::Cancelled;
            break;
        }
        epoch_losses.push(pass.average_loss());
        if rec.step(fit.model()?.training.final_objective, observer) == Control::Stop {
            status = RunStatus::Cancelled;
            break;
        }
    }
    let model = fit.model()?;
    Ok((
        Fitted {
            model: Model::KernelMachine(model),
            run: rec.finish(status),
            lambda,
            path_choice: None,
            notes: Vec::new(),
            selection: None,
            stream: None,
        },
        StreamReport {
            rows: n,
            scan_seconds,
            epoch_losses,
        },
    ))
}

/// A chunk of the stream as a table (targets as the in-memory reader makes them).
fn dataset(stream: &TableStream, chunk: RawChunk, classes: Option<&[String]>) -> Result<Dataset> {
    let targets: Targets = stream.targets(&chunk, classes)?;
    Ok(Dataset {
        x: chunk.x,
        targets,
        feature_names: stream.feature_names().to_vec(),
    })
}

/// The shuffle buffer of the module docs over a source of blocks, giving blocks of
/// `block_rows` rows.
struct ShuffleBuffer<I> {
    source: I,
    capacity: usize,
    block_rows: usize,
    rng: rand_chacha::ChaCha8Rng,
    /// The buffered rows (row-major) and their targets.
    pool: Vec<f64>,
    pool_targets: Vec<f64>,
    cols: Option<usize>,
    /// Rows ready to leave, in order.
    out: Vec<f64>,
    out_targets: Vec<f64>,
    drained: bool,
}

impl<I: Iterator<Item = Result<Block>>> ShuffleBuffer<I> {
    fn new(source: I, capacity: usize, block_rows: usize, seed: u64) -> Self {
        ShuffleBuffer {
            source,
            capacity,
            block_rows: block_rows.max(1),
            rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed),
            pool: Vec::new(),
            pool_targets: Vec::new(),
            cols: None,
            out: Vec::new(),
            out_targets: Vec::new(),
            drained: false,
        }
    }

    /// Takes in one row: straight out without a buffer, into the buffer while it fills,
    /// else in place of a drawn row, which goes out.
    fn push(&mut self, row: &[f64], target: f64) {
        let d = row.len();
        if self.capacity <= 1 {
            self.out.extend_from_slice(row);
            self.out_targets.push(target);
            return;
        }
        let len = self.pool_targets.len();
        if len < self.capacity {
            self.pool.extend_from_slice(row);
            self.pool_targets.push(target);
            return;
        }
        let j = self.rng.gen_range(0..len);
        self.out.extend_from_slice(&self.pool[j * d..(j + 1) * d]);
        self.out_targets.push(self.pool_targets[j]);
        self.pool[j * d..(j + 1) * d].copy_from_slice(row);
        self.pool_targets[j] = target;
    }

    /// The next `block_rows` rows ready to leave (fewer at the end).
    fn take(&mut self, all: bool) -> Option<Block> {
        let d = self.cols?;
        let ready = self.out_targets.len();
        if ready == 0 || (!all && ready < self.block_rows) {
            return None;
        }
        let k = ready.min(self.block_rows);
        let x: Vec<f64> = self.out.drain(..k * d).collect();
        let targets: Vec<f64> = self.out_targets.drain(..k).collect();
        Some(Block {
            x: crate::data::Matrix::from_vec(k, d, x),
            targets,
        })
    }
}

impl<I: Iterator<Item = Result<Block>>> Iterator for ShuffleBuffer<I> {
    type Item = Result<Block>;

    fn next(&mut self) -> Option<Result<Block>> {
        loop {
            if let Some(b) = self.take(self.drained) {
                return Some(Ok(b));
            }
            if self.drained {
                return None;
            }
            match self.source.next() {
                Some(Err(e)) => {
                    self.drained = true;
                    self.out.clear();
                    self.out_targets.clear();
                    self.pool.clear();
                    self.pool_targets.clear();
                    return Some(Err(e));
                }
                Some(Ok(block)) => {
                    let d = block.x.cols;
                    if self.cols.is_some_and(|c| c != d) {
                        return Some(Err(Error::shape("columns of a chunk", self.cols?, d)));
                    }
                    self.cols = Some(d);
                    for (i, &t) in block.targets.iter().enumerate() {
                        self.push(block.x.row(i), t);
                    }
                }
                None => {
                    // The rest of the buffer leaves in random order (Fisher-Yates).
                    let d = self.cols.unwrap_or(0);
                    let len = self.pool_targets.len();
                    for i in (1..len).rev() {
                        let j = self.rng.gen_range(0..=i);
                        if i != j {
                            self.pool_targets.swap(i, j);
                            for c in 0..d {
                                self.pool.swap(i * d + c, j * d + c);
                            }
                        }
                    }
                    self.out.append(&mut self.pool);
                    self.out_targets.append(&mut self.pool_targets);
                    self.drained = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(n: usize, size: usize) -> Vec<Result<Block>> {
        let ids: Vec<usize> = (0..n).collect();
        ids.chunks(size)
            .map(|c| {
                Ok(Block {
                    x: crate::data::Matrix::from_vec(
                        c.len(),
                        2,
                        c.iter().flat_map(|&i| [i as f64, -(i as f64)]).collect(),
                    ),
                    targets: c.iter().map(|&i| i as f64).collect(),
                })
            })
            .collect()
    }

    /// Every row leaves exactly once with its target, in blocks of the asked size; with a
    /// buffer the order changes (seeded), without one it is the source's.
    #[test]
    fn the_shuffle_buffer_keeps_every_row_once() {
        for (capacity, n) in [(0, 50), (1, 50), (8, 50), (100, 50), (16, 1000)] {
            let out: Vec<Block> = ShuffleBuffer::new(blocks(n, 7).into_iter(), capacity, 10, 3)
                .collect::<Result<_>>()
                .unwrap();
            assert!(out.iter().rev().skip(1).all(|b| b.targets.len() == 10));
            let mut seen: Vec<f64> = out.iter().flat_map(|b| b.targets.clone()).collect();
            for b in &out {
                for (i, t) in b.targets.iter().enumerate() {
                    assert_eq!(b.x.row(i), &[*t, -t]);
                }
            }
            let in_order = seen.windows(2).all(|w| w[0] < w[1]);
            assert_eq!(in_order, capacity <= 1, "capacity {capacity}");
            seen.sort_by(f64::total_cmp);
            assert_eq!(seen, (0..n).map(|i| i as f64).collect::<Vec<_>>());
        }
    }

    /// An error of the source comes out, and nothing after it.
    #[test]
    fn the_shuffle_buffer_passes_errors_on() {
        let mut src = blocks(30, 10);
        src.insert(2, Err(Error::data("line 21: bad")));
        let out: Vec<Result<Block>> = ShuffleBuffer::new(src.into_iter(), 100, 10, 1).collect();
        assert_eq!(out.len(), 1);
        assert!(out[0].as_ref().unwrap_err().to_string().contains("line 21"));
    }
}
