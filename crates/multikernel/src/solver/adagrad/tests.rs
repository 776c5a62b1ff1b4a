//! AdaGrad-SPOM against its slow twins: the closed-form step against a brute-force 1-D
//! minimization, the lazy rounds against the eager update of every coordinate every round,
//! and the averaged iterates against the batch optimum (L-BFGS) on a toy tagging task.

use super::*;
use crate::data::columns::{parse_columns, ColumnSentence};
use crate::solver::batch::{fit_lbfgs, objective, LbfgsParams};
use crate::solver::online::OnlineSteps;
use crate::task::tagging::{TagFeaturizer, TaggingTask, TemplateFile};
use rand::{Rng, SeedableRng};
use std::path::Path;

/// Short sentences over four words and three labels (one label in seven is noise).
fn sentences() -> Vec<ColumnSentence> {
    let mut text = String::new();
    let words = ["a", "b", "c", "d"];
    let mut state = 5u64;
    for _ in 0..30 {
        let n = 2 + (state % 5) as usize;
        for _ in 0..n {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let w = words[(state >> 40) as usize % 4];
            let tag = match (w, (state >> 20).is_multiple_of(7)) {
                (_, true) => "Z",
                ("a" | "b", _) => "X",
                _ => "Y",
            };
            text.push_str(&format!("{w} {tag}\n"));
        }
        text.push('\n');
    }
    parse_columns(text.as_bytes(), Path::new("toy"))
        .unwrap()
        .sentences
}

fn task_of(sents: &[ColumnSentence]) -> TaggingTask {
    let t = TemplateFile::parse(b"U00:%x[0,0]\nU01:%x[-1,0]\nB\n", Path::new("t")).unwrap();
    let f = TagFeaturizer::fit(t, sents, 1).unwrap();
    TaggingTask::new(&f, sents).unwrap()
}

fn params(lambda: f64) -> OnlineParams {
    OnlineParams {
        lambda,
        reg: RegSpec::L2,
        steps: OnlineSteps {
            eta0: 0.5,
            schedule: StepSchedule::AdaGrad,
            epochs: 1,
            averaging: true,
            projection: false,
            shards: 1,
            batch: 1,
            learn_beta0: false,
        },
        seed: 3,
        shuffle: false,
    }
}

#[test]
fn the_step_minimizes_its_one_dimensional_problem() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    for _ in 0..200 {
        let w: f64 = rng.gen_range(-3.0..3.0);
        let g: f64 = rng.gen_range(-3.0..3.0);
        let h: f64 = rng.gen_range(0.05..4.0);
        let eta: f64 = rng.gen_range(0.01..2.0);
        let lambda: f64 = rng.gen_range(0.0..1.0);
        let f = |x: f64| eta * g * x + 0.5 * eta * lambda * x * x + 0.5 * h * (x - w).powi(2);
        // Golden-section search on a bracket that holds the minimizer.
        let (mut a, mut b) = (-100.0f64, 100.0f64);
        let phi = 0.5 * (5f64.sqrt() - 1.0);
        for _ in 0..200 {
            let c = b - phi * (b - a);
            let d = a + phi * (b - a);
            if f(c) < f(d) {
                b = d;
            } else {
                a = c;
            }
        }
        let brute = 0.5 * (a + b);
        let x = prox_step(w, g, h, eta, lambda);
        assert!(
            (x - brute).abs() < 1e-6 * brute.abs().max(1.0),
            "{x} vs {brute}"
        );
        assert!(f(x) <= f(brute) + 1e-12 * f(brute).abs().max(1.0));
    }
    // Nothing to minimize against: unchanged.
    assert_eq!(prox_step(1.5, 2.0, 0.0, 1.0, 0.0), 1.5);
}

/// The eager twin: every coordinate updated every round with its composite step (a
/// coordinate the example does not read has `g_j = 0`), the sum of the iterates kept
/// explicitly.
fn eager(
    task: &TaggingTask,
    loss: StructLoss,
    p: &OnlineParams,
    epochs: usize,
    restart_after: usize,
) -> (Vec<f64>, Vec<f64>) {
    let dim = explicit_layout(task).total();
    let (mut w, mut g2, mut sum) = (vec![0.0; dim], vec![0.0; dim], vec![0.0; dim]);
    let mut rounds = 0usize;
    let (mut scores, mut pg) = (Vec::new(), Vec::new());
    for epoch in 1..=epochs {
        for i in 0..task.n_examples() {
            explicit_scores(task, i, &w, &mut scores).unwrap();
            pg.clear();
            pg.resize(scores.len(), 0.0);
            loss_grad(task, loss, i, &scores, &mut pg);
            let mut g = vec![0.0; dim];
            add_part_gradient(task, i, &pg, &mut g);
            for j in 0..dim {
                g2[j] += g[j] * g[j];
                w[j] = prox_step(w[j], g[j], g2[j].sqrt(), p.steps.eta0, p.lambda);
                sum[j] += w[j];
            }
            rounds += 1;
        }
        if epoch == restart_after {
            sum.iter_mut().for_each(|s| *s = 0.0);
            rounds = 0;
        }
    }
    let avg = sum.iter().map(|s| s / rounds as f64).collect();
    (w, avg)
}

#[test]
fn lazy_rounds_match_the_eager_update_of_every_coordinate() {
    let sents = sentences();
    let task = task_of(&sents);
    for loss in [StructLoss::Crf, StructLoss::Hinge] {
        let p = params(0.02);
        let mut learner = AdagradLearner::new(&task, loss, &p).unwrap();
        for epoch in 1..=3 {
            assert_eq!(learner.epoch_observed(&()).unwrap(), Control::Continue);
            if epoch == 1 {
                learner.restart_average();
            }
        }
        assert_eq!(learner.rounds(), 3 * task.n_examples() as u64);
        let (w, avg) = eager(&task, loss, &p, 3, 1);
        let last = learner.weights(false);
        let mean = learner.weights(true);
        assert!(w.iter().any(|v| *v != 0.0));
        for (name, a, b) in [("last", &last, &w), ("average", &mean, &avg)] {
            for (j, (x, y)) in a.iter().zip(b.iter()).enumerate() {
                assert!(
                    (x - y).abs() <= 1e-10 * y.abs().max(1e-3),
                    "{loss} {name} coordinate {j}: lazy {x} vs eager {y}"
                );
            }
        }
        // Reading the weights brings every coordinate up to date without changing them.
        assert_eq!(learner.weights(false), last);
    }
}

#[test]
fn the_averaged_crf_reaches_the_batch_optimum() {
    let sents = sentences();
    let task = task_of(&sents);
    let lambda = 0.05;
    let lb = LbfgsParams {
        lambda,
        tol_grad: 1e-9,
        tol_cost: 0.0,
        delta: 0.0,
        ..LbfgsParams::default()
    };
    let opt = fit_lbfgs(&task, StructLoss::Crf, &lb).unwrap().objective;
    let p = OnlineParams {
        shuffle: true,
        ..params(lambda)
    };
    let mut learner = AdagradLearner::new(&task, StructLoss::Crf, &p).unwrap();
    let mut gaps = Vec::new();
    for epoch in 1..=400 {
        learner.epoch_observed(&()).unwrap();
        if epoch == 5 {
            learner.restart_average();
        }
        if epoch % 100 == 0 {
            let w = learner.weights(true);
            let f = objective(&task, StructLoss::Crf, lambda, &w).unwrap();
            assert!(f >= opt - 1e-12, "below the optimum: {f} < {opt}");
            gaps.push((f - opt) / opt);
        }
    }
    assert!(gaps.windows(2).all(|g| g[1] <= g[0]), "{gaps:?}");
    assert!(*gaps.last().unwrap() < 1e-3, "{gaps:?}");
}

#[test]
fn other_settings_are_refused() {
    let sents = sentences();
    let task = task_of(&sents);
    let ok = params(0.02);
    assert!(AdagradLearner::new(&task, StructLoss::Crf, &ok).is_ok());
    let bad = [
        OnlineParams {
            reg: RegSpec::L21Sq,
            ..ok.clone()
        },
        OnlineParams {
            steps: OnlineSteps {
                schedule: StepSchedule::Bottou,
                ..ok.steps
            },
            ..ok.clone()
        },
        OnlineParams {
            steps: OnlineSteps {
                eta0: 0.0,
                ..ok.steps
            },
            ..ok.clone()
        },
    ];
    for p in bad {
        assert!(
            AdagradLearner::new(&task, StructLoss::Crf, &p).is_err(),
            "{p:?}"
        );
    }
}
