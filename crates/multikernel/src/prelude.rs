//! Everything a typical program needs, in one import:
//!
//! ```
//! use multikernel::prelude::*;
//! ```

pub use crate::data::{
    read_for_model, read_table, Dataset, Format, Matrix, MatrixRef, Schema, TableRef, TargetKind,
    Targets,
};
pub use crate::error::{Error, Result};
pub use crate::estimator::select::{select_spec, Goal, SpecSearch, SpecSelection, SplitStrategy};
pub use crate::estimator::{
    fit, Budget, FitRequest, Fitted, GompSpec, Learner, LearnerKind, LearnerSpec, LossKind,
    LpMklSpec, OnlineSpec, OnlineSteps, PolySpec, Strength, Task,
};
pub use crate::kernel::{KernelSpec, MemoryLimit};
pub use crate::model::{Model, Score, Summary};
pub use crate::prox::RegSpec;
pub use crate::run::{Control, Observer, Progress, RunInfo, RunStatus, StopFlag};
