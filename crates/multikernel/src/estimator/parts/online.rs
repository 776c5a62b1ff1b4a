//! The online learner (SPOM: Alg. 1 of martins2011 over the templates' groups) over parts of
//! the training sentences held apart, by iterative parameter mixing (McDonald, Hall & Mann
//! 2010, Fig. 3), the option beside the cutting plane's exact fit over parts:
//!
//! 1. the loop's settings ([`OnlinePlan::new`]: `lambda = 1 / (C n)` over all `n`
//!    sentences) and `L(0)` of all the data, from each part's total
//!    ([`CompiledPart::loss_at_zero_total`], [`OnlinePlan::with_loss_at_zero`]), which sets
//!    the projection's radius (martins2010 App. E) as one process does;
//! 2. each epoch, every part runs one pass of Alg. 1 over its sentences from the loop's
//!    state ([`CompiledPart::online_pass`]; zeros in the first epoch), in the order a
//!    learner seeded for the part shuffles them in that epoch (the epochs before replayed:
//!    the pass depends only on the state, the epoch and the part, so a lost pass is run
//!    again to the same bits);
//! 3. the loop mixes the parts' states as the sharded learner mixes its shards (the mean in
//!    part order, then one proximal step: `solver::online::engine::shards`), and goes on
//!    from the mix (the loop of [`fit_passes`](crate::estimator::tagger::parts::fit_passes)
//!    and [`fit_parser_passes`](crate::estimator::parser::parts::fit_parser_passes)).
//!
//! With one part the passes are the epochs of one process: the same seed shuffles the same
//! orders, nothing is mixed, and the model is the one [`fit`](crate::estimator::fit()) trains,
//! to the bit. With more, the model depends on the parts (each a shard of the mix), never on
//! where they run.

use super::CompiledPart;
use crate::error::{Error, Result};
use crate::estimator::spec::{LearnerSpec, Task};
use crate::params::ScaledVec;
use crate::pipeline::columns::tagging::TaggerLearner;
use crate::run::{Control, Observer, RunInfo, RunRecorder, RunStatus, StepUnit};
use crate::solver::online::engine::OnlineState;
use crate::solver::online::engine::{epoch_order, epoch_report, mix_and_step, OnlineLearner};
use crate::solver::online::OnlineParams;
use crate::task::online::OnlineTask;
use crate::task::structured::{StructLoss, StructuredOnline, StructuredTask};
use serde::{Deserialize, Serialize};

/// The settings of the online learner over parts: its parameters (`lambda` over all the
/// sentences), its loss, the number of sentences, and `L(0)` of all the data once the parts
/// have given theirs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OnlinePlan {
    pub(crate) params: OnlineParams,
    pub(crate) loss: StructLoss,
    task: Task,
    n: usize,
    loss_at_zero: Option<f64>,
}

impl OnlinePlan {
    /// The online learner of `spec` (a sequence or parsing spec whose learner is `online`)
    /// over `n` sentences; an error for another learner, or for the per-coordinate adagrad
    /// schedule (its state is not the one this loop mixes).
    pub fn new(spec: &LearnerSpec, n: usize) -> Result<OnlinePlan> {
        let spec = spec.check()?;
        if n == 0 {
            return Err(Error::data("the training set has no sentences"));
        }
        let refuse = || {
            Error::unsupported(format!(
                "the {} learner does not train by passes over parts; the online learner does \
                 (and the cutting plane, learner mtl, exactly)",
                spec.learner.kind()
            ))
        };
        let (params, loss) = match spec.task {
            Task::Sequence => {
                match spec
                    .learner
                    .family()
                    .tagger(spec.learner.kind(), &spec, n)?
                {
                    (TaggerLearner::Online { params, loss }, _) => (params, loss),
                    _ => return Err(refuse()),
                }
            }
            Task::Parsing => {
                let s = spec
                    .learner
                    .family()
                    .parser(spec.learner.kind(), &spec, n)?;
                if s.cutting_plane.is_some() {
                    return Err(refuse());
                }
                (s.params, s.loss)
            }
            other => {
                return Err(Error::unsupported(format!(
                    "parts train taggers and parsers, not a {other} spec"
                )))
            }
        };
        params.validate()?;
        if params.steps.schedule == crate::solver::online::StepSchedule::AdaGrad {
            return Err(Error::unsupported(
                "the adagrad schedule keeps per-coordinate steps that passes over parts do not \
                 mix; use another schedule (sqrt, const, inv or bottou)",
            ));
        }
        Ok(OnlinePlan {
            params,
            loss,
            task: spec.task,
            n,
            loss_at_zero: None,
        })
    }

    /// The plan with `L(0)` of all the data: the parts' totals
    /// ([`CompiledPart::loss_at_zero_total`]) added in part order, over all the sentences.
    pub fn with_loss_at_zero(mut self, totals: &[f64]) -> Result<OnlinePlan> {
        let total: f64 = totals.iter().sum();
        if totals.is_empty() || !total.is_finite() {
            return Err(Error::data(
                "L(0) of the parts: one finite total a part (is the loss available?)",
            ));
        }
        self.loss_at_zero = Some(total / self.n as f64);
        Ok(self)
    }

    /// Fails unless the plan is [`OnlinePlan::new`] of `spec` (a `task` spec) over its
    /// sentences: the settings the parts ran with are the fit's.
    pub(crate) fn check_spec(&self, spec: &LearnerSpec, task: Task) -> Result<()> {
        let own = OnlinePlan::new(spec, self.n)?;
        if own.task != task || own.params != self.params || own.loss != self.loss {
            return Err(Error::data(format!(
                "the online plan was not made from this {task} spec over {} sentences",
                self.n
            )));
        }
        Ok(())
    }

    /// The epochs the loop runs.
    pub(crate) fn epochs(&self) -> usize {
        self.params.steps.epochs
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(self).map_err(|e| Error::data(format!("online plan: {e}")))
    }

    /// A plan from [`OnlinePlan::to_bytes`], checked.
    pub fn from_bytes(bytes: &[u8]) -> Result<OnlinePlan> {
        let plan: OnlinePlan =
            serde_json::from_slice(bytes).map_err(|e| Error::data(format!("online plan: {e}")))?;
        plan.params.validate()?;
        if plan.n == 0 || plan.loss_at_zero.is_some_and(|l| !l.is_finite()) {
            return Err(Error::data("online plan: no sentences, or L(0) not finite"));
        }
        Ok(plan)
    }

    /// The seed of part `part`'s shuffles: the run's own for the first part (one part
    /// shuffles as one process does), a different one for each other part.
    fn part_seed(&self, part: usize) -> u64 {
        self.params.seed ^ (part as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// The loop's state as it travels to the parts ([`encode`]).
pub(crate) fn state_bytes(state: &OnlineState) -> Result<Vec<u8>> {
    encode(state, None)
}

/// A state of `dim` weights from [`state_bytes`], checked ([`decode`]).
pub(crate) fn state_from_bytes(bytes: &[u8], dim: usize) -> Result<OnlineState> {
    Ok(decode(bytes, dim, "the learner's state")?.0)
}

/// What a part's pass gives back: the state it reached, the sum of its sentences' losses
/// each before its update (the progressive loss), its rounds, and the sentences whose loss
/// could not be computed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PartPass {
    pub(crate) state: OnlineState,
    pub(crate) loss: f64,
    pub(crate) rounds: usize,
    pub(crate) skipped: u64,
}

impl PartPass {
    pub(crate) fn to_bytes(&self) -> Result<Vec<u8>> {
        encode(&self.state, Some((self.loss, self.rounds, self.skipped)))
    }

    /// A pass over `dim` weights from [`PartPass::to_bytes`], checked ([`decode`]).
    pub(crate) fn from_bytes(bytes: &[u8], dim: usize) -> Result<PartPass> {
        let what = "a part's pass";
        let (state, pass) = decode(bytes, dim, what)?;
        let Some((loss, rounds, skipped)) = pass else {
            return Err(Error::data(format!(
                "{what}: a state without the pass's counts"
            )));
        };
        if !loss.is_finite() {
            return Err(Error::data(format!("{what}: its loss is not finite")));
        }
        Ok(PartPass {
            state,
            loss,
            rounds,
            skipped,
        })
    }
}

/// A pass's progressive loss, rounds and skipped sentences, as they travel.
type PassCounts = (f64, usize, u64);

/// What leads a state's bytes: its groups, rounds and labels, and a pass's counts.
#[derive(Serialize, Deserialize)]
struct Header {
    groups: Vec<crate::task::online::ExplicitGroup>,
    n_labels: usize,
    t: u64,
    avg_start: u64,
    pass: Option<PassCounts>,
}

/// The first bytes of a state on the wire.
const MAGIC: &[u8; 8] = b"MKSPOM01";

/// A state (of explicit groups) on the wire: [`MAGIC`], the length of the JSON [`Header`]
/// and the header, then each block as `ScaledVec::write_sparse` writes it (the positions
/// that are not zero with their values, every number to the bit: a tagger's weights are
/// mostly zeros, one per attribute and label).
fn encode(state: &OnlineState, pass: Option<PassCounts>) -> Result<Vec<u8>> {
    if !state.kernel.is_empty() {
        return Err(Error::unsupported(
            "states with kernel groups do not travel between processes",
        ));
    }
    let header = serde_json::to_vec(&Header {
        groups: state.explicit_groups.clone(),
        n_labels: state.n_labels,
        t: state.t,
        avg_start: state.avg_start,
        pass,
    })
    .map_err(|e| Error::data(format!("the learner's state: {e}")))?;
    let mut out = Vec::with_capacity(16 + header.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(header.len() as u64).to_le_bytes());
    out.extend_from_slice(&header);
    for block in &state.explicit {
        block.write_sparse(&mut out);
    }
    Ok(out)
}

/// A state of `dim` weights in all (its groups' lengths summed: nothing larger is
/// allocated) and a pass's counts from [`encode`]'s bytes, checked ([`check_state`]); an
/// error naming `what` otherwise.
fn decode(bytes: &[u8], dim: usize, what: &str) -> Result<(OnlineState, Option<PassCounts>)> {
    let bad = |why: &str| Error::data(format!("{what}: {why}"));
    let rest = bytes
        .strip_prefix(MAGIC)
        .ok_or_else(|| bad("not the bytes of a learner's state"))?;
    let (len, rest) = rest
        .split_first_chunk::<8>()
        .ok_or_else(|| bad("the header is cut short"))?;
    let len = usize::try_from(u64::from_le_bytes(*len)).unwrap_or(usize::MAX);
    let (header, mut blocks) = rest
        .split_at_checked(len)
        .ok_or_else(|| bad("the header is cut short"))?;
    let header: Header = serde_json::from_slice(header).map_err(|e| bad(&e.to_string()))?;
    let total = header
        .groups
        .iter()
        .try_fold(0usize, |a, g| a.checked_add(g.len));
    if total != Some(dim) {
        return Err(bad(&format!("its groups do not hold the {dim} weights")));
    }
    let explicit = header
        .groups
        .iter()
        .map(|g| ScaledVec::read_sparse(&mut blocks, g.len))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| bad("a block is not as written"))?;
    if !blocks.is_empty() {
        return Err(bad("bytes after the last block"));
    }
    let state = OnlineState {
        kernel: Vec::new(),
        explicit,
        explicit_groups: header.groups,
        n_labels: header.n_labels,
        t: header.t,
        avg_start: header.avg_start,
    };
    check_state(&state)?;
    Ok((state, header.pass))
}

#[cfg(test)]
impl PartPass {
    /// Makes the state's first block hold a number that is not finite (tests).
    pub(crate) fn break_for_tests(&mut self) {
        self.state.explicit[0].add(0, f64::NAN);
    }
}

/// More rounds than any run takes (so that the rounds a pass adds cannot overflow).
const MAX_ROUNDS: u64 = 1 << 62;

/// Fails unless `state` is a state of explicit groups only whose blocks hold together
/// (`ScaledVec::well_formed_explicit`), as many as its groups and each of its group's
/// length.
fn check_state(state: &OnlineState) -> Result<()> {
    if !state.kernel.is_empty()
        || state.explicit.len() != state.explicit_groups.len()
        || state.t > MAX_ROUNDS
        || state.avg_start > state.t
        || state
            .explicit
            .iter()
            .zip(&state.explicit_groups)
            .any(|(b, g)| b.len() != g.len || !b.well_formed_explicit())
    {
        return Err(Error::data(
            "the learner's state does not hold together (groups, lengths, finite numbers)",
        ));
    }
    Ok(())
}

impl CompiledPart {
    /// The part's sentences' losses at the zero model, summed (the part's share of `L(0)`).
    pub fn loss_at_zero_total(&self, plan: &OnlinePlan) -> f64 {
        use super::PartTask;
        match &self.task {
            PartTask::Tagging(t) => t.loss_at_zero_total(plan.loss),
            PartTask::Trees(t) => t.loss_at_zero_total(plan.loss),
            PartTask::Projective(t) => t.loss_at_zero_total(plan.loss),
        }
    }

    /// One pass of Alg. 1 over the part's sentences in epoch `epoch` (from 1) from the
    /// loop's `state` (its bytes; zeros when `None`), the part being number `part` (module
    /// docs, step 2): the pass's bytes, for the loop. An error when the plan has no `L(0)`
    /// yet, or the state does not fit the part's weights.
    pub fn online_pass(
        &self,
        plan: &OnlinePlan,
        state: Option<&[u8]>,
        epoch: usize,
        part: usize,
    ) -> Result<Vec<u8>> {
        use super::PartTask;
        let l0 = plan
            .loss_at_zero
            .ok_or_else(|| Error::data("the online plan has no L(0) of the parts yet"))?;
        if epoch == 0 || epoch > plan.epochs() {
            return Err(Error::data(format!(
                "epoch {epoch}: the plan's epochs are 1 to {}",
                plan.epochs()
            )));
        }
        let state = state.map(|s| state_from_bytes(s, self.dim)).transpose()?;
        let pass = match &self.task {
            PartTask::Tagging(t) => pass_over(t, plan, l0, state, epoch, part),
            PartTask::Trees(t) => pass_over(t, plan, l0, state, epoch, part),
            PartTask::Projective(t) => pass_over(t, plan, l0, state, epoch, part),
        }?;
        pass.to_bytes()
    }
}

fn pass_over<T: StructuredTask>(
    task: &T,
    plan: &OnlinePlan,
    l0: f64,
    state: Option<OnlineState>,
    epoch: usize,
    part: usize,
) -> Result<PartPass> {
    let adapter = StructuredOnline::with_loss_at_zero(task, plan.loss, l0)?;
    let order = epoch_order(
        adapter.n_examples(),
        plan.part_seed(part),
        epoch,
        plan.params.shuffle,
    );
    let mut learner = OnlineLearner::for_pass(&adapter, &[], plan.params.clone(), state, order)?;
    learner.epoch_observed(&());
    let (loss, rounds) = learner.progressive_loss();
    Ok(PartPass {
        state: learner.into_state(),
        loss,
        rounds,
        skipped: adapter.skipped(),
    })
}

/// The parts' passes of an epoch: called with the loop's state as bytes (`None` in the first
/// epoch) and the epoch (from 1), it returns every part's pass
/// ([`CompiledPart::online_pass`]'s bytes) in part order, or `None` to stop.
pub type PassParts<'f> = dyn FnMut(Option<&[u8]>, usize) -> Result<Option<Vec<Vec<u8>>>> + 'f;

/// What [`run_passes`] reached: the last mixed state (`None` when stopped before the first
/// epoch ended), the run, and the parts' count.
pub(crate) struct PassesRun {
    pub(crate) state: Option<OnlineState>,
    pub(crate) run: RunInfo,
    pub(crate) parts: usize,
    /// The epochs done (the last one's averaged weights are the model's).
    pub(crate) epochs: usize,
}

impl PassesRun {
    /// The model's weights: the last mix's averaged iterate (when the run averages), zeros
    /// when stopped before the first epoch ended; an error unless there are `dim` of them.
    pub(crate) fn weights(&self, params: &OnlineParams, dim: usize) -> Result<Vec<f64>> {
        let weights = self.state.as_ref().map_or_else(
            || vec![0.0; dim],
            |s| s.explicit_values(params.steps.averaging).concat(),
        );
        if weights.len() != dim {
            return Err(Error::shape(
                "weights of the parts' passes",
                dim,
                weights.len(),
            ));
        }
        Ok(weights)
    }
}

/// The loop of the module docs over `plan.epochs()` epochs and `dim` weights: each epoch's passes from `pass`,
/// mixed (one part: its state as it is); the observer sees each epoch's objective (the
/// regularizer at the mix plus the progressive loss) and may stop the run.
pub(crate) fn run_passes(
    plan: &OnlinePlan,
    dim: usize,
    pass: &mut PassParts<'_>,
    observer: &dyn Observer,
) -> Result<PassesRun> {
    if plan.loss_at_zero.is_none() {
        return Err(Error::data("the online plan has no L(0) of the parts yet"));
    }
    let epochs = plan.epochs();
    let mut rec = RunRecorder::new(StepUnit::Epoch, Some(epochs as u64));
    let mut state: Option<OnlineState> = None;
    let mut status = RunStatus::Completed;
    let mut parts = 0;
    let mut done = 0;
    let reg = plan.params.reg.build();
    for epoch in 1..=epochs {
        if observer.should_stop() {
            status = RunStatus::Cancelled;
            break;
        }
        let shipped = state.as_ref().map(state_bytes).transpose()?;
        let Some(passes) = pass(shipped.as_deref(), epoch)? else {
            status = RunStatus::Cancelled;
            break;
        };
        let passes = passes
            .iter()
            .map(|b| PartPass::from_bytes(b, dim))
            .collect::<Result<Vec<_>>>()?;
        let start = state.as_ref().map_or(0, |s| s.t);
        if passes.is_empty() || (parts != 0 && passes.len() != parts) {
            return Err(Error::data(format!(
                "epoch {epoch}: {} parts' passes, {} expected",
                passes.len(),
                if parts == 0 { 1 } else { parts }
            )));
        }
        parts = passes.len();
        let within = passes
            .iter()
            .try_fold(0usize, |a, p| a.checked_add(p.rounds))
            .is_some_and(|r| r <= plan.n);
        if !within {
            return Err(Error::data(format!(
                "epoch {epoch}: the parts' passes took more rounds than the {} sentences",
                plan.n
            )));
        }
        let first = &passes[0].state;
        if let Some(k) = passes.iter().position(|p| {
            start.checked_add(p.rounds as u64) != Some(p.state.t)
                || p.state.explicit_groups != first.explicit_groups
                || p.state.n_labels != first.n_labels
                || p.state.avg_start != first.avg_start
                || state
                    .as_ref()
                    .is_some_and(|s| s.explicit_groups != p.state.explicit_groups)
        }) {
            return Err(Error::data(format!(
                "epoch {epoch}: part {k}'s pass did not start from the loop's state"
            )));
        }
        let loss: f64 = passes.iter().map(|p| p.loss).sum();
        let rounds: usize = passes.iter().map(|p| p.rounds).sum();
        rec.add_skipped(passes.iter().map(|p| p.skipped).sum());
        let counts: Vec<usize> = passes.iter().map(|p| p.rounds).collect();
        let mut states: Vec<OnlineState> = passes.into_iter().map(|p| p.state).collect();
        if states.len() > 1 && rounds > 0 {
            mix_and_step(&mut states, &counts, reg.as_ref(), &plan.params);
        }
        let mixed = states.swap_remove(0);
        let objective = (rounds > 0)
            .then(|| epoch_report(&mixed, &plan.params, epoch, loss / rounds as f64, 0.0))
            .map(|r| r.objective)
            .filter(|o| o.is_finite());
        state = Some(mixed);
        done = epoch;
        if rec.step(objective, observer) == Control::Stop {
            if epoch < epochs {
                status = RunStatus::Cancelled;
            }
            break;
        }
    }
    Ok(PassesRun {
        state,
        run: rec.finish(status),
        parts,
        epochs: done,
    })
}
