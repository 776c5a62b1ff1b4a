//! Training SPOM (Alg. 3 of Martins et al. 2011, the kernelized Alg. 1 on a first-order chain)
//! on labeled sequences (handwritten words in the paper; any label alphabet): kernels fitted on
//! the training positions, their Gram matrices, the online learner over the chain
//! ([`SequenceTask`], a structured task seen through [`StructuredOnline`]), and the compact
//! [`SequenceModel`] ([`crate::solver::online::compact`]).
//!
//! Regularization follows the paper: `lambda = 1 / (C N)` with `N` the number of training
//! sequences; the projection radius is `gamma = sqrt(2 L(0) / lambda)`, which for the
//! structured hinge (L(0) = average sequence length) is `sqrt(2 C * number of training
//! positions)` (docs/formulas.md, "Radius of the vacuous projection").

use super::grams::{base_grams, c_from_lambda, fit_kernels, group_gram};
use super::model::{KernelGroup, SequenceModel, SequenceTraining};
use crate::data::SequenceData;
use crate::error::{Error, Result};
use crate::kernel::{FittedKernel, Gram, KernelSpec, MemoryLimit};
use crate::run::{Control, Observer, RunInfo};
use crate::solver::online::compact::{compact, GroupNorms};
use crate::solver::online::{EpochReport, OnlineLearner, OnlineParams, OnlineState};
use crate::task::sequence::{SeqLoss, SequenceTask};
use crate::task::structured::StructuredOnline;

/// Everything that defines a SPOM run on sequences.
#[derive(Debug, Clone)]
pub struct SequenceFitConfig {
    pub loss: SeqLoss,
    /// Base kernels over the pixel vectors.
    pub kernels: Vec<KernelSpec>,
    /// One group holding the plain average of the kernels (the baseline of Table 1) instead
    /// of one group per kernel (MKL).
    pub average: bool,
    /// Alg. 1 settings; `lambda` is `1 / (C N)` ([`super::grams::lambda_from_c`]). With
    /// `steps.learn_beta0`, beta0 is learned (the label-pair group takes part in the MKL
    /// regularizer) instead of fixed at 1 (plain l2 shrinkage of the label-pair matrix).
    pub params: OnlineParams,
    pub memory: MemoryLimit,
}

/// Trains on `train` (kernels fitted, Grams computed here); `observer` sees every epoch and
/// may stop the run.
pub(crate) fn fit_sequence(
    train: &SequenceData,
    cfg: &SequenceFitConfig,
    observer: &dyn Observer,
) -> Result<(SequenceModel, RunInfo)> {
    if train.n_sequences() == 0 {
        return Err(Error::data("the training set has no sequences"));
    }
    let kernels = fit_kernels(&cfg.kernels, &train.x, cfg.params.seed)?;
    let groups = if cfg.average {
        KernelGroup::average(&kernels)
    } else {
        KernelGroup::separate(&kernels)
    };
    let base = base_grams(&kernels, &train.x, &cfg.memory)?;
    let grams: Vec<Gram> = if cfg.average {
        let g = group_gram(&base, &groups[0])?;
        drop(base);
        vec![g]
    } else {
        base
    };
    fit_with_grams(
        train,
        kernels,
        groups,
        &grams,
        cfg,
        observer,
        &mut |_, _| Control::Continue,
    )
}

/// Trains on `train` with precomputed group Gram matrices (`grams[g]` is the training Gram of
/// `groups[g]`): the entry point that lets several runs share Grams. `on_epoch` sees each
/// epoch's report and the learner's state (and may stop the run); `observer` sees the
/// progress.
pub fn fit_with_grams(
    train: &SequenceData,
    kernels: Vec<FittedKernel>,
    groups: Vec<KernelGroup>,
    grams: &[Gram],
    cfg: &SequenceFitConfig,
    observer: &dyn Observer,
    on_epoch: &mut dyn FnMut(&EpochReport, &OnlineState) -> Control,
) -> Result<(SequenceModel, RunInfo)> {
    let n = train.n_positions();
    if groups.len() != grams.len() {
        return Err(Error::shape(
            "Gram matrices (one per kernel group)",
            groups.len(),
            grams.len(),
        ));
    }
    if let Some(g) = groups
        .iter()
        .find(|g| g.components.iter().any(|&(k, _)| k >= kernels.len()))
    {
        return Err(Error::data(format!(
            "kernel group {} names a kernel beyond the {} given",
            g.name,
            kernels.len()
        )));
    }
    let l = train.n_labels();
    let chain = SequenceTask::new(
        train.labels.clone(),
        train.spans.clone(),
        l,
        cfg.params.steps.learn_beta0,
    )?;
    let task = StructuredOnline::new(&chain, cfg.loss)?;
    let learner = OnlineLearner::new(&task, grams, cfg.params.clone())?;
    let gamma = learner.gamma();
    let mut last: Option<EpochReport> = None;
    let (state, info) = learner.run(observer, &mut |rep, st| {
        last = Some(rep.clone());
        on_epoch(rep, st)
    })?;
    let mut compact = compact(
        &state,
        grams,
        &cfg.params.reg,
        cfg.params.steps.averaging,
        GroupNorms::Cached,
    )?;
    let transitions = compact.explicit.remove(0);
    let mut weight_names: Vec<String> = groups.iter().map(|g| g.name.clone()).collect();
    weight_names.append(&mut compact.explicit_names);
    let p = &cfg.params;
    let n_words = train.n_sequences();
    let training = SequenceTraining {
        loss: cfg.loss,
        reg: p.reg.clone(),
        lambda: p.lambda,
        c: c_from_lambda(p.lambda, n_words),
        eta0: p.steps.eta0,
        schedule: p.steps.schedule,
        epochs: p.steps.epochs,
        epochs_run: last.as_ref().map(|r| r.epoch),
        seed: p.seed,
        averaging: p.steps.averaging,
        projection_radius: gamma,
        learn_beta0: p.steps.learn_beta0,
        average_kernels: cfg.average,
        n_train_sequences: n_words,
        n_train_positions: n,
        final_objective: last.as_ref().map(|r| r.objective),
        final_average_loss: last.as_ref().map(|r| r.average_loss),
        folds: train.fold_list(),
        wrapper: None,
        shards: p.steps.shards,
        batch: p.steps.batch,
    };
    Ok((
        SequenceModel {
            loss: cfg.loss,
            labels: train.label_names.clone(),
            n_features: train.x.cols,
            feature_names: train.feature_names.clone(),
            kernels,
            groups,
            support: train.x.select_rows(&compact.support_rows),
            support_rows: compact.support_rows,
            coef: compact.coef,
            transitions,
            group_norms: compact.group_norms,
            weight_names,
            weights: compact.weights,
            training,
        },
        info,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::grams::lambda_from_c;
    use super::*;
    use crate::data::{Matrix, MatrixRef};
    use crate::prox::RegSpec;
    use crate::solver::online::compact::group_sqnorm;
    use crate::solver::online::OnlineSteps;
    use rand::{Rng, SeedableRng};

    /// Sequences over 5 labels (named like tags, not letters) whose 128 binary features are
    /// noisy copies of one prototype each; the label after `NOUN` is always `VERB` (a bigram
    /// the chain can learn).
    fn synthetic(words: usize, seed: u64) -> SequenceData {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut proto_rng = rand_chacha::ChaCha8Rng::seed_from_u64(99);
        let protos: Vec<Vec<u8>> = (0..5)
            .map(|_| {
                (0..128)
                    .map(|_| u8::from(proto_rng.gen_bool(0.3)))
                    .collect()
            })
            .collect();
        let (mut x, mut labels, mut spans) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..words {
            let len = rng.gen_range(2..6);
            let start = labels.len();
            let mut prev = 9;
            for _ in 0..len {
                let y = if prev == 0 { 1 } else { rng.gen_range(0..5) };
                prev = y;
                labels.push(y);
                for &p in &protos[y] {
                    let v = if rng.gen_bool(0.15) { 1 - p } else { p };
                    x.push(f64::from(v));
                }
            }
            spans.push(start..labels.len());
        }
        let n = labels.len();
        SequenceData::new(
            Matrix::from_vec(n, 128, x),
            labels,
            spans,
            ["NOUN", "VERB", "ADJ", "ADP", "DET"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            (0..128).map(|j| format!("f{j}")).collect(),
            None,
        )
        .unwrap()
    }

    fn config(learn_beta0: bool, average: bool, c: f64, n_words: usize) -> SequenceFitConfig {
        SequenceFitConfig {
            loss: SeqLoss::Hinge,
            kernels: ["linear:norm=diag", "rbf:sigma2=5"]
                .iter()
                .map(|s| s.parse().unwrap())
                .collect(),
            average,
            params: OnlineParams {
                lambda: lambda_from_c(c, n_words),
                reg: if average { RegSpec::L2 } else { RegSpec::L21Sq },
                steps: OnlineSteps {
                    eta0: 1.0,
                    epochs: 5,
                    learn_beta0,
                    ..OnlineSteps::default()
                },
                seed: 3,
                ..OnlineParams::default()
            },
            memory: MemoryLimit::default(),
        }
    }

    /// End to end: the model labels held-out words well, its weights lie on the simplex, the
    /// radius is sqrt(2 C * characters), the norms read from the cached (label-major) scores
    /// equal the exact `a^T K a`, and the model survives a JSON round trip.
    #[test]
    fn trains_and_predicts_synthetic_words() {
        let train = synthetic(80, 1);
        let test = synthetic(40, 2);
        let c = 3.0;
        for (beta0, average) in [(false, false), (true, false), (false, true)] {
            let cfg = config(beta0, average, c, train.n_sequences());
            let epochs = std::sync::atomic::AtomicU64::new(0);
            let (model, info) = fit_sequence(&train, &cfg, &|_: &crate::run::Progress| {
                epochs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Control::Continue
            })
            .unwrap();
            assert_eq!(epochs.into_inner(), 5);
            assert_eq!(info.steps, 5);
            let acc = model
                .token_accuracy(&test, &MemoryLimit::default())
                .unwrap();
            assert!(acc > 0.9, "beta0 {beta0} average {average}: accuracy {acc}");
            let total: f64 = model.weights.iter().sum();
            assert!((total - 1.0).abs() < 1e-9, "{:?}", model.weights);
            assert_eq!(model.weights.len(), model.weight_names.len());
            assert_eq!(
                model.weight_names.len(),
                if average { 1 } else { 2 } + usize::from(beta0)
            );
            let gamma = model.training.projection_radius.unwrap();
            assert!((gamma - (2.0 * c * train.n_positions() as f64).sqrt()).abs() < 1e-9);
            let text = serde_json::to_string(&model).unwrap();
            let back: SequenceModel = serde_json::from_str(&text).unwrap();
            assert_eq!(back, model);
            model.validate().unwrap();
            assert_eq!(model.labels, train.label_names);
            let words = model
                .predict_names(&test.x, &test.spans, &MemoryLimit::default())
                .unwrap();
            assert_eq!(words.len(), test.n_sequences());
            assert_eq!(words[0].len(), test.spans[0].len());
            // A view of the rows of sequences 3..10 inside the caller's buffer, read in place:
            // the same labels as the whole data's.
            let lim = MemoryLimit::default();
            let all = model.predict(test.x.view(), &test.spans, &lim).unwrap();
            let (r0, r1) = (test.spans[3].start, test.spans[9].end);
            let d = test.x.cols;
            let view = MatrixRef::new(r1 - r0, d, &test.x.data[r0 * d..r1 * d]).unwrap();
            let spans: Vec<_> = test.spans[3..10]
                .iter()
                .map(|w| w.start - r0..w.end - r0)
                .collect();
            assert_eq!(model.predict(view, &spans, &lim).unwrap(), all[3..10]);
            let beyond = vec![0..2, 2..r1 - r0 + 1];
            assert!(matches!(
                model.predict(view, &beyond, &lim),
                Err(Error::Data(_))
            ));
        }
        // Norms from the cached scores vs the exact quadratic form.
        let cfg = config(false, false, c, train.n_sequences());
        let kernels = fit_kernels(&cfg.kernels, &train.x, 3).unwrap();
        let grams = base_grams(&kernels, &train.x, &cfg.memory).unwrap();
        let groups = KernelGroup::separate(&kernels);
        let mut exact = Vec::new();
        let (model, _) =
            fit_with_grams(&train, kernels, groups, &grams, &cfg, &(), &mut |_, st| {
                exact = grams
                    .iter()
                    .zip(st.kernel_coefs(false))
                    .map(|(g, a)| group_sqnorm(g, &a, 5, true).sqrt())
                    .collect();
                Control::Continue
            })
            .unwrap();
        for (a, b) in model.group_norms.iter().zip(&exact) {
            assert!((a - b).abs() < 1e-9 * (1.0 + b), "{a} vs {b}");
        }
    }

    /// The label-pair matrix learns the forced bigram NOUN -> VERB.
    #[test]
    fn learns_the_bigram() {
        let train = synthetic(80, 4);
        let cfg = config(false, false, 3.0, train.n_sequences());
        let (model, _) = fit_sequence(&train, &cfg, &()).unwrap();
        let w = &model.transitions;
        assert_eq!(w.len(), 25);
        let ab = w[1];
        let best_after_a = (0..5).map(|b| w[b]).fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(ab, best_after_a, "{:?}", &w[..5]);
    }

    #[test]
    fn rejects_bad_inputs() {
        let train = synthetic(10, 5);
        let mut cfg = config(false, false, 1.0, 10);
        cfg.kernels.clear();
        assert!(matches!(
            fit_sequence(&train, &cfg, &()),
            Err(Error::InvalidParameter { name, .. }) if name == "kernels"
        ));
        let cfg = config(false, false, 1.0, 10);
        let empty = train.select(&[]);
        assert!(matches!(
            fit_sequence(&empty, &cfg, &()),
            Err(Error::Data(_))
        ));
        assert!((c_from_lambda(lambda_from_c(3.0, 17), 17) - 3.0).abs() < 1e-12);
    }
}
