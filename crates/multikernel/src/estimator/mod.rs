//! The library's front door: describe what to learn with a [`LearnerSpec`], train it with
//! [`fit()`], and use the [`Model`] it returns (predict, decision values, summary, bytes and
//! files). The command-line tool and the Python package call only this layer.
//!
//! ```text
//! LearnerSpec --check()--> CheckedSpec --fit(data, observer)--> Fitted { model, run }
//! ```
//!
//! - [`spec`]: tasks, learners and their settings, the regularization constant `C` with the
//!   same meaning for every learner, defaults and validation in one place.
//! - Three ways to train, for every learner and task, each with the run contract of
//!   [`crate::run`] (an observer that sees progress and can stop the run; a status apart
//!   from errors):
//!   - [`fit()`] on data in memory ([`TrainingData`]: a table, sequences, tagged
//!     sentences, a treebank, or precomputed kernel matrices), as a [`FitRequest`] says
//!     (the spec, and the built-in selection or validation rows);
//!   - [`Loaded::fit`] on a data source ([`TrainSource::load`]: files in any of the
//!     formats, or a table streamed chunk by chunk);
//!   - [`incremental::IncrementalFit`], the online learner chunk by chunk by the caller.
//!
//! # One example per learner family
//! Each trains, predicts, turns the model into bytes and back, and gets the same
//! predictions (the same code serves files: `model.save(path)`, `Model::load(path)`).
//!
//! Online proximal MKL (Martins et al. 2011, Alg. 1), sparse MKL over three kernels:
//! ```
//! use multikernel::prelude::*;
//! # let sonar = std::path::Path::new("../../data/uci/sonar.csv");
//! let data = read_table(sonar, None, TargetKind::Classes, None, None)?;
//! let spec = LearnerSpec::new(Task::Binary, Learner::Online(OnlineSpec::default()))
//!     .with_kernels(vec!["linear:norm=trace".parse()?, "rbf".parse()?])
//!     .with_c(10.0);
//! let fitted = fit(&data, &spec, &())?;
//! assert_eq!(fitted.run.status, RunStatus::Completed);
//! let model = fitted.model;
//! let pred = model.predict(data.x.view())?;
//! let back = Model::from_bytes(&model.to_bytes()?)?;
//! assert_eq!(back.predict(data.x.view())?, pred);
//! println!("{}", model.summary()); // kernels and their weights
//! # Ok::<(), multikernel::Error>(())
//! ```
//!
//! MKL-GOMP (Sindhwani & Lozano 2012), one kernel per feature chosen greedily:
//! ```
//! use multikernel::prelude::*;
//! # let glass = std::path::Path::new("../../data/uci/glass.csv");
//! let data = read_table(glass, None, TargetKind::Classes, None, None)?;
//! let spec = LearnerSpec::new(
//!     Task::Multiclass,
//!     Learner::Gomp(GompSpec { max_kernels: 4, ..GompSpec::default() }),
//! );
//! let model = fit(&data, &spec, &())?.model;
//! assert_eq!(model.summary().kernels.len(), 4);
//! let back = Model::from_bytes(&model.to_bytes()?)?;
//! assert_eq!(back.predict(data.x.view())?, model.predict(data.x.view())?);
//! # Ok::<(), multikernel::Error>(())
//! ```
//!
//! lp-norm MKL (Kloft et al. 2011), regression with p = 4/3:
//! ```
//! use multikernel::prelude::*;
//! # let boston = std::path::Path::new("../../data/uci/boston-housing.csv");
//! let data = read_table(boston, None, TargetKind::Real, None, None)?;
//! let spec = LearnerSpec::new(Task::Regression, Learner::LpMkl(LpMklSpec { p: 4.0 / 3.0 }))
//!     .with_kernels(vec!["rbf".parse()?, "linear".parse()?]);
//! let model = fit(&data, &spec, &())?.model;
//! let back = Model::from_bytes(&model.to_bytes()?)?;
//! assert_eq!(back.decision_function(data.x.view())?, model.decision_function(data.x.view())?);
//! # Ok::<(), multikernel::Error>(())
//! ```
//!
//! Polynomial product-kernel MKL by randomized mirror descent (Afkanpour et al. 2013), a
//! fixed number of iterations so that the same seed gives the same model (`Learner::Ucd` for
//! uniform coordinate descent):
//! ```
//! use multikernel::prelude::*;
//! # let sonar = std::path::Path::new("../../data/uci/sonar.csv");
//! let data = read_table(sonar, None, TargetKind::Classes, None, None)?;
//! let poly = PolySpec { degree: 2, budget: Budget::Iterations(100), ..PolySpec::default() };
//! let spec = LearnerSpec::new(Task::Binary, Learner::MirrorDescent(poly));
//! let model = fit(&data, &spec, &())?.model;
//! let again = fit(&data, &spec, &())?.model;
//! assert_eq!(again.to_bytes()?, model.to_bytes()?);
//! let back = Model::from_bytes(&model.to_bytes()?)?;
//! assert_eq!(back.predict(data.x.view())?, model.predict(data.x.view())?);
//! # Ok::<(), multikernel::Error>(())
//! ```
//!
//! SPOM on sequences (Alg. 3), OCR words, with an observer that stops after two epochs:
//! ```
//! use multikernel::prelude::*;
//! use multikernel::data::ocr::read_ocr;
//! # let ocr = std::path::Path::new("tests/fixtures/models-v1/ocr-train.data.gz");
//! let words = read_ocr(ocr)?;
//! let spec = LearnerSpec::new(Task::Sequence, Learner::Online(OnlineSpec::default()))
//!     .with_kernels(vec!["linear:norm=diag".parse()?]);
//! let two = |p: &Progress| if p.step == 2 { Control::Stop } else { Control::Continue };
//! let fitted = fit(&words, &spec, &two)?;
//! assert_eq!((fitted.run.status, fitted.run.steps), (RunStatus::Cancelled, 2));
//! let back = Model::from_bytes(&fitted.model.to_bytes()?)?;
//! let spans = &words.spans;
//! assert_eq!(
//!     back.predict_sequences_with(words.x.view(), spans, &MemoryLimit::default())?,
//!     fitted.model.predict_sequences_with(words.x.view(), spans, &MemoryLimit::default())?,
//! );
//! # Ok::<(), multikernel::Error>(())
//! ```
//!
//! A dependency parser with templates as groups (Martins et al. 2011, Sec. 4.2): CoNLL-U
//! sentences, the default arc templates, Chu-Liu-Edmonds decoding, one epoch:
//! ```
//! use multikernel::prelude::*;
//! use multikernel::data::conllu::{read_conllu, select_folds, Heads};
//! use multikernel::engine::task::parse::{ParseData, ParseSentence};
//! # let twt = std::path::Path::new("../../data/treebank/tr-web.conllu.gz");
//! let treebank = read_conllu(twt, Heads::Required)?;
//! let train: Vec<ParseSentence> = select_folds(&treebank, &[0]).iter().map(ParseSentence::from).collect();
//! let mut online = OnlineSpec::default();
//! online.steps.epochs = 1;
//! let spec = LearnerSpec::new(Task::Parsing, Learner::Online(online));
//! let model = fit(&ParseData::new(train.clone()), &spec, &())?.model;
//! let Model::Parser(parser) = &model else { unreachable!() };
//! let heads = parser.parse(&train[..2])?;           // a head per token, 0 = the root
//! let relations = parser.label(&train[..2], &heads); // and a relation per arc
//! assert_eq!(heads[0].len(), train[0].len());
//! assert!(relations.is_some());
//! let back = Model::from_bytes(&model.to_bytes()?)?;
//! # Ok::<(), multikernel::Error>(())
//! ```
//!
//! [`Model`]: crate::model::Model

pub mod apply;
pub mod auto;
pub mod candidates;
pub mod fit;
mod fitted;
mod fold_cuts;
mod kinds;
pub mod parser;
pub mod parts;
mod plan;
pub mod precomputed;
pub mod registry;
mod request;
pub mod select;
pub mod settings;
pub mod source;
pub mod spec;
pub mod stream;
pub mod structured_auto;
pub mod tagger;
#[cfg(test)]
mod tests;

/// The regularizers, by name ([`OnlineSpec::reg`]).
pub use crate::prox::RegSpec;
/// lp-MKL's `p` from text (`2`, `4/3`, `inf`): the one grammar of [`LpMklSpec::p`].
pub use crate::solver::lp_mkl::parse_p;
/// The step size, epochs and the other settings of the online learner's rounds
/// ([`OnlineSpec::steps`]), and its step rules ([`OnlineSteps::schedule`]).
pub use crate::solver::online::{OnlineSteps, StepSchedule};
/// Binary, multiclass or regression: what a vector task predicts.
pub use crate::task::TaskKind;
pub use apply::{evaluate, predict, score_columns, ApplyOptions, Evaluation};
pub use source::{DataFormat, FileSource, Loaded, Source, TrainSource};

/// The online learner trained chunk by chunk by the caller (the Python package's
/// `partial_fit`): [`incremental::IncrementalFit`] and its settings.
pub mod incremental {
    pub use crate::pipeline::table::incremental::{Given, IncrementalFit};
    pub use crate::pipeline::table::vector::VectorFitConfig;
    pub use crate::solver::online::{OnlineParams, OnlineSteps};
}

/// The exact SVM dual by SMO on a kernel matrix (C-SVC and epsilon-SVR, Fan et al. 2005),
/// for programs that bring their own kernel.
pub mod smo {
    pub use crate::solver::smo::{svc, svr, SmoParams};
}

pub use auto::{AutoConfig, SelectionRecord};
pub use fit::{KernelData, TrainingData};
pub use fitted::{Fitted, PathChoice, Selection};
pub use plan::{selection_plan, structured_plan, SelectionRequest};
pub use precomputed::{PrecomputedLearner, PrecomputedSpec};
pub use request::{fit, FitRequest};
pub use select::{select_spec, SpecSearch, SpecSelection};
pub use settings::Settings;
pub use spec::{
    Budget, CheckedSpec, GompSpec, LbfgsSpec, Learner, LearnerKind, LearnerSpec, LossKind,
    LpMklSpec, MtlSpec, OnlineSpec, PolySpec, Strength, Task, WrapperSpec,
};
pub use structured_auto::StructuredPlan;
