//! `reproduce ocr`: Table 1 and Figure 1 of Martins et al. (2011), Sec. 4.1 — SPOM (Alg. 3)
//! on the OCR handwriting data of Taskar et al. (2003).
//!
//! Protocol: for each fold in the list, train on that fold's words and test per character on
//! the other nine folds; 20 epochs of the structured hinge loss with the Hamming cost,
//! `eta_t = eta0 / sqrt(t)`, `lambda = 1 / (C N)`, projection radius
//! `gamma = sqrt(2 C * number of training characters)`. Kernels over the 128 pixels:
//! `L = x.x' / (|x||x'|)`, `Q = (x.x' + 1)^2` normalized to unit diagonal,
//! `G = exp(-||x - x'||^2 / 10)` (sigma^2 = 5) and the B1-spline
//! `max(0, 1 - ||x - x'|| / h)` with `h` giving ~95% zeros on the training fold.
//!
//! Hyper-parameters: per row, `eta0` from [`ETA0_GRID`] and `C` from [`C_GRID`], chosen once
//! on a seeded held-out 20% of fold 0's words ([`select`]); the chosen values are the
//! defaults of [`methods`]. With `cv` the selection is rerun on each training fold.

use crate::jobs::{JobClock, JobCtx};
use crate::plot::{LinePlot, Series};
use crate::{mean_std, median, Report, Row};
use multikernel::data::ocr::read_ocr;
use multikernel::data::split::{held_out_parts, Split};
use multikernel::data::Matrix;
use multikernel::data::SequenceData;
use multikernel::engine::pipeline::sequence::grams::{base_grams, group_gram, lambda_from_c};
use multikernel::engine::pipeline::sequence::model::{
    decode_sequences, token_accuracy, KernelGroup, SequenceModel,
};
use multikernel::engine::pipeline::sequence::spom::{fit_with_grams, SequenceFitConfig};
use multikernel::engine::prox::RegSpec;
use multikernel::engine::select::{Mean, Search};
use multikernel::engine::solver::online::{OnlineParams, OnlineState, OnlineSteps, StepSchedule};
use multikernel::engine::task::sequence::SeqLoss;
use multikernel::error::{Error, Result};
use multikernel::kernel::binary::expansion_scores;
use multikernel::kernel::{FittedKernel, Gram, KernelSpec, MemoryLimit};
use multikernel::run::Control;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Initial learning rates searched by [`select`].
pub const ETA0_GRID: [f64; 5] = [0.3, 1.0, 3.0, 10.0, 30.0];
/// Values of `C = 1 / (lambda N)` searched by [`select`].
pub const C_GRID: [f64; 6] = [0.3, 1.0, 3.0, 10.0, 100.0, 1000.0];
/// Fraction of the training fold's words held out by [`select`].
pub const HELD_OUT: f64 = 0.2;
/// Disjoint held-out parts [`select`] pools by default (see [`OcrConfig::select_splits`]).
pub const SELECT_SPLITS: usize = 5;

/// A base kernel of Table 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// Linear, unit diagonal.
    L,
    /// Quadratic `(x.x' + 1)^2`, unit diagonal.
    Q,
    /// Gaussian, sigma^2 = 5.
    G,
    /// B1-spline with ~95% zeros.
    B,
}

impl Base {
    /// The kernel spec (`--kernel` syntax).
    pub fn spec(self) -> &'static str {
        match self {
            Base::L => "linear:norm=diag",
            Base::Q => "poly:degree=2,offset=1,norm=diag",
            Base::G => "rbf:sigma2=5",
            Base::B => "bspline:zeros=0.95",
        }
    }

    /// Short name used in the table and the JSON weights.
    pub fn short(self) -> &'static str {
        match self {
            Base::L => "L",
            Base::Q => "Q",
            Base::G => "G",
            Base::B => "B1",
        }
    }
}

/// One row of Table 1 with its selected hyper-parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct OcrMethod {
    pub name: &'static str,
    pub kernels: &'static [Base],
    /// One group holding the plain average of the kernels.
    pub average: bool,
    pub learn_beta0: bool,
    /// The paper's test accuracy, mean and std in percent.
    pub paper: (f64, f64),
    /// Defaults chosen by [`select`] on fold 0 (see the module docs).
    pub eta0: f64,
    pub c: f64,
}

impl OcrMethod {
    /// `l21sq` (sparse MKL) for several groups, plain `l2` for one.
    pub fn reg(&self) -> RegSpec {
        if self.kernels.len() > 1 && !self.average {
            RegSpec::L21Sq
        } else {
            RegSpec::L2
        }
    }

    /// The kernels column of the table (`beta1 L + beta2 Q + ...`).
    pub fn describe(&self) -> String {
        let names: Vec<&str> = self.kernels.iter().map(|k| k.short()).collect();
        if self.kernels.len() == 1 {
            names[0].to_string()
        } else if self.average {
            format!("({})/{}", names.join("+"), names.len())
        } else {
            let terms: Vec<String> = names
                .iter()
                .enumerate()
                .map(|(i, n)| format!("b{} {n}", i + 1))
                .collect();
            let s = terms.join(" + ");
            if self.learn_beta0 {
                format!("{s}, b0 learned")
            } else {
                s
            }
        }
    }
}

const ONE_L: &[Base] = &[Base::L];
const ONE_Q: &[Base] = &[Base::Q];
const ONE_G: &[Base] = &[Base::G];
const ONE_B: &[Base] = &[Base::B];
const LQG: &[Base] = &[Base::L, Base::Q, Base::G];
const LB: &[Base] = &[Base::L, Base::B];

/// The rows of Table 1, with the hyper-parameters selected on held-out words of fold 0.
pub fn methods() -> Vec<OcrMethod> {
    let m = |name, kernels, average, learn_beta0, paper, eta0, c| OcrMethod {
        name,
        kernels,
        average,
        learn_beta0,
        paper,
        eta0,
        c,
    };
    // Selected by `select` on fold 0 (seed 1, 20 epochs, 5 disjoint held-out 20% parts of
    // its words, accuracy pooled over their 4,617 characters); the grid and the log are in
    // BENCHMARKS.md.
    vec![
        m("linear", ONE_L, false, false, (71.8, 3.9), 3.0, 100.0),
        m("quadratic", ONE_Q, false, false, (85.5, 0.3), 3.0, 3.0),
        m("gaussian", ONE_G, false, false, (84.1, 0.4), 3.0, 3.0),
        m("average-lqg", LQG, true, false, (84.3, 0.3), 3.0, 3.0),
        m("mkl-lqg", LQG, false, false, (87.5, 0.3), 3.0, 3.0),
        m("mkl-lqg-beta0", LQG, false, true, (87.5, 0.4), 1.0, 100.0),
        m("bspline", ONE_B, false, false, (75.4, 0.9), 3.0, 10.0),
        m("average-lb", LB, true, false, (83.0, 0.3), 3.0, 10.0),
        m("mkl-lb", LB, false, false, (85.2, 0.3), 3.0, 3.0),
        m("mkl-lb-beta0", LB, false, true, (85.2, 0.3), 3.0, 3.0),
    ]
}

/// Settings of `reproduce ocr`.
#[derive(Debug, Clone)]
pub struct OcrConfig {
    /// `letter.data` (plain or gzip).
    pub data: PathBuf,
    /// Training folds; each is tested on the other nine.
    pub folds: Vec<usize>,
    pub epochs: usize,
    /// Rerun the hyper-parameter selection on each training fold.
    pub cv: bool,
    /// Where the per-method curves (CSV, SVG) and weight plots go.
    pub out_dir: Option<PathBuf>,
    pub seed: u64,
    /// Test words (sampled with the seed) on which the per-epoch accuracy curves of the first
    /// fold are measured; 0 = all test words.
    pub curve_words: usize,
    /// Only these rows (all when `None`).
    pub methods: Option<Vec<String>>,
    /// Held-out parts of the selection: 1 = a single seeded held-out 20% of the fold's
    /// words; k (up to 5) = k disjoint held-out 20% parts, accuracy pooled (less noisy).
    pub select_splits: usize,
    pub loss: SeqLoss,
    pub memory: MemoryLimit,
}

impl Default for OcrConfig {
    fn default() -> Self {
        OcrConfig {
            data: PathBuf::from("data/ocr/letter.data.gz"),
            folds: (0..10).collect(),
            epochs: 20,
            cv: false,
            out_dir: None,
            seed: 1,
            curve_words: 500,
            methods: None,
            select_splits: SELECT_SPLITS,
            loss: SeqLoss::Hinge,
            memory: MemoryLimit::default(),
        }
    }
}

/// The rows `cfg` asks for, in table order.
pub fn selected_methods(cfg: &OcrConfig) -> Result<Vec<OcrMethod>> {
    let all = methods();
    match &cfg.methods {
        None => Ok(all),
        Some(names) => {
            for n in names {
                if !all.iter().any(|m| m.name == n) {
                    return Err(Error::param(
                        "methods",
                        n,
                        format!(
                            "an OCR row: one of {}",
                            all.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
                        ),
                    ));
                }
            }
            Ok(all
                .into_iter()
                .filter(|m| names.iter().any(|n| n == m.name))
                .collect())
        }
    }
}

/// Alg. 1 settings of one run.
fn params(
    method: &OcrMethod,
    eta0: f64,
    c: f64,
    n_words: usize,
    epochs: usize,
    seed: u64,
) -> OnlineParams {
    OnlineParams {
        lambda: lambda_from_c(c, n_words),
        reg: method.reg(),
        steps: OnlineSteps {
            eta0,
            schedule: StepSchedule::InvSqrt,
            epochs,
            averaging: false,
            projection: true,
            shards: 1,
            batch: 1,
            learn_beta0: false,
        },
        seed,
        shuffle: true,
    }
}

fn fit_config(
    method: &OcrMethod,
    mut p: OnlineParams,
    cfg: &OcrConfig,
) -> Result<SequenceFitConfig> {
    p.steps.learn_beta0 = method.learn_beta0;
    Ok(SequenceFitConfig {
        loss: cfg.loss,
        kernels: method
            .kernels
            .iter()
            .map(|k| k.spec().parse::<KernelSpec>())
            .collect::<Result<_>>()?,
        average: method.average,
        params: p,
        memory: cfg.memory,
    })
}

/// Kernels of a kernel set fitted on `x`, and the time their training Grams took.
pub(crate) struct KernelSet {
    pub(crate) bases: &'static [Base],
    pub(crate) kernels: Vec<FittedKernel>,
    pub(crate) grams: Vec<Gram>,
    pub(crate) gram_seconds: f64,
}

pub(crate) fn kernel_set(
    bases: &'static [Base],
    x: &Matrix,
    seed: u64,
    memory: &MemoryLimit,
) -> Result<KernelSet> {
    kernel_set_timed(bases, x, seed, memory, JobClock::start(false))
}

/// [`kernel_set`] with the Grams timed by `clock` (started just before; see
/// [`JobCtx::clock`]).
pub(crate) fn kernel_set_timed(
    bases: &'static [Base],
    x: &Matrix,
    seed: u64,
    memory: &MemoryLimit,
    clock: JobClock,
) -> Result<KernelSet> {
    let kernels: Vec<FittedKernel> = bases
        .iter()
        .map(|b| FittedKernel::fit(&b.spec().parse::<KernelSpec>()?, x, &[], seed))
        .collect::<Result<_>>()?;
    let fit_seconds = clock.elapsed();
    let grams = base_grams(&kernels, x, memory)?;
    Ok(KernelSet {
        bases,
        kernels,
        grams,
        gram_seconds: clock.elapsed() - fit_seconds,
    })
}

/// Group Grams of a method from its kernel set (the average combined; its time counted).
fn method_grams(
    method: &OcrMethod,
    set: &KernelSet,
    clock: JobClock,
) -> Result<(Vec<KernelGroup>, Option<Gram>, f64)> {
    if method.average {
        let groups = KernelGroup::average(&set.kernels);
        let g = group_gram(&set.grams, &groups[0])?;
        Ok((groups, Some(g), clock.elapsed()))
    } else {
        Ok((KernelGroup::separate(&set.kernels), None, 0.0))
    }
}

/// Per-character accuracy of the learner's current state on `eval` words (training
/// characters `train_x` as the expansion's support).
pub(crate) fn state_accuracy(
    st: &OnlineState,
    kernels: &[FittedKernel],
    groups: &[KernelGroup],
    train_x: &Matrix,
    eval: &SequenceData,
    memory: &MemoryLimit,
) -> Result<f64> {
    let l = eval.n_labels();
    let n = train_x.rows;
    let coefs = st.kernel_coefs(false);
    let mut per_kernel: Vec<Option<Matrix>> = vec![None; kernels.len()];
    for (g, c) in groups.iter().zip(&coefs) {
        for &(k, w) in &g.components {
            let m = per_kernel[k].get_or_insert_with(|| Matrix::zeros(n, l));
            for (o, v) in m.data.iter_mut().zip(c) {
                *o += w * v;
            }
        }
    }
    let trans = st.explicit_values(false).remove(0);
    let scores = expansion_scores(kernels, train_x, &per_kernel, l, &eval.x, memory)?;
    Ok(token_accuracy(
        &decode_sequences(&scores, &trans, &eval.spans),
        eval,
    ))
}

/// The outcome of [`select`] for one row.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    pub method: String,
    pub eta0: f64,
    pub c: f64,
    pub accuracy: f64,
    /// Every `(eta0, C, held-out accuracy)` tried.
    pub grid: Vec<(f64, f64, f64)>,
}

/// One held-out part of [`select`] for rows that share a kernel set: the training and
/// held-out words, the kernel set fitted on the training words, and per row its kernel
/// groups (with the combined Gram of an average).
struct PartContext {
    train: SequenceData,
    held: SequenceData,
    set: KernelSet,
    groups: Vec<(Vec<KernelGroup>, Option<Gram>)>,
}

/// The held-out parts of [`select`]: `parts` (at most `1 / HELD_OUT`) disjoint seeded parts of
/// [`HELD_OUT`] of `fold`'s words, each against the rest of the fold
/// ([`held_out_parts`]; the first part is the same whatever `parts` is).
fn held_out_splits(data: &SequenceData, fold: usize, seed: u64, parts: usize) -> Vec<Split> {
    Split::from_pairs(held_out_parts(
        &data.fold_indices(&[fold]),
        HELD_OUT,
        parts,
        seed,
    ))
}

/// Hyper-parameter selection for `methods`: every `(eta0, C)` of [`ETA0_GRID`] x [`C_GRID`]
/// trained on 80% of `fold`'s words and scored by per-character accuracy on the held-out 20%
/// (seeded); with `cfg.select_splits = k > 1`, on each of `k` disjoint held-out 20% parts in
/// turn, the accuracy pooled over the `k` parts' characters. The best is chosen (ties:
/// earlier in grid order, C outer, eta0 inner).
///
/// Through [`Search::run_split_by_split`]: the rows that share a kernel set (next to each
/// other in table order) are searched together, one held-out part at a time with its kernel
/// set built once (and dropped before the next part's), their grid points in parallel; the
/// mean is [`Mean::Weighted`] by the parts' characters, and each row's best is chosen among
/// its own grid points.
pub fn select(
    data: &SequenceData,
    fold: usize,
    methods: &[OcrMethod],
    cfg: &OcrConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Selection>> {
    let splits = held_out_splits(data, fold, cfg.seed, cfg.select_splits);
    if splits
        .iter()
        .any(|s| s.train.is_empty() || s.validation.is_empty())
    {
        return Err(Error::data(format!(
            "fold {fold} has too few words to hold 20% out"
        )));
    }
    // The characters of each held-out part weigh its accuracy.
    let chars: Vec<f64> = splits
        .iter()
        .map(|s| {
            s.validation
                .iter()
                .map(|&w| data.spans[w].len())
                .sum::<usize>() as f64
        })
        .collect();
    let grid: Vec<(f64, f64)> = C_GRID
        .iter()
        .flat_map(|&c| ETA0_GRID.iter().map(move |&e| (e, c)))
        .collect();
    let mut out = Vec::with_capacity(methods.len());
    let t = Instant::now();
    let mut start = 0;
    while start < methods.len() {
        let bases = methods[start].kernels;
        let end = start
            + methods[start..]
                .iter()
                .take_while(|m| m.kernels == bases)
                .count();
        let rows = &methods[start..end];
        // (row, eta0, C): row outer, then C, then eta0.
        let cands: Vec<(usize, f64, f64)> = (0..rows.len())
            .flat_map(|r| grid.iter().map(move |&(e, c)| (r, e, c)))
            .collect();
        let sel = Search::new(&cands, &splits)
            .mean(Mean::Weighted(chars.clone()))
            .run_split_by_split(
                |split: &Split| -> Result<PartContext> {
                    let train = data.select(&split.train);
                    let held = data.select(&split.validation);
                    let set = kernel_set(bases, &train.x, cfg.seed, &cfg.memory)?;
                    let groups = rows
                        .iter()
                        .map(|m| {
                            method_grams(m, &set, JobClock::start(false))
                                .map(|(g, avg, _)| (g, avg))
                        })
                        .collect::<Result<_>>()?;
                    Ok(PartContext {
                        train,
                        held,
                        set,
                        groups,
                    })
                },
                |part: &PartContext, &(r, eta0, c), _| -> Result<f64> {
                    let m = &rows[r];
                    let (groups, avg) = &part.groups[r];
                    let grams: &[Gram] = match avg {
                        Some(g) => std::slice::from_ref(g),
                        None => &part.set.grams,
                    };
                    let p = params(m, eta0, c, part.train.n_sequences(), cfg.epochs, cfg.seed);
                    let fc = fit_config(m, p, cfg)?;
                    let (model, _) = fit_with_grams(
                        &part.train,
                        part.set.kernels.clone(),
                        groups.clone(),
                        grams,
                        &fc,
                        &(),
                        &mut |_, _| Control::Continue,
                    )?;
                    model.token_accuracy(&part.held, &cfg.memory)
                },
                &(),
            )?;
        progress(&format!(
            "select fold {fold}: {} x {} settings on {} held-out parts with kernels {} ({:.0} s)",
            rows.iter().map(|m| m.name).collect::<Vec<_>>().join(", "),
            grid.len(),
            splits.len(),
            bases
                .iter()
                .map(|b| b.short())
                .collect::<Vec<_>>()
                .join(","),
            t.elapsed().as_secs_f64()
        ));
        for (r, m) in rows.iter().enumerate() {
            let mut results = Vec::with_capacity(grid.len());
            for (k, &(e, c)) in grid.iter().enumerate() {
                let mean = sel.mean(r * grid.len() + k).ok_or_else(|| {
                    Error::Numerical(format!("{}: eta0 {e} C {c} was not scored", m.name))
                })?;
                results.push((e, c, mean));
            }
            let best = sel
                .best_where(|e| cands[e.candidate].0 == r)
                .map(|b| results[b.candidate - r * grid.len()])
                .ok_or_else(|| {
                    Error::Numerical(format!("{}: no finite held-out accuracy", m.name))
                })?;
            progress(&format!(
                "select fold {fold} {}: eta0 {} C {} held-out accuracy {:.4} ({} parts)",
                m.name,
                best.0,
                best.1,
                best.2,
                splits.len()
            ));
            out.push(Selection {
                method: m.name.to_string(),
                eta0: best.0,
                c: best.1,
                accuracy: best.2,
                grid: results,
            });
        }
        start = end;
    }
    Ok(out)
}

/// One point of a learning curve (first fold).
#[derive(Debug, Clone)]
struct CurvePoint {
    epoch: usize,
    /// Cumulative training time: the Gram matrices plus the epochs so far (curve evaluations
    /// excluded).
    seconds: f64,
    accuracy: f64,
    objective: f64,
    average_loss: f64,
    weights: Vec<f64>,
}

/// One method on one fold.
#[derive(Debug, Clone)]
struct FoldResult {
    accuracy: f64,
    train_seconds: f64,
    gram_seconds: f64,
    eta0: f64,
    c: f64,
    /// Short kernel name (and `beta0`) -> weight.
    weights: Vec<(String, f64)>,
    curve: Vec<CurvePoint>,
}

/// Runs the experiment on the file `cfg.data`.
pub fn run(cfg: &OcrConfig, progress: &mut dyn FnMut(&str)) -> Result<Report> {
    let data = read_ocr(&cfg.data)?;
    run_on(&data, cfg, progress)
}

/// Runs the experiment on loaded data.
pub fn run_on(
    data: &SequenceData,
    cfg: &OcrConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<Report> {
    if cfg.folds.is_empty() {
        return Err(Error::param(
            "folds",
            "none",
            "at least one fold to train on",
        ));
    }
    if cfg.epochs == 0 {
        return Err(Error::param("epochs", 0, "at least 1"));
    }
    let present = data.fold_list();
    if let Some(f) = cfg.folds.iter().find(|f| !present.contains(f)) {
        return Err(Error::data(format!("fold {f} has no words in the data")));
    }
    let ms = selected_methods(cfg)?;
    if let Some(dir) = &cfg.out_dir {
        multikernel::io::create_dir(dir)?;
    }
    let wall = Instant::now();
    // The folds are independent jobs; each holds at its peak the dense Grams of its largest
    // kernel set and an average's combined Gram.
    let set_len = ms.iter().map(|m| m.kernels.len()).max().unwrap_or(1) + 1;
    let peak = cfg
        .folds
        .iter()
        .map(|&f| {
            let n = data.select_folds(&[f]).n_positions();
            n.saturating_mul(n).saturating_mul(8 * set_len)
        })
        .max()
        .unwrap_or(0);
    let jobs: Vec<(usize, usize)> = cfg.folds.iter().copied().enumerate().collect();
    let lanes = super::jobs::lanes(jobs.len(), peak, &cfg.memory);
    if lanes > 1 {
        progress(&format!(
            "{} folds, {lanes} at once (each up to {:.2} GB of Grams; memory limit {:.1} GB)",
            jobs.len(),
            peak as f64 / 1e9,
            cfg.memory.bytes as f64 / 1e9
        ));
    }
    let per_fold = super::jobs::run_jobs(&jobs, lanes, progress, |&(fi, fold), ctx| {
        run_fold(data, fi, fold, &ms, cfg, ctx)
    })?;
    let mut results: Vec<Vec<FoldResult>> = vec![Vec::new(); ms.len()];
    for fold_results in per_fold {
        for (mi, r) in fold_results.into_iter().enumerate() {
            results[mi].push(r);
        }
    }
    if let Some(dir) = &cfg.out_dir {
        write_curves(dir, &ms, &results)?;
    }
    let mut rep = report(&ms, &results, cfg);
    let line = format!(
        "whole run: {:.1} s wall, {} folds {lanes} at once on {} threads",
        wall.elapsed().as_secs_f64(),
        jobs.len(),
        rayon::current_num_threads()
    );
    progress(&line);
    rep.table.push_str(&format!("\n{line}\n"));
    Ok(rep)
}

/// Every row of `ms` on training fold `fold` (the `fi`-th of the list; the first draws the
/// curves): one job of [`run_on`].
fn run_fold(
    data: &SequenceData,
    fi: usize,
    fold: usize,
    ms: &[OcrMethod],
    cfg: &OcrConfig,
    ctx: &mut JobCtx,
) -> Result<Vec<FoldResult>> {
    let train = data.select_folds(&[fold]);
    let test = data.exclude_folds(&[fold]);
    let curve_set = (fi == 0 && cfg.out_dir.is_some()).then(|| curve_sample(&test, cfg));
    let chosen: Vec<(f64, f64)> = if cfg.cv {
        select(data, fold, ms, cfg, &mut |l| ctx.log(l))?
            .iter()
            .map(|s| (s.eta0, s.c))
            .collect()
    } else {
        ms.iter().map(|m| (m.eta0, m.c)).collect()
    };
    ctx.log(&format!(
        "fold {fold}: {} training words ({} characters), {} test words ({} characters)",
        train.n_sequences(),
        train.n_positions(),
        test.n_sequences(),
        test.n_positions()
    ));
    let mut out = Vec::with_capacity(ms.len());
    let mut current: Option<KernelSet> = None;
    for (mi, m) in ms.iter().enumerate() {
        if current.as_ref().map(|s| s.bases) != Some(m.kernels) {
            drop(current.take()); // free the previous set's Grams first
            let set = kernel_set_timed(m.kernels, &train.x, cfg.seed, &cfg.memory, ctx.clock())?;
            ctx.log(&format!(
                "fold {fold}: training Grams of {} in {:.2} s",
                m.kernels
                    .iter()
                    .map(|k| k.short())
                    .collect::<Vec<_>>()
                    .join(","),
                set.gram_seconds
            ));
            current = Some(set);
        }
        let set = current
            .as_ref()
            .ok_or_else(|| Error::data("internal: no kernel set"))?;
        let (eta0, c) = chosen[mi];
        let r = run_method(m, set, &train, &test, curve_set.as_ref(), eta0, c, cfg, ctx)?;
        ctx.log(&format!(
            "fold {fold} {}: char accuracy {:.4} (train {:.2} s incl. Grams {:.2} s; eta0 {eta0}, C {c})",
            m.name, r.accuracy, r.train_seconds, r.gram_seconds
        ));
        out.push(r);
    }
    Ok(out)
}

/// Seeded sample of `cfg.curve_words` test words (all when 0 or more than there are).
pub(crate) fn curve_sample(test: &SequenceData, cfg: &OcrConfig) -> SequenceData {
    if cfg.curve_words == 0 || cfg.curve_words >= test.n_sequences() {
        return test.clone();
    }
    let mut idx: Vec<usize> = (0..test.n_sequences()).collect();
    idx.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(
        cfg.seed ^ 0x0c5,
    ));
    idx.truncate(cfg.curve_words);
    idx.sort_unstable();
    test.select(&idx)
}

/// Trains one row on one fold and tests it.
#[allow(clippy::too_many_arguments)]
fn run_method(
    m: &OcrMethod,
    set: &KernelSet,
    train: &SequenceData,
    test: &SequenceData,
    curve_set: Option<&SequenceData>,
    eta0: f64,
    c: f64,
    cfg: &OcrConfig,
    ctx: &JobCtx,
) -> Result<FoldResult> {
    let (groups, avg, combine_seconds) = method_grams(m, set, ctx.clock())?;
    let gram_seconds = set.gram_seconds + combine_seconds;
    let grams: &[Gram] = match &avg {
        Some(g) => std::slice::from_ref(g),
        None => &set.grams,
    };
    let p = params(m, eta0, c, train.n_sequences(), cfg.epochs, cfg.seed);
    let fc = fit_config(m, p, cfg)?;
    let mut curve = Vec::new();
    let mut eval_seconds = 0.0;
    let mut eval_error: Option<Error> = None;
    let start = ctx.clock();
    let (model, _): (SequenceModel, _) = fit_with_grams(
        train,
        set.kernels.clone(),
        groups.clone(),
        grams,
        &fc,
        &(),
        &mut |rep, st| {
            let Some(cs) = curve_set else {
                return Control::Continue;
            };
            let t = ctx.clock();
            let seconds = gram_seconds + start.elapsed() - eval_seconds;
            match state_accuracy(st, &set.kernels, &groups, &train.x, cs, &cfg.memory) {
                Ok(acc) => curve.push(CurvePoint {
                    epoch: rep.epoch,
                    seconds,
                    accuracy: acc,
                    objective: rep.objective,
                    average_loss: rep.average_loss,
                    weights: rep.weights.clone(),
                }),
                Err(e) => {
                    eval_error = Some(e);
                    return Control::Stop;
                }
            }
            eval_seconds += t.elapsed();
            Control::Continue
        },
    )?;
    if let Some(e) = eval_error {
        return Err(e);
    }
    let train_seconds = gram_seconds + start.elapsed() - eval_seconds;
    let accuracy = model.token_accuracy(test, &cfg.memory)?;
    let mut names: Vec<String> = if m.average {
        Vec::new()
    } else {
        m.kernels.iter().map(|k| k.short().to_string()).collect()
    };
    if m.learn_beta0 {
        names.push("beta0".into());
    }
    let weights = if m.average {
        let w = 1.0 / m.kernels.len() as f64;
        m.kernels
            .iter()
            .map(|k| (k.short().to_string(), w))
            .collect()
    } else {
        names
            .into_iter()
            .zip(model.weights.iter().copied())
            .collect()
    };
    Ok(FoldResult {
        accuracy,
        train_seconds,
        gram_seconds,
        eta0,
        c,
        weights,
        curve,
    })
}

/// Writes, per method, the learning curve of the first fold (CSV), all curves in one SVG
/// (Figure 1 of the paper) and, for multiple-kernel rows, the kernel weights along the epochs.
fn write_curves(dir: &Path, ms: &[OcrMethod], results: &[Vec<FoldResult>]) -> Result<()> {
    let mut acc_series = Vec::new();
    for (m, rs) in ms.iter().zip(results) {
        let Some(first) = rs.first() else { continue };
        if first.curve.is_empty() {
            continue;
        }
        let names: Vec<String> = first.weights.iter().map(|(n, _)| n.clone()).collect();
        let weight_cols: Vec<String> = if m.average { Vec::new() } else { names.clone() };
        let mut header: Vec<String> = [
            "epoch",
            "seconds",
            "char_accuracy",
            "objective",
            "average_loss",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        header.extend(weight_cols.iter().map(|n| format!("weight_{n}")));
        let rows: Vec<Vec<String>> = first
            .curve
            .iter()
            .map(|p| {
                let mut r = vec![
                    p.epoch.to_string(),
                    format!("{:.4}", p.seconds),
                    format!("{:.6}", p.accuracy),
                    format!("{:.6}", p.objective),
                    format!("{:.6}", p.average_loss),
                ];
                if !m.average {
                    r.extend(p.weights.iter().map(|w| format!("{w:.6}")));
                }
                r
            })
            .collect();
        let h: Vec<&str> = header.iter().map(String::as_str).collect();
        multikernel::io::write_csv(&dir.join(format!("ocr-curve-{}.csv", m.name)), &h, &rows)?;
        acc_series.push(Series {
            name: m.name.to_string(),
            points: first
                .curve
                .iter()
                .map(|p| (p.seconds, 100.0 * p.accuracy))
                .collect(),
        });
        if weight_cols.len() > 1 {
            let series = weight_cols
                .iter()
                .enumerate()
                .map(|(k, n)| Series {
                    name: n.clone(),
                    points: first
                        .curve
                        .iter()
                        .map(|p| {
                            (
                                p.epoch as f64,
                                p.weights.get(k).copied().unwrap_or(f64::NAN),
                            )
                        })
                        .collect(),
                })
                .collect();
            let plot = LinePlot {
                title: format!("OCR {}: kernel weights along the epochs", m.name),
                x_label: "epoch".into(),
                y_label: "weight".into(),
                log_x: false,
                log_y: false,
                series,
            };
            multikernel::io::write_atomic(
                &dir.join(format!("ocr-weights-{}.svg", m.name)),
                plot.to_svg().as_bytes(),
            )?;
        }
    }
    if !acc_series.is_empty() {
        let plot = LinePlot {
            title: "OCR: test accuracy vs training time (Figure 1)".into(),
            x_label: "training seconds (Gram matrices included)".into(),
            y_label: "per-character test accuracy (%)".into(),
            log_x: false,
            log_y: false,
            series: acc_series,
        };
        multikernel::io::write_atomic(&dir.join("ocr-curves.svg"), plot.to_svg().as_bytes())?;
    }
    Ok(())
}

/// Rows and the printed table.
fn report(ms: &[OcrMethod], results: &[Vec<FoldResult>], cfg: &OcrConfig) -> Report {
    let mut rows = Vec::new();
    let mut table = format!(
        "OCR (Martins et al. 2011, Table 1): train on one fold, test on the other nine; folds {:?}, {} epochs, hyper-parameters {}\n\n\
         | row | kernels | paper accuracy | accuracy | train s (median) | Gram s | weights | eta0 | C |\n\
         |---|---|---|---|---|---|---|---|---|\n",
        cfg.folds,
        cfg.epochs,
        if cfg.cv { "selected on each training fold" } else { "selected once on fold 0 (defaults)" },
    );
    for (m, rs) in ms.iter().zip(results) {
        let accs: Vec<f64> = rs.iter().map(|r| r.accuracy).collect();
        let mut row = Row::from_values("ocr", m.name, "char_accuracy", &accs);
        row.train_seconds = median(&rs.iter().map(|r| r.train_seconds).collect::<Vec<_>>());
        let gram = median(&rs.iter().map(|r| r.gram_seconds).collect::<Vec<_>>());
        let etas: Vec<f64> = rs.iter().map(|r| r.eta0).collect();
        let cs: Vec<f64> = rs.iter().map(|r| r.c).collect();
        // Mean weight per name over folds.
        let mut wmap = Map::new();
        let mut wtext = Vec::new();
        if let Some(first) = rs.first() {
            for (k, (name, _)) in first.weights.iter().enumerate() {
                let vals: Vec<f64> = rs
                    .iter()
                    .filter_map(|r| r.weights.get(k).map(|w| w.1))
                    .collect();
                let (mean, _) = mean_std(&vals);
                let w = mean.unwrap_or(f64::NAN);
                wmap.insert(name.clone(), Value::from(w));
                wtext.push(format!("{name} {w:.2}"));
            }
        }
        if m.kernels.len() > 1 {
            row.weights = Some(wmap);
        }
        row = row
            .with("gram_seconds", gram)
            .with("eta0", median(&etas))
            .with("C", median(&cs))
            .with("paper_mean", m.paper.0 / 100.0)
            .with("paper_std", m.paper.1 / 100.0)
            .with("folds", cfg.folds.clone())
            .with("per_fold", accs.clone())
            .with("kernels", m.describe())
            .with("epochs", cfg.epochs);
        if cfg.cv {
            row = row
                .with("eta0_per_fold", etas.clone())
                .with("C_per_fold", cs.clone());
        }
        let (mean, std) = mean_std(&accs);
        let fmt_opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
        table.push_str(&format!(
            "| {} | {} | {:.1} +- {:.1} | {} +- {} (n={}) | {} | {} | {} | {} | {} |\n",
            m.name,
            m.describe(),
            m.paper.0,
            m.paper.1,
            mean.map_or("-".into(), |v| format!("{:.1}", 100.0 * v)),
            std.map_or("-".into(), |v| format!("{:.1}", 100.0 * v)),
            accs.len(),
            fmt_opt(row.train_seconds),
            fmt_opt(gram),
            if m.kernels.len() > 1 {
                wtext.join(" / ")
            } else {
                "-".into()
            },
            fmt_list(&etas),
            fmt_list(&cs),
        ));
        rows.push(row);
    }
    Report {
        experiment: "ocr".into(),
        rows,
        table,
    }
}

/// One value when all agree, else the median and the range.
fn fmt_list(v: &[f64]) -> String {
    let Some(first) = v.first() else {
        return "-".into();
    };
    if v.iter().all(|x| x == first) {
        return format!("{first}");
    }
    let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    format!("{} ({lo}-{hi})", median(v).unwrap_or(f64::NAN))
}

#[cfg(test)]
mod tests {
    use super::*;
    use multikernel::data::ocr::synthetic_words;

    /// A small synthetic OCR file: 3 folds of short words over 4 letters whose images are
    /// noisy copies of one prototype per letter.
    fn synthetic() -> SequenceData {
        synthetic_words(60, 3, 0.05)
    }

    /// The whole pipeline on a tiny synthetic set: rows for the asked methods, accuracies
    /// far above chance, weights on the simplex, curves and plots written.
    #[test]
    fn runs_on_synthetic_words() {
        let data = synthetic();
        let dir = tempfile::tempdir().unwrap();
        let cfg = OcrConfig {
            folds: vec![0, 2],
            epochs: 3,
            out_dir: Some(dir.path().to_path_buf()),
            methods: Some(vec![
                "linear".into(),
                "mkl-lqg-beta0".into(),
                "average-lb".into(),
            ]),
            ..OcrConfig::default()
        };
        let mut msgs = Vec::new();
        let rep = run_on(&data, &cfg, &mut |s| msgs.push(s.to_string())).unwrap();
        assert_eq!(rep.rows.len(), 3);
        for r in &rep.rows {
            assert_eq!(r.n, 2);
            assert!(r.mean.unwrap() > 0.8, "{}: {:?}", r.method, r.mean);
            assert_eq!(r.metric, "char_accuracy");
        }
        let w = rep.rows[1].weights.as_ref().unwrap();
        let total: f64 = w.values().map(|v| v.as_f64().unwrap()).sum();
        assert!((total - 1.0).abs() < 1e-9, "{w:?}");
        assert!(w.contains_key("beta0"));
        assert!(dir.path().join("ocr-curve-mkl-lqg-beta0.csv").exists());
        assert!(dir.path().join("ocr-weights-mkl-lqg-beta0.svg").exists());
        assert!(dir.path().join("ocr-curves.svg").exists());
        let csv = std::fs::read_to_string(dir.path().join("ocr-curve-linear.csv")).unwrap();
        assert_eq!(csv.lines().count(), 1 + 3);
        assert!(rep.table.contains("| mkl-lqg-beta0 |"));
        assert!(rep.to_json().contains("\"paper_mean\""));
    }

    /// The folds as parallel jobs give the rows of the plain loop: one thread (one lane,
    /// the loop) against two and three, with the fixed hyper-parameters and with the
    /// selection rerun on each fold (`cv`, itself parallel inside each fold's job).
    #[test]
    fn parallel_folds_give_the_sequential_rows() {
        use crate::jobs::testing::{in_pool, untimed};
        let data = synthetic();
        for cv in [false, true] {
            let cfg = OcrConfig {
                folds: vec![0, 1, 2],
                epochs: 2,
                cv,
                select_splits: 1,
                methods: Some(if cv {
                    vec!["mkl-lb".into()]
                } else {
                    vec!["linear".into(), "average-lqg".into(), "mkl-lqg".into()]
                }),
                ..OcrConfig::default()
            };
            let run = |threads| {
                in_pool(threads, || {
                    let mut lines = Vec::new();
                    let rep = run_on(&data, &cfg, &mut |l| lines.push(l.to_string())).unwrap();
                    (untimed(&rep), lines)
                })
            };
            let (one, one_lines) = run(1);
            assert_eq!(one.len(), cfg.methods.as_ref().unwrap().len());
            let accuracy_lines = |ls: &[String]| {
                let mut v: Vec<String> = ls
                    .iter()
                    .filter(|l| l.contains("char accuracy"))
                    .map(|l| l.split(" (").next().unwrap_or("").to_string())
                    .collect();
                v.sort();
                v
            };
            assert_eq!(accuracy_lines(&one_lines).len(), 3 * one.len());
            for threads in [2, 3] {
                let (other, lines) = run(threads);
                assert_eq!(other, one, "cv {cv}, {threads} threads");
                // The same accuracy lines, in some order.
                assert_eq!(accuracy_lines(&lines), accuracy_lines(&one_lines));
            }
        }
    }

    /// The held-out parts as they were made before [`held_out_parts`] (commit 3b69a82).
    fn held_out_splits_as_before(
        data: &SequenceData,
        fold: usize,
        seed: u64,
        parts: usize,
    ) -> Vec<(Vec<usize>, Vec<usize>)> {
        let mut idx = data.fold_indices(&[fold]);
        idx.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
        let n = idx.len() as f64;
        let max_parts = (1.0 / HELD_OUT).round() as usize;
        (0..parts.clamp(1, max_parts))
            .map(|p| {
                let lo = (n * HELD_OUT * p as f64).round() as usize;
                let hi = (n * HELD_OUT * (p + 1) as f64).round() as usize;
                let mut val = idx[lo..hi].to_vec();
                let mut tr: Vec<usize> = idx[..lo].iter().chain(&idx[hi..]).copied().collect();
                val.sort_unstable();
                tr.sort_unstable();
                (tr, val)
            })
            .collect()
    }

    /// The selection loop [`select`] replaced (commit 3b69a82), kept as its slow twin: for
    /// each held-out part, each row's kernel set built when it changes, the grid trained,
    /// the accuracies pooled by characters; per row the first best (`>`).
    fn select_as_before(
        data: &SequenceData,
        fold: usize,
        methods: &[OcrMethod],
        cfg: &OcrConfig,
    ) -> Vec<Selection> {
        let splits = held_out_splits_as_before(data, fold, cfg.seed, cfg.select_splits);
        let grid: Vec<(f64, f64)> = C_GRID
            .iter()
            .flat_map(|&c| ETA0_GRID.iter().map(move |&e| (e, c)))
            .collect();
        let mut tally = vec![vec![(0.0, 0usize); grid.len()]; methods.len()];
        for (tr, val) in &splits {
            let train = data.select(tr);
            let held = data.select(val);
            let mut current: Option<KernelSet> = None;
            for (mi, m) in methods.iter().enumerate() {
                if current.as_ref().map(|s| s.bases) != Some(m.kernels) {
                    drop(current.take());
                    current = Some(kernel_set(m.kernels, &train.x, cfg.seed, &cfg.memory).unwrap());
                }
                let set = current.as_ref().unwrap();
                let (groups, avg, _) = method_grams(m, set, JobClock::start(false)).unwrap();
                let grams: &[Gram] = match &avg {
                    Some(g) => std::slice::from_ref(g),
                    None => &set.grams,
                };
                for (k, &(eta0, c)) in grid.iter().enumerate() {
                    let p = params(m, eta0, c, train.n_sequences(), cfg.epochs, cfg.seed);
                    let fc = fit_config(m, p, cfg).unwrap();
                    let (model, _) = fit_with_grams(
                        &train,
                        set.kernels.clone(),
                        groups.clone(),
                        grams,
                        &fc,
                        &(),
                        &mut |_, _| Control::Continue,
                    )
                    .unwrap();
                    let a = model.token_accuracy(&held, &cfg.memory).unwrap();
                    tally[mi][k].0 += a * held.n_positions() as f64;
                    tally[mi][k].1 += held.n_positions();
                }
            }
        }
        methods
            .iter()
            .zip(&tally)
            .map(|(m, tl)| {
                let results: Vec<(f64, f64, f64)> = grid
                    .iter()
                    .zip(tl)
                    .map(|(&(e, c), &(right, n))| (e, c, right / n.max(1) as f64))
                    .collect();
                let mut best = results[0];
                for &r in &results[1..] {
                    if r.2 > best.2 {
                        best = r;
                    }
                }
                Selection {
                    method: m.name.to_string(),
                    eta0: best.0,
                    c: best.1,
                    accuracy: best.2,
                    grid: results,
                }
            })
            .collect()
    }

    #[test]
    fn selection_picks_the_best_grid_point() {
        let data = synthetic();
        let cfg = OcrConfig {
            epochs: 2,
            select_splits: 2,
            ..OcrConfig::default()
        };
        let m: Vec<OcrMethod> = methods()
            .into_iter()
            .filter(|m| m.name == "linear")
            .collect();
        let s = select(&data, 1, &m, &cfg, &mut |_| {}).unwrap();
        assert_eq!(s[0].grid.len(), ETA0_GRID.len() * C_GRID.len());
        let best = s[0]
            .grid
            .iter()
            .map(|g| g.2)
            .fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(s[0].accuracy, best);
        let all = data.fold_indices(&[1]);
        let parts = held_out_splits(&data, 1, 1, 5);
        assert_eq!(parts.len(), 5);
        let mut seen: Vec<usize> = Vec::new();
        for p in &parts {
            assert_eq!(p.train.len() + p.validation.len(), all.len());
            assert!(p.validation.iter().all(|v| !p.train.contains(v)));
            seen.extend(&p.validation);
        }
        // The held-out parts partition the fold, and the first is the single split.
        seen.sort_unstable();
        assert_eq!(seen, all);
        assert_eq!(held_out_splits(&data, 1, 1, 1)[0], parts[0]);
        for (seed, k) in [(1, 5), (4, 3), (9, 1), (2, 7)] {
            assert_eq!(
                held_out_splits(&data, 2, seed, k),
                Split::from_pairs(held_out_splits_as_before(&data, 2, seed, k))
            );
        }
    }

    /// Rows over two kernel sets (one an average), two held-out parts: every held-out
    /// accuracy and every choice as the loop it replaced had them, bit for bit.
    #[test]
    fn selection_is_the_loop_it_replaced() {
        let data = synthetic();
        let cfg = OcrConfig {
            epochs: 1,
            select_splits: 2,
            seed: 3,
            ..OcrConfig::default()
        };
        let ms: Vec<OcrMethod> = methods()
            .into_iter()
            .filter(|m| ["linear", "average-lb", "mkl-lb"].contains(&m.name))
            .collect();
        let mut lines = Vec::new();
        let got = select(&data, 0, &ms, &cfg, &mut |l| lines.push(l.to_string())).unwrap();
        let want = select_as_before(&data, 0, &ms, &cfg);
        assert_eq!(got.len(), 3);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.method, w.method);
            assert_eq!((g.eta0, g.c), (w.eta0, w.c), "{}", g.method);
            assert_eq!(g.accuracy.to_bits(), w.accuracy.to_bits(), "{}", g.method);
            let bits = |s: &Selection| -> Vec<(f64, f64, u64)> {
                s.grid.iter().map(|r| (r.0, r.1, r.2.to_bits())).collect()
            };
            assert_eq!(bits(g), bits(w), "{}", g.method);
        }
        // One line per kernel set, one per row.
        assert_eq!(lines.len(), 2 + 3, "{lines:?}");
    }

    #[test]
    fn unknown_rows_and_folds_are_refused() {
        let data = synthetic();
        let cfg = OcrConfig {
            methods: Some(vec!["mkl".into()]),
            ..OcrConfig::default()
        };
        assert!(run_on(&data, &cfg, &mut |_| {}).is_err());
        let cfg = OcrConfig {
            folds: vec![7],
            ..OcrConfig::default()
        };
        assert!(run_on(&data, &cfg, &mut |_| {})
            .unwrap_err()
            .to_string()
            .contains("fold 7"));
    }
}
