//! The memory guard of a template tagger: the structures sized by its labels, estimated
//! before any of them is allocated and refused over the user's limit ([`MemoryLimit`], as the
//! Gram matrices are; ARCHITECTURE.md, "Performance notes").
//!
//! With `L` labels, a bigram template with macros (`B01:%x[0,1]`, CRF++'s bigram features)
//! makes one explicit part per label pair at every token `i >= 1` ([`crate::task::tagging`]):
//! `(n - 1) L^2` parts per sentence of `n` tokens, each a sparse row of its kept expansions
//! (24 bytes per pair and position with one such template: about 1.5 MB per token at 250
//! labels). The weights are `L^2` per kept bigram expansion and `L` per unigram expansion,
//! held in several copies by the learners; and the sentence being worked on holds buffers of
//! its parts (scores, gradients, position-dependent label-pair scores, marginals). The
//! estimate counts
//! - the label-pair parts exactly (the task reserves exactly that:
//!   [`TagFeaturizer::pair_part_bytes`]);
//! - the weight vectors: the dimension times the dense copies the learner keeps (below);
//! - the sentences' buffers: those the learner keeps from one sentence to the next, and
//!   those of each phase (training steps: one sentence at a time online, one per thread in
//!   the batch learners; the tracked objective; tagging the development sentences, one per
//!   thread), each over the longest sentences that can be in flight together.
//!
//! What is left out is not sized by the labels (the unigram feature rows, the expansions'
//! keys: tokens times templates) or not known before training (the cutting plane's cuts,
//! sparse and bounded by the iterations).

use super::{TaggerLearner, TaggerModel, TaggerSpec};
use crate::data::columns::ColumnSentence;
use crate::error::{fmt_bytes, Result};
use crate::kernel::MemoryLimit;
use crate::solver::online::params::StepSchedule;
use crate::task::structured::StructLoss;
use crate::task::tagging::TagFeaturizer;

/// Bytes of an `f64` (or a `usize`: both 8 on the supported platforms).
const WORD: usize = 8;

/// The batch objective's chunks of examples in flight at once (at most): its `CHUNKS`.
const BATCH_CHUNKS: usize = 8;

/// What a tagger holds at once of the structures sized by its labels, in bytes, estimated
/// before they are allocated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelMemory {
    pub labels: usize,
    /// The bigram templates with macros (their lines), which make the label-pair parts.
    pub pair_templates: Vec<String>,
    /// Positions with label-pair parts (tokens `i >= 1` of the training sentences, with
    /// bigram templates with macros).
    pub positions: usize,
    /// The explicit label-pair parts of the training sentences (exact).
    pub pair_parts: usize,
    /// The weight vectors the learner keeps (all copies).
    pub weights: usize,
    /// The sentences' buffers (part scores, gradients, label-pair scores, marginals).
    pub buffers: usize,
}

/// Buffers of one sentence in flight, in words: so many per part, per explicit label-pair
/// part, and per token and label.
#[derive(Debug, Clone, Copy)]
struct Buffers {
    parts: usize,
    pairs: usize,
    tokens: usize,
}

impl Buffers {
    /// Viterbi: the unigram scores, the position-dependent label-pair scores, the
    /// back-pointers (and the path).
    const TAG: Buffers = Buffers {
        parts: 0,
        pairs: 1,
        tokens: 3,
    };

    /// Viterbi and forward-backward: the above, the pair marginals, the recursions and the
    /// token marginals.
    const MARGINALS: Buffers = Buffers {
        parts: 0,
        pairs: 2,
        tokens: 7,
    };

    /// A loss and its part gradient ([`crate::task::structured::loss_grad`]): the part
    /// scores and gradient, the position-dependent pair scores, for the CRF loss the pair
    /// marginals and the expected counts, and the decoder's recursions.
    fn loss(loss: StructLoss) -> Buffers {
        match loss {
            StructLoss::Crf => Buffers {
                parts: 3,
                pairs: 2,
                tokens: 4,
            },
            StructLoss::Hinge => Buffers {
                parts: 2,
                pairs: 1,
                tokens: 4,
            },
        }
    }

    /// Bytes of one sentence of `n` tokens.
    fn bytes(&self, f: &TagFeaturizer, n: usize) -> usize {
        let words = self
            .parts
            .saturating_mul(f.parts_of(n))
            .saturating_add(self.pairs.saturating_mul(f.pair_parts_of(n)))
            .saturating_add(self.tokens.saturating_mul(n.saturating_mul(f.n_labels())));
        words.saturating_mul(WORD)
    }

    /// Bytes of the `k` longest sentences of `lengths` (sorted longest first): at most `k`
    /// are worked on at once.
    fn in_flight(&self, f: &TagFeaturizer, lengths: &[usize], k: usize) -> usize {
        lengths
            .iter()
            .take(k.max(1))
            .fold(0usize, |a, &n| a.saturating_add(self.bytes(f, n)))
    }
}

/// Sentence lengths, longest first.
fn lengths(sentences: &[ColumnSentence]) -> Vec<usize> {
    let mut l: Vec<usize> = sentences.iter().map(ColumnSentence::len).collect();
    l.sort_unstable_by(|a, b| b.cmp(a));
    l
}

impl LabelMemory {
    /// The bytes in all.
    pub fn total(&self) -> usize {
        self.pair_parts
            .saturating_add(self.weights)
            .saturating_add(self.buffers)
    }

    /// Training a tagger with featurizer `f` on `train` (and tagging `dev` to choose the
    /// epoch) as `spec` says.
    ///
    /// The dense copies of the weights: the online learner's iterate and its average (per
    /// shard), plus four while an epoch ends (the weights read out, joined from the groups;
    /// the best epoch's; the development model's); AdaGrad's five vectors (iterate, sum,
    /// squared gradients, rounds, gradient) plus the same four; L-BFGS's iterate, gradient,
    /// direction, trial point and gradient, and its `m` pairs; the cutting plane's iterate,
    /// accumulator, separated point, best point, the master's new solution, and the
    /// development model's.
    ///
    /// The sentences' buffers: what the learner keeps from one sentence to the next (the
    /// online learner's gradients, one `(group, index, value)` triple per entry of a
    /// label-pair part with the CRF loss, for each sentence of a batch or shard; AdaGrad's
    /// part scores, gradient and touched coordinates), plus the buffers of each phase: a
    /// training step, the tracked objective, tagging the development sentences. The phases
    /// are summed, not maximized: each runs on other threads, whose allocator arenas do not
    /// reuse the memory another freed.
    pub fn training(
        f: &TagFeaturizer,
        train: &[ColumnSentence],
        dev: Option<&[ColumnSentence]>,
        spec: &TaggerSpec,
    ) -> LabelMemory {
        let threads = rayon::current_num_threads().max(1);
        let train_len = lengths(train);
        let entries = f.templates.bigram_macros().count();
        let (positions, pair_parts) = f.pair_part_bytes(train);
        let dim = f.layout().total();
        let longest = |b: Buffers, k: usize| b.in_flight(f, &train_len, k);
        let mut phases = Vec::new();
        if let Some(d) = dev {
            phases.push(Buffers::TAG.in_flight(f, &lengths(d), threads));
        }
        let (copies, flags) = match &spec.learner {
            TaggerLearner::Online { params, loss } => {
                let tracked = spec.track_objective || (spec.calibrate.is_some() && dev.is_none());
                if tracked {
                    phases.push(longest(Buffers::loss(*loss), threads.min(BATCH_CHUNKS)));
                }
                let crf = *loss == StructLoss::Crf;
                if params.steps.schedule == StepSchedule::AdaGrad {
                    let kept = Buffers {
                        parts: 2,
                        pairs: entries,
                        tokens: 0,
                    };
                    let step = Buffers {
                        parts: usize::from(crf),
                        pairs: 1 + usize::from(crf),
                        tokens: 4,
                    };
                    phases.push(longest(kept, 1).saturating_add(longest(step, 1)));
                    // The seen flags: one byte per coordinate.
                    (9, dim)
                } else {
                    let holders = params.steps.shards.max(params.steps.batch).max(1);
                    let kept = Buffers {
                        parts: 0,
                        pairs: if crf { 3 * entries } else { 0 },
                        tokens: 0,
                    };
                    phases.push(
                        longest(kept, holders)
                            .saturating_add(longest(Buffers::loss(*loss), holders.min(threads))),
                    );
                    let state =
                        (1 + usize::from(params.steps.averaging)) * params.steps.shards.max(1);
                    (state + 4, 0)
                }
            }
            TaggerLearner::Lbfgs { params } => {
                // The part gradients of every training sentence, kept until they are mapped
                // back in order.
                let kept = train_len
                    .iter()
                    .fold(0usize, |a, &n| a.saturating_add(f.parts_of(n)))
                    .saturating_mul(WORD);
                phases.push(
                    longest(Buffers::loss(StructLoss::Crf), threads.min(BATCH_CHUNKS))
                        .saturating_add(kept),
                );
                (5 + 2 * params.memory, 0)
            }
            TaggerLearner::CuttingPlane { .. } => {
                let step = Buffers {
                    parts: 1,
                    pairs: 1,
                    tokens: 4,
                };
                phases.push(longest(step, threads));
                (6, 0)
            }
        };
        LabelMemory {
            labels: f.n_labels(),
            pair_templates: f
                .templates
                .bigram_macros()
                .map(|t| t.text.clone())
                .collect(),
            positions,
            pair_parts,
            weights: dim.saturating_mul(copies * WORD).saturating_add(flags),
            buffers: phases.into_iter().fold(0usize, usize::saturating_add),
        }
    }

    /// Tagging `sentences` with `model` (one sentence per thread at a time), with the
    /// marginals too when asked; the model's weights are already in memory.
    pub fn applying(model: &TaggerModel, sentences: &[ColumnSentence], marginals: bool) -> Self {
        let f = &model.featurizer;
        let buffers = if marginals {
            Buffers::MARGINALS
        } else {
            Buffers::TAG
        };
        LabelMemory {
            labels: f.n_labels(),
            pair_templates: f
                .templates
                .bigram_macros()
                .map(|t| t.text.clone())
                .collect(),
            positions: if f.has_bigram_macros() {
                sentences.iter().map(|s| s.len().saturating_sub(1)).sum()
            } else {
                0
            },
            pair_parts: 0,
            weights: 0,
            buffers: buffers.in_flight(f, &lengths(sentences), rayon::current_num_threads()),
        }
    }

    /// `Ok` when [`LabelMemory::total`] fits under `limit`; otherwise the memory error,
    /// saying what `doing` needs and of what.
    pub(crate) fn check(&self, limit: &MemoryLimit, doing: &str) -> Result<()> {
        limit.check(self.total(), &self.describe(doing))
    }

    /// What needs the bytes, for the refusal.
    fn describe(&self, doing: &str) -> String {
        let mut of = Vec::new();
        if !self.pair_templates.is_empty() {
            let pairs = self.labels.saturating_mul(self.labels);
            if self.pair_parts > 0 {
                of.push(format!(
                    "{}: one part per label pair ({pairs} pairs) at each of {} positions, {}",
                    self.pair_templates.join(", "),
                    self.positions,
                    fmt_bytes(self.pair_parts)
                ));
            } else {
                of.push(format!(
                    "{}: {pairs} label pairs at each of {} positions",
                    self.pair_templates.join(", "),
                    self.positions,
                ));
            }
        }
        if self.weights > 0 {
            of.push(format!("weights {}", fmt_bytes(self.weights)));
        }
        of.push(format!("sentence buffers {}", fmt_bytes(self.buffers)));
        format!("{doing} with {} labels ({})", self.labels, of.join("; "))
    }
}
