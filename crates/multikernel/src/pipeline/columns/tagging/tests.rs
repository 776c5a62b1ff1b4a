use super::*;
use crate::data::columns::{parse_columns, ColumnSentence};
use crate::error::Error;
use crate::kernel::MemoryLimit;
use crate::prox::RegSpec;
use crate::solver::batch::{self, LbfgsParams};
use crate::solver::cutting_plane::CuttingPlaneParams;
use crate::solver::online::params::{OnlineParams, OnlineSteps};
use crate::task::structured::StructLoss;
use crate::task::tagging::{TagFeaturizer, TaggingTask, TemplateFile};
use std::path::Path;

/// A toy chunking task the features determine: the label is the second column's tag
/// with B-/I- by whether the previous token has the same tag.
fn data() -> Vec<ColumnSentence> {
    let mut text = String::new();
    let words = ["a", "b", "c", "d"];
    let mut state = 11u64;
    for _ in 0..40 {
        let n = 3 + (state % 5) as usize;
        let mut prev = "";
        for _ in 0..n {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let w = words[(state >> 40) as usize % 4];
            let tag = if w == "a" || w == "b" { "X" } else { "Y" };
            let bi = if prev == tag { "I" } else { "B" };
            text.push_str(&format!("{w} {tag} {bi}-{tag}\n"));
            prev = tag;
        }
        text.push('\n');
    }
    parse_columns(text.as_bytes(), Path::new("toy"))
        .unwrap()
        .sentences
}

fn templates() -> TemplateFile {
    TemplateFile::parse(
        b"U00:%x[0,0]\nU01:%x[-1,1]/%x[0,1]\nU02:%x[0,1]\nB\n",
        Path::new("t"),
    )
    .unwrap()
}

/// Bigram templates with macros through the model: a CRF tagger trained with them (its
/// model file round-trips) decodes and gives marginals equal to enumerating every label
/// sequence of short sentences with `s(y) = <w, Phi(x, y)>` (Phi from the task's parts).
/// Token marginals `P(y_k = l)` by enumeration: every labelling `all[m]` of `n` tokens
/// with its score `scores[m]`, normalized by softmax (row-major `n x l`); also the
/// largest score and `z = sum_m exp(scores[m] - max)`.
fn token_marginals(all: &[Vec<usize>], scores: &[f64], n: usize, l: usize) -> (Vec<f64>, f64, f64) {
    let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let z: f64 = scores.iter().map(|v| (v - max).exp()).sum();
    let mut token = vec![0.0; n * l];
    for (y, v) in all.iter().zip(scores) {
        for (k, &yk) in y.iter().enumerate() {
            token[k * l + yk] += (v - max).exp() / z;
        }
    }
    (token, max, z)
}

#[test]
fn bigram_macro_models_match_enumeration_and_round_trip() {
    use crate::task::structured::{explicit_feature, StructuredTask};
    let d = data();
    let tpl = TemplateFile::parse(
        b"U00:%x[0,0]\nB\nB01:%x[0,1]\nB02:%x[-1,0]/%x[0,0]\n",
        Path::new("t"),
    )
    .unwrap();
    let fit = fit_tagger(
        &d[..30],
        None,
        tpl,
        &TaggerSpec {
            learner: TaggerLearner::Online {
                params: OnlineParams {
                    reg: RegSpec::L2,
                    lambda: 1e-3,
                    steps: OnlineSteps {
                        epochs: 5,
                        averaging: true,
                        ..OnlineSteps::default()
                    },
                    ..OnlineParams::default()
                },
                loss: StructLoss::Crf,
            },
            min_count: 1,
            track_objective: false,
            average_from: 0,
            calibrate: None,
            memory: MemoryLimit::default(),
        },
        &(),
    )
    .unwrap();
    let m = fit.model;
    assert!(m.featurizer.has_bigram_macros());
    let json = serde_json::to_string(&m).unwrap();
    let back: TaggerModel = serde_json::from_str(&json).unwrap();
    assert_eq!(back, m);
    assert!(back.validate().is_ok());
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
    let short: Vec<ColumnSentence> = d.iter().filter(|s| s.len() <= 5).cloned().collect();
    assert!(short.len() >= 5);
    let task = TaggingTask::new(&m.featurizer, &short).unwrap();
    let l = m.featurizer.n_labels();
    let got = m.marginals(&short).unwrap();
    let ids = m.tag_ids(&short).unwrap();
    for (i, s) in short.iter().enumerate() {
        let n = s.len();
        let all: Vec<Vec<usize>> = (0..l.pow(n as u32))
            .map(|code| (0..n).map(|k| (code / l.pow(k as u32)) % l).collect())
            .collect();
        let scores: Vec<f64> = all
            .iter()
            .map(|y| explicit_feature(&task, i, &task.joint_feature(i, y)).dot(&m.weights))
            .collect();
        let (token, max, z) = token_marginals(&all, &scores, n, l);
        let g = &got[i];
        for (a, b) in g.token.iter().zip(&token) {
            assert!((a - b).abs() < 1e-9, "{a} vs {b}");
        }
        let best = all.iter().position(|y| *y == ids[i]).unwrap();
        assert!((scores[best] - max).abs() < 1e-9);
        assert!((g.sequence - (scores[best] - max).exp() / z).abs() < 1e-9);
    }
}

#[test]
fn every_learner_learns_the_toy_task() {
    let d = data();
    let (train, test) = d.split_at(30);
    let online = |reg, loss| TaggerLearner::Online {
        params: OnlineParams {
            reg,
            lambda: 1e-3,
            steps: OnlineSteps {
                epochs: 10,
                averaging: true,
                ..OnlineSteps::default()
            },
            ..OnlineParams::default()
        },
        loss,
    };
    for learner in [
        online(RegSpec::L2, StructLoss::Hinge),
        online(RegSpec::L2, StructLoss::Crf),
        online(RegSpec::L21Sq, StructLoss::Hinge),
        TaggerLearner::CuttingPlane {
            params: CuttingPlaneParams {
                c: 10.0,
                ..CuttingPlaneParams::default()
            },
            q: 2.0,
        },
        TaggerLearner::Lbfgs {
            params: LbfgsParams {
                lambda: 1e-3,
                ..LbfgsParams::default()
            },
        },
    ] {
        let spec = TaggerSpec {
            learner: learner.clone(),
            min_count: 1,
            track_objective: false,
            average_from: 0,
            calibrate: None,
            memory: MemoryLimit::default(),
        };
        let fit = fit_tagger(train, Some(test), templates(), &spec, &()).unwrap();
        let (s, unseen) = fit.model.evaluate(test).unwrap();
        assert_eq!(unseen, 0);
        assert!(s.accuracy() > 0.99, "{learner:?}: {}", s.accuracy());
        assert!(s.chunks.f1() > 0.99);
        assert!(fit.model.validate().is_ok());
        assert_eq!(fit.model.group_names()[0], "B");
        let json = serde_json::to_string(&fit.model).unwrap();
        let back: TaggerModel = serde_json::from_str(&json).unwrap();
        assert_eq!(
            back.tag_ids(test).unwrap(),
            fit.model.tag_ids(test).unwrap()
        );
    }
}

/// Marginals against enumerating every label sequence of short sentences, with random
/// weights: `s(y) = <w, Phi(x, y)>` from the task's joint feature (not the decoder's
/// scores), `p(y) = exp s(y) / sum exp s(y')`, token marginals as sums of `p(y)`.
#[test]
fn marginals_match_enumeration_and_hinge_models_are_refused() {
    use rand::{Rng, SeedableRng};
    let d = data();
    let f = TagFeaturizer::fit(templates(), &d, 1).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let weights: Vec<f64> = (0..f.layout().total())
        .map(|_| rng.gen_range(-1.5..1.5))
        .collect();
    let short: Vec<ColumnSentence> = d.iter().filter(|s| s.len() <= 5).cloned().collect();
    assert!(short.len() >= 5);
    let mut m = TaggerModel {
        selection: None,
        featurizer: f.clone(),
        weights: weights.clone(),
        learner: String::new(),
        template_weights: Vec::new(),
        loss: Some(StructLoss::Crf),
    };
    let got = m.marginals(&short).unwrap();
    let l = f.n_labels();
    assert!(f.has_bigram());
    for (s, g) in short.iter().zip(&got) {
        let n = s.len();
        let all: Vec<Vec<usize>> = (0..l.pow(n as u32))
            .map(|code| (0..n).map(|k| (code / l.pow(k as u32)) % l).collect())
            .collect();
        // s(y): each token's kept expansions with its label, each label pair.
        let rows = f.rows(s);
        let nt = f.offset();
        let scores: Vec<f64> = all
            .iter()
            .map(|y| {
                let mut v = 0.0;
                for (k, &yk) in y.iter().enumerate() {
                    for &(j, x) in rows.row(k) {
                        v += x * weights[nt + j * l + yk];
                    }
                    if k > 0 {
                        v += weights[y[k - 1] * l + yk];
                    }
                }
                v
            })
            .collect();
        let (token, max, z) = token_marginals(&all, &scores, n, l);
        for (a, b) in g.token.iter().zip(&token) {
            assert!((a - b).abs() < 1e-9, "{a} vs {b}");
        }
        for k in 0..n {
            let sum: f64 = g.token[k * l..(k + 1) * l].iter().sum();
            assert!((sum - 1.0).abs() < 1e-9);
        }
        // The decoded sequence has the highest score (two may tie).
        let best = all.iter().position(|y| *y == g.best).unwrap();
        assert!(scores[best] >= max - 1e-9, "{} < {max}", scores[best]);
        let p_best = (scores[best] - max).exp() / z;
        assert!(
            (g.sequence - p_best).abs() < 1e-9,
            "{} vs {p_best}",
            g.sequence
        );
    }
    // The decoder's labels are the marginals' best sequence.
    let ids = m.tag_ids(&short).unwrap();
    assert!(ids.iter().zip(&got).all(|(a, g)| *a == g.best));
    m.loss = Some(StructLoss::Hinge);
    let e = m.marginals(&short).unwrap_err().to_string();
    assert!(e.contains("CRF loss"), "{e}");
    // Older model files have no loss field: the learner's description tells.
    m.loss = None;
    m.learner = "SPOM, crf loss, reg l2, lambda 1e-3, averaged epoch 3".into();
    assert!(m.marginals(&short).is_ok());
    m.learner = "cutting plane, q 2, C 1e0, epsilon 1e-3, 5 cuts".into();
    assert!(m.marginals(&short).is_err());
}

/// SPOM's per-epoch objectives (tracked on request) never go below the L-BFGS optimum of
/// the same l2 CRF, and the L-BFGS run reports its own objective.
#[test]
fn online_objectives_stay_above_the_batch_optimum() {
    let d = data();
    let (train, test) = d.split_at(30);
    let lambda = 1e-2;
    let spec = |learner| TaggerSpec {
        learner,
        min_count: 1,
        track_objective: true,
        average_from: 0,
        calibrate: None,
        memory: MemoryLimit::default(),
    };
    let restarted = |learner| TaggerSpec {
        average_from: 2,
        ..spec(learner)
    };
    let batch = fit_tagger(
        train,
        None,
        templates(),
        &spec(TaggerLearner::Lbfgs {
            params: LbfgsParams {
                lambda,
                ..LbfgsParams::default()
            },
        }),
        &(),
    )
    .unwrap();
    assert_eq!(batch.objectives, vec![batch.objective]);
    let online = fit_tagger(
        train,
        Some(test),
        templates(),
        &spec(TaggerLearner::Online {
            params: OnlineParams {
                reg: RegSpec::L2,
                lambda,
                steps: OnlineSteps {
                    epochs: 5,
                    averaging: true,
                    ..OnlineSteps::default()
                },
                ..OnlineParams::default()
            },
            loss: StructLoss::Crf,
        }),
        &(),
    )
    .unwrap();
    assert_eq!(online.objectives.len(), 5);
    for f in &online.objectives {
        assert!(*f >= batch.objective - 1e-12, "{f} < {}", batch.objective);
    }
    assert_eq!(online.objective, online.objectives[online.best_epoch - 1]);
    // Averaged SGD: Bottou's schedule, the average restarted after epoch 2 (the weights
    // kept after epoch 2 are then the last iterate, those after epoch 3 a new average).
    let asgd = fit_tagger(
        train,
        Some(test),
        templates(),
        &restarted(TaggerLearner::Online {
            params: OnlineParams {
                reg: RegSpec::L2,
                lambda,
                steps: OnlineSteps {
                    eta0: 0.1,
                    schedule: crate::solver::online::StepSchedule::Bottou,
                    epochs: 5,
                    averaging: true,
                    ..OnlineSteps::default()
                },
                ..OnlineParams::default()
            },
            loss: StructLoss::Crf,
        }),
        &(),
    )
    .unwrap();
    assert_eq!(asgd.objectives.len(), 5);
    for f in &asgd.objectives {
        assert!(*f >= batch.objective - 1e-12, "{f} < {}", batch.objective);
    }
    // Per-coordinate AdaGrad steps, the same restart: the tracked objective is the
    // objective of the kept weights, never below the optimum, and falls with the epochs
    // once the average restarted.
    let ada_params = OnlineParams {
        reg: RegSpec::L2,
        lambda,
        steps: OnlineSteps {
            eta0: 0.5,
            schedule: crate::solver::online::StepSchedule::AdaGrad,
            epochs: 6,
            averaging: true,
            ..OnlineSteps::default()
        },
        ..OnlineParams::default()
    };
    let ada = fit_tagger(
        train,
        Some(test),
        templates(),
        &restarted(TaggerLearner::Online {
            params: ada_params.clone(),
            loss: StructLoss::Crf,
        }),
        &(),
    )
    .unwrap();
    assert_eq!(ada.objectives.len(), 6);
    for f in &ada.objectives {
        assert!(*f >= batch.objective - 1e-12, "{f} < {}", batch.objective);
    }
    assert!(
        ada.objectives[5] < ada.objectives[2],
        "{:?}",
        ada.objectives
    );
    let task = TaggingTask::new(&ada.model.featurizer, train).unwrap();
    let kept = batch::objective(&task, StructLoss::Crf, lambda, &ada.model.weights).unwrap();
    assert!((kept - ada.objective).abs() <= 1e-12 * kept);
    assert!(
        ada.model.learner.contains("adagrad"),
        "{}",
        ada.model.learner
    );
    // A group regularizer with per-coordinate steps: refused, before any epoch.
    let l21 = fit_tagger(
        train,
        None,
        templates(),
        &spec(TaggerLearner::Online {
            params: OnlineParams {
                reg: RegSpec::L21Sq,
                ..ada_params
            },
            loss: StructLoss::Hinge,
        }),
        &(),
    );
    assert!(matches!(l21, Err(Error::Unsupported(_))), "{l21:?}");
}

/// The calibration keeps the grid's best `eta0` by the dev score of its short runs (or
/// the training objective without dev sentences), and the full run is then the plain
/// run at that `eta0`, to the bit. Bad grids are refused.
#[test]
fn calibration_keeps_the_best_step_and_trains_with_it() {
    let d = data();
    let (train, test) = d.split_at(30);
    let params = OnlineParams {
        reg: RegSpec::L2,
        lambda: 1e-2,
        steps: OnlineSteps {
            epochs: 4,
            averaging: true,
            schedule: crate::solver::online::StepSchedule::Bottou,
            ..OnlineSteps::default()
        },
        ..OnlineParams::default()
    };
    let learner = |eta0| TaggerLearner::Online {
        params: OnlineParams {
            steps: OnlineSteps {
                eta0,
                ..params.steps
            },
            ..params.clone()
        },
        loss: StructLoss::Crf,
    };
    let spec = |eta0, calibrate| TaggerSpec {
        learner: learner(eta0),
        min_count: 1,
        track_objective: false,
        average_from: 2,
        calibrate,
        memory: MemoryLimit::default(),
    };
    let grid = Calibration {
        eta0_grid: vec![1e-7, 0.5],
        epochs: 2,
    };
    for dev in [Some(test), None] {
        let cal = fit_tagger(train, dev, templates(), &spec(1.0, Some(grid.clone())), &()).unwrap();
        assert_eq!(cal.calibration.len(), 2);
        // The first best score wins (the toy's dev accuracy may tie: decoding ignores
        // the weights' scale); without dev sentences the objective tells them apart.
        let (e0, s0) = cal.calibration[0];
        let (e1, s1) = cal.calibration[1];
        assert_eq!(cal.eta0, if s1 > s0 { e1 } else { e0 });
        if dev.is_none() {
            assert_eq!(cal.eta0, 0.5, "{:?}", cal.calibration);
        }
        let plain = fit_tagger(train, dev, templates(), &spec(cal.eta0, None), &()).unwrap();
        assert_eq!(cal.model.weights, plain.model.weights);
        assert_eq!(plain.eta0, cal.eta0);
        assert!(plain.calibration.is_empty());
        let want = format!("eta0 {} (calibrated)", cal.eta0);
        assert!(cal.model.learner.contains(&want), "{}", cal.model.learner);
    }
    // Without dev sentences the score is minus the training objective of the short run.
    let short = fit_tagger(
        train,
        None,
        templates(),
        &TaggerSpec {
            learner: TaggerLearner::Online {
                params: OnlineParams {
                    steps: OnlineSteps {
                        eta0: 0.5,
                        epochs: 2,
                        ..params.steps
                    },
                    ..params.clone()
                },
                loss: StructLoss::Crf,
            },
            track_objective: true,
            ..spec(0.5, None)
        },
        &(),
    )
    .unwrap();
    let cal = fit_tagger(
        train,
        None,
        templates(),
        &spec(1.0, Some(grid.clone())),
        &(),
    )
    .unwrap();
    assert_eq!(cal.calibration[1].1, -short.objective);
    for bad in [
        Calibration {
            eta0_grid: vec![],
            epochs: 2,
        },
        Calibration {
            eta0_grid: vec![0.1, -1.0],
            epochs: 2,
        },
        Calibration {
            eta0_grid: vec![0.1],
            epochs: 0,
        },
    ] {
        assert!(fit_tagger(train, Some(test), templates(), &spec(1.0, Some(bad)), &()).is_err());
    }
}
