//! Multi-template learning (mao-tsang Sec. 3) against SPOM and the l2 baselines on the
//! Turkish Web Treebank (web part, official split: folds 0-7 train, 8 dev, 9 test):
//!
//! - **tagging** (UPOS from the columns of [`multikernel::engine::task::tagging::convert`]) with the shipped
//!   small (15 + B) and redundant (90 + B) CRF++ template files: MTL with the block norm
//!   `q = 1` (problem (6)) and `q` in `{4/3, 2, 4}` (problem (11), the paper's Table 8 grid),
//!   SPOM with the squared l2,1 regularizer (martins2011 Alg. 1, structured hinge), the l2
//!   structural SVM and the l2 CRF (both trained by SPOM with the l2 regularizer);
//! - **parsing** with the parser's 50 arc templates (`--parsing`): MTL `q = 1` and `q = 2`.
//!
//! Every learned row picks `C` (which weighs the sum of the losses against the regularizer,
//! the same meaning for every row) on the dev fold from the same grid [`C_GRID`] through the
//! selection harness ([`multikernel::engine::select::Search`], one held-out split, candidates in grid
//! order), SPOM rows also their epoch; without `--cv` the constants recorded from such a run
//! are used. The test fold is tagged once. Rows report accuracy (or UAS), templates kept (MTL:
//! `mu_j / sum mu >= 1e-5`; SPOM: group norm non-zero), seconds, iterations, epsilon, and for
//! MTL the seconds in decoding and in the working-set QCQP. Template weights are plotted as
//! in the paper's Figures 5-6 (`mtl-weights-SET.svg`, `.csv`).
//!
//! The l2 rows also have batch references at the same `C`: the cutting plane with `q = 2`
//! (`mtl-q2`) for the structural SVM, L-BFGS on the l2 CRF (`crf-lbfgs`,
//! [`multikernel::engine::solver::batch`]) for the CRF. With `--out-dir`, the training objective
//! `lambda/2 ||w||^2 + (1/N) sum L` of the l2 SPOM rows after each epoch is written against
//! that optimum (`mtl-objective-SET.csv`, `.svg`; the reference runs at the SPOM row's `C` when
//! no table row did).

use super::{Report, Row};
use crate::plot::{LinePlot, Series};
use multikernel::data::columns::ColumnSentence;
use multikernel::data::conllu::{read_conllu, select_folds, ConlluSentence, Heads};
use multikernel::engine::pipeline::columns::tagging::{
    fit_tagger, Calibration, TaggerFit, TaggerLearner, TaggerSpec,
};
use multikernel::engine::pipeline::treebank::parser::{fit_parser, ParserSpec, TreeKind};
use multikernel::engine::prox::RegSpec;
use multikernel::engine::select::Search;
use multikernel::engine::solver::batch::{self, LbfgsParams};
use multikernel::engine::solver::cutting_plane::CuttingPlaneParams;
use multikernel::engine::solver::online::params::{OnlineParams, OnlineSteps, StepSchedule};
use multikernel::engine::task::parse::{score_parses, ParseSentence, Support, TemplateSet};
use multikernel::engine::task::structured::StructLoss;
use multikernel::engine::task::tagging::convert::{from_conllu, LabelColumn};
use multikernel::engine::task::tagging::TaggingTask;
use multikernel::engine::task::tagging::TemplateFile;
use multikernel::error::{Error, Result};
use multikernel::kernel::MemoryLimit;
use std::path::PathBuf;
use std::time::Instant;

/// The values of `C` tried on the dev fold by every learned row.
pub const C_GRID: [f64; 3] = [0.1, 1.0, 10.0];

/// The values of `C` tried by the CRF rows: CRFsuite's grid `c2` in {1, 0.1, 0.01}
/// (`benches/peers/crfsuite`) mapped by `C = 1 / (2 c2)`.
pub const CRF_C_GRID: [f64; 3] = [0.5, 5.0, 50.0];

/// SPOM's initial step sizes tried on the dev fold by default (2 epochs each).
pub const ETA0_GRID: [f64; 4] = [0.03, 0.1, 0.3, 1.0];

/// SPOM's running average restarts after this epoch by default.
pub const AVERAGE_FROM: usize = 5;

/// The tagging rows, in table order.
pub const TAG_METHODS: [&str; 8] = [
    "mtl",
    "mtl-q4/3",
    "mtl-q2",
    "mtl-q4",
    "spom-l21sq",
    "ssvm-l2",
    "crf-l2",
    "crf-lbfgs",
];

/// The rows run when no method is named: the table of docs/papers/tagging-mtl.md, which
/// leaves out, on the redundant set, `mtl-q4` (q = 4 needs several times the cuts of q = 1,
/// and each cut there holds 91 templates) and, unless `lbfgs_redundant`, the batch CRF
/// `crf-lbfgs` (about 8 minutes and 1.3 GB on 2 cores). A method named explicitly runs.
pub fn default_methods(set: &str, lbfgs_redundant: bool) -> Vec<String> {
    TAG_METHODS
        .iter()
        .filter(|m| {
            set != "redundant" || (**m != "mtl-q4" && (**m != "crf-lbfgs" || lbfgs_redundant))
        })
        .map(|m| m.to_string())
        .collect()
}

/// `C` chosen on the dev fold by `reproduce mtl --cv` (method, small set, redundant set).
/// The MTL rows of the redundant set and `mtl-q4` were not searched (their grids take
/// hours on two cores): they use `C = 1`, the middle of the grid (the small set chose 10 for
/// `mtl` by 0.03 points of dev accuracy over 1, and 1 for the other MTL rows). `ssvm-l2`
/// uses `C = 1` on both sets, the `C` of its batch reference `mtl-q2`. The CRF rows
/// use `C = 50`, CRFsuite's chosen `c2 = 0.01` on both sets (`C = 1 / (2 c2)`; not searched).
pub const RECORDED_C: [(&str, f64, f64); 8] = [
    ("mtl", 10.0, 1.0),
    ("mtl-q4/3", 1.0, 1.0),
    ("mtl-q2", 1.0, 1.0),
    ("mtl-q4", 1.0, 1.0),
    ("spom-l21sq", 10.0, 1.0),
    ("ssvm-l2", 1.0, 1.0),
    ("crf-l2", 50.0, 50.0),
    ("crf-lbfgs", 50.0, 50.0),
];

/// What to run.
#[derive(Debug, Clone)]
pub struct MtlConfig {
    /// Directory with `tr-web.conllu.gz`.
    pub data_dir: PathBuf,
    /// Directory with `twt-upos-SET.templates`.
    pub template_dir: PathBuf,
    /// `small`, `redundant`.
    pub template_sets: Vec<String>,
    /// Tagging rows (from [`TAG_METHODS`]); empty: [`default_methods`] of each set.
    pub methods: Vec<String>,
    /// Also the parsing rows.
    pub parsing: bool,
    /// The cutting plane's epsilon.
    pub epsilon: f64,
    /// Cuts at most.
    pub max_iter: usize,
    /// The cutting plane's separation step
    /// ([`multikernel::engine::solver::cutting_plane::CuttingPlaneParams::separation_step`]; `None`: its
    /// default).
    pub separation_step: Option<f64>,
    /// SPOM's most epochs (the best on dev is kept).
    pub epochs: usize,
    /// Rerun the choice of `C` on the dev fold.
    pub cv: bool,
    pub seed: u64,
    /// Where the template-weight and objective plots go.
    pub out_dir: Option<PathBuf>,
    /// SPOM's step-size schedule (by default AdaGrad's per-coordinate steps for the l2 rows,
    /// Bottou's schedule for `spom-l21sq`) and initial step; with more than one `eta0`, the one whose
    /// short runs of `calibration_epochs` epochs tag the dev fold best
    /// ([`multikernel::engine::pipeline::columns::tagging::Calibration`]).
    pub schedule: StepSchedule,
    pub eta0: Vec<f64>,
    pub calibration_epochs: usize,
    /// SPOM restarts its average after this epoch (0: averages every round, Alg. 1).
    pub average_from: usize,
    /// Also the `crf-lbfgs` row of the redundant set (about 8 minutes on 2 cores).
    pub lbfgs_redundant: bool,
}

impl Default for MtlConfig {
    fn default() -> Self {
        MtlConfig {
            data_dir: PathBuf::from("data/treebank"),
            template_dir: PathBuf::from("data/tagging"),
            template_sets: vec!["small".into(), "redundant".into()],
            methods: Vec::new(),
            parsing: false,
            epsilon: 0.1,
            max_iter: 2000,
            separation_step: None,
            epochs: 20,
            cv: false,
            seed: 1,
            out_dir: None,
            schedule: StepSchedule::AdaGrad,
            eta0: ETA0_GRID.to_vec(),
            calibration_epochs: 2,
            average_from: AVERAGE_FROM,
            lbfgs_redundant: false,
        }
    }
}

/// The learner of a tagging row with `C` for `n` training sentences.
fn learner(method: &str, c: f64, n: usize, cfg: &MtlConfig) -> TaggerLearner {
    let cp = |q: f64| TaggerLearner::CuttingPlane {
        params: CuttingPlaneParams {
            c: c * n as f64,
            epsilon: cfg.epsilon,
            max_iter: cfg.max_iter,
            separation_step: cfg.separation_step,
            ..CuttingPlaneParams::default()
        },
        q,
    };
    // AdaGrad's per-coordinate steps are for the l2 regularizer: the group-norm row keeps
    // one step size (Bottou's schedule) under it.
    let schedule = |reg: &RegSpec| match cfg.schedule {
        StepSchedule::AdaGrad if *reg != RegSpec::L2 => StepSchedule::Bottou,
        s => s,
    };
    let online = |reg: RegSpec, loss: StructLoss| TaggerLearner::Online {
        params: OnlineParams {
            lambda: 1.0 / (c * n as f64),
            steps: OnlineSteps {
                schedule: schedule(&reg),
                eta0: cfg.eta0[0],
                epochs: cfg.epochs,
                averaging: true,
                projection: true,
                shards: 1,
                batch: 1,
                learn_beta0: false,
            },
            reg,
            seed: cfg.seed,
            shuffle: true,
        },
        loss,
    };
    match method {
        "mtl" => cp(1.0),
        "mtl-q4/3" => cp(4.0 / 3.0),
        "mtl-q2" => cp(2.0),
        "mtl-q4" => cp(4.0),
        "spom-l21sq" => online(RegSpec::L21Sq, StructLoss::Hinge),
        "ssvm-l2" => online(RegSpec::L2, StructLoss::Hinge),
        "crf-lbfgs" => TaggerLearner::Lbfgs {
            params: LbfgsParams {
                lambda: 1.0 / (c * n as f64),
                ..LbfgsParams::default()
            },
        },
        _ => online(RegSpec::L2, StructLoss::Crf),
    }
}

/// Picks `C` from `grid` by the dev score `eval(C)` returns (with its output and a log line)
/// through the selection harness: one held-out split, candidates in grid order, ties to the
/// first. Returns the chosen `C`, its dev score and its output.
fn choose_c<T: Send>(
    grid: &[f64],
    eval: impl Fn(f64) -> Result<(f64, T, String)> + Sync,
    log: &mut dyn FnMut(&str),
) -> Result<(f64, f64, T)> {
    let splits = [()];
    let lines = std::sync::Mutex::new(Vec::new());
    let sel = Search::new(grid, &splits).maximize().run_warm(
        |_| Ok(()),
        |&c, _, _| {
            let (score, out, line) = eval(c)?;
            lines.lock().expect("log lines").push(line);
            Ok((score, out))
        },
        &(),
    )?;
    for l in lines.lock().expect("log lines").drain(..) {
        log(&l);
    }
    let (cand, mean) = sel
        .best()
        .map(|b| (b.candidate, b.mean))
        .ok_or_else(|| Error::Numerical("no finite dev score on the grid".into()))?;
    let c = grid[cand];
    let mut outputs = sel.outputs;
    let out = outputs
        .get_mut(cand)
        .and_then(|o| o.get_mut(0))
        .and_then(Option::take)
        .ok_or_else(|| Error::Numerical("the chosen candidate has no output".into()))?;
    Ok((c, mean, out))
}

/// The working set's share of a row's training time, in percent (the table's last column).
fn working_set_share(master_seconds: f64, train_seconds: f64) -> String {
    if train_seconds > 0.0 {
        format!("{:.0}", 100.0 * master_seconds / train_seconds)
    } else {
        "-".into()
    }
}

/// The template weights of a fit: MTL's `mu`, SPOM's group norms as shares.
fn weights_of(fit: &TaggerFit) -> Vec<f64> {
    if !fit.model.template_weights.is_empty() {
        return fit.model.template_weights.clone();
    }
    let norms = fit.model.group_norms();
    let total: f64 = norms.iter().sum();
    norms
        .iter()
        .map(|n| if total > 0.0 { n / total } else { 0.0 })
        .collect()
}

fn split_of(all: &[ConlluSentence], folds: &[usize]) -> Vec<ColumnSentence> {
    from_conllu(&select_folds(all, folds), LabelColumn::Upos)
}

/// Runs the experiment; `log` sees progress lines.
pub fn run(cfg: &MtlConfig, log: &mut dyn FnMut(&str)) -> Result<Report> {
    if let Some(m) = cfg
        .methods
        .iter()
        .find(|m| !TAG_METHODS.contains(&m.as_str()))
    {
        return Err(Error::param("methods", m, TAG_METHODS.join(", ")));
    }
    let sets: Vec<&String> = cfg.template_sets.iter().filter(|s| *s != "none").collect();
    if let Some(s) = sets
        .iter()
        .find(|s| !["small", "redundant"].contains(&s.as_str()))
    {
        return Err(Error::param("template_sets", s, "small, redundant or none"));
    }
    let all = read_conllu(&cfg.data_dir.join("tr-web.conllu.gz"), Heads::Required)?;
    let train = split_of(&all, &[0, 1, 2, 3, 4, 5, 6, 7]);
    let dev = split_of(&all, &[8]);
    let test = split_of(&all, &[9]);
    let n = train.len();
    let wall = Instant::now();
    let mut rows = Vec::new();
    let mut table = String::from(
        "| templates | method | test acc. | dev acc. | templates kept | C | iterations | epsilon | train s | decode s | QCQP s | working set % |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let template_files: Vec<TemplateFile> = sets
        .iter()
        .map(|set| TemplateFile::read(&cfg.template_dir.join(format!("twt-upos-{set}.templates"))))
        .collect::<Result<_>>()?;
    // Every (set, row) is an independent job: its choice of C and its test accuracy.
    let mut jobs: Vec<(usize, String)> = Vec::new();
    for (si, set) in sets.iter().enumerate() {
        let methods = if cfg.methods.is_empty() {
            default_methods(set, cfg.lbfgs_redundant)
        } else {
            cfg.methods.clone()
        };
        jobs.extend(methods.into_iter().map(|m| (si, m)));
    }
    let lanes = super::jobs::lanes(jobs.len(), 0, &multikernel::kernel::MemoryLimit::default());
    let fits = super::jobs::run_jobs(&jobs, lanes, log, |(si, method), ctx| {
        let (set, templates) = (sets[*si].as_str(), &template_files[*si]);
        let grid: Vec<f64> = if cfg.cv && method.starts_with("crf") {
            CRF_C_GRID.to_vec()
        } else if cfg.cv {
            C_GRID.to_vec()
        } else {
            let r = RECORDED_C
                .iter()
                .find(|r| r.0 == method)
                .expect("every method has a recorded C");
            vec![if set == "small" { r.1 } else { r.2 }]
        };
        let (c, dev_acc, (fit, secs)) = choose_c(
            &grid,
            |c| {
                let spec = TaggerSpec {
                    learner: learner(method, c, n, cfg),
                    min_count: 1,
                    track_objective: cfg.out_dir.is_some() && spom_loss(method).is_some(),
                    average_from: cfg.average_from,
                    calibrate: (cfg.eta0.len() > 1).then(|| Calibration {
                        eta0_grid: cfg.eta0.clone(),
                        epochs: cfg.calibration_epochs,
                    }),
                    memory: MemoryLimit::default(),
                };
                let t = Instant::now();
                let fit = fit_tagger(&train, Some(&dev), templates.clone(), &spec, &())?;
                let secs = t.elapsed().as_secs_f64();
                let score = fit.model.dev_score(&dev)?;
                let mut line =
                    format!("{set} {method} C={c}: dev accuracy {score:.2} ({secs:.1} s)");
                if !fit.calibration.is_empty() {
                    let tried: Vec<String> = fit
                        .calibration
                        .iter()
                        .map(|(e, s)| format!("{e}: {s:.2}"))
                        .collect();
                    line.push_str(&format!(
                        "; eta0 {} chosen by dev accuracy after {} epochs ({})",
                        fit.eta0,
                        cfg.calibration_epochs,
                        tried.join(", ")
                    ));
                }
                Ok((score, (fit, secs), line))
            },
            &mut |l| ctx.log(l),
        )?;
        let (scores, _) = fit.model.evaluate(&test)?;
        let acc = 100.0 * scores.accuracy();
        Ok((grid, c, dev_acc, fit, secs, acc))
    })?;
    let mut fits = fits.into_iter();
    for (si, set) in sets.iter().enumerate() {
        let templates = &template_files[si];
        let total = templates.templates.len();
        let mut curves = Vec::new();
        // Batch optima (loss, C, objective) and SPOM's objectives (method, loss, C, per epoch).
        let mut optima: Vec<(StructLoss, f64, f64)> = Vec::new();
        let mut runs: Vec<(String, StructLoss, f64, Vec<f64>)> = Vec::new();
        for (_, method) in jobs.iter().filter(|(s, _)| *s == si) {
            let (grid, c, dev_acc, fit, secs, acc) =
                fits.next().expect("one fit per job, in job order");
            let (fit, secs) = (&fit, &secs);
            let kept = fit.model.templates_kept();
            let is_mtl = method.starts_with("mtl");
            let iterations = if is_mtl {
                fit.cuts
            } else if method == "crf-lbfgs" {
                fit.run.steps as usize
            } else {
                fit.best_epoch
            };
            table.push_str(&format!(
                "| {set} | {method} | {acc:.2} | {dev_acc:.2} | {kept}/{total} | {c} | {iterations} | {} | {secs:.1} | {} | {} | {} |\n",
                if is_mtl { format!("{}", cfg.epsilon) } else { "-".into() },
                if is_mtl { format!("{:.1}", fit.decode_seconds) } else { "-".into() },
                if is_mtl { format!("{:.1}", fit.master_seconds) } else { "-".into() },
                if is_mtl { working_set_share(fit.master_seconds, *secs) } else { "-".into() },
            ));
            let mut row =
                Row::from_values(&format!("twt-web-upos-{set}"), method, "accuracy", &[acc])
                    .with("dev_accuracy", dev_acc)
                    .with("C", c)
                    .with("C_grid", grid.clone())
                    .with("templates_kept", kept)
                    .with("templates_total", total)
                    .with("iterations", iterations)
                    .with("index_seconds", fit.index_seconds);
            if is_mtl {
                row = row
                    .with("epsilon", cfg.epsilon)
                    .with("decode_seconds", fit.decode_seconds)
                    .with("qcqp_seconds", fit.master_seconds)
                    .with("status", fit.run.status.describe());
            }
            if method == "crf-lbfgs" {
                row = row.with("objective", fit.objective);
            }
            if fit.eta0.is_finite() {
                row = row.with("eta0", fit.eta0);
            }
            row.train_seconds = Some(*secs);
            rows.push(row);
            if cfg.out_dir.is_some() {
                let lambda = 1.0 / (c * n as f64);
                match method.as_str() {
                    "mtl-q2" => {
                        let task = TaggingTask::new(&fit.model.featurizer, &train)?;
                        let f =
                            batch::objective(&task, StructLoss::Hinge, lambda, &fit.model.weights)?;
                        optima.push((StructLoss::Hinge, c, f));
                    }
                    "crf-lbfgs" => optima.push((StructLoss::Crf, c, fit.objective)),
                    m => {
                        if let Some(loss) = spom_loss(m) {
                            runs.push((m.to_string(), loss, c, fit.objectives.clone()));
                        }
                    }
                }
            }
            if is_mtl || method == "spom-l21sq" {
                let w = weights_of(fit);
                curves.push(Series {
                    name: method.to_string(),
                    points: w.iter().enumerate().map(|(j, v)| (j as f64, *v)).collect(),
                });
            }
        }
        if let Some(dir) = &cfg.out_dir {
            write_weights(dir, set, templates, curves)?;
            if !runs.is_empty() {
                let mut lines = Vec::new();
                for (method, loss, c, objectives) in &runs {
                    let known = optima
                        .iter()
                        .find(|o| o.0 == *loss && o.1 == *c)
                        .map(|o| o.2);
                    let opt = match known {
                        Some(f) => f,
                        None => {
                            let f = reference_optimum(&train, templates, *loss, *c, cfg)?;
                            optima.push((*loss, *c, f));
                            f
                        }
                    };
                    log(&format!(
                        "{set} {method} C={c}: objective by epoch {} against the optimum {opt:.6}",
                        objectives
                            .iter()
                            .map(|f| format!("{f:.6}"))
                            .collect::<Vec<_>>()
                            .join(" ")
                    ));
                    lines.push((method.clone(), *c, opt, objectives.clone()));
                }
                write_objectives(dir, set, &lines)?;
            }
        }
    }
    if cfg.parsing {
        parsing_rows(cfg, &all, &mut rows, &mut table, log)?;
    }
    let line = format!(
        "whole run: {:.1} s wall, rows {lanes} at once on {} threads (train s: wall time of \
         the row's fits, shared with the other rows)",
        wall.elapsed().as_secs_f64(),
        rayon::current_num_threads()
    );
    log(&line);
    table.push_str(&format!("\n{line}\n"));
    Ok(Report {
        experiment: "mtl".into(),
        rows,
        table,
    })
}

/// The template weights per method as CSV and SVG (the paper's Figures 5-6: weight by
/// template index; the bigram template `B` is index 0).
fn write_weights(
    dir: &std::path::Path,
    set: &str,
    templates: &TemplateFile,
    curves: Vec<Series>,
) -> Result<()> {
    let mut names: Vec<String> = Vec::new();
    if templates.has_bigram() {
        names.push("B".into());
    }
    names.extend(templates.unigrams().map(|t| t.text.clone()));
    let mut csv = String::from("method,index,template,weight\n");
    for c in &curves {
        for (j, w) in &c.points {
            let name = names.get(*j as usize).map_or("", String::as_str);
            csv.push_str(&format!("{},{j},\"{name}\",{w:.6e}\n", c.name));
        }
    }
    multikernel::io::write_atomic(&dir.join(format!("mtl-weights-{set}.csv")), csv.as_bytes())?;
    let plot = LinePlot {
        title: format!("TWT UPOS, {set} templates: template weights"),
        x_label: "template (0 = B, then file order)".into(),
        y_label: "weight share (MTL: mu; SPOM: group norm share)".into(),
        log_x: false,
        log_y: false,
        series: curves,
    };
    multikernel::io::write_atomic(
        &dir.join(format!("mtl-weights-{set}.svg")),
        plot.to_svg().as_bytes(),
    )
}

/// The loss of an l2 SPOM row whose objective has a batch reference.
fn spom_loss(method: &str) -> Option<StructLoss> {
    match method {
        "ssvm-l2" => Some(StructLoss::Hinge),
        "crf-l2" => Some(StructLoss::Crf),
        _ => None,
    }
}

/// The batch optimum of `lambda/2 ||w||^2 + (1/N) sum L` at `C` (`lambda = 1 / (C N)`): the
/// cutting plane with `q = 2` at the run's epsilon for the hinge, L-BFGS for the CRF.
fn reference_optimum(
    train: &[ColumnSentence],
    templates: &TemplateFile,
    loss: StructLoss,
    c: f64,
    cfg: &MtlConfig,
) -> Result<f64> {
    let n = train.len();
    let method = match loss {
        StructLoss::Hinge => "mtl-q2",
        StructLoss::Crf => "crf-lbfgs",
    };
    let spec = TaggerSpec {
        learner: learner(method, c, n, cfg),
        min_count: 1,
        track_objective: false,
        average_from: 0,
        calibrate: None,
        memory: MemoryLimit::default(),
    };
    let fit = fit_tagger(train, None, templates.clone(), &spec, &())?;
    let task = TaggingTask::new(&fit.model.featurizer, train)?;
    batch::objective(&task, loss, 1.0 / (c * n as f64), &fit.model.weights)
}

/// SPOM's objective per epoch against the batch optimum as CSV and SVG (relative gap
/// `(F - F*) / F*`, log scale; a gap at or below 0 is drawn at 1e-6).
fn write_objectives(
    dir: &std::path::Path,
    set: &str,
    lines: &[(String, f64, f64, Vec<f64>)],
) -> Result<()> {
    let mut csv = String::from("method,C,epoch,objective,optimum,relative_gap\n");
    let mut series = Vec::new();
    for (method, c, opt, objectives) in lines {
        let mut points = Vec::new();
        for (e, f) in objectives.iter().enumerate() {
            let gap = (f - opt) / opt.abs().max(f64::MIN_POSITIVE);
            csv.push_str(&format!(
                "{method},{c},{},{f:.9e},{opt:.9e},{gap:.6e}\n",
                e + 1
            ));
            points.push(((e + 1) as f64, gap.max(1e-6)));
        }
        series.push(Series {
            name: format!("{method} (C = {c})"),
            points,
        });
    }
    multikernel::io::write_atomic(
        &dir.join(format!("mtl-objective-{set}.csv")),
        csv.as_bytes(),
    )?;
    let plot = LinePlot {
        title: format!("TWT UPOS, {set} templates: SPOM's objective against the batch optimum"),
        x_label: "epoch".into(),
        y_label: "(F(w) - F*) / F*".into(),
        log_x: false,
        log_y: true,
        series,
    };
    multikernel::io::write_atomic(
        &dir.join(format!("mtl-objective-{set}.svg")),
        plot.to_svg().as_bytes(),
    )
}

/// `C` of the parsing rows recorded from `--cv` (q = 1, q = 2).
pub const PARSING_C: [f64; 2] = [1.0, 1.0];

/// MTL on dependency parsing with the parser's default templates: q = 1 and q = 2.
fn parsing_rows(
    cfg: &MtlConfig,
    all: &[ConlluSentence],
    rows: &mut Vec<Row>,
    table: &mut String,
    log: &mut dyn FnMut(&str),
) -> Result<()> {
    let conv = |folds: &[usize]| -> Vec<ParseSentence> {
        select_folds(all, folds)
            .iter()
            .map(ParseSentence::from)
            .collect()
    };
    let train = conv(&[0, 1, 2, 3, 4, 5, 6, 7]);
    let dev = conv(&[8]);
    let test = conv(&[9]);
    let n = train.len();
    let templates = TemplateSet::default_set();
    let total = templates.templates.len();
    // The two rows are independent jobs.
    let jobs = [(0usize, "mtl", 1.0), (1, "mtl-q2", 2.0)];
    let lanes = super::jobs::lanes(jobs.len(), 0, &multikernel::kernel::MemoryLimit::default());
    let fits = super::jobs::run_jobs(&jobs, lanes, log, |&(k, method, q), ctx| {
        let grid: Vec<f64> = if cfg.cv {
            C_GRID.to_vec()
        } else {
            vec![PARSING_C[k]]
        };
        let (c, dev_uas, (fit, secs)) = choose_c(
            &grid,
            |c| {
                let spec = ParserSpec {
                    support: Support::Gold,
                    trees: TreeKind::NonProjective,
                    params: OnlineParams {
                        seed: cfg.seed,
                        ..OnlineParams::default()
                    },
                    loss: multikernel::engine::task::structured::StructLoss::Hinge,
                    labels: false,
                    cutting_plane: Some((
                        CuttingPlaneParams {
                            c: c * n as f64,
                            epsilon: cfg.epsilon,
                            max_iter: cfg.max_iter,
                            separation_step: cfg.separation_step,
                            ..CuttingPlaneParams::default()
                        },
                        q,
                    )),
                };
                let t = Instant::now();
                let fit = fit_parser(&train, Some(&dev), templates.clone(), &spec, &())?;
                let secs = t.elapsed().as_secs_f64();
                let uas = fit.dev_uas.first().copied().unwrap_or(f64::NAN);
                let line = format!("parsing {method} C={c}: dev UAS {uas:.2} ({secs:.1} s)");
                Ok((uas, (fit, secs), line))
            },
            &mut |l| ctx.log(l),
        )?;
        Ok((grid, c, dev_uas, fit, secs))
    })?;
    for ((_, method, _), (grid, c, dev_uas, fit, secs)) in jobs.into_iter().zip(fits) {
        let (fit, secs) = (&fit, &secs);
        let heads = fit.model.parse(&test)?;
        let s = score_parses(&test, &heads, None).scores(false);
        let share_total: f64 = fit.template_weights.iter().sum();
        let kept = fit
            .template_weights
            .iter()
            .filter(|&&m| share_total > 0.0 && m / share_total >= 1e-5)
            .count();
        table.push_str(&format!(
            "| parsing (UAS) | {method} | {:.2} | {:.2} | {kept}/{total} | {c} | {} | {} | {secs:.1} | {:.1} | {:.1} | {} |\n",
            s.uas, dev_uas, fit.run.steps, cfg.epsilon, fit.decode_seconds, fit.master_seconds,
            working_set_share(fit.master_seconds, *secs)
        ));
        let mut row = Row::from_values("twt-web-parsing", method, "uas", &[s.uas])
            .with("dev_uas", dev_uas)
            .with("C", c)
            .with("C_grid", grid.clone())
            .with("templates_kept", kept)
            .with("templates_total", total)
            .with("iterations", fit.run.steps)
            .with("epsilon", cfg.epsilon)
            .with("decode_seconds", fit.decode_seconds)
            .with("qcqp_seconds", fit.master_seconds)
            .with("status", fit.run.status.describe());
        row.train_seconds = Some(*secs);
        rows.push(row);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::testing::{in_pool, untimed};

    /// The rows as parallel jobs (and the two parsing rows) give the rows of the plain loop
    /// (one thread) with two and three threads.
    #[test]
    fn parallel_rows_give_the_sequential_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../data/treebank/tr-web.conllu.gz");
        let text = String::from_utf8(multikernel::data::read::read_bytes(&path).unwrap()).unwrap();
        let blocks: Vec<&str> = text
            .split("\n\n")
            .filter(|b| !b.trim().is_empty())
            .take(80)
            .collect();
        std::fs::write(
            dir.path().join("tr-web.conllu.gz"),
            blocks.join("\n\n") + "\n\n",
        )
        .unwrap();
        let cfg = MtlConfig {
            data_dir: dir.path().to_path_buf(),
            template_dir: std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../data/tagging"),
            template_sets: vec!["small".into()],
            methods: ["mtl", "mtl-q2", "ssvm-l2", "crf-l2"]
                .iter()
                .map(|m| m.to_string())
                .collect(),
            parsing: true,
            max_iter: 15,
            epochs: 2,
            eta0: vec![0.1, 0.3],
            calibration_epochs: 1,
            ..MtlConfig::default()
        };
        let run = |threads| {
            in_pool(threads, || {
                let mut lines = Vec::new();
                let rep = run(&cfg, &mut |l| lines.push(l.to_string())).unwrap();
                (untimed(&rep), lines.len())
            })
        };
        let (one, one_lines) = run(1);
        assert_eq!(one.len(), 4 + 2);
        for threads in [2, 3] {
            let (other, lines) = run(threads);
            assert_eq!(other, one, "{threads} threads");
            assert_eq!(lines, one_lines, "{threads} threads");
        }
    }
}
