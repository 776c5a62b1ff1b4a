//! Dependency parsing with templates as groups (martins2011 Sec. 4.2) on the Turkish Web
//! Treebank, web and wiki parts, official split (sentence index mod 10: folds 0-7 train, 8
//! dev, 9 test): the right-attach floor, the l2 structured SVM and the group-lasso (`l21`)
//! parser, both trained by the online learner (Alg. 1) with Chu-Liu-Edmonds decoding, and the
//! same two with the CRF loss (`crf-l2`, `crf-l21`: single-root arc marginals by the
//! matrix-tree theorem), decoded alike.
//!
//! Every learned row chooses its regularization constant on the dev fold from a grid of the
//! same size for each method (`--cv`; the CRF rows also their first step size `eta0` from
//! [`CRF_ETA0_GRID`]), and its epoch (the averaged iterate after each);
//! without `--cv` the constants recorded from such a run are used. The test fold is parsed
//! once. Attachment scores exclude punctuation; `uas_no_ig` also leaves out the `ig` arcs
//! inside words (docs/parsing-tagging-facts.md).

use super::{Report, Row};
use crate::plot::{LinePlot, Series};
use multikernel::data::conllu::{read_conllu, select_folds, Heads};
use multikernel::engine::pipeline::treebank::parser::{
    fit_parser, ParserFit, ParserSpec, TreeKind,
};
use multikernel::engine::prox::RegSpec;
use multikernel::engine::solver::online::params::{OnlineParams, OnlineSteps, StepSchedule};
use multikernel::engine::task::parse::{
    score_parses, AttachmentCounts, ParseSentence, Support, TemplateSet,
};
use multikernel::engine::task::structured::StructLoss;
use multikernel::error::Result;
use std::path::PathBuf;
use std::time::Instant;

/// The regularization constants tried on the dev fold, per method (the same size for each).
pub const L2_GRID: [f64; 3] = [1e-5, 1e-4, 1e-3];
pub const L21_GRID: [f64; 3] = [1e-3, 1e-2, 3e-2];
/// Constants chosen on the dev fold by `reproduce parsing --cv` (web, wiki).
pub const L2_DEFAULT: [f64; 2] = [1e-3, 1e-5];
pub const L21_DEFAULT: [f64; 2] = [3e-2, 3e-2];
/// The same for the CRF loss.
pub const CRF_L2_GRID: [f64; 3] = [1e-5, 1e-4, 1e-3];
pub const CRF_L21_GRID: [f64; 3] = [1e-3, 1e-2, 3e-2];
pub const CRF_L2_DEFAULT: [f64; 2] = [1e-3, 1e-5];
pub const CRF_L21_DEFAULT: [f64; 2] = [3e-2, 1e-3];
/// The first step sizes `eta0` tried on the dev fold for the CRF rows with `--cv` (the hinge
/// rows keep 1): the CRF's gradient is a difference of probabilities, and from `eta0 = 1` on
/// wiki the run depends on the order of the sentences (81.4 or 84.9 test UAS with seeds 1
/// and 0, docs/tree-crf.md).
pub const CRF_ETA0_GRID: [f64; 2] = [0.3, 1.0];
/// `eta0` chosen on the dev fold (web, wiki), as the constants above.
pub const CRF_L2_ETA0: [f64; 2] = [0.3, 0.3];
pub const CRF_L21_ETA0: [f64; 2] = [1.0, 0.3];

/// What to run.
#[derive(Debug, Clone)]
pub struct ParsingConfig {
    /// Directory with `tr-web.conllu.gz` and `tr-wiki.conllu.gz`.
    pub data_dir: PathBuf,
    /// `web`, `wiki`.
    pub datasets: Vec<String>,
    /// `right-attach`, `l2`, `mkl-l21`, `crf-l2`, `crf-l21`, `retrain`.
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
                "crf-l2".into(),
                "crf-l21".into(),
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

fn spec(reg: RegSpec, lambda: f64, eta0: f64, loss: StructLoss, cfg: &ParsingConfig) -> ParserSpec {
    ParserSpec {
        support: cfg.support,
        trees: TreeKind::NonProjective,
        params: OnlineParams {
            lambda,
            reg,
            steps: OnlineSteps {
                eta0,
                schedule: StepSchedule::InvSqrt,
                epochs: cfg.epochs,
                averaging: true,
                projection: false,
                shards: 1,
                batch: 1,
                learn_beta0: false,
            },
            seed: cfg.seed,
            shuffle: true,
        },
        loss,
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
    multikernel::io::write_atomic(
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
    multikernel::io::write_atomic(
        &dir.join(format!("parsing-retrain-{name}.svg")),
        plot.to_svg().as_bytes(),
    )
}

/// A learned row's setting on one data set: one job of [`run`].
struct FitJob {
    d: usize,
    method: String,
    reg: RegSpec,
    lambda: f64,
    eta0: f64,
    loss: StructLoss,
}

/// The regularizer, constants and loss of a learned row: `(reg, grid, default, eta0s, loss)`.
fn row_settings(method: &str) -> (RegSpec, [f64; 3], [f64; 2], [f64; 2], StructLoss) {
    let hinge = [1.0, 1.0];
    match method {
        "l2" => (RegSpec::L2, L2_GRID, L2_DEFAULT, hinge, StructLoss::Hinge),
        "mkl-l21" => (
            RegSpec::L21,
            L21_GRID,
            L21_DEFAULT,
            hinge,
            StructLoss::Hinge,
        ),
        "crf-l2" => (
            RegSpec::L2,
            CRF_L2_GRID,
            CRF_L2_DEFAULT,
            CRF_L2_ETA0,
            StructLoss::Crf,
        ),
        _ => (
            RegSpec::L21,
            CRF_L21_GRID,
            CRF_L21_DEFAULT,
            CRF_L21_ETA0,
            StructLoss::Crf,
        ),
    }
}

/// The `(lambda, eta0)` settings a learned row tries on data set `d` (its dev-chosen
/// constants without `--cv`).
fn settings_of(method: &str, d: usize, cfg: &ParsingConfig) -> Vec<(f64, f64)> {
    let (_, grid, default, eta0s, loss) = row_settings(method);
    if cfg.cv {
        let eta0_grid: &[f64] = match loss {
            StructLoss::Crf => &CRF_ETA0_GRID,
            StructLoss::Hinge => &[1.0],
        };
        eta0_grid
            .iter()
            .flat_map(|&e| grid.iter().map(move |&l| (l, e)))
            .collect()
    } else {
        vec![(default[d.min(1)], eta0s[d.min(1)])]
    }
}

/// A retraining point: the l2 parser on the top `k` templates by one ranking.
struct RetrainJob {
    d: usize,
    ranking: &'static str,
    pct: usize,
    k: usize,
    set: TemplateSet,
}

/// What the table needs of one learned setting: its test parse counted, its group norms (the
/// retraining ranks templates by them) and its times; the fit itself is dropped in its job.
struct RowFit {
    dev: f64,
    best_epoch: usize,
    counts: AttachmentCounts,
    labeled: bool,
    kept: usize,
    features: usize,
    norms: Vec<f64>,
    epoch_seconds: Vec<f64>,
    index_seconds: f64,
    labeler_seconds: f64,
    parse_seconds: f64,
}

/// A learned row's chosen setting: `(method, dev UAS, lambda, eta0, its fit)`.
type Chosen = (String, f64, f64, f64, RowFit);

/// The experiment's rows, in the table's order (every one by default).
pub const METHODS: [&str; 6] = [
    "right-attach",
    "l2",
    "mkl-l21",
    "crf-l2",
    "crf-l21",
    "retrain",
];

/// Runs the experiment; `log` sees progress lines. The fits are independent jobs
/// ([`super::jobs`]), as many at once as the pool has threads: first every learned row's
/// settings on every data set, then the retraining points (they rank the templates by the
/// chosen l2 and mkl-l21 models); the rows and the table keep the order of a plain loop.
pub fn run(cfg: &ParsingConfig, log: &mut dyn FnMut(&str)) -> Result<Report> {
    let wall = Instant::now();
    let mut all_rows = Vec::new();
    let mut table = String::from(
        "| data | method | UAS | LAS | UAS w/o ig | templates kept | C (lambda) | epoch | epoch s | index s | parse s |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    if let Some(m) = cfg.methods.iter().find(|m| !METHODS.contains(&m.as_str())) {
        return Err(multikernel::error::Error::param(
            "methods",
            m,
            "right-attach, l2, mkl-l21, crf-l2, crf-l21 or retrain",
        ));
    }
    if let Some((i, m)) = cfg
        .methods
        .iter()
        .enumerate()
        .find(|(i, m)| cfg.methods[..*i].contains(m))
    {
        return Err(multikernel::error::Error::param(
            "methods",
            m,
            format!(
                "each row once (it is also row {} of the list)",
                1 + cfg.methods[..i].iter().position(|o| o == m).unwrap_or(0)
            ),
        ));
    }
    let learned = |m: &str| ["l2", "mkl-l21", "crf-l2", "crf-l21"].contains(&m);
    if let Some(r) = cfg.methods.iter().position(|m| m == "retrain") {
        let before = &cfg.methods[..r];
        if !(before.iter().any(|m| m == "l2") && before.iter().any(|m| m == "mkl-l21")) {
            return Err(multikernel::error::Error::param(
                "methods",
                "retrain",
                "after l2 and mkl-l21 (it ranks templates by their group norms)",
            ));
        }
    }
    let splits: Vec<Split> = cfg
        .datasets
        .iter()
        .map(|name| load(cfg, name))
        .collect::<Result<_>>()?;
    let total_templates = cfg.templates.templates.len();
    // Every learned row's settings on every data set, in loop order.
    let mut fit_jobs = Vec::new();
    for d in 0..cfg.datasets.len() {
        for method in cfg.methods.iter().filter(|m| learned(m)) {
            let (reg, _, _, _, loss) = row_settings(method);
            for (lambda, eta0) in settings_of(method, d, cfg) {
                fit_jobs.push(FitJob {
                    d,
                    method: method.clone(),
                    reg: reg.clone(),
                    lambda,
                    eta0,
                    loss,
                });
            }
        }
    }
    let memory = multikernel::kernel::MemoryLimit::default();
    let lanes = super::jobs::lanes(fit_jobs.len(), 0, &memory);
    let mut fits = super::jobs::run_jobs(&fit_jobs, lanes, log, |j, ctx| {
        let split = &splits[j.d];
        let fit = fit_parser(
            &split.train,
            Some(&split.dev),
            cfg.templates.clone(),
            &spec(j.reg.clone(), j.lambda, j.eta0, j.loss, cfg),
            &(),
        )?;
        let dev = best_dev(&fit);
        ctx.log(&format!(
            "{} {} lambda={:e} eta0={}: dev UAS {dev:.2} (epoch {})",
            cfg.datasets[j.d], j.method, j.lambda, j.eta0, fit.best_epoch
        ));
        // The test fold is parsed here, for each setting, so that the fit can be dropped.
        let t = ctx.clock();
        let heads = fit.model.parse(&split.test)?;
        let rels = fit.model.label(&split.test, &heads);
        let parse_seconds = t.elapsed();
        Ok(Some(RowFit {
            dev,
            best_epoch: fit.best_epoch,
            counts: score_parses(&split.test, &heads, rels.as_deref()),
            labeled: rels.is_some(),
            kept: fit.model.templates_kept(),
            features: fit.model.weights.len(),
            norms: fit.model.group_norms(),
            epoch_seconds: fit.epoch_seconds,
            index_seconds: fit.index_seconds,
            labeler_seconds: fit.labeler_seconds,
            parse_seconds,
        }))
    })?;
    // Per data set and learned row, the best setting on dev (ties: the first).
    let mut chosen: Vec<Vec<Chosen>> = (0..cfg.datasets.len()).map(|_| Vec::new()).collect();
    {
        let mut k = 0;
        while k < fit_jobs.len() {
            let j = &fit_jobs[k];
            let end = k + fit_jobs[k..]
                .iter()
                .take_while(|o| o.d == j.d && o.method == j.method)
                .count();
            let mut best: Option<(f64, f64, f64, RowFit)> = None;
            for i in k..end {
                let fit = fits[i].take().expect("each fit is taken once");
                let dev = fit.dev;
                if best.as_ref().is_none_or(|(b, _, _, _)| dev > *b) {
                    best = Some((dev, fit_jobs[i].lambda, fit_jobs[i].eta0, fit));
                }
            }
            if let Some((dev, lambda, eta0, fit)) = best {
                chosen[j.d].push((j.method.clone(), dev, lambda, eta0, fit));
            }
            k = end;
        }
    }
    // The retraining points, ranked by the chosen l2 and mkl-l21 models.
    let mut retrain_jobs = Vec::new();
    if cfg.methods.iter().any(|m| m == "retrain") {
        for (d, rows) in chosen.iter().enumerate() {
            let norms = |m: &str| {
                rows.iter()
                    .find(|r| r.0 == m)
                    .map(|r| r.4.norms.clone())
                    .expect("retrain checked to follow l2 and mkl-l21")
            };
            let (svm, mkl) = (norms("l2"), norms("mkl-l21"));
            for (ranking, by) in [("mkl", &mkl), ("svm", &svm)] {
                for &pct in &RETRAIN_PERCENT {
                    let k = (total_templates * pct).div_ceil(100).max(1);
                    retrain_jobs.push(RetrainJob {
                        d,
                        ranking,
                        pct,
                        k,
                        set: top_templates(&cfg.templates, by, k)?,
                    });
                }
            }
        }
    }
    let lanes = super::jobs::lanes(retrain_jobs.len(), 0, &memory);
    let retrained = super::jobs::run_jobs(&retrain_jobs, lanes, log, |j, ctx| {
        let split = &splits[j.d];
        let lambda = L2_DEFAULT[j.d.min(1)];
        let fit = fit_parser(
            &split.train,
            Some(&split.dev),
            j.set.clone(),
            &spec(RegSpec::L2, lambda, 1.0, StructLoss::Hinge, cfg),
            &(),
        )?;
        let heads = fit.model.parse(&split.test)?;
        let c = score_parses(&split.test, &heads, None);
        ctx.log(&format!(
            "{} retrain on the top {} templates by {}: test UAS {:.2}",
            cfg.datasets[j.d],
            j.k,
            j.ranking,
            c.scores(false).uas
        ));
        let epoch_s = super::median(&fit.epoch_seconds).unwrap_or(0.0);
        Ok((fit.best_epoch, epoch_s, fit.index_seconds, c))
    })?;
    // The rows and the table in loop order.
    let mut retrained = retrain_jobs.iter().zip(retrained);
    for (d, name) in cfg.datasets.iter().enumerate() {
        let split = &splits[d];
        let mut learned_rows = std::mem::take(&mut chosen[d]).into_iter();
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
                "l2" | "mkl-l21" | "crf-l2" | "crf-l21" => {
                    let Some((m, dev, lambda, eta0, fit)) = learned_rows.next() else {
                        continue;
                    };
                    debug_assert_eq!(&m, method);
                    let (c, parse_seconds, kept) = (fit.counts, fit.parse_seconds, fit.kept);
                    let s = c.scores(fit.labeled);
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
                    for r in rows(name, method, &c, fit.labeled) {
                        let mut r = r
                            .with("templates_kept", kept)
                            .with("templates_total", total_templates)
                            .with("lambda", lambda)
                            .with("eta0", eta0)
                            .with("dev_uas", dev)
                            .with("epochs", fit.best_epoch)
                            .with("epoch_seconds", epoch_s)
                            .with("index_seconds", fit.index_seconds)
                            .with("parse_seconds", parse_seconds)
                            .with("labeler_seconds", fit.labeler_seconds)
                            .with("features", fit.features);
                        r.train_seconds = Some(train_s);
                        all_rows.push(r);
                    }
                }
                "retrain" => {
                    let lambda = L2_DEFAULT[d.min(1)];
                    let mut curves = Vec::new();
                    for ranking in ["mkl", "svm"] {
                        let mut points = Vec::new();
                        for _ in &RETRAIN_PERCENT {
                            let (j, (best_epoch, epoch_s, index_seconds, c)) = retrained
                                .next()
                                .expect("one retraining point per percent and ranking");
                            debug_assert!(j.d == d && j.ranking == ranking);
                            let (pct, k) = (j.pct, j.k);
                            let s = c.scores(false);
                            table.push_str(&format!(
                                "| {name} | retrain-{ranking} top {pct}% | {:.2} | - | {} | {k}/{total_templates} | {lambda:e} | {} | {:.3} | {:.2} | - |\n",
                                s.uas,
                                s.uas_no_ig.map_or("-".into(), |v| format!("{v:.2}")),
                                best_epoch,
                                epoch_s,
                                index_seconds
                            ));
                            for r in rows(name, &format!("retrain-{ranking}"), &c, false) {
                                all_rows.push(
                                    r.with("percent", pct)
                                        .with("templates_kept", k)
                                        .with("templates_total", total_templates)
                                        .with("lambda", lambda)
                                        .with("epochs", best_epoch)
                                        .with("index_seconds", index_seconds),
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
    let line = format!(
        "whole run: {:.1} s wall, fits {} at once on {} threads (epoch s: wall time of the \
         fit, shared with the other fits)",
        wall.elapsed().as_secs_f64(),
        super::jobs::lanes(usize::MAX, 0, &memory),
        rayon::current_num_threads()
    );
    log(&line);
    table.push_str(&format!("\n{line}\n"));
    Ok(Report {
        experiment: "parsing".into(),
        rows: all_rows,
        table,
    })
}

/// The best dev UAS over the epochs of a fit.
fn best_dev(fit: &ParserFit) -> f64 {
    fit.dev_uas
        .iter()
        .cloned()
        .fold(f64::NEG_INFINITY, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::testing::{in_pool, untimed};

    /// The first `n` sentences of a shipped treebank, written (plain) under its name in `dir`.
    fn small_treebank(dir: &std::path::Path, name: &str, n: usize) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../data/treebank/tr-{name}.conllu.gz"));
        let text = String::from_utf8(multikernel::data::read::read_bytes(&path).unwrap()).unwrap();
        let blocks: Vec<&str> = text
            .split("\n\n")
            .filter(|b| !b.trim().is_empty())
            .take(n)
            .collect();
        std::fs::write(
            dir.join(format!("tr-{name}.conllu.gz")),
            blocks.join("\n\n") + "\n\n",
        )
        .unwrap();
    }

    /// The fits as parallel jobs give the rows of the plain loop (one thread) with two and
    /// three threads: every learned row's dev grid (`cv`), the choice among its settings, and
    /// the retraining points that depend on the chosen models.
    #[test]
    #[ignore = "full tier: the parsing study twice, 5 s"]
    fn parallel_fits_give_the_sequential_rows() {
        let dir = tempfile::tempdir().unwrap();
        small_treebank(dir.path(), "web", 100);
        let cfg = ParsingConfig {
            data_dir: dir.path().to_path_buf(),
            datasets: vec!["web".into()],
            methods: ["right-attach", "l2", "mkl-l21", "crf-l2", "retrain"]
                .iter()
                .map(|m| m.to_string())
                .collect(),
            epochs: 2,
            cv: true,
            ..ParsingConfig::default()
        };
        let run = |threads| {
            in_pool(threads, || {
                let mut lines = Vec::new();
                let rep = run(&cfg, &mut |l| lines.push(l.to_string())).unwrap();
                (untimed(&rep), lines.len())
            })
        };
        let (one, one_lines) = run(1);
        // right-attach (uas, uas_no_ig), 3 learned rows (uas, las, uas_no_ig), 10 points.
        assert!(one.len() >= 2 + 3 * 2 + 10, "{} rows", one.len());
        for threads in [2, 3] {
            let (other, lines) = run(threads);
            assert_eq!(other, one, "{threads} threads");
            assert_eq!(lines, one_lines, "{threads} threads");
        }
    }

    /// A row named twice, or retrain before l2 and mkl-l21, is refused before any fit.
    #[test]
    fn bad_row_lists_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for methods in [&["l2", "l2"][..], &["l2", "retrain", "mkl-l21"]] {
            let cfg = ParsingConfig {
                data_dir: dir.path().to_path_buf(),
                methods: methods.iter().map(|m| m.to_string()).collect(),
                ..ParsingConfig::default()
            };
            let err = run(&cfg, &mut |_| {}).unwrap_err().to_string();
            assert!(err.contains("once") || err.contains("after l2"), "{err}");
        }
    }
}
