//! The demos: small runs on data shipped in the repository, through the estimator layer
//! (the command-line tool prints what they return).

use crate::ocr::methods;
use crate::tables::load_uci;
use multikernel::data::ocr::read_ocr;
use multikernel::data::split::stratified_split;
use multikernel::data::Targets;
use multikernel::engine::prox::RegSpec;
use multikernel::error::{Error, Result};
use multikernel::estimator::{fit, Learner, LearnerSpec, OnlineSpec, OnlineSteps, Strength, Task};
use multikernel::run::Observer;
use std::path::Path;

/// What the OCR demo did.
#[derive(Debug, Clone)]
pub struct OcrDemo {
    pub train_words: usize,
    pub train_chars: usize,
    pub test_words: usize,
    pub test_chars: usize,
    pub c: f64,
    pub eta0: f64,
    pub epochs: usize,
    pub seconds: f64,
    /// Kernel names and learned weights.
    pub weights: Vec<(String, f64)>,
    /// Per-character accuracy on folds 1-9 (a fraction).
    pub accuracy: f64,
    /// The paper's accuracy of the same row (Table 1, percent).
    pub paper: f64,
}

/// The spec of the OCR demo: sparse MKL (squared l2,1) over linear, quadratic and Gaussian
/// kernels, the `mkl-lqg` row of Table 1 with its selected C and eta0, seed 1.
pub fn ocr_demo_spec() -> Result<(LearnerSpec, f64)> {
    let method = methods()
        .into_iter()
        .find(|m| m.name == "mkl-lqg")
        .ok_or_else(|| Error::data("the mkl-lqg row of Table 1 is missing"))?;
    let mut spec = LearnerSpec::new(
        Task::Sequence,
        Learner::Online(OnlineSpec {
            reg: Some(method.reg()),
            steps: OnlineSteps {
                eta0: method.eta0,
                epochs: 20,
                ..OnlineSteps::default()
            },
            ..OnlineSpec::default()
        }),
    );
    spec.kernels = method
        .kernels
        .iter()
        .map(|k| k.spec().parse())
        .collect::<Result<_>>()?;
    spec.strength = Strength::C(method.c);
    spec.seed = 1;
    Ok((spec, method.paper.0))
}

/// Trains the OCR demo on fold 0 of `DIR/ocr/letter.data.gz` and tests it on folds 1-9.
pub fn ocr_demo(data_dir: &Path, observer: &dyn Observer) -> Result<OcrDemo> {
    let all = read_ocr(&data_dir.join("ocr/letter.data.gz"))?;
    let train = all.select_folds(&[0]);
    let test = all.exclude_folds(&[0]);
    let (spec, paper) = ocr_demo_spec()?;
    let fitted = fit(&train, &spec, observer)?;
    let multikernel::model::Model::Sequence(m) = &fitted.model else {
        return Err(Error::data("the OCR demo trains a sequence model"));
    };
    let accuracy = m.token_accuracy(&test, &spec.memory)?;
    let Learner::Online(o) = &spec.learner else {
        unreachable!()
    };
    Ok(OcrDemo {
        train_words: train.n_sequences(),
        train_chars: train.n_positions(),
        test_words: test.n_sequences(),
        test_chars: test.n_positions(),
        c: match spec.strength {
            Strength::C(c) => c,
            Strength::Lambda(_) => f64::NAN,
        },
        eta0: o.steps.eta0,
        epochs: o.steps.epochs,
        seconds: fitted.run.seconds,
        weights: m.kernel_weights(),
        accuracy,
        paper,
    })
}

/// What the small vector demo did.
#[derive(Debug, Clone)]
pub struct UciDemo {
    pub train_rows: usize,
    pub test_rows: usize,
    pub weights: Vec<(String, f64)>,
    pub accuracy: f64,
}

/// Sparse MKL (squared l2,1) over trace-normalized linear, quadratic and Gaussian kernels on
/// a stratified 70/30 split of ionosphere (`DIR/uci/ionosphere.csv`), C = 10, 20 epochs.
pub fn uci_demo(data_dir: &Path, observer: &dyn Observer) -> Result<UciDemo> {
    let tables = load_uci(&data_dir.join("uci"), Some("ionosphere"))?;
    let t = &tables[0];
    let Targets::Classes { y, .. } = &t.data.targets else {
        return Err(Error::data("ionosphere has class labels"));
    };
    let (tr, te) = stratified_split(y, 0.7, 1);
    let train = t.data.select(&tr);
    let test = t.data.select(&te);
    let mut spec = LearnerSpec::new(
        Task::Binary,
        Learner::Online(OnlineSpec {
            reg: Some(RegSpec::L21Sq),
            ..OnlineSpec::default()
        }),
    )
    .with_c(10.0);
    spec.kernels = [
        "linear:norm=trace",
        "poly:degree=2,offset=1,norm=trace",
        "rbf:norm=trace",
    ]
    .iter()
    .map(|s| s.parse())
    .collect::<Result<_>>()?;
    let fitted = fit(&train, &spec, observer)?;
    let score = fitted
        .model
        .score_with(test.x.view(), &test.targets, &spec.memory)?;
    let summary = fitted.model.summary();
    Ok(UciDemo {
        train_rows: train.len(),
        test_rows: test.len(),
        weights: summary
            .kernels
            .iter()
            .map(|k| (k.name.clone(), k.values[0]))
            .collect(),
        accuracy: score.value,
    })
}
