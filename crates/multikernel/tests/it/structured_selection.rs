//! The structured selection of a template tagger and a parser (`estimator::structured_auto`)
//! against its twin: every candidate trained on its own by `fit` with the same spec and
//! scored on the same development sentences. The selection must choose the best score (ties
//! to the earlier candidate), return that candidate's model bit for bit (development
//! sentences given) or its refit on every training sentence (held out), and give the same
//! model twice.

use multikernel::data::conllu::{read_conllu, select_folds, ConlluSentence, Heads};
use multikernel::engine::task::parse::{ParseData, ParseSentence};
use multikernel::engine::task::tagging::convert::{from_conllu, LabelColumn};
use multikernel::engine::task::tagging::{TagData, TemplateFile};
use multikernel::estimator::structured_auto::{candidates, Candidate, StructuredPlan};
use multikernel::estimator::{fit, FitRequest, Fitted, Learner, LearnerSpec, Task};
use multikernel::model::Model;
use std::path::{Path, PathBuf};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn fold(f: usize, n: usize) -> Vec<ConlluSentence> {
    let all = read_conllu(&repo("data/treebank/tr-web.conllu.gz"), Heads::Required).unwrap();
    select_folds(&all, &[f]).into_iter().take(n).collect()
}

/// Four of the small set's templates and the label pair: a quick tagger.
fn templates() -> TemplateFile {
    TemplateFile::parse(
        b"U00:%x[0,1]\nU01:%x[0,4]\nU02:%x[-1,1]\nU03:%x[0,5]\nB\n",
        Path::new("<test>"),
    )
    .unwrap()
}

fn tag_data(n_train: usize, n_dev: usize) -> TagData {
    let mut data = TagData::new(
        from_conllu(&fold(0, n_train), LabelColumn::Upos),
        templates(),
    );
    data.dev = from_conllu(&fold(8, n_dev), LabelColumn::Upos);
    data
}

fn base(task: Task) -> LearnerSpec {
    LearnerSpec::new(
        task,
        Learner::default_for(multikernel::estimator::LearnerKind::Mtl),
    )
    .with_seed(3)
}

/// The twin's spec of a candidate, written out as a user would (flags' settings, C, seed).
fn twin_spec(task: Task, c: &Candidate) -> LearnerSpec {
    let mut spec = LearnerSpec::new(task, Learner::default_for(c.learner))
        .with_c(c.c)
        .with_seed(3);
    for (name, text) in c.settings {
        spec.set(name, text).unwrap();
    }
    spec
}

fn bytes(f: &Fitted) -> Vec<u8> {
    f.model.to_bytes().unwrap()
}

/// The model's bytes without its selection record (what a fit with the chosen spec writes).
fn learned_bytes(f: &Fitted) -> Vec<u8> {
    let mut m = f.model.clone();
    match &mut m {
        Model::Tagger(t) => t.selection = None,
        Model::Parser(p) => p.selection = None,
        _ => panic!("a tagger or a parser"),
    }
    m.to_bytes().unwrap()
}

fn select<'d>(data: impl Into<multikernel::estimator::TrainingData<'d>>, task: Task) -> Fitted {
    let spec = base(task);
    let plan = StructuredPlan::default();
    fit(
        data,
        FitRequest::new(&spec).select_structured(Some(&plan)),
        &(),
    )
    .unwrap()
}

/// Asserts `a == b` (model files), showing where they first differ.
fn same_bytes(a: &[u8], b: &[u8], what: &str) {
    if a != b {
        let i = a
            .iter()
            .zip(b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len()));
        let show = |v: &[u8]| {
            String::from_utf8_lossy(&v[i.saturating_sub(80)..(i + 80).min(v.len())]).to_string()
        };
        panic!(
            "{what}: the model files differ at byte {i}:\n{}\n{}",
            show(a),
            show(b)
        );
    }
}

/// The first index of the largest score (ties to the earlier).
fn argmax(scores: &[f64]) -> usize {
    let mut best = 0;
    for (i, s) in scores.iter().enumerate() {
        if *s > scores[best] {
            best = i;
        }
    }
    best
}

#[test]
fn the_tagger_selection_keeps_the_best_candidate_on_the_development_sentences() {
    let data = &tag_data(100, 40);
    let chosen = select(data, Task::Sequence);
    let sel = chosen.selection.as_ref().expect("the selection ran");
    assert_eq!(sel.record.grid.len(), candidates(Task::Sequence).len());
    assert!(sel.record.method.contains("40 development sentences"));
    // The twin: each candidate on its own, scored on the development sentences.
    let mut scores = Vec::new();
    let mut models = Vec::new();
    for (cand, recorded) in candidates(Task::Sequence).iter().zip(&sel.record.grid) {
        let f = fit(data, &twin_spec(Task::Sequence, cand), &()).unwrap();
        let Model::Tagger(t) = &f.model else {
            panic!("a tagger")
        };
        let score = t.dev_score(&data.dev).unwrap();
        assert_eq!(recorded.mean, Some(score), "{}", recorded.setting);
        assert_eq!(recorded.c, cand.c);
        scores.push(score);
        models.push(bytes(&f));
    }
    let best = argmax(&scores);
    assert_eq!(sel.record.chosen, Some(best));
    assert_eq!(sel.learner, candidates(Task::Sequence)[best].learner);
    same_bytes(
        &learned_bytes(&chosen),
        &models[best],
        "no refit: the candidate's own model",
    );
    // The model file keeps the record (`inspect` prints its headline).
    let back = Model::from_bytes(&bytes(&chosen)).unwrap();
    assert_eq!(back.selection(), Some(&sel.record));
    assert!(back.summary().notes.contains(&sel.record.headline()));
    // The same seed, the same model.
    same_bytes(
        &bytes(&select(data, Task::Sequence)),
        &bytes(&chosen),
        "again",
    );
    // The choice and the model do not depend on the thread count.
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let again = pool.install(|| select(data, Task::Sequence));
        same_bytes(
            &bytes(&again),
            &bytes(&chosen),
            &format!("{threads} threads"),
        );
    }
}

#[test]
fn without_development_sentences_a_held_out_share_chooses_and_the_refit_uses_every_sentence() {
    let data = &tag_data(120, 0);
    let chosen = select(data, Task::Sequence);
    let sel = chosen.selection.as_ref().expect("the selection ran");
    assert!(
        sel.record
            .method
            .contains("12 of the 120 training sentences held out"),
        "{}",
        sel.record.method
    );
    let best = sel.record.chosen.unwrap();
    let scores: Vec<f64> = sel.record.grid.iter().map(|g| g.mean.unwrap()).collect();
    assert_eq!(best, argmax(&scores));
    // The refit: the chosen candidate on all 120 sentences (the online learner for the
    // epochs the held-out sentences kept, which the notes of its fit name).
    let cand = &candidates(Task::Sequence)[best];
    let mut spec = twin_spec(Task::Sequence, cand);
    let Model::Tagger(t) = &chosen.model else {
        panic!("a tagger")
    };
    if cand.learner == multikernel::estimator::LearnerKind::Online {
        let epochs = chosen.run.steps;
        spec.set("epochs", &epochs.to_string()).unwrap();
    }
    let twin = fit(data, &spec, &()).unwrap();
    same_bytes(&bytes(&twin), &learned_bytes(&chosen), &t.learner);
    same_bytes(
        &bytes(&select(data, Task::Sequence)),
        &bytes(&chosen),
        "again",
    );
}

#[test]
fn too_few_sentences_train_the_spec_given_and_say_so() {
    let data = &tag_data(12, 0);
    let f = select(data, Task::Sequence);
    assert!(f.selection.is_none());
    assert!(
        f.notes
            .iter()
            .any(|n| n.contains("no selection: 12 training sentences")),
        "{:?}",
        f.notes
    );
    let plain = fit(data, &base(Task::Sequence), &()).unwrap();
    same_bytes(&bytes(&f), &bytes(&plain), "too few");
}

#[test]
fn the_parser_selection_keeps_the_best_candidate_on_the_development_sentences() {
    let mut data = ParseData::new(fold(0, 40).iter().map(ParseSentence::from).collect());
    data.dev = fold(8, 20).iter().map(ParseSentence::from).collect();
    let data = &data;
    let chosen = select(data, Task::Parsing);
    let sel = chosen.selection.as_ref().expect("the selection ran");
    assert_eq!(sel.record.metric, "UAS");
    let scores: Vec<f64> = sel.record.grid.iter().map(|g| g.mean.unwrap()).collect();
    let best = argmax(&scores);
    assert_eq!(sel.record.chosen, Some(best));
    // Each candidate's model on its own (the same development sentences choose the online
    // learner's epoch): the chosen one is the selection's, bit for bit, and each reports
    // the development UAS recorded.
    for (i, cand) in candidates(Task::Parsing).iter().enumerate() {
        let f = fit(data, &twin_spec(Task::Parsing, cand), &()).unwrap();
        let said = format!("development UAS {:.2})", scores[i]);
        assert!(
            f.notes.iter().any(|n| n.contains(&said)),
            "{i}: {:?} {said}",
            f.notes
        );
        if i == best {
            same_bytes(&bytes(&f), &learned_bytes(&chosen), "the parser");
        }
    }
}
