//! Dependency parsing with templates as groups (martins2011 Sec. 4.2) on the Turkish Web
//! Treebank, web and wiki parts, official split (sentence index mod 10: folds 0-7 train, 8
//! dev, 9 test): the right-attach floor, the l2 structured SVM and the group-lasso (`l21`)
//! parser, both trained by the online learner (Alg. 1) with Chu-Liu-Edmonds decoding.
//!
//! Every learned row chooses its regularization constant on the dev fold from a grid of the
//! same size for each method (`--cv`), and its epoch (the averaged iterate after each);
//! without `--cv` the constants recorded from such a run are used. The test fold is parsed
//! once. Attachment scores exclude punctuation; `uas_no_ig` also leaves out the `ig` arcs
//! inside words (docs/parsing-tagging-facts.md).

use super::{Report, Row};
use crate::data::conllu::{read_conllu, select_folds, Heads};
use crate::error::Result;
use crate::plot::{LinePlot, Series};
use crate::prox::RegSpec;
use crate::solver::online::params::{OnlineParams, StepSchedule};
use crate::solver::online::parser::{fit_parser, ParserFit, ParserSpec, TreeKind};
use crate::task::parse::{score_parses, AttachmentCounts, ParseSentence, Support, TemplateSet};
use std::path::PathBuf;
use std::time::Instant;

/// The regularization constants tried on the dev fold, per method (the same size for each).
pub const L2_GRID: [f64; 3] = [1e-5, 1e-4, 1e-3];
pub const L21_GRID: [f64; 3] = [1e-3, 1e-2, 3e-2];
/// Constants chosen on the dev fold by `reproduce parsing --cv` (web, wiki).
pub const L2_DEFAULT: [f64; 2] = [1e-3, 1e-5];
pub const L21_DEFAULT: [f64; 2] = [3e-2, 3e-2];

/// What to run.
#[derive(Debug, Clone)]
pub struct ParsingConfig {
    /// Directory with `tr-web.conllu.gz` and `tr-wiki.conllu.gz`.
    pub data_dir: PathBuf,
    /// `web`, `wiki`.
    pub datasets: Vec<String>,
    /// `right-attach`, `l2`, `mkl-l21`.
    pub methods: Vec<String>,
    /// Most epochs (the best on dev is kept).
    pub epochs: usize,
    /// Rerun the selection of the regularization constant on the dev fold.
    pub cv: bool,
    pub templates: TemplateSet,
    pub seed: u64,
    /// Which arcs define the features (gold arcs, the default, or every arc).
    pub support: Support,
    /// Where the retraining curve goes (`parsing-retrain-DATA.svg` and `.csv`).
    pub out_dir: Option<PathBuf>,
}

/// Percentages of the templates kept in the retraining experiment.
pub const RETRAIN_PERCENT: [usize; 5] = [10, 20, 33, 50, 100];

impl Default for ParsingConfig {
    fn default() -> Self {
        ParsingConfig {
            data_dir: PathBuf::from("data/treebank"),
            datasets: vec!["web".into(), "wiki".into()],
            methods: vec![
                "right-attach".into(),
                "l2".into(),
                "mkl-l21".into(),
                "retrain".into(),
            ],
            epochs: 10,
            cv: false,
            templates: TemplateSet::default_set(),
            seed: 1,
            support: Support::Gold,
            out_dir: None,
        }
    }
}

/// The split of one treebank file.
struct Split {
    train: Vec<ParseSentence>,
    dev: Vec<ParseSentence>,
    test: Vec<ParseSentence>,
}

fn load(cfg: &ParsingConfig, name: &str) -> Result<Split> {
    let path = cfg.data_dir.join(format!("tr-{name}.conllu.gz"));
    let all = read_conllu(&path, Heads::Required)?;
    let conv = |folds: &[usize]| -> Vec<ParseSentence> {
        select_folds(&all, folds)
            .iter()
            .map(ParseSentence::from)
            .collect()
    };
    Ok(Split {
        train: conv(&[0, 1, 2, 3, 4, 5, 6, 7]),
        dev: conv(&[8]),
        test: conv(&[9]),
    })
}

/// Attach every token to the next one, the last to the root.
fn right_attach(s: &ParseSentence) -> Vec<usize> {
    let n = s.len();
    (1..=n).map(|k| if k == n { 0 } else { k + 1 }).collect()
}

fn spec(reg: RegSpec, lambda: f64, cfg: &ParsingConfig) -> ParserSpec {
    ParserSpec {
        support: cfg.support,
        trees: TreeKind::NonProjective,
        params: OnlineParams {
            lambda,
            reg,
            eta0: 1.0,
            schedule: StepSchedule::InvSqrt,
            epochs: cfg.epochs,
            seed: cfg.seed,
            averaging: true,
            projection: false,
            shuffle: true,
        },
        labels: true,
        cutting_plane: None,
    }
}

/// Rows `uas` and `uas_no_ig` of one method on one data set.
fn rows(dataset: &str, method: &str, c: &AttachmentCounts, labeled: bool) -> Vec<Row> {
    let s = c.scores(labeled);
    let mut out = vec![Row::from_values(dataset, method, "uas", &[s.uas])];
    if let Some(v) = s.las {
        out.push(Row::from_values(dataset, method, "las", &[v]));
    }
    if let Some(v) = s.uas_no_ig {
        out.push(Row::from_values(dataset, method, "uas_no_ig", &[v]));
    }
    out
}

/// The `k` templates with the largest group norms (ties: file order), in file order.
fn top_templates(set: &TemplateSet, norms: &[f64], k: usize) -> Result<TemplateSet> {
    let mut order: Vec<usize> = (0..norms.len()).collect();
    order.sort_by(|&a, &b| norms[b].total_cmp(&norms[a]).then(a.cmp(&b)));
    let mut keep: Vec<usize> = order.into_iter().take(k).collect();
    keep.sort_unstable();
    let text: String = keep
        .iter()
        .map(|&t| format!("{}\n", set.templates[t].name))
        .collect();
    TemplateSet::parse(&text, std::path::Path::new("<top templates>"))
}

/// The retraining curves as CSV and SVG (the paper's Figure 3, bottom right).
fn write_curves(dir: &std::path::Path, name: &str, curves: Vec<Series>) -> Result<()> {
    let mut csv = String::from("ranking,templates,uas\n");
    for c in &curves {
        for (k, u) in &c.points {
            csv.push_str(&format!("{},{k},{u:.4}\n", c.name));
        }
    }
    crate::io::write_atomic(
        &dir.join(format!("parsing-retrain-{name}.csv")),
        csv.as_bytes(),
    )?;
    let plot = LinePlot {
        title: format!("TWT {name}: l2 parser retrained on the top templates"),
        x_label: "templates kept".into(),
        y_label: "test UAS (%)".into(),
        log_x: false,
        log_y: false,
        series: curves,
    };
    crate::io::write_atomic(
        &dir.join(format!("parsing-retrain-{name}.svg")),
        plot.to_svg().as_bytes(),
    )
}

/// Runs the experiment; `log` sees progress lines.
pub fn run(cfg: &ParsingConfig, log: &mut dyn FnMut(&str)) -> Result<Report> {
    let mut all_rows = Vec::new();
    let mut table = String::from(
        "| data | method | UAS | LAS | UAS w/o ig | templates kept | C (lambda) | epoch | epoch s | index s | parse s |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    const METHODS: [&str; 4] = ["right-attach", "l2", "mkl-l21", "retrain"];
    if let Some(m) = cfg.methods.iter().find(|m| !METHODS.contains(&m.as_str())) {
        return Err(crate::error::Error::param(
            "methods",
            m,
            "right-attach, l2, mkl-l21 or retrain",
        ));
    }
    for (d, name) in cfg.datasets.iter().enumerate() {
        let split = load(cfg, name)?;
        let total_templates = cfg.templates.templates.len();
        let mut norms: Vec<(String, Vec<f64>)> = Vec::new();
        for method in &cfg.methods {
            match method.as_str() {
                "right-attach" => {
                    let heads: Vec<Vec<usize>> = split.test.iter().map(right_attach).collect();
                    let c = score_parses(&split.test, &heads, None);
                    let s = c.scores(false);
                    table.push_str(&format!(
                        "| {name} | right-attach | {:.2} | - | {} | - | - | - | - | - | - |\n",
                        s.uas,
                        s.uas_no_ig.map_or("-".into(), |v| format!("{v:.2}"))
                    ));
                    all_rows.extend(rows(name, "right-attach", &c, false));
                }
                "l2" | "mkl-l21" => {
                    let (reg, grid, default) = if method == "l2" {
                        (RegSpec::L2, L2_GRID, L2_DEFAULT)
                    } else {
                        (RegSpec::L21, L21_GRID, L21_DEFAULT)
                    };
                    let lambdas: Vec<f64> = if cfg.cv {
                        grid.to_vec()
                    } else {
                        vec![default[d.min(1)]]
                    };
                    let mut best: Option<(f64, f64, ParserFit)> = None;
                    for &lambda in &lambdas {
                        let fit = fit_parser(
                            &split.train,
                            Some(&split.dev),
                            cfg.templates.clone(),
                            &spec(reg.clone(), lambda, cfg),
                            &(),
                        )?;
                        let dev = fit
                            .dev_uas
                            .iter()
                            .cloned()
                            .fold(f64::NEG_INFINITY, f64::max);
                        log(&format!(
                            "{name} {method} lambda={lambda:e}: dev UAS {dev:.2} (epoch {})",
                            fit.best_epoch
                        ));
                        if best.as_ref().is_none_or(|(b, _, _)| dev > *b) {
                            best = Some((dev, lambda, fit));
                        }
                    }
                    let Some((dev, lambda, fit)) = best else {
                        continue;
                    };
                    let t = Instant::now();
                    let heads = fit.model.parse(&split.test)?;
                    let rels = fit.model.label(&split.test, &heads);
                    let parse_seconds = t.elapsed().as_secs_f64();
                    let c = score_parses(&split.test, &heads, rels.as_deref());
                    let s = c.scores(rels.is_some());
                    let kept = fit.model.templates_kept();
                    let epoch_s = super::median(&fit.epoch_seconds).unwrap_or(0.0);
                    let train_s: f64 = fit.epoch_seconds.iter().sum();
                    table.push_str(&format!(
                        "| {name} | {method} | {:.2} | {} | {} | {kept}/{total_templates} | {lambda:e} | {} | {epoch_s:.3} | {:.2} | {parse_seconds:.3} |\n",
                        s.uas,
                        s.las.map_or("-".into(), |v| format!("{v:.2}")),
                        s.uas_no_ig.map_or("-".into(), |v| format!("{v:.2}")),
                        fit.best_epoch,
                        fit.index_seconds
                    ));
                    norms.push((method.clone(), fit.model.group_norms()));
                    for r in rows(name, method, &c, rels.is_some()) {
                        let mut r = r
                            .with("templates_kept", kept)
                            .with("templates_total", total_templates)
                            .with("lambda", lambda)
                            .with("dev_uas", dev)
                            .with("epochs", fit.best_epoch)
                            .with("epoch_seconds", epoch_s)
                            .with("index_seconds", fit.index_seconds)
                            .with("parse_seconds", parse_seconds)
                            .with("labeler_seconds", fit.labeler_seconds)
                            .with("features", fit.model.weights.len());
                        r.train_seconds = Some(train_s);
                        all_rows.push(r);
                    }
                }
                "retrain" => {
                    let get = |m: &str| norms.iter().find(|(k, _)| k == m).map(|(_, n)| n.clone());
                    let (Some(svm), Some(mkl)) = (get("l2"), get("mkl-l21")) else {
                        return Err(crate::error::Error::param(
                            "methods",
                            "retrain",
                            "after l2 and mkl-l21 (it ranks templates by their group norms)",
                        ));
                    };
                    let lambda = L2_DEFAULT[d.min(1)];
                    let mut curves = Vec::new();
                    for (ranking, by) in [("mkl", &mkl), ("svm", &svm)] {
                        let mut points = Vec::new();
                        for &pct in &RETRAIN_PERCENT {
                            let k = (total_templates * pct).div_ceil(100).max(1);
                            let set = top_templates(&cfg.templates, by, k)?;
                            let fit = fit_parser(
                                &split.train,
                                Some(&split.dev),
                                set,
                                &spec(RegSpec::L2, lambda, cfg),
                                &(),
                            )?;
                            let heads = fit.model.parse(&split.test)?;
                            let c = score_parses(&split.test, &heads, None);
                            let s = c.scores(false);
                            log(&format!(
                                "{name} retrain on the top {k} templates by {ranking}: test UAS {:.2}",
                                s.uas
                            ));
                            table.push_str(&format!(
                                "| {name} | retrain-{ranking} top {pct}% | {:.2} | - | {} | {k}/{total_templates} | {lambda:e} | {} | {:.3} | {:.2} | - |\n",
                                s.uas,
                                s.uas_no_ig.map_or("-".into(), |v| format!("{v:.2}")),
                                fit.best_epoch,
                                super::median(&fit.epoch_seconds).unwrap_or(0.0),
                                fit.index_seconds
                            ));
                            for r in rows(name, &format!("retrain-{ranking}"), &c, false) {
                                all_rows.push(
                                    r.with("percent", pct)
                                        .with("templates_kept", k)
                                        .with("templates_total", total_templates)
                                        .with("lambda", lambda)
                                        .with("epochs", fit.best_epoch)
                                        .with("index_seconds", fit.index_seconds),
                                );
                            }
                            points.push((k as f64, s.uas));
                        }
                        curves.push(Series {
                            name: format!(
                                "ranked by {}",
                                if ranking == "mkl" {
                                    "MKL (l21)"
                                } else {
                                    "SVM (l2)"
                                }
                            ),
                            points,
                        });
                    }
                    if let Some(dir) = &cfg.out_dir {
                        write_curves(dir, name, curves)?;
                    }
                }
                _ => unreachable!("methods checked above"),
            }
        }
    }
    Ok(Report {
        experiment: "parsing".into(),
        rows: all_rows,
        table,
    })
}
