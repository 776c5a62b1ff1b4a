//! Options of `reproduce parsing` ([`crate::parsing`]).

use super::{at_least_one, Output};
use crate::parsing::{self, ParsingConfig};
use crate::Report;
use multikernel::engine::task::parse::{Support, TemplateSet};
use multikernel::error::{Error, Result};
use std::path::PathBuf;

/// Dependency parsing with templates as groups (Martins et al. 2011, Sec. 4.2).
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct ParsingOptions {
    #[command(flatten)]
    pub output: Output,
    /// Directory with tr-web.conllu.gz and tr-wiki.conllu.gz.
    #[arg(long, default_value = "data/treebank")]
    pub data_dir: PathBuf,
    /// Data sets (comma separated: web, wiki).
    #[arg(long, default_value = "web,wiki", value_delimiter = ',')]
    pub datasets: Vec<String>,
    /// Rows (comma separated: right-attach, l2, mkl-l21, crf-l2, crf-l21, retrain; the crf
    /// rows train l2 and l21 with the CRF loss instead of the structured hinge; retrain ranks
    /// the templates by the group norms of the l2 and mkl-l21 models and retrains l2 parsers
    /// on the top 10, 20, 33, 50 and 100%).
    #[arg(
        long,
        default_value = "right-attach,l2,mkl-l21,crf-l2,crf-l21,retrain",
        value_delimiter = ','
    )]
    pub methods: Vec<String>,
    /// Most epochs (the best on the dev fold is kept).
    #[arg(long, default_value_t = 10)]
    pub epochs: usize,
    /// Rerun the choice of the regularization constant on the dev fold (for the crf rows, also
    /// of the first step size eta0: 0.3 or 1).
    #[arg(long)]
    pub cv: bool,
    /// An arc template file (default: the built-in templates).
    #[arg(long)]
    pub templates: Option<PathBuf>,
    /// Which arcs of the training sentences define the features: gold (MSTParser's) or all.
    #[arg(long, default_value = "gold")]
    pub support: String,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl Default for ParsingOptions {
    fn default() -> Self {
        ParsingOptions {
            output: Output::default(),
            data_dir: PathBuf::from("data/treebank"),
            datasets: vec!["web".into(), "wiki".into()],
            methods: parsing::METHODS.map(String::from).to_vec(),
            epochs: 10,
            cv: false,
            templates: None,
            support: "gold".into(),
            seed: 1,
        }
    }
}

impl ParsingOptions {
    /// The experiment's config, the options checked and the template file read.
    pub fn config(&self) -> Result<ParsingConfig> {
        at_least_one("epochs", self.epochs)?;
        let support = match self.support.as_str() {
            "gold" => Support::Gold,
            "all" => Support::All,
            s => return Err(Error::param("support", s, "gold or all")),
        };
        if let Some(d) = self.datasets.iter().find(|d| *d != "web" && *d != "wiki") {
            return Err(Error::param("datasets", d, "web and wiki"));
        }
        Ok(ParsingConfig {
            data_dir: self.data_dir.clone(),
            datasets: self.datasets.clone(),
            methods: self.methods.clone(),
            epochs: self.epochs,
            cv: self.cv,
            templates: match &self.templates {
                Some(p) => TemplateSet::read(p)?,
                None => TemplateSet::default_set(),
            },
            seed: self.seed,
            support,
            out_dir: self.output.out_dir.clone(),
        })
    }

    /// Runs [`parsing::run`] on [`ParsingOptions::config`], creating the output directory.
    pub fn run(&self, log: &(dyn Fn(&str) + Sync)) -> Result<Report> {
        let cfg = self.config()?;
        self.output.create_out_dir()?;
        parsing::run(&cfg, &mut |line| log(line))
    }
}
