//! Training sequence taggers over CRF++ templates ([`crate::task::tagging`]), one feature
//! group per template:
//! - [`TaggerLearner::Online`]: SPOM (martins2011 Alg. 1) with the structured hinge or the
//!   CRF loss; `l2` is the plain structured SVM / l2 CRF trained online, `l21sq`, `l21` or
//!   `l2q` make the templates compete (a template is dropped when its group norm is 0). The
//!   averaged iterate of the epoch that tags the development sentences best is kept.
//! - [`TaggerLearner::CuttingPlane`]: the 1-slack cutting-plane structural SVM (Joachims et
//!   al. 2009; mao-tsang Alg. 1 with one template weight), l2-regularized, in batch.
//! - [`TaggerLearner::Lbfgs`]: the l2 CRF in batch by L-BFGS ([`crate::solver::batch`]),
//!   the optimum SPOM's CRF loss aims at (CRFsuite's `-a lbfgs` with `c2 = 1 / (2 C)`).
//!
//! Here the settings ([`TaggerSpec`], [`TaggerLearner`]); in `fit` the dispatch to the
//! learners ([`fit_tagger`]), in `online` the online learner's epochs, in `model` the
//! trained tagger ([`TaggerModel`]: tags, marginals, group norms), in `memory` the guard
//! that refuses a fit whose structures exceed the memory limit ([`LabelMemory`]).

use crate::error::{Error, Result};
use crate::kernel::MemoryLimit;
use crate::solver::batch::LbfgsParams;
use crate::solver::cutting_plane::CuttingPlaneParams;
use crate::solver::online::params::OnlineParams;
use crate::task::structured::StructLoss;

mod fit;
mod memory;
mod model;
mod online;
#[cfg(test)]
mod tests;

pub(crate) use fit::{fit_batch_crf, fit_cutting_plane, spom_description};
pub use fit::{fit_tagger, TaggerFit};
pub use memory::LabelMemory;
pub use model::{SentenceMarginals, TaggerModel};

/// The learner of a tagger.
#[derive(Debug, Clone, PartialEq)]
pub enum TaggerLearner {
    /// SPOM over the template groups (`params.epochs` is the most epochs run).
    Online {
        params: OnlineParams,
        loss: StructLoss,
    },
    /// The 1-slack cutting-plane structural SVM with the squared block-norm regularizer
    /// `1/2 (sum_j ||w_j||^q)^(2/q)` over the templates: `q = 2` is the plain l2 structural
    /// SVM, other `q >= 1` multi-template learning (mao-tsang Alg. 1 and problem (11)).
    CuttingPlane { params: CuttingPlaneParams, q: f64 },
    /// The l2 CRF `lambda/2 ||w||^2 + (1/N) sum_i L_crf` minimized in batch by L-BFGS.
    Lbfgs { params: LbfgsParams },
}

/// What to train.
#[derive(Debug, Clone, PartialEq)]
pub struct TaggerSpec {
    pub learner: TaggerLearner,
    /// Minimum count of a template expansion in training (CRF++ `-f`; 1 keeps all).
    pub min_count: usize,
    /// Online: also compute the training objective `lambda/2 ||w||^2 + (1/N) sum L` of the
    /// weights each epoch would keep (one more pass over the training sentences per epoch),
    /// into [`TaggerFit::objectives`].
    pub track_objective: bool,
    /// Online with averaging: restart the average after this epoch, so the averaged weights
    /// are those of the later epochs' iterates only (averaged SGD); 0 averages every round
    /// (Alg. 1 as in the paper).
    pub average_from: usize,
    /// Online: choose the initial step size `eta0` before training ([`Calibration`]);
    /// `None` trains with the params' `eta0`.
    pub calibrate: Option<Calibration>,
    /// Refuse to train when the structures sized by the labels would exceed this
    /// ([`LabelMemory::training`], checked before they are allocated).
    pub memory: MemoryLimit,
}

/// The initial step size chosen from a grid by short runs, before the full run (Bottou 2012,
/// "Stochastic gradient descent tricks", Sec. 5.2: pick the step that works best on a short
/// run; crfsgd and CRFsuite's l2sgd do this on a sample of the training set). Each `eta0` of
/// the grid trains `epochs` epochs from scratch; the one whose weights tag the development
/// sentences best is kept (without development sentences: the lowest training objective
/// `lambda Omega + (1/N) sum L`); ties go to the first in the grid.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub eta0_grid: Vec<f64>,
    pub epochs: usize,
}

impl Calibration {
    fn validate(&self) -> Result<()> {
        if self.eta0_grid.is_empty() || self.epochs == 0 {
            return Err(Error::param(
                "calibration",
                format!("{:?}, {} epochs", self.eta0_grid, self.epochs),
                "at least one eta0 and one epoch",
            ));
        }
        if let Some(e) = self
            .eta0_grid
            .iter()
            .find(|e| !(e.is_finite() && **e > 0.0))
        {
            return Err(Error::param("eta0", e, "a positive number"));
        }
        Ok(())
    }
}
