//! The tagger from sentences in memory against the column-file path of `multikernel train`
//! (the same sentences written as a column file and a template file, read by the readers,
//! trained by `fit`): the same predictions and the same weights; feature values of numbers
//! and booleans read off the feature rows; the errors.

use super::*;
use crate::data::columns::parse_columns;
use crate::estimator::registry;
use crate::estimator::spec::LearnerKind;
use crate::estimator::spec::{LearnerSpec, Task};
use crate::estimator::Settings;
use crate::estimator::{fit, Fitted};
use crate::run::Observer;
use crate::task::tagging::{TagData, TemplateFile};

/// [`training_data`], then [`fit`]: a tagger as the Python package trains one.
fn fit_sequence_tagger(
    x: Sentences<'_>,
    y: &[Vec<String>],
    templates: Option<(&str, &str)>,
    spec: &LearnerSpec,
    observer: &dyn Observer,
) -> Result<Fitted> {
    fit(&training_data(x, y, templates)?, spec, observer)
}

/// A toy POS task: word, its suffix and whether it is capitalized decide the label.
pub(super) fn toy() -> (Vec<Vec<Vec<String>>>, Vec<Vec<String>>) {
    let words = [
        ("The", "DET"),
        ("the", "DET"),
        ("a", "DET"),
        ("dog", "NOUN"),
        ("cats", "NOUN"),
        ("runs", "VERB"),
        ("sleeps", "VERB"),
        ("quickly", "ADV"),
        ("Rex", "PROPN"),
    ];
    let sentences = [
        "The dog runs quickly",
        "a cats sleeps",
        "Rex runs",
        "the dog sleeps quickly",
        "Rex sleeps quickly",
        "a dog runs",
        "The cats runs",
    ];
    let mut x = Vec::new();
    let mut y = Vec::new();
    for s in sentences {
        let mut toks = Vec::new();
        let mut labs = Vec::new();
        for w in s.split(' ') {
            let label = words.iter().find(|(v, _)| *v == w).unwrap().1;
            let suffix: String = w
                .chars()
                .rev()
                .take(2)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let cap = if w.chars().next().unwrap().is_uppercase() {
                "Y"
            } else {
                "N"
            };
            toks.push(vec![w.to_lowercase(), suffix, cap.to_string()]);
            labs.push(label.to_string());
        }
        x.push(toks);
        y.push(labs);
    }
    (x, y)
}

pub(super) const TEMPLATES: &str = "U0:%x[0,0]\nU1:%x[0,1]\nU2:%x[-1,0]\nU3:%x[0,2]\nB\n";

/// The column file `multikernel train --format columns` would read.
fn column_file(x: &[Vec<Vec<String>>], y: &[Vec<String>]) -> String {
    let mut text = String::new();
    for (s, l) in x.iter().zip(y) {
        for (t, lab) in s.iter().zip(l) {
            text.push_str(&format!("{} {lab}\n", t.join(" ")));
        }
        text.push('\n');
    }
    text
}

fn specs() -> Vec<LearnerSpec> {
    let online = |loss: &str| Settings::new().with("loss", loss).with("epochs", "3");
    let tagging = |s: Settings, kind, c| s.structured_spec(Task::Sequence, kind, c, 0).unwrap();
    vec![
        tagging(online("hinge"), LearnerKind::Online, 10.0),
        tagging(online("crf"), LearnerKind::Online, 10.0),
        tagging(
            Settings::new().with("max_iter", "30"),
            LearnerKind::Mtl,
            1.0,
        ),
        tagging(Settings::new(), LearnerKind::Lbfgs, 10.0),
    ]
}

/// Stops the run at its `n`-th progress report.
struct StopAt(u64);

impl Observer for StopAt {
    fn progress(&self, p: &crate::run::Progress) -> crate::run::Control {
        if p.step >= self.0 {
            crate::run::Control::Stop
        } else {
            crate::run::Control::Continue
        }
    }
}

/// The progress of the cutting plane at its limit: `max_iter` cuts, one separation more,
/// and the lines' total counts the separations (no "iteration 4/3").
#[test]
fn the_cutting_plane_s_progress_never_passes_its_total() {
    use crate::run::{Control, Progress, RunStatus};
    use std::sync::Mutex;
    struct Seen(Mutex<Vec<(u64, Option<u64>)>>);
    impl Observer for Seen {
        fn progress(&self, p: &Progress) -> Control {
            self.0.lock().unwrap().push((p.step, p.total));
            Control::Continue
        }
    }
    let (x, y) = toy();
    let data = training_data(Sentences::Columns(&x), &y, Some((TEMPLATES, "tpl"))).unwrap();
    let spec = Settings::new()
        .with("max_iter", "3")
        .with("eps", "1e-9")
        .structured_spec(Task::Sequence, LearnerKind::Mtl, 100.0, 0)
        .unwrap();
    let seen = Seen(Mutex::new(Vec::new()));
    let fitted = fit(&data, &spec, &seen).unwrap();
    assert_eq!(fitted.run.status, RunStatus::IterationLimit);
    let seen = seen.0.into_inner().unwrap();
    assert_eq!(seen.len(), 4);
    assert!(
        seen.iter()
            .all(|&(step, total)| total == Some(4) && step <= 4),
        "{seen:?}"
    );
}

/// The batch CRF as a learner: `C` is the l2 CRF's `lambda = 1 / (C n)` (the engine's
/// L-BFGS run on the same sentences gives the same weights), the weights it returns are the
/// optimum (the batch objective's gradient there is within the engine's tolerances, and
/// every weight moved either way raises the objective), `max_iter` bounds it, an observer
/// stops it with the iterate reached, and what it cannot train is refused.
#[test]
fn the_batch_crf_learner_is_the_l2_crf_at_c() {
    use crate::pipeline::columns::tagging::{fit_tagger, TaggerLearner, TaggerSpec};
    use crate::run::RunStatus;
    use crate::solver::batch::{objective, LbfgsParams};
    use crate::task::structured::StructLoss;
    use crate::task::tagging::TaggingTask;
    let (x, y) = toy();
    let data = training_data(Sentences::Columns(&x), &y, Some((TEMPLATES, "tpl"))).unwrap();
    let c = 10.0;
    let spec = Settings::new()
        .structured_spec(Task::Sequence, LearnerKind::Lbfgs, c, 0)
        .unwrap();
    let fitted = fit(&data, &spec, &()).unwrap();
    assert_eq!(fitted.run.status, RunStatus::Converged);
    let Model::Tagger(model) = &fitted.model else {
        panic!("a tagger")
    };
    assert_eq!(model.loss, Some(StructLoss::Crf));
    let lambda = 1.0 / (c * x.len() as f64);
    let by_hand = TaggerSpec {
        learner: TaggerLearner::Lbfgs {
            params: LbfgsParams {
                lambda,
                ..LbfgsParams::default()
            },
        },
        min_count: 1,
        track_objective: false,
        average_from: 0,
        calibrate: None,
        memory: Default::default(),
    };
    let engine = fit_tagger(&data.train, None, data.templates.clone(), &by_hand, &()).unwrap();
    assert_eq!(engine.model.weights, model.weights);
    // The optimum: no weight moved by 1e-3 either way lowers the objective.
    let task = TaggingTask::new(&model.featurizer, &data.train).unwrap();
    let f = |w: &[f64]| objective(&task, StructLoss::Crf, lambda, w).unwrap();
    let at = f(&model.weights);
    for j in (0..model.weights.len()).step_by(7) {
        for h in [-1e-3, 1e-3] {
            let mut w = model.weights.clone();
            w[j] += h;
            assert!(f(&w) > at - 1e-12, "weight {j} moved by {h}");
        }
    }
    // Marginals: a CRF.
    let tagger = SequenceTagger::new(fitted.model.clone()).unwrap();
    assert_eq!(tagger.predict(Sentences::Columns(&x)).unwrap(), y);
    let limited = Settings::new()
        .with("max_iter", "2")
        .structured_spec(Task::Sequence, LearnerKind::Lbfgs, c, 0)
        .unwrap();
    let two = fit(&data, &limited, &()).unwrap();
    assert_eq!(
        (two.run.status, two.run.steps),
        (RunStatus::IterationLimit, 2)
    );
    let stopped = fit(&data, &spec, &StopAt(3)).unwrap();
    assert_eq!(
        (stopped.run.status, stopped.run.steps),
        (RunStatus::Cancelled, 3)
    );
    assert_eq!(stopped.run.trace.len(), 3);
    // What it does not train.
    let parse = Settings::new()
        .structured_spec(Task::Parsing, LearnerKind::Lbfgs, 1.0, 0)
        .unwrap_err()
        .to_string();
    assert!(parse.contains("online or mtl"), "{parse}");
    let epochs = Settings::new()
        .with("epochs", "3")
        .structured_spec(Task::Sequence, LearnerKind::Lbfgs, 1.0, 0)
        .unwrap_err()
        .to_string();
    assert!(
        epochs.contains("epochs") && epochs.contains("lbfgs"),
        "{epochs}"
    );
    let table = LearnerSpec::new(
        Task::Binary,
        crate::estimator::Learner::default_for(LearnerKind::Lbfgs),
    );
    let table = table.check().unwrap_err().to_string();
    assert!(
        table.contains("tables train with") && !table.contains("parsers"),
        "{table}"
    );
}

#[test]
fn columns_in_memory_train_what_the_column_file_trains() {
    let (x, y) = toy();
    let file = parse_columns(column_file(&x, &y).as_bytes(), Path::new("toy"))
        .unwrap()
        .sentences;
    let templates = TemplateFile::parse(TEMPLATES.as_bytes(), Path::new("tpl")).unwrap();
    for spec in specs() {
        let cli = fit(&TagData::new(file.clone(), templates.clone()), &spec, &()).unwrap();
        let ours = fit_sequence_tagger(
            Sentences::Columns(&x),
            &y,
            Some((TEMPLATES, "tpl")),
            &spec,
            &(),
        )
        .unwrap();
        let (Model::Tagger(a), Model::Tagger(b)) = (&cli.model, &ours.model) else {
            panic!("taggers")
        };
        assert_eq!(a.weights, b.weights, "{:?}", spec.learner);
        assert_eq!(a.template_weights, b.template_weights);
        let tagger = SequenceTagger::new(ours.model).unwrap();
        let pred = tagger.predict(Sentences::Columns(&x)).unwrap();
        let want: Vec<Vec<String>> = a
            .tag(&file)
            .unwrap()
            .into_iter()
            .map(|s| {
                s.into_iter()
                    .map(|l| String::from_utf8(l).unwrap())
                    .collect()
            })
            .collect();
        assert_eq!(pred, want);
        assert_eq!(
            tagger.templates(),
            ["B", "U0:%x[0,0]", "U1:%x[0,1]", "U2:%x[-1,0]", "U3:%x[0,2]"]
        );
        assert_eq!(tagger.template_weights().len(), 5);
        let back = SequenceTagger::from_bytes(&tagger.to_bytes().unwrap()).unwrap();
        assert_eq!(back.predict(Sentences::Columns(&x)).unwrap(), pred);
    }
}

/// The toy's columns as feature dicts: word and suffix as strings, capitalization as a
/// boolean, and the previous word (missing at the first token).
pub(super) fn dicts(x: &[Vec<Vec<String>>]) -> Vec<Vec<TokenFeatures>> {
    x.iter()
        .map(|s| {
            (0..s.len())
                .map(|t| {
                    let mut d = vec![
                        ("word".to_string(), FeatureValue::Text(s[t][0].clone())),
                        ("suffix".to_string(), FeatureValue::Text(s[t][1].clone())),
                    ];
                    if t > 0 {
                        d.push(("prev".to_string(), FeatureValue::Text(s[t - 1][0].clone())));
                    }
                    d.push(("cap".to_string(), FeatureValue::Bool(s[t][2] == "Y")));
                    d
                })
                .collect()
        })
        .collect()
}

/// The feature rows of dicts against counts by hand: one feature per distinct string of a
/// key, one real-valued feature per boolean or number key; a row holds one entry per key
/// present in the token (`false` and missing keys none), with the number as its value.
#[test]
fn dict_features_are_key_value_indicators_and_real_values() {
    let (x, y) = toy();
    let d = dicts(&x);
    let spec = &specs()[0];
    let fitted = fit_sequence_tagger(Sentences::Dicts(&d), &y, None, spec, &()).unwrap();
    let Model::Tagger(m) = &fitted.model else {
        panic!()
    };
    let keys = m.featurizer.templates.keys.clone().unwrap();
    assert_eq!(keys.names, ["word", "suffix", "cap", "prev"]);
    // Feature count per group, by hand: distinct words, suffixes, previous words; cap is
    // one real-valued feature.
    let distinct = |f: &dyn Fn(&Vec<String>, usize) -> Option<String>| {
        let mut v: Vec<String> = x
            .iter()
            .flat_map(|s| (0..s.len()).filter_map(move |t| f(&s[t], t).map(|w| w.to_string())))
            .collect();
        v.sort();
        v.dedup();
        v.len()
    };
    let words = distinct(&|t, _| Some(t[0].clone()));
    let suffixes = distinct(&|t, _| Some(t[1].clone()));
    let mut prev: Vec<&str> = x
        .iter()
        .flat_map(|s| s[..s.len() - 1].iter().map(|t| t[0].as_str()))
        .collect();
    prev.sort_unstable();
    prev.dedup();
    assert_eq!(
        m.featurizer.features_per_template(),
        [words, suffixes, 1, prev.len()]
    );
    // Rows: one entry per present key; cap's value 1 where capitalized, absent elsewhere.
    let cols = keys.columns(&d, None).unwrap();
    for (s, cs) in x.iter().zip(&cols) {
        let rows = m.featurizer.rows(cs);
        for t in 0..s.len() {
            let want = 2 + usize::from(t > 0) + usize::from(s[t][2] == "Y");
            assert_eq!(rows.row(t).len(), want, "{s:?} {t}");
            assert!(rows.row(t).iter().all(|&(_, v)| v == 1.0));
        }
    }
    // A number is a real value: 2.5 in the row.
    let with_number: Vec<Vec<TokenFeatures>> = d
        .iter()
        .map(|s| {
            s.iter()
                .map(|t| {
                    let mut t = t.clone();
                    t.push(("len".into(), FeatureValue::Number(2.5)));
                    t
                })
                .collect()
        })
        .collect();
    let f2 = fit_sequence_tagger(Sentences::Dicts(&with_number), &y, None, spec, &()).unwrap();
    let Model::Tagger(m2) = &f2.model else {
        panic!()
    };
    let k2 = m2.featurizer.templates.keys.clone().unwrap();
    assert_eq!(k2.real, [false, false, true, true, false]); // word suffix cap len prev
    let rows = m2
        .featurizer
        .rows(&k2.columns(&with_number[..1], None).unwrap()[0]);
    assert!(rows.row(0).iter().any(|&(_, v)| v == 2.5));
    let tagger = SequenceTagger::new(fitted.model.clone()).unwrap();
    assert_eq!(tagger.templates(), ["B", "word", "suffix", "cap", "prev"]);
    let pred = tagger.predict(Sentences::Dicts(&d)).unwrap();
    let acc = pred
        .iter()
        .flatten()
        .zip(y.iter().flatten())
        .filter(|(a, b)| a == b)
        .count();
    assert!(acc * 10 >= 9 * y.iter().flatten().count(), "{acc}");
}

/// Feature dicts whose keys hold strings equal, feature for feature, the template tagger
/// over the cells `=value` with one template `U<j>:key%x[0,j]` per key: the same weights.
#[test]
fn string_dicts_train_the_same_model_as_their_columns() {
    let (x, y) = toy();
    let d: Vec<Vec<TokenFeatures>> = x
        .iter()
        .map(|s| {
            s.iter()
                .map(|t| {
                    vec![
                        ("w".to_string(), FeatureValue::Text(t[0].clone())),
                        ("s".to_string(), FeatureValue::Text(t[1].clone())),
                    ]
                })
                .collect()
        })
        .collect();
    let cols: Vec<Vec<Vec<String>>> = x
        .iter()
        .map(|s| {
            s.iter()
                .map(|t| vec![format!("={}", t[0]), format!("={}", t[1])])
                .collect()
        })
        .collect();
    let tpl = "U0:w%x[0,0]\nU1:s%x[0,1]\nB\n";
    for spec in specs() {
        let a = fit_sequence_tagger(Sentences::Dicts(&d), &y, None, &spec, &()).unwrap();
        let b = fit_sequence_tagger(Sentences::Columns(&cols), &y, Some((tpl, "t")), &spec, &())
            .unwrap();
        let (Model::Tagger(a), Model::Tagger(b)) = (&a.model, &b.model) else {
            panic!()
        };
        assert_eq!(a.weights, b.weights);
        let ta = SequenceTagger::new(Model::Tagger(a.clone())).unwrap();
        let tb = SequenceTagger::new(Model::Tagger(b.clone())).unwrap();
        assert_eq!(
            ta.predict(Sentences::Dicts(&d)).unwrap(),
            tb.predict(Sentences::Columns(&cols)).unwrap()
        );
        if ta.is_crf() {
            let m = ta.predict_marginals(Sentences::Dicts(&d)).unwrap();
            for token in m.iter().flatten() {
                assert_eq!(token.len(), ta.classes().len());
                assert!((token.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            }
            assert_eq!(m, tb.predict_marginals(Sentences::Columns(&cols)).unwrap());
        } else {
            let e = ta
                .predict_marginals(Sentences::Dicts(&d))
                .unwrap_err()
                .to_string();
            assert!(e.contains("CRF loss"), "{e}");
        }
        if !a.template_weights.is_empty() {
            assert!((ta.template_weights().iter().sum::<f64>() - 1.0).abs() < 1e-6);
        }
    }
}

#[test]
fn bad_input_and_settings_are_named() {
    let (x, y) = toy();
    let d = dicts(&x);
    let spec = &specs()[0];
    let e = |r: Result<Fitted>| r.unwrap_err().to_string();
    let short: Vec<Vec<String>> = y.iter().map(|l| l[1..].to_vec()).collect();
    assert!(e(fit_sequence_tagger(
        Sentences::Dicts(&d),
        &short,
        None,
        spec,
        &()
    ))
    .contains("sentence 0 has 4 tokens but 3 labels"));
    assert!(e(fit_sequence_tagger(
        Sentences::Dicts(&d),
        &y[1..],
        None,
        spec,
        &()
    ))
    .contains("label lists"));
    assert!(e(fit_sequence_tagger(
        Sentences::Columns(&x),
        &y,
        None,
        spec,
        &()
    ))
    .contains("need templates"));
    assert!(e(fit_sequence_tagger(
        Sentences::Dicts(&d),
        &y,
        Some((TEMPLATES, "t")),
        spec,
        &()
    ))
    .contains("need none"));
    let bad = e(fit_sequence_tagger(
        Sentences::Columns(&x),
        &y,
        Some(("U0:%x[0,9]\n", "mytpl")),
        spec,
        &(),
    ));
    assert!(bad.contains("mytpl") && bad.contains("column 9"), "{bad}");
    let mut ragged = x.clone();
    ragged[2][1].pop();
    let r = e(fit_sequence_tagger(
        Sentences::Columns(&ragged),
        &y,
        Some((TEMPLATES, "t")),
        spec,
        &(),
    ));
    assert!(r.contains("sentence 2, token 1 has 2 columns"), "{r}");
    let tagging = |s: Settings, kind| s.structured_spec(Task::Sequence, kind, 1.0, 0);
    let m = tagging(Settings::new().with("q", "2"), LearnerKind::Online)
        .unwrap_err()
        .to_string();
    assert!(
        m.contains("q is a setting of the mtl learner, not of online"),
        "{m}"
    );
    let l = Settings::new().with("loss", "squared");
    assert!(tagging(l, LearnerKind::Online).is_err());
    assert!(tagging(Settings::new(), LearnerKind::Gomp).is_err());
    let tagger = SequenceTagger::new(
        fit_sequence_tagger(Sentences::Dicts(&d), &y, None, spec, &())
            .unwrap()
            .model,
    )
    .unwrap();
    assert!(tagger
        .predict(Sentences::Columns(&x))
        .unwrap_err()
        .to_string()
        .contains("feature dicts"));
    for name in registry::STRUCTURED_SETTINGS {
        assert!(registry::setting(name).is_some(), "{name}");
    }
}

/// The best label sequence by enumeration from named weights: each token's score for a label
/// is the sum of its attributes' weights times their values, plus the label pairs'.
fn best_by_name(
    tokens: &[Vec<(String, f64)>],
    state: &std::collections::HashMap<(String, String), f64>,
    trans: &std::collections::HashMap<(String, String), f64>,
    labels: &[String],
) -> Vec<String> {
    let l = labels.len();
    let score = |path: &[usize]| -> f64 {
        let unary: f64 = path
            .iter()
            .zip(tokens)
            .map(|(&y, tok)| {
                tok.iter()
                    .map(|(a, v)| v * state.get(&(a.clone(), labels[y].clone())).unwrap_or(&0.0))
                    .sum::<f64>()
            })
            .sum();
        let pairs: f64 = path
            .windows(2)
            .map(|p| trans.get(&(labels[p[0]].clone(), labels[p[1]].clone())))
            .map(|w| w.copied().unwrap_or(0.0))
            .sum();
        unary + pairs
    };
    let mut best = (f64::NEG_INFINITY, Vec::new());
    for code in 0..l.pow(tokens.len() as u32) {
        let path: Vec<usize> = (0..tokens.len())
            .map(|i| code / l.pow(i as u32) % l)
            .collect();
        let s = score(&path);
        if s > best.0 {
            best = (s, path);
        }
    }
    best.1.iter().map(|&y| labels[y].clone()).collect()
}

/// `state_features` and `transition_features` are the weights `predict` maximizes (by
/// enumeration over the labels of short sentences, every learner), attributes named as
/// python-crfsuite names them; templates with bigram macros are refused.
#[test]
fn named_weights_score_what_predict_maximizes() {
    use std::collections::HashMap;
    let (x, y) = toy();
    // The toy's dicts, plus a nested number and a string token's attribute.
    let d: Vec<Vec<TokenFeatures>> = dicts(&x)
        .into_iter()
        .map(|s| {
            s.into_iter()
                .enumerate()
                .map(|(t, mut tok)| {
                    let pos = FeatureValue::Attribute("at:pos".into(), t as f64 / 2.0);
                    tok.push(("at".into(), pos));
                    tok.push(("w".into(), FeatureValue::Attribute("w=x".into(), 1.0)));
                    tok
                })
                .collect()
        })
        .collect();
    for (n, spec) in specs().iter().enumerate() {
        let fitted = fit_sequence_tagger(Sentences::Dicts(&d), &y, None, spec, &()).unwrap();
        let tagger = SequenceTagger::new(fitted.model).unwrap();
        let state = tagger.state_features(Sentences::Dicts(&d)).unwrap();
        let names: Vec<&str> = state.iter().map(|(a, _, _)| a.as_str()).collect();
        // The plain l2 learner keeps every group (the others may drop some).
        for want in ["word:dog", "suffix:og", "cap", "prev:the", "at:pos", "w=x"] {
            assert!(n > 0 || names.contains(&want), "{want}: {names:?}");
        }
        assert!(state.iter().all(|(_, _, w)| *w != 0.0));
        let state: HashMap<(String, String), f64> =
            state.into_iter().map(|(a, l, w)| ((a, l), w)).collect();
        let trans: HashMap<(String, String), f64> = tagger
            .transition_features()
            .into_iter()
            .map(|(a, b, w)| ((a, b), w))
            .collect();
        let labels = tagger.classes();
        let pred = tagger.predict(Sentences::Dicts(&d)).unwrap();
        for (s, want) in d.iter().zip(&pred) {
            let tokens: Vec<Vec<(String, f64)>> = s
                .iter()
                .map(|tok| {
                    tok.iter()
                        .filter_map(|(k, v)| match v {
                            FeatureValue::Text(s) => Some((format!("{k}:{s}"), 1.0)),
                            FeatureValue::Bool(true) => Some((k.clone(), 1.0)),
                            FeatureValue::Bool(false) => None,
                            FeatureValue::Number(x) => Some((k.clone(), *x)),
                            FeatureValue::Attribute(a, x) => Some((a.clone(), *x)),
                        })
                        .collect()
                })
                .collect();
            assert_eq!(&best_by_name(&tokens, &state, &trans, &labels), want);
        }
    }
    let spec = &specs()[0];
    let macros = "U0:%x[0,0]\nB1:%x[0,0]\n";
    let fitted =
        fit_sequence_tagger(Sentences::Columns(&x), &y, Some((macros, "t")), spec, &()).unwrap();
    let tagger = SequenceTagger::new(fitted.model).unwrap();
    let e = tagger
        .state_features(Sentences::Columns(&x))
        .unwrap_err()
        .to_string();
    assert!(e.contains("bigram templates with macros"), "{e}");
}
