//! The library's front door: describe what to learn with a [`LearnerSpec`], train it with
//! [`fit`], and use the [`Model`] it returns (predict, decision values, summary, bytes and
//! files). The command-line tool and the Python package call only this layer.
//!
//! ```text
//! LearnerSpec --check()--> CheckedSpec --fit(data, observer)--> Fitted { model, run }
//! ```
//!
//! - [`spec`]: tasks, learners and their settings, the regularization constant `C` with the
//!   same meaning for every learner, defaults and validation in one place.
//! - [`fit()`]: one function for every learner and task; the run contract of
//!   [`crate::run`] (an observer that sees progress and can stop the run; a status apart
//!   from errors).
//!
//! [`Model`]: crate::model::Model

pub mod fit;
pub mod spec;

pub use fit::{fit, fit_checked, fit_with_validation, Fitted, PathChoice, TrainingData};
pub use spec::{
    Budget, CheckedSpec, GompSpec, Learner, LearnerKind, LearnerSpec, LossKind, LpMklSpec,
    OnlineSpec, PolySpec, Strength, Task,
};
