//! Options of `reproduce mirror-descent` ([`crate::mirror_descent`]).

use super::{at_least_one, positive, Output};
use crate::mirror_descent::{self, MirrorDescentConfig};
use crate::Report;
use multikernel::error::{Error, Result};
use multikernel::kernel::MemoryLimit;
use std::path::PathBuf;

/// Randomized mirror descent over polynomial product kernels (Figures 1-3 of Afkanpour et
/// al. 2013).
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct MirrorDescentOptions {
    #[command(flatten)]
    pub output: Output,
    /// 5 s per method in Figure 1, r in {20, 100} with one repetition in Figure 2, one split
    /// in Figure 3, ridge fixed to the values recorded from a full run.
    #[arg(long)]
    pub quick: bool,
    /// Which figures to run (comma separated, from 1, 2, 3).
    #[arg(long, default_value = "1,2,3", value_delimiter = ',')]
    pub figures: Vec<usize>,
    /// Figure 1: seconds per method and data set (default 20, 5 with --quick).
    #[arg(long)]
    pub seconds: Option<f64>,
    /// Figure 2: input dimensions r (comma separated; default 5,10,20,...,100).
    #[arg(long, value_delimiter = ',')]
    pub r: Option<Vec<usize>>,
    /// Repetitions of Figure 2 and random splits of Figure 3 (default 3, 1 with --quick).
    #[arg(long)]
    pub reps: Option<usize>,
    /// Directory holding the UCI CSV files.
    #[arg(long, default_value = "data/uci")]
    pub data_dir: PathBuf,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Memory allowed for lp-MKL's explicit list of product kernels in Figure 2, in GiB
    /// (beyond it lp-MKL is refused with a row saying so).
    #[arg(long, default_value_t = 0.5)]
    pub memory_limit_gb: f64,
}

impl Default for MirrorDescentOptions {
    fn default() -> Self {
        MirrorDescentOptions {
            output: Output::default(),
            quick: false,
            figures: vec![1, 2, 3],
            seconds: None,
            r: None,
            reps: None,
            data_dir: PathBuf::from("data/uci"),
            seed: 1,
            memory_limit_gb: 0.5,
        }
    }
}

impl MirrorDescentOptions {
    /// The experiment's config ([`MirrorDescentConfig::full`] or
    /// [`MirrorDescentConfig::quick`] with the options given), the options checked before
    /// the tables are read.
    pub fn config(&self) -> Result<MirrorDescentConfig> {
        let mut figures = [false; 3];
        for &f in &self.figures {
            match f {
                1..=3 => figures[f - 1] = true,
                _ => return Err(Error::param("figures", f, "1, 2 or 3")),
            }
        }
        if let Some(s) = self.seconds {
            positive("seconds", s)?;
        }
        if let Some(r) = &self.r {
            if r.contains(&0) {
                return Err(Error::param("r", 0, "positive input dimensions"));
            }
        }
        positive("memory_limit_gb", self.memory_limit_gb)?;
        if let Some(reps) = self.reps {
            at_least_one("reps", reps)?;
        }
        let tables = mirror_descent::load_tables(&self.data_dir)?;
        let mut cfg = if self.quick {
            MirrorDescentConfig::quick(tables)
        } else {
            MirrorDescentConfig::full(tables)
        };
        cfg.figures = figures;
        if let Some(s) = self.seconds {
            cfg.fig1_seconds = s;
        }
        if let Some(r) = &self.r {
            cfg.fig2_r = r.clone();
        }
        cfg.lp_memory = MemoryLimit::gib(self.memory_limit_gb);
        if let Some(reps) = self.reps {
            cfg.fig2_reps = reps;
            cfg.fig3_reps = reps;
        }
        cfg.seed = self.seed;
        cfg.out_dir = self.output.out_dir.clone();
        Ok(cfg)
    }

    /// Runs [`mirror_descent::run`] on [`MirrorDescentOptions::config`].
    pub fn run(&self, log: &(dyn Fn(&str) + Sync)) -> Result<Report> {
        mirror_descent::run(&self.config()?, &mut |line| log(line))
    }
}
