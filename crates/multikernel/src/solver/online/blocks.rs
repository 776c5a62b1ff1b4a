//! Alg. 1 of martins2011 over explicit feature groups only, fed block by block: the learner
//! behind training from mapped rows that are not stored (an in-memory table whose mapped rows
//! would not fit, a file read chunk by chunk, `partial_fit`).
//!
//! Every kernel has an explicit map `z_g` (a linear kernel, or an approximated one:
//! [`crate::kernel::feature_map`]), so the state is `O(sum_g D_g x outputs)` whatever the
//! number of rows, and a block of rows costs its own memory only. A block's rows are mapped
//! in parallel (the maps are pure), then its rounds run in order, sequentially as Alg. 1
//! says; [`BlockLearner::train_blocks`] maps the next block while the rounds of the current
//! one run, so the rounds (one dot product and one `axpy` per group for a binary task) and
//! the maps (a matrix-vector product and `D` cosines per group) overlap on two cores.
//!
//! The rounds are those of [`OnlineLearner`] on [`ExplicitVectorTask`]: the same rows in
//! the same order give the same iterates, to the last bit, as the stored-rows path.

use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::kernel::FeatureMap;
use crate::run::{Control, Observer, RunInfo, RunRecorder, RunStatus, StepUnit};
use crate::solver::online::engine::LOSS_CHUNK;
use crate::solver::online::{
    epoch_report, EpochReport, OnlineLearner, OnlineParams, OnlineState, OnlineSteps,
};
use crate::task::explicit_vector::{ExplicitVectorTask, MappedRows};
use crate::task::online::OnlineTask;
use crate::task::{Loss, VectorTask};

/// Rows per block when the caller does not say: mapped, a block of three 1,024-feature maps
/// takes 2,048 x 3,072 x 8 bytes = 50 MB.
pub(crate) const DEFAULT_BLOCK_ROWS: usize = 2048;

/// The shape of a vector task over explicit groups: its loss, outputs and bias.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TaskShape {
    pub loss: Loss,
    pub n_outputs: usize,
    pub bias: bool,
}

/// A block of training rows: standardized inputs and the targets the online task wants
/// (`+-1`, class index or scaled value: [`crate::task::targets::online_targets`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Block {
    pub x: Matrix,
    pub targets: Vec<f64>,
}

/// What a pass over blocks did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PassReport {
    /// Rounds run (rows seen).
    pub rounds: usize,
    /// Sum of the losses of those rounds, each taken before its update (progressive loss).
    pub loss_sum: f64,
    /// Whether the observer asked to stop (the pass was cut short at a block's round).
    pub stopped: bool,
}

impl PassReport {
    /// The average progressive loss (NaN before any round).
    pub fn average_loss(&self) -> f64 {
        self.loss_sum / self.rounds as f64
    }
}

fn lost() -> Error {
    Error::data("the learner's state was lost by an earlier error")
}

/// The learner's state between blocks: the maps, the task's shape, the hyper-parameters and
/// the state of Alg. 1 (module docs).
pub(crate) struct BlockLearner<'a> {
    maps: &'a [FeatureMap],
    names: Vec<String>,
    shape: TaskShape,
    params: OnlineParams,
    gamma: Option<f64>,
    state: Option<OnlineState>,
}

impl<'a> BlockLearner<'a> {
    /// A learner at zero. `names[g]` names the group of `maps[g]`; `gamma` is the
    /// projection radius of the whole data (`None`: no projection; see
    /// [`BlockLearner::projection_radius`]).
    pub(crate) fn new(
        maps: &'a [FeatureMap],
        names: Vec<String>,
        shape: TaskShape,
        params: OnlineParams,
        gamma: Option<f64>,
    ) -> Result<Self> {
        Self::with_state(maps, names, shape, params, gamma, None)
    }

    /// A learner that goes on from `state` (`None`: from zero). Fails when the state's
    /// groups are not those of the maps and the task.
    pub(crate) fn with_state(
        maps: &'a [FeatureMap],
        names: Vec<String>,
        shape: TaskShape,
        params: OnlineParams,
        gamma: Option<f64>,
        state: Option<OnlineState>,
    ) -> Result<Self> {
        if names.len() != maps.len() {
            return Err(Error::shape(
                "group names (one per map)",
                maps.len(),
                names.len(),
            ));
        }
        if maps.is_empty() {
            return Err(Error::param(
                "kernels",
                "none",
                "at least one kernel with an explicit map",
            ));
        }
        params.validate()?;
        params.reg.validate()?;
        let mut learner = BlockLearner {
            maps,
            names,
            shape,
            params,
            gamma,
            state: None,
        };
        // The zero state, from a learner over a one-row stand-in (which also checks the
        // regularizer).
        let stand_in = VectorTask::new(shape.loss, vec![0.0], shape.n_outputs, shape.bias);
        let rows: Vec<Matrix> = maps.iter().map(|m| Matrix::zeros(1, m.dim())).collect();
        let task =
            ExplicitVectorTask::new(&stand_in, MappedRows::Stored(&rows), learner.names.clone());
        let zero = OnlineLearner::new(&task, &[], learner.block_params())?.into_state();
        learner.state = Some(match state {
            None => zero,
            Some(s) => {
                if s.explicit_groups != zero.explicit_groups
                    || !s.kernel.is_empty()
                    || s.n_labels != zero.n_labels
                    || s.explicit.len() != zero.explicit.len()
                    || s.explicit
                        .iter()
                        .zip(&zero.explicit)
                        .any(|(a, b)| a.len() != b.len())
                {
                    return Err(Error::data(
                        "the saved learner state does not fit the kernels' maps and the task",
                    ));
                }
                s
            }
        });
        Ok(learner)
    }

    /// The projection radius `sqrt(2 L(0) / lambda)` of Alg. 1 (martins2010 App. E) for the
    /// targets `targets` (all of them, or a first block's), `None` when the params do not
    /// project.
    pub(crate) fn projection_radius(
        shape: TaskShape,
        params: &OnlineParams,
        targets: &[f64],
    ) -> Option<f64> {
        if !params.steps.projection || targets.is_empty() {
            return None;
        }
        let task = VectorTask::new(shape.loss, targets.to_vec(), shape.n_outputs, shape.bias);
        Some((2.0 * task.loss_at_zero() / params.lambda).sqrt())
            .filter(|g| g.is_finite() && *g > 0.0)
    }

    /// The state of Alg. 1 so far (an error after a block that failed midway).
    pub(crate) fn state(&self) -> Result<&OnlineState> {
        self.state.as_ref().ok_or_else(lost)
    }

    /// The state, consuming the learner.
    pub(crate) fn into_state(self) -> Result<OnlineState> {
        self.state.ok_or_else(lost)
    }

    /// The params of one pass over one block: in the block's order, once.
    fn block_params(&self) -> OnlineParams {
        OnlineParams {
            steps: OnlineSteps {
                epochs: 1,
                ..self.params.steps
            },
            shuffle: false,
            ..self.params.clone()
        }
    }

    /// `z_g` of every row of `x`, rows in parallel.
    pub(crate) fn map_block(maps: &[FeatureMap], x: &Matrix) -> Vec<Matrix> {
        maps.iter().map(|m| m.map_rows(x)).collect()
    }

    /// [`BlockLearner::map_block`] into `out`, reusing its storage.
    pub(crate) fn map_block_into(maps: &[FeatureMap], x: &Matrix, out: &mut Vec<Matrix>) {
        out.resize_with(maps.len(), || Matrix::zeros(0, 0));
        for (m, z) in maps.iter().zip(out.iter_mut()) {
            m.map_rows_into(x, z);
        }
    }

    /// The rounds of Alg. 1 over the rows of `block`, in order, with their mapped rows
    /// `mapped` (one matrix per map).
    pub(crate) fn rounds(
        &mut self,
        block: &Block,
        mapped: &[Matrix],
        observer: &dyn Observer,
    ) -> Result<PassReport> {
        if block.x.rows != block.targets.len() {
            return Err(Error::shape(
                "targets of a block (one per row)",
                block.x.rows,
                block.targets.len(),
            ));
        }
        if block.targets.is_empty() {
            return Ok(PassReport::default());
        }
        if mapped.len() != self.maps.len()
            || mapped
                .iter()
                .zip(self.maps)
                .any(|(z, m)| z.rows != block.targets.len() || z.cols != m.dim())
        {
            return Err(Error::data(
                "mapped rows that do not fit the block and the maps",
            ));
        }
        let task = VectorTask::new(
            self.shape.loss,
            block.targets.clone(),
            self.shape.n_outputs,
            self.shape.bias,
        );
        let with_features =
            ExplicitVectorTask::new(&task, MappedRows::Stored(mapped), self.names.clone());
        let state = self.state.take().ok_or_else(lost)?;
        let params = self.block_params();
        // Fails only on a state that does not fit (checked in `new`); the state is then lost
        // and the learner refuses further blocks.
        let mut learner =
            OnlineLearner::with_state(&with_features, &[], params, state)?.with_gamma(self.gamma);
        let stopped = learner.epoch_observed(observer) == Control::Stop;
        let (loss_sum, rounds) = learner.progressive_loss();
        self.state = Some(learner.into_state());
        Ok(PassReport {
            rounds,
            loss_sum,
            stopped,
        })
    }

    /// One pass over `blocks`, in order: block `k + 1` is taken from the iterator and mapped
    /// while the rounds of block `k` run (module docs). Stops at the first error of the
    /// iterator (the state then holds the rounds of the blocks before it) or when `observer`
    /// asks.
    pub(crate) fn train_blocks<I>(
        &mut self,
        blocks: I,
        observer: &dyn Observer,
    ) -> Result<PassReport>
    where
        I: Iterator<Item = Result<Block>> + Send,
    {
        self.train_blocks_from(blocks, PassReport::default(), observer, &mut |_, _| Ok(()))
    }

    /// [`BlockLearner::train_blocks`] going on with a pass that `report` began (a resumed
    /// one: its rounds and loss sum so far, to which the blocks' are added in order, so the
    /// sums are those of the pass that was never stopped); `after_block` sees the state
    /// and the pass's report after each block's rounds (to save a checkpoint) and may fail
    /// the pass.
    pub(crate) fn train_blocks_from<I>(
        &mut self,
        blocks: I,
        report: PassReport,
        observer: &dyn Observer,
        after_block: &mut dyn FnMut(&OnlineState, &PassReport) -> Result<()>,
    ) -> Result<PassReport>
    where
        I: Iterator<Item = Result<Block>> + Send,
    {
        let maps = self.maps;
        let mut blocks = blocks;
        let mut report = report;
        // Two sets of mapped rows, swapped block after block: allocated once per pass.
        let next = |it: &mut I, mut z: Vec<Matrix>| -> Result<Option<(Block, Vec<Matrix>)>> {
            match it.next() {
                None => Ok(None),
                Some(b) => {
                    let b = b?;
                    Self::map_block_into(maps, &b.x, &mut z);
                    Ok(Some((b, z)))
                }
            }
        };
        let mut spare = Vec::new();
        let mut current = next(&mut blocks, Vec::new())?;
        while let Some((block, mapped)) = current {
            let buffers = std::mem::take(&mut spare);
            let (done, upcoming) = rayon::join(
                || self.rounds(&block, &mapped, observer),
                || next(&mut blocks, buffers),
            );
            spare = mapped;
            let done = done?;
            report.rounds += done.rounds;
            report.loss_sum += done.loss_sum;
            if done.stopped || observer.should_stop() {
                report.stopped = true;
                return Ok(report);
            }
            after_block(self.state()?, &report)?;
            current = upcoming?;
        }
        Ok(report)
    }
}

impl BlockLearner<'_> {
    /// The losses of the current iterate on `block` (mapped rows `mapped`), summed over
    /// consecutive chunks of [`crate::solver::online::engine::LOSS_CHUNK`] rows
    /// ([`OnlineLearner::loss_chunk_sums`]).
    pub(crate) fn loss_chunk_sums(&self, block: &Block, mapped: &[Matrix]) -> Result<Vec<f64>> {
        if block.targets.is_empty() {
            return Ok(Vec::new());
        }
        let task = VectorTask::new(
            self.shape.loss,
            block.targets.clone(),
            self.shape.n_outputs,
            self.shape.bias,
        );
        let with_features =
            ExplicitVectorTask::new(&task, MappedRows::Stored(mapped), self.names.clone());
        let learner = OnlineLearner::with_state(
            &with_features,
            &[],
            self.block_params(),
            self.state()?.clone(),
        )?;
        Ok(learner.loss_chunk_sums())
    }

    /// The report after epoch `epoch` with the given average loss.
    pub(crate) fn report(
        &self,
        epoch: usize,
        average_loss: f64,
        seconds: f64,
    ) -> Result<EpochReport> {
        Ok(epoch_report(
            self.state()?,
            &self.params,
            epoch,
            average_loss,
            seconds,
        ))
    }

    /// Alg. 1 over the rows of `x` (standardized) with `targets`, for `params.epochs` epochs,
    /// `block_rows` rows mapped at a time: the rows in the order [`OnlineLearner::run`]
    /// visits them (shuffled each epoch by a ChaCha8 stream seeded with `params.seed`), so
    /// the run is the stored-rows run to the last bit, in the memory of one block. Each
    /// epoch's report holds the progressive loss; the last one, the loss of the final
    /// iterate over all rows (one more pass of the maps, rows in parallel), summed in the
    /// same order as [`OnlineLearner::average_loss`] when `block_rows` is a multiple of
    /// [`LOSS_CHUNK`]. `on_epoch` sees each report.
    pub(crate) fn run_in_memory(
        &mut self,
        x: &Matrix,
        targets: &[f64],
        block_rows: usize,
        observer: &dyn Observer,
        on_epoch: &mut dyn FnMut(&EpochReport),
    ) -> Result<RunInfo> {
        use rand::seq::SliceRandom;
        use rand::SeedableRng;
        if x.rows != targets.len() {
            return Err(Error::shape("targets (one per row)", x.rows, targets.len()));
        }
        let block_rows = block_rows.max(1);
        let epochs = self.params.steps.epochs;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(self.params.seed);
        let mut order: Vec<usize> = (0..x.rows).collect();
        let mut rec = RunRecorder::new(StepUnit::Epoch, Some(epochs as u64));
        let gather = |idx: &[usize]| Block {
            x: x.select_rows(idx),
            targets: idx.iter().map(|&i| targets[i]).collect(),
        };
        for epoch in 1..=epochs {
            if self.params.shuffle {
                order.shuffle(&mut rng);
            }
            let blocks = order.chunks(block_rows).map(|idx| Ok(gather(idx)));
            let pass = self.train_blocks(blocks, observer)?;
            if pass.stopped {
                return Ok(rec.finish(RunStatus::Cancelled));
            }
            let loss = if epoch == epochs {
                let ids: Vec<usize> = (0..x.rows).collect();
                let mut sums = Vec::new();
                for idx in ids.chunks(block_rows.div_ceil(LOSS_CHUNK) * LOSS_CHUNK) {
                    let block = gather(idx);
                    let mapped = Self::map_block(self.maps, &block.x);
                    sums.extend(self.loss_chunk_sums(&block, &mapped)?);
                }
                sums.iter().sum::<f64>() / x.rows as f64
            } else {
                pass.average_loss()
            };
            let rep = self.report(epoch, loss, rec.seconds())?;
            on_epoch(&rep);
            if rec.step(Some(rep.objective), observer) == Control::Stop {
                return Ok(rec.finish(RunStatus::Cancelled));
            }
        }
        Ok(rec.finish(RunStatus::Completed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{fit_all, KernelSpec};
    use crate::task::vector::default_loss;
    use crate::task::TaskKind;
    use rand::{Rng, SeedableRng};

    /// A small binary table whose label is the sign of `x0 x1`, and its rows' maps (a random
    /// Fourier map and a linear one).
    fn table() -> (Matrix, Vec<f64>, Vec<FeatureMap>) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let (n, d) = (300, 4);
        let x = Matrix::from_vec(n, d, (0..n * d).map(|_| rng.gen_range(-1.0..1.0)).collect());
        let y = (0..n)
            .map(|i| {
                if x.get(i, 0) * x.get(i, 1) > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        let specs: Vec<KernelSpec> = ["rbf:approx=rff,dim=40", "linear"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let maps = fit_all(&specs, &x, &[], 2)
            .unwrap()
            .iter()
            .map(|k| k.feature_map().unwrap())
            .collect();
        (x, y, maps)
    }

    /// Block by block (rows mapped ahead, several block sizes) is the stored-rows run of
    /// [`OnlineLearner::run`] to the last bit: the state after every epoch count, and the
    /// final objective when the block size is a multiple of the loss chunk.
    #[test]
    fn blocks_give_the_stored_rows_run() {
        let (x, y, maps) = table();
        let shape = TaskShape {
            loss: default_loss(TaskKind::Binary),
            n_outputs: 1,
            bias: true,
        };
        let names = vec!["rff".to_string(), "linear".to_string()];
        for averaging in [false, true] {
            let params = OnlineParams {
                lambda: 1e-2,
                steps: OnlineSteps {
                    epochs: 3,
                    averaging,
                    ..OnlineSteps::default()
                },
                ..OnlineParams::default()
            };
            let stored: Vec<Matrix> = maps.iter().map(|m| m.map_rows(&x)).collect();
            let task = VectorTask::new(shape.loss, y.clone(), 1, true);
            let with_features =
                ExplicitVectorTask::new(&task, MappedRows::Stored(&stored), names.clone());
            let learner = OnlineLearner::new(&with_features, &[], params.clone()).unwrap();
            let gamma = learner.gamma();
            let mut want_objective = 0.0;
            let (want, _) = learner
                .run(&(), &mut |rep, _| {
                    want_objective = rep.objective;
                    Control::Continue
                })
                .unwrap();
            for block_rows in [1, 50, 64, 1000] {
                let got_gamma = BlockLearner::projection_radius(shape, &params, &y);
                assert_eq!(got_gamma, gamma);
                let mut b =
                    BlockLearner::new(&maps, names.clone(), shape, params.clone(), got_gamma)
                        .unwrap();
                let mut objective = f64::NAN;
                let info = b
                    .run_in_memory(&x, &y, block_rows, &(), &mut |rep| {
                        objective = rep.objective
                    })
                    .unwrap();
                assert_eq!(info.status, RunStatus::Completed);
                assert_eq!(b.state().unwrap(), &want, "blocks of {block_rows}");
                if block_rows % LOSS_CHUNK == 0 {
                    assert_eq!(objective, want_objective, "blocks of {block_rows}");
                } else {
                    assert!((objective - want_objective).abs() < 1e-12 * want_objective.abs());
                }
            }
        }
    }

    /// A learner continued from a saved state (through JSON) goes on as if never stopped;
    /// a state of other maps is refused.
    #[test]
    fn a_saved_state_continues_the_run() {
        let (x, y, maps) = table();
        let shape = TaskShape {
            loss: default_loss(TaskKind::Binary),
            n_outputs: 1,
            bias: true,
        };
        let names = vec!["a".to_string(), "b".to_string()];
        let params = OnlineParams::default();
        let blocks = |r: std::ops::Range<usize>| {
            let idx: Vec<usize> = r.collect();
            idx.chunks(64)
                .map(|c| {
                    Ok(Block {
                        x: x.select_rows(c),
                        targets: c.iter().map(|&i| y[i]).collect(),
                    })
                })
                .collect::<Vec<_>>()
        };
        let mut whole =
            BlockLearner::new(&maps, names.clone(), shape, params.clone(), None).unwrap();
        let pass = whole.train_blocks(blocks(0..300).into_iter(), &()).unwrap();
        assert_eq!(pass.rounds, 300);
        let mut first =
            BlockLearner::new(&maps, names.clone(), shape, params.clone(), None).unwrap();
        first.train_blocks(blocks(0..128).into_iter(), &()).unwrap();
        let saved = serde_json::to_string(first.state().unwrap()).unwrap();
        let state: OnlineState = serde_json::from_str(&saved).unwrap();
        let mut second = BlockLearner::with_state(
            &maps,
            names.clone(),
            shape,
            params.clone(),
            None,
            Some(state),
        )
        .unwrap();
        second
            .train_blocks(blocks(128..300).into_iter(), &())
            .unwrap();
        assert_eq!(second.state().unwrap(), whole.state().unwrap());
        let state = second.into_state().unwrap();
        assert!(BlockLearner::with_state(
            &maps[..1],
            vec!["a".into()],
            shape,
            params,
            None,
            Some(state)
        )
        .is_err());
    }

    /// An error from the block source stops the pass with that error.
    #[test]
    fn a_bad_block_stops_the_pass() {
        let (x, y, maps) = table();
        let shape = TaskShape {
            loss: default_loss(TaskKind::Binary),
            n_outputs: 1,
            bias: true,
        };
        let mut b = BlockLearner::new(
            &maps,
            vec!["a".into(), "b".into()],
            shape,
            OnlineParams::default(),
            None,
        )
        .unwrap();
        let good = Block {
            x: x.select_rows(&[0, 1, 2]),
            targets: y[..3].to_vec(),
        };
        let blocks = vec![Ok(good), Err(Error::data("line 7: not a number"))];
        let err = b.train_blocks(blocks.into_iter(), &()).unwrap_err();
        assert!(err.to_string().contains("line 7"));
        assert_eq!(b.state().unwrap().t, 3);
    }
}
