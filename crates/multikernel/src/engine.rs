//! The engines, lent to the project's own tools: the parts of the private learner modules that
//! the experiments crate (`multikernel reproduce`), the benchmarks, the fuzz targets and the
//! integration tests drive directly. Each submodule mirrors the private module of the same
//! path (`engine::solver::online` is the crate's `solver::online`, `engine::pipeline::table`
//! the crate's `pipeline::table`) and re-exports only what those tools use.
//!
//! This module is not the library's API: a program that fits, predicts and saves models uses
//! [`crate::prelude`], [`crate::estimator`] and [`crate::model`], whose names stay; names here
//! follow the engines and change with them. A new experiment that needs more of an engine adds
//! the name here (ARCHITECTURE.md, "Where things go").

/// `crate::linalg`.
pub mod linalg {
    pub use crate::linalg::{dot, SpdFactor};
}
/// `crate::metrics`.
pub mod metrics {
    pub use crate::metrics::{accuracy, mse};
}
/// `crate::multiset`.
pub mod multiset {
    pub use crate::multiset::{count_kernels, enumerate_multisets, MultiIndex};
}
/// `crate::pipeline`.
pub mod pipeline {
    /// `crate::pipeline::columns`.
    pub mod columns {
        /// `crate::pipeline::columns::tagging`.
        pub mod tagging {
            pub use crate::pipeline::columns::tagging::{
                fit_tagger, Calibration, LabelMemory, TaggerFit, TaggerLearner, TaggerSpec,
            };
        }
    }
    /// `crate::pipeline::sequence`.
    pub mod sequence {
        pub use crate::pipeline::sequence::{KernelGroup, SequenceModel};
        /// `crate::pipeline::sequence::grams`.
        pub mod grams {
            pub use crate::pipeline::sequence::grams::{base_grams, group_gram, lambda_from_c};
        }
        /// `crate::pipeline::sequence::model`.
        pub mod model {
            pub use crate::pipeline::sequence::model::{
                decode_sequences, token_accuracy, KernelGroup, SequenceModel,
            };
        }
        /// `crate::pipeline::sequence::spom`.
        pub mod spom {
            pub use crate::pipeline::sequence::spom::{fit_with_grams, SequenceFitConfig};
        }
        /// `crate::pipeline::sequence::wrapper`.
        pub mod wrapper {
            pub use crate::pipeline::sequence::wrapper::{
                explicit_sqnorm, fit_wrapper_with_grams, mkl_objective, SequenceWrapperConfig,
                FIRST_EPOCHS, WARM_EPOCHS,
            };
        }
    }
    /// `crate::pipeline::table`.
    pub mod table {
        /// `crate::pipeline::table::incremental`.
        pub mod incremental {
            pub use crate::pipeline::table::incremental::{Given, IncrementalFit};
        }
        /// `crate::pipeline::table::vector`.
        pub mod vector {
            pub use crate::pipeline::table::vector::{fit_vector, VectorFitConfig};
        }
        /// `crate::pipeline::table::vector_model`.
        pub mod vector_model {
            pub use crate::pipeline::table::vector_model::KernelMachine;
        }
    }
    /// `crate::pipeline::treebank`.
    pub mod treebank {
        /// `crate::pipeline::treebank::parser`.
        pub mod parser {
            pub use crate::pipeline::treebank::parser::{
                fit_parser, ParserFit, ParserSpec, TreeKind,
            };
        }
    }
}
/// `crate::prox`.
pub mod prox {
    pub use crate::prox::{BlockRegularizer, Groups, RegSpec, Regularizer, SquaredL21};
}
/// `crate::select`.
pub mod select {
    pub use crate::select::{Goal, Mean, Search, Selection, SplitStrategy, Ties};
}
/// `crate::solver`.
pub mod solver {
    /// `crate::solver::batch`.
    pub mod batch {
        pub use crate::solver::batch::{objective, LbfgsParams};
    }
    /// `crate::solver::cutting_plane`.
    pub mod cutting_plane {
        pub use crate::solver::cutting_plane::{check_separation_step, fit, CuttingPlaneParams};
    }
    /// `crate::solver::gomp`.
    pub mod gomp {
        pub use crate::solver::gomp::{gomp, GompParams, GompPath, Precompute, ValidationMetric};
    }
    /// `crate::solver::lp_mkl`.
    pub mod lp_mkl {
        pub use crate::solver::lp_mkl::{lp_mkl, p_label, parse_p, LpMklParams, LpMklSolution};
    }
    /// `crate::solver::mirror_descent`.
    pub mod mirror_descent {
        pub use crate::solver::mirror_descent::{
            perfeature_linear, solve, EvalSchedule, Init, MirrorDescentParams, PolyBasis,
            PolyProblem, PolySampler, Sampling, SolverOptions, StepRule, UniformPolyModel,
        };
    }
    /// `crate::solver::online`.
    pub mod online {
        pub use crate::solver::online::{
            OnlineLearner, OnlineParams, OnlineState, OnlineSteps, StepSchedule,
        };
        /// `crate::solver::online::compact`.
        pub mod compact {
            pub use crate::solver::online::compact::cached_norms;
        }
        /// `crate::solver::online::params`.
        pub mod params {
            pub use crate::solver::online::params::{OnlineParams, OnlineSteps, StepSchedule};
        }
    }
    /// `crate::solver::smo`.
    pub mod smo {
        pub use crate::solver::smo::{svc, SmoParams};
    }
    /// `crate::solver::wrapper`.
    pub mod wrapper {
        pub use crate::solver::wrapper::{WrapperMethod, WrapperParams};
    }
}
/// `crate::task`.
pub mod task {
    pub use crate::task::{prediction_metric, Loss, TaskKind};
    /// `crate::task::parse`.
    pub mod parse {
        pub use crate::task::parse::{
            score_parses, AttachmentCounts, ParseData, ParseSentence, Support, TemplateSet,
            TreeKind,
        };
    }
    /// `crate::task::sequence`.
    pub mod sequence {
        pub use crate::task::sequence::SeqLoss;
    }
    /// `crate::task::structured`.
    pub mod structured {
        pub use crate::task::structured::StructLoss;
    }
    /// `crate::task::tagging`.
    pub mod tagging {
        pub use crate::task::tagging::{TagData, TagFeaturizer, TaggingTask, TemplateFile};
        /// `crate::task::tagging::convert`.
        pub mod convert {
            pub use crate::task::tagging::convert::{from_conllu, LabelColumn};
        }
    }
    /// `crate::task::tree`.
    pub mod tree {
        pub use crate::task::tree::{is_projective, is_tree, ChuLiuEdmonds, Eisner, TreeDecoder};
    }
    /// `crate::task::vector`.
    pub mod vector {
        pub use crate::task::vector::default_loss;
    }
}
