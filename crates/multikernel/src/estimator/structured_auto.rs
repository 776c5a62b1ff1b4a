//! The built-in selection of a template tagger or a parser: `train --task sequence|parsing`
//! without `--C` (and `SequenceTagger()` / `DependencyParser()` with `learner="auto"`,
//! `C=None`) choose the learner, `C` and the block norm `q` on development sentences, as a
//! CRFsuite user tunes `c2` on a dev set by hand.
//!
//! - **Development sentences**: those of the data (`--validation F`, `--validation-folds`),
//!   else a seeded share (`HELD_OUT_SHARE`, 10 %) of the training sentences held out. Each
//!   candidate trains on the rest and is scored on them (tagging: accuracy, or chunk F1
//!   when the labels are a chunk scheme; parsing: UAS).
//! - **The refit**: with development sentences of the data, the chosen candidate's model was
//!   trained on every training sentence and is the model (no refit), unless the run keeps
//!   checkpoints (then the chosen candidate is trained again with them). With a held-out
//!   share, the chosen candidate is trained again on every training sentence; the online
//!   learner then runs the epochs the development sentences kept.
//! - **Candidates** ([`candidates`]), cheapest first; the
//!   highest development score wins, ties to the earlier. Each is a registry learner with
//!   registry settings, so the record's line reruns it with flags.
//! - **Determinism**: every candidate is a deterministic fit for the spec's seed on any
//!   number of threads (the online learner trains round after round; the cutting plane sums
//!   its cuts in example order), and so is the choice.

use super::fit::{fit_parsing, fit_tagging, ScoredFit};
use super::fitted::{Fitted, Selection};
use super::kinds::{LearnerKind, Task};
use super::spec::{CheckedSpec, Learner, LearnerSpec, Strength};
use crate::error::{Error, Result};
use crate::model::Model;
use crate::run::{Observer, RunStatus, StopOnly};
use crate::select::{GridScore, SelectionRecord};
use crate::task::parse::ParseData;
use crate::task::tagging::TagData;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// The share of the training sentences held out to score the candidates when the data has
/// no development sentences.
pub(crate) const HELD_OUT_SHARE: f64 = 0.1;

/// Fewer training sentences than this and no development sentences: no selection (too few
/// to hold any out); the spec given (the shell's default learner, C = 1) trains, with a
/// note.
pub(crate) const MIN_SENTENCES: usize = 20;

/// The structured selection a request runs ([`super::structured_plan`]).
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredPlan {
    /// The share of the training sentences held out when the data has no development
    /// sentences.
    pub held_out: f64,
}

impl Default for StructuredPlan {
    fn default() -> Self {
        StructuredPlan {
            held_out: HELD_OUT_SHARE,
        }
    }
}

/// One candidate: a registry learner, its settings (registry names and text) and `C`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    pub learner: LearnerKind,
    pub settings: &'static [(&'static str, &'static str)],
    pub c: f64,
}

impl Candidate {
    /// The candidate's settings as the command line's flags (`--reg l2 --schedule adagrad
    /// --epochs 10`, `--q 1`), with `--algo` and `--C` beside them in the record: the flags
    /// that train it again.
    fn setting_text(&self) -> String {
        self.settings
            .iter()
            .map(|(n, t)| {
                let flag = super::registry::setting(n).map_or(*n, |s| s.flag);
                format!("{flag} {t}")
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The candidate's spec: `base`'s task, seed, memory limit; its own learner, settings
    /// and `C`.
    fn spec(&self, base: &LearnerSpec, epochs: Option<usize>) -> Result<CheckedSpec> {
        let mut spec = LearnerSpec::new(base.task, Learner::default_for(self.learner));
        spec.seed = base.seed;
        spec.memory = base.memory;
        spec.bias = base.bias;
        spec.standardize = base.standardize;
        for (name, text) in self.settings {
            spec.set(name, text)?;
        }
        if let Some(e) = epochs {
            spec.set("epochs", &e.to_string())?;
        }
        spec.strength = Strength::C(self.c);
        spec.check()
    }
}

/// The cutting plane at q = 1, C = 1 (sparse over templates): a candidate of both tasks.
const MTL_Q1: Candidate = Candidate {
    learner: LearnerKind::Mtl,
    settings: &[("q", "1")],
    c: 1.0,
};

/// The cutting plane at q = 2, C = 0.1 (the plain l2 structural SVM): a candidate of both.
const MTL_Q2: Candidate = Candidate {
    learner: LearnerKind::Mtl,
    settings: &[("q", "2")],
    c: 0.1,
};

/// The template tagger's candidates, cheapest first. On TWT UPOS tagging with the small
/// template file (folds 0-7, development fold 8; BENCHMARKS.md): the online l2 structural
/// SVM with AdaGrad steps (the q = 2 problem; 10 epochs, the best on the development
/// sentences kept: 1.8 s, 20 epochs 3.4 s for 0.15 points of development accuracy), the
/// cutting plane at q = 1 (the default of `--algo mtl`, 5.4 s) and at q = 2 with C = 0.1
/// (5.9 s; at C = 1 it takes 11.3 s for 0.15 points of development accuracy).
const TAGGER_CANDIDATES: [Candidate; 3] = [
    Candidate {
        learner: LearnerKind::Online,
        settings: &[
            ("regularizer", "l2"),
            ("schedule", "adagrad"),
            ("epochs", "10"),
        ],
        c: 1.0,
    },
    MTL_Q1,
    MTL_Q2,
];

/// The parser's candidates, cheapest first: the online learner as `train --task parsing
/// --C 1` trains it (TWT web, folds 0-7: 5.1 s), the cutting plane at q = 1, C = 1 (14.5 s)
/// and at q = 2, C = 0.1 (15.0 s; at C = 1 24.4 s for 0.03 points of development UAS).
const PARSER_CANDIDATES: [Candidate; 3] = [
    Candidate {
        learner: LearnerKind::Online,
        settings: &[],
        c: 1.0,
    },
    MTL_Q1,
    MTL_Q2,
];

/// The candidates of a task in the order they are tried: `TAGGER_CANDIDATES` for a
/// template tagger (`Task::Sequence`), `PARSER_CANDIDATES` for a parser, none otherwise.
pub fn candidates(task: Task) -> &'static [Candidate] {
    match task {
        Task::Sequence => &TAGGER_CANDIDATES,
        Task::Parsing => &PARSER_CANDIDATES,
        _ => &[],
    }
}

/// Structured data the selection trains on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum StructuredData<'a> {
    Tagged(&'a TagData),
    Treebank(&'a ParseData),
}

impl StructuredData<'_> {
    fn n_train(&self) -> usize {
        match self {
            StructuredData::Tagged(d) => d.train.len(),
            StructuredData::Treebank(d) => d.train.len(),
        }
    }

    fn n_dev(&self) -> usize {
        match self {
            StructuredData::Tagged(d) => d.dev.len(),
            StructuredData::Treebank(d) => d.dev.len(),
        }
    }

    fn fit(&self, spec: &CheckedSpec, observer: &dyn Observer) -> Result<ScoredFit> {
        match self {
            StructuredData::Tagged(d) => fit_tagging(d, spec, observer),
            StructuredData::Treebank(d) => fit_parsing(d, spec, observer),
        }
    }

    fn candidates(&self) -> &'static [Candidate] {
        match self {
            StructuredData::Tagged(_) => candidates(Task::Sequence),
            StructuredData::Treebank(_) => candidates(Task::Parsing),
        }
    }
}

/// What the development score of `model` is: chunk F1 for a tagger whose labels are a
/// chunk scheme, else accuracy (as the tagger scores its development sentences); UAS for a
/// parser.
fn metric(model: &Model) -> &'static str {
    match model {
        Model::Tagger(t) if crate::task::tagging::is_chunk_scheme(&t.featurizer.labels) => {
            "chunk F1"
        }
        Model::Parser(_) => "UAS",
        _ => "accuracy",
    }
}

/// Splits `items` into (kept, held out): a seeded `share` of them held out (at least one),
/// both parts in their original order.
fn hold_out<T: Clone>(items: &[T], share: f64, seed: u64) -> (Vec<T>, Vec<T>) {
    let n = items.len();
    let k = ((n as f64 * share).round() as usize).clamp(1, n.saturating_sub(1).max(1));
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let mut held = vec![false; n];
    for &i in &order[..k] {
        held[i] = true;
    }
    let (mut kept, mut out) = (Vec::new(), Vec::new());
    for (i, x) in items.iter().enumerate() {
        if held[i] {
            out.push(x.clone());
        } else {
            kept.push(x.clone());
        }
    }
    (kept, out)
}

/// Trains the structured selection on `data` (module docs): `base` gives the task, seed,
/// memory limit; the candidates their learners, settings and `C`.
pub(crate) fn fit_structured_auto(
    data: StructuredData<'_>,
    base: &CheckedSpec,
    plan: &StructuredPlan,
    observer: &dyn Observer,
) -> Result<Fitted> {
    let start = Instant::now();
    if !(plan.held_out > 0.0 && plan.held_out < 1.0) {
        return Err(Error::param(
            "held_out",
            plan.held_out,
            "a share of the training sentences in (0, 1)",
        ));
    }
    let n = data.n_train();
    let own_dev = data.n_dev() > 0;
    if !own_dev && n < MIN_SENTENCES {
        let mut out = data.fit(base, observer)?.fitted;
        out.notes.push(format!(
            "no selection: {n} training sentences are too few to hold {:.0}% out (at least \
             {MIN_SENTENCES}, or give development sentences); trained {} as given",
            100.0 * plan.held_out,
            base.learner.kind()
        ));
        return Ok(out);
    }
    let base = base.spec();
    // The sentences the candidates train on and are scored on.
    let split_tags;
    let split_trees;
    let (scored, method) = if own_dev {
        (
            data,
            format!("the {} development sentences given", data.n_dev()),
        )
    } else {
        let seed = base.seed;
        let method = |k: usize| {
            format!(
                "{k} of the {n} training sentences held out ({:.0}%, seed {seed}), then a refit \
                 on all {n}",
                100.0 * plan.held_out
            )
        };
        match data {
            StructuredData::Tagged(d) => {
                let (train, dev) = hold_out(&d.train, plan.held_out, seed);
                let k = dev.len();
                split_tags = TagData {
                    train,
                    dev,
                    templates: d.templates.clone(),
                    min_count: d.min_count,
                };
                (StructuredData::Tagged(&split_tags), method(k))
            }
            StructuredData::Treebank(d) => {
                let (train, dev) = hold_out(&d.train, plan.held_out, seed);
                let k = dev.len();
                split_trees = ParseData {
                    train,
                    dev,
                    templates: d.templates.clone(),
                    support: d.support,
                    trees: d.trees,
                };
                (StructuredData::Treebank(&split_trees), method(k))
            }
        }
    };
    let candidates = data.candidates();
    // The candidates' runs see no checkpoints (a store serves one run) and only the
    // requests to stop.
    let quiet = StopOnly(observer);
    let mut grid = Vec::new();
    let mut best: Option<(usize, f64, ScoredFit)> = None;
    let mut lines = Vec::new();
    for (i, cand) in candidates.iter().enumerate() {
        let spec = cand.spec(base, None)?;
        let t = Instant::now();
        let fit = scored.fit(&spec, &quiet)?;
        let seconds = t.elapsed().as_secs_f64();
        if fit.fitted.run.status == RunStatus::Cancelled || observer.should_stop() {
            let mut out = fit.fitted;
            out.run.status = RunStatus::Cancelled;
            return Ok(out);
        }
        let score = fit.dev_score.filter(|s| s.is_finite());
        grid.push(GridScore {
            learner: cand.learner.name().to_string(),
            setting: cand.setting_text(),
            c: cand.c,
            mean: score,
        });
        lines.push(format!("{seconds:.1} s"));
        if let Some(s) = score {
            if best.as_ref().is_none_or(|(_, b, _)| s > *b) {
                best = Some((i, s, fit));
            }
        }
    }
    let Some((chosen, score, fit)) = best else {
        return Err(Error::Numerical(
            "no candidate of the structured selection could be scored on the development \
             sentences"
                .into(),
        ));
    };
    let cand = candidates[chosen];
    let metric = metric(&fit.fitted.model);
    // The record is stored in the model: no seconds in it (the same seed, the same bytes).
    let why = format!(
        "the highest development {metric} ({score:.2}); candidates in order of cost, ties to \
         the cheaper"
    );
    let selection_seconds = start.elapsed().as_secs_f64();
    let checkpoints = observer.checkpoints().is_some();
    let mut out = if own_dev && !checkpoints {
        fit.fitted
    } else {
        // The online learner runs the epochs the development sentences kept.
        let epochs = (!own_dev && fit.best_epoch > 0).then_some(fit.best_epoch);
        let spec = cand.spec(base, epochs)?;
        data.fit(&spec, observer)?.fitted
    };
    let record = SelectionRecord {
        method,
        metric: metric.to_string(),
        learner_choice: Some(why),
        grid,
        chosen: Some(chosen),
        candidates: Vec::new(),
        why: None,
    };
    out.model.set_selection(record.clone());
    out.notes.push(format!(
        "the selection's candidates took {} (in the order above)",
        lines.join(", ")
    ));
    out.selection = Some(Selection {
        record,
        seconds: selection_seconds,
        learner: cand.learner,
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_held_out_share_is_seeded_and_keeps_order() {
        let items: Vec<usize> = (0..50).collect();
        let (kept, out) = hold_out(&items, 0.1, 3);
        assert_eq!(out.len(), 5);
        assert_eq!(kept.len(), 45);
        assert!(kept.windows(2).all(|w| w[0] < w[1]));
        assert!(out.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(hold_out(&items, 0.1, 3), (kept.clone(), out.clone()));
        assert_ne!(hold_out(&items, 0.1, 4).1, out);
        // Every item is in exactly one part.
        let mut all: Vec<usize> = kept.into_iter().chain(out).collect();
        all.sort_unstable();
        assert_eq!(all, items);
    }
}
