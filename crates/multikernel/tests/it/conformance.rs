//! Conformance of every learner on every task it supports (issue 49): the pairs are found,
//! not listed by hand: each `LearnerKind::ALL` x each form of training data (a table for
//! binary, multiclass and regression; OCR rows and tagged sentences for sequences; a
//! treebank for parsing) is a pair when `LearnerSpec::check` and a fit on tiny data accept
//! it, and every learner must have one. On each pair, through the front door only:
//!
//! 1. the fit succeeds and the model predicts its training data (shapes right, values
//!    finite);
//! 2. a stop flag set before the run ends it as `Cancelled`, with a model that predicts;
//! 3. the model bytes read back write the same bytes and predict the same bits;
//! 4. the same spec and seed fitted in rayon pools of 1 and 2 threads give the same bytes.
//!
//! A new learner is picked up from `LearnerKind::ALL` with its default settings (add a
//! small budget in `learner`) and must be added to `EXPECTED`, the table of pairs.

use multikernel::data::conllu::Heads;
use multikernel::data::ocr::synthetic_words;
use multikernel::data::{Dataset, Matrix, SequenceData, Targets};
use multikernel::estimator::parser::{self, DependencyParser, Treebank};
use multikernel::estimator::tagger::{self, FeatureValue, Sentences, SequenceTagger};
use multikernel::estimator::{
    fit, Budget, Fitted, GompSpec, LbfgsSpec, Learner, LearnerKind, LearnerSpec, LpMklSpec,
    MtlSpec, OnlineSpec, OnlineSteps, PolySpec, Task, WrapperSpec,
};
use multikernel::kernel::MemoryLimit;
use multikernel::model::Model;
use multikernel::run::{Observer, RunStatus, StopFlag};
use multikernel::Error;
use rand::{Rng, SeedableRng};
use std::time::Instant;

/// The forms of training data, each for one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Rows of a table for a vector task.
    Table(Task),
    /// Sequences of rows (synthetic OCR words), `fit` on `SequenceData`.
    Ocr,
    /// Sentences of feature dicts, `tagger::training_data`.
    Tagged,
    /// CoNLL-U sentences, `parser::training_data`.
    Treebank,
}

impl Form {
    const ALL: [Form; 6] = [
        Form::Table(Task::Binary),
        Form::Table(Task::Multiclass),
        Form::Table(Task::Regression),
        Form::Ocr,
        Form::Tagged,
        Form::Treebank,
    ];

    fn task(self) -> Task {
        match self {
            Form::Table(t) => t,
            Form::Ocr | Form::Tagged => Task::Sequence,
            Form::Treebank => Task::Parsing,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Form::Table(Task::Binary) => "binary",
            Form::Table(Task::Multiclass) => "multiclass",
            Form::Table(_) => "regression",
            Form::Ocr => "sequence (ocr)",
            Form::Tagged => "sequence (tagged)",
            Form::Treebank => "parsing",
        }
    }
}

/// Every supported pair, by the names of `LearnerKind` and `Form::name`: what the loop must
/// find (a pair added or lost is a change to review here).
const EXPECTED: &[(&str, &[&str])] = &[
    (
        "online",
        &[
            "binary",
            "multiclass",
            "regression",
            "sequence (ocr)",
            "sequence (tagged)",
            "parsing",
        ],
    ),
    ("gomp", &["binary", "multiclass", "regression"]),
    ("lp-mkl", &["binary", "multiclass", "regression"]),
    ("mirror-descent", &["binary", "regression"]),
    ("ucd", &["binary", "regression"]),
    ("poly", &["binary", "regression"]),
    ("mtl", &["sequence (tagged)", "parsing"]),
    (
        "simplemkl",
        &["binary", "multiclass", "regression", "sequence (ocr)"],
    ),
    (
        "gauss-seidel",
        &["binary", "multiclass", "regression", "sequence (ocr)"],
    ),
    ("lbfgs", &["sequence (tagged)"]),
];

/// The learner of `kind` with a small budget: few epochs, iterations or cuts (an iteration
/// budget, never seconds, for the polynomial learners: the same seed, the same model).
fn learner(kind: LearnerKind) -> Learner {
    let poly = PolySpec {
        degree: 2,
        budget: Budget::Iterations(20),
        ..PolySpec::default()
    };
    let wrapper = WrapperSpec {
        max_iter: 4,
        first_epochs: 2,
        warm_epochs: 1,
        ..WrapperSpec::default()
    };
    match kind {
        LearnerKind::Online => Learner::Online(OnlineSpec {
            steps: OnlineSteps {
                epochs: 2,
                ..OnlineSteps::default()
            },
            ..OnlineSpec::default()
        }),
        LearnerKind::Gomp => Learner::Gomp(GompSpec {
            max_kernels: 2,
            ..GompSpec::default()
        }),
        LearnerKind::LpMkl => Learner::LpMkl(LpMklSpec { p: 4.0 / 3.0 }),
        LearnerKind::MirrorDescent => Learner::MirrorDescent(poly),
        LearnerKind::Ucd => Learner::Ucd(poly),
        LearnerKind::Poly => Learner::Poly(poly),
        LearnerKind::Mtl => Learner::Mtl(MtlSpec {
            max_iter: 5,
            ..MtlSpec::default()
        }),
        LearnerKind::SimpleMkl => Learner::SimpleMkl(wrapper),
        LearnerKind::GaussSeidel => Learner::GaussSeidel(wrapper),
        LearnerKind::Lbfgs => Learner::Lbfgs(LbfgsSpec { max_iter: 20 }),
        other => Learner::default_for(other),
    }
}

/// Several kernels where the learner takes kernels (the polynomial learners keep their
/// per-feature base kernels; templates are the groups of taggers and parsers).
fn kernels(kind: LearnerKind, form: Form) -> Vec<&'static str> {
    match (kind, form) {
        (LearnerKind::MirrorDescent | LearnerKind::Ucd | LearnerKind::Poly, _) => vec![],
        (LearnerKind::Mtl, _) | (_, Form::Tagged | Form::Treebank) => vec![],
        (_, Form::Table(_)) => vec!["rbf", "linear", "poly:degree=2"],
        (_, Form::Ocr) => vec!["linear:norm=diag", "bspline"],
    }
}

fn spec(kind: LearnerKind, form: Form) -> LearnerSpec {
    LearnerSpec::new(form.task(), learner(kind))
        .with_kernels(
            kernels(kind, form)
                .iter()
                .map(|k| k.parse().unwrap())
                .collect(),
        )
        .with_seed(5)
}

/// A token of a tagged sentence: its features by name.
type Token = Vec<(String, FeatureValue)>;

/// Tiny training data of every form.
struct Data {
    binary: Dataset,
    multiclass: Dataset,
    regression: Dataset,
    ocr: SequenceData,
    tagged: (Vec<Vec<Token>>, Vec<Vec<String>>),
    treebank: Treebank,
}

/// 36 rows of 4 uniform features with `target` of each row.
fn table(target: impl Fn(&[f64], &mut rand_chacha::ChaCha8Rng) -> f64, classes: usize) -> Dataset {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    let (n, d) = (36, 4);
    let x: Vec<f64> = (0..n * d).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let t: Vec<f64> = (0..n).map(|i| target(&x[i * d..][..d], &mut rng)).collect();
    let targets = if classes == 0 {
        Targets::Real(t)
    } else {
        Targets::Classes {
            classes: (0..classes).map(|c| format!("c{c}")).collect(),
            y: t.iter().map(|&v| v as usize).collect(),
        }
    };
    Dataset {
        x: Matrix::from_vec(n, d, x),
        targets,
        feature_names: (0..d).map(|j| format!("x{j}")).collect(),
    }
}

/// Tagged sentences (a token's features, a tag per token): "DET (ADJ) NOUN VERB".
fn tagged() -> (Vec<Vec<Token>>, Vec<Vec<String>>) {
    let token = |w: &str| {
        vec![
            ("word".to_string(), FeatureValue::Text(w.into())),
            (
                "suffix".to_string(),
                FeatureValue::Text(w[w.len().saturating_sub(2)..].into()),
            ),
        ]
    };
    let (det, adj, noun, verb) = (
        ["the", "a"],
        ["big", "small", "red"],
        ["dog", "cat", "bird"],
        ["runs", "sleeps"],
    );
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for i in 0..9 {
        let mut s = vec![(det[i % 2], "DET")];
        if i % 3 != 0 {
            s.push((adj[i % 3], "ADJ"));
        }
        s.push((noun[(i / 2) % 3], "NOUN"));
        s.push((verb[i % 2], "VERB"));
        x.push(s.iter().map(|(w, _)| token(w)).collect());
        y.push(s.iter().map(|(_, t)| t.to_string()).collect());
    }
    (x, y)
}

/// Sentences "DET (ADJ) NOUN VERB": the determiner and adjective attach to the noun, the
/// noun to the verb, the verb to the root.
fn treebank() -> Treebank {
    let (adj, noun, verb) = (["big", "old"], ["dog", "cat", "bird"], ["runs", "sleeps"]);
    let mut text = String::new();
    for i in 0..8 {
        let mut tokens = vec![("the", "DET", "det")];
        if i % 2 == 1 {
            tokens.push((adj[(i / 2) % 2], "ADJ", "amod"));
        }
        tokens.push((noun[i % 3], "NOUN", "nsubj"));
        tokens.push((verb[(i / 2) % 2], "VERB", "root"));
        let n = tokens.len();
        for (k, (form, upos, rel)) in tokens.iter().enumerate() {
            let head = match *upos {
                "VERB" => 0,
                "NOUN" => n,
                _ => n - 1,
            };
            text.push_str(&format!(
                "{}\t{form}\t{form}\t{upos}\t_\t_\t{head}\t{rel}\t_\t_\n",
                k + 1
            ));
        }
        text.push('\n');
    }
    Treebank::parse(&text, "<conformance>", Heads::Required).unwrap()
}

impl Data {
    fn new() -> Data {
        Data {
            binary: table(|x, _| f64::from(u8::from(x[0] * x[1] > 0.0)), 2),
            multiclass: table(
                |x, _| {
                    if x[0] < -0.3 {
                        0.0
                    } else if x[1] < 0.0 {
                        1.0
                    } else {
                        2.0
                    }
                },
                3,
            ),
            regression: table(
                |x, rng| x[0].sin() + x[1] * x[1] + 0.1 * rng.gen_range(-1.0..1.0),
                0,
            ),
            ocr: synthetic_words(10, 2, 0.1),
            tagged: tagged(),
            treebank: treebank(),
        }
    }

    fn table(&self, task: Task) -> &Dataset {
        match task {
            Task::Binary => &self.binary,
            Task::Multiclass => &self.multiclass,
            _ => &self.regression,
        }
    }

    fn fit(
        &self,
        form: Form,
        spec: &LearnerSpec,
        observer: &dyn Observer,
    ) -> Result<Fitted, Error> {
        match form {
            Form::Table(t) => fit(self.table(t), spec, observer),
            Form::Ocr => fit(&self.ocr, spec, observer),
            Form::Tagged => {
                let (x, y) = &self.tagged;
                fit(
                    &tagger::training_data(Sentences::Dicts(x), y, None)?,
                    spec,
                    observer,
                )
            }
            Form::Treebank => fit(
                &parser::training_data(&self.treebank, None, false)?,
                spec,
                observer,
            ),
        }
    }

    /// The model's predictions on the training data, checked for shape and finiteness, as
    /// text that is equal only for equal bits (decision values by their bit patterns).
    fn predict(&self, form: Form, model: &Model) -> Result<String, String> {
        let e = |e: Error| e.to_string();
        match form {
            Form::Table(t) => {
                let d = self.table(t);
                let pred = model.predict(d.x.view()).map_err(e)?;
                if pred.len() != d.len() {
                    return Err(format!("{} predictions of {} rows", pred.len(), d.len()));
                }
                let dec = model.decision_function(d.x.view()).map_err(e)?;
                if dec.rows != d.len() || dec.data.iter().any(|v| !v.is_finite()) {
                    return Err(format!("decision values {dec:?}"));
                }
                let bits: Vec<u64> = dec.data.iter().map(|v| v.to_bits()).collect();
                Ok(format!("{pred:?} {bits:?}"))
            }
            Form::Ocr => {
                let s = &self.ocr;
                let pred = model
                    .predict_sequences_with(s.x.view(), &s.spans, &MemoryLimit::default())
                    .map_err(e)?;
                let lens: Vec<usize> = s.spans.iter().map(|r| r.len()).collect();
                if pred.iter().map(Vec::len).collect::<Vec<_>>() != lens {
                    return Err(format!("label sequences {pred:?} for words of {lens:?}"));
                }
                Ok(format!("{pred:?}"))
            }
            Form::Tagged => {
                let (x, y) = &self.tagged;
                let pred = SequenceTagger::new(model.clone())
                    .and_then(|t| t.predict(Sentences::Dicts(x)))
                    .map_err(e)?;
                if pred.iter().map(Vec::len).ne(y.iter().map(Vec::len)) {
                    return Err(format!("tags {pred:?}"));
                }
                Ok(format!("{pred:?}"))
            }
            Form::Treebank => {
                let parses = DependencyParser::new(model.clone())
                    .and_then(|p| p.parse(&self.treebank))
                    .map_err(e)?;
                let lens = self.treebank.sentences().iter().map(|s| s.tokens.len());
                if parses.iter().map(|p| p.heads.len()).ne(lens) {
                    return Err(format!("parses {parses:?}"));
                }
                Ok(format!("{parses:?}"))
            }
        }
    }
}

/// The supported pairs: those `check` and a fit on tiny data accept (an `Unsupported`
/// refusal from either is a pair the learner does not take; any other error fails). Each
/// with its undisturbed fit.
fn supported(data: &Data) -> Vec<(LearnerKind, Form, Fitted)> {
    let mut pairs = Vec::new();
    for kind in LearnerKind::ALL {
        for form in Form::ALL {
            let s = spec(kind, form);
            match s.check() {
                Err(Error::Unsupported(_)) => continue,
                Err(e) => panic!("{kind} on {}: check: {e}", form.name()),
                Ok(_) => {}
            }
            match data.fit(form, &s, &StopFlag::new()) {
                Err(Error::Unsupported(_)) => continue,
                Err(e) => panic!("{kind} on {}: fit: {e}", form.name()),
                Ok(f) => pairs.push((kind, form, f)),
            }
        }
    }
    pairs
}

/// The properties of one pair (the fit was its discovery), as failures.
fn conforms(data: &Data, kind: LearnerKind, form: Form, fitted: &Fitted) -> Vec<String> {
    let label = format!("{kind} on {}", form.name());
    let mut failures = Vec::new();
    let mut fail = |property: &str, msg: String| {
        failures.push(format!("{label}: {property}: {msg}"));
    };
    let s = spec(kind, form);
    // 1. The model predicts its training data.
    let pred = match data.predict(form, &fitted.model) {
        Ok(p) => p,
        Err(e) => {
            fail("fit", format!("the model does not predict: {e}"));
            return failures;
        }
    };
    // 2. Cancelled before the first step: the status says so, the model predicts.
    let flag = StopFlag::new();
    flag.stop();
    match data.fit(form, &s, &flag) {
        Ok(f) => {
            if f.run.status != RunStatus::Cancelled {
                fail("cancel", format!("status {:?}", f.run.status));
            }
            if let Err(e) = data.predict(form, &f.model) {
                fail(
                    "cancel",
                    format!("the cancelled model does not predict: {e}"),
                );
            }
        }
        Err(e) => fail("cancel", format!("error {e}")),
    }
    // 3. Bytes -> model -> the same bytes, the same predictions.
    let bytes = fitted.model.to_bytes().unwrap();
    match Model::from_bytes(&bytes) {
        Ok(back) => {
            if back.to_bytes().unwrap() != bytes {
                fail("bytes", "read back, it writes other bytes".into());
            }
            if data.predict(form, &back).as_ref() != Ok(&pred) {
                fail("bytes", "read back, it predicts other values".into());
            }
        }
        Err(e) => fail("bytes", format!("the bytes do not read back: {e}")),
    }
    // 4. 1 and 2 threads: the same bytes (and those of the fit outside any pool).
    let in_pool = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| data.fit(form, &s, &StopFlag::new()))
            .and_then(|f| f.model.to_bytes())
    };
    match (in_pool(1), in_pool(2)) {
        (Ok(one), Ok(two)) => {
            if one != two {
                let at = one.iter().zip(&two).take_while(|(a, b)| a == b).count();
                fail("threads", format!("1 and 2 threads differ at byte {at}"));
            } else if one != bytes {
                fail(
                    "threads",
                    "a pool of 1 thread differs from the default".into(),
                );
            }
        }
        (a, b) => fail("threads", format!("{:?} / {:?}", a.err(), b.err())),
    }
    failures
}

#[test]
fn every_learner_on_every_task_it_supports_conforms() {
    let data = Data::new();
    let start = Instant::now();
    let pairs = supported(&data);
    // Every learner has a pair, and the pairs are the expected ones.
    for kind in LearnerKind::ALL {
        let found: Vec<&str> = pairs
            .iter()
            .filter(|p| p.0 == kind)
            .map(|p| p.1.name())
            .collect();
        assert!(
            !found.is_empty(),
            "{kind} supports no task on the tiny data"
        );
        let expected = EXPECTED.iter().find(|e| e.0 == kind.name());
        assert_eq!(
            Some(found.as_slice()),
            expected.map(|e| e.1),
            "{kind}: the supported tasks (update EXPECTED)"
        );
    }
    let mut failures = Vec::new();
    for (kind, form, fitted) in &pairs {
        let t = Instant::now();
        failures.extend(conforms(&data, *kind, *form, fitted));
        eprintln!(
            "{kind} on {}: {:.2} s",
            form.name(),
            t.elapsed().as_secs_f64()
        );
    }
    eprintln!(
        "{} pairs in {:.2} s",
        pairs.len(),
        start.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
