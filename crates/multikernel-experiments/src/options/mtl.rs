//! Options of `reproduce mtl` ([`crate::mtl`]).

use super::{at_least_one, positive, Output};
use crate::mtl::{self, MtlConfig};
use crate::Report;
use multikernel::engine::solver::online::StepSchedule;
use multikernel::error::{Error, Result};
use std::path::PathBuf;

/// Multi-template learning (Mao & Tsang, Sec. 3) against SPOM, the l2 structural SVM and the
/// l2 CRF on TWT tagging (and parsing).
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct MtlOptions {
    #[command(flatten)]
    pub output: Output,
    /// Directory with tr-web.conllu.gz.
    #[arg(long, default_value = "data/treebank")]
    pub data_dir: PathBuf,
    /// Directory with twt-upos-small.templates and twt-upos-redundant.templates.
    #[arg(long, default_value = "data/tagging")]
    pub template_dir: PathBuf,
    /// Template sets (comma separated: small, redundant; none with --parsing for the
    /// parsing rows alone).
    #[arg(long, default_value = "small,redundant", value_delimiter = ',')]
    pub template_sets: Vec<String>,
    /// Tagging rows (comma separated: mtl, mtl-q4/3, mtl-q2, mtl-q4, spom-l21sq, ssvm-l2,
    /// crf-l2, crf-lbfgs). Default: the table's rows, every method except, on the redundant
    /// set, mtl-q4 (several times the cuts of q = 1 over 91 templates) and crf-lbfgs (see
    /// --crf-lbfgs-redundant). A method named here runs on every set.
    #[arg(long, value_delimiter = ',')]
    pub methods: Vec<String>,
    /// Also the parsing rows (MTL q = 1 and q = 2 over the parser's 50 arc templates).
    #[arg(long)]
    pub parsing: bool,
    /// The cutting plane's epsilon.
    #[arg(long, default_value_t = 0.1)]
    pub eps: f64,
    /// Cuts at most.
    #[arg(long, default_value_t = 2000)]
    pub max_iter: usize,
    /// Where the cutting plane finds its next cut, from the best point so far (0) to the
    /// working set's solution (1: Joachims et al.'s loop, the paper's). Default 0.1 (the
    /// small set's q = 4 row: 1,670 cuts at 1, 199 at 0.1; q = 2: 469 and 122).
    #[arg(long)]
    pub separation_step: Option<f64>,
    /// SPOM's most epochs (the best on the dev fold is kept).
    #[arg(long, default_value_t = 20)]
    pub epochs: usize,
    /// Rerun the choice of C on the dev fold (grid 0.1, 1, 10; the CRF rows 0.5, 5, 50, i.e.
    /// CRFsuite's c2 grid 1, 0.1, 0.01 mapped by C = 1/(2 c2)).
    #[arg(long)]
    pub cv: bool,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// SPOM's step-size schedule: sqrt (eta0/sqrt(t)), bottou (eta0/(1 + eta0 lambda t)),
    /// const, inv (1/(lambda t)), adagrad (eta0/sqrt(G_j) per coordinate; the l2 rows only,
    /// spom-l21sq then uses bottou) (docs/spom-convergence.md; the paper's run: sqrt,
    /// --spom-eta0 1, --spom-average-from 0).
    #[arg(long, default_value = "adagrad")]
    pub spom_schedule: StepSchedule,
    /// SPOM's initial step size eta0; several (comma separated): each trains
    /// --spom-calibration-epochs epochs and the one that tags the dev fold best is kept.
    #[arg(long, default_value = "0.03,0.1,0.3,1", value_delimiter = ',')]
    pub spom_eta0: Vec<f64>,
    /// Epochs of each short run that chooses eta0 (with several --spom-eta0).
    #[arg(long, default_value_t = 2)]
    pub spom_calibration_epochs: usize,
    /// SPOM restarts its average of the iterates after this epoch (0: averages every round).
    #[arg(long, default_value_t = 5)]
    pub spom_average_from: usize,
    /// Also run crf-lbfgs on the redundant set with the default rows (skipped otherwise:
    /// about 8 minutes on 2 cores and 1.3 GB; 319 L-BFGS iterations over 91 templates).
    #[arg(long)]
    pub crf_lbfgs_redundant: bool,
}

impl Default for MtlOptions {
    fn default() -> Self {
        MtlOptions {
            output: Output::default(),
            data_dir: PathBuf::from("data/treebank"),
            template_dir: PathBuf::from("data/tagging"),
            template_sets: vec!["small".into(), "redundant".into()],
            methods: Vec::new(),
            parsing: false,
            eps: 0.1,
            max_iter: 2000,
            separation_step: None,
            epochs: 20,
            cv: false,
            seed: 1,
            spom_schedule: StepSchedule::AdaGrad,
            spom_eta0: vec![0.03, 0.1, 0.3, 1.0],
            spom_calibration_epochs: 2,
            spom_average_from: 5,
            crf_lbfgs_redundant: false,
        }
    }
}

impl MtlOptions {
    /// The experiment's config, the options checked.
    pub fn config(&self) -> Result<MtlConfig> {
        at_least_one("epochs", self.epochs)?;
        at_least_one("max_iter", self.max_iter)?;
        positive("eps", self.eps)?;
        if let Some(s) = self.separation_step {
            multikernel::engine::solver::cutting_plane::check_separation_step(s)?;
        }
        if self.spom_eta0.is_empty() {
            return Err(Error::param("spom_eta0", "none", "positive numbers"));
        }
        for &e in &self.spom_eta0 {
            positive("spom_eta0", e)?;
        }
        at_least_one("spom_calibration_epochs", self.spom_calibration_epochs)?;
        Ok(MtlConfig {
            data_dir: self.data_dir.clone(),
            template_dir: self.template_dir.clone(),
            template_sets: self.template_sets.clone(),
            methods: self.methods.clone(),
            parsing: self.parsing,
            epsilon: self.eps,
            max_iter: self.max_iter,
            separation_step: self.separation_step,
            epochs: self.epochs,
            cv: self.cv,
            seed: self.seed,
            out_dir: self.output.out_dir.clone(),
            schedule: self.spom_schedule,
            eta0: self.spom_eta0.clone(),
            calibration_epochs: self.spom_calibration_epochs,
            average_from: self.spom_average_from,
            lbfgs_redundant: self.crf_lbfgs_redundant,
        })
    }

    /// Runs [`mtl::run`] on [`MtlOptions::config`], creating the output directory.
    pub fn run(&self, log: &(dyn Fn(&str) + Sync)) -> Result<Report> {
        let cfg = self.config()?;
        self.output.create_out_dir()?;
        mtl::run(&cfg, &mut |line| log(line))
    }
}
